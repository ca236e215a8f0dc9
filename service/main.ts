#!/usr/bin/env bun
/**
 * @module
 * Entry point of the proving service (Bun only: it serves with `Bun.serve`):
 *
 *   bun run serve -- --keys-dir tests/fixtures --preload bn254/mulchain_8 --port 8080
 *   bun service/main.ts --help
 *
 * Opens the library and one context per device (--devices, else --device), registers the preloaded keys, starts the
 * scheduler and the HTTP server, and prints one JSON line per event on stdout ("listening",
 * "key_registered", "shutdown_started", "shutdown"). On SIGTERM or SIGINT it stops taking jobs,
 * proves what is queued for up to --drain-s seconds, cancels the rest, and prints which jobs
 * finished, failed or were cancelled before exiting (shutdown.ts).
 *
 * With --database-url the jobs live in PostgreSQL instead, shared by roles that may run on many
 * hosts: `--role api` serves the same HTTP API from the database (it opens keys only to check
 * witnesses and export verification keys; it proves nothing, so it makes no device context and
 * no prover, whatever --backend says), `--role worker` proves the jobs of
 * its preloaded keys on its device (worker.ts). Either leaves at once on SIGTERM/SIGINT: the jobs
 * stay in the database (a worker first settles the batch in hand).
 */
import process from "node:process";
import { Context, CuzkError, Library } from "../mod.ts";
import { ConfigError, loadConfig, usage } from "./config.ts";
import type { ServiceConfig } from "./config.ts";
import { ClusterDb } from "./cluster_db.ts";
import { ClusterMetrics } from "./cluster_metrics.ts";
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
import type { JobStore } from "./store.ts";
import { MemoryJobStore } from "./store_memory.ts";
import { PgJobStore } from "./store_pg.ts";
import { WitnessDir } from "./witness_dir.ts";
import { defaultWorkerId, ProvingWorker } from "./worker.ts";

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
  const devices = config.devices.length > 0 ? config.devices : [config.device];
  // The API of a database deployment proves nothing: a context would only hold a device (and on a
  // GPU host, CUDA's start and memory) for nothing. Its keys are opened without provers.
  const proves = !config.databaseUrl || config.role === "worker";
  const contexts: Context[] = [];
  for (const device of proves ? devices : []) {
    try {
      contexts.push(Context.create({ backend: config.backend, device, cpuThreads: config.cpuThreads, g2OnCpu: config.g2OnCpu, library }));
    } catch (error) {
      for (const c of contexts) c.close();
      throw new ConfigError(`cannot start the ${config.backend} backend on device ${device} (--backend, --device, --devices): ${(error as Error).message}`);
    }
  }
  // The first device's context answers for the backend (they all have the same one); none in the API role.
  const context: Context | undefined = contexts[0];
  let keys: KeyRegistry;
  try {
    const engine = { hCopies: config.hCopies, memoryBudget: config.memoryBudget, hostMemoryBudget: config.hostMemoryBudget };
    keys = new KeyRegistry({ keysDir: config.keysDir, contexts, library, r1csCheck: config.r1csCheck, maxFileBytes: config.maxKeyBytes, engine });
  } catch (error) {
    throw new ConfigError(`--keys-dir: ${(error as Error).message}`);
  }
  const metrics = new ServiceMetrics();
  if (config.databaseUrl) {
    // pg-boss's supervisor (every process runs one) finds lost leases this often.
    let witnessDir: WitnessDir | undefined;
    try {
      witnessDir = config.witnessDir ? await WitnessDir.open(config.witnessDir) : undefined;
    } catch (error) {
      throw new ConfigError(`--witness-dir: ${(error as Error).message}`);
    }
    logUncaught();
    const workerId = config.workerId || defaultWorkerId();
    const db = await ClusterDb.open(config.databaseUrl, {
      poolSize: config.role === "api" ? 16 : 4,
      superviseS: Math.max(1, Math.floor(config.leaseS / 5)),
      leaseS: config.leaseS,
      applicationName: config.role === "api" ? "cuzk api" : `cuzk worker ${workerId}`,
    });
    if (config.role === "worker") return runWorker(config, { library, contexts, keys, db, witnessDir, workerId });
    const store = await PgJobStore.open({
      db,
      metrics,
      cluster: new ClusterMetrics(metrics.registry),
      queue: { leaseS: config.leaseS, retryLimit: config.retryLimit, retentionS: config.resultTtlS },
      queueCapacity: config.queueCapacity,
      queueCapacityPerKey: config.queueCapacityPerKey,
      queueBytes: config.queueBytes,
      resultTtlS: config.resultTtlS,
      dbWitnessMaxBytes: config.dbWitnessMaxBytes,
      witnessDir,
    });
    const server = await serve(bun, config, { keys, store, metrics, info });
    if (!server) return;
    for (const key of keys.list()) await store.addKey(key.id);
    const stop = async (signal: string) => {
      logEvent("shutdown_started", { signal, role: "api" });
      await store.close();
      await server.stop(true);
      await db.close();
      logEvent("exit", { code: 0 });
      process.exit(0);
    };
    onceOnSignals(stop);
    return;
  }
  const scheduler = new Scheduler({
    keys,
    metrics,
    queueCapacity: config.queueCapacity,
    queueBytes: config.queueBytes,
    batchSize: config.batchSize,
    batchWaitMs: config.batchWaitMs,
    resultTtlS: config.resultTtlS,
  });
  addGauges(metrics.registry, { scheduler, keys, library, contexts });
  const inputs = new InputWitnesses();
  const server = await serve(bun, config, { keys, store: new MemoryJobStore(scheduler), metrics, context, info, inputs });
  if (!server) return;
  shutdownOnSignals({ scheduler, server, inputs, keys, contexts, drainS: config.drainS, resultGraceS: config.resultGraceS });
}

