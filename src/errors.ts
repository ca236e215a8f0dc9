/**
 * @module
 * The one error type of cuzk. Every native call returns a `cuzk_status` and copies its message
 * into a caller-provided buffer; `check` turns a failed status into a `CuzkError` with a symbolic
 * code (the enum name without its CUZK_ERR_ prefix) and that message. Errors raised on the
 * TypeScript side (library not found, symbol not yet implemented, use after close) share the
 * class with codes of their own.
 */
import { STATUS_NAMES } from "./ffi/symbols.ts";
import type { CurveName } from "./library.ts";
import type { MemoryPlan } from "./memory_plan.ts";

/** Size of the error buffer passed to every native call. */
export const ERROR_BUFFER_BYTES = 1024;

/** Codes of `enum cuzk_status` (without OK). */
export type NativeErrorCode = Exclude<(typeof STATUS_NAMES)[number], "OK">;

/**
 * Symbolic error codes: those of the native library (CANCELLED: the call stopped at the caller's
 * request, an AbortSignal), plus
 * - `LOAD`: the library could not be found or loaded (the message says how to build it);
 * - `MISSING_SYMBOL`: the library does not export a function of cuzk.h (yet);
 * - `ABI_MISMATCH`: the library was built from a different cuzk.h;
 * - `CLOSED`: a handle or buffer was used after close()/free().
 */
export type CuzkErrorCode = NativeErrorCode | "LOAD" | "MISSING_SYMBOL" | "ABI_MISMATCH" | "CLOSED" | "UNKNOWN_STATUS";

/**
 * What the library's witness check found about a witness it refused (`cuzk_witness_check`), as far
 * as it got: the facts its message words, as data, for callers that word their own refusals.
 */
export interface WitnessFacts {
  /** The curve the .wtns prime names; absent for raw values, a prime of no supported curve, or a header not read. */
  curve?: CurveName;
  /** Values the witness holds: the .wtns count, or byteLength / 32 (rounded down) for raw; 0 when the header was not read. */
  values: number;
  /** Index of the first value not below r; absent when every value scanned was below r, or no scan was made. */
  firstBadIndex?: number;
}

/** Options of the CuzkError constructor. */
export interface CuzkErrorOptions {
  /** The numeric cuzk_status, when the error came from the library. */
  status?: number;
  /** The message the library wrote, verbatim. */
  nativeMessage?: string;
  /** What was being done (e.g. "cuzk_key_open(circuit.zkey)"). */
  operation?: string;
  /** A refused witness's facts (Key.checkWitness, Key.checkWitnessShape). */
  witness?: WitnessFacts;
  /** The plan of a budget below the minimum (planMemory's OUT_OF_MEMORY), with `minBudget` set. */
  memoryPlan?: MemoryPlan;
  cause?: unknown;
}

/** An error of the cuzk library or of its TypeScript bindings. */
export class CuzkError extends Error {
  /** Symbolic code, e.g. "FORMAT", "UNSATISFIED", "BUSY", "LOAD". */
  readonly code: CuzkErrorCode;
  /** The numeric cuzk_status, when the error came from the library. */
  readonly status: number | undefined;
  /** The message the library wrote, verbatim ("" when none). */
  readonly nativeMessage: string;
  /** What was being done when the error occurred. */
  readonly operation: string | undefined;
  /** A refused witness's facts, when the error is a witness check's refusal. */
  readonly witness: WitnessFacts | undefined;
  /** The plan the library filled in when it refused a budget below the minimum (`planMemory`): `minBudget` is the least budget. */
  readonly memoryPlan: MemoryPlan | undefined;

  constructor(code: CuzkErrorCode, message: string, options: CuzkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CuzkError";
    this.code = code;
    this.status = options.status;
    this.nativeMessage = options.nativeMessage ?? "";
    this.operation = options.operation;
    this.witness = options.witness;
    this.memoryPlan = options.memoryPlan;
  }
}

/** A fresh error buffer for one native call. */
export function errorBuffer(): Uint8Array {
  return new Uint8Array(ERROR_BUFFER_BYTES);
}

/** The NUL-terminated text in `buffer` ("" when empty). */
export function readErrorText(buffer: Uint8Array): string {
  const end = buffer.indexOf(0);
  return new TextDecoder().decode(buffer.subarray(0, end < 0 ? buffer.length : end));
}

/** The symbolic code of a numeric cuzk_status. */
export function statusCode(status: number): CuzkErrorCode | "OK" {
  return STATUS_NAMES[status] ?? "UNKNOWN_STATUS";
}

/**
 * Throws a CuzkError when `status` is not CUZK_OK, with the message the library wrote into
 * `errorText`, worded by `word` (by default prefixed with `operation`).
 */
export function check(status: number, errorText: Uint8Array, operation?: string, word?: (reason: string) => string): void {
  if (status === 0) return;
  const code = statusCode(status) as CuzkErrorCode;
  const nativeMessage = readErrorText(errorText);
  const text = nativeMessage || `status ${status} (${code})`;
  const message = word ? word(text) : operation ? `${operation}: ${text}` : text;
  throw new CuzkError(code, message, { status, nativeMessage, operation });
}
