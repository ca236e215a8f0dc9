/**
 * @module
 * The cluster's gauges on the API role's /metrics, read from the database before each scrape
 * (refresh) so that they cover every worker: queue depth per key, jobs per key and state, workers
 * alive, claims per outcome (lease_lost shows results refused by the fence; a claim without an
 * outcome and a dead worker is a batch a SIGKILL interrupted) and proofs per second over the last
 * minute.
 */
import type pg from "pg";
import { WORKER_BEAT_MS } from "./cluster_db.ts";
import { Gauge } from "./metrics.ts";
import type { Registry } from "./metrics.ts";

type Samples = Array<[Record<string, string>, number]>;

/** Gauges over the whole cluster, cached between scrapes. */
export class ClusterMetrics {
  #queueDepth: Samples = [];
  #jobs: Samples = [];
  #attempts: Samples = [];
  #workersAlive = 0;
  #proofsPerSecond = 0;

  constructor(registry: Registry) {
    registry.add(new Gauge("cuzk_cluster_queue_depth", "Jobs waiting to run, by key (every API and worker of the database)", () => this.#queueDepth));
    registry.add(new Gauge("cuzk_cluster_jobs", "Retained jobs by key and state", () => this.#jobs));
    registry.add(new Gauge("cuzk_cluster_attempts", "Claims of retained jobs by workers, by outcome (running: not settled yet, or its worker died)", () => this.#attempts));
    registry.add(new Gauge("cuzk_cluster_workers_alive", "Worker processes that sent a heartbeat within the last three beats and did not stop", () => [[{}, this.#workersAlive]]));
    registry.add(new Gauge("cuzk_cluster_proofs_per_second", "Jobs that succeeded in the last 60 s, per second", () => [[{}, this.#proofsPerSecond]]));
  }

  /** About how long until a queue slot frees: the queue ahead over the recent rate, 1-60 s. */
  retryAfterS(queued: number): number {
    const rate = this.#proofsPerSecond;
    return Math.min(60, Math.max(1, rate > 0 ? Math.ceil(Math.min(queued, 64) / rate) : 5));
  }

  /** Reads the gauges' values from the database. */
  async refresh(pool: pg.Pool): Promise<void> {
    const [byKey, attempts, workers, rate] = await Promise.all([
      pool.query("SELECT key_id, state, count(*)::int AS n FROM cuzk.jobs GROUP BY key_id, state ORDER BY key_id, state"),
      pool.query("SELECT coalesce(outcome, 'running') AS outcome, count(*)::int AS n FROM cuzk.attempts GROUP BY 1 ORDER BY 1"),
      pool.query("SELECT count(*)::int AS n FROM cuzk.workers WHERE stopped_at IS NULL AND seen_at > now() - make_interval(secs => $1)", [(3 * WORKER_BEAT_MS) / 1000]),
      pool.query("SELECT count(*)::int AS n FROM cuzk.jobs WHERE state = 'succeeded' AND finished_at > now() - interval '60 seconds'"),
    ]);
    this.#jobs = byKey.rows.map((r) => [{ key: r.key_id, state: r.state }, r.n]);
    // Every key with retained jobs gets a depth, 0 included, so a drained queue reads 0 rather than nothing.
    const keys = [...new Set(byKey.rows.map((r) => r.key_id as string))];
    this.#queueDepth = keys.map((key) => [{ key }, byKey.rows.find((r) => r.key_id === key && r.state === "queued")?.n ?? 0]);
    this.#attempts = attempts.rows.map((r) => [{ outcome: r.outcome }, r.n]);
    this.#workersAlive = workers.rows[0].n;
    this.#proofsPerSecond = rate.rows[0].n / 60;
  }
}