/** Starts the HTTP server and registers the preloaded keys; undefined (exit code 1) when one cannot be opened. */
async function serve(
  bun: BunGlobal,
  config: ServiceConfig,
  parts: { keys: KeyRegistry; store: JobStore; metrics: ServiceMetrics; context?: Context; info: ReturnType<Library["info"]>; inputs?: InputWitnesses },
): Promise<BunServer | undefined> {
  const { keys, context, info } = parts;
  const inputs = parts.inputs ?? new InputWitnesses();
  let preloaded = config.preload.length === 0;
  const server = bun.serve(
    serveOptions({
      config,
      keys,
      store: parts.store,
      inputs,
      metrics: parts.metrics,
      ready: () => preloaded && !context?.closed,
      describe: () => ({ backend: context?.backend ?? "none", device: context?.device, devices: keys.devices, library: info.version, cpuThreads: info.cpuThreads, role: config.role, database: config.databaseUrl !== "" }),
    }),
  );
  logEvent("listening", {
    url: `http://${server.hostname}:${server.port}`,
    port: server.port,
    role: config.role,
    database: config.databaseUrl !== "",
    backend: context?.backend ?? "none",
    keysDir: keys.root,
    queueCapacity: config.queueCapacity,
    batchSize: config.batchSize,
    batchWaitMs: config.batchWaitMs,
    auth: config.token ? "bearer" : "none",
  });
  if (!(await preload(keys, config.preload))) {
    process.exitCode = 1;
    await server.stop(true);
    return undefined;
  }
  preloaded = true;
  return server;
}

/** The worker role: the preloaded keys' jobs from the database, proved on this process's device. */
async function runWorker(config: ServiceConfig, parts: { library: Library; contexts: Context[]; keys: KeyRegistry; db: ClusterDb; witnessDir?: WitnessDir; workerId: string }): Promise<void> {
  const { contexts, keys, db, witnessDir, workerId } = parts;
  const context = contexts[0];
  if (!(await preload(keys, config.preload))) {
    process.exitCode = 1;
    await db.close();
    return;
  }
  if (keys.list().length === 0) throw new ConfigError("--role worker needs the keys it proves for (--preload)");
  const worker = await ProvingWorker.start({ db, keys, batchSize: config.batchSize, workerId, backend: context.backend, witnessDir });
  logEvent("worker_started", { worker: workerId, keys: keys.list().map((k) => k.id), backend: context.backend, devices: contexts.map((c) => c.device), batchSize: config.batchSize });
  onceOnSignals(async (signal) => {
    logEvent("shutdown_started", { signal, role: "worker", worker: workerId });
    await worker.stop();
    await db.close();
    keys.closeAll();
    for (const c of contexts) c.close();
    logEvent("exit", { code: 0 });
    process.exit(0);
  });
}

/**
 * The floor under the database roles' own handling: every connection has an 'error' listener and
 * every loop retries what the database refused, so an error that reaches the process is a bug. A
 * worker or an API that stays up serves better than one that exits over it (the jobs are in the
 * database, the fence keeps a settle honest), so it is logged as an event, which the tests look
 * for, and the process goes on.
 */
function logUncaught(): void {
  const describe = (error: unknown) => String((error as Error)?.stack ?? error);
  process.on("unhandledRejection", (reason) => logEvent("unhandled_rejection", { error: describe(reason) }));
  process.on("uncaughtException", (error) => logEvent("uncaught_exception", { error: describe(error) }));
}

/** Runs `stop` on the first SIGTERM or SIGINT (later ones are ignored). */
function onceOnSignals(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    void stop(signal);
  };
  process.on("SIGTERM", () => handler("SIGTERM"));
  process.on("SIGINT", () => handler("SIGINT"));
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
