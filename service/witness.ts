/**
 * @module
 * Witness checks done at submission, before a job may join a batch. The check itself is the
 * library's (`Key.checkWitness`, the one `cuzk_prove` makes first: header, prime against the key's
 * curve, count against n_vars, every value below r, w[0] = 1); here its refusals become the
 * service's 422 codes, and the values are copied out as raw Fr (n_vars × 32 bytes). Every queued
 * witness of a key then has the same form and size, so a batch is uniform, and a malformed witness
 * is refused with a message that names the problem instead of failing a library call shared with
 * other clients' jobs.
 */
import { CuzkError, FR_BYTES, isWtns } from "../mod.ts";
import { ServiceError } from "./errors.ts";
import type { RegisteredKey } from "./keys.ts";

const refusal = (message: string, code: string) => new ServiceError(422, code, message, "/witness");

/** The service's refusal for the library's: which 422 code each native status becomes. */
function refusalOf(error: unknown, bytes: Uint8Array, key: RegisteredKey): unknown {
  if (!(error instanceof CuzkError)) return error;
  // The library's words, which name what is wrong (section, curves, counts, the value's index).
  const message = `key ${key.id}: ${error.nativeMessage || error.message}`;
  switch (error.code) {
    case "FORMAT":
      return refusal(message, "WITNESS_FORMAT");
    case "CURVE_MISMATCH":
      return refusal(message, "CURVE_MISMATCH");
    case "WITNESS_LENGTH":
      if (!isWtns(bytes)) {
        // Not a .wtns, so the bytes were taken as raw values, and they are not n_vars of them.
        const rawLength = key.info.nVars * FR_BYTES;
        return refusal(
          `${bytes.byteLength} bytes is neither a .wtns file (no "wtns" magic) nor ${key.info.nVars} raw 32-byte values (${rawLength} bytes) for key ${key.id}`,
          "WITNESS_FORMAT",
        );
      }
      return refusal(message, "WITNESS_LENGTH");
    case "INVALID_ARGUMENT": // a value not below r (the message names its index)
    case "UNSATISFIED": // w[0] != 1
      return refusal(message, "WITNESS_RANGE");
    default:
      return error;
  }
}

/**
 * Checks `bytes` (a .wtns file, or n_vars raw values) against `key` and returns the raw values in
 * a fresh buffer. Throws a 422 ServiceError naming what is wrong.
 */
export function normalizeWitness(bytes: Uint8Array, key: RegisteredKey): Uint8Array {
  let valuesOffset: number;
  try {
    valuesOffset = key.prover.key.checkWitness(bytes).valuesOffset;
  } catch (error) {
    throw refusalOf(error, bytes, key);
  }
  return bytes.slice(valuesOffset, valuesOffset + key.info.nVars * FR_BYTES);
}
