/**
 * @module
 * The job routes (`/v1/jobs...`): submission (a .wtns as base64 JSON or as the body, or circuit
 * inputs), listing, the job, its result, cancellation, and the two ways of waiting for it: a
 * long-poll that answers 5 s before Bun's idle timeout, and server-sent events kept open by
 * comment lines.
 */
import { createHash } from "node:crypto";
import { ServiceError } from "./errors.ts";
import { BINARY_TYPES, decodeBase64, JSON_TYPES, readBody, readJson } from "./http.ts";
import type { Handler, RouteRequest, Routes } from "./http.ts";
import type { InputWitnesses } from "./inputs.ts";
import type { KeyRegistry } from "./keys.ts";
import type { ServiceMetrics } from "./metrics.ts";
import { parse, queryObject, validators } from "./schemas.ts";
import { FINAL_STATES } from "./store.ts";
import type { JobState, JobStore, JobView } from "./store.ts";
import { normalizeWitness } from "./witness.ts";

/** What the job routes work on. */
export interface JobRoutesDeps {
  keys: KeyRegistry;
  store: JobStore;
  inputs: InputWitnesses;
  metrics: ServiceMetrics;
  maxBodyBytes: number;
  idleTimeoutS: number;
  /** False while the preloaded keys are still being opened (a restart): submissions then get 503. */
  ready(): boolean;
}

/** What a submission asks for, before its witness is checked (or computed from inputs). */
interface SubmissionRequest {
  keyId: string;
  source: "wtns" | "input";
  payload?: Uint8Array;
  input?: Record<string, unknown>;
  priority: number;
}

/** Reads a submission in either of its forms: .wtns bytes as the body (?key=), or JSON. */
async function readSubmission(req: RouteRequest, url: URL, maxBodyBytes: number): Promise<SubmissionRequest> {
  const type = req.headers.get("content-type") ?? "";
  if (BINARY_TYPES.test(type)) {
    const query = parse(validators.submitJobQuery, queryObject(url), "?");
    const payload = await readBody(req, maxBodyBytes);
    if (payload.byteLength === 0) throw new ServiceError(400, "EMPTY_BODY", "the request body is empty; send the .wtns bytes", "");
    return { keyId: query.key, source: "wtns", payload, priority: Number(query.priority ?? 0) };
  }
  if (JSON_TYPES.test(type)) {
    const body = parse(validators.submitJob, await readJson(req, maxBodyBytes));
    if ((body.witness === undefined) === (body.input === undefined)) {
      throw new ServiceError(400, "VALIDATION", "give exactly one of \"witness\" (base64 .wtns) or \"input\" (circuit inputs)", body.witness === undefined ? "/witness" : "/input");
    }
    const priority = body.priority ?? 0;
    if (body.witness !== undefined) return { keyId: body.key, source: "wtns", payload: decodeBase64(body.witness, "/witness"), priority };
    return { keyId: body.key, source: "input", input: body.input, priority };
  }
  throw new ServiceError(415, "UNSUPPORTED_MEDIA_TYPE", `send application/json ({ key, witness | input }) or application/octet-stream (.wtns bytes, ?key=...), not ${type ? JSON.stringify(type) : "no Content-Type"}`);
}

/** What tells a replay (same Idempotency-Key, same request) from a different request. */
function fingerprint(keyId: string, source: string, payload: Uint8Array | string): string {
  return createHash("sha256").update(keyId).update("\0").update(source).update("\0").update(payload).digest("hex");
}

