/**
 * @module
 * What every command of the CLI shares: its exit statuses, the command-line error, the flags and
 * how they are read, and the files it reads and writes (JSON written exactly as snarkjs writes it).
 */
import { closeSync, lstatSync, openSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";

import { CuzkError, readRegularFile } from "../mod.ts";

/** Exit statuses: snarkjs's where it has one (0 success, 1 an error or a proof that does not verify, 99 a command line it cannot use). */
export const EXIT = {
  ok: 0,
  failed: 1,
  /** A command line the cuzk forms (prove, verify, info, synth, setup, plan) cannot use. */
  usage: 2,
  /** A command line the snarkjs forms (groth16 ..., wtns calculate, zkey export ...) cannot use: snarkjs's 99. */
  snarkjsUsage: 99,
  /** A run cancelled by Ctrl-C (128 + SIGINT, as shells report it). */
  cancelled: 130,
} as const;

/** A command line the CLI cannot use (a missing argument, an unknown option, a value out of range). */
export class UsageError extends Error {}

/** The arguments of a command: its file names in order, and its flags. */
export interface Parsed {
  positional: string[];
  flags: Map<string, string | true>;
}

/** Flags that take a value (`--flag value`, or `--flag=value`). */
export const VALUE_FLAGS = new Set([
  "--backend", "--device", "--r1cs", "--json-timings", "--timeline",
  "--constraints", "--curve", "--profile", "--public", "--seed", "--threads",
  "--gpu-memory", "--host-memory", "--batch", "--synthetic", "--log2", "--progress",
]);
/** Flags that are on or off. */
export const BOOL_FLAGS = new Set(["--self-check", "--no-self-check", "--timings", "--help", "--insecure-dev", "--cpu", "--json", "--points-on-demand"]);

/**
 * Splits `argv` into file names and flags. `aliases` maps other spellings (snarkjs's single-dash
 * `-v`, `-verbose`, `--protocol=groth16`) to a flag name; any other word starting with "-" is refused.
 */
export function parseArgs(argv: string[], aliases: ReadonlyMap<string, string> = new Map()): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("-") || a === "-") {
      positional.push(a);
      continue;
    }
    const equals = a.indexOf("=");
    const spelled = equals < 0 ? a : a.slice(0, equals);
    const name = aliases.get(spelled) ?? spelled;
    const inline = equals < 0 ? undefined : a.slice(equals + 1);
    if (VALUE_FLAGS.has(name) || (aliases.has(spelled) && inline !== undefined)) {
      if (inline !== undefined) flags.set(name, inline);
      else if (i + 1 < argv.length) flags.set(name, argv[++i]);
      else throw new UsageError(`${a} needs a value`);
    } else if (BOOL_FLAGS.has(name) || aliases.has(spelled)) {
      if (inline !== undefined) throw new UsageError(`${spelled} takes no value`);
      flags.set(name, true);
    } else {
      throw new UsageError(`unknown option ${spelled}`);
    }
  }
  return { positional, flags };
}

