/**
 * @module
 * The service's configuration: command-line flags first, then `CUZK_SERVICE_*` environment
 * variables, then defaults. One table describes every setting (flag, variable, default, check), so
 * `--help` and the docs cannot drift from what is parsed.
 */
import { totalmem } from "node:os";
import process from "node:process";

/** Everything the service is configured with. */
export interface ServiceConfig {
  host: string;
  port: number;
  /** Directory the zkeys (and their circuit.wasm / circuit.r1cs) are read from; nothing outside it. */
  keysDir: string;
  /** Key names registered at start (comma-separated on the command line). */
  preload: string[];
  backend: "auto" | "cpu" | "cuda";
  device: number;
  /** GPU indices this process proves on (one context each, every key resident on each); empty = [device]. */
  devices: number[];
  /** CPU worker threads of the library (0 = every core). */
  cpuThreads: number;
  /** Jobs waiting (not running) before submissions are answered 429. */
  queueCapacity: number;
  /** Witness bytes held by waiting jobs before submissions are answered 429. */
  queueBytes: number;
  /** Most witnesses proved in one library call. */
  batchSize: number;
  /** How long the oldest queued job of a key may wait for its batch to fill. */
  batchWaitMs: number;
  /** Largest request body accepted. */
  maxBodyBytes: number;
  /** Bearer token required on /v1 and /metrics; empty = no authentication. */
  token: string;
  /** Seconds a finished job (and its result) is kept. */
  resultTtlS: number;
  /** Bun closes connections idle this long (at most 255 s); long-polls return before it. */
  idleTimeoutS: number;
  /** On SIGTERM/SIGINT: seconds to keep proving queued jobs before cancelling the rest. */
  drainS: number;
  /** After the drain: seconds results not yet fetched stay retrievable before the process exits. */
  resultGraceS: number;
  /** Largest key file (.zkey, .r1cs, .wasm) the service reads; the library holds keys in memory. */
  maxKeyBytes: number;
  /** Check witnesses against circuit.r1cs when the key has one. */
  r1csCheck: boolean;
  /** The provers' engine settings, passed to every prover the service makes (src/memory_plan.ts). */
  hCopies: "auto" | number;
  memoryBudget: number;
  hostMemoryBudget: number;
  g2OnCpu: boolean;
  /** Path of libcuzk.so (else $CUZK_LIB, else build/libcuzk.so). */
  library: string;
  /** api: the HTTP API (with the database: no proving); worker: proves jobs from the database. */
  role: "api" | "worker";
  /** PostgreSQL URL; empty = jobs in this process's memory (the embedded default). */
  databaseUrl: string;
  /** Queued jobs of one key before 429 (with the database). */
  queueCapacityPerKey: number;
  /** A worker's claim lapses when not renewed for this long; its jobs are then claimed again. */
  leaseS: number;
  /** Claims after the first before a job fails with RETRY_LIMIT. */
  retryLimit: number;
  /** A worker's name in the database (default: host:pid). */
  workerId: string;
  /** Largest witness kept in its job's row; larger ones go to `witnessDir` (with the database). */
  dbWitnessMaxBytes: number;
  /** Directory shared by the API and the workers for witnesses above `dbWitnessMaxBytes`; empty = none (413). */
  witnessDir: string;
}

type Kind = "string" | "int" | "list" | "bool" | "backend" | "role" | "devices" | "copies";

interface Setting {
  key: keyof ServiceConfig;
  flag: string;
  env: string;
  kind: Kind;
  default: string;
  help: string;
  min?: number;
  max?: number;
  /** Most entries of a list. */
  maxItems?: number;
}

/** The machine's memory: nothing the service holds may exceed it. */
const MEMORY_BYTES = totalmem();
/** Key names given to --preload at most (each is opened and kept resident). */
export const MAX_PRELOAD = 256;
/**
 * The largest witness a job's row holds: node-postgres sends a bytea parameter as hex text, and
 * twice this is near V8's longest string. Larger witnesses need --witness-dir.
 */
export const ROW_WITNESS_MAX_BYTES = 128 * 1024 * 1024;

