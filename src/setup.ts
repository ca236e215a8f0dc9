/**
 * @module
 * Synthetic circuits and the INSECURE development setup, for tests and benchmarks at sizes no real
 * circuit or trusted setup exists for (docs/benchmarks.md, "Synthetic circuits"):
 * - `synthCircuit` / `writeSynthCircuit`: an R1CS of any size with a witness that satisfies it,
 *   as snarkjs .r1cs and .wtns bytes or files, in the `uniform` or the `porep` profile;
 * - `setupInsecureDev`: a Groth16 proving key (.zkey, snarkjs format) and its verification key for
 *   an .r1cs, from toxic waste the library draws from the OS CSPRNG inside the call.
 *
 * Keys from `setupInsecureDev` are for testing only: the process that made them knew the toxic
 * waste, and whoever learnt it could forge proofs. Nothing here prints; callers warn their users
 * (the CLI's `cuzk setup --insecure-dev` does, on stderr).
 */
import { integerIn } from "./bounds.ts";
import { CuzkError } from "./errors.ts";
import { allocateStruct, decodeStruct, SETUP_INFO_LAYOUT } from "./ffi/structs.ts";
import type { Decoded } from "./ffi/structs.ts";
import { ABI } from "./ffi/symbols.ts";
import { asPointer } from "./ffi/types.ts";
import type { Pointer } from "./ffi/types.ts";
import { curveOf } from "./formats/snarkjs.ts";
import { circuitSizesOf, Key } from "./key.ts";
import type { CurveName } from "./library.ts";
import { Library, nativeOf } from "./library.ts";
import type { NativeBuffer } from "./memory/buffer.ts";
import { invokeAsync } from "./native_call.ts";
import type { CallArguments } from "./native_call.ts";
import { ProgressSlot } from "./progress.ts";
import type { LongCallOptions } from "./progress.ts";
import { snarkjsVerificationKey } from "./snarkjs_api.ts";
import type { SnarkjsVerificationKey } from "./snarkjs_api.ts";

/** Shapes of synthetic circuits (docs/benchmarks.md). */
export type SynthProfile = "uniform" | "porep";

/** What `synthCircuit` makes. */
export interface SynthOptions {
  curve: CurveName;
  /** Rows of the R1CS, 1 .. 2^30. */
  constraints: number;
  /** Default "porep". */
  profile?: SynthProfile;
  /** Public inputs (w[1..n]); at most `constraints`. Default 4. */
  publicInputs?: number;
  /** The same seed gives the same circuit and witness. Default 1. */
  seed?: number | bigint;
  library?: Library;
}

/** A synthetic circuit as the bytes of its snarkjs files. */
export interface SyntheticCircuit {
  r1cs: Uint8Array;
  wtns: Uint8Array;
}

/**
 * Options of `setupInsecureDev`. `onProgress` counts the key points made (`setup`; the total is
 * known once the .r1cs is read); aborting `signal` stops the setup between chunks of points (at
 * most 2^15 on the CPU, 2^20 on a GPU): it rejects with CANCELLED and leaves no file at zkeyPath.
 */
export interface DevSetupOptions extends LongCallOptions {
  /**
   * Worker threads; 0 (default) = the library's shared pool (every core). At most
   * `Library.info().cpuThreads`: more is refused with INVALID_ARGUMENT.
   */
  threads?: number;
  /** Compute the key points on the CPU even when a GPU is present (CUZK_SETUP_CPU_ONLY). */
  cpuOnly?: boolean;
  library?: Library;
}

/** What `setupInsecureDev` made and how long it took. */
export interface DevSetupResult {
  curve: CurveName;
  nVars: number;
  nPublic: number;
  nConstraints: number;
  domainSize: number;
  threads: number;
  g1WindowBits: number;
  g2WindowBits: number;
  /** Whether the key points were computed on GPU 0 (else on the CPU tables). */
  gpu: boolean;
  zkeyBytes: number;
  totalMs: number;
  /** Lagrange basis at tau, per-signal sums, H scalars. */
  scalarsMs: number;
  /** Fixed-base tables of the two generators. */
  tablesMs: number;
  /** Scalar multiplications and writing the file. */
  pointsMs: number;
  /** verification_key.json as `snarkjs zkey export verificationkey` writes it for the new key. */
  verificationKey: SnarkjsVerificationKey;
}

const PROFILES: Record<SynthProfile, number> = { uniform: ABI.SYNTH_UNIFORM, porep: ABI.SYNTH_POREP };

