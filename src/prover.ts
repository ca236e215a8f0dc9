/**
 * @module
 * The Prover: a key bound to a context, proving witnesses off the JS thread and returning results
 * in exactly snarkjs's shapes (proof.json, public.json), with per-phase timings. Also `verify`,
 * the native pairing check of a snarkjs proof against a snarkjs verification key.
 */
import { integerIn, LIMITS } from "./bounds.ts";
import { Context, contextArguments } from "./context.ts";
import type { ContextOptions } from "./context.ts";
import { CuzkError } from "./errors.ts";
import type { Native } from "./ffi/load.ts";
import { allocateStruct, PROVE_ARGS_LAYOUT, TIMINGS_LAYOUT, writeField } from "./ffi/structs.ts";
import { ABI } from "./ffi/symbols.ts";
import type { Pointer } from "./ffi/types.ts";
import { asPointer } from "./ffi/types.ts";
import { curveOf, proofFromJson, proofToJson, publicSignalsToBytes, verificationKeyFromJson, writeLE } from "./formats/snarkjs.ts";
import type { CurveParameters, Groth16Proof, VerificationKeyJson } from "./formats/snarkjs.ts";
import { encodeRawWitness, isWtns } from "./formats/witness.ts";
import { ADD_USER, NativeHandle, REMOVE_USER } from "./handle.ts";
import { Key } from "./key.ts";
import type { KeyInfo } from "./key.ts";
import type { BackendName, Library } from "./library.ts";
import { nativeOf } from "./library.ts";
import { NativeBuffer } from "./memory/buffer.ts";
import type { PinnedBuffer } from "./memory/buffer.ts";
import { BufferPool } from "./memory/pool.ts";
import { decodeMemoryPlan, memoryPlanStruct, proverOptionsStruct } from "./memory_plan.ts";
import type { EngineSettings } from "./memory_plan.ts";
import type { MemoryPlan } from "./memory_plan.ts";
import { invoke, invokeAsync } from "./native_call.ts";
import { ProgressSlot } from "./progress.ts";
import type { LongCallOptions } from "./progress.ts";
import { decodeTimings } from "./timings.ts";
import type { Timings } from "./timings.ts";

/**
 * A witness: the bytes of a .wtns file, raw Fr values (n_vars × 32 bytes, standard LE, w[0] = 1),
 * the values as bigints, or a PinnedBuffer/HostBuffer the caller filled with either byte form.
 * JS memory (bytes, bigints) is copied before prove()/proveBatch() return, so the caller may change
 * it at once. A native buffer (alone, or in a batch) is read in place (no copy: the proving loop's
 * zero-copy path): it is busy until the proof settles, and must not be written meanwhile.
 */
export type Witness = Uint8Array | ReadonlyArray<bigint> | NativeBuffer;

/**
 * Options of Prover.open. `signal` and `onProgress` cover the key upload to the engine
 * (`key_upload`, in bytes; nothing to upload on the CPU backend), not the opening of the .zkey.
 */
export interface ProverOptions extends Omit<ContextOptions, "library">, EngineSettings, LongCallOptions {
  /** Path of the .zkey, or a Key opened already (then shared, not closed by the prover). */
  zkey: string | Key;
  /** The circuit's .r1cs: witnesses are then checked constraint by constraint before proving. */
  r1cs?: string;
  /** An existing context to use (then shared, not closed by the prover); overrides backend/device. */
  context?: Context;
  /**
   * Verify every proof (a pairing check against the key's verification key) before returning it.
   * Default true: a proof that fails is never returned; the call fails with a CuzkError of code
   * SELF_CHECK whose message (the library's) says whether the witness or the key is the likely
   * cause (with an attached .r1cs it knows which). It costs one pairing check per proof, about
   * constant in the circuit's size: ~2 ms for BN254 and ~7.5 ms for BLS12-381 on one core of a
   * 2-core VM (docs/benchmarks.md has it at 2^14 and 2^20). Turn it off (`false`) only when the
   * proofs are verified elsewhere.
   */
  selfCheck?: boolean;
  /** Trust the .zkey: skip the on-curve check of its points at open time. */
  skipPointChecks?: boolean;
  /** When `zkey` is a path: open it with `pointsOnDemand` (see KeyOpenOptions). */
  pointsOnDemand?: boolean;
  library?: Library;
}

