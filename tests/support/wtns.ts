/**
 * @module
 * The tests' own reading of a well-formed snarkjs .wtns file (an oracle independent of the
 * library's parser): the prime, the value count and where the values start. It trusts its input:
 * malformed files are the library's to refuse, and tests/witness_check_test.ts checks that it does.
 */
import { readLE } from "../../src/formats/snarkjs.ts";

/** The header and values of a .wtns file. */
export interface WtnsParts {
  n8: number;
  prime: bigint;
  count: number;
  valuesOffset: number;
}

/** Walks the sections of a .wtns file: 1 is the header (n8, prime, count), 2 the values. */
export function wtnsParts(bytes: Uint8Array): WtnsParts {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 12, header: Omit<WtnsParts, "valuesOffset"> | undefined, valuesOffset = -1;
  for (let i = 0; i < view.getUint32(8, true); i++) {
    const id = view.getUint32(at, true), size = Number(view.getBigUint64(at + 4, true)), body = at + 12;
    if (id === 1) {
      const n8 = view.getUint32(body, true);
      header = { n8, prime: readLE(bytes, body + 4, n8), count: view.getUint32(body + 4 + n8, true) };
    } else if (id === 2) {
      valuesOffset = body;
    }
    at = body + size;
  }
  if (!header || valuesOffset < 0) throw new Error("not a well-formed .wtns file");
  return { ...header, valuesOffset };
}

/** The raw values (count × 32 bytes) of a .wtns file, copied, and as bigints. */
export function rawValues(wtns: Uint8Array): { raw: Uint8Array; values: bigint[] } {
  const parts = wtnsParts(wtns);
  const raw = wtns.slice(parts.valuesOffset, parts.valuesOffset + parts.count * 32);
  return { raw, values: Array.from({ length: parts.count }, (_, i) => readLE(raw, i * 32, 32)) };
}