/** Every setting: flag, environment variable, default and meaning. */
export const SETTINGS: readonly Setting[] = [
  { key: "host", flag: "--host", env: "CUZK_SERVICE_HOST", kind: "string", default: "127.0.0.1", help: "address to listen on" },
  { key: "port", flag: "--port", env: "CUZK_SERVICE_PORT", kind: "int", default: "8080", min: 0, max: 65535, help: "TCP port (0 = any free port, printed at start)" },
  { key: "keysDir", flag: "--keys-dir", env: "CUZK_SERVICE_KEYS_DIR", kind: "string", default: "keys", help: "directory of the zkeys; POST /v1/keys names files inside it only" },
  { key: "preload", flag: "--preload", env: "CUZK_SERVICE_PRELOAD", kind: "list", default: "", maxItems: MAX_PRELOAD, help: "comma-separated key names to register at start (id = name with / as .)" },
  { key: "backend", flag: "--backend", env: "CUZK_SERVICE_BACKEND", kind: "backend", default: "auto", help: "auto | cpu | cuda (not used by --role api with a database: it proves nothing)" },
  { key: "device", flag: "--device", env: "CUZK_SERVICE_DEVICE", kind: "int", default: "0", min: 0, max: 64, help: "GPU index" },
  { key: "devices", flag: "--devices", env: "CUZK_SERVICE_DEVICES", kind: "devices", default: "", maxItems: 64, help: "comma-separated GPU indices to prove on, each batch divided between them (default: --device alone)" },
  { key: "cpuThreads", flag: "--cpu-threads", env: "CUZK_SERVICE_CPU_THREADS", kind: "int", default: "0", min: 0, max: 4096, help: "CPU threads of the library (0 = all cores; at most the cores the library reports)" },
  { key: "queueCapacity", flag: "--queue-size", env: "CUZK_SERVICE_QUEUE_SIZE", kind: "int", default: "1024", min: 1, max: 1_000_000, help: "queued jobs before 429" },
  { key: "queueBytes", flag: "--queue-bytes", env: "CUZK_SERVICE_QUEUE_BYTES", kind: "int", default: String(Math.min(2 ** 31, Math.floor(MEMORY_BYTES / 2))), min: 1024, max: MEMORY_BYTES, help: "witness bytes held by queued jobs before 429 (at most the machine's memory)" },
  { key: "batchSize", flag: "--batch-size", env: "CUZK_SERVICE_BATCH_SIZE", kind: "int", default: "8", min: 1, max: 1024, help: "most witnesses per library call" },
  { key: "batchWaitMs", flag: "--batch-wait-ms", env: "CUZK_SERVICE_BATCH_WAIT_MS", kind: "int", default: "0", min: 0, max: 3_600_000, help: "how long the oldest job may wait for its batch to fill (0: batches form from what queued while the device was busy)" },
  { key: "maxBodyBytes", flag: "--max-body-bytes", env: "CUZK_SERVICE_MAX_BODY_BYTES", kind: "int", default: String(64 << 20), min: 1024, max: 2 ** 31, help: "largest request body" },
  { key: "token", flag: "--token", env: "CUZK_SERVICE_TOKEN", kind: "string", default: "", help: "bearer token for /v1 and /metrics (empty: none)" },
  { key: "resultTtlS", flag: "--result-ttl-s", env: "CUZK_SERVICE_RESULT_TTL_S", kind: "int", default: "600", min: 1, max: 86_400 * 7, help: "seconds finished jobs are kept" },
  { key: "idleTimeoutS", flag: "--idle-timeout-s", env: "CUZK_SERVICE_IDLE_TIMEOUT_S", kind: "int", default: "60", min: 10, max: 255, help: "Bun's idle timeout; long-polls end 5 s before it" },
  { key: "drainS", flag: "--drain-s", env: "CUZK_SERVICE_DRAIN_S", kind: "int", default: "10", min: 0, max: 3600, help: "on shutdown, seconds to keep proving queued jobs" },
  { key: "resultGraceS", flag: "--result-grace-s", env: "CUZK_SERVICE_RESULT_GRACE_S", kind: "int", default: "15", min: 0, max: 3600, help: "after the drain, seconds unfetched results stay retrievable (the process exits sooner once all are fetched)" },
  { key: "maxKeyBytes", flag: "--max-key-bytes", env: "CUZK_SERVICE_MAX_KEY_BYTES", kind: "int", default: String(MEMORY_BYTES), min: 1024, max: MEMORY_BYTES, help: "largest .zkey, .r1cs or .wasm read (at most the machine's memory, the default)" },
  { key: "hCopies", flag: "--h-copies", env: "CUZK_SERVICE_H_COPIES", kind: "copies", default: "auto", help: "GPU: precomputed copies of each key's H points, made when a key is registered (auto: as many as the memory left allows; 0: none; or 2..64)" },
  { key: "memoryBudget", flag: "--memory-budget", env: "CUZK_SERVICE_MEMORY_BUDGET", kind: "int", default: "0", min: 0, max: Number.MAX_SAFE_INTEGER, help: "bytes of engine memory (GPU: device; CPU: host) each key's prover may take; 0 = automatic; sections that do not fit are streamed, MSMs run in chunks" },
  { key: "hostMemoryBudget", flag: "--host-memory-budget", env: "CUZK_SERVICE_HOST_MEMORY_BUDGET", kind: "int", default: "0", min: 0, max: Number.MAX_SAFE_INTEGER, help: "GPU: host bytes each key's prover may take beyond the key (pinned copies of streamed points, the H scalars a batch's group keeps); 0 = automatic (three quarters of memory)" },
  { key: "g2OnCpu", flag: "--g2-on-cpu", env: "CUZK_SERVICE_G2_ON_CPU", kind: "bool", default: "false", help: "GPU: run the G2 MSM on the CPU beside the GPU's work" },
  { key: "r1csCheck", flag: "--r1cs-check", env: "CUZK_SERVICE_R1CS_CHECK", kind: "bool", default: "true", help: "check witnesses against circuit.r1cs when present" },
  { key: "library", flag: "--lib", env: "CUZK_LIB", kind: "string", default: "", help: "path of libcuzk.so" },
  { key: "role", flag: "--role", env: "CUZK_SERVICE_ROLE", kind: "role", default: "api", help: "api (HTTP; with --database-url it proves nothing) | worker (proves jobs from the database; needs --database-url)" },
  { key: "databaseUrl", flag: "--database-url", env: "CUZK_SERVICE_DATABASE_URL", kind: "string", default: "", help: "PostgreSQL URL: jobs durable and shared by an API and workers on any hosts (empty: in this process's memory)" },
  { key: "queueCapacityPerKey", flag: "--queue-size-per-key", env: "CUZK_SERVICE_QUEUE_SIZE_PER_KEY", kind: "int", default: "1024", min: 1, max: 1_000_000, help: "queued jobs of one key before 429 (with --database-url)" },
  { key: "leaseS", flag: "--lease-s", env: "CUZK_SERVICE_LEASE_S", kind: "int", default: "30", min: 10, max: 3600, help: "a worker renews its claim every third of this; unrenewed this long, its jobs go back to the queue (API, with --database-url)" },
  { key: "retryLimit", flag: "--retry-limit", env: "CUZK_SERVICE_RETRY_LIMIT", kind: "int", default: "3", min: 0, max: 100, help: "claims after the first (a lost lease) before a job fails with RETRY_LIMIT (API, with --database-url)" },
  { key: "workerId", flag: "--worker-id", env: "CUZK_SERVICE_WORKER_ID", kind: "string", default: "", help: "a worker's name in the database (default: host:pid)" },
  { key: "dbWitnessMaxBytes", flag: "--db-witness-max-bytes", env: "CUZK_SERVICE_DB_WITNESS_MAX_BYTES", kind: "int", default: String(ROW_WITNESS_MAX_BYTES), min: 1024, max: ROW_WITNESS_MAX_BYTES, help: "largest witness kept in its job's row; larger ones go to --witness-dir, or are refused (413) without it (API, with --database-url)" },
  { key: "witnessDir", flag: "--witness-dir", env: "CUZK_SERVICE_WITNESS_DIR", kind: "string", default: "", help: "directory shared by the API and every worker (same files on every host) for witnesses above --db-witness-max-bytes (with --database-url)" },
];

