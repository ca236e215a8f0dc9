/**
 * @module
 * The database both roles share: a connection pool, pg-boss (the job queue: one queue per key,
 * leases, retries, priorities, the attempt fence) and cuzk's own tables beside it (the job records
 * with their witnesses and results, the attempts, the workers), created at start-up by idempotent
 * migrations. See docs/service.md, "Several hosts", for why the work is split this way.
 *
 * Tables (schema `cuzk`):
 * - `jobs`: one row per accepted job: key, state as clients see it, priority, Idempotency-Key
 *   (unique) and request fingerprint, the raw witness (bytea, dropped once final; or the name of
 *   its file in the shared witness directory), result, error, timings, the attempt that holds it
 *   and its worker, the running batch's progress.
 * - `attempts`: one row per claim of a job by a worker (attempt = pg-boss's retryCount + 1) and how
 *   it ended: proved, failed, lease_lost (a settle refused by the fence), cancelled (the job was
 *   cancelled while the worker held it: its proof, if any, was dropped), or none yet (running, or
 *   the worker died holding it).
 * - `workers`: one row per worker process, its keys and last heartbeat.
 */
import pg from "pg";
import { PgBoss } from "pg-boss";
import type { ConnectionOptions } from "pg-boss";

/** The pg-boss queue of a key's jobs. */
export const queueName = (keyId: string) => `cuzk.key.${keyId}`;
/** Where pg-boss moves a job whose retries are used up; the API marks it failed (RETRY_LIMIT). */
export const DEAD_LETTER_QUEUE = "cuzk.dead";
/** NOTIFY channel: a job's row changed (payload: its id). */
export const JOB_CHANNEL = "cuzk_job";
/** NOTIFY channel: a job was queued (payload: its key id), so idle workers wake. */
export const QUEUED_CHANNEL = "cuzk_queued";
/** NOTIFY channel: a running job was cancelled (payload: its id), so the worker holding it stops its call. */
export const CANCEL_CHANNEL = "cuzk_cancel";
/** How often workers record that they are alive; three missed beats and they are counted dead. */
export const WORKER_BEAT_MS = 2000;

