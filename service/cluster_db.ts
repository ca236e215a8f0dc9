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
import { backoffMs, DatabaseUnavailableError, isConnectionError } from "./db_errors.ts";
import { logEvent } from "./log.ts";

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
  // A running job's progress, cancelling it, witnesses in a shared directory.
  `ALTER TABLE cuzk.jobs ADD COLUMN IF NOT EXISTS progress jsonb, ADD COLUMN IF NOT EXISTS witness_file text,
     ALTER COLUMN witness_bytes TYPE bigint;
   CREATE INDEX IF NOT EXISTS jobs_witness_files ON cuzk.jobs (id) WHERE witness_file IS NOT NULL;
   ALTER TABLE cuzk.attempts DROP CONSTRAINT IF EXISTS attempts_outcome_check,
     ADD CONSTRAINT attempts_outcome_check CHECK (outcome IN ('proved', 'failed', 'lease_lost', 'cancelled'));`,
];

/** A lock id of our own for migrations (pg_advisory_xact_lock). */
const MIGRATION_LOCK = 0x63757a6b; // "cuzk"

/**
 * A client of `pool` for a series of statements, with an 'error' listener for as long as it is out:
 * pg-pool takes its own listener off a checked-out client, and a connection that drops then
 * ('Connection terminated unexpectedly', a fast shutdown's 57P01) emits 'error' with nobody
 * listening, which ends the process. `lost` is that error (the statement in flight rejects with it
 * too); `release` destroys a client that failed instead of returning it to the pool.
 */
async function checkout(pool: pg.Pool): Promise<{ client: pg.PoolClient; lost(): unknown; release(error?: unknown): void }> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw isConnectionError(error) ? new DatabaseUnavailableError(error) : error;
  }
  let lost: unknown;
  const onError = (error: unknown) => {
    lost ??= error;
  };
  client.on("error", onError);
  let released = false;
  return {
    client,
    lost: () => lost,
    release(error?: unknown) {
      if (released) return;
      released = true;
      const failed = error ?? lost;
      client.release(failed === undefined ? undefined : failed instanceof Error ? failed : new Error(String(failed)));
      client.removeListener("error", onError);
    },
  };
}