/**
 * Options of one prove/proveBatch call. `onProgress` counts the proofs of the batch (`prove`);
 * aborting `signal` stops the batch before its next proof (also while the call waits behind
 * earlier ones): the call rejects with CANCELLED and returns no proof; the prover stays usable.
 */
export interface ProveOptions extends LongCallOptions {
  /** Verify each proof before returning it (default: the prover's selfCheck, itself true by default). */
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

/** A witness checked by the library, in the form the native call takes. */
interface CheckedWitness {
  format: number;
  stride: number;
  /** The bytes to pass (JS memory), or the caller's native buffer (read in place or copied). */
  bytes: Uint8Array;
  native?: NativeBuffer;
  publicSignals: string[];
}

/**
 * Where a call's own buffers lie in its call block, one native block per call: cuzk_prove_args holds
 * addresses, and a JS array's address is not stable across the runtimes' FFIs, so everything the
 * struct points at is native memory. r | s | proofs | timings (8-byte aligned) | witness list.
 */
interface CallLayout {
  r: number;
  s: number;
  proofs: number;
  timings: number;
  list: number;
  size: number;
}

function callLayout(n: number, proofBytes: number): CallLayout {
  const align8 = (offset: number) => Math.ceil(offset / 8) * 8;
  const r = 0, s = n * ABI.FR_BYTES;
  const proofs = s + n * ABI.FR_BYTES;
  const timings = align8(proofs + n * proofBytes);
  const list = align8(timings + n * TIMINGS_LAYOUT.size);
  return { r, s, proofs, timings, list, size: list + n * 8 };
}

/** The arguments of one cuzk_prove call, fixed when the call is made. */
interface PreparedCall {
  checked: CheckedWitness[];
  /** The witnesses as the library reads them: staged copies, or one caller native buffer in place. */
  source: NativeBuffer | undefined;
  /**
   * Set when the batch has native buffers: the call block holds one address per witness
   * (CUZK_INPUT_WITNESS_LIST), each the caller's buffer read in place or a slot of `source` for a
   * witness in JS memory.
   */
  list: boolean;
  /** The staging buffer to give back to the pool once the call settles. */
  staging?: PinnedBuffer;
  /** The call block (see CallLayout), r and s written in when `blinded`; absent for an empty batch. */
  block?: PinnedBuffer;
  layout?: CallLayout;
  blinded: boolean;
  flags: number;
  progress: LongCallOptions;
}

/** A key bound to a backend, ready to prove. */
export class Prover extends NativeHandle {
  readonly #key: Key;
  readonly #ownsKey: boolean;
  readonly #context: Context;
  readonly #ownsContext: boolean;
  readonly #info: KeyInfo;
  readonly #curve: CurveParameters;
  readonly #selfCheck: boolean;
  readonly #staging: BufferPool;
  /** The cuzk_progress of this prover's calls, which run one at a time. */
  readonly #progress: ProgressSlot;
  #queue: Promise<unknown> = Promise.resolve();
  /** Calls queued or running: at most LIMITS.queuedCalls. */
  #queued = 0;

  private constructor(
    native: Native,
    handle: Pointer,
    key: Key,
    ownsKey: boolean,
    context: Context,
    ownsContext: boolean,
    progress: ProgressSlot,
    options: ProverOptions,
  ) {
    super(native, handle, "cuzk_prover_destroy");
    this.#key = key;
    this.#ownsKey = ownsKey;
    this.#context = context;
    this.#ownsContext = ownsContext;
    this.#info = key.info();
    this.#curve = curveOf(this.#info.curve);
    this.#selfCheck = options.selfCheck ?? true;
    this.#progress = progress;
    // Two blocks a queued call: its staged witnesses and its call block.
    this.#staging = new BufferPool({ library: options.library, device: context.device, maxBuffers: 2 * LIMITS.queuedCalls });
    key[ADD_USER](this);
    context[ADD_USER](this);
  }

