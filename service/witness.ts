/**
 * @module
 * Witness checks done at submission, before a job may join a batch: a .wtns (or raw values) is
 * parsed, its field, length, range and w[0] checked against the key, and the values copied out as
 * raw Fr values (n_vars × 32 bytes). Every queued witness of a key then has the same form and size,
 * so a batch is uniform, and a malformed witness is refused with a 422 that names the problem
 * instead of failing a library call shared with other clients' jobs.
 */
import type { CurveParameters } from "../src/formats/snarkjs.ts";
import { BLS12_381, BN254, writeLE } from "../src/formats/snarkjs.ts";
import { isWtns, wtnsLayout } from "../src/formats/witness.ts";
import { ServiceError } from "./errors.ts";

const FR_BYTES = 32;

/** What the checks need to know about a key. */
export interface WitnessTarget {
  curve: CurveParameters;
  nVars: number;
  /** The key's id, for messages. */
  keyId: string;
}

const modulusBytes = new Map<bigint, Uint8Array>();

/** r as 32 little-endian bytes (cached per curve). */
function modulusLE(r: bigint): Uint8Array {
  let bytes = modulusBytes.get(r);
  if (!bytes) {
    bytes = new Uint8Array(FR_BYTES);
    writeLE(bytes, 0, FR_BYTES, r);
    modulusBytes.set(r, bytes);
  }
  return bytes;
}

/** True when the 32-byte LE value at `offset` is below `r` (compared from the top byte down). */
function belowModulus(values: Uint8Array, offset: number, r: Uint8Array): boolean {
  for (let i = FR_BYTES - 1; i >= 0; i--) {
    const a = values[offset + i], b = r[i];
    if (a !== b) return a < b;
  }
  return false;
}

function curveNameOfPrime(prime: bigint): string | undefined {
  return [BN254, BLS12_381].find((c) => c.r === prime)?.name;
}

const invalid = (message: string, code = "INVALID_WITNESS") => new ServiceError(422, code, message, "/witness");

/**
 * Checks `bytes` (a .wtns file, or n_vars raw values) against `target` and returns the raw values
 * in a fresh buffer. Throws a 422 ServiceError naming what is wrong.
 */
export function normalizeWitness(bytes: Uint8Array, target: WitnessTarget): Uint8Array {
  const rawLength = target.nVars * FR_BYTES;
  let valuesOffset = 0;
  if (isWtns(bytes)) {
    let layout;
    try {
      layout = wtnsLayout(bytes);
    } catch (error) {
      throw invalid(`malformed .wtns: ${(error as Error).message}`, "WITNESS_FORMAT");
    }
    if (layout.prime !== target.curve.r) {
      const other = curveNameOfPrime(layout.prime);
      throw invalid(
        `the witness is over ${other ? `the ${other} scalar field` : `an unknown prime field (${layout.prime})`}; key ${target.keyId} is ${target.curve.name}`,
        "CURVE_MISMATCH",
      );
    }
    if (layout.n8 !== FR_BYTES) throw invalid(`the .wtns stores ${layout.n8}-byte values; ${FR_BYTES} expected`, "WITNESS_FORMAT");
    if (layout.count !== target.nVars) {
      throw invalid(`the witness has ${layout.count} values; key ${target.keyId} needs ${target.nVars}`, "WITNESS_LENGTH");
    }
    valuesOffset = layout.valuesOffset;
  } else if (bytes.byteLength !== rawLength) {
    throw invalid(
      `${bytes.byteLength} bytes is neither a .wtns file (no "wtns" magic) nor ${target.nVars} raw 32-byte values (${rawLength} bytes) for key ${target.keyId}`,
      "WITNESS_FORMAT",
    );
  }
  const raw = bytes.slice(valuesOffset, valuesOffset + rawLength);
  const r = modulusLE(target.curve.r);
  for (let i = 0; i < target.nVars; i++) {
    if (!belowModulus(raw, i * FR_BYTES, r)) throw invalid(`witness value ${i} is not below the ${target.curve.name} scalar field modulus`, "WITNESS_RANGE");
  }
  if (raw[0] !== 1 || raw.subarray(1, FR_BYTES).some((b) => b !== 0)) throw invalid("witness value 0 must be 1 (the constant wire)", "WITNESS_RANGE");
  return raw;
}
