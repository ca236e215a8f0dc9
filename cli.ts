#!/usr/bin/env -S deno run --allow-all
/**
 * @module
 * The cuzk command line: a drop-in for `snarkjs groth16 prove` (same argument order, same output
 * files), plus `verify` and `info`. Runs under Deno (`deno run -A cli.ts`), Bun (`bun cli.ts`) and
 * Node >= 22 (`node cli.ts`). Exit status 0 on success; otherwise one line on stderr and non-zero.
 *
 *   cuzk prove <circuit.zkey> <witness.wtns> <proof.json> <public.json> [options]
 *   cuzk verify <verification_key.json> <public.json> <proof.json>
 *   cuzk info [circuit.zkey]
 *   cuzk synth <circuit.r1cs> <witness.wtns> --constraints N [--curve C] [--profile porep|uniform] [--public N] [--seed N]
 *   cuzk setup --insecure-dev <circuit.r1cs> <circuit.zkey> [verification_key.json] [--threads N] [--cpu]
 *
 * Options: --backend auto|cpu|cuda, --device N, --r1cs <circuit.r1cs> (check the witness
 * constraint by constraint), --no-self-check (skip the pairing check of the proof before it is
 * written; on by default, --self-check is accepted), --timings (phase table on stderr),
 * --json-timings <file>, --timeline <file.svg> (the phases as an SVG waterfall).
 * Files are read only when they are regular files within a size limit (README, "CLI").
 * On a terminal, `prove` and `setup` draw a progress bar on stderr (nothing when stderr is not a
 * TTY); Ctrl-C (SIGINT) cancels them between proofs / chunks of key points: exit 130, no output file.
 * `synth` writes a synthetic circuit and a witness that satisfies it; `setup --insecure-dev` makes a
 * proving key for testing only (docs/benchmarks.md, "Synthetic circuits").
 */
import { writeFileSync } from "node:fs";
import process from "node:process";

import { CuzkError, FR_BYTES, Key, Library, LIMITS, MAX_DEVICE, phaseTable, Prover, readRegularFile, requireRegularFile, setupInsecureDev, timelineSvg, verify, writeSynthCircuit } from "./mod.ts";
import type { BackendName, LongCallOptions, Progress } from "./mod.ts";

const USAGE = `usage:
  cuzk prove <circuit.zkey> <witness.wtns> <proof.json> <public.json> [--backend auto|cpu|cuda] [--device N]
             [--r1cs circuit.r1cs] [--no-self-check] [--timings] [--json-timings file] [--timeline file.svg]
  cuzk verify <verification_key.json> <public.json> <proof.json>
  cuzk info [circuit.zkey]
  cuzk synth <circuit.r1cs> <witness.wtns> --constraints N|2^K [--curve bn254|bls12_381] [--profile porep|uniform]
             [--public N] [--seed N]
  cuzk setup --insecure-dev <circuit.r1cs> <circuit.zkey> [verification_key.json] [--threads N] [--cpu]
             (a proving key from fresh random toxic waste: FOR TESTING ONLY)`;

/** Exit status of a run cancelled by Ctrl-C (128 + SIGINT, as shells report it). */
const EXIT_CANCELLED = 130;

const UNITS: Record<Progress["stage"], string> = { idle: "", key_upload: "bytes", prove: "proofs", setup: "key points" };
const STAGE_WORDS: Record<Progress["stage"], string> = { idle: "", key_upload: "key upload", prove: "prove", setup: "setup" };

/**
 * The options of a long call run by this command: a signal that SIGINT aborts (a second Ctrl-C
 * exits at once), and a progress bar on stderr when it is a terminal. `done()` ends the bar's line
 * and removes the SIGINT handler.
 */
function longCall(): LongCallOptions & { done(): void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(EXIT_CANCELLED);
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  const tty = process.stderr.isTTY === true;
  const started = performance.now();
  let drawn = false;
  const onProgress = (p: Progress) => {
    if (p.total === 0) return; // nothing to show yet (or nothing to do: a CPU key upload)
    const width = Math.max(10, Math.min(40, (process.stderr.columns ?? 80) - 60));
    const fraction = Math.min(1, p.done / p.total);
    const filled = Math.round(fraction * width);
    const bar = "=".repeat(filled) + (filled < width ? ">" + " ".repeat(width - filled - 1) : "");
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stderr.write(`\r\x1b[2Kcuzk: ${STAGE_WORDS[p.stage]} [${bar}] ${Math.floor(fraction * 100)}% ${p.done}/${p.total} ${UNITS[p.stage]} ${seconds} s`);
    drawn = true;
  };
  return {
    signal: controller.signal,
    onProgress: tty ? onProgress : undefined,
    done() {
      process.off("SIGINT", onSigint);
      if (drawn) process.stderr.write("\n");
      drawn = false;
    },
  };
}

