/**
 * @module
 * The Prover: a key bound to a context, proving witnesses off the JS thread and returning results
 * in exactly snarkjs's shapes (proof.json, public.json), with per-phase timings. Also `verify`,
 * the native pairing check of a snarkjs proof against a snarkjs verification key.
 */
import { Context } from "./context.ts";
import type { ContextOptions } from "./context.ts";
import { check, CuzkError, errorBuffer } from "./errors.ts";
import type { Native } from "./ffi/load.ts";
import { allocateStruct, TIMINGS_LAYOUT } from "./ffi/structs.ts";
import { ABI } from "./ffi/symbols.ts";
import type { Pointer } from "./ffi/types.ts";
import { asPointer } from "./ffi/types.ts";
import { curveOf, proofFromJson, proofToJson, publicSignalsToBytes, verificationKeyFromJson, writeLE } from "./formats/snarkjs.ts";
import type { CurveParameters, Groth16Proof, VerificationKeyJson } from "./formats/snarkjs.ts";
import { encodeRawWitness, isWtns, publicSignalsOf } from "./formats/witness.ts";
import { ADD_USER, REMOVE_USER } from "./internal.ts";
import { Key } from "./key.ts";
import type { KeyInfo } from "./key.ts";
import type { BackendName, Library } from "./library.ts";
import { nativeOf } from "./library.ts";
import { NativeBuffer } from "./memory/buffer.ts";
import { BufferPool } from "./memory/pool.ts";
import { decodeTimings } from "./timings.ts";
import type { Timings } from "./timings.ts";

/**
 * A witness: the bytes of a .wtns file, raw Fr values (n_vars × 32 bytes, standard LE, w[0] = 1),
 * the values as bigints, or a PinnedBuffer/HostBuffer the caller filled with either byte form.
 */
export type Witness = Uint8Array | ReadonlyArray<bigint> | NativeBuffer;

/** Options of Prover.open. */
export interface ProverOptions extends Omit<ContextOptions, "library"> {
  /** Path of the .zkey, or a Key opened already (then shared, not closed by the prover). */
  zkey: string | Key;
  /** The circuit's .r1cs: witnesses are then checked constraint by constraint before proving. */
  r1cs?: string;
  /** An existing context to use (then shared, not closed by the prover); overrides backend/device. */
  context?: Context;
  /** Verify every proof (pairing check) before returning it. */
  selfCheck?: boolean;
  /** Trust the .zkey: skip the on-curve check of its points at open time. */
  skipPointChecks?: boolean;
  library?: Library;
}

/** Options of one prove/proveBatch call. */
export interface ProveOptions {
  /** Verify each proof before returning it (default: the prover's selfCheck). */
  selfCheck?: boolean;
  /** Do not check the witness against an attached .r1cs. */
  skipR1csCheck?: boolean;
}

/** Fixed blinding factors, for deterministic proofs in tests (never in production). */
export interface Randomness {
  r: bigint;
  s: bigint;
}

/** A proof in snarkjs's shapes, with the library's phase timings. */
export interface ProofResult {
  proof: Groth16Proof;
  publicSignals: string[];
  timings: Timings;
}

interface StagedWitness {
  format: number;
  stride: number;
  bytes?: Uint8Array;
  values?: ReadonlyArray<bigint>;
  native?: NativeBuffer;
}

/** A key bound to a backend, ready to prove. */
export class Prover {
  readonly #native: Native;
  #handle: Pointer;
  readonly #key: Key;
  readonly #ownsKey: boolean;
  readonly #context: Context;
  readonly #ownsContext: boolean;
  readonly #info: KeyInfo;
  readonly #curve: CurveParameters;
  readonly #selfCheck: boolean;
  readonly #staging: BufferPool;
  #queue: Promise<unknown> = Promise.resolve();
  /** Calls submitted and not yet settled (queued or running): close() refuses while any. */
  #pending = 0;

  private constructor(native: Native, handle: Pointer, key: Key, ownsKey: boolean, context: Context, ownsContext: boolean, options: ProverOptions) {
    this.#native = native;
    this.#handle = handle;
    this.#key = key;
    this.#ownsKey = ownsKey;
    this.#context = context;
    this.#ownsContext = ownsContext;
    this.#info = key.info();
    this.#curve = curveOf(this.#info.curve);
    this.#selfCheck = options.selfCheck ?? false;
    this.#staging = new BufferPool({ library: options.library, device: context.device });
    key[ADD_USER](this);
    context[ADD_USER](this);
  }

  /** Opens the key (when given a path), creates the context and the prover. */
  static async open(options: ProverOptions): Promise<Prover> {
    const native = nativeOf(options.library);
    native.require("cuzk_prover_create", "cuzk_prover_destroy", "cuzk_prove");
    const ownsKey = typeof options.zkey === "string";
    const key = typeof options.zkey === "string" ? await Key.open(options.zkey, { library: options.library, skipPointChecks: options.skipPointChecks }) : options.zkey;
    let context: Context | undefined;
    try {
      if (options.r1cs) key.attachR1cs(options.r1cs);
      context = options.context ?? Context.create({ ...options, library: options.library });
      const out = new BigUint64Array(1);
      const err = errorBuffer();
      const status = native.call("cuzk_prover_create", context.unsafeHandle, key.unsafeHandle, 0, out, err, err.length) as number;
      check(status, err, "cuzk_prover_create");
      return new Prover(native, asPointer(out[0]), key, ownsKey, context, !options.context, options);
    } catch (error) {
      if (context && !options.context) context.close();
      if (ownsKey) key.close();
      throw error;
    }
  }

