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
 * finished, failed or were cancelled before exiting (shutdown.ts).
 */
import process from "node:process";
import { Context, CuzkError, Library } from "../mod.ts";
import { ConfigError, loadConfig, usage } from "./config.ts";
import type { ServiceConfig } from "./config.ts";
import { addGauges } from "./gauges.ts";
import { InputWitnesses } from "./inputs.ts";
import { defaultKeyId, KeyRegistry } from "./keys.ts";
import { logEvent } from "./log.ts";
import { ServiceMetrics } from "./metrics.ts";
import { parse, validators } from "./schemas.ts";
import { Scheduler } from "./scheduler.ts";
import { serveOptions } from "./server.ts";
import type { BunServer } from "./server.ts";
import { shutdownOnSignals } from "./shutdown.ts";
import { MemoryJobStore } from "./store_memory.ts";

interface BunGlobal {
  serve(options: ReturnType<typeof serveOptions>): BunServer;
}

/** Registers the preloaded keys; false (after logging which) when one cannot be opened. */
async function preload(keys: KeyRegistry, names: readonly string[]): Promise<boolean> {
  for (const name of names) {
    try {
      const { key } = await keys.register(name, defaultKeyId(name));
      logEvent("key_registered", { id: key.id, name, curve: key.info.curve, constraints: key.info.nConstraints, inputs: key.wasmPath !== undefined });
    } catch (error) {
      logEvent("key_failed", { name, error: (error as Error).message });
      return false;
    }
  }
  return true;
}

async function main(): Promise<void> {
  const bun = (globalThis as { Bun?: BunGlobal }).Bun;
  if (!bun) throw new ConfigError("the service runs on Bun (Bun.serve): bun service/main.ts");
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    console.log(usage());
    return;
  }
  const config: ServiceConfig = loadConfig();
  for (const name of config.preload) {
    try {
      parse(validators.keyName, name);
    } catch (error) {
      throw new ConfigError(`--preload: ${JSON.stringify(name)} ${(error as Error).message.replace(/^request body: /, "")}`);
    }
  }

  const library = Library.open(config.library ? { path: config.library } : {});
  const info = library.info();
  // The library's own pool has a thread per core: more threads than that only contend.
  if (config.cpuThreads > info.cpuThreads) {
    throw new ConfigError(`--cpu-threads: ${config.cpuThreads} is more than the ${info.cpuThreads} cores the library reports (0 = all of them)`);
  }
  let context: Context;
  try {
    context = Context.create({ backend: config.backend, device: config.device, cpuThreads: config.cpuThreads, library });
  } catch (error) {
    throw new ConfigError(`cannot start the ${config.backend} backend on device ${config.device} (--backend, --device): ${(error as Error).message}`);
  }
  let keys: KeyRegistry;
  try {
    keys = new KeyRegistry({ keysDir: config.keysDir, context, library, r1csCheck: config.r1csCheck, maxFileBytes: config.maxKeyBytes });
  } catch (error) {
    throw new ConfigError(`--keys-dir: ${(error as Error).message}`);
  }
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
  addGauges(metrics.registry, { scheduler, keys, library, context });

  let preloaded = config.preload.length === 0;
  const server = bun.serve(
    serveOptions({
      config,
      keys,
      store: new MemoryJobStore(scheduler),
      inputs,
      metrics,
      ready: () => preloaded && !context.closed,
      describe: () => ({ backend: context.backend, device: context.device, library: info.version, cpuThreads: info.cpuThreads }),
    }),
  );
  logEvent("listening", {
    url: `http://${server.hostname}:${server.port}`,
    port: server.port,
    backend: context.backend,
    keysDir: keys.root,
    queueCapacity: config.queueCapacity,
    batchSize: config.batchSize,
    batchWaitMs: config.batchWaitMs,
    auth: config.token ? "bearer" : "none",
  });

  if (!(await preload(keys, config.preload))) {
    process.exitCode = 1;
    await server.stop(true);
    return;
  }
  preloaded = true;
  shutdownOnSignals({ scheduler, server, inputs, keys, context, drainS: config.drainS, resultGraceS: config.resultGraceS });
}

main().catch((error) => {
  // Start-up errors are one line (the library's load error lists what it tried on several).
  const oneLine = (text: string) => text.trim().split(/\s*\n\s*/).join("; ");
  if (error instanceof ConfigError) {
    console.error(`cuzk service: ${oneLine(error.message)}`);
    process.exit(2);
  }
  if (error instanceof CuzkError) {
    console.error(`cuzk service: ${oneLine(error.message)}`);
    process.exit(1);
  }
  console.error(`cuzk service: ${(error as Error)?.stack ?? error}`);
  process.exit(1);
});
