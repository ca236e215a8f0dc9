/**
 * @module
 * The worker role (--role worker --database-url ...): one process per device. It serves the keys
 * it preloaded: in turn, it takes up to --batch-size queued jobs of one key in one transaction
 * (pg-boss's fetch of that key's queue, FOR UPDATE SKIP LOCKED, marking the rows running), proves
 * them in one library call, and writes the results in a second transaction that pg-boss's fence
 * guards: the settle counts only while the claim is still the job's current attempt (same
 * retryCount, still active), so a worker whose lease was lost (it stalled past --lease-s, and the
 * job was claimed again elsewhere) cannot overwrite or duplicate the newer result. A worker that
 * dies holds its jobs only until the lease runs out (pg-boss's heartbeat: we touch every third of
 * it while proving); they return to the queue with the next retryCount. A batch is proved by
 * batch.ts, as in one process: when the batch call fails, its jobs are proved one by one, so a
 * witness that does not satisfy the constraints fails alone, with the library's code; such a job
 * is final, not retried. Every state a statement here writes comes from job_states.ts.
 *
 * While a call runs, the worker writes its progress (proofs done of the call's total) into the
 * jobs' rows, at most every PROGRESS_WRITE_MS and fenced by the attempt, for the API to show. A
 * job cancelled while it runs is already final in its row (store_pg.ts); the worker hears of it
 * by NOTIFY cuzk_cancel at once, and by asking at each lease heartbeat in case a notification
 * was lost, and sets the call's cancel flag (cuzk_progress.cancel, through the AbortSignal) once no
 * job of the call is still wanted: the library then stops before its next proof. Its settle does
 * not write over a cancelled row (the attempt reads `cancelled`).
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import process from "node:process";
import { FR_BYTES } from "../mod.ts";
import type { DeviceProofResult, ProofResult, Progress, ProverSet } from "../mod.ts";
import { proveJobs } from "./batch.ts";
import { CANCEL_CHANNEL, JOB_CHANNEL, QUEUED_CHANNEL, queueName, WORKER_BEAT_MS } from "./cluster_db.ts";
import type { ClusterDb, Listener } from "./cluster_db.ts";
import { backoffMs, DatabaseUnavailableError, isConnectionError } from "./db_errors.ts";
import { sqlTransition, TRANSITIONS } from "./job_states.ts";
import { proverOf } from "./keys.ts";
import type { KeyRegistry } from "./keys.ts";
import { logEvent } from "./log.ts";
import { WitnessFileError } from "./witness_dir.ts";
import type { WitnessDir } from "./witness_dir.ts";

/** Options of a worker. */
export interface WorkerOptions {
  db: ClusterDb;
  keys: KeyRegistry;
  batchSize: number;
  /** This process's name in cuzk.workers and in the jobs it proves. */
  workerId: string;
  backend: string;
  /** The shared witness directory (--witness-dir), for jobs whose witness is a file. */
  witnessDir?: WitnessDir;
}

/** A job this worker holds: its claim (pg-boss id and retryCount) and its witness. */
interface Claimed {
  id: string;
  /** The claim's name (worker#run-n), shared by the jobs taken together. */
  batch: string;
  retryCount: number;
  /** The lease pg-boss gave the claim (its heartbeat), to renew it in time. */
  heartbeatSeconds: number | null;
  /** The witness from the row, or (witnessFile) read from the witness directory after the claim. */
  witness: Uint8Array | null;
  witnessFile: string | null;
}

/** How a job's proof ended. */
interface Outcome {
  job: Claimed;
  result?: ProofResult;
  error?: { code: string; message: string };
  proveMs: number;
  batchSize: number;
}

/** Idle workers look at their queues at least this often (retried jobs send no NOTIFY). */
const POLL_MS = 250;
/** A call's progress is written to its jobs' rows at most this often (the last value always is). */
export const PROGRESS_WRITE_MS = 250;
/** How long the end of a call waits for a progress write still in flight before settling anyway. */
const PROGRESS_CLOSE_WAIT_MS = 1000;

/** A claim takes queued jobs, and jobs whose earlier claim lost its lease (still running in their rows). */
const CLAIM = sqlTransition("claim", "reclaim");

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const messageOf = (error: unknown) => String((error as Error)?.message ?? error);
const codeOf = (error: unknown) => (error as { code?: string })?.code ?? "INTERNAL";

/** The default worker id: host and process. */
export const defaultWorkerId = () => `${hostname()}:${process.pid}`;

