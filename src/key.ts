/**
 * @module
 * A proving key (.zkey) opened in place by the library: memory-mapped and checked, never copied.
 * Several provers (e.g. one per GPU) can share one Key; it refuses to close while one exists.
 */
import { check, CuzkError, errorBuffer } from "./errors.ts";
import type { Native } from "./ffi/load.ts";
import { allocateStruct, decodeStruct, KEY_INFO_LAYOUT } from "./ffi/structs.ts";
import { ABI } from "./ffi/symbols.ts";
import type { Pointer } from "./ffi/types.ts";
import { asPointer } from "./ffi/types.ts";
import { curveOf, verificationKeyToJson } from "./formats/snarkjs.ts";
import { ADD_USER, REMOVE_USER } from "./internal.ts";
import type { CurveName, Library } from "./library.ts";
import { nativeOf } from "./library.ts";

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
}

const openFlags = (options: KeyOpenOptions) => (options.skipPointChecks ? ABI.KEY_SKIP_POINT_CHECKS : 0);

/** A Groth16 proving key (.zkey). */
export class Key {
  readonly #native: Native;
  #handle: Pointer;
  readonly #users = new Set<object>();
  /** Bytes a key opened from memory borrows (kept alive with the key). */
  readonly #borrowed: Uint8Array | undefined;
  /** Where the key came from (path, or "<memory>"). */
  readonly source: string;

  private constructor(native: Native, handle: Pointer, source: string, borrowed?: Uint8Array) {
    this.#native = native;
    this.#handle = handle;
    this.source = source;
    this.#borrowed = borrowed;
  }

  /** Opens and checks the .zkey at `path` (off the JS thread). */
  static async open(path: string, options: KeyOpenOptions = {}): Promise<Key> {
    const native = nativeOf(options.library);
    native.require("cuzk_key_open");
    const out = new BigUint64Array(1);
    const err = errorBuffer();
    const status = (await native.callAsync("cuzk_key_open", path, openFlags(options), out, err, err.length)) as number;
    check(status, err, `cuzk_key_open(${path})`);
    return new Key(native, asPointer(out[0]), path);
  }

  /** Opens a key from .zkey bytes already in memory; the bytes are borrowed for the key's life. */
  static fromBytes(bytes: Uint8Array, options: KeyOpenOptions = {}): Key {
    const native = nativeOf(options.library);
    const out = new BigUint64Array(1);
    const err = errorBuffer();
    const status = native.call("cuzk_key_open_memory", bytes, bytes.byteLength, openFlags(options), out, err, err.length) as number;
    check(status, err, "cuzk_key_open_memory");
    return new Key(native, asPointer(out[0]), "<memory>", bytes);
  }

  /** The native handle: an escape hatch for callers with their own FFI. */
  get unsafeHandle(): Pointer {
    return this.#live();
  }

  /** True after close(). */
  get closed(): boolean {
    return this.#handle === 0n;
  }

  /** Sizes and counts of the key. */
  info(): KeyInfo {
    const out = allocateStruct(KEY_INFO_LAYOUT);
    const err = errorBuffer();
    check(this.#native.call("cuzk_key_get_info", this.#live(), out, err, err.length) as number, err, "cuzk_key_get_info");
    const raw = decodeStruct(KEY_INFO_LAYOUT, out);
    return {
      curve: curveOf(raw.curve as number).name,
      nVars: raw.n_vars as number,
      nPublic: raw.n_public as number,
      nConstraints: raw.n_constraints as number,
      domainSize: raw.domain_size as number,
      logDomain: raw.log_domain as number,
      nCoefs: raw.n_coefs as number,
      fqBytes: raw.fq_bytes as number,
      proofBytes: raw.proof_bytes as number,
      vkBytes: raw.vk_bytes as number,
      hasR1cs: (raw.has_r1cs as number) !== 0,
      fileBytes: Number(raw.file_bytes),
      openMs: Number(raw.open_ns) / 1e6,
    };
  }

  /** Attaches the circuit's .r1cs so that witnesses are checked constraint by constraint. */
  attachR1cs(path: string): void {
    const err = errorBuffer();
    check(this.#native.call("cuzk_key_attach_r1cs", this.#live(), path, err, err.length) as number, err, `cuzk_key_attach_r1cs(${path})`);
  }

  /** The verification key bytes: alpha1 | beta2 | gamma2 | delta2 | IC[0..nPublic] (output encoding). */
  exportVk(): Uint8Array {
    const handle = this.#live();
    const length = new BigUint64Array(1);
    let err = errorBuffer();
    // Ask for the size first (the call reports it also when the buffer is too short).
    let status = this.#native.call("cuzk_key_export_vk", handle, null, 0, length, err, err.length) as number;
    if (status !== 0 && status !== 7 /* SHORT_BUFFER */) check(status, err, "cuzk_key_export_vk");
    const out = new Uint8Array(Number(length[0]));
    err = errorBuffer();
    status = this.#native.call("cuzk_key_export_vk", handle, out, out.length, length, err, err.length) as number;
    check(status, err, "cuzk_key_export_vk");
    return out.subarray(0, Number(length[0]));
  }

  /** The point fields of snarkjs's verification_key.json (without vk_alphabeta_12). */
  exportVkJson(): ReturnType<typeof verificationKeyToJson> {
    return verificationKeyToJson(curveOf(this.info().curve), this.exportVk());
  }

  /** Releases the key. Idempotent. Throws BUSY while a Prover uses it. */
  close(): void {
    if (this.#handle === 0n) return;
    if (this.#users.size > 0) {
      throw new CuzkError("BUSY", `cannot close key ${this.source}: ${this.#users.size} prover(s) still use it; close them first`);
    }
    const err = errorBuffer();
    check(this.#native.call("cuzk_key_close", this.#handle, err, err.length) as number, err, "cuzk_key_close");
    this.#handle = 0n as Pointer;
    void this.#borrowed;
  }

  /** Same as close(). */
  [Symbol.dispose](): void {
    this.close();
  }

  /** @internal */
  [ADD_USER](user: object): void {
    this.#live();
    this.#users.add(user);
  }

  /** @internal */
  [REMOVE_USER](user: object): void {
    this.#users.delete(user);
  }

  #live(): Pointer {
    if (this.#handle === 0n) throw new CuzkError("CLOSED", `key ${this.source} was closed`);
    return this.#handle;
  }
}
