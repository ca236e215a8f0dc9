/**
 * @module
 * Witnesses in the forms the prover accepts: the bytes of a snarkjs .wtns file (told apart by its
 * magic), raw Fr values (n_vars × 32 bytes, standard LE, w[0] = 1), or bigints. Nothing here
 * checks a witness: the library does (`Key.checkWitness`, the same check every proof makes), and
 * reports where the values start.
 */
import { CuzkError } from "../errors.ts";
import { ABI } from "../ffi/symbols.ts";
import { readLE, writeLE } from "./snarkjs.ts";

const WTNS_MAGIC = [0x77, 0x74, 0x6e, 0x73]; // "wtns"

/** True when `bytes` start with the .wtns magic (a raw witness never does: w[0] = 1). */
export function isWtns(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && WTNS_MAGIC.every((b, i) => bytes[i] === b);
}

/**
 * w[1..nPublic] as decimal strings (snarkjs's public.json), from a witness the library checked
 * and whose values start at `valuesOffset`.
 */
export function publicSignalsAt(bytes: Uint8Array, valuesOffset: number, nPublic: number): string[] {
  return Array.from({ length: nPublic }, (_, i) => readLE(bytes, valuesOffset + (i + 1) * ABI.FR_BYTES, ABI.FR_BYTES).toString());
}

/**
 * Encodes bigints as raw Fr values (32 bytes LE each) into `out` at `offset`; a value that is not a
 * bigint in [0, 2^256) is INVALID_ARGUMENT (whether each is below r is the library's check).
 */
export function encodeRawWitness(values: ReadonlyArray<bigint>, out: Uint8Array, offset = 0): void {
  values.forEach((value, i) => {
    if (typeof value !== "bigint" || value < 0n || value >> 256n !== 0n) {
      throw new CuzkError("INVALID_ARGUMENT", `witness value ${i} is not a bigint in [0, 2^256)`);
    }
    writeLE(out, offset + i * ABI.FR_BYTES, ABI.FR_BYTES, value);
  });
}