/** A proving worker. */
export class ProvingWorker {
  readonly #options: WorkerOptions;
  readonly #keyIds: string[];
  #stopping = false;
  #wake: (() => void) | undefined;
  /** A job was queued for us since the last look at the queues: do not sleep before the next. */
  #woken = false;
  #loop: Promise<void> | undefined;
  #beat: ReturnType<typeof setInterval> | undefined;
  #listener: Listener | undefined;
  #cancelListener: Listener | undefined;
  /** A claim whose COMMIT went unanswered: it may hold jobs, looked for before the next claim. */
  #unsure: { keyId: string; batch: string } | undefined;
  #batches = 0;
  /** The batch in hand (claimed, not yet settled). */
  #held: Claimed[] = [];
  /** Jobs of the batch in hand that are no longer this claim's to prove (cancelled, or lost). */
  readonly #dropped = new Set<string>();
  /** The library call running now: its jobs, and the controller that sets its cancel flag. */
  #calling: { ids: string[]; abort: AbortController } | undefined;
  /** Tells this run's batch names from those of an earlier process with the same worker id. */
  readonly #runTag = randomBytes(2).toString("hex");

  private constructor(options: WorkerOptions) {
    this.#options = options;
    this.#keyIds = options.keys.list().map((key) => key.id);
  }

  /** Registers the worker and its keys' queues and starts taking jobs. */
  static async start(options: WorkerOptions): Promise<ProvingWorker> {
    const worker = new ProvingWorker(options);
    const { db } = options;
    for (const keyId of worker.#keyIds) await db.ensureQueue(keyId);
    await db.pool.query(
      `INSERT INTO cuzk.workers (id, host, pid, keys, backend, batch_size) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET keys = $4, backend = $5, batch_size = $6, started_at = now(), seen_at = now(), stopped_at = NULL`,
      [options.workerId, hostname(), process.pid, worker.#keyIds, options.backend, options.batchSize],
    );
    worker.#beat = setInterval(() => void db.pool.query("UPDATE cuzk.workers SET seen_at = now() WHERE id = $1", [options.workerId]).catch(() => {}), WORKER_BEAT_MS);
    const wake = () => {
      worker.#woken = true;
      worker.#wake?.();
    };
    // Once a listener is back, what it missed is looked for: the queues at once, and whether the
    // batch in hand is still wanted.
    worker.#listener = await db.listen(QUEUED_CHANNEL, (keyId) => worker.#keyIds.includes(keyId) && wake(), wake);
    worker.#cancelListener = await db.listen(
      CANCEL_CHANNEL,
      (jobId) => worker.#held.some((job) => job.id === jobId) && void worker.#checkDropped().catch(() => {}),
      () => void worker.#checkDropped().catch(() => {}),
    );
    worker.#loop = worker.#run();
    return worker;
  }

  /** Stops claiming, finishes and settles the batch in hand, and records the stop. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#loop;
    clearInterval(this.#beat);
    await this.#listener?.close();
    await this.#cancelListener?.close();
    await this.#options.db.pool.query("UPDATE cuzk.workers SET stopped_at = now() WHERE id = $1", [this.#options.workerId]).catch(() => {});
  }

  #idle(ms: number): Promise<void> {
    if (this.#woken) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }

  async #run(): Promise<void> {
    let next = 0; // keys take turns, so a busy key does not starve the others
    let failures = 0;
    while (!this.#stopping) {
      let worked = false;
      this.#woken = false;
      try {
        if (this.#unsure) {
          const { keyId, batch } = this.#unsure;
          const recovered = await this.#recover(keyId, batch);
          this.#unsure = undefined;
          if (recovered.length > 0) {
            worked = true;
            await this.#work(keyId, recovered);
          }
        }
        for (let i = 0; i < this.#keyIds.length && !this.#stopping && !worked; i++) {
          const keyId = this.#keyIds[(next + i) % this.#keyIds.length];
          const claimed = await this.#claim(keyId);
          if (claimed.length === 0) continue;
          next = (next + i + 1) % this.#keyIds.length;
          worked = true;
          await this.#work(keyId, claimed);
        }
        if (failures > 0) logEvent("worker_resumed", { worker: this.#options.workerId, failures });
        failures = 0;
      } catch (error) {
        // The database went away or refused: the worker keeps trying, backing off, for as long as
        // it runs. A claim that failed before its COMMIT holds nothing; one whose COMMIT went
        // unanswered is looked for first (#unsure); a batch in hand is settled by #settle's retries.
        failures++;
        const wait = backoffMs(failures);
        logEvent("worker_error", { worker: this.#options.workerId, error: messageOf(error), failures, retryInMs: wait });
        await this.#idle(wait);
        continue;
      }
      if (!worked) await this.#idle(POLL_MS);
    }
  }

  /** Proves a claimed batch and settles it. */
  async #work(keyId: string, claimed: Claimed[]): Promise<void> {
    this.#held = claimed;
    this.#dropped.clear();
    try {
      await this.#settle(keyId, claimed[0].batch, await this.#prove(keyId, claimed));
    } finally {
      this.#held = [];
    }
  }

