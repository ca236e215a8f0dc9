/**
 * @module
 * The job store the routes work on, whatever holds the jobs: the in-process scheduler
 * (store_memory.ts, the embedded default: one process, one device, jobs in memory) or PostgreSQL
 * (store_pg.ts: an API process in front of worker processes on any number of hosts, jobs durable).
 * Every call is asynchronous because the database's are; the in-memory store answers at once.
 */
import type { Groth16Proof, ProofResult, Progress } from "../mod.ts";
import { ServiceError } from "./errors.ts";
import type { JobState } from "./job_states.ts";

export type { JobState } from "./job_states.ts";
export { FINAL_STATES, JOB_STATES } from "./job_states.ts";

/** One library call (or, in a cluster, one claim by a worker) a job took part in. */
export interface Attempt {
  batch: number | string;
  size: number;
  outcome: "proved" | "batch_failed" | "failed" | "cancelled" | "lease_lost" | "running";
  /** The worker that made it (cluster only). */
  worker?: string;
  /** The library's message when the call failed. */
  error?: string;
}

/** What a job's timings record (ms). */
export interface JobTimings {
  witnessMs?: number;
  queueMs?: number;
  /** The library call the proof came from (the batch, or its own call after a fallback). */
  proveMs?: number;
  totalMs?: number;
  batchSize?: number;
  /** The device index whose prover made the proof (one of --devices). */
  device?: number;
  /** The library's phases of this proof, in ms from the call's start (its device's call). */
  phases?: ProofResult["timings"]["phases"];
}

/** A job as the API shows it. */
export interface JobView {
  id: string;
  key: string;
  state: JobState;
  source: "wtns" | "input";
  priority: number;
  /** Jobs ahead of it while queued. */
  position: number | undefined;
  /** A running job's batch: proofs done of its total (with a database, as its worker last wrote it). */
  progress: Progress | undefined;
  createdAt: string | undefined;
  startedAt: string | undefined;
  finishedAt: string | undefined;
  timings: JobTimings;
  attempts: Attempt[];
  error: { code: string; message: string } | undefined;
  result: string | undefined;
}

/** A proof as `GET /v1/jobs/:id/result` returns it. */
export interface JobResult {
  proof: Groth16Proof;
  publicSignals: string[];
}

/** What a submission carries (the witness already checked and in raw form). */
export interface Submission {
  keyId: string;
  source: "wtns" | "input";
  witness: Uint8Array;
  witnessMs?: number;
  idempotencyKey?: string;
  /** Hash of the request, to tell a replay from a different request under the same Idempotency-Key. */
  fingerprint: string;
  /** Higher runs first among a key's queued jobs (cluster mode; in-process jobs are FIFO). */
  priority: number;
}

/** A listing of retained jobs. */
export interface JobListing {
  jobs: JobView[];
  queueDepth: number;
  counts: Record<JobState, number>;
}

/** Where jobs live. */
export interface JobStore {
  /** Whether shutdown has begun (submissions are refused). */
  readonly closing: boolean;
  /** With a database: whether job changes are heard by NOTIFY now (else only polled). */
  readonly listening?: boolean;
  /** The job made earlier under `idempotencyKey` (422 if it was for another request). */
  replay(idempotencyKey: string, fingerprint: string): Promise<JobView | undefined>;
  /** Throws 503 while closing and 429 (Retry-After) when the queue bounds leave no room. */
  admissible(keyId: string, bytes?: number): Promise<void>;
  /** Queues a job durably before answering; `replayed` when the Idempotency-Key named one. */
  submit(submission: Submission): Promise<{ view: JobView; replayed: boolean }>;
  /** The job, else a 404. */
  view(id: string): Promise<JobView>;
  /** Retained jobs, newest last. */
  list(filter: { state?: JobState; keyId?: string; limit: number }): Promise<JobListing>;
  /** The job once final, or as it is after `ms` (or when `signal` aborts). */
  waitFinal(id: string, ms: number, signal?: AbortSignal): Promise<JobView>;
  /** Calls `onView` with the job now and after each change until the returned stop is called. */
  watch(id: string, onView: (view: JobView) => void): Promise<() => void>;
  /** A succeeded job's proof (recorded as fetched); 409 or 422 otherwise. */
  result(id: string): Promise<JobResult>;
  /**
   * Cancels a queued job, or a running one: in-process only a job alone in its batch (else 409
   * JOB_RUNNING); with a database any running job (its batch's other jobs keep their proofs).
   */
  cancel(id: string): Promise<JobView>;
  /** Queued or running jobs of a key (a key with any cannot be deleted). */
  activeJobs(keyId: string): Promise<number>;
  /** Jobs waiting to run. */
  queueDepth(): Promise<number>;
  /** Brings gauges read from the store up to date before a scrape. */
  refreshMetrics(): Promise<void>;
}

/** Milliseconds to an ISO date, or undefined. */
export const isoTime = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The refusal of a result that is not (or never will be) there: failed 422, cancelled or unfinished 409. */
export function finishedOrNot(id: string, state: JobState, error: { code: string; message: string } | undefined): ServiceError {
  if (state === "failed") return new ServiceError(422, error!.code, `job ${id} failed: ${error!.message}`);
  if (state === "cancelled") return new ServiceError(409, "JOB_CANCELLED", `job ${id} was cancelled: ${error?.message ?? ""}`);
  return new ServiceError(409, "JOB_NOT_FINISHED", `job ${id} is ${state}; wait with GET /v1/jobs/${id}/wait or /events`);
}
