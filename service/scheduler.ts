/**
 * @module
 * Jobs and the queue in front of the device. Jobs wait in one bounded FIFO (a submission beyond
 * its capacity is a 429 with Retry-After). The oldest job's key decides the next batch: queued jobs
 * of that key are gathered, in order, into one `Prover.proveBatch` call of at most `batchSize`
 * witnesses, waiting at most `batchWaitMs` for the batch to fill. One batch runs at a time (one
 * device). Every proof is self-checked by the library. A batch is proved by batch.ts (one call,
 * one by one after a failed call, as a worker does), and every change of a job's state goes
 * through the table of job_states.ts.
 */
import { randomUUID } from "node:crypto";
import type { DeviceProofResult, ProofResult, Progress } from "../mod.ts";
import { proveJobs } from "./batch.ts";
import { ServiceError } from "./errors.ts";
import { allowed, INITIAL_STATE, isFinal, JOB_STATES, transition } from "./job_states.ts";
import type { JobEvent, JobState } from "./job_states.ts";
import { proverOf } from "./keys.ts";
import type { KeyRegistry } from "./keys.ts";
import type { ServiceMetrics } from "./metrics.ts";
import type { Attempt, JobResult, JobTimings, Submission } from "./store.ts";

/** A proving job. */
export interface Job {
  id: string;
  keyId: string;
  state: JobState;
  /** "wtns" (witness bytes) or "input" (circuit inputs, witness computed by the service). */
  source: "wtns" | "input";
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  /** performance.now() at submission (queue timings). */
  enqueuedMono: number;
  /** Raw witness values (n_vars × 32 bytes), dropped once the job is final. */
  witness?: Uint8Array;
  idempotencyKey?: string;
  /** Hash of the request, to tell a replay from a different request under the same Idempotency-Key. */
  fingerprint: string;
  result?: JobResult;
  /** When a client first received the result (a shutdown keeps unfetched results retrievable). */
  fetchedAt?: number;
  error?: { code: string; message: string };
  timings: JobTimings;
  attempts: Attempt[];
  /** Called on every change of state. */
  readonly watchers: Set<() => void>;
}

/** Options of the scheduler. */
export interface SchedulerOptions {
  keys: KeyRegistry;
  metrics: ServiceMetrics;
  queueCapacity: number;
  queueBytes: number;
  batchSize: number;
  batchWaitMs: number;
  resultTtlS: number;
}

/** How jobs ended during a shutdown. */
export interface DrainReport {
  succeeded: string[];
  failed: string[];
  cancelled: string[];
}