/** A whole-number flag within [min, max] (decimal digits only: "1e3", "0x10" and "-1" are refused). */
export function integerFlag(p: Parsed, flag: string, fallback: number, min: number, max: number, why = ""): number {
  const text = p.flags.get(flag);
  if (text === undefined) return fallback;
  const value = typeof text === "string" && /^\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}${why}, not ${text}`);
  return value;
}

/** A count flag: a decimal integer or 2^K. */
export function countFlag(p: Parsed, flag: string, fallback?: number): number {
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

const SIZE_UNITS: Record<string, number> = { "": 1, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/**
 * A size flag in bytes: a whole number of bytes, or a number with KiB, MiB, GiB or TiB (powers of
 * 1024; e.g. 24GiB, 1.5TiB) that comes to whole bytes; undefined when the flag is absent.
 */
export function bytesFlag(p: Parsed, flag: string): number | undefined {
  const text = p.flags.get(flag);
  if (text === undefined) return undefined;
  const m = typeof text === "string" ? /^(\d{1,16}(?:\.\d{1,16})?)\s*([KMGT]iB)?$/i.exec(text) : null;
  const value = m ? Number(m[1]) * SIZE_UNITS[(m[2] ?? "").toLowerCase()] : NaN;
  if (!Number.isSafeInteger(value)) {
    throw new UsageError(`${flag} must be a size: bytes, or a number with KiB, MiB, GiB or TiB (e.g. 24GiB), up to 2^53 - 1 bytes, not ${text}`);
  }
  return value;
}

/** JSON files read by the CLI (verification key, public signals, proof, circuit inputs) are at most this large. */
export const JSON_FILE_BYTES = 256 << 20;

/** The JSON value of the regular file at `path` (FORMAT when it is not JSON). */
export function readJson(path: string, what: string): unknown {
  const text = new TextDecoder().decode(readRegularFile(path, what, JSON_FILE_BYTES));
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new CuzkError("FORMAT", `${what} ${path} is not valid JSON: ${(cause as Error).message}`, { cause });
  }
}

/** A file a command reads or writes, and what it is called in messages ("proof", "circuit .zkey"). */
export interface FileArg {
  path: string;
  what: string;
}

/** Why `path` cannot be written, or undefined: it must not exist yet or be a regular file (not a link, device, FIFO, socket or folder). */
function outputProblem(path: string, what: string): string | undefined {
  let kind: string;
  try {
    const stats = lstatSync(path);
    if (stats.isFile()) return undefined;
    kind = stats.isSymbolicLink() ? "a symbolic link" : stats.isDirectory() ? "a directory" : stats.isFIFO() ? "a FIFO" : stats.isSocket() ? "a socket" : "a device";
  } catch {
    return undefined; // a new path: whether its folder takes it is seen when it is written
  }
  return `refusing to write the ${what} to ${path}: it is ${kind}; give the path of a regular file or a new one`;
}

/** Whether two paths name one file: the same inode where both exist, else the same path once their folders are resolved. */
function sameFile(a: string, b: string): boolean {
  try {
    const [sa, sb] = [statSync(a), statSync(b)];
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch {
    const resolved = (p: string) => {
      try {
        return join(realpathSync(dirname(resolve(p))), basename(p));
      } catch {
        return resolve(p);
      }
    };
    return resolved(a) === resolved(b);
  }
}

/**
 * Refuses a command's outputs before it does any work: an existing path that is not a regular
 * file, two outputs that are one file, an output that is one of its inputs (INVALID_ARGUMENT).
 */
export function checkOutputs(outputs: FileArg[], inputs: FileArg[] = []): void {
  for (const [i, out] of outputs.entries()) {
    const problem = outputProblem(out.path, out.what);
    if (problem) throw new CuzkError("INVALID_ARGUMENT", problem);
    for (const other of outputs.slice(0, i)) {
      if (sameFile(out.path, other.path)) {
        throw new CuzkError("INVALID_ARGUMENT", `the ${other.what} and the ${out.what} would both be written to ${out.path}; give two different paths`);
      }
    }
    for (const input of inputs) {
      if (sameFile(out.path, input.path)) {
        throw new CuzkError("INVALID_ARGUMENT", `the ${out.what} would be written over the ${input.what} ${input.path}; give another path for it`);
      }
    }
  }
}

/**
 * Writes every file or none: each to a temporary beside it (created exclusively, never through a
 * link), then each renamed onto its path; on a failure the temporaries and the files already
 * renamed are removed (IO).
 */
export function writeOutputs(files: Array<FileArg & { data: string | Uint8Array }>): void {
  checkOutputs(files);
  const temporaries: string[] = [];
  const renamed: string[] = [];
  let current: FileArg = files[0];
  try {
    for (const file of files) {
      current = file;
      const temporary = `${file.path}.tmp.${process.pid}`;
      const fd = openSync(temporary, "wx", 0o644);
      temporaries.push(temporary);
      try {
        const bytes = typeof file.data === "string" ? new TextEncoder().encode(file.data) : file.data;
        for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
      } finally {
        closeSync(fd);
      }
    }
    for (const [i, file] of files.entries()) {
      current = file;
      const problem = outputProblem(file.path, file.what); // it may have changed while the others were written
      if (problem) throw new CuzkError("INVALID_ARGUMENT", problem);
      renameSync(temporaries[i], file.path);
      renamed.push(file.path);
    }
  } catch (cause) {
    for (const path of [...temporaries.slice(renamed.length), ...renamed]) {
      try {
        unlinkSync(path);
      } catch { /* already gone */ }
    }
    if (cause instanceof CuzkError) throw cause;
    throw new CuzkError("IO", `cannot write the ${current.what} to ${current.path}: ${(cause as Error).message}; nothing was written`, { cause });
  }
}

/** Writes `data` to `path` as a whole file (see writeOutputs). */
export function writeFile(path: string, data: string | Uint8Array, what = "output"): void {
  writeOutputs([{ path, what, data }]);
}

/**
 * JSON as snarkjs writes its files (bfj with one space of indent): JSON.stringify(value, null, 1)
 * except that an empty array or object still opens a line (`[\n]`, nested `[\n  ]`).
 */
export function snarkjsJson(value: unknown, indent = ""): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  const inner = indent + " ";
  if (Array.isArray(value)) {
    return `[\n${value.map((item) => inner + snarkjsJson(item ?? null, inner)).join(",\n")}${value.length ? "\n" : ""}${indent}]`;
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== "function");
  const lines = entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${snarkjsJson(v, inner)}`);
  return `{\n${lines.join(",\n")}${lines.length ? "\n" : ""}${indent}}`;
}

/** Writes `value` to `path` as snarkjs writes JSON files. */
export function writeJson(path: string, value: unknown, what = "output"): void {
  writeFile(path, snarkjsJson(value), what);
}

/** A message on one line (a load error lists what it tried on several). */
export function oneLine(message: string): string {
  return message.trim().split(/\s*\n\s*/).join("; ");
}

/** Prints one line on stderr, said by cuzk. */
export function say(line: string): void {
  process.stderr.write(`cuzk: ${oneLine(line)}\n`);
}