/** A configuration error: the message names the flag or variable and what was wrong. */
export class ConfigError extends Error {}

function parseValue(setting: Setting, raw: string, source: string): unknown {
  switch (setting.kind) {
    case "string":
      return raw;
    case "list": {
      const items = raw.split(",").map((s) => s.trim()).filter(Boolean);
      if (setting.maxItems !== undefined && items.length > setting.maxItems) {
        throw new ConfigError(`${source}: ${items.length} entries, more than the ${setting.maxItems} allowed`);
      }
      return items;
    }
    case "bool":
      if (/^(1|true|yes|on)$/i.test(raw)) return true;
      if (/^(0|false|no|off)$/i.test(raw)) return false;
      throw new ConfigError(`${source}: expected true or false, got ${JSON.stringify(raw)}`);
    case "backend":
      if (raw === "auto" || raw === "cpu" || raw === "cuda") return raw;
      throw new ConfigError(`${source}: expected auto, cpu or cuda, got ${JSON.stringify(raw)}`);
    case "devices": {
      const items = raw.split(",").map((s) => s.trim()).filter(Boolean);
      if (items.length > (setting.maxItems ?? 64)) throw new ConfigError(`${source}: ${items.length} devices, more than the ${setting.maxItems} allowed`);
      const devices = items.map((item) => {
        if (!/^\d+$/.test(item) || Number(item) > 64) throw new ConfigError(`${source}: ${JSON.stringify(item)} is not a GPU index (0..64)`);
        return Number(item);
      });
      if (new Set(devices).size !== devices.length) throw new ConfigError(`${source}: ${raw} names a device twice`);
      return devices;
    }
    case "copies": {
      if (raw === "auto") return raw;
      if (!/^\d+$/.test(raw) || Number(raw) > 64) throw new ConfigError(`${source}: expected auto or a copy count from 0 to 64, got ${JSON.stringify(raw)}`);
      return Number(raw);
    }
    case "role":
      if (raw === "api" || raw === "worker") return raw;
      throw new ConfigError(`${source}: expected api or worker, got ${JSON.stringify(raw)}`);
    case "int": {
      const [min, max] = [setting.min ?? 0, setting.max ?? Number.MAX_SAFE_INTEGER];
      if (!/^\d+$/.test(raw)) throw new ConfigError(`${source}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      const value = Number(raw);
      if (value < min || value > max) throw new ConfigError(`${source}: ${raw} is outside ${min}..${max}`);
      return value;
    }
  }
}

/** The usage text (`--help`). */
export function usage(): string {
  const limit = (s: Setting) => (s.kind === "int" ? `; ${s.min}..${s.max}` : s.maxItems !== undefined ? `; at most ${s.maxItems}` : "");
  const lines = SETTINGS.map((s) => `  ${(s.flag + (s.kind === "bool" ? " / --no-" + s.flag.slice(2) : " <v>")).padEnd(34)} ${s.env.padEnd(30)} ${s.help} (default: ${s.default === "" ? "none" : s.default}${limit(s)})`);
  return ["usage: bun service/main.ts [options]   (or: bun run serve -- [options])", "", "  flag                               environment                    meaning", ...lines].join("\n");
}

/** Reads flags (`--name value`, `--name=value`, `--flag` / `--no-flag` for booleans) and the environment. */
export function loadConfig(argv: readonly string[] = process.argv.slice(2), env: Record<string, string | undefined> = process.env): ServiceConfig {
  const values: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    const raw = env[setting.env];
    values[setting.key] = raw !== undefined && raw !== "" ? parseValue(setting, raw, setting.env) : parseValue(setting, setting.default, `default of ${setting.flag}`);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [name, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const negated = SETTINGS.find((s) => s.kind === "bool" && name === `--no-${s.flag.slice(2)}`);
    if (negated) {
      values[negated.key] = false;
      continue;
    }
    const setting = SETTINGS.find((s) => s.flag === name);
    if (!setting) throw new ConfigError(`unknown option ${JSON.stringify(arg)}; see --help`);
    if (setting.kind === "bool" && inline === undefined) {
      values[setting.key] = true;
      continue;
    }
    const raw = inline ?? argv[++i];
    if (raw === undefined) throw new ConfigError(`${name} needs a value`);
    values[setting.key] = parseValue(setting, raw, name);
  }
  if (values.witnessDir && !values.databaseUrl) throw new ConfigError("--witness-dir needs --database-url: without a database witnesses stay in this process's memory");
  if (values.role === "worker" && !values.databaseUrl) throw new ConfigError("--role worker needs --database-url (CUZK_SERVICE_DATABASE_URL): workers take their jobs from PostgreSQL");
  return values as unknown as ServiceConfig;
}
