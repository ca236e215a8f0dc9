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

/**
 * The library's own explanation, for refusals with no fact to word them from (a malformed .wtns,
 * a prime of no supported curve): its message without the ".wtns: " / "wtns: " prefixes.
 */
const detailOf = (error: CuzkError) => (error.nativeMessage || error.message).replace(/^\.wtns: (wtns: )?/, "");

/**
 * The service's refusal for the library's: the 422 code each native status becomes, worded from
 * the status, what the key is (id, curve, n_vars) and the facts the check reports (`error.witness`:
 * the witness's curve, its value count, the first value not below r).
 */
function refusalOf(error: unknown, bytes: Uint8Array, key: RegisteredKey): unknown {
  if (!(error instanceof CuzkError)) return error;
  const { id, info } = key;
  const facts = error.witness;
  switch (error.code) {
    case "FORMAT":
      return refusal(`malformed .wtns: ${detailOf(error)}`, "WITNESS_FORMAT");
    case "CURVE_MISMATCH": {
      // Without a curve, the .wtns is over a prime (or value size) of no supported curve.
      const over = facts?.curve ? `the witness is over the ${facts.curve} scalar field` : detailOf(error);
      return refusal(`${over}; key ${id} is ${info.curve}`, "CURVE_MISMATCH");
    }
    case "WITNESS_LENGTH": {
      if (!isWtns(bytes)) {
        // Not a .wtns, so the bytes were taken as raw values, and they are not n_vars of them.
        return refusal(
          `${bytes.byteLength} bytes is neither a .wtns file (no "wtns" magic) nor ${info.nVars} raw 32-byte values (${info.nVars * FR_BYTES} bytes) for key ${id}`,
          "WITNESS_FORMAT",
        );
      }
      const count = facts ? `the witness has ${facts.values} values` : detailOf(error);
      return refusal(`${count}; key ${id} needs ${info.nVars}`, "WITNESS_LENGTH");
    }
    case "INVALID_ARGUMENT": { // a value not below r
      const index = facts?.firstBadIndex;
      return refusal(index === undefined ? detailOf(error) : `witness value ${index} is not below the ${info.curve} scalar field modulus`, "WITNESS_RANGE");
    }
    case "UNSATISFIED": // the only refusal of this code here: w[0] != 1
      return refusal("witness value 0 must be 1 (the constant wire)", "WITNESS_RANGE");
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
    valuesOffset = key.key.checkWitness(bytes).valuesOffset;
  } catch (error) {
    throw refusalOf(error, bytes, key);
  }
  return bytes.slice(valuesOffset, valuesOffset + key.info.nVars * FR_BYTES);
}