/** Whether `error` is the cancellation a Ctrl-C asked for. */
function cancelled(error: unknown, call: LongCallOptions): boolean {
  return call.signal?.aborted === true && error instanceof CuzkError && error.code === "CANCELLED";
}

/** A failure the user caused (bad arguments, unreadable file): one line, exit 2. */
class UsageError extends Error {}

interface Parsed {
  positional: string[];
  flags: Map<string, string | true>;
}

const VALUE_FLAGS = new Set([
  "--backend", "--device", "--r1cs", "--json-timings", "--timeline",
  "--constraints", "--curve", "--profile", "--public", "--seed", "--threads",
]);
const BOOL_FLAGS = new Set(["--self-check", "--no-self-check", "--timings", "--help", "--insecure-dev", "--cpu"]);

/** JSON files read by `verify` (verification key, public signals, proof) are at most this large. */
const JSON_FILE_BYTES = 256 << 20;

function parseArgs(argv: string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (VALUE_FLAGS.has(a)) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      flags.set(a, argv[++i]);
    } else if (BOOL_FLAGS.has(a)) {
      flags.set(a, true);
    } else if (a.startsWith("--")) {
      throw new UsageError(`unknown option ${a}`);
    } else {
      positional.push(a);
    }
  }
  return { positional, flags };
}

function readJson(path: string, what: string): unknown {
  const text = new TextDecoder().decode(readRegularFile(path, what, JSON_FILE_BYTES));
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${what} ${path} is not valid JSON: ${(e as Error).message}`);
  }
}

function writeText(path: string, text: string): void {
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new UsageError(`cannot write ${path}: ${(e as Error).message}`);
  }
}

function writeJson(path: string, value: unknown): void {
  writeText(path, JSON.stringify(value, null, 1));
}

/** A whole-number flag within [min, max] (decimal digits only: "1e3", "0x10" and "-1" are refused). */
function integerFlag(p: Parsed, flag: string, fallback: number, min: number, max: number, why = ""): number {
  const text = p.flags.get(flag);
  if (text === undefined) return fallback;
  const value = typeof text === "string" && /^\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}${why}, not ${text}`);
  return value;
}

/** The self-check is on unless --no-self-check; --self-check (the old opt-in) is still accepted. */
function selfCheckFlag(p: Parsed): boolean {
  if (p.flags.has("--self-check") && p.flags.has("--no-self-check")) {
    throw new UsageError("give --no-self-check or --self-check (the default), not both");
  }
  return !p.flags.has("--no-self-check");
}

