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
import { Scheduler } from "./scheduler.ts";
import type { Job, JobState } from "./scheduler.ts";
import { parse, queryObject, validators } from "./schemas.ts";
import { normalizeWitness } from "./witness.ts";

/** What the job routes work on. */
export interface JobRoutesDeps {
  keys: KeyRegistry;
  scheduler: Scheduler;
  inputs: InputWitnesses;
  metrics: ServiceMetrics;
  maxBodyBytes: number;
  idleTimeoutS: number;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** A job as the API shows it. */
export function jobView(job: Job, scheduler: Scheduler) {
  return {
    id: job.id,
    key: job.keyId,
    state: job.state,
    source: job.source,
    position: scheduler.position(job),
    /** A running job's batch: proofs done of its total. */
    progress: scheduler.progress(job),
    createdAt: iso(job.createdAt),
    startedAt: iso(job.startedAt),
    finishedAt: iso(job.finishedAt),
    timings: job.timings,
    attempts: job.attempts,
    error: job.error,
    result: job.state === "succeeded" ? `/v1/jobs/${job.id}/result` : undefined,
  };
}

/** What a submission asks for, before its witness is checked (or computed from inputs). */
interface SubmissionRequest {
  keyId: string;
  source: "wtns" | "input";
  payload?: Uint8Array;
  input?: Record<string, unknown>;
}

/** Reads a submission in either of its forms: .wtns bytes as the body (?key=), or JSON. */
async function readSubmission(req: RouteRequest, url: URL, maxBodyBytes: number): Promise<SubmissionRequest> {
  const type = req.headers.get("content-type") ?? "";
  if (BINARY_TYPES.test(type)) {
    const keyId = parse(validators.submitJobQuery, queryObject(url), "?").key;
    const payload = await readBody(req, maxBodyBytes);
    if (payload.byteLength === 0) throw new ServiceError(400, "EMPTY_BODY", "the request body is empty; send the .wtns bytes", "");
    return { keyId, source: "wtns", payload };
  }
  if (JSON_TYPES.test(type)) {
    const body = parse(validators.submitJob, await readJson(req, maxBodyBytes));
    if ((body.witness === undefined) === (body.input === undefined)) {
      throw new ServiceError(400, "VALIDATION", "give exactly one of \"witness\" (base64 .wtns) or \"input\" (circuit inputs)", body.witness === undefined ? "/witness" : "/input");
    }
    if (body.witness !== undefined) return { keyId: body.key, source: "wtns", payload: decodeBase64(body.witness, "/witness") };
    return { keyId: body.key, source: "input", input: body.input };
  }
  throw new ServiceError(415, "UNSUPPORTED_MEDIA_TYPE", `send application/json ({ key, witness | input }) or application/octet-stream (.wtns bytes, ?key=...), not ${type ? JSON.stringify(type) : "no Content-Type"}`);
}

/** What tells a replay (same Idempotency-Key, same request) from a different request. */
function fingerprint(keyId: string, source: string, payload: Uint8Array | string): string {
  return createHash("sha256").update(keyId).update("\0").update(source).update("\0").update(payload).digest("hex");
}

/** The routes of jobs. */
export function jobRoutes(deps: JobRoutesDeps): Routes {
  const { keys, scheduler, inputs, metrics } = deps;
  /** Long-polls end this long before Bun would close the idle connection. */
  const maxWaitS = Math.max(1, deps.idleTimeoutS - 5);
  const keepAliveMs = Math.min(15_000, Math.floor((deps.idleTimeoutS * 1000) / 4));
  const jobParam = (req: RouteRequest) => scheduler.get(parse(validators.jobId, req.params.id, "param:id"));

  const submitJob: Handler = async (req, url) => {
    const idempotencyKey = req.headers.has("idempotency-key") ? parse(validators.idempotencyKey, req.headers.get("idempotency-key"), "header:Idempotency-Key") : undefined;
    const submission = await readSubmission(req, url, deps.maxBodyBytes);
    const { keyId, source, input } = submission;
    const key = keys.get(keyId);
    const print = fingerprint(keyId, source, submission.payload ?? JSON.stringify(input));
    if (idempotencyKey) {
      const earlier = scheduler.replay(idempotencyKey, print);
      if (earlier) {
        metrics.submissions.inc({ outcome: "replayed" });
        return Response.json(jobView(earlier, scheduler), { status: 200, headers: { "Idempotent-Replayed": "true", Location: `/v1/jobs/${earlier.id}` } });
      }
    }
    scheduler.admissible(); // refuse before computing a witness when the queue is already full
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
    const { job, replayed } = scheduler.submit({ keyId, source, witness, witnessMs, idempotencyKey, fingerprint: print });
    return Response.json(jobView(job, scheduler), {
      status: replayed ? 200 : 202,
      headers: { Location: `/v1/jobs/${job.id}`, ...(replayed ? { "Idempotent-Replayed": "true" } : {}) },
    });
  };

  const waitJob: Handler = async (req, url) => {
    const query = parse(validators.waitQuery, queryObject(url), "?");
    const job = jobParam(req);
    const timeoutS = Math.min(maxWaitS, query.timeout_s === undefined ? maxWaitS : Number(query.timeout_s));
    const deadline = performance.now() + timeoutS * 1000;
    while (!Scheduler.isFinal(job) && !req.signal.aborted) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      await scheduler.waitForChange(job, left, req.signal);
    }
    return Response.json(jobView(job, scheduler));
  };

