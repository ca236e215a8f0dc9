/**
 * @module
 * Conversions between the library's fixed byte encodings and snarkjs's JSON shapes
 * (proof.json, public.json, verification_key.json; see docs in formats.md §5): decimal strings of
 * standard-form affine coordinates, with a projective z that is "1" (or "0" for infinity).
 * The byte side is the "output encoding" of cuzk.h: little-endian standard-form coordinates,
 * G2 as c0 then c1, all-zero bytes for infinity.
 */
import { CuzkError } from "../errors.ts";
import { ABI } from "../ffi/symbols.ts";

/** A curve as the library and snarkjs name it. */
export interface CurveParameters {
  /** The library's name. */
  name: "bn254" | "bls12_381";
  /** snarkjs's name (proof.curve, vkey.curve). */
  snarkjsName: "bn128" | "bls12381";
  /** cuzk_curve value. */
  id: number;
  /** Base field modulus. */
  q: bigint;
  /** Scalar field modulus. */
  r: bigint;
  /** Bytes of one base field coordinate. */
  fqBytes: number;
  /** Bytes of a proof: A (G1) | B (G2) | C (G1). */
  proofBytes: number;
}

/** BN254 (snarkjs "bn128"). */
export const BN254: CurveParameters = {
  name: "bn254",
  snarkjsName: "bn128",
  id: ABI.CURVE_BN254,
  q: 21888242871839275222246405745257275088696311157297823662689037894645226208583n,
  r: 21888242871839275222246405745257275088548364400416034343698204186575808495617n,
  fqBytes: 32,
  proofBytes: ABI.PROOF_BYTES_BN254,
};

/** BLS12-381 (snarkjs "bls12381"). */
export const BLS12_381: CurveParameters = {
  name: "bls12_381",
  snarkjsName: "bls12381",
  id: ABI.CURVE_BLS12_381,
  q: 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaabn,
  r: 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n,
  fqBytes: 48,
  proofBytes: ABI.PROOF_BYTES_BLS12_381,
};

/** The curve of a cuzk_curve value, a library name or a snarkjs name. */
export function curveOf(key: number | string): CurveParameters {
  for (const curve of [BN254, BLS12_381]) {
    if (key === curve.id || key === curve.name || key === curve.snarkjsName) return curve;
  }
  if (key === "bn254" || key === "alt_bn128") return BN254;
  throw new CuzkError("UNSUPPORTED", `unknown curve ${JSON.stringify(key)}`);
}

/** A G1 point as snarkjs writes it: [x, y, z]. */
export type G1Json = [string, string, string];
/** A G2 point as snarkjs writes it: [[x.c0, x.c1], [y.c0, y.c1], [z.c0, z.c1]]. */
export type G2Json = [[string, string], [string, string], [string, string]];

/** proof.json, in snarkjs's shape. */
export interface Groth16Proof {
  pi_a: G1Json;
  pi_b: G2Json;
  pi_c: G1Json;
  protocol: "groth16";
  curve: "bn128" | "bls12381";
}

/** verification_key.json as `snarkjs zkey export verificationkey` writes it (fields used here). */
export interface VerificationKeyJson {
  protocol: string;
  curve: string;
  nPublic: number;
  vk_alpha_1: string[];
  vk_beta_2: string[][];
  vk_gamma_2: string[][];
  vk_delta_2: string[][];
  IC: string[][];
  [extra: string]: unknown;
}

/** Reads `length` bytes little-endian at `offset`. */
export function readLE(bytes: Uint8Array, offset: number, length: number): bigint {
  let value = 0n;
  for (let i = length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[offset + i]);
  return value;
}

/** Writes `value` as `length` bytes little-endian at `offset`. */
export function writeLE(bytes: Uint8Array, offset: number, length: number, value: bigint): void {
  if (value < 0n || value >> BigInt(8 * length) !== 0n) throw new RangeError(`value does not fit in ${length} bytes`);
  for (let i = 0; i < length; i++) {
    bytes[offset + i] = Number(value & 0xffn);
    value >>= 8n;
  }
}

function isZero(bytes: Uint8Array, offset: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[offset + i] !== 0) return false;
  return true;
}

