/**
 * @module
 * Circuit inputs as the native witness library takes them, read exactly as circom_runtime reads
 * them for the WASM generator (so both give the same witness): each top-level key is a signal
 * name, hashed with circom's fnv1a-64; its value, flattened (nested arrays in order), gives the
 * signal's values, each `BigInt(v)` reduced into [0, p). Names and value counts are checked here
 * against the circuit's input table, so errors name the signal.
 */
import { CuzkError } from "../errors.ts";
import type { CircuitInput } from "../witness_calculator.ts";

/** circom's fnv1a-64 of a signal name (over UTF-16 code units, as circom_runtime hashes). */
export function fnv1a64(name: string): bigint {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < name.length; i++) {
    hash ^= BigInt(name.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash;
}

function flatten(value: unknown, out: unknown[]): unknown[] {
  if (Array.isArray(value)) for (const item of value) flatten(item, out);
  else out.push(value);
  return out;
}

function fieldValue(value: unknown, prime: bigint, name: string): bigint {
  let v: bigint;
  try {
    v = BigInt(value as bigint | number | string | boolean);
  } catch (cause) {
    throw new CuzkError("INVALID_ARGUMENT", `input signal ${name}: ${JSON.stringify(String(value))} is not an integer`, { cause });
  }
  v %= prime;
  return v < 0n ? v + prime : v;
}

/** The inputs encoded for `cuzk_witness_compute`: name hashes and their values, 32 bytes LE each. */
export interface EncodedInputs {
  hashes: BigUint64Array;
  values: Uint8Array;
  valueCount: number;
}

/**
 * Encodes `input` for a circuit whose inputs are `sizes` (hash -> value count) over `prime`.
 * INVALID_ARGUMENT for an unknown signal, a wrong number of values, a value that is not an
 * integer, or inputs left unset.
 */
export function encodeInputs(input: CircuitInput, sizes: ReadonlyMap<bigint, number>, totalValues: number, prime: bigint): EncodedInputs {
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw new CuzkError("INVALID_ARGUMENT", "circuit inputs must be an object of signal name -> value(s)");
  }
  const names = Object.keys(input);
  const hashes = new BigUint64Array(names.length);
  const perName: bigint[][] = [];
  let count = 0;
  names.forEach((name, i) => {
    const hash = fnv1a64(name);
    const size = sizes.get(hash);
    if (size === undefined) throw new CuzkError("INVALID_ARGUMENT", `input signal ${name} is not an input of the circuit`);
    const flat = flatten(input[name], []);
    if (flat.length !== size) {
      throw new CuzkError("INVALID_ARGUMENT", `input signal ${name} takes ${size} value(s); ${flat.length} given`);
    }
    hashes[i] = hash;
    perName.push(flat.map((v) => fieldValue(v, prime, name)));
    count += size;
  });
  if (count !== totalValues) {
    throw new CuzkError("INVALID_ARGUMENT", `not all inputs have been set: ${count} of ${totalValues} values given`);
  }
  const values = new Uint8Array(Math.max(count, 1) * 32);
  const view = new DataView(values.buffer);
  let at = 0;
  for (const list of perName) {
    for (let v of list) {
      for (let limb = 0; limb < 4; limb++) {
        view.setBigUint64(at + 8 * limb, v & 0xffffffffffffffffn, true);
        v >>= 64n;
      }
      at += 32;
    }
  }
  return { hashes, values, valueCount: count };
}
