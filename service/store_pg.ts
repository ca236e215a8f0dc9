/**
 * @module
 * The PostgreSQL job store of the API role (--database-url): a job is a row of cuzk.jobs and an
 * entry of its key's pg-boss queue, both written in the transaction that answers 202, so an
 * accepted job survives any process. Workers (worker.ts) claim and settle the entries; this side
 * reads rows (a running job's progress as its worker wrote it), waits for changes through
 * LISTEN/NOTIFY (with a poll as the floor), cancels queued and running jobs, fails the jobs pg-boss
 * gave up on (its dead-letter queue: RETRY_LIMIT), forgets final jobs after the result TTL, and
 * keeps witnesses above the row limit in the shared directory (witness_dir.ts) while their jobs
 * are active. Every state a statement here writes, and the states it may write over, come from
 * job_states.ts.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { CANCEL_CHANNEL, DEAD_LETTER_QUEUE, JOB_CHANNEL, QUEUED_CHANNEL } from "./cluster_db.ts";
import type { ClusterDb, Listener, QueueSettings } from "./cluster_db.ts";
import type { ClusterMetrics } from "./cluster_metrics.ts";
import { databaseUnavailable, DatabaseUnavailableError, isConnectionError } from "./db_errors.ts";
import { ServiceError } from "./errors.ts";
import { allowed, INITIAL_STATE, sqlState, sqlTransition } from "./job_states.ts";
import type { ServiceMetrics } from "./metrics.ts";
import { FINAL_STATES, finishedOrNot, JOB_STATES } from "./store.ts";
import type { Attempt, JobListing, JobResult, JobState, JobStore, JobView, Submission } from "./store.ts";
import type { WitnessDir } from "./witness_dir.ts";

/** Options of the store. */
export interface PgJobStoreOptions {
  db: ClusterDb;
  metrics: ServiceMetrics;
  cluster: ClusterMetrics;
  queue: QueueSettings;
  /** Queued jobs in all, and of one key, before 429. */
  queueCapacity: number;
  queueCapacityPerKey: number;
  /** Witness bytes of queued jobs before 429. */
  queueBytes: number;
  resultTtlS: number;
  /** Largest witness kept in a row (--db-witness-max-bytes). */
  dbWitnessMaxBytes: number;
  /** Where larger witnesses go (--witness-dir); without it they are a 413. */
  witnessDir?: WitnessDir;
}

/** Serializes submissions (bounds and Idempotency-Keys are checked and the row written under it). */
export const SUBMIT_LOCK = 0x63757a6c;
/** The changes of state this store writes: a client's cancel, and giving up on a job pg-boss dead-lettered. */
const CANCEL = sqlTransition("cancel");
const ABANDON = sqlTransition("abandon");
/** A waiter re-reads its job at least this often (a NOTIFY can be lost while a listener reconnects). */
const POLL_MS = 1000;
/** How often the API fails dead-lettered jobs and forgets expired ones. */
const MAINTENANCE_MS = 2000;
/** The witness directory is swept for files left behind every this many maintenance rounds (30 s). */
const SWEEP_EVERY = 15;
/**
 * How long a submission or a cancel retries a transaction whose connection failed, before the
 * client gets 503 DATABASE_UNAVAILABLE: long enough for a connection that was cut while the
 * server stays up, short enough that a client is not held through an outage.
 */
const WRITE_RETRY_MS = 1500;

const VIEW_COLUMNS = `j.id, j.key_id, j.source, j.priority, j.state, j.created_at, j.started_at, j.finished_at, j.error, j.timings, j.witness_ms, j.progress,
  (SELECT coalesce(json_agg(json_build_object('batch', a.batch, 'size', a.size, 'worker', a.worker, 'outcome', coalesce(a.outcome, 'running'), 'error', a.error) ORDER BY a.attempt), '[]')
     FROM cuzk.attempts a WHERE a.job_id = j.id) AS attempts`;

