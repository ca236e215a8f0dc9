/**
 * @module
 * The limits on every size a caller of the bindings chooses, checked before anything is
 * allocated or started, each refused with a CuzkError (INVALID_ARGUMENT, or OUT_OF_MEMORY for
 * memory this machine does not have). docs/typescript.md lists them.
 */
import { totalmem } from "node:os";
import { CuzkError } from "./errors.ts";

/** Limits that do not depend on the machine. */
export const LIMITS = {
  /** Witnesses in one proveBatch call (the service's --batch-size allows as many). */
  batchWitnesses: 1024,
  /** Calls queued or running on one prover; each holds its staged witnesses. */
  queuedCalls: 64,
  /** Buffers a BufferPool holds (handed out plus idle), by default and at most. */
  poolBuffers: 64,
  poolBuffersMax: 4096,
  /** Bytes a witness file may have beyond the key's nVars × 32 bytes of values (its .wtns header). */
  witnessFileSlack: 64 * 1024,
  /** Bytes of a circuit.wasm read from a path. */
  wasmFileBytes: 2 ** 31 - 1,
} as const;

/** The largest GPU index: cuzk.h takes an int32_t. */
export const MAX_DEVICE = 2 ** 31 - 1;

/** `value` if it is an integer in [min, max], else an INVALID_ARGUMENT CuzkError naming `what` and the limits. */
export function integerIn(value: unknown, what: string, min: number, max: number, why = ""): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    const shown = typeof value === "string" ? JSON.stringify(value) : String(value);
    throw new CuzkError("INVALID_ARGUMENT", `${what} must be an integer from ${min} to ${max}${why}, not ${shown}`);
  }
  return value;
}

/** A GPU index: a safe integer in int32 range (so 2^32 is refused, not truncated to GPU 0). */
export function deviceIndex(value: unknown, what = "device"): number {
  return integerIn(value, what, 0, MAX_DEVICE);
}

/** Bytes of host memory a caller asks for: at least 1, at most this machine's memory. */
export function hostBytes(value: unknown, what: string): number {
  const limit = totalmem();
  if (typeof value === "number" && Number.isSafeInteger(value) && value > limit) {
    throw new CuzkError("OUT_OF_MEMORY", `${what} of ${value} bytes is more than this machine's memory (${limit} bytes)`);
  }
  return integerIn(value, what, 1, limit);
}