function synthArguments(options: SynthOptions): [number, number, number, number, bigint] {
  const profile = options.profile ?? "porep";
  if (!(profile in PROFILES)) throw new TypeError(`profile must be "uniform" or "porep", not ${JSON.stringify(profile)}`);
  const count = (value: number, what: string) => {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new TypeError(`${what} must be a 32-bit count, not ${value}`);
    return value;
  };
  return [
    curveOf(options.curve).id,
    PROFILES[profile],
    count(options.constraints, "constraints"),
    count(options.publicInputs ?? 4, "publicInputs"),
    BigInt.asUintN(64, BigInt(options.seed ?? 1)),
  ];
}

/** Makes a synthetic circuit and its witness in memory (off the JS thread). */
export async function synthCircuit(options: SynthOptions): Promise<SyntheticCircuit> {
  const native = nativeOf(options.library);
  const args = synthArguments(options);
  const r1csLength = new BigUint64Array(1), wtnsLength = new BigUint64Array(1);
  // Sizes first: with no buffers the call reports them (SHORT_BUFFER) without generating anything.
  await invokeAsync(native, "cuzk_synth_circuit", [...args, null, 0, r1csLength, null, 0, wtnsLength], { accept: "SHORT_BUFFER" });
  const r1cs = new Uint8Array(Number(r1csLength[0]));
  const wtns = new Uint8Array(Number(wtnsLength[0]));
  await invokeAsync(native, "cuzk_synth_circuit", [...args, r1cs, r1cs.length, r1csLength, wtns, wtns.length, wtnsLength]);
  return { r1cs, wtns };
}

/** Writes a synthetic circuit to `paths.r1cs` and its witness to `paths.wtns` (each whole or not at all). */
export async function writeSynthCircuit(options: SynthOptions, paths: { r1cs: string; wtns: string }): Promise<void> {
  const native = nativeOf(options.library);
  await invokeAsync(native, "cuzk_synth_circuit_write", [...synthArguments(options), paths.r1cs, paths.wtns], {
    detail: `${paths.r1cs}, ${paths.wtns}`,
  });
}

/** Bytes of one witness of a synthetic circuit as raw values (what `synthWitnesses` writes). */
export function synthWitnessBytes(options: SynthOptions): number {
  const [, profile, constraints, publicInputs] = synthArguments(options);
  const privateInputs = profile === ABI.SYNTH_POREP ? 256 : 16;
  return 32 * (1 + publicInputs + privateInputs + constraints);
}

/**
 * Witnesses of other inputs to one synthetic circuit (the circuit `options` names), written as raw
 * values (n_wires x 32 bytes, what a Prover takes) into `into[i]`, made in parallel off the JS
 * thread. `witnessSeeds[i]` picks witness i's inputs: 0 is `synthCircuit`'s own witness, any other
 * value other inputs; every output follows, so each witness satisfies the circuit. At most 1024.
 */
export async function synthWitnesses(options: SynthOptions, witnessSeeds: ReadonlyArray<number | bigint>, into: ReadonlyArray<NativeBuffer>): Promise<void> {
  if (witnessSeeds.length !== into.length) {
    throw new TypeError(`${witnessSeeds.length} witness seeds for ${into.length} buffers`);
  }
  integerIn(into.length, "witnesses", 1, 1024);
  const need = synthWitnessBytes(options);
  const short = into.findIndex((b) => b.byteLength < need);
  if (short >= 0) throw new CuzkError("SHORT_BUFFER", `buffer ${short} has ${into[short].byteLength} bytes; a witness needs ${need}`);
  const native = nativeOf(options.library);
  const seeds = BigUint64Array.from(witnessSeeds, (s) => BigInt.asUintN(64, BigInt(s)));
  const releases = into.map((b) => b.acquire());
  try {
    const addresses = BigUint64Array.from(into, (b) => BigInt(b.unsafePointer));
    await invokeAsync(native, "cuzk_synth_witnesses", [...synthArguments(options), new Uint8Array(seeds.buffer), new Uint8Array(addresses.buffer), into.length, need]);
  } finally {
    for (const release of releases) release();
  }
}

/**
 * Runs one of the two setup calls off the JS thread with the options both take (threads bounded,
 * cpuOnly, signal/onProgress) and returns its cuzk_setup_info, decoded.
 */
