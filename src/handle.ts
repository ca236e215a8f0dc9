/**
 * @module
 * The life every native handle (Key, Context, Prover) shares: live from open until `close()`,
 * which is idempotent and refused with BUSY while the handle has users (provers holding a key or
 * context, calls queued or running on it). `[Symbol.dispose]` (the end of a `using` scope) cannot
 * be refused: with users it closes the handle as soon as the last one leaves, and takes no new
 * ones meanwhile. Users register through the ADD_USER / REMOVE_USER symbols, which mod.ts does
 * not export.
 */
import { CuzkError } from "./errors.ts";
import type { Native } from "./ffi/load.ts";
import type { Pointer } from "./ffi/types.ts";
import { NULL_POINTER } from "./ffi/types.ts";
import { invoke } from "./native_call.ts";

/** Registers a user of a handle; closing the handle is refused (BUSY) while it has users. */
export const ADD_USER = Symbol("cuzk.addUser");
/** Unregisters a user added with ADD_USER. */
export const REMOVE_USER = Symbol("cuzk.removeUser");

/** The functions of cuzk.h that destroy a handle. */
type Destructor = "cuzk_key_close" | "cuzk_context_destroy" | "cuzk_prover_destroy";

/** A native handle with its users. */
export abstract class NativeHandle {
  protected readonly native: Native;
  #handle: Pointer;
  readonly #destroy: Destructor;
  readonly #users = new Set<object>();
  /** Disposed while in use: closes when the last user leaves. */
  #closeWhenIdle = false;

  protected constructor(native: Native, handle: Pointer, destroy: Destructor) {
    this.native = native;
    this.#handle = handle;
    this.#destroy = destroy;
  }

  /** What the handle is called in messages, e.g. "key circuit.zkey". */
  protected abstract describe(): string;

  /** Why close() is refused while `users` hold the handle. */
  protected abstract busyReason(users: number): string;

  /** Runs after the native object is destroyed (releases what the handle holds). */
  protected afterClose(): void {}

  /** The native handle: an escape hatch for callers with their own FFI. */
  get unsafeHandle(): Pointer {
    return this.live();
  }

  /** True after close(). */
  get closed(): boolean {
    return this.#handle === NULL_POINTER;
  }

  /** Releases the native object. Idempotent. Throws BUSY while the handle has users. */
  close(): void {
    if (this.#handle === NULL_POINTER) return;
    if (this.#users.size > 0) throw new CuzkError("BUSY", this.busyReason(this.#users.size));
    invoke(this.native, this.#destroy, [this.#handle]);
    this.#handle = NULL_POINTER;
    this.afterClose();
  }

  /** close(), or with users (a proof still running when a `using` scope ends), close when the last one leaves. */
  [Symbol.dispose](): void {
    if (this.#users.size === 0) return this.close();
    this.#closeWhenIdle = true;
  }

  /** @internal */
  [ADD_USER](user: object): void {
    this.live();
    if (this.#closeWhenIdle) throw new CuzkError("CLOSED", `${this.describe()} was disposed and closes when its running calls end`);
    this.#users.add(user);
  }

  /** @internal */
  [REMOVE_USER](user: object): void {
    this.#users.delete(user);
    if (this.#closeWhenIdle && this.#users.size === 0) this.close();
  }

  /** The handle; throws CLOSED after close(). */
  protected live(): Pointer {
    if (this.#handle === NULL_POINTER) throw new CuzkError("CLOSED", `${this.describe()} was closed`);
    return this.#handle;
  }

  /** Marks the handle as used (close() refuses) until the returned function is called. */
  protected hold(): () => void {
    const token = {};
    this[ADD_USER](token);
    return () => this[REMOVE_USER](token);
  }
}