/** The migrations, in order; each runs once (cuzk.migrations remembers which ran). */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE cuzk.jobs (
     id uuid PRIMARY KEY,
     key_id text NOT NULL,
     source text NOT NULL CHECK (source IN ('wtns', 'input')),
     priority integer NOT NULL DEFAULT 0,
     state text NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
     idempotency_key text UNIQUE,
     fingerprint text NOT NULL,
     witness bytea,
     witness_bytes integer NOT NULL,
     witness_ms double precision,
     created_at timestamptz NOT NULL DEFAULT now(),
     started_at timestamptz,
     finished_at timestamptz,
     fetched_at timestamptz,
     attempt integer NOT NULL DEFAULT 0,
     worker text,
     result jsonb,
     error jsonb,
     timings jsonb NOT NULL DEFAULT '{}'
   );
   CREATE INDEX jobs_active ON cuzk.jobs (key_id, state) WHERE state IN ('queued', 'running');
   CREATE INDEX jobs_finished ON cuzk.jobs (finished_at) WHERE finished_at IS NOT NULL;
   CREATE INDEX jobs_created ON cuzk.jobs (created_at);
   CREATE TABLE cuzk.attempts (
     job_id uuid NOT NULL REFERENCES cuzk.jobs (id) ON DELETE CASCADE,
     attempt integer NOT NULL,
     worker text NOT NULL,
     batch text NOT NULL,
     size integer NOT NULL,
     claimed_at timestamptz NOT NULL DEFAULT now(),
     settled_at timestamptz,
     outcome text CHECK (outcome IN ('proved', 'failed', 'lease_lost')),
     error text,
     PRIMARY KEY (job_id, attempt)
   );
   CREATE TABLE cuzk.workers (
     id text PRIMARY KEY,
     host text NOT NULL,
     pid integer NOT NULL,
     keys text[] NOT NULL,
     backend text NOT NULL,
     batch_size integer NOT NULL,
     started_at timestamptz NOT NULL DEFAULT now(),
     seen_at timestamptz NOT NULL DEFAULT now(),
     stopped_at timestamptz
   );`,
  // Issue 15's gaps: a running job's progress, cancelling it, witnesses in a shared directory.
  `ALTER TABLE cuzk.jobs ADD COLUMN IF NOT EXISTS progress jsonb, ADD COLUMN IF NOT EXISTS witness_file text,
     ALTER COLUMN witness_bytes TYPE bigint;
   CREATE INDEX IF NOT EXISTS jobs_witness_files ON cuzk.jobs (id) WHERE witness_file IS NOT NULL;
   ALTER TABLE cuzk.attempts DROP CONSTRAINT IF EXISTS attempts_outcome_check,
     ADD CONSTRAINT attempts_outcome_check CHECK (outcome IN ('proved', 'failed', 'lease_lost', 'cancelled'));`,
];

/** A lock id of our own for migrations (pg_advisory_xact_lock). */
const MIGRATION_LOCK = 0x63757a6b; // "cuzk"

/** Applies the migrations not yet applied; safe to run from every process at once. */
async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query("CREATE SCHEMA IF NOT EXISTS cuzk");
    await client.query("CREATE TABLE IF NOT EXISTS cuzk.migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
    const { rows } = await client.query("SELECT coalesce(max(version), 0) AS version FROM cuzk.migrations");
    for (let version = Number(rows[0].version) + 1; version <= MIGRATIONS.length; version++) {
      await client.query(MIGRATIONS[version - 1]);
      await client.query("INSERT INTO cuzk.migrations (version) VALUES ($1)", [version]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Queue settings the API applies to every key's queue. */
export interface QueueSettings {
  /** pg-boss heartbeat: a claim not touched for this long is lost and the job retried. */
  leaseS: number;
  /** Claims after the first before a job fails with RETRY_LIMIT. */
  retryLimit: number;
  /** How long pg-boss keeps finished queue entries (the job rows have their own TTL). */
  retentionS: number;
}

/** A connected pool and a started pg-boss. */
export class ClusterDb {
  readonly #queues = new Set<string>();
  private constructor(readonly pool: pg.Pool, readonly boss: PgBoss, readonly url: string) {}

  /**
   * Connects, installs or upgrades pg-boss's schema and ours, and starts pg-boss's supervisor
   * (it expires lost leases; every process runs one, pg-boss lets one at a time do the work).
   */
  static async open(url: string, options: { poolSize: number; superviseS: number; leaseS: number }): Promise<ClusterDb> {
    // A process frozen inside a transaction (SIGSTOP, a stalled host) would hold its row locks, and
    // the supervisor could not hand its jobs to others: the server ends such a transaction after a lease.
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize, idle_in_transaction_session_timeout: options.leaseS * 1000 });
    pool.on("error", () => {}); // an idle client's connection dropped: the next query reconnects
    try {
      await migrate(pool);
      const boss = new PgBoss({
        connectionString: url,
        max: 4,
        superviseIntervalSeconds: options.superviseS,
        monitorIntervalSeconds: options.superviseS,
        openTelemetry: { enabled: false },
      } as ConstructorParameters<typeof PgBoss>[0]);
      boss.on("error", () => {}); // its maintenance retries on the next interval
      await boss.start();
      if (!(await boss.getQueue(DEAD_LETTER_QUEUE))) await boss.createQueue(DEAD_LETTER_QUEUE).catch(() => {});
      return new ClusterDb(pool, boss, url);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
  }

  /** Creates (or, with `settings`, updates) the queue of `keyId`. Concurrent creators are fine. */
  async ensureQueue(keyId: string, settings?: QueueSettings): Promise<string> {
    const name = queueName(keyId);
    if (this.#queues.has(name)) return name;
    const options = settings && { heartbeatSeconds: settings.leaseS, retryLimit: settings.retryLimit, deleteAfterSeconds: settings.retentionS, deadLetter: DEAD_LETTER_QUEUE };
    if (!(await this.boss.getQueue(name))) {
      await this.boss.createQueue(name, options ?? { deadLetter: DEAD_LETTER_QUEUE }).catch(async (error) => {
        if (!(await this.boss.getQueue(name))) throw error; // not a lost race with another process
      });
    }
    if (options) await this.boss.updateQueue(name, { heartbeatSeconds: options.heartbeatSeconds, retryLimit: options.retryLimit, deleteAfterSeconds: options.deleteAfterSeconds });
    this.#queues.add(name);
    return name;
  }

  /** Runs `work` in one transaction; `boss` passes the same connection to pg-boss's calls. */
  async transaction<T>(work: (client: pg.PoolClient, boss: ConnectionOptions) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      const result = await work(client, { db: { executeSql: (text: string, values?: unknown[]) => client.query(text, values as unknown[]) } });
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** A dedicated connection that calls `onPayload` for each NOTIFY on `channel` (reconnects if dropped). */
  async listen(channel: string, onPayload: (payload: string) => void): Promise<{ close(): Promise<void> }> {
    let closed = false;
    let client: pg.Client | undefined;
    const connect = async (): Promise<void> => {
      const next = new pg.Client({ connectionString: this.url });
      next.on("notification", (message) => message.payload !== undefined && onPayload(message.payload));
      next.on("error", () => {
        if (closed) return;
        client = undefined;
        setTimeout(() => void connect().catch(() => {}), 1000);
      });
      await next.connect();
      await next.query(`LISTEN ${channel}`);
      client = next;
    };
    await connect();
    return {
      close: async () => {
        closed = true;
        await client?.end().catch(() => {});
      },
    };
  }

  /** Stops pg-boss and closes the pool. */
  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, close: true }).catch(() => {});
    await this.pool.end().catch(() => {});
  }
}