// ---- field arithmetic for the rare non-affine input (Jacobian z != 1) ---------------------------
const mod = (a: bigint, m: bigint) => ((a % m) + m) % m;
function inverse(a: bigint, m: bigint): bigint {
  let [t, newT, r, newR] = [0n, 1n, m, mod(a, m)];
  while (newR !== 0n) {
    const k = r / newR;
    [t, newT] = [newT, t - k * newT];
    [r, newR] = [newR, r - k * newR];
  }
  if (r !== 1n) throw new CuzkError("FORMAT", "point has a non-invertible z");
  return mod(t, m);
}
type Fp2 = [bigint, bigint];
const fp2Mul = (a: Fp2, b: Fp2, q: bigint): Fp2 => [mod(a[0] * b[0] - a[1] * b[1], q), mod(a[0] * b[1] + a[1] * b[0], q)];
function fp2Inverse(a: Fp2, q: bigint): Fp2 {
  // Both curves build Fp2 as Fp[u]/(u^2 + 1).
  const norm = inverse(mod(a[0] * a[0] + a[1] * a[1], q), q);
  return [mod(a[0] * norm, q), mod(-a[1] * norm, q)];
}

function parseCoordinate(text: unknown, q: bigint, what: string): bigint {
  if (typeof text !== "string" && typeof text !== "number" && typeof text !== "bigint") {
    throw new CuzkError("FORMAT", `${what}: expected a decimal string`);
  }
  let value: bigint;
  try {
    value = BigInt(text);
  } catch {
    throw new CuzkError("FORMAT", `${what}: ${JSON.stringify(text)} is not an integer`);
  }
  if (value < 0n || value >= q) throw new CuzkError("FORMAT", `${what}: coordinate out of range`);
  return value;
}

/** Writes a snarkjs G1 point into `out` at `offset` (output encoding). */
export function writeG1(curve: CurveParameters, point: unknown, out: Uint8Array, offset: number, what = "G1 point"): void {
  if (!Array.isArray(point) || point.length < 2) throw new CuzkError("FORMAT", `${what}: expected [x, y, z]`);
  const { q, fqBytes } = curve;
  const x = parseCoordinate(point[0], q, what);
  const y = parseCoordinate(point[1], q, what);
  const z = point.length > 2 ? parseCoordinate(point[2], q, what) : 1n;
  if (z === 0n) {
    out.fill(0, offset, offset + 2 * fqBytes);
    return;
  }
  let ax = x, ay = y;
  if (z !== 1n) {
    const zi = inverse(z, q), zi2 = mod(zi * zi, q);
    ax = mod(x * zi2, q);
    ay = mod(y * zi2 * zi, q);
  }
  writeLE(out, offset, fqBytes, ax);
  writeLE(out, offset + fqBytes, fqBytes, ay);
}

/** Writes a snarkjs G2 point into `out` at `offset` (output encoding: x.c0 x.c1 y.c0 y.c1). */
export function writeG2(curve: CurveParameters, point: unknown, out: Uint8Array, offset: number, what = "G2 point"): void {
  if (!Array.isArray(point) || point.length < 2) throw new CuzkError("FORMAT", `${what}: expected [[x0,x1],[y0,y1],[z0,z1]]`);
  const { q, fqBytes } = curve;
  const pair = (value: unknown, name: string): Fp2 => {
    if (!Array.isArray(value) || value.length !== 2) throw new CuzkError("FORMAT", `${what}: ${name} must be [c0, c1]`);
    return [parseCoordinate(value[0], q, what), parseCoordinate(value[1], q, what)];
  };
  let x = pair(point[0], "x"), y = pair(point[1], "y");
  const z = point.length > 2 ? pair(point[2], "z") : [1n, 0n] as Fp2;
  if (z[0] === 0n && z[1] === 0n) {
    out.fill(0, offset, offset + 4 * fqBytes);
    return;
  }
  if (!(z[0] === 1n && z[1] === 0n)) {
    const zi = fp2Inverse(z, q), zi2 = fp2Mul(zi, zi, q);
    x = fp2Mul(x, zi2, q);
    y = fp2Mul(y, fp2Mul(zi2, zi, q), q);
  }
  [x[0], x[1], y[0], y[1]].forEach((c, i) => writeLE(out, offset + i * fqBytes, fqBytes, c));
}

/** Reads a G1 point (output encoding) as snarkjs JSON. */
export function readG1(curve: CurveParameters, bytes: Uint8Array, offset: number): G1Json {
  const n = curve.fqBytes;
  if (isZero(bytes, offset, 2 * n)) return ["0", "1", "0"];
  return [readLE(bytes, offset, n).toString(), readLE(bytes, offset + n, n).toString(), "1"];
}

/** Reads a G2 point (output encoding) as snarkjs JSON. */
export function readG2(curve: CurveParameters, bytes: Uint8Array, offset: number): G2Json {
  const n = curve.fqBytes;
  if (isZero(bytes, offset, 4 * n)) return [["0", "0"], ["1", "0"], ["0", "0"]];
  const c = (i: number) => readLE(bytes, offset + i * n, n).toString();
  return [[c(0), c(1)], [c(2), c(3)], ["1", "0"]];
}

