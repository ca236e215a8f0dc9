/**
 * @module
 * The HTTP API on `Bun.serve` routes: request checks (size, content type, JSON, base64, typebox
 * schemas, bearer token), the mapping of keys, jobs and waits onto KeyRegistry and Scheduler, and
 * errors as JSON. Nothing here blocks: bodies are read as streams with a running size check,
 * witnesses are parsed in a few ms, circuit inputs go to a Worker and proofs to the library's
 * own threads. Bun closes a connection idle for `idleTimeout` seconds (255 at most), so a
 * long-poll returns 5 s before that and an event stream sends a comment line every few seconds.
 */
import { Buffer } from "node:buffer";
import { createHash, timingSafeEqual } from "node:crypto";
import type { ServiceConfig } from "./config.ts";
import { errorResponse, ServiceError } from "./errors.ts";
import type { InputWitnesses } from "./inputs.ts";
import { keySummary } from "./keys.ts";
import type { KeyRegistry } from "./keys.ts";
import type { ServiceMetrics } from "./metrics.ts";
import { Scheduler } from "./scheduler.ts";
import type { Job, JobState } from "./scheduler.ts";
import { parse, queryObject, validators } from "./schemas.ts";
import { normalizeWitness } from "./witness.ts";

/** What the routes work on. */
export interface ServerDeps {
  config: ServiceConfig;
  keys: KeyRegistry;
  scheduler: Scheduler;
  inputs: InputWitnesses;
  metrics: ServiceMetrics;
  /** Whether the backend is up and the preloaded keys are registered. */
  ready(): boolean;
  /** Backend and library facts for /readyz. */
  describe(): Record<string, unknown>;
}

/** The part of Bun's server object used here. */
export interface BunServer {
  port: number;
  hostname: string;
  stop(closeActiveConnections?: boolean): Promise<void>;
}

type RouteRequest = Request & { params: Record<string, string> };
type Handler = (req: RouteRequest, url: URL) => Response | Promise<Response>;
type Methods = Partial<Record<"GET" | "POST" | "DELETE", Handler>>;

interface BunServeOptions {
  hostname: string;
  port: number;
  idleTimeout: number;
  maxRequestBodySize: number;
  routes: Record<string, Partial<Record<string, (req: RouteRequest) => Response | Promise<Response>>>>;
  fetch(req: Request): Response | Promise<Response>;
  error(error: Error): Response;
}

const JSON_TYPES = /^application\/json\b/i;
const BINARY_TYPES = /^application\/(octet-stream|vnd\.snarkjs\.wtns)\b/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Reads a body of at most `limit` bytes, refusing as soon as it is exceeded (declared or streamed). */
async function readBody(req: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = (size: string) => new ServiceError(413, "BODY_TOO_LARGE", `the request body (${size}) exceeds the limit of ${limit} bytes`);
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(`${declared} bytes`);
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(`more than ${limit} bytes`);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** The body as JSON (content type checked, syntax errors quoted). */
async function readJson(req: Request, limit: number): Promise<unknown> {
  const type = req.headers.get("content-type") ?? "";
  if (!JSON_TYPES.test(type)) {
    throw new ServiceError(415, "UNSUPPORTED_MEDIA_TYPE", `expected Content-Type: application/json, got ${type ? JSON.stringify(type) : "none"}`);
  }
  const bytes = await readBody(req, limit);
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new ServiceError(400, "BAD_JSON", `the request body is not valid JSON: ${(error as Error).message}`, "");
  }
}

function decodeBase64(text: string, path: string): Uint8Array {
  if (text.length % 4 !== 0 || !BASE64.test(text)) {
    throw new ServiceError(400, "BAD_BASE64", `${path}: not valid base64 (standard alphabet A-Z a-z 0-9 + /, padded with = to a multiple of 4 characters)`, path);
  }
  return new Uint8Array(Buffer.from(text, "base64"));
}

function fingerprint(keyId: string, source: string, payload: Uint8Array | string): string {
  return createHash("sha256").update(keyId).update("\0").update(source).update("\0").update(payload).digest("hex");
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
    createdAt: iso(job.createdAt),
    startedAt: iso(job.startedAt),
    finishedAt: iso(job.finishedAt),
    timings: job.timings,
    attempts: job.attempts,
    error: job.error,
    result: job.state === "succeeded" ? `/v1/jobs/${job.id}/result` : undefined,
  };
}