interface JobRow {
  id: string;
  key_id: string;
  source: "wtns" | "input";
  priority: number;
  state: JobState;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  error: { code: string; message: string } | null;
  timings: JobView["timings"];
  witness_ms: number | null;
  progress: JobView["progress"] | null;
  attempts: Array<Attempt & { error: string | null }>;
}

const iso = (date: Date | null) => date?.toISOString();

/** Jobs in PostgreSQL. */
export class PgJobStore implements JobStore {
  readonly #options: PgJobStoreOptions;
  readonly #db: ClusterDb;
  readonly #waiters = new Map<string, Set<() => void>>();
  #listener: Listener | undefined;
  #maintenance: ReturnType<typeof setInterval> | undefined;
  #closing = false;
  #rounds = 0;

  private constructor(options: PgJobStoreOptions) {
    this.#options = options;
    this.#db = options.db;
  }

  /** Starts listening for changes and the maintenance timer. */
  static async open(options: PgJobStoreOptions): Promise<PgJobStore> {
    const store = new PgJobStore(options);
    // Waiters re-read their jobs once the listener is back: what changed while it was down sent
    // notifications nobody heard.
    store.#listener = await options.db.listen(JOB_CHANNEL, (id) => store.#wake(id), () => store.#wakeAll());
    store.#maintenance = setInterval(() => void store.#maintain().catch(() => {}), MAINTENANCE_MS);
    return store;
  }

  get closing(): boolean {
    return this.#closing;
  }

  /** Whether the API hears job changes by NOTIFY now (false while its connection reconnects). */
  get listening(): boolean {
    return this.#listener?.listening ?? false;
  }

  /** Registers the queue of a key (and applies the lease and retry settings to it). */
  async addKey(keyId: string): Promise<void> {
    await this.#db.ensureQueue(keyId, this.#options.queue);
  }

  #wake(id: string): void {
    for (const waiter of [...(this.#waiters.get(id) ?? [])]) waiter();
  }

  #wakeAll(): void {
    for (const id of [...this.#waiters.keys()]) this.#wake(id);
  }

  /** Resolves on a change of job `id`, after `ms`, when `signal` aborts, or when `stop` is called. */
  #changed(id: string, ms: number, signal?: AbortSignal): { done: Promise<void>; stop(): void } {
    let stop = () => {};
    const done = new Promise<void>((resolve) => {
      let set = this.#waiters.get(id);
      if (!set) this.#waiters.set(id, (set = new Set()));
      const finish = () => {
        clearTimeout(timer);
        set!.delete(finish);
        if (set!.size === 0) this.#waiters.delete(id);
        signal?.removeEventListener("abort", finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      set.add(finish);
      signal?.addEventListener("abort", finish);
      stop = finish;
    });
    return { done, stop };
  }

  #toView(row: JobRow, position: number | undefined): JobView {
    const timings = { ...row.timings };
    if (row.witness_ms !== null) timings.witnessMs = row.witness_ms;
    return {
      id: row.id,
      key: row.key_id,
      state: row.state,
      source: row.source,
      priority: row.priority,
      position,
      progress: row.state === "running" ? row.progress ?? undefined : undefined,
      createdAt: iso(row.created_at),
      startedAt: iso(row.started_at),
      finishedAt: iso(row.finished_at),
      timings,
      attempts: row.attempts.map(({ error, ...attempt }) => (error ? { ...attempt, error } : attempt)),
      error: row.error ?? undefined,
      result: row.state === "succeeded" ? `/v1/jobs/${row.id}/result` : undefined,
    };
  }

  async #row(id: string, client: pg.Pool | pg.PoolClient = this.#db.pool): Promise<JobRow> {
    const { rows } = await client.query(`SELECT ${VIEW_COLUMNS} FROM cuzk.jobs j WHERE j.id = $1`, [id]);
    if (rows.length === 0) throw new ServiceError(404, "UNKNOWN_JOB", `no job ${id} (finished jobs are kept ${this.#options.resultTtlS} s)`);
    return rows[0] as JobRow;
  }

  /** Jobs of the same key that a worker takes before this one (priority first, then age). */
  async #position(row: JobRow): Promise<number | undefined> {
    if (row.state !== "queued") return undefined;
    const { rows } = await this.#db.pool.query(
      `SELECT count(*)::int AS ahead FROM cuzk.jobs WHERE key_id = $1 AND state = 'queued' AND (priority > $2 OR (priority = $2 AND created_at < $3))`,
      [row.key_id, row.priority, row.created_at],
    );
    return rows[0].ahead as number;
  }