/** Applies the migrations not yet applied; safe to run from every process at once. */
async function migrate(pool: pg.Pool): Promise<void> {
  const { client, lost, release } = await checkout(pool);
  let failure: unknown;
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
    failure = lost();
    if (failure === undefined) await client.query("ROLLBACK").catch((rollback) => (failure = rollback));
    throw failure !== undefined && isConnectionError(failure) ? new DatabaseUnavailableError(failure) : error;
  } finally {
    release(failure);
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

/** What a transaction may do when its connection fails. */
export interface TransactionOptions {
  /**
   * How long (ms) to keep retrying, with backoff, a transaction whose connection failed before
   * COMMIT was sent: nothing of it was written, so running it again is safe. Default 0 (no retry).
   */
  retryForMs?: number;
  /** The work may run twice harmlessly: a transaction whose COMMIT went unanswered is retried too. */
  idempotent?: boolean;
}

/** A LISTEN connection that comes back by itself. */
export interface Listener {
  /** Whether the connection is up and LISTENing now (false while it reconnects). */
  readonly listening: boolean;
  close(): Promise<void>;
}

/** A lost LISTEN connection is retried after 250 ms, doubling to at most 5 s, until it is back or closed. */
const LISTEN_RETRY_MIN_MS = 250;
const LISTEN_RETRY_MAX_MS = 5000;
/**
 * A listening connection repeats its LISTEN this often (a no-op for the server) and is dropped and
 * reconnected if that gets no answer in time: a connection cut without a FIN or RST (a host or
 * network lost) would otherwise wait for TCP keepalive, minutes. Repeating the LISTEN rather than
 * another query keeps the connection's entry in pg_stat_activity reading `LISTEN ...`.
 */
const LISTEN_CHECK_MS = 10_000;
const LISTEN_CHECK_TIMEOUT_MS = 5000;
/** A connection attempt that gets no answer in this long fails (and is retried) instead of hanging. */
const CONNECT_TIMEOUT_MS = 5000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const messageOf = (error: unknown) => String((error as Error)?.message ?? error);

/** A connected pool and a started pg-boss. */
export class ClusterDb {
  readonly #queues = new Set<string>();
  readonly pool: pg.Pool;
  readonly boss: PgBoss;
  readonly url: string;
  /** This process's connections' name in pg_stat_activity. */
  readonly applicationName: string;

  // Fields assigned by hand, not as parameter properties: Node's type stripping refuses those, and
  // tests import the service's modules under Node.
  private constructor(pool: pg.Pool, boss: PgBoss, url: string, applicationName: string) {
    this.pool = pool;
    this.boss = boss;
    this.url = url;
    this.applicationName = applicationName;
  }

  /**
   * Connects, installs or upgrades pg-boss's schema and ours, and starts pg-boss's supervisor
   * (it expires lost leases; every process runs one, pg-boss lets one at a time do the work).
   * `applicationName` names this process's connections in pg_stat_activity.
   */
  static async open(url: string, options: { poolSize: number; superviseS: number; leaseS: number; applicationName?: string }): Promise<ClusterDb> {
    const applicationName = (options.applicationName ?? "cuzk").slice(0, 40);
    // A process frozen inside a transaction (SIGSTOP, a stalled host) would hold its row locks, and
    // the supervisor could not hand its jobs to others: the server ends such a transaction after a lease.
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize,
      idle_in_transaction_session_timeout: options.leaseS * 1000,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      application_name: applicationName,
    });
    // An idle client's connection dropped: pg-pool removes it, and the next checkout connects anew.
    pool.on("error", () => {});
    try {
      await migrate(pool);
      const boss = new PgBoss({
        connectionString: url,
        max: 4,
        superviseIntervalSeconds: options.superviseS,
        monitorIntervalSeconds: options.superviseS,
        openTelemetry: { enabled: false },
        application_name: `${applicationName} pg-boss`,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      } as ConstructorParameters<typeof PgBoss>[0]);
      // pg-boss keeps an error listener on its own clients and retries its maintenance on the next
      // interval; what it reports here is that, not something to act on.
      boss.on("error", () => {});
      await boss.start();
      if (!(await boss.getQueue(DEAD_LETTER_QUEUE))) await boss.createQueue(DEAD_LETTER_QUEUE).catch(() => {});
      return new ClusterDb(pool, boss, url, applicationName);
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

  /**
   * Runs `work` in one transaction; `boss` passes the same connection to pg-boss's calls. A lost
   * or refused connection rejects with DatabaseUnavailableError, whose `committed` says whether
   * the transaction may have committed ("unknown": COMMIT was sent and no answer came); see
   * TransactionOptions for the retries. Other errors roll back and reject as they are.
   */
  async transaction<T>(work: (client: pg.PoolClient, boss: ConnectionOptions) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const deadline = performance.now() + (options.retryForMs ?? 0);
    for (let failures = 1; ; failures++) {
      try {
        return await this.#transactionOnce(work);
      } catch (error) {
        const again = error instanceof DatabaseUnavailableError && (error.committed === "no" || options.idempotent === true);
        const wait = backoffMs(failures, 1000, 100);
        if (!again || performance.now() + wait > deadline) throw error;
        await sleep(wait);
      }
    }
  }

  async #transactionOnce<T>(work: (client: pg.PoolClient, boss: ConnectionOptions) => Promise<T>): Promise<T> {
    const { client, lost, release } = await checkout(this.pool);
    let commitSent = false;
    let failure: unknown;
    try {
      await client.query("BEGIN");
      const result = await work(client, { db: { executeSql: (text: string, values?: unknown[]) => client.query(text, values as unknown[]) } });
      if (lost() !== undefined) throw lost(); // gone before COMMIT: certainly not committed
      commitSent = true;
      await client.query("COMMIT");
      return result;
    } catch (error) {
      failure = lost() ?? (isConnectionError(error) ? error : undefined);
      // A COMMIT the server refused (serialization, a deferred constraint) has rolled back already.
      if (failure === undefined && !commitSent) await client.query("ROLLBACK").catch((rollback) => (failure = rollback));
      if (failure !== undefined && isConnectionError(failure)) throw new DatabaseUnavailableError(failure, commitSent ? "unknown" : "no");
      throw error;
    } finally {
      release(failure);
    }
  }

  /**
   * A dedicated connection that calls `onPayload` for each NOTIFY on `channel`. When it drops it
   * is reconnected with backoff (250 ms doubling to 5 s) until it is back or closed, and LISTENs
   * again; then `onRestored` runs, for the caller to look for what it missed meanwhile (a NOTIFY
   * sent while nobody listened is gone). The first connection must succeed.
   */
  async listen(channel: string, onPayload: (payload: string) => void, onRestored: () => void = () => {}): Promise<Listener> {
    let closed = false;
    let client: pg.Client | undefined; // connected and listening
    let connecting: pg.Client | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let check: ReturnType<typeof setInterval> | undefined;
    let failures = 0;
    let lostAt: number | undefined;

    const schedule = () => {
      if (closed || retry) return;
      failures++;
      retry = setTimeout(() => {
        retry = undefined;
        connect().catch(() => schedule());
      }, backoffMs(failures, LISTEN_RETRY_MAX_MS, LISTEN_RETRY_MIN_MS));
    };
    const lose = (target: pg.Client, error: unknown) => {
      if (closed || client !== target) return;
      client = undefined;
      clearInterval(check);
      target.removeAllListeners("notification");
      void target.end().catch(() => {});
      lostAt = performance.now();
      logEvent("listen_lost", { channel, name: this.applicationName, error: messageOf(error) });
      schedule();
    };
    const verify = async (target: pg.Client) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await Promise.race([
          target.query(`LISTEN ${channel}`),
          new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`LISTEN ${channel} got no answer in ${LISTEN_CHECK_TIMEOUT_MS} ms`)), LISTEN_CHECK_TIMEOUT_MS))),
        ]);
      } catch (error) {
        lose(target, error);
      } finally {
        clearTimeout(timer);
      }
    };
    const connect = async () => {
      if (closed) return;
      const next = new pg.Client({ connectionString: this.url, keepAlive: true, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: `${this.applicationName} listen` });
      // Never without a listener: an 'error' with none is an uncaught exception. A client that
      // errored or ended is done with (lose ignores one that is not the current client).
      next.on("error", (error) => lose(next, error));
      next.on("end", () => lose(next, new Error("the connection ended")));
      next.on("notification", (message) => message.payload !== undefined && onPayload(message.payload));
      connecting = next;
      try {
        await next.connect();
        await next.query(`LISTEN ${channel}`);
      } catch (error) {
        next.removeAllListeners("notification");
        void next.end().catch(() => {});
        throw error;
      } finally {
        if (connecting === next) connecting = undefined;
      }
      if (closed) {
        void next.end().catch(() => {});
        return;
      }
      client = next;
      failures = 0;
      check = setInterval(() => void verify(next), LISTEN_CHECK_MS);
      if (lostAt !== undefined) {
        logEvent("listen_restored", { channel, name: this.applicationName, downMs: Math.round(performance.now() - lostAt) });
        lostAt = undefined;
        onRestored();
      }
    };
    await connect();
    return {
      get listening() {
        return client !== undefined;
      },
      close: async () => {
        closed = true;
        clearTimeout(retry);
        clearInterval(check);
        const open = [client, connecting].filter((c): c is pg.Client => c !== undefined);
        client = connecting = undefined;
        // end() waits for the server's goodbye, which a dead connection never sends.
        await Promise.all(open.map((c) => Promise.race([c.end().catch(() => {}), sleep(1000)])));
      },
    };
  }

  /** Stops pg-boss and closes the pool. */
  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, close: true }).catch(() => {});
    await this.pool.end().catch(() => {});
  }
}
