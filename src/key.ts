/**
 * @module
 * A proving key (.zkey) opened by the library: a file is read whole and checked, bytes in memory
 * are copied (the library owns what it reads later). Several provers (e.g. one per GPU) can share one Key; it refuses to close while one
 * exists. `checkWitness` is the library's one witness check, the same that every proof makes first.
 */
import { CuzkError } from "./errors.ts";
import type { WitnessFacts } from "./errors.ts";
import type { Native } from "./ffi/load.ts";
import { allocateStruct, decodeStruct, KEY_INFO_LAYOUT, WITNESS_CHECK_LAYOUT } from "./ffi/structs.ts";
import type { Decoded } from "./ffi/structs.ts";
import { ABI } from "./ffi/symbols.ts";
import { asPointer } from "./ffi/types.ts";
import type { Pointer } from "./ffi/types.ts";
import { curveOf, readLE, verificationKeyToJson } from "./formats/snarkjs.ts";
import { isWtns, publicSignalsAt } from "./formats/witness.ts";
import { NativeHandle } from "./handle.ts";
import type { CurveName, Library } from "./library.ts";
import { nativeOf } from "./library.ts";
import { NativeBuffer } from "./memory/buffer.ts";
import { invoke, invokeAsync } from "./native_call.ts";

/** What `cuzk_key_get_info` reports about a key. */
export interface KeyInfo {
  curve: CurveName;
  /** Witness length, w[0] = 1 included. */
  nVars: number;
  /** Public signals (outputs + public inputs). */
  nPublic: number;
  nConstraints: number;
  domainSize: number;
  logDomain: number;
  nCoefs: number;
  fqBytes: number;
  proofBytes: number;
  vkBytes: number;
  hasR1cs: boolean;
  fileBytes: number;
  /** Time the library spent mapping and checking the file. */
  openMs: number;
}

/** Options of Key.open. */
export interface KeyOpenOptions {
  library?: Library;
  /** Trust the key: skip the on-curve check of every point at open time (faster open). */
  skipPointChecks?: boolean;
  /**
   * Leave the point sections (most of a key) in the file: provers read them from it when made, and
   * per proof or group of a batch's proofs for sections they stream (`Prover.memoryPlan()`). The file must not change while the
   * key is open (IO error at the next read). A file path only.
   */
  pointsOnDemand?: boolean;
}

/** What `Key.checkWitness` found in a witness that passed. */
export interface WitnessCheck {
  /** "wtns" when the bytes start with the .wtns magic, else "raw" (nVars × 32 bytes). */
  format: "wtns" | "raw";
  /** Byte offset of w[0]: the nVars values are the nVars × 32 bytes from here (0 for raw). */
  valuesOffset: number;
  /** w[1..nPublic] as decimal strings: snarkjs's public.json. */
  publicSignals: string[];
}

const openFlags = (options: KeyOpenOptions) =>
  (options.skipPointChecks ? ABI.KEY_SKIP_POINT_CHECKS : 0) | (options.pointsOnDemand ? ABI.KEY_POINTS_ON_DEMAND : 0);

/** cuzk_witness_check.first_bad_index when no value was found not below r. */
const NO_BAD_INDEX = 0xffff_ffff_ffff_ffffn;

/** The facts of a decoded `cuzk_witness_check`. */
function witnessFactsOf(raw: Decoded<typeof WITNESS_CHECK_LAYOUT>): WitnessFacts {
  return {
    ...(raw.witness_curve !== 0 ? { curve: curveOf(raw.witness_curve).name } : {}),
    values: Number(raw.values),
    ...(raw.first_bad_index !== NO_BAD_INDEX ? { firstBadIndex: Number(raw.first_bad_index) } : {}),
  };
}

/** The circuit's sizes: what `cuzk_key_info` and `cuzk_setup_info` both start with. */
export type CircuitSizes = Pick<KeyInfo, "curve" | "nVars" | "nPublic" | "nConstraints" | "domainSize">;