  const jobEvents: Handler = (req) => {
    const job = jobParam(req);
    const encoder = new TextEncoder();
    let cleanup = () => {};
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        let last = "";
        const send = () => {
          const text = JSON.stringify(jobView(job, scheduler));
          if (text !== last) {
            last = text;
            controller.enqueue(encoder.encode(`event: ${job.state}\ndata: ${text}\n\n`));
          }
          if (Scheduler.isFinal(job)) {
            cleanup();
            controller.close();
          }
        };
        const ping = setInterval(() => controller.enqueue(encoder.encode(": keep-alive\n\n")), keepAliveMs);
        cleanup = () => {
          clearInterval(ping);
          job.watchers.delete(send);
          req.signal.removeEventListener("abort", cleanup);
        };
        job.watchers.add(send);
        req.signal.addEventListener("abort", cleanup);
        send();
      },
      cancel() {
        cleanup();
      },
    });
    return new Response(stream, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no" } });
  };

  const jobResult: Handler = (req) => {
    const job = jobParam(req);
    if (job.state === "succeeded") {
      scheduler.markFetched(job);
      return Response.json(job.result);
    }
    if (job.state === "failed") throw new ServiceError(422, job.error!.code, `job ${job.id} failed: ${job.error!.message}`);
    if (job.state === "cancelled") throw new ServiceError(409, "JOB_CANCELLED", `job ${job.id} was cancelled: ${job.error?.message ?? ""}`);
    throw new ServiceError(409, "JOB_NOT_FINISHED", `job ${job.id} is ${job.state}; wait with GET /v1/jobs/${job.id}/wait or /events`);
  };

  return {
    "/v1/jobs": {
      POST: submitJob,
      GET: (_req, url) => {
        const query = parse(validators.listJobsQuery, queryObject(url), "?");
        const jobs = scheduler.list({ state: query.state as JobState | undefined, keyId: query.key, limit: query.limit === undefined ? 100 : Number(query.limit) });
        return Response.json({ jobs: jobs.map((j) => jobView(j, scheduler)), queueDepth: scheduler.queueDepth, counts: scheduler.countByState() });
      },
    },
    "/v1/jobs/:id": {
      GET: (req) => Response.json(jobView(jobParam(req), scheduler)),
      DELETE: (req) => Response.json(jobView(scheduler.cancel(jobParam(req).id), scheduler)),
    },
    "/v1/jobs/:id/result": { GET: jobResult },
    "/v1/jobs/:id/wait": { GET: waitJob },
    "/v1/jobs/:id/events": { GET: jobEvents },
  };
}
