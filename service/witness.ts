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
 * What the library's message says, without the ".wtns: " / "wtns: " prefixes it puts before a
 * reader's refusal.
 */
const detailOf = (error: CuzkError) => (error.nativeMessage || error.message).replace(/^\.wtns: (wtns: )?/, "");

/**
 * A fact the library's message names (cuzk.h: a refused value's index, the witness's curve, its
 * value count), read by the words around it; undefined when the message has other words.
 */
const named = (error: CuzkError, pattern: RegExp): string | undefined => pattern.exec(error.nativeMessage)?.[1];

/**
 * The service's refusal for the library's: the 422 code each native status becomes, worded from
 * the status, what the key is (id, curve, n_vars) and the facts the library's message names.
 */
function refusalOf(error: unknown, bytes: Uint8Array, key: RegisteredKey): unknown {
  if (!(error instanceof CuzkError)) return error;
  const { id, info } = key;
  switch (error.code) {
    case "FORMAT":
      return refusal(`malformed .wtns: ${detailOf(error)}`, "WITNESS_FORMAT");
    case "CURVE_MISMATCH": {
      const curve = named(error, /^the witness is for (\w+) but/);
      // Without a curve named, the .wtns is over a prime (or value size) of no supported curve.
      const over = curve ? `the witness is over the ${curve} scalar field` : detailOf(error);
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
      const count = named(error, /^the witness has (\d+) values/);
      return refusal(`${count ? `the witness has ${count} values` : detailOf(error)}; key ${id} needs ${info.nVars}`, "WITNESS_LENGTH");
    }
    case "INVALID_ARGUMENT": { // a value not below r (the message names its index)
      const index = named(error, /^witness value (\d+) is not < r/);
      return refusal(index ? `witness value ${index} is not below the ${info.curve} scalar field modulus` : detailOf(error), "WITNESS_RANGE");
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
    valuesOffset = key.prover.key.checkWitness(bytes).valuesOffset;
  } catch (error) {
    throw refusalOf(error, bytes, key);
  }
  return bytes.slice(valuesOffset, valuesOffset + key.info.nVars * FR_BYTES);
}