/** Builds the Bun.serve options of the service. */
export function serveOptions(deps: ServerDeps): BunServeOptions {
  const { config, keys, scheduler, inputs, metrics } = deps;
  const tokenDigest = config.token ? createHash("sha256").update(config.token).digest() : undefined;
  /** Long-polls end this long before Bun would close the idle connection. */
  const maxWaitS = Math.max(1, config.idleTimeoutS - 5);
  const keepAliveMs = Math.min(15_000, Math.floor((config.idleTimeoutS * 1000) / 4));

  const authorize = (req: Request) => {
    if (!tokenDigest) return;
    const header = req.headers.get("authorization") ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const challenge = { headers: { "WWW-Authenticate": 'Bearer realm="cuzk"' } };
    if (!match) throw new ServiceError(401, "UNAUTHORIZED", header ? "the Authorization header must be \"Bearer <token>\"" : "this service needs a bearer token (Authorization: Bearer <token>)", "header:Authorization", challenge);
    const given = createHash("sha256").update(match[1]).digest();
    if (!timingSafeEqual(given, tokenDigest)) throw new ServiceError(401, "UNAUTHORIZED", "the bearer token is not valid", "header:Authorization", challenge);
  };

  const jobParam = (req: RouteRequest) => scheduler.get(parse(validators.jobId, req.params.id, "param:id"));
  const keyParam = (req: RouteRequest) => parse(validators.keyId, req.params.id, "param:id");

  /** Wraps a handler: auth, error mapping, request metrics. */
  const route = (name: string, handler: Handler, options: { open?: boolean } = {}) => async (req: RouteRequest) => {
    let response: Response;
    try {
      if (!options.open) authorize(req);
      response = await handler(req, new URL(req.url));
    } catch (error) {
      response = errorResponse(toServiceError(error));
    }
    metrics.httpRequests.inc({ route: `${req.method} ${name}`, status: String(response.status) });
    return response;
  };

  const submitJob: Handler = async (req, url) => {
    const type = req.headers.get("content-type") ?? "";
    const idempotencyKey = req.headers.has("idempotency-key") ? parse(validators.idempotencyKey, req.headers.get("idempotency-key"), "header:Idempotency-Key") : undefined;
    let keyId: string, source: "wtns" | "input", payload: Uint8Array | undefined, input: Record<string, unknown> | undefined;
    if (BINARY_TYPES.test(type)) {
      keyId = parse(validators.submitJobQuery, queryObject(url), "?").key;
      source = "wtns";
      payload = await readBody(req, config.maxBodyBytes);
      if (payload.byteLength === 0) throw new ServiceError(400, "EMPTY_BODY", "the request body is empty; send the .wtns bytes", "");
    } else if (JSON_TYPES.test(type)) {
      const body = parse(validators.submitJob, await readJson(req, config.maxBodyBytes));
      keyId = body.key;
      if ((body.witness === undefined) === (body.input === undefined)) {
        throw new ServiceError(400, "VALIDATION", "give exactly one of \"witness\" (base64 .wtns) or \"input\" (circuit inputs)", body.witness === undefined ? "/witness" : "/input");
      }
      if (body.witness !== undefined) {
        source = "wtns";
        payload = decodeBase64(body.witness, "/witness");
      } else {
        source = "input";
        input = body.input;
      }
    } else {
      throw new ServiceError(415, "UNSUPPORTED_MEDIA_TYPE", `send application/json ({ key, witness | input }) or application/octet-stream (.wtns bytes, ?key=...), not ${type ? JSON.stringify(type) : "no Content-Type"}`);
    }
    const key = keys.get(keyId);
    const print = fingerprint(keyId, source, payload ?? JSON.stringify(input));
    if (idempotencyKey) {
      const earlier = scheduler.replay(idempotencyKey, print);
      if (earlier) {
        metrics.submissions.inc({ outcome: "replayed" });
        return Response.json(jobView(earlier, scheduler), { status: 200, headers: { "Idempotent-Replayed": "true", Location: `/v1/jobs/${earlier.id}` } });
      }
    }
    scheduler.admissible(); // refuse before computing a witness when the queue is already full
    let witnessMs: number | undefined;
    if (source === "input") {
      if (!key.wasmPath) {
        throw new ServiceError(422, "NO_CIRCUIT", `key ${keyId} has no circuit.wasm beside it, so it takes witnesses ("witness"), not circuit inputs`, "/input");
      }
      const computed = await inputs.compute(key.wasmPath, input!);
      payload = computed.wtns;
      witnessMs = computed.ms;
    }
    let witness: Uint8Array;
    try {
      witness = normalizeWitness(payload!, { curve: key.curve, nVars: key.info.nVars, keyId });
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
          const view = jobView(job, scheduler);
          const text = JSON.stringify(view);
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

  const routes: Record<string, Methods> = {
    "/healthz": { GET: () => Response.json({ status: "ok" }) },
    "/readyz": {
      GET: () => {
        const ready = deps.ready() && !scheduler.closing;
        return Response.json({ ready, shuttingDown: scheduler.closing, keys: keys.list().map((k) => k.id), queueDepth: scheduler.queueDepth, ...deps.describe() }, { status: ready ? 200 : 503 });
      },
    },
    "/metrics": { GET: () => new Response(metrics.registry.render(), { headers: { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" } }) },
    "/v1/keys": {
      GET: () => Response.json({ keys: keys.list().map(keySummary) }),
      POST: async (req) => {
        const body = parse(validators.registerKey, await readJson(req, 64 * 1024));
        const { key, created } = await keys.register(body.name, body.id);
        return Response.json(keySummary(key), { status: created ? 201 : 200, headers: { Location: `/v1/keys/${key.id}` } });
      },
    },
    "/v1/keys/:id": {
      GET: (req) => Response.json(keySummary(keys.get(keyParam(req)))),
      DELETE: (req) => {
        const id = keyParam(req);
        keys.get(id);
        const active = scheduler.activeJobs(id);
        if (active > 0) throw new ServiceError(409, "KEY_IN_USE", `key ${id} has ${active} queued or running job(s); delete it once they finish`);
        return Response.json({ deleted: keySummary(keys.remove(id)) });
      },
    },
    "/v1/keys/:id/verification_key": { GET: (req) => Response.json(keys.verificationKey(keyParam(req))) },
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
    "/v1/jobs/:id/result": {
      GET: (req) => {
        const job = jobParam(req);
        if (job.state === "succeeded") return Response.json(job.result);
        if (job.state === "failed") throw new ServiceError(422, job.error!.code, `job ${job.id} failed: ${job.error!.message}`);
        if (job.state === "cancelled") throw new ServiceError(409, "JOB_CANCELLED", `job ${job.id} was cancelled: ${job.error?.message ?? ""}`);
        throw new ServiceError(409, "JOB_NOT_FINISHED", `job ${job.id} is ${job.state}; wait with GET /v1/jobs/${job.id}/wait or /events`);
      },
    },
    "/v1/jobs/:id/wait": { GET: waitJob },
    "/v1/jobs/:id/events": { GET: jobEvents },
  };
  const open = new Set(["/healthz", "/readyz"]);
  const metricsOpen = !config.token;

  const bunRoutes: BunServeOptions["routes"] = {};
  const patterns: Array<{ regex: RegExp; allow: string[] }> = [];
  for (const [path, methods] of Object.entries(routes)) {
    bunRoutes[path] = {};
    for (const [method, handler] of Object.entries(methods)) {
      bunRoutes[path][method] = route(path, handler!, { open: open.has(path) || (path === "/metrics" && metricsOpen) });
    }
    patterns.push({ regex: new RegExp(`^${path.replace(/:[a-z]+/g, "[^/]+")}$`), allow: Object.keys(methods) });
  }

  return {
    hostname: config.host,
    port: config.port,
    idleTimeout: config.idleTimeoutS,
    // Bun's own cap, above ours: bodies between the two get our JSON 413 rather than a bare one.
    maxRequestBodySize: config.maxBodyBytes + (1 << 20),
    routes: bunRoutes,
    fetch(req) {
      const path = new URL(req.url).pathname;
      const known = patterns.find((p) => p.regex.test(path));
      const error = known
        ? new ServiceError(405, "METHOD_NOT_ALLOWED", `${req.method} is not allowed on ${path}; allowed: ${known.allow.join(", ")}`, undefined, { headers: { Allow: known.allow.join(", ") } })
        : new ServiceError(404, "NOT_FOUND", `no route ${req.method} ${path}`);
      metrics.httpRequests.inc({ route: "unmatched", status: String(error.status) });
      return errorResponse(error);
    },
    error(error) {
      return errorResponse(toServiceError(error));
    },
  };
}

/** Any error as a ServiceError (unexpected ones as 500 with their message). */
function toServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  const message = String((error as Error)?.message ?? error);
  return new ServiceError(500, "INTERNAL", message);
}