/** The routes of jobs. */
export function jobRoutes(deps: JobRoutesDeps): Routes {
  const { keys, store, inputs, metrics } = deps;
  /** Long-polls end this long before Bun would close the idle connection. */
  const maxWaitS = Math.max(1, deps.idleTimeoutS - 5);
  const keepAliveMs = Math.min(15_000, Math.floor((deps.idleTimeoutS * 1000) / 4));
  const jobParam = (req: RouteRequest) => parse(validators.jobId, req.params.id, "param:id");

  const submitJob: Handler = async (req, url) => {
    if (!deps.ready()) throw new ServiceError(503, "STARTING", "the service is still opening its preloaded keys; retry shortly", undefined, { headers: { "Retry-After": "1" } });
    const idempotencyKey = req.headers.has("idempotency-key") ? parse(validators.idempotencyKey, req.headers.get("idempotency-key"), "header:Idempotency-Key") : undefined;
    const submission = await readSubmission(req, url, deps.maxBodyBytes);
    const { keyId, source, input, priority } = submission;
    const key = keys.get(keyId);
    const print = fingerprint(keyId, source, submission.payload ?? JSON.stringify(input));
    if (idempotencyKey) {
      const earlier = await store.replay(idempotencyKey, print);
      if (earlier) {
        metrics.submissions.inc({ outcome: "replayed" });
        return Response.json(earlier, { status: 200, headers: { "Idempotent-Replayed": "true", Location: `/v1/jobs/${earlier.id}` } });
      }
    }
    await store.admissible(keyId); // refuse before computing a witness when the queue is already full
    let payload = submission.payload, witnessMs: number | undefined;
    if (source === "input") {
      if (!key.wasmPath) {
        throw new ServiceError(422, "NO_CIRCUIT", `key ${keyId} has no circuit.wasm beside it, so it takes witnesses ("witness"), not circuit inputs`, "/input");
      }
      const computed = await inputs.compute(key.wasmPath, input!);
      payload = computed.wtns;
      witnessMs = computed.ms;
    }
    // Looked up again: the key may have been deleted while the witness was computed (404 then).
    const target = keys.get(keyId);
    let witness: Uint8Array;
    try {
      witness = normalizeWitness(payload!, target);
    } catch (error) {
      metrics.submissions.inc({ outcome: "rejected_invalid" });
      throw error;
    }
    const { view, replayed } = await store.submit({ keyId, source, witness, witnessMs, idempotencyKey, fingerprint: print, priority });
    return Response.json(view, {
      status: replayed ? 200 : 202,
      headers: { Location: `/v1/jobs/${view.id}`, ...(replayed ? { "Idempotent-Replayed": "true" } : {}) },
    });
  };

  const waitJob: Handler = async (req, url) => {
    const query = parse(validators.waitQuery, queryObject(url), "?");
    const id = jobParam(req);
    const timeoutS = Math.min(maxWaitS, query.timeout_s === undefined ? maxWaitS : Number(query.timeout_s));
    return Response.json(await store.waitFinal(id, timeoutS * 1000, req.signal));
  };

  const jobEvents: Handler = async (req) => {
    const id = jobParam(req);
    await store.view(id); // an unknown job is a 404, not an empty stream
    const encoder = new TextEncoder();
    let cleanup = () => {};
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        let last = "";
        let closed = false;
        let unwatch = () => {};
        const send = (view: JobView) => {
          if (closed) return;
          const text = JSON.stringify(view);
          if (text !== last) {
            last = text;
            controller.enqueue(encoder.encode(`event: ${view.state}\ndata: ${text}\n\n`));
          }
          if (FINAL_STATES.has(view.state)) {
            cleanup();
            controller.close();
          }
        };
        const ping = setInterval(() => controller.enqueue(encoder.encode(": keep-alive\n\n")), keepAliveMs);
        cleanup = () => {
          closed = true;
          clearInterval(ping);
          unwatch();
          req.signal.removeEventListener("abort", cleanup);
        };
        req.signal.addEventListener("abort", cleanup);
        return store.watch(id, send).then((stop) => {
          if (closed) stop();
          else unwatch = stop;
        });
      },
      cancel() {
        cleanup();
      },
    });
    return new Response(stream, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no" } });
  };

  const jobResult: Handler = async (req) => Response.json(await store.result(jobParam(req)));

  return {
    "/v1/jobs": {
      POST: submitJob,
      GET: async (_req, url) => {
        const query = parse(validators.listJobsQuery, queryObject(url), "?");
        return Response.json(await store.list({ state: query.state as JobState | undefined, keyId: query.key, limit: query.limit === undefined ? 100 : Number(query.limit) }));
      },
    },
    "/v1/jobs/:id": {
      GET: async (req) => Response.json(await store.view(jobParam(req))),
      DELETE: async (req) => Response.json(await store.cancel(jobParam(req))),
    },
    "/v1/jobs/:id/result": { GET: jobResult },
    "/v1/jobs/:id/wait": { GET: waitJob },
    "/v1/jobs/:id/events": { GET: jobEvents },
  };
}
