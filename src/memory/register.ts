/**
 * @module
 * Page-locking memory the caller already has (cuzk_host_register). It costs ~0.04 s/GiB, so it is
 * an explicit, timed operation done once, never hidden inside a proof; the registration keeps the
 * JS memory referenced until it is undone.
 */
import { CuzkError } from "../errors.ts";
import type { Native } from "../ffi/load.ts";
import type { Library } from "../library.ts";
import { nativeOf } from "../library.ts";
import { invoke } from "../native_call.ts";

/** Caller memory page-locked through the CUDA driver, until `unregister()`. */
export class RegisteredMemory {
  readonly #native: Native;
  #memory: ArrayBufferView | undefined;
  /** Milliseconds the library spent page-locking. */
  readonly registerMs: number;

  private constructor(native: Native, memory: ArrayBufferView, registerMs: number) {
    this.#native = native;
    this.#memory = memory;
    this.registerMs = registerMs;
  }

  /**
   * Page-locks `memory` (slow: do it once, not per proof). Throws NO_DEVICE without a GPU driver.
   */
  static register(memory: ArrayBufferView, options: { library?: Library } = {}): RegisteredMemory {
    const native = nativeOf(options.library);
    if (memory.byteLength === 0) throw new CuzkError("INVALID_ARGUMENT", "cannot register an empty buffer");
    const outNs = new BigUint64Array(1);
    invoke(native, "cuzk_host_register", [memory, memory.byteLength, outNs], { detail: `${memory.byteLength} bytes` });
    return new RegisteredMemory(native, memory, Number(outNs[0]) / 1e6);
  }

  /** True until unregister(). */
  get registered(): boolean {
    return this.#memory !== undefined;
  }

  /** Undoes the page-locking. Idempotent. */
  unregister(): void {
    const memory = this.#memory;
    if (!memory) return;
    invoke(this.#native, "cuzk_host_unregister", [memory]);
    this.#memory = undefined;
  }

  /** Same as unregister(). */
  [Symbol.dispose](): void {
    this.unregister();
  }
}