  /**
   * Takes up to batch-size queued jobs of `keyId` in one transaction and marks their rows running.
   * If the COMMIT goes unanswered, the claim is remembered (#unsure) and looked for by its batch
   * name once the database answers, so that jobs it may hold are proved now, not after their lease.
   */
  async #claim(keyId: string): Promise<Claimed[]> {
    const { db, batchSize, workerId } = this.#options;
    const queue = queueName(keyId);
    // Numbered by claims that took jobs (or may have): an empty look at the queue uses no name.
    const batch = `${workerId}#${this.#runTag}-${this.#batches + 1}`;
    let held: Claimed[];
    try {
      held = await db.transaction(async (client, boss): Promise<Claimed[]> => {
        const jobs = await db.boss.fetch(queue, { batchSize, ...boss });
        if (jobs.length === 0) return [];
        const ids = jobs.map((job) => job.id);
        const attempts = jobs.map((job) => job.retryCount + 1);
        const { rows } = await client.query(
          `UPDATE cuzk.jobs j SET state = ${CLAIM.sqlTo}, attempt = a.attempt, worker = $3, started_at = now(), progress = NULL
             FROM unnest($1::uuid[], $2::int[]) AS a(id, attempt)
            WHERE j.id = a.id AND j.state IN (${CLAIM.sqlFrom})
            RETURNING j.id, j.witness, j.witness_file`,
          [ids, attempts, workerId],
        );
        const claimed = new Map<string, { witness: Uint8Array | null; witnessFile: string | null }>(rows.map((row) => [row.id as string, { witness: row.witness, witnessFile: row.witness_file }]));
        await client.query(
          `INSERT INTO cuzk.attempts (job_id, attempt, worker, batch, size)
           SELECT a.id, a.attempt, $3, $4, $5 FROM unnest($1::uuid[], $2::int[]) AS a(id, attempt) WHERE a.id = ANY($6::uuid[])
           ON CONFLICT DO NOTHING`,
          [ids, attempts, workerId, batch, claimed.size, [...claimed.keys()]],
        );
        // A queue entry whose row is already final (cancelled meanwhile) is done with.
        const stale = jobs.filter((job) => !claimed.has(job.id));
        if (stale.length > 0) await db.boss.complete(queue, stale.map((job) => ({ id: job.id, retryCount: job.retryCount })), null, boss);
        await client.query("SELECT pg_notify($1, id::text) FROM unnest($2::uuid[]) AS id", [JOB_CHANNEL, [...claimed.keys()]]);
        return jobs.filter((job) => claimed.has(job.id)).map((job) => ({ id: job.id, batch, retryCount: job.retryCount, heartbeatSeconds: job.heartbeatSeconds, ...claimed.get(job.id)! }));
      });
    } catch (error) {
      if (error instanceof DatabaseUnavailableError && error.committed === "unknown") {
        this.#batches++;
        this.#unsure = { keyId, batch };
      }
      throw error;
    }
    if (held.length > 0) this.#batches++;
    // Said once the claim is committed: from here the jobs are this worker's until settled or lost.
    if (held.length > 0) logEvent("batch_claimed", { worker: workerId, batch: held[0].batch, key: keyId, size: held.length, jobs: held.map((j) => j.id), attempts: held.map((j) => j.retryCount + 1) });
    return held;
  }

  /**
   * The jobs of a claim whose COMMIT went unanswered, if it did commit (its attempt rows carry its
   * batch name) and they are still its own: held like any claim, proved, and settled under the
   * fence. Nothing if it did not commit.
   */
  async #recover(keyId: string, batch: string): Promise<Claimed[]> {
    const { db, workerId } = this.#options;
    const { rows } = await db.pool.query(
      `SELECT a.job_id AS id, a.attempt, j.witness, j.witness_file FROM cuzk.attempts a JOIN cuzk.jobs j ON j.id = a.job_id
        WHERE a.batch = $1 AND a.settled_at IS NULL AND j.state = ${CLAIM.sqlTo} AND j.attempt = a.attempt AND j.worker = $2`,
      [batch, workerId],
    );
    logEvent("claim_checked", { worker: workerId, batch, key: keyId, committed: rows.length > 0 });
    if (rows.length === 0) return [];
    const heartbeatSeconds = (await db.boss.getQueue(queueName(keyId)))?.heartbeatSeconds ?? null;
    const held: Claimed[] = rows.map((row) => ({ id: row.id, batch, retryCount: row.attempt - 1, heartbeatSeconds, witness: row.witness, witnessFile: row.witness_file }));
    logEvent("batch_claimed", { worker: workerId, batch, key: keyId, size: held.length, jobs: held.map((j) => j.id), attempts: held.map((j) => j.retryCount + 1), recovered: true });
    return held;
  }

  /**
   * Proves a claimed batch in one call (one by one after a failed call), touching the lease and
   * asking whether its jobs are still wanted meanwhile. A job whose witness file cannot be read
   * fails alone (WITNESS_UNAVAILABLE); a call stopped because none of its jobs was wanted any more
   * ends its jobs as CANCELLED (their rows are final already: nothing is written over them).
   */
  async #prove(keyId: string, batch: Claimed[]): Promise<Outcome[]> {
    const { db } = this.#options;
    const queue = queueName(keyId);
    const key = this.#options.keys.get(keyId);
    const prover = proverOf(key);
    const touchMs = Math.max(1000, ((batch[0].heartbeatSeconds ?? 30) * 1000) / 3);
    const touch = setInterval(() => {
      void db.boss.touch(queue, batch.map(({ id, retryCount }) => ({ id, retryCount }))).catch(() => {});
      void this.#checkDropped().catch(() => {}); // the floor under NOTIFY cuzk_cancel, which a reconnect can lose
    }, touchMs);
    try {
      const outcomes: Outcome[] = [];
      const witnesses = new Map<string, Uint8Array>();
      for (const job of batch) {
        try {
          witnesses.set(job.id, job.witness ?? (await this.#witnessFile(job, key.info.nVars * FR_BYTES)));
        } catch (error) {
          outcomes.push({ job, error: { code: codeOf(error), message: messageOf(error) }, proveMs: 0, batchSize: 1 });
        }
      }
      const ready = batch.filter((job) => witnesses.has(job.id));
      const proved = await proveJobs(ready, (jobs) => this.#call(prover, jobs, witnesses));
      for (const { job, result, error, ms, size } of proved) {
        outcomes.push(result ? { job, result, proveMs: ms, batchSize: size } : { job, error: { code: codeOf(error), message: messageOf(error) }, proveMs: ms, batchSize: size });
      }
      return outcomes;
    } finally {
      clearInterval(touch);
    }
  }

  /** A job's witness from the shared directory (its row names the file). */
  #witnessFile(job: Claimed, bytes: number): Promise<Uint8Array> {
    const { witnessDir } = this.#options;
    if (!job.witnessFile) return Promise.reject(new WitnessFileError("the job's row holds no witness and names no witness file"));
    if (!witnessDir) return Promise.reject(new WitnessFileError(`the job's witness is the file ${job.witnessFile} of the shared witness directory, and this worker has no --witness-dir`));
    return witnessDir.read(job.witnessFile, bytes);
  }

  /**
   * One library call over `jobs`: its progress goes to their rows, and its cancel flag is set once
   * none of them is wanted (at once, when that is known before the call).
   */
  async #call(prover: ProverSet, jobs: readonly Claimed[], witnesses: Map<string, Uint8Array>): Promise<ProofResult[]> {
    const calling = (this.#calling = { ids: jobs.map((job) => job.id), abort: new AbortController() });
    this.#stopIfUnwanted();
    const progress = new ProgressWriter(this.#options.db, jobs);
    try {
      return await prover.proveBatch(jobs.map((job) => witnesses.get(job.id)!), { selfCheck: true, signal: calling.abort.signal, onProgress: (p) => progress.update(p) });
    } finally {
      this.#calling = undefined;
      await progress.close();
    }
  }

  /** Asks which jobs of the batch in hand are no longer this claim's (cancelled, failed for good, claimed again). */
  async #checkDropped(): Promise<void> {
    const held = this.#held;
    if (held.length === 0) return;
    const { rows } = await this.#options.db.pool.query(
      `SELECT a.id FROM unnest($1::uuid[], $2::int[]) AS a(id, attempt) LEFT JOIN cuzk.jobs j ON j.id = a.id
        WHERE j.id IS NULL OR j.state <> ${CLAIM.sqlTo} OR j.attempt <> a.attempt`,
      [held.map((job) => job.id), held.map((job) => job.retryCount + 1)],
    );
    if (this.#held !== held) return; // settled meanwhile
    for (const row of rows) this.#dropped.add(row.id as string);
    this.#stopIfUnwanted();
  }

  /** Sets the running call's cancel flag when none of its jobs is wanted: the library stops before its next proof. */
  #stopIfUnwanted(): void {
    const calling = this.#calling;
    if (!calling || calling.abort.signal.aborted || !calling.ids.every((id) => this.#dropped.has(id))) return;
    calling.abort.abort();
    logEvent("call_cancelled", { worker: this.#options.workerId, batch: this.#held[0]?.batch, jobs: calling.ids });
  }

  /**
   * Writes the outcomes (#settleOnce), retrying through a database outage until they are written:
   * the proofs are in hand, and a settle is fenced and idempotent. Once the worker is stopping it
   * tries for one lease only: past that the jobs are back in the queue anyway.
   */
  async #settle(keyId: string, batch: string, outcomes: Outcome[]): Promise<void> {
    const started = performance.now();
    const leaseMs = (outcomes[0]?.job.heartbeatSeconds ?? 30) * 1000;
    for (let failures = 1; ; failures++) {
      try {
        return await this.#settleOnce(keyId, batch, outcomes);
      } catch (error) {
        if (!isConnectionError(error) || (this.#stopping && performance.now() - started > leaseMs)) throw error;
        const wait = backoffMs(failures);
        logEvent("settle_retry", { worker: this.#options.workerId, batch, error: messageOf(error), failures, retryInMs: wait });
        await sleep(wait);
      }
    }
  }

  /**
   * Writes the outcomes in one transaction, fenced by pg-boss: only the jobs whose claim is still
   * current (same retryCount, still active) are completed, and only their rows are written. A
   * settle whose COMMIT went unanswered may have been written: its attempts say so (settled_at),
   * and then what they recorded is reported and nothing is written again (a second `complete`
   * would find the entries done and record the proofs as lost leases).
   */
  async #settleOnce(keyId: string, batch: string, outcomes: Outcome[]): Promise<void> {
    const { db, workerId } = this.#options;
    const queue = queueName(keyId);
    const settled = await db.transaction(async (client, boss): Promise<Array<{ id: string; current: boolean; written: boolean; state: string; earlier?: boolean }>> => {
      const { rows: earlier } = await client.query(
        `SELECT a.job_id AS id, a.outcome FROM cuzk.attempts a JOIN unnest($1::uuid[], $2::int[]) AS o(id, attempt) ON a.job_id = o.id AND a.attempt = o.attempt
          WHERE a.batch = $3 AND a.settled_at IS NOT NULL`,
        [outcomes.map(({ job }) => job.id), outcomes.map(({ job }) => job.retryCount + 1), batch],
      );
      if (earlier.length > 0) {
        return earlier.map(({ id, outcome }) => ({ id, current: outcome !== "lease_lost", written: outcome === "proved" || outcome === "failed", state: TRANSITIONS[outcome === "proved" ? "prove" : "fail"].to, earlier: true }));
      }
      const response = await db.boss.complete(queue, outcomes.map(({ job }) => ({ id: job.id, retryCount: job.retryCount })), null, boss) as { settled?: string[] };
      const current = new Set(response.settled ?? []);
      const records = outcomes.map(({ job, result, error, proveMs, batchSize }) => ({
        id: job.id,
        attempt: job.retryCount + 1,
        current: current.has(job.id),
        event: result ? "prove" : "fail",
        state: TRANSITIONS[result ? "prove" : "fail"].to,
        from_states: TRANSITIONS[result ? "prove" : "fail"].from,
        result: result ? { proof: result.proof, publicSignals: result.publicSignals } : null,
        error: error ?? null,
        timings: { proveMs, batchSize, ...(result ? { device: (result as DeviceProofResult).device, phases: result.timings.phases } : {}) },
        written: false,
      }));
      // Only rows this attempt may still change (running under it): a job cancelled meanwhile stays cancelled.
      const { rows: written } = await client.query(
        `UPDATE cuzk.jobs j SET state = o.state, result = o.result, error = o.error, finished_at = now(), witness = NULL, progress = NULL,
           timings = o.timings || jsonb_build_object(
             'queueMs', extract(epoch FROM (j.started_at - j.created_at)) * 1000,
             'totalMs', extract(epoch FROM (now() - j.created_at)) * 1000 + coalesce(j.witness_ms, 0))
           FROM jsonb_to_recordset($1::jsonb) AS o(id uuid, attempt int, current boolean, state text, from_states text[], result jsonb, error jsonb, timings jsonb)
          WHERE j.id = o.id AND o.current AND j.attempt = o.attempt AND j.state = ANY(o.from_states)
          RETURNING j.id`,
        [JSON.stringify(records)],
      );
      const wrote = new Set(written.map((row) => row.id as string));
      for (const record of records) record.written = wrote.has(record.id);
      await client.query(
        `UPDATE cuzk.attempts a SET settled_at = now(),
           outcome = CASE WHEN NOT o.current THEN 'lease_lost' WHEN NOT o.written THEN 'cancelled' WHEN o.event = 'prove' THEN 'proved' ELSE 'failed' END,
           error = o.error ->> 'message'
           FROM jsonb_to_recordset($1::jsonb) AS o(id uuid, attempt int, current boolean, written boolean, event text, error jsonb)
          WHERE a.job_id = o.id AND a.attempt = o.attempt`,
        [JSON.stringify(records)],
      );
      await client.query("SELECT pg_notify($1, id::text) FROM unnest($2::uuid[]) AS id", [JOB_CHANNEL, records.map((r) => r.id)]);
      return records;
    });
    const lost = settled.filter((r) => !r.current).map((r) => r.id);
    logEvent("batch_settled", {
      ...(settled.some((r) => r.earlier) ? { earlier: true } : {}),
      worker: workerId,
      batch,
      key: keyId,
      size: settled.length,
      succeeded: settled.filter((r) => r.written && r.state === TRANSITIONS.prove.to).length,
      failed: settled.filter((r) => r.written && r.state === TRANSITIONS.fail.to).length,
      leaseLost: lost,
      cancelled: settled.filter((r) => r.current && !r.written).map((r) => r.id),
    });
  }
}

/**
 * Writes a call's progress into its jobs' rows (and NOTIFY cuzk_job, so event streams see it): at
 * most every PROGRESS_WRITE_MS, one write at a time, the latest value after a pause; only rows
 * still running under the claim's attempt.
 */
class ProgressWriter {
  #latest: Progress | undefined;
  #written = "";
  #lastWriteAt = -Infinity;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #pending: Promise<void> = Promise.resolve();
  #closed = false;

  readonly db: ClusterDb;
  readonly jobs: readonly Claimed[];

  constructor(db: ClusterDb, jobs: readonly Claimed[]) {
    this.db = db;
    this.jobs = jobs;
  }

  update(progress: Progress): void {
    this.#latest = progress;
    if (this.#timer || this.#closed) return;
    const wait = Math.max(0, this.#lastWriteAt + PROGRESS_WRITE_MS - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#pending = this.#pending.then(() => this.#write());
    }, wait);
  }

  async #write(): Promise<void> {
    const text = JSON.stringify(this.#latest);
    if (this.#closed || text === this.#written) return;
    this.#written = text;
    this.#lastWriteAt = performance.now();
    await this.db.pool.query(
      `WITH written AS (
         UPDATE cuzk.jobs j SET progress = $3::jsonb FROM unnest($1::uuid[], $2::int[]) AS a(id, attempt)
          WHERE j.id = a.id AND j.attempt = a.attempt AND j.state = ${CLAIM.sqlTo} RETURNING j.id)
       SELECT pg_notify($4, id::text) FROM written`,
      [this.jobs.map((job) => job.id), this.jobs.map((job) => job.retryCount + 1), text, JOB_CHANNEL],
    ).catch(() => {}); // a lost write only delays the progress shown
  }

  /**
   * Stops writing (the settle clears the progress); waits for a write in flight, but not for
   * long: one held up (a row lock, a connection that hangs) must not hold up the settle, and one
   * that lands after it writes nothing (it is fenced by the row's state and attempt).
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.#pending, new Promise<void>((resolve) => (timer = setTimeout(resolve, PROGRESS_CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
  }
}