async function prove(p: Parsed): Promise<number> {
  if (p.positional.length !== 4) throw new UsageError("prove needs <circuit.zkey> <witness.wtns> <proof.json> <public.json>");
  const [zkeyPath, wtnsPath, proofPath, publicPath] = p.positional;
  const backend = (p.flags.get("--backend") ?? "auto") as string;
  if (!["auto", "cpu", "cuda"].includes(backend)) throw new UsageError(`--backend must be auto, cpu or cuda, not ${backend}`);
  const device = integerFlag(p, "--device", 0, 0, MAX_DEVICE, " (a GPU index)");
  const selfCheck = selfCheckFlag(p);
  const r1cs = p.flags.get("--r1cs");
  // A witness that is not a regular file is refused before the key is opened (Key.open checks the
  // key and the .r1cs itself); its size is checked once the key says how many values it needs.
  requireRegularFile(wtnsPath, "witness");
  const call = longCall();
  let prover: Prover | undefined;
  try {
    prover = await Prover.open({
      zkey: zkeyPath,
      backend: backend as "auto" | BackendName,
      device,
      r1cs: typeof r1cs === "string" ? r1cs : undefined,
      selfCheck,
      ...call,
    });
    // A witness holds the key's n_vars values and a .wtns header: anything larger is not one.
    const wtns = readRegularFile(wtnsPath, "witness", prover.info.nVars * FR_BYTES + LIMITS.witnessFileSlack);
    // A proof that fails the self-check is an error here: nothing is written.
    const { proof, publicSignals, timings } = await prover.prove(wtns, { selfCheck, ...call }).catch((error) => {
      if (error instanceof CuzkError && error.code === "SELF_CHECK" && r1cs === undefined) {
        const options = { cause: error, nativeMessage: error.nativeMessage, operation: error.operation };
        throw new CuzkError("SELF_CHECK", `${error.message} (here: prove again with --r1cs circuit.r1cs)`, options);
      }
      throw error;
    });
    call.done();
    writeJson(proofPath, proof);
    writeJson(publicPath, publicSignals);
    if (p.flags.has("--timings")) process.stderr.write(phaseTable(timings) + "\n");
    const jsonTimings = p.flags.get("--json-timings");
    if (typeof jsonTimings === "string") writeJson(jsonTimings, timings);
    const timeline = p.flags.get("--timeline");
    if (typeof timeline === "string") writeText(timeline, timelineSvg(timings));
  } catch (error) {
    if (!cancelled(error, call)) throw error;
    call.done();
    process.stderr.write("cuzk: cancelled (Ctrl-C); no proof written\n");
    return EXIT_CANCELLED;
  } finally {
    call.done();
    prover?.close();
  }
  return 0;
}

async function verifyCommand(p: Parsed): Promise<number> {
  if (p.positional.length !== 3) throw new UsageError("verify needs <verification_key.json> <public.json> <proof.json>");
  const [vkPath, publicPath, proofPath] = p.positional;
  const vk = readJson(vkPath, "verification key");
  const pub = readJson(publicPath, "public signals");
  const proof = readJson(proofPath, "proof");
  if (!Array.isArray(pub)) throw new UsageError(`${publicPath} must hold a JSON array of decimal strings`);
  // deno-lint-ignore no-explicit-any
  const ok = await verify(vk as any, pub as string[], proof as any);
  // The same words snarkjs prints, so scripts that grep for them keep working.
  if (ok) {
    process.stdout.write("OK!\n");
    return 0;
  }
  process.stderr.write("Invalid proof\n");
  return 1;
}

async function info(p: Parsed): Promise<number> {
  const lib = Library.default();
  const li = lib.info();
  const out: Record<string, unknown> = { library: lib.path, ...li, devices: lib.devices() };
  if (p.positional.length > 1) throw new UsageError("info takes at most one .zkey");
  if (p.positional.length === 1) {
    const key = await Key.open(p.positional[0]);
    try {
      out.key = key.info();
    } finally {
      key.close();
    }
  }
  process.stdout.write(JSON.stringify(out, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2) + "\n");
  return 0;
}

/** A count flag: a decimal integer or 2^K. */
function countFlag(p: Parsed, flag: string, fallback?: number): number {
  const text = p.flags.get(flag);
  if (text === undefined) {
    if (fallback === undefined) throw new UsageError(`${flag} is required`);
    return fallback;
  }
  const power = typeof text === "string" ? /^2\^(\d+)$/.exec(text) : null;
  const value = power ? 2 ** Number(power[1]) : Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new UsageError(`${flag} must be a count (e.g. 1024 or 2^20), not ${text}`);
  return value;
}

async function synth(p: Parsed): Promise<number> {
  if (p.positional.length !== 2) throw new UsageError("synth needs <circuit.r1cs> <witness.wtns>");
  const [r1cs, wtns] = p.positional;
  const curve = (p.flags.get("--curve") ?? "bn254") as string;
  if (!["bn254", "bls12_381"].includes(curve)) throw new UsageError(`--curve must be bn254 or bls12_381, not ${curve}`);
  const profile = (p.flags.get("--profile") ?? "porep") as string;
  if (!["porep", "uniform"].includes(profile)) throw new UsageError(`--profile must be porep or uniform, not ${profile}`);
  const seedText = p.flags.get("--seed");
  let seed = 1n;
  try {
    if (typeof seedText === "string") seed = BigInt(seedText);
  } catch {
    throw new UsageError(`--seed must be an integer, not ${seedText}`);
  }
  const constraints = countFlag(p, "--constraints");
  const started = performance.now();
  await writeSynthCircuit(
    { curve: curve as "bn254", profile: profile as "porep", constraints, publicInputs: countFlag(p, "--public", 4), seed },
    { r1cs, wtns },
  );
  process.stderr.write(`cuzk: ${profile} circuit, ${constraints} constraints on ${curve}, written in ${((performance.now() - started) / 1000).toFixed(2)} s\n`);
  return 0;
}

