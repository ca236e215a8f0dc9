/**
 * @module
 * Graceful shutdown on SIGTERM or SIGINT: new jobs are refused (503), queued jobs keep being
 * proved for up to the drain time, those still queued then are cancelled, the running library
 * call is waited for, and one line reports how every job that was active ended. The server then
 * keeps answering (new jobs still 503) until every proof that succeeded during the drain, or in
 * the grace period before the signal, has been fetched by its client, or the grace period ends
 * after the drain: a client that saw "succeeded" must still find its proof. The process exits 0
 * once the library's handles are closed.
 */
import process from "node:process";
import type { Context } from "../mod.ts";
import type { InputWitnesses } from "./inputs.ts";
import type { KeyRegistry } from "./keys.ts";
import { logEvent } from "./log.ts";
import type { Scheduler } from "./scheduler.ts";
import type { BunServer } from "./server.ts";

/** What a shutdown stops, in order. */
export interface ShutdownParts {
  scheduler: Scheduler;
  server: BunServer;
  inputs: InputWitnesses;
  keys: KeyRegistry;
  contexts: Context[];
  /** Seconds to keep proving queued jobs. */
  drainS: number;
  /** Seconds, after the drain, that results not yet fetched stay retrievable. */
  resultGraceS: number;
}

/** How long waiting clients have to read the final states before connections are closed. */
const CLIENT_GRACE_MS = 2000;

/** Installs the SIGTERM and SIGINT handlers (a second signal during a shutdown is ignored). */
export function shutdownOnSignals(parts: ShutdownParts): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const { scheduler, server } = parts;
    const graceMs = parts.resultGraceS * 1000;
    const signalledAt = Date.now();
    logEvent("shutdown_started", { signal, queued: scheduler.queueDepth, counts: scheduler.countByState(), drainS: parts.drainS });
    const report = await scheduler.close(parts.drainS * 1000);
    logEvent("shutdown", {
      signal,
      finished: report.succeeded.length,
      failed: report.failed.length,
      cancelled: report.cancelled.length,
      finishedJobs: report.succeeded,
      failedJobs: report.failed,
      cancelledJobs: report.cancelled,
    });
    const graceStarted = performance.now();
    // Proofs of the drain and those finished shortly before the signal, whose clients may be on their way.
    const recent = scheduler.list({ state: "succeeded" }).filter((job) => job.finishedAt! >= signalledAt - graceMs).map((job) => job.id);
    const unfetched = await scheduler.awaitFetched(recent, graceMs);
    logEvent("results_fetched", {
      fetched: recent.length - unfetched.length,
      unfetched: unfetched.length,
      unfetchedJobs: unfetched,
      waitedMs: Math.round(performance.now() - graceStarted),
      graceS: parts.resultGraceS,
    });
    // Let responses in flight finish, then close what is left.
    await Promise.race([server.stop(false), new Promise((resolve) => setTimeout(resolve, CLIENT_GRACE_MS))]);
    await server.stop(true);
    parts.inputs.close();
    parts.keys.closeAll();
    for (const c of parts.contexts) c.close();
    logEvent("exit", { code: 0 });
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