/** The queue, the batching and the jobs' lifecycle. */
export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #jobs = new Map<string, Job>();
  /** Queued jobs in submission order (Sets keep insertion order). */
  readonly #queue = new Set<Job>();
  readonly #queueByKey = new Map<string, Set<Job>>();
  readonly #byIdempotencyKey = new Map<string, Job>();
  /** Witness bytes held by queued jobs. */
  #queuedBytes = 0;
  #running: Job[] = [];
  /** The running batch's progress (proofs done of its total) and the way to cancel it. */
  #runningProgress: Progress | undefined;
  #runningAbort: AbortController | undefined;
  #busy = false;
  #batchTimer: ReturnType<typeof setTimeout> | undefined;
  #batches = 0;
  /** Smoothed ms per proof, for Retry-After. */
  #msPerProof = 0;
  #closing = false;
  readonly #idle = new Set<() => void>();
  /** Called whenever a result is fetched for the first time. */
  readonly #fetched = new Set<() => void>();
  readonly #sweeper: ReturnType<typeof setInterval>;

  constructor(options: SchedulerOptions) {
    this.#options = options;
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(10_000, options.resultTtlS * 250));
    (this.#sweeper as { unref?: () => void }).unref?.();
  }

  /** Jobs waiting to run. */
  get queueDepth(): number {
    return this.#queue.size;
  }

  /** Witness bytes the waiting jobs hold. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Whether shutdown has begun (submissions are refused). */
  get closing(): boolean {
    return this.#closing;
  }

  /** Counts of the retained jobs by state. */
  countByState(): Record<JobState, number> {
    const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
    for (const job of this.#jobs.values()) counts[job.state]++;
    return counts;
  }

  /** Queued or running jobs of a key (a key with any cannot be deleted). */
  activeJobs(keyId: string): number {
    return (this.#queueByKey.get(keyId)?.size ?? 0) + this.#running.filter((j) => j.keyId === keyId).length;
  }

  /** The job `id`, else a 404. */
  get(id: string): Job {
    const job = this.#jobs.get(id);
    if (!job) throw new ServiceError(404, "UNKNOWN_JOB", `no job ${id} (finished jobs are kept ${this.#options.resultTtlS} s)`);
    return job;
  }

  /** Retained jobs, newest last, optionally filtered. */
  list(filter: { state?: JobState; keyId?: string; limit?: number } = {}): Job[] {
    const out: Job[] = [];
    for (const job of this.#jobs.values()) {
      if ((filter.state && job.state !== filter.state) || (filter.keyId && job.keyId !== filter.keyId)) continue;
      out.push(job);
    }
    return filter.limit !== undefined ? out.slice(-filter.limit) : out;
  }

  /** The job submitted earlier under `idempotencyKey`, checked against this request's fingerprint. */
  replay(idempotencyKey: string, fingerprint: string): Job | undefined {
    const job = this.#byIdempotencyKey.get(idempotencyKey);
    if (!job) return undefined;
    if (job.fingerprint !== fingerprint) {
      throw new ServiceError(
        422,
        "IDEMPOTENCY_KEY_REUSED",
        `Idempotency-Key ${JSON.stringify(idempotencyKey)} was used for a different request (job ${job.id}); use a new key for a new request`,
        "header:Idempotency-Key",
      );
    }
    return job;
  }

  /**
   * Refuses a submission when the service is closing or the queue is full (by jobs, or by the
   * witness bytes they hold, counting `bytes` more). Called before a witness is computed too.
   */
  admissible(bytes = 0): void {
    if (this.#closing) throw new ServiceError(503, "SHUTTING_DOWN", "the service is shutting down and accepts no new jobs", undefined, { headers: { "Retry-After": "5" } });
    const full = this.#queue.size >= this.#options.queueCapacity
      ? `${this.#queue.size} jobs waiting`
      : this.#queue.size > 0 && this.#queuedBytes + bytes > this.#options.queueBytes
      ? `${this.#queuedBytes} witness bytes waiting`
      : undefined;
    if (full) {
      this.#options.metrics.submissions.inc({ outcome: "rejected_full" });
      throw new ServiceError(429, "QUEUE_FULL", `the queue is full (${full}); retry later`, undefined, {
        headers: { "Retry-After": String(this.retryAfterS()) },
      });
    }
  }

  /** Seconds after which a slot is likely free: about one batch's proving time. */
  retryAfterS(): number {
    const batchMs = this.#msPerProof * this.#options.batchSize;
    return Math.min(60, Math.max(1, Math.ceil(batchMs / 1000)));
  }

  /** Queues a job; returns it with `replayed` when the Idempotency-Key named an existing one. */
  submit(submission: Submission): { job: Job; replayed: boolean } {
    if (submission.idempotencyKey) {
      const earlier = this.replay(submission.idempotencyKey, submission.fingerprint);
      if (earlier) {
        this.#options.metrics.submissions.inc({ outcome: "replayed" });
        return { job: earlier, replayed: true };
      }
    }
    this.admissible(submission.witness.byteLength);
    this.#options.keys.get(submission.keyId); // deleted while its witness was being computed: 404
    const job: Job = {
      id: randomUUID(),
      keyId: submission.keyId,
      state: INITIAL_STATE,
      source: submission.source,
      createdAt: Date.now(),
      enqueuedMono: performance.now(),
      witness: submission.witness,
      idempotencyKey: submission.idempotencyKey,
      fingerprint: submission.fingerprint,
      timings: { witnessMs: submission.witnessMs },
      attempts: [],
      watchers: new Set(),
    };
    this.#jobs.set(job.id, job);
    if (job.idempotencyKey) this.#byIdempotencyKey.set(job.idempotencyKey, job);
    this.#queue.add(job);
    this.#queuedBytes += submission.witness.byteLength;
    let perKey = this.#queueByKey.get(job.keyId);
    if (!perKey) this.#queueByKey.set(job.keyId, (perKey = new Set()));
    perKey.add(job);
    this.#options.metrics.submissions.inc({ outcome: "accepted" });
    this.#pump();
    return { job, replayed: false };
  }

  /** Jobs ahead of a queued job (0 = next); undefined once it left the queue. */
  position(job: Job): number | undefined {
    if (job.state !== "queued") return undefined;
    let ahead = 0;
    for (const queued of this.#queue) {
      if (queued === job) return ahead;
      ahead++;
    }
    return undefined;
  }

  /** The progress of the batch a running job is in (proofs done of the batch's total), else undefined. */
  progress(job: Job): Progress | undefined {
    return job.state === "running" && this.#running.includes(job) ? this.#runningProgress : undefined;
  }

  /**
   * Cancels a queued job, or a running job alone in its batch: that batch's library call is
   * cancelled (it stops before its next proof; a proof already started runs to its end on the
   * device and is discarded) and the job is final at once. A running job that shares its batch is
   * not interrupted (409 JOB_RUNNING); a final one is left as is (409, unless already cancelled).
   */
  cancel(id: string, reason = "cancelled by the client"): Job {
    const job = this.get(id);
    if (job.state === "cancelled") return job;
    if (!allowed(job.state, "cancel")) throw new ServiceError(409, "JOB_FINISHED", `job ${id} already ${job.state}`);
    if (job.state === "running") {
      // Stopping a shared call would cost the batch's other jobs their proofs.
      if (!(this.#running.length === 1 && this.#running[0] === job && this.#runningAbort)) {
        throw new ServiceError(409, "JOB_RUNNING", `job ${id} is being proved in a batch of ${this.#running.length} jobs (only a job alone in its batch can be cancelled); its result will be ready shortly`);
      }
      this.#runningAbort.abort(reason);
    } else {
      this.#dequeue(job);
    }
    this.#finish(job, "cancel", { error: { code: "CANCELLED", message: reason } });
    return job;
  }

  /** Resolves when the job changes state or after `ms`. */
  waitForChange(job: Job, ms: number, signal?: AbortSignal): Promise<void> {
    if (isFinal(job.state)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        job.watchers.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      job.watchers.add(done);
      signal?.addEventListener("abort", done);
    });
  }

  /** Records that a client received the job's result. */
  markFetched(job: Job): void {
    if (job.fetchedAt !== undefined) return;
    job.fetchedAt = Date.now();
    for (const listener of [...this.#fetched]) listener();
  }

  /**
   * Waits until the results of the jobs `ids` (those that succeeded) have all been fetched, or
   * `ms` passes; resolves with the ids still unfetched then.
   */
  async awaitFetched(ids: readonly string[], ms: number): Promise<string[]> {
    const unfetched = () => ids.filter((id) => this.#jobs.get(id)?.fetchedAt === undefined && this.#jobs.get(id)?.state === "succeeded");
    if (unfetched().length === 0 || ms <= 0) return unfetched();
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#fetched.delete(check);
        resolve();
      };
      const check = () => unfetched().length === 0 && done();
      const timer = setTimeout(done, ms);
      this.#fetched.add(check);
    });
    return unfetched();
  }

  /** Whether a job is final. */
  static isFinal(job: Job): boolean {
    return isFinal(job.state);
  }

  #dequeue(job: Job): void {
    if (this.#queue.delete(job)) this.#queuedBytes -= job.witness?.byteLength ?? 0;
    const perKey = this.#queueByKey.get(job.keyId);
    perKey?.delete(job);
    if (perKey && perKey.size === 0) this.#queueByKey.delete(job.keyId);
  }

  #notify(job: Job): void {
    for (const watcher of [...job.watchers]) watcher();
  }

  #finish(job: Job, event: Exclude<JobEvent, "claim" | "reclaim">, fields: Partial<Pick<Job, "result" | "error">>): void {
    if (isFinal(job.state)) return; // e.g. cancelled while its proof ran: the outcome is dropped
    const state = transition(job.state, event);
    job.state = state;
    job.finishedAt = Date.now();
    Object.assign(job, fields);
    job.witness = undefined;
    job.timings.totalMs = performance.now() - job.enqueuedMono + (job.timings.witnessMs ?? 0);
    const metrics = this.#options.metrics;
    metrics.jobsTotal.inc({ key: job.keyId, state });
    if (state !== "cancelled") {
      const observe = (phase: string, ms: number | undefined) => ms !== undefined && metrics.phaseSeconds.observe({ phase }, ms / 1000);
      observe("witness", job.timings.witnessMs);
      observe("queue", job.timings.queueMs);
      observe("prove", job.timings.proveMs);
      observe("total", job.timings.totalMs);
      for (const [phase, span] of Object.entries(job.timings.phases ?? {})) observe(phase, span!.end - span!.start);
    }
    this.#notify(job);
  }

  /** Starts the next batch when the device is free and a batch is ready. */
  #pump(): void {
    if (this.#busy) return;
    const oldest = this.#queue.values().next().value as Job | undefined;
    if (!oldest) {
      for (const resolve of [...this.#idle]) resolve();
      return;
    }
    const sameKey = this.#queueByKey.get(oldest.keyId)!;
    const waited = performance.now() - oldest.enqueuedMono;
    if (sameKey.size < this.#options.batchSize && waited < this.#options.batchWaitMs && !this.#closing) {
      if (!this.#batchTimer) {
        this.#batchTimer = setTimeout(() => {
          this.#batchTimer = undefined;
          this.#pump();
        }, Math.ceil(this.#options.batchWaitMs - waited));
      }
      return;
    }
    if (this.#batchTimer) {
      clearTimeout(this.#batchTimer);
      this.#batchTimer = undefined;
    }
    const batch: Job[] = [];
    for (const job of sameKey) {
      batch.push(job);
      if (batch.length === this.#options.batchSize) break;
    }
    for (const job of batch) this.#dequeue(job);
    this.#busy = true;
    this.#running = batch;
    this.#runBatch(batch)
      .catch((error) => {
        // #runBatch settles every job itself; anything reaching here is a bug in it.
        for (const job of batch) if (allowed(job.state, "abandon")) this.#finish(job, "abandon", { error: { code: "INTERNAL", message: messageOf(error) } });
      })
      .finally(() => {
        this.#busy = false;
        this.#running = [];
        this.#runningProgress = this.#runningAbort = undefined;
        this.#pump();
      });
  }

  async #runBatch(batch: Job[]): Promise<void> {
    const keyId = batch[0].keyId;
    const prover = proverOf(this.#options.keys.get(keyId)); // a key with queued jobs cannot be deleted
    const started = performance.now();
    for (const job of batch) {
      job.state = transition(job.state, "claim");
      job.startedAt = Date.now();
      job.timings.queueMs = started - job.enqueuedMono;
      this.#notify(job);
    }
    this.#options.metrics.batchSize.observe({ key: keyId }, batch.length);
    const abort = (this.#runningAbort = new AbortController());
    const onProgress = (progress: Progress) => {
      this.#runningProgress = progress;
      for (const job of batch) this.#notify(job);
    };
    // Only the batch call can be cancelled (a job alone in its batch) and shows progress: the
    // one-by-one calls after it run for a batch of several jobs, which is not cancelled.
    const call = (jobs: readonly Job[], fallback: boolean) =>
      prover.proveBatch(jobs.map((job) => job.witness!), fallback ? { selfCheck: true } : { selfCheck: true, signal: abort.signal, onProgress });
    await proveJobs(batch, call, (report) => {
      const id = ++this.#batches;
      const error = report.error === undefined ? {} : { error: messageOf(report.error) };
      for (const job of report.jobs) job.attempts.push({ batch: id, size: report.jobs.length, outcome: report.outcome, ...error });
      if (report.outcome === "batch_failed") this.#options.metrics.batchFallbacks.inc();
      if (report.outcome === "proved") this.#learn(report.ms, report.jobs.length);
      // A cancelled call's job is final already (cancel()): #fail leaves it as it is.
      for (const { job, result, error, ms, size } of report.decided) {
        if (result) this.#succeed(job, result, ms, size);
        else this.#fail(job, error, ms);
      }
    });
  }

  #learn(ms: number, proofs: number): void {
    const perProof = ms / proofs;
    this.#msPerProof = this.#msPerProof === 0 ? perProof : 0.8 * this.#msPerProof + 0.2 * perProof;
  }

  #succeed(job: Job, result: ProofResult, ms: number, size: number): void {
    if (isFinal(job.state)) return; // cancelled while its proof ran
    job.timings.proveMs = ms;
    job.timings.batchSize = size;
    if ("device" in result) job.timings.device = (result as DeviceProofResult).device;
    job.timings.phases = result.timings.phases;
    this.#finish(job, "prove", { result: { proof: result.proof, publicSignals: result.publicSignals } });
  }

  #fail(job: Job, error: unknown, ms: number): void {
    if (isFinal(job.state)) return; // cancelled while its proof ran
    job.timings.proveMs = ms;
    job.timings.batchSize = 1;
    const code = (error as { code?: string })?.code ?? "INTERNAL";
    this.#finish(job, "fail", { error: { code, message: messageOf(error) } });
  }

  /** Forgets final jobs older than the result TTL. */
  #sweep(): void {
    const cutoff = Date.now() - this.#options.resultTtlS * 1000;
    for (const [id, job] of this.#jobs) {
      if (job.finishedAt !== undefined && job.finishedAt < cutoff) {
        this.#jobs.delete(id);
        if (job.idempotencyKey && this.#byIdempotencyKey.get(job.idempotencyKey) === job) this.#byIdempotencyKey.delete(job.idempotencyKey);
      }
    }
  }

  /**
   * Shutdown: refuses new jobs, keeps proving queued ones for up to `drainMs`, then cancels those
   * still queued and waits for the running batch (a library call cannot be interrupted). Reports
   * how every job that was queued or running at the start ended.
   */
  async close(drainMs: number): Promise<DrainReport> {
    this.#closing = true;
    const active = [...this.#running, ...this.#queue];
    if (this.#batchTimer) {
      clearTimeout(this.#batchTimer);
      this.#batchTimer = undefined;
    }
    if (drainMs > 0) {
      // Closing lifts the batch wait: whatever is queued runs now, in full or partial batches.
      this.#pump();
      const idle = new Promise<void>((resolve) => {
        if (!this.#busy && this.#queue.size === 0) return resolve();
        const done = () => {
          this.#idle.delete(done);
          resolve();
        };
        this.#idle.add(done);
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([idle, new Promise<void>((resolve) => (timer = setTimeout(resolve, drainMs)))]);
      clearTimeout(timer);
    }
    for (const job of [...this.#queue]) this.cancel(job.id, "cancelled: the service shut down before the job ran");
    while (this.#busy) await new Promise<void>((resolve) => setTimeout(resolve, 10));
    clearInterval(this.#sweeper);
    const report: DrainReport = { succeeded: [], failed: [], cancelled: [] };
    for (const job of active) report[job.state as keyof DrainReport]?.push(job.id);
    return report;
  }
}

function messageOf(error: unknown): string {
  return String((error as Error)?.message ?? error);
}
