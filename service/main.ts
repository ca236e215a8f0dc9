#!/usr/bin/env bun
/**
 * @module
 * Entry point of the proving service (Bun only: it serves with `Bun.serve`):
 *
 *   bun run serve -- --keys-dir tests/fixtures --preload bn254/mulchain_8 --port 8080
 *   bun service/main.ts --help
 *
 * Opens the library and one context (one device), registers the preloaded keys, starts the
 * scheduler and the HTTP server, and prints one JSON line per event on stdout ("listening",
 * "key_registered", "shutdown_started", "shutdown"). On SIGTERM or SIGINT it stops taking jobs,
 * proves what is queued for up to --drain-s seconds, cancels the rest, and prints which jobs
 * finished, failed or were cancelled before exiting.
 */
import process from "node:process";
import { Context, Library } from "../mod.ts";
import { ConfigError, loadConfig, usage } from "./config.ts";
import type { ServiceConfig } from "./config.ts";
import { InputWitnesses } from "./inputs.ts";
import { defaultKeyId, KeyRegistry } from "./keys.ts";
import { Gauge, ServiceMetrics } from "./metrics.ts";
import { JOB_STATES, Scheduler } from "./scheduler.ts";
import { serveOptions } from "./server.ts";
import type { BunServer } from "./server.ts";

interface BunGlobal {
  serve(options: ReturnType<typeof serveOptions>): BunServer;
}

const log = (event: string, fields: Record<string, unknown> = {}) => console.log(JSON.stringify({ time: new Date().toISOString(), event, ...fields }));

async function main(): Promise<void> {
  const bun = (globalThis as { Bun?: BunGlobal }).Bun;
  if (!bun) throw new ConfigError("the service runs on Bun (Bun.serve): bun service/main.ts");
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    console.log(usage());
    return;
  }
  const config: ServiceConfig = loadConfig();

  const library = Library.open(config.library ? { path: config.library } : {});
  const context = Context.create({ backend: config.backend, device: config.device, cpuThreads: config.cpuThreads, library });
  const info = library.info();
  const keys = new KeyRegistry({ keysDir: config.keysDir, context, library, r1csCheck: config.r1csCheck });
  const metrics = new ServiceMetrics();
  const scheduler = new Scheduler({
    keys,
    metrics,
    queueCapacity: config.queueCapacity,
    queueBytes: config.queueBytes,
    batchSize: config.batchSize,
    batchWaitMs: config.batchWaitMs,
    resultTtlS: config.resultTtlS,
  });
  const inputs = new InputWitnesses();

  const r = metrics.registry;
  r.add(new Gauge("cuzk_queue_depth", "Jobs waiting to run", () => [[{}, scheduler.queueDepth]]));
  r.add(new Gauge("cuzk_queue_bytes", "Witness bytes held by waiting jobs", () => [[{}, scheduler.queuedBytes]]));
  r.add(new Gauge("cuzk_jobs", "Retained jobs by state", () => Object.entries(scheduler.countByState()).map(([state, n]) => [{ state }, n])));
  r.add(new Gauge("cuzk_keys_loaded", "Keys resident", () => [[{}, keys.list().length]]));
  r.add(new Gauge("cuzk_host_pinned_bytes", "Pinned host memory allocated through the library", () => [[{}, library.hostStats().pinnedBytes]]));
  r.add(new Gauge("cuzk_staging_pinned_bytes", "Pinned memory the library holds for its own GPU staging", () => [[{}, library.stagingStats().pinnedBytes]]));
  r.add(new Gauge("cuzk_host_live_bytes", "Host memory allocated through the library (pinned or not)", () => [[{}, library.hostStats().liveBytes]]));
  r.add(
    new Gauge("cuzk_device_memory_bytes", "GPU memory of the service's device (CUDA backend only)", () => {
      if (context.backend !== "cuda") return [];
      const device = library.device(context.device);
      return [[{ device: String(device.index), kind: "total" }, device.totalMemory], [{ device: String(device.index), kind: "free" }, device.freeMemory]];
    }),
  );
  r.add(new Gauge("cuzk_backend_info", "The backend in use (value 1)", () => [[{ backend: context.backend, version: info.version, device: String(context.device) }, 1]]));

  let preloaded = config.preload.length === 0;
  const server = bun.serve(
    serveOptions({
      config,
      keys,
      scheduler,
      inputs,
      metrics,
      ready: () => preloaded && !context.closed,
      describe: () => ({ backend: context.backend, device: context.device, library: info.version, cpuThreads: info.cpuThreads }),
    }),
  );
  log("listening", {
    url: `http://${server.hostname}:${server.port}`,
    port: server.port,
    backend: context.backend,
    keysDir: keys.root,
    queueCapacity: config.queueCapacity,
    batchSize: config.batchSize,
    batchWaitMs: config.batchWaitMs,
    auth: config.token ? "bearer" : "none",
  });

  for (const name of config.preload) {
    try {
      const { key } = await keys.register(name, defaultKeyId(name));
      log("key_registered", { id: key.id, name, curve: key.info.curve, constraints: key.info.nConstraints, inputs: key.wasmPath !== undefined });
    } catch (error) {
      log("key_failed", { name, error: (error as Error).message });
      process.exitCode = 1;
      await server.stop(true);
      return;
    }
  }
  preloaded = true;

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log("shutdown_started", { signal, queued: scheduler.queueDepth, counts: scheduler.countByState(), drainS: config.drainS });
    const report = await scheduler.close(config.drainS * 1000);
    log("shutdown", {
      signal,
      finished: report.succeeded.length,
      failed: report.failed.length,
      cancelled: report.cancelled.length,
      finishedJobs: report.succeeded,
      failedJobs: report.failed,
      cancelledJobs: report.cancelled,
    });
    // Let waiting clients read the final states, then close what is left.
    await Promise.race([server.stop(false), new Promise((resolve) => setTimeout(resolve, 2000))]);
    await server.stop(true);
    inputs.close();
    keys.closeAll();
    context.close();
    log("exit", { code: 0 });
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

main().catch((error) => {
  if (error instanceof ConfigError) {
    console.error(`cuzk service: ${error.message}`);
    process.exit(2);
  }
  console.error(`cuzk service: ${(error as Error)?.stack ?? error}`);
  process.exit(1);
});