  async #viewOf(row: JobRow): Promise<JobView> {
    return this.#toView(row, await this.#position(row));
  }

  async view(id: string): Promise<JobView> {
    return this.#viewOf(await this.#row(id));
  }

  async replay(idempotencyKey: string, fingerprint: string, client: pg.Pool | pg.PoolClient = this.#db.pool): Promise<JobView | undefined> {
    const { rows } = await client.query("SELECT id, fingerprint FROM cuzk.jobs WHERE idempotency_key = $1", [idempotencyKey]);
    if (rows.length === 0) return undefined;
    if (rows[0].fingerprint !== fingerprint) {
      throw new ServiceError(
        422,
        "IDEMPOTENCY_KEY_REUSED",
        `Idempotency-Key ${JSON.stringify(idempotencyKey)} was used for a different request (job ${rows[0].id}); use a new key for a new request`,
        "header:Idempotency-Key",
      );
    }
    return this.#viewOf(await this.#row(rows[0].id, client));
  }

  async admissible(keyId: string, bytes = 0, client: pg.Pool | pg.PoolClient = this.#db.pool): Promise<void> {
    if (this.#closing) throw new ServiceError(503, "SHUTTING_DOWN", "the service is shutting down and accepts no new jobs", undefined, { headers: { "Retry-After": "5" } });
    const { rows } = await client.query(
      `SELECT count(*)::int AS total, (count(*) FILTER (WHERE key_id = $1))::int AS of_key, coalesce(sum(witness_bytes), 0)::float8 AS bytes
         FROM cuzk.jobs WHERE state = 'queued'`,
      [keyId],
    );
    const { total, of_key: ofKey, bytes: queuedBytes } = rows[0] as { total: number; of_key: number; bytes: number };
    const { queueCapacity, queueCapacityPerKey, queueBytes } = this.#options;
    const full = total >= queueCapacity
      ? `${total} jobs waiting`
      : ofKey >= queueCapacityPerKey
      ? `${ofKey} jobs of key ${keyId} waiting (--queue-size-per-key)`
      : total > 0 && queuedBytes + bytes > queueBytes
      ? `${queuedBytes} witness bytes waiting`
      : undefined;
    if (full) {
      this.#options.metrics.submissions.inc({ outcome: "rejected_full" });
      throw new ServiceError(429, "QUEUE_FULL", `the queue is full (${full}); retry later`, undefined, { headers: { "Retry-After": String(this.#options.cluster.retryAfterS(total)) } });
    }
  }

  async submit(submission: Submission): Promise<{ view: JobView; replayed: boolean }> {
    const bytes = submission.witness.byteLength;
    const { dbWitnessMaxBytes, witnessDir } = this.#options;
    if (bytes > dbWitnessMaxBytes && !witnessDir) {
      throw new ServiceError(
        413,
        "WITNESS_TOO_LARGE",
        `the witness has ${bytes} bytes; the PostgreSQL store keeps witnesses of at most ${dbWitnessMaxBytes} bytes in its rows (--db-witness-max-bytes); start the API and the workers with --witness-dir <a shared directory> to take larger ones`,
        "/witness",
      );
    }
    const queue = await this.#db.ensureQueue(submission.keyId, this.#options.queue);
    const id = randomUUID();
    // Written whole before the row that names it commits; removed again if the row is not written.
    const file = bytes > dbWitnessMaxBytes ? await witnessDir!.write(id, submission.witness) : null;
    const write = () =>
      this.#db.transaction(async (client, boss) => {
        await client.query("SELECT pg_advisory_xact_lock($1)", [SUBMIT_LOCK]);
        if (submission.idempotencyKey) {
          const earlier = await this.replay(submission.idempotencyKey, submission.fingerprint, client);
          if (earlier) return { view: earlier, replayed: true };
        }
        await this.admissible(submission.keyId, bytes, client);
        await client.query(
          `INSERT INTO cuzk.jobs (id, key_id, source, priority, state, idempotency_key, fingerprint, witness, witness_file, witness_bytes, witness_ms)
           VALUES ($1, $2, $3, $4, ${sqlState(INITIAL_STATE)}, $5, $6, $7, $8, $9, $10)`,
          [id, submission.keyId, submission.source, submission.priority, submission.idempotencyKey ?? null, submission.fingerprint, file ? null : submission.witness, file, bytes, submission.witnessMs ?? null],
        );
        await this.#db.boss.send(queue, { job: id, key: submission.keyId }, { id, priority: submission.priority, ...boss });
        await client.query("SELECT pg_notify($1, $2)", [QUEUED_CHANNEL, submission.keyId]);
        return { view: this.#toView(await this.#row(id, client), undefined), replayed: false };
      }, { retryForMs: WRITE_RETRY_MS });
    let outcome: { view: JobView; replayed: boolean };
    const deadline = performance.now() + WRITE_RETRY_MS;
    for (;;) {
      try {
        outcome = await write();
        break;
      } catch (error) {
        if (!(error instanceof DatabaseUnavailableError) || error.committed === "no") {
          if (file) await witnessDir!.remove(file);
          throw error;
        }
        // COMMIT was sent and no answer came. The job's id is ours, so whether it was accepted can
        // be read back once the database answers: if its row is there, it was; if not, the write
        // can run again. Until then the file stays (the sweep takes it if the row never was).
        const committed = await this.#exists(id).catch((check) => {
          if (isConnectionError(check)) return undefined;
          throw check;
        });
        if (committed === true) {
          outcome = { view: this.#toView(await this.#row(id), undefined), replayed: false };
          break;
        }
        if (committed === undefined || performance.now() > deadline) {
          throw databaseUnavailable(
            error,
            `the database connection was lost while job ${id} was being committed, and whether it was accepted cannot be told yet; ` +
              `retry with the same Idempotency-Key, which finds the job if it was (without one, a retry may queue it twice)`,
          );
        }
      }
    }
    if (file && outcome.replayed) await witnessDir!.remove(file);
    this.#options.metrics.submissions.inc({ outcome: outcome.replayed ? "replayed" : "accepted" });
    if (!outcome.replayed) {
      // The job is accepted whatever happens now: if the database went away since, the view read
      // in the transaction answers (202), rather than a 503 that would invite a second copy.
      const accepted = outcome.view;
      outcome.view = await this.view(accepted.id).catch((error) => {
        if (isConnectionError(error)) return accepted;
        throw error;
      });
    }
    return outcome;
  }

  /** Whether job `id` has a row (it was accepted, and not yet forgotten). */
  async #exists(id: string): Promise<boolean> {
    const { rows } = await this.#db.pool.query("SELECT 1 FROM cuzk.jobs WHERE id = $1", [id]);
    return rows.length > 0;
  }

  async list(filter: { state?: JobState; keyId?: string; limit: number }): Promise<JobListing> {
    const { rows } = await this.#db.pool.query(
      `SELECT ${VIEW_COLUMNS} FROM cuzk.jobs j WHERE ($1::text IS NULL OR j.state = $1) AND ($2::text IS NULL OR j.key_id = $2) ORDER BY j.created_at DESC, j.id LIMIT $3`,
      [filter.state ?? null, filter.keyId ?? null, filter.limit],
    );
    const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
    const { rows: byState } = await this.#db.pool.query("SELECT state, count(*)::int AS n FROM cuzk.jobs GROUP BY state");
    for (const { state, n } of byState) counts[state as JobState] = n;
    const jobs = (rows as JobRow[]).reverse().map((row) => this.#toView(row, undefined));
    return { jobs, queueDepth: counts.queued, counts };
  }

  async waitFinal(id: string, ms: number, signal?: AbortSignal): Promise<JobView> {
    const deadline = performance.now() + ms;
    for (;;) {
      // Listen first, then read: a change between the two still wakes us.
      const change = this.#changed(id, Math.max(0, Math.min(POLL_MS, deadline - performance.now())), signal);
      const row = await this.#row(id).catch((error) => {
        change.stop();
        throw error;
      });
      if (FINAL_STATES.has(row.state) || signal?.aborted || performance.now() >= deadline) {
        change.stop();
        return this.#viewOf(row);
      }
      await change.done;
    }
  }

  async watch(id: string, onView: (view: JobView) => void): Promise<() => void> {
    let stopped = false;
    let current = { stop() {} };
    const loop = async () => {
      while (!stopped) {
        const change = (current = this.#changed(id, POLL_MS));
        try {
          const view = await this.view(id);
          if (!stopped) onView(view);
          if (FINAL_STATES.has(view.state)) break;
        } catch (error) {
          // The database away: the stream stays open (its keep-alive comments go on) and reads
          // again; anything else (the job forgotten after its TTL) ends it.
          if (!isConnectionError(error)) break;
        }
        await change.done;
      }
      current.stop();
    };
    onView(await this.view(id));
    void loop();
    return () => {
      stopped = true;
      current.stop();
    };
  }

  async result(id: string): Promise<JobResult> {
    const { rows } = await this.#db.pool.query("UPDATE cuzk.jobs SET fetched_at = coalesce(fetched_at, now()) WHERE id = $1 RETURNING state, result, error", [id]);
    if (rows.length === 0) await this.#row(id); // the 404
    const { state, result, error } = rows[0] as { state: JobState; result: JobResult | null; error: JobView["error"] | null };
    if (state === "succeeded") return result!;
    throw finishedOrNot(id, state, error ?? undefined);
  }

  /**
   * Cancels a queued job, or a running one, at once: the row is final `cancelled` in this
   * transaction, whatever batch the job is in. A queued job's queue entry is cancelled with it. A
   * running job's entry stays with the worker that holds it, which hears of the cancel (NOTIFY
   * cuzk_cancel, and at each lease heartbeat: worker.ts), stops its library call when no job of
   * the call is still wanted, and settles the entry as ever (fenced) without writing over the
   * cancelled row: a proof of the job that still comes is dropped, the batch's other jobs keep theirs.
   */
  async cancel(id: string): Promise<JobView> {
    await this.#db.transaction(async (client, boss) => {
      const { rows } = await client.query("SELECT state, key_id FROM cuzk.jobs WHERE id = $1 FOR UPDATE", [id]);
      if (rows.length === 0) await this.#row(id, client);
      const { state, key_id: keyId } = rows[0] as { state: JobState; key_id: string };
      if (state === CANCEL.to) return;
      if (!allowed(state, "cancel")) throw new ServiceError(409, "JOB_FINISHED", `job ${id} already ${state}`);
      await client.query(
        `UPDATE cuzk.jobs SET state = ${CANCEL.sqlTo}, finished_at = now(), witness = NULL, progress = NULL, error = $2 WHERE id = $1 AND state IN (${CANCEL.sqlFrom})`,
        [id, { code: "CANCELLED", message: state === "queued" ? "cancelled by the client" : "cancelled by the client while a worker proved it (a proof of it that still comes is dropped)" }],
      );
      if (state === "queued") await this.#db.boss.cancel(await this.#db.ensureQueue(keyId), id, boss);
      else await client.query("SELECT pg_notify($1, $2)", [CANCEL_CHANNEL, id]);
      await client.query("SELECT pg_notify($1, $2)", [JOB_CHANNEL, id]);
      // Cancelling twice ends the same, so a COMMIT that went unanswered is simply tried again.
    }, { retryForMs: WRITE_RETRY_MS, idempotent: true });
    await this.#removeWitnessFiles();
    return this.view(id);
  }

  async activeJobs(keyId: string): Promise<number> {
    const { rows } = await this.#db.pool.query("SELECT count(*)::int AS n FROM cuzk.jobs WHERE key_id = $1 AND state IN ('queued', 'running')", [keyId]);
    return rows[0].n;
  }

  async queueDepth(): Promise<number> {
    const { rows } = await this.#db.pool.query("SELECT count(*)::int AS n FROM cuzk.jobs WHERE state = 'queued'");
    return rows[0].n;
  }

  refreshMetrics(): Promise<void> {
    return this.#options.cluster.refresh(this.#db.pool);
  }

  /**
   * Fails the jobs pg-boss dead-lettered (retries used up), forgets final jobs past the TTL, and
   * removes the witness files of final jobs (every SWEEP_EVERY rounds also any file a killed
   * process left behind).
   */
  async #maintain(): Promise<void> {
    const dead = await this.#db.boss.fetch<{ job: string }>(DEAD_LETTER_QUEUE, { batchSize: 100 });
    if (dead.length > 0) {
      const ids = dead.map((entry) => entry.data.job);
      const limit = this.#options.queue.retryLimit + 1;
      await this.#db.pool.query(
        `UPDATE cuzk.jobs SET state = ${ABANDON.sqlTo}, finished_at = now(), witness = NULL, progress = NULL,
           error = jsonb_build_object('code', 'RETRY_LIMIT', 'message', 'no worker finished the job in ' || $2::int || ' claims (each lease was lost: the worker died or stopped answering)')
         WHERE id = ANY($1::uuid[]) AND state IN (${ABANDON.sqlFrom})`,
        [ids, limit],
      );
      await this.#db.boss.complete(DEAD_LETTER_QUEUE, dead.map((entry) => entry.id));
      for (const id of ids) await this.#db.pool.query("SELECT pg_notify($1, $2)", [JOB_CHANNEL, id]);
    }
    await this.#db.pool.query("DELETE FROM cuzk.jobs WHERE finished_at < now() - make_interval(secs => $1)", [this.#options.resultTtlS]);
    await this.#removeWitnessFiles();
    if (this.#options.witnessDir && ++this.#rounds % SWEEP_EVERY === 0) {
      await this.#options.witnessDir.sweep(async (ids) => {
        const { rows } = await this.#db.pool.query("SELECT id FROM cuzk.jobs WHERE id = ANY($1::uuid[]) AND state IN ('queued', 'running')", [ids]);
        return new Set(rows.map((row) => row.id as string));
      });
    }
  }

  /**
   * Removes the witness files of final jobs, whoever made them final (a worker on a host without
   * the directory too), and forgets the names; a file whose removal a crash interrupted is swept.
   */
  async #removeWitnessFiles(): Promise<void> {
    const witnessDir = this.#options.witnessDir;
    if (!witnessDir) return;
    const { rows } = await this.#db.pool.query(
      `WITH final AS (
         SELECT id, witness_file FROM cuzk.jobs WHERE witness_file IS NOT NULL AND state IN ('succeeded', 'failed', 'cancelled') LIMIT 1000 FOR UPDATE SKIP LOCKED)
       UPDATE cuzk.jobs j SET witness_file = NULL FROM final WHERE j.id = final.id RETURNING final.witness_file`,
    );
    for (const row of rows) await witnessDir.remove(row.witness_file as string);
  }

  /** Stops taking jobs and closes the connections (jobs stay in the database). */
  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#maintenance);
    for (const id of [...this.#waiters.keys()]) this.#wake(id); // waiters answer with what they have
    await this.#removeWitnessFiles().catch(() => {}); // those of jobs that ended since the last round
    await this.#listener?.close();
  }
}