  /** The key this prover proves with. */
  get key(): Key {
    return this.#key;
  }

  /** The context it runs on. */
  get context(): Context {
    return this.#context;
  }

  /** The backend in use. */
  get backend(): BackendName {
    return this.#context.backend;
  }

  /** The key's sizes and curve. */
  get info(): KeyInfo {
    return { ...this.#info };
  }

  /** True after close(). */
  get closed(): boolean {
    return this.#handle === 0n;
  }

  /** Proves one witness. `randomness` fixes r and s (tests only). */
  async prove(witness: Witness, options: ProveOptions & { randomness?: Randomness } = {}): Promise<ProofResult> {
    const [result] = await this.proveBatch([witness], {
      ...options,
      randomness: options.randomness ? [options.randomness] : undefined,
    });
    return result;
  }

  /**
   * Proves a batch of witnesses in one call (the library shares work across them). Calls on one
   * prover run one at a time, in order.
   */
  proveBatch(witnesses: ReadonlyArray<Witness>, options: ProveOptions & { randomness?: ReadonlyArray<Randomness> } = {}): Promise<ProofResult[]> {
    // Caller buffers are busy from the moment the call is queued, not only while it runs:
    // otherwise free() between the two would succeed and the queued proof fail later.
    const releases: Array<() => void> = [];
    try {
      for (const witness of witnesses) if (witness instanceof NativeBuffer) releases.push(witness.acquire());
    } catch (error) {
      for (const release of releases) release();
      return Promise.reject(error);
    }
    const run = () => this.#proveNow(witnesses, options);
    this.#pending++;
    const result = this.#queue.then(run, run).finally(() => {
      this.#pending--;
      for (const release of releases) release();
    });
    this.#queue = result.catch(() => {});
    return result;
  }

  async #proveNow(witnesses: ReadonlyArray<Witness>, options: ProveOptions & { randomness?: ReadonlyArray<Randomness> }): Promise<ProofResult[]> {
    const handle = this.#live();
    const n = witnesses.length;
    if (n === 0) return [];
    const staged = witnesses.map((w, i) => this.#classify(w, i));
    const { format, stride } = staged[0];
    for (const [i, w] of staged.entries()) {
      if (w.format !== format || w.stride !== stride) {
        throw new CuzkError("INVALID_ARGUMENT", `witness ${i} differs in form or size from witness 0; a batch must be uniform`);
      }
    }
    if (options.randomness && options.randomness.length !== n) {
      throw new CuzkError("INVALID_ARGUMENT", `randomness has ${options.randomness.length} entries for ${n} witnesses`);
    }
    const publicSignals = staged.map((w) => this.#publicSignals(w));
    let r: Uint8Array | null = null, s: Uint8Array | null = null;
    if (options.randomness) {
      r = new Uint8Array(n * ABI.FR_BYTES);
      s = new Uint8Array(n * ABI.FR_BYTES);
      options.randomness.forEach(({ r: ri, s: si }, i) => {
        writeLE(r!, i * ABI.FR_BYTES, ABI.FR_BYTES, ri % this.#curve.r);
        writeLE(s!, i * ABI.FR_BYTES, ABI.FR_BYTES, si % this.#curve.r);
      });
    }
    let flags = 0;
    if (options.selfCheck ?? this.#selfCheck) flags |= ABI.PROVE_SELF_CHECK;
    if (options.skipR1csCheck) flags |= ABI.PROVE_SKIP_R1CS_CHECK;
    const proofs = new Uint8Array(n * this.#info.proofBytes);
    const timings = allocateStruct(TIMINGS_LAYOUT, n);
    const err = errorBuffer();

    // One caller buffer is passed in place; anything else is staged in pooled pinned memory.
    const direct = n === 1 ? staged[0].native : undefined;
    const staging = direct ? undefined : this.#staging.take(n * stride);
    const source = direct ?? staging!;
    const release = source.acquire();
    try {
      if (staging) {
        const target = staging.bytes;
        staged.forEach((w, i) => {
          if (w.values) encodeRawWitness(w.values, target, i * stride);
          else target.set((w.bytes ?? w.native!.bytes).subarray(0, stride), i * stride);
        });
      }
      const status = (await this.#native.callAsync(
        "cuzk_prove",
        handle,
        source.unsafePointer,
        stride,
        format,
        n,
        r,
        s,
        flags,
        proofs,
        proofs.length,
        timings,
        err,
        err.length,
      )) as number;
      check(status, err, `cuzk_prove(${n} witness${n === 1 ? "" : "es"})`);
    } finally {
      release();
      if (staging) this.#staging.give(staging);
    }
    return staged.map((_, i) => ({
      proof: proofToJson(this.#curve, proofs, i * this.#info.proofBytes),
      publicSignals: publicSignals[i],
      timings: decodeTimings(timings, i),
    }));
  }

  #classify(witness: Witness, index: number): StagedWitness {
    const rawStride = this.#info.nVars * ABI.FR_BYTES;
    if (witness instanceof NativeBuffer || witness instanceof Uint8Array) {
      const bytes = witness instanceof NativeBuffer ? witness.bytes : witness;
      const native = witness instanceof NativeBuffer ? witness : undefined;
      if (isWtns(bytes)) return { format: ABI.WITNESS_WTNS, stride: bytes.byteLength, bytes: native ? undefined : bytes, native };
      if (bytes.byteLength !== rawStride && !(native && bytes.byteLength > rawStride)) {
        throw new CuzkError(
          "WITNESS_LENGTH",
          `witness ${index}: ${bytes.byteLength} bytes is neither a .wtns file nor ${this.#info.nVars} raw values (${rawStride} bytes)`,
        );
      }
      return { format: ABI.WITNESS_RAW, stride: rawStride, bytes: native ? undefined : bytes, native };
    }
    if (Array.isArray(witness)) {
      if (witness.length !== this.#info.nVars) {
        throw new CuzkError("WITNESS_LENGTH", `witness ${index} has ${witness.length} values; the key needs ${this.#info.nVars}`);
      }
      return { format: ABI.WITNESS_RAW, stride: rawStride, values: witness };
    }
    throw new CuzkError("INVALID_ARGUMENT", `witness ${index}: expected .wtns bytes, raw bytes, bigint[] or a NativeBuffer`);
  }

  #publicSignals(w: StagedWitness): string[] {
    const nPublic = this.#info.nPublic;
    if (w.values) return w.values.slice(1, nPublic + 1).map((v) => (((v % this.#curve.r) + this.#curve.r) % this.#curve.r).toString());
    return publicSignalsOf(w.bytes ?? w.native!.bytes, nPublic);
  }

  /** Verifies a proof against this prover's key (natively). */
  async verify(publicSignals: ReadonlyArray<string | bigint>, proof: Groth16Proof): Promise<boolean> {
    const vk = this.#key.exportVk();
    return verifyBytes(this.#native, this.#curve, vk, this.#info.nPublic, publicSignals, proof);
  }

  /**
   * Destroys the prover, then the context and key it opened itself. Idempotent. Throws BUSY while
   * a proof call is queued or running.
   */
  close(): void {
    if (this.#handle === 0n) return;
    if (this.#pending > 0) {
      throw new CuzkError("BUSY", `cannot close a prover while ${this.#pending} proof call(s) are queued or running`);
    }
    const err = errorBuffer();
    check(this.#native.call("cuzk_prover_destroy", this.#handle, err, err.length) as number, err, "cuzk_prover_destroy");
    this.#handle = 0n as Pointer;
    this.#staging.close({ force: true });
    this.#key[REMOVE_USER](this);
    this.#context[REMOVE_USER](this);
    if (this.#ownsContext) this.#context.close();
    if (this.#ownsKey) this.#key.close();
  }

  /** Same as close(). */
  [Symbol.dispose](): void {
    this.close();
  }

  #live(): Pointer {
    if (this.#handle === 0n) throw new CuzkError("CLOSED", "prover was closed");
    return this.#handle;
  }
}

async function verifyBytes(
  native: Native,
  curve: CurveParameters,
  vk: Uint8Array,
  nPublic: number,
  publicSignals: ReadonlyArray<string | bigint>,
  proof: Groth16Proof | Record<string, unknown>,
): Promise<boolean> {
  if (publicSignals.length !== nPublic) {
    throw new CuzkError("INVALID_ARGUMENT", `the key has ${nPublic} public signals, ${publicSignals.length} were given`);
  }
  const signals = publicSignalsToBytes(curve, publicSignals);
  const proofBytes = proofFromJson(curve, proof);
  const valid = new Int32Array(1);
  const err = errorBuffer();
  const status = (await native.callAsync(
    "cuzk_verify",
    curve.id,
    vk,
    vk.length,
    proofBytes,
    proofBytes.length,
    signals,
    nPublic,
    valid,
    err,
    err.length,
  )) as number;
  check(status, err, "cuzk_verify");
  return valid[0] === 1;
}

/**
 * Checks a snarkjs proof against a snarkjs verification key with the library's pairing check
 * (off the JS thread). Resolves true or false; throws FORMAT for malformed JSON.
 */
export function verify(
  vkey: VerificationKeyJson,
  publicSignals: ReadonlyArray<string | bigint>,
  proof: Groth16Proof | Record<string, unknown>,
  options: { library?: Library } = {},
): Promise<boolean> {
  try {
    const native = nativeOf(options.library);
    const { curve, bytes, nPublic } = verificationKeyFromJson(vkey);
    return verifyBytes(native, curve, bytes, nPublic, publicSignals, proof);
  } catch (error) {
    return Promise.reject(error);
  }
}