/** A proof (A | B | C, output encoding) as snarkjs proof.json. */
export function proofToJson(curve: CurveParameters, bytes: Uint8Array, offset = 0): Groth16Proof {
  const n = curve.fqBytes;
  return {
    pi_a: readG1(curve, bytes, offset),
    pi_b: readG2(curve, bytes, offset + 2 * n),
    pi_c: readG1(curve, bytes, offset + 6 * n),
    protocol: "groth16",
    curve: curve.snarkjsName,
  };
}

/** snarkjs proof.json as proof bytes (output encoding). */
export function proofFromJson(curve: CurveParameters, proof: Groth16Proof | Record<string, unknown>): Uint8Array {
  const n = curve.fqBytes;
  const out = new Uint8Array(curve.proofBytes);
  writeG1(curve, proof.pi_a, out, 0, "proof.pi_a");
  writeG2(curve, proof.pi_b, out, 2 * n, "proof.pi_b");
  writeG1(curve, proof.pi_c, out, 6 * n, "proof.pi_c");
  return out;
}

/** Public signals (decimal strings or bigints) as n × 32 bytes (Fr, standard LE); each must be < r. */
export function publicSignalsToBytes(curve: CurveParameters, signals: ReadonlyArray<string | bigint | number>): Uint8Array {
  const out = new Uint8Array(signals.length * ABI.FR_BYTES);
  signals.forEach((signal, i) => {
    let value: bigint;
    try {
      value = BigInt(signal);
    } catch {
      throw new CuzkError("FORMAT", `public signal ${i}: ${JSON.stringify(signal)} is not an integer`);
    }
    if (value < 0n || value >= curve.r) throw new CuzkError("FORMAT", `public signal ${i} is not below the scalar field modulus`);
    writeLE(out, i * ABI.FR_BYTES, ABI.FR_BYTES, value);
  });
  return out;
}

/**
 * snarkjs verification_key.json as the bytes cuzk_key_export_vk writes:
 * alpha1 (G1) | beta2 (G2) | gamma2 (G2) | delta2 (G2) | IC[0..nPublic] (G1).
 */
export function verificationKeyFromJson(vkey: VerificationKeyJson): { curve: CurveParameters; bytes: Uint8Array; nPublic: number } {
  if (vkey.protocol !== "groth16") throw new CuzkError("FORMAT", `verification key protocol is ${vkey.protocol}, not groth16`);
  const curve = curveOf(vkey.curve);
  if (!Array.isArray(vkey.IC) || vkey.IC.length < 1) throw new CuzkError("FORMAT", "verification key has no IC points");
  const nPublic = vkey.IC.length - 1;
  if (typeof vkey.nPublic === "number" && vkey.nPublic !== nPublic) {
    throw new CuzkError("FORMAT", `verification key says nPublic = ${vkey.nPublic} but has ${vkey.IC.length} IC points`);
  }
  const g1 = 2 * curve.fqBytes, g2 = 4 * curve.fqBytes;
  const bytes = new Uint8Array(g1 + 3 * g2 + (nPublic + 1) * g1);
  writeG1(curve, vkey.vk_alpha_1, bytes, 0, "vk_alpha_1");
  writeG2(curve, vkey.vk_beta_2, bytes, g1, "vk_beta_2");
  writeG2(curve, vkey.vk_gamma_2, bytes, g1 + g2, "vk_gamma_2");
  writeG2(curve, vkey.vk_delta_2, bytes, g1 + 2 * g2, "vk_delta_2");
  vkey.IC.forEach((point, i) => writeG1(curve, point, bytes, g1 + 3 * g2 + i * g1, `IC[${i}]`));
  return { curve, bytes, nPublic };
}

/** The vk bytes of cuzk_key_export_vk as the point fields of verification_key.json. */
export function verificationKeyToJson(curve: CurveParameters, bytes: Uint8Array) {
  const g1 = 2 * curve.fqBytes, g2 = 4 * curve.fqBytes;
  const icBytes = bytes.length - (g1 + 3 * g2);
  if (icBytes <= 0 || icBytes % g1 !== 0) throw new CuzkError("FORMAT", `vk of ${bytes.length} bytes has no whole IC section`);
  const count = icBytes / g1;
  return {
    protocol: "groth16" as const,
    curve: curve.snarkjsName,
    nPublic: count - 1,
    vk_alpha_1: readG1(curve, bytes, 0),
    vk_beta_2: readG2(curve, bytes, g1),
    vk_gamma_2: readG2(curve, bytes, g1 + g2),
    vk_delta_2: readG2(curve, bytes, g1 + 2 * g2),
    IC: Array.from({ length: count }, (_, i) => readG1(curve, bytes, g1 + 3 * g2 + i * g1)),
  };
}