/** The circuit's sizes from either struct's first fields, decoded. */
export function circuitSizesOf(raw: Pick<Decoded<typeof KEY_INFO_LAYOUT>, "curve" | "n_vars" | "n_public" | "n_constraints" | "domain_size">): CircuitSizes {
  return {
    curve: curveOf(raw.curve).name,
    nVars: raw.n_vars,
    nPublic: raw.n_public,
    nConstraints: raw.n_constraints,
    domainSize: raw.domain_size,
  };
}

/** A Groth16 proving key (.zkey). */
export class Key extends NativeHandle {
  /** Where the key came from (path, or "<memory>"). */
  readonly source: string;

  private constructor(native: Native, handle: Pointer, source: string) {
    super(native, handle, "cuzk_key_close");
    this.source = source;
  }

  /**
   * Opens and checks the .zkey at `path` (off the JS thread); the library reads it whole into its
   * own memory. A path that is not a regular file (/dev/zero, a FIFO, a directory) is refused by the
   * library at once with IO; a file larger than this machine's memory with OUT_OF_MEMORY.
   */
  static async open(path: string, options: KeyOpenOptions = {}): Promise<Key> {
    const native = nativeOf(options.library);
    native.require("cuzk_key_open");
    const out = new BigUint64Array(1);
    await invokeAsync(native, "cuzk_key_open", [path, openFlags(options), out], { detail: path });
    return new Key(native, asPointer(out[0]), path);
  }

  /**
   * A key handle made by another call of the library (setup.ts's `setupInsecureDevKey`): this
   * object owns it from here on.
   * @internal
   */
  static adopt(native: Native, handle: Pointer, source: string): Key {
    return new Key(native, handle, source);
  }

  /**
   * Opens a key from .zkey bytes already in memory. The library copies them before this returns:
   * the caller may reuse, change or transfer `bytes` at once.
   */
  static fromBytes(bytes: Uint8Array, options: KeyOpenOptions = {}): Key {
    const native = nativeOf(options.library);
    const out = new BigUint64Array(1);
    invoke(native, "cuzk_key_open_memory", [bytes, bytes.byteLength, openFlags(options), out]);
    return new Key(native, asPointer(out[0]), "<memory>");
  }

  /** Sizes and counts of the key. */
  info(): KeyInfo {
    const out = allocateStruct(KEY_INFO_LAYOUT);
    invoke(this.native, "cuzk_key_get_info", [this.live(), out]);
    const raw = decodeStruct(KEY_INFO_LAYOUT, out);
    return {
      ...circuitSizesOf(raw),
      logDomain: raw.log_domain,
      nCoefs: raw.n_coefs,
      fqBytes: raw.fq_bytes,
      proofBytes: raw.proof_bytes,
      vkBytes: raw.vk_bytes,
      hasR1cs: raw.has_r1cs !== 0,
      fileBytes: Number(raw.file_bytes),
      openMs: Number(raw.open_ns) / 1e6,
    };
  }

  /**
   * Checks a witness against this key without proving: the checks every proof makes first (the
   * .wtns header and its prime against the key's curve, the value count against nVars, every value
   * below r, w[0] = 1). Synchronous. Throws a CuzkError: FORMAT (malformed .wtns), CURVE_MISMATCH,
   * WITNESS_LENGTH (count, or raw length), INVALID_ARGUMENT (a value not below r; the message
   * names its index), UNSATISFIED (w[0] != 1). The error's `witness` holds what the check found
   * (the .wtns curve, the value count, the first value not below r) as data.
   */
  checkWitness(witness: Uint8Array | NativeBuffer): WitnessCheck {
    return this.#checkWitness(witness, true);
  }

  /**
   * The O(1) checks of checkWitness (header, prime, count, w[0] = 1) without the scan of every
   * value < r, which proving makes itself, off the JS thread and beside the previous proof of a
   * batch: what Prover checks before queueing a witness.
   */
  checkWitnessShape(witness: Uint8Array | NativeBuffer): WitnessCheck {
    return this.#checkWitness(witness, false);
  }

