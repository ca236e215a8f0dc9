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
 *
 * Options: --backend auto|cpu|cuda, --device N, --r1cs <circuit.r1cs> (check the witness
 * constraint by constraint), --self-check (verify before writing), --timings (phase table on stderr),
 * --json-timings <file>, --timeline <file.svg> (the phases as an SVG waterfall).
 */
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";

import { Key, Library, Prover, timelineSvg, verify } from "./mod.ts";
import type { BackendName, Timings } from "./mod.ts";

const USAGE = `usage:
  cuzk prove <circuit.zkey> <witness.wtns> <proof.json> <public.json> [--backend auto|cpu|cuda] [--device N]
             [--r1cs circuit.r1cs] [--self-check] [--timings] [--json-timings file] [--timeline file.svg]
  cuzk verify <verification_key.json> <public.json> <proof.json>
  cuzk info [circuit.zkey]`;

/** A failure the user caused (bad arguments, unreadable file): one line, exit 2. */
class UsageError extends Error {}

interface Parsed {
  positional: string[];
  flags: Map<string, string | true>;
}

const VALUE_FLAGS = new Set(["--backend", "--device", "--r1cs", "--json-timings", "--timeline"]);
const BOOL_FLAGS = new Set(["--self-check", "--timings", "--help"]);

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

function readBytes(path: string, what: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(path));
  } catch (e) {
    throw new UsageError(`cannot read ${what} ${path}: ${(e as Error).message}`);
  }
}

function readJson(path: string, what: string): unknown {
  const text = new TextDecoder().decode(readBytes(path, what));
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

/** The phase table printed by --timings: one line per phase, in start order. */
export function formatTimings(t: Timings): string {
  const rows = Object.entries(t.phases)
    .filter(([, span]) => span !== undefined)
    .sort((a, b) => a[1]!.start - b[1]!.start);
  const lines = [`phase              start ms     end ms   took ms   (${t.backend}, total ${t.totalMs.toFixed(1)} ms)`];
  for (const [name, span] of rows) {
    lines.push(
      `${name.padEnd(16)} ${span!.start.toFixed(2).padStart(9)} ${span!.end.toFixed(2).padStart(10)} ${(span!.end - span!.start).toFixed(2).padStart(9)}`,
    );
  }
  return lines.join("\n");
}

async function prove(p: Parsed): Promise<number> {
  if (p.positional.length !== 4) throw new UsageError("prove needs <circuit.zkey> <witness.wtns> <proof.json> <public.json>");
  const [zkeyPath, wtnsPath, proofPath, publicPath] = p.positional;
  const backend = (p.flags.get("--backend") ?? "auto") as string;
  if (!["auto", "cpu", "cuda"].includes(backend)) throw new UsageError(`--backend must be auto, cpu or cuda, not ${backend}`);
  const deviceFlag = p.flags.get("--device");
  const device = deviceFlag === undefined ? 0 : Number(deviceFlag);
  if (!Number.isInteger(device) || device < 0) throw new UsageError(`--device must be a GPU index, not ${deviceFlag}`);
  const wtns = readBytes(wtnsPath, "witness");
  const r1cs = p.flags.get("--r1cs");
  const prover = await Prover.open({
    zkey: zkeyPath,
    backend: backend as "auto" | BackendName,
    device,
    r1cs: typeof r1cs === "string" ? r1cs : undefined,
    selfCheck: p.flags.has("--self-check"),
  });
  try {
    const { proof, publicSignals, timings } = await prover.prove(wtns);
    writeJson(proofPath, proof);
    writeJson(publicPath, publicSignals);
    if (p.flags.has("--timings")) process.stderr.write(formatTimings(timings) + "\n");
    const jsonTimings = p.flags.get("--json-timings");
    if (typeof jsonTimings === "string") writeJson(jsonTimings, timings);
    const timeline = p.flags.get("--timeline");
    if (typeof timeline === "string") writeText(timeline, timelineSvg(timings));
  } finally {
    prover.close();
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