const INSECURE_WARNING = `
  ****************************************************************************
  *  cuzk setup --insecure-dev: FOR TESTING AND BENCHMARKS ONLY.             *
  *  The toxic waste (tau, alpha, beta, gamma, delta) was drawn by this one  *
  *  process. Nothing proves it was destroyed: whoever could read this       *
  *  process's memory can forge proofs that this key's verification key      *
  *  accepts. Never use the key to protect anything of value; use a real     *
  *  ceremony (snarkjs powersoftau + zkey contribute) for that.              *
  ****************************************************************************
`;

async function setup(p: Parsed): Promise<number> {
  if (!p.flags.has("--insecure-dev")) {
    throw new UsageError("setup makes only insecure development keys: pass --insecure-dev to say you know (see docs/benchmarks.md)");
  }
  if (p.positional.length < 2 || p.positional.length > 3) {
    throw new UsageError("setup needs <circuit.r1cs> <circuit.zkey> [verification_key.json]");
  }
  const [r1cs, zkey, vkPath] = p.positional;
  const cores = Library.default().info().cpuThreads;
  // Checked here too (setupInsecureDev refuses it as well) so that the refusal comes before the warning.
  const threads = integerFlag(p, "--threads", 0, 0, cores, ` (0 = all; the library reports ${cores} cores here)`);
  process.stderr.write(INSECURE_WARNING);
  const call = longCall();
  let result;
  try {
    result = await setupInsecureDev(r1cs, zkey, { threads, cpuOnly: p.flags.has("--cpu"), ...call });
  } catch (error) {
    if (!cancelled(error, call)) throw error;
    call.done();
    process.stderr.write(`cuzk: setup cancelled (Ctrl-C); no key written: ${oneLine((error as Error).message)}\n`);
    return EXIT_CANCELLED;
  } finally {
    call.done();
  }
  if (vkPath !== undefined) writeJson(vkPath, result.verificationKey);
  const s = (ms: number) => (ms / 1000).toFixed(2);
  process.stderr.write(
    `cuzk: INSECURE key for ${result.nConstraints} constraints (domain 2^${Math.log2(result.domainSize)}, ${result.nVars} signals, ` +
      `${result.nPublic} public) on ${result.curve} written to ${zkey} (${(result.zkeyBytes / 1e6).toFixed(1)} MB) in ${s(result.totalMs)} s ` +
      `(scalars ${s(result.scalarsMs)}, tables ${s(result.tablesMs)}, points ${s(result.pointsMs)}; ${result.threads} threads; points on ${result.gpu ? "the GPU" : "the CPU"})\n`,
  );
  return 0;
}

/** A message on one line (a load error lists what it tried on several). */
function oneLine(message: string): string {
  return message.trim().split(/\s*\n\s*/).join("; ");
}

/** Runs the CLI on `argv` (without the runtime and script); resolves the exit status. */
export async function main(argv: string[]): Promise<number> {
  try {
    const [command, ...rest] = argv;
    const parsed = parseArgs(rest);
    if (!command || command === "--help" || parsed.flags.has("--help")) {
      process.stdout.write(USAGE + "\n");
      return command ? 0 : 2;
    }
    switch (command) {
      case "prove":
        return await prove(parsed);
      case "verify":
        return await verifyCommand(parsed);
      case "info":
        return await info(parsed);
      case "synth":
        return await synth(parsed);
      case "setup":
        return await setup(parsed);
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } catch (e) {
    process.stderr.write(`cuzk: ${oneLine((e as Error)?.message ?? String(e))}\n`);
    return e instanceof UsageError ? 2 : 1;
  }
}

// Run when executed directly (not when imported by the tests).
const isMain = (import.meta as { main?: boolean }).main ??
  (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href);
if (isMain) {
  const code = await main(process.argv.slice(2));
  process.exit(code);
}