  /** cuzk_key_check_witness: with `scan`, every value < r too; a refusal carries its facts. */
  #checkWitness(witness: Uint8Array | NativeBuffer, scan: boolean): WitnessCheck {
    const handle = this.live();
    const bytes = witness instanceof NativeBuffer ? witness.bytes : witness;
    const format = isWtns(bytes) ? "wtns" : "raw";
    const found = allocateStruct(WITNESS_CHECK_LAYOUT);
    const memory = witness instanceof NativeBuffer ? witness.unsafePointer : witness;
    try {
      invoke(this.native, "cuzk_key_check_witness", [
        handle,
        memory,
        bytes.byteLength,
        format === "wtns" ? ABI.WITNESS_WTNS : ABI.WITNESS_RAW,
        scan ? ABI.CHECK_SCAN : 0,
        found,
      ]);
    } catch (error) {
      if (!(error instanceof CuzkError)) throw error;
      const { status, nativeMessage, operation } = error;
      const facts = witnessFactsOf(decodeStruct(WITNESS_CHECK_LAYOUT, found));
      throw new CuzkError(error.code, error.message, { status, nativeMessage, operation, witness: facts });
    }
    const valuesOffset = Number(decodeStruct(WITNESS_CHECK_LAYOUT, found).values_offset);
    return { format, valuesOffset, publicSignals: publicSignalsAt(bytes, valuesOffset, this.info().nPublic) };
  }

  /**
   * Attaches the circuit's .r1cs so that witnesses are checked constraint by constraint (the path
   * is refused as for Key.open).
   */
  attachR1cs(path: string): void {
    invoke(this.native, "cuzk_key_attach_r1cs", [this.live(), path], { detail: path });
  }

  /** The verification key bytes: alpha1 | beta2 | gamma2 | delta2 | IC[0..nPublic] (output encoding). */
  exportVk(): Uint8Array {
    return this.#exported("cuzk_key_export_vk");
  }

  /** The point fields of snarkjs's verification_key.json (without vk_alphabeta_12). */
  exportVkJson(): ReturnType<typeof verificationKeyToJson> {
    return verificationKeyToJson(curveOf(this.info().curve), this.exportVk());
  }

  /**
   * e(alpha1, beta2) as snarkjs's verification_key.json holds it (vk_alphabeta_12, computed by the
   * library as snarkjs computes it): [[[c000, c001], [c010, c011], [c020, c021]], [[c100, c101], ...]]
   * over Fq12 = Fq6[w], Fq6 = Fq2[v], Fq2 = Fq[u], decimal strings.
   */
  exportVkAlphaBeta(): string[][][] {
    const bytes = this.#exported("cuzk_key_export_vk_alphabeta");
    const n = this.info().fqBytes;
    const fq = (i: number) => readLE(bytes, i * n, n).toString();
    return [0, 1].map((w) => [0, 1, 2].map((v) => [fq(6 * w + 2 * v), fq(6 * w + 2 * v + 1)]));
  }

  /** The bytes of an export call that reports its size when given no buffer. */
  #exported(call: "cuzk_key_export_vk" | "cuzk_key_export_vk_alphabeta"): Uint8Array {
    const handle = this.live();
    const length = new BigUint64Array(1);
    // Ask for the size first (the call reports it also when the buffer is too short).
    invoke(this.native, call, [handle, null, 0, length], { accept: "SHORT_BUFFER" });
    const out = new Uint8Array(Number(length[0]));
    invoke(this.native, call, [handle, out, out.length, length]);
    return out.subarray(0, Number(length[0]));
  }

  protected describe(): string {
    return `key ${this.source}`;
  }

  protected busyReason(users: number): string {
    return `cannot close key ${this.source}: ${users} prover(s) still use it; close them first`;
  }
}