async function runDevSetup<N extends "cuzk_setup_insecure_dev" | "cuzk_setup_insecure_dev_key">(
  symbol: N,
  r1csPath: string,
  options: DevSetupOptions,
  args: (threads: number, flags: number, info: Uint8Array, progress: Pointer | null) => CallArguments<N>,
): Promise<Decoded<typeof SETUP_INFO_LAYOUT>> {
  const native = nativeOf(options.library);
  const limit = (options.library ?? Library.default()).info().cpuThreads;
  const threads = integerIn(options.threads ?? 0, "threads", 0, limit, ` (0 = the shared pool; ${limit} is this machine's CPU count)`);
  const info = allocateStruct(SETUP_INFO_LAYOUT);
  const flags = options.cpuOnly ? ABI.SETUP_CPU_ONLY : 0;
  const progress = ProgressSlot.wanted(options) ? ProgressSlot.alloc(options.library) : undefined;
  try {
    const run = (pointer: Pointer | null) => invokeAsync(native, symbol, args(threads, flags, info, pointer), { detail: r1csPath });
    await (progress ? progress.run(options, run) : run(null));
  } finally {
    progress?.free();
  }
  return decodeStruct(SETUP_INFO_LAYOUT, info);
}

/** What a setup's cuzk_setup_info says, decoded. */
function setupResultOf(raw: Decoded<typeof SETUP_INFO_LAYOUT>) {
  const ms = (ns: bigint) => Number(ns) / 1e6;
  return {
    ...circuitSizesOf(raw),
    threads: raw.threads,
    g1WindowBits: raw.g1_window_bits,
    g2WindowBits: raw.g2_window_bits,
    gpu: raw.gpu === 1,
    zkeyBytes: Number(raw.zkey_bytes),
    totalMs: ms(raw.total_ns),
    scalarsMs: ms(raw.scalars_ns),
    tablesMs: ms(raw.tables_ns),
    pointsMs: ms(raw.points_ns),
  };
}

/** What `setupInsecureDevKey` made: the key (close it), and the setup's figures. */
export interface DevKeyResult extends Omit<DevSetupResult, "verificationKey"> {
  key: Key;
  verificationKey: SnarkjsVerificationKey;
}

/**
 * INSECURE, FOR TESTS AND BENCHMARKS ONLY, as `setupInsecureDev`, but the key is made in memory and
 * never written: for sizes whose .zkey would not fit a disk (a 2^27 BLS12-381 key is ~97 GB). The
 * key holds its headers, IC, coefficients and the setup's scalars (`zkeyBytes`: 128 bytes per
 * signal plus 32 per domain point, besides the coefficients); a prover made from it makes the
 * points it reads (on GPU 0 when there is one), so making a prover costs the key's scalar
 * multiplications, and a section the prover streams costs them again for every proof.
 */
export async function setupInsecureDevKey(r1csPath: string, options: DevSetupOptions = {}): Promise<DevKeyResult> {
  const native = nativeOf(options.library);
  const out = new BigUint64Array(1);
  const info = await runDevSetup("cuzk_setup_insecure_dev_key", r1csPath, options, (threads, flags, info, progress): CallArguments<"cuzk_setup_insecure_dev_key"> => [r1csPath, threads, flags, out, info, progress]);
  const key = Key.adopt(native, asPointer(out[0]), `<insecure dev key of ${r1csPath}>`);
  try {
    return { ...setupResultOf(info), key, verificationKey: snarkjsVerificationKey(key) };
  } catch (error) {
    key.close();
    throw error;
  }
}

/**
 * INSECURE, FOR TESTS AND BENCHMARKS ONLY: makes a Groth16 proving key for the circuit at `r1csPath`
 * and writes it to `zkeyPath` (snarkjs .zkey), from toxic waste drawn inside the call; then opens the
 * key (checking every point) and returns its verification key in snarkjs's JSON shape.
 */
export async function setupInsecureDev(r1csPath: string, zkeyPath: string, options: DevSetupOptions = {}): Promise<DevSetupResult> {
  const info = await runDevSetup("cuzk_setup_insecure_dev", r1csPath, options, (threads, flags, info, progress): CallArguments<"cuzk_setup_insecure_dev"> => [r1csPath, zkeyPath, threads, flags, info, progress]);
  const key = await Key.open(zkeyPath, { library: options.library });
  let verificationKey: SnarkjsVerificationKey;
  try {
    verificationKey = snarkjsVerificationKey(key);
  } finally {
    key.close();
  }
  return { ...setupResultOf(info), verificationKey };
}