  /** Opens the key (when given a path), creates the context and the prover; context options out of bounds are refused first. */
  static async open(options: ProverOptions): Promise<Prover> {
    const native = nativeOf(options.library);
    native.require("cuzk_prover_create", "cuzk_prover_destroy", "cuzk_prove");
    if (!options.context) contextArguments(options);
    const ownsKey = typeof options.zkey === "string";
    const key = typeof options.zkey === "string" ? await Key.open(options.zkey, { library: options.library, skipPointChecks: options.skipPointChecks, pointsOnDemand: options.pointsOnDemand }) : options.zkey;
    let context: Context | undefined;
    let progress: ProgressSlot | undefined;
    try {
      if (options.r1cs) key.attachR1cs(options.r1cs);
      context = options.context ?? Context.create({ ...options, library: options.library });
      const out = new BigUint64Array(1);
      progress = ProgressSlot.alloc(options.library);
      const handles = [context.unsafeHandle, key.unsafeHandle] as const;
      await progress.run(options, (pointer) => createProver(native, handles, options, out, pointer));
      return new Prover(native, asPointer(out[0]), key, ownsKey, context, !options.context, progress, options);
    } catch (error) {
      progress?.free();
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

  /** Where the engine keeps the key's points, per section, and the bytes against its budget. */
  memoryPlan(): MemoryPlan {
    const out = memoryPlanStruct();
    invoke(this.native, "cuzk_prover_memory_plan", [this.live(), out]);
    return decodeMemoryPlan(out);
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
   * Proves a batch of witnesses in one call (the library shares work across them). Each witness's
   * shape (`Key.checkWitnessShape`: header, curve, count, w[0]) is checked before the call is
   * queued; the scan of every value < r runs in the call (rejecting it with "proof i: ..."), off
   * the JS thread and beside the previous proof. Calls on one prover
   * run one at a time, in order; the witnesses are staged before this returns (see Witness).
   * Bounds: at most 1024 witnesses per call (INVALID_ARGUMENT) and 64
   * calls queued or running per prover (BUSY), `LIMITS.batchWitnesses` and `LIMITS.queuedCalls`.
   */
  proveBatch(witnesses: ReadonlyArray<Witness>, options: ProveOptions & { randomness?: ReadonlyArray<Randomness> } = {}): Promise<ProofResult[]> {
    // Everything the native call reads is fixed before this returns: JS witnesses are copied into
    // staging memory now, so the caller may reuse or change them at once. Native buffers are read
    // in place and stay busy (free() refuses) until the call settles.
    const releases: Array<() => void> = [];
    let call: PreparedCall;
    try {
      this.live();
      if (this.#queued >= LIMITS.queuedCalls) {
        throw new CuzkError("BUSY", `${this.#queued} proof calls are queued or running on this prover (the most is ${LIMITS.queuedCalls}); await some first`);
      }
      const checked = this.#checkBatch(witnesses, options);
      for (const w of checked) if (w.native) releases.push(w.native.acquire());
      releases.push(this.hold());
      call = this.#prepare(checked, options);
      if (call.staging) releases.push(() => this.#staging.give(call.staging!));
      if (call.block) releases.push(() => this.#staging.give(call.block!));
    } catch (error) {
      for (const release of releases) release();
      return Promise.reject(error);
    }
    const run = () => this.#proveNow(call);
    this.#queued++;
    const result = this.#queue.then(run, run).finally(() => {
      this.#queued--;
      // Last in, first out: the staging goes back before the hold ends, which may close a disposed prover.
      for (const release of releases.reverse()) release();
    });
    this.#queue = result.catch(() => {});
    return result;
  }

  #checkBatch(witnesses: ReadonlyArray<Witness>, options: { randomness?: ReadonlyArray<Randomness> }): CheckedWitness[] {
    integerIn(witnesses.length, "a batch's witness count", 0, LIMITS.batchWitnesses);
    const checked = witnesses.map((w, i) => this.#check(w, i));
    for (const [i, w] of checked.entries()) {
      if (w.format !== checked[0].format || w.stride !== checked[0].stride) {
        throw new CuzkError("INVALID_ARGUMENT", `witness ${i} differs in form or size from witness 0; a batch must be uniform`);
      }
    }
    if (options.randomness && options.randomness.length !== witnesses.length) {
      throw new CuzkError("INVALID_ARGUMENT", `randomness has ${options.randomness.length} entries for ${witnesses.length} witnesses`);
    }
    return checked;
  }

  /**
   * Fixes the arguments of one native call: witnesses staged (or one native buffer in place), the
   * call block with r and s (and the witness list) written in, flags.
   */
  #prepare(checked: CheckedWitness[], options: ProveOptions & { randomness?: ReadonlyArray<Randomness> }): PreparedCall {
    const n = checked.length;
    const stride = checked[0]?.stride ?? 0;
    // Said either way: the self-check is the library's default, and naming it works with libraries from before.
    let flags = (options.selfCheck ?? this.#selfCheck) ? ABI.PROVE_SELF_CHECK : ABI.PROVE_NO_SELF_CHECK;
    if (options.skipR1csCheck) flags |= ABI.PROVE_SKIP_R1CS_CHECK;
    const progress = { signal: options.signal, onProgress: options.onProgress };
    const blinded = options.randomness !== undefined;
    if (n === 0) return { checked, source: undefined, list: false, blinded, flags, progress };
    const layout = callLayout(n, this.#info.proofBytes);
    const block = this.#staging.take(layout.size);
    let staging: PinnedBuffer | undefined;
    try {
      const bytes = block.bytes;
      options.randomness?.forEach(({ r, s }, i) => {
        writeLE(bytes, layout.r + i * ABI.FR_BYTES, ABI.FR_BYTES, r % this.#curve.r);
        writeLE(bytes, layout.s + i * ABI.FR_BYTES, ABI.FR_BYTES, s % this.#curve.r);
      });
      const direct = n === 1 ? checked[0].native : undefined;
      if (direct) return { checked, source: direct, list: false, block, layout, blinded, flags, progress };
      // Native buffers are read in place, never gathered (4 x 512 MiB at 2^24 cost ~300 ms to copy):
      // only the witnesses in JS memory are staged, packed in one pinned block.
      const inJs = checked.filter((w) => !w.native);
      staging = inJs.length > 0 ? this.#staging.take(inJs.length * stride) : undefined;
      inJs.forEach((w, i) => staging!.bytes.set(w.bytes.subarray(0, stride), i * stride));
      if (inJs.length === n) return { checked, source: staging, list: false, staging, block, layout, blinded, flags, progress };
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      let slot = 0;
      checked.forEach((w, i) => {
        const address = w.native ? w.native.unsafePointer : staging!.unsafePointer + BigInt(stride * slot++);
        view.setBigUint64(layout.list + i * 8, address, true);
      });
      return { checked, source: staging, list: true, staging, block, layout, blinded, flags, progress };
    } catch (error) {
      if (staging) this.#staging.give(staging);
      this.#staging.give(block);
      throw error;
    }
  }

  async #proveNow(call: PreparedCall): Promise<ProofResult[]> {
    const handle = this.live();
    const { checked, source, list, block, layout, blinded, flags, progress } = call;
    const n = checked.length;
    if (n === 0 || !block || !layout || !(source || list)) return [];
    const { format, stride } = checked[0];
    const proofBytes = n * this.#info.proofBytes;
    const at = (offset: number) => block.unsafePointer + BigInt(offset);
    const fields = PROVE_ARGS_LAYOUT.fields;
    const args = allocateStruct(PROVE_ARGS_LAYOUT);
    const view = new DataView(args.buffer);
    const set = (field: keyof typeof fields, value: number | bigint) => writeField(view, 0, fields[field], value);
    set("input", list ? ABI.INPUT_WITNESS_LIST : ABI.INPUT_WITNESSES);
    set("witness_format", format);
    set("flags", flags);
    set("n_proofs", n);
    set("witness_stride", stride);
    if (list) set("witness_list", at(layout.list));
    else set("witnesses", source!.unsafePointer);
    if (blinded) {
      set("r", at(layout.r));
      set("s", at(layout.s));
    }
    set("proofs", at(layout.proofs));
    set("proofs_cap", proofBytes);
    set("timings", at(layout.timings));
    const releases = [block.acquire(), source?.acquire()];
    try {
      const detail = `${n} witness${n === 1 ? "" : "es"}`;
      await this.#progress.run(progress, (pointer) => {
        set("progress", pointer ?? 0n);
        return invokeAsync(this.native, "cuzk_prove", [handle, args], { detail });
      });
    } finally {
      for (const release of releases) release?.();
    }
    // Copied out: the block goes back to the pool once the call settles.
    const bytes = block.bytes;
    const proofs = bytes.slice(layout.proofs, layout.proofs + proofBytes);
    const timings = bytes.slice(layout.timings, layout.timings + n * TIMINGS_LAYOUT.size);
    return checked.map((w, i) => ({
      proof: proofToJson(this.#curve, proofs, i * this.#info.proofBytes),
      publicSignals: w.publicSignals,
      timings: decodeTimings(timings, i),
    }));
  }

  /** Checks one witness with the library and says how to pass it. */
  #check(witness: Witness, index: number): CheckedWitness {
    const rawStride = this.#info.nVars * ABI.FR_BYTES;
    let bytes: Uint8Array, native: NativeBuffer | undefined;
    if (witness instanceof NativeBuffer) {
      native = witness;
      bytes = witness.bytes;
    } else if (witness instanceof Uint8Array) {
      bytes = witness;
    } else if (Array.isArray(witness)) {
      bytes = new Uint8Array(witness.length * ABI.FR_BYTES);
      encodeRawWitness(witness, bytes);
    } else {
      throw new CuzkError("INVALID_ARGUMENT", `witness ${index}: expected .wtns bytes, raw bytes, bigint[] or a NativeBuffer`);
    }
    const wtns = isWtns(bytes);
    // A native buffer may be larger than the raw values it holds (a pooled buffer): its first nVars values count.
    const checkedPart = native && !wtns && bytes.byteLength > rawStride ? bytes.subarray(0, rawStride) : native ?? bytes;
    let publicSignals: string[];
    try {
      // The O(n_vars) value scan is left to the library's call (on its pool, beside the previous proof).
      publicSignals = this.#key.checkWitnessShape(checkedPart).publicSignals;
    } catch (error) {
      throw error instanceof CuzkError ? withIndex(error, index) : error;
    }
    return { format: wtns ? ABI.WITNESS_WTNS : ABI.WITNESS_RAW, stride: wtns ? bytes.byteLength : rawStride, bytes, native, publicSignals };
  }

  /** Verifies a proof against this prover's key (natively). */
  async verify(publicSignals: ReadonlyArray<string | bigint>, proof: Groth16Proof): Promise<boolean> {
    const vk = this.#key.exportVk();
    return verifyBytes(this.native, this.#curve, vk, this.#info.nPublic, publicSignals, proof);
  }

  /** Destroys the prover (see close()), then the context and key it opened itself. */
  protected override afterClose(): void {
    this.#staging.close({ force: true });
    this.#progress.free();
    this.#key[REMOVE_USER](this);
    this.#context[REMOVE_USER](this);
    if (this.#ownsContext) this.#context.close();
    if (this.#ownsKey) this.#key.close();
  }

  protected describe(): string {
    return "prover";
  }

  protected busyReason(calls: number): string {
    return `cannot close a prover while ${calls} proof call(s) are queued or running`;
  }
}

/** `error` with the index of the witness of a batch it is about. */
function withIndex(error: CuzkError, index: number): CuzkError {
  const { status, nativeMessage, operation, witness } = error;
  return new CuzkError(error.code, `witness ${index}: ${error.message}`, { status, nativeMessage, operation, witness, cause: error });
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
  await invokeAsync(native, "cuzk_verify", [curve.id, vk, vk.length, proofBytes, proofBytes.length, signals, nPublic, valid]);
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

/** cuzk_prover_create_with, every setting said (the library's defaults are the same). */
function createProver(native: Native, handles: readonly [Pointer, Pointer], options: ProverOptions, out: BigUint64Array, progress: Pointer | null) {
  native.require("cuzk_prover_create_with");
  return invokeAsync(native, "cuzk_prover_create_with", [...handles, proverOptionsStruct(options), out, progress]);
}
