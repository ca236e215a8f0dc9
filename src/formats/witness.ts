/**
 * @module
 * Witnesses in the forms the prover accepts: the bytes of a snarkjs .wtns file (detected by its
 * magic), raw Fr values (n_vars × 32 bytes, standard LE, w[0] = 1), or bigints. Only the header
 * of a .wtns is parsed here (to find the values and the public signals); the library checks the
 * rest.
 */
import { CuzkError } from "../errors.ts";
import { ABI } from "../ffi/symbols.ts";
import { readLE, writeLE } from "./snarkjs.ts";

const WTNS_MAGIC = [0x77, 0x74, 0x6e, 0x73]; // "wtns"

/** True when `bytes` starts with the .wtns magic. */
export function isWtns(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && WTNS_MAGIC.every((b, i) => bytes[i] === b);
}

/** Where the values of a .wtns file lie. */
export interface WtnsLayout {
  /** Bytes per value (32 for both curves). */
  n8: number;
  /** The prime of the file (the scalar field r). */
  prime: bigint;
  /** Number of values (= the key's n_vars). */
  count: number;
  /** Byte offset of value 0. */
  valuesOffset: number;
}

/** Parses the section table of a .wtns file. */
export function wtnsLayout(bytes: Uint8Array): WtnsLayout {
  if (!isWtns(bytes)) throw new CuzkError("FORMAT", "not a .wtns file (bad magic)");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (end: number) => {
    if (end > bytes.length) throw new CuzkError("FORMAT", ".wtns file is truncated");
  };
  need(12);
  const sections = view.getUint32(8, true);
  let at = 12;
  let header: { n8: number; prime: bigint; count: number } | undefined;
  let valuesAt: number | undefined, valuesSize = 0;
  for (let i = 0; i < sections; i++) {
    need(at + 12);
    const id = view.getUint32(at, true);
    const size = Number(view.getBigUint64(at + 4, true));
    const body = at + 12;
    need(body + size);
    if (id === 1) {
      const n8 = view.getUint32(body, true);
      need(body + 4 + n8 + 4);
      header = { n8, prime: readLE(bytes, body + 4, n8), count: view.getUint32(body + 4 + n8, true) };
    } else if (id === 2) {
      valuesAt = body;
      valuesSize = size;
    }
    at = body + size;
  }
  if (!header || valuesAt === undefined) throw new CuzkError("FORMAT", ".wtns file lacks its header or values section");
  if (valuesSize < header.count * header.n8) throw new CuzkError("FORMAT", ".wtns values section is shorter than its count");
  return { ...header, valuesOffset: valuesAt };
}

/** w[1..nPublic] of a witness (either form) as decimal strings: snarkjs's public.json. */
export function publicSignalsOf(bytes: Uint8Array, nPublic: number): string[] {
  let offset = 0, n8: number = ABI.FR_BYTES, count = Math.floor(bytes.length / ABI.FR_BYTES);
  if (isWtns(bytes)) {
    const layout = wtnsLayout(bytes);
    offset = layout.valuesOffset;
    n8 = layout.n8;
    count = layout.count;
  }
  if (count < nPublic + 1) {
    throw new CuzkError("WITNESS_LENGTH", `witness has ${count} values, fewer than the ${nPublic + 1} the public signals need`);
  }
  return Array.from({ length: nPublic }, (_, i) => readLE(bytes, offset + (i + 1) * n8, n8).toString());
}

/** Encodes bigints as raw Fr values (32 bytes LE each) into `out` at `offset`. */
export function encodeRawWitness(values: ReadonlyArray<bigint>, out: Uint8Array, offset = 0): void {
  values.forEach((value, i) => writeLE(out, offset + i * ABI.FR_BYTES, ABI.FR_BYTES, value));
}
