/**
 * @module
 * How a batch of jobs is proved, the same in one process (scheduler.ts) and in a worker
 * (worker.ts): one library call for all of them; when that call fails and held more than one
 * job, each job again in a call of its own, so that a witness the library refuses (well-formed,
 * but not satisfying the constraints) fails only its own job and the others get their proofs. The
 * library fails a whole call for one bad witness, which is why the fallback exists at all.
 *
 * A call that ends CANCELLED is not retried: its cancel flag is set only when nobody wants its
 * proofs any more, so its jobs end with that error. The caller decides what a call is (its
 * signal, its progress, its witnesses) and what an outcome means for its jobs (memory: settle
 * each as its call ends; PostgreSQL: one settle transaction at the end).
 */
import { CuzkError } from "../mod.ts";
import type { ProofResult } from "../mod.ts";

/** How one library call ended, for its jobs' attempts. */
export type CallOutcome = "proved" | "batch_failed" | "failed" | "cancelled";

/** How one job ended: its proof, or the error of the call it failed in. */
export interface JobOutcome<J> {
  job: J;
  result?: ProofResult;
  error?: unknown;
  /** Duration of the call the outcome came from (ms). */
  ms: number;
  /** Jobs in that call. */
  size: number;
}

/** One library call as it ended. */
export interface CallReport<J> {
  jobs: readonly J[];
  /** A call of one job after the batch call failed. */
  fallback: boolean;
  outcome: CallOutcome;
  error?: unknown;
  ms: number;
  /** The jobs this call decided (all of its jobs, except after a failed batch call: they are proved again one by one). */
  decided: JobOutcome<J>[];
}

/** Proves `jobs` in one library call; `fallback` is true for the one-by-one calls after a failed batch. */
export type ProveCall<J> = (jobs: readonly J[], fallback: boolean) => Promise<readonly ProofResult[]>;

/** Whether a library call ended because its cancel flag was set. */
export const isCancelled = (error: unknown): boolean => error instanceof CuzkError && error.code === "CANCELLED";

/**
 * Proves `jobs` with `call`, falling back to one call per job when the batch call fails for any
 * reason but a cancel. `onCall` hears of each call as it ends, with the jobs it decided. Resolves
 * with every job's outcome, in the order of `jobs`; never rejects for a call's failure (a failure
 * is an outcome).
 */
export async function proveJobs<J>(jobs: readonly J[], call: ProveCall<J>, onCall?: (report: CallReport<J>) => void): Promise<JobOutcome<J>[]> {
  const outcomes: Array<JobOutcome<J> | undefined> = new Array(jobs.length);
  /** One call over the jobs at `indices`; false when it was a batch call that failed. */
  const run = async (indices: readonly number[], fallback: boolean): Promise<boolean> => {
    const group = indices.map((i) => jobs[i]);
    const started = performance.now();
    let report: CallReport<J>;
    try {
      const results = await call(group, fallback);
      if (results.length !== group.length) throw new CuzkError("INTERNAL", `a call of ${group.length} witnesses returned ${results.length} proofs`);
      const ms = performance.now() - started;
      report = { jobs: group, fallback, outcome: "proved", ms, decided: group.map((job, k) => ({ job, result: results[k], ms, size: group.length })) };
    } catch (error) {
      const ms = performance.now() - started;
      const outcome: CallOutcome = isCancelled(error) ? "cancelled" : group.length > 1 ? "batch_failed" : "failed";
      const decided = outcome === "batch_failed" ? [] : group.map((job) => ({ job, error, ms, size: group.length }));
      report = { jobs: group, fallback, outcome, error, ms, decided };
    }
    report.decided.forEach((outcome, k) => (outcomes[indices[k]] = outcome));
    onCall?.(report);
    return report.outcome !== "batch_failed";
  };
  if (jobs.length === 0) return [];
  const all = jobs.map((_, i) => i);
  if (!(await run(all, false))) {
    for (const i of all) await run([i], true);
  }
  return outcomes as JobOutcome<J>[];
}
