/**
 * @module
 * Native host memory owned from JavaScript. `PinnedBuffer` is page-locked memory from
 * cuzk_host_alloc (host<->GPU copies run ~7x faster from it); without a GPU driver the library
 * falls back to ordinary memory and `.pinned` says so. `HostBuffer` is the same without pinning.
 * Both give zero-copy views, refuse to be freed while a native call uses them (code BUSY), detach
 * their views on free where the runtime can, and are freed only explicitly: the
 * FinalizationRegistry below only warns about a buffer that was dropped without free().
 */
import { deviceIndex, hostBytes } from "../bounds.ts";
import { CuzkError } from "../errors.ts";
import type { Native } from "../ffi/load.ts";
import { ABI } from "../ffi/symbols.ts";
import type { Pointer } from "../ffi/types.ts";
import { asPointer } from "../ffi/types.ts";
import type { Library } from "../library.ts";
import { nativeOf } from "../library.ts";
import { invoke } from "../native_call.ts";

/** Bytes of one Fr element (scalars, witness values): 32, little-endian, standard form. */
export const FR_BYTES = ABI.FR_BYTES;

const leakWarnings = new FinalizationRegistry<{ kind: string; byteLength: number }>(({ kind, byteLength }) => {
  console.warn(
    `cuzk: a ${kind} of ${byteLength} bytes was garbage-collected without free(); its native memory leaked ` +
      `(call free() or use \`using\`).`,
  );
});

/** Options of HostBuffer.alloc / PinnedBuffer.alloc. */
export interface AllocOptions {
  library?: Library;
}

/** Options of PinnedBuffer.alloc. */
export interface PinnedAllocOptions extends AllocOptions {
  /** GPU whose driver pins the memory (default 0): an integer from 0 to 2^31 - 1. */
  device?: number;
}

/** Memory allocated by the native library and owned by this object. */
export abstract class NativeBuffer {
  readonly #native: Native;
  readonly #kind: string;
  #pointer: Pointer;
  #arrayBuffer: ArrayBuffer | undefined;
  #uses = 0;
  #viewsDetached = false;
  /** Size in bytes. */
  readonly byteLength: number;

  protected constructor(native: Native, kind: string, pointer: Pointer, byteLength: number) {
    this.#native = native;
    this.#kind = kind;
    this.#pointer = pointer;
    this.byteLength = byteLength;
    leakWarnings.register(this, { kind, byteLength }, this);
  }

  /** Allocates through cuzk_host_alloc; returns the pointer and the out flags. */
  protected static allocate(native: Native, byteLength: number, flags: number, device: number): [Pointer, number] {
    hostBytes(byteLength, "buffer size");
    deviceIndex(device);
    const outPointer = new BigUint64Array(1);
    const outFlags = new Uint32Array(1);
    invoke(native, "cuzk_host_alloc", [byteLength, flags, device, outPointer, outFlags], { detail: String(byteLength) });
    return [asPointer(outPointer[0]), outFlags[0]];
  }

  /** True after free(). */
  get freed(): boolean {
    return this.#pointer === 0n;
  }

  /** True while a native call uses the buffer (free() refuses then). */
  get busy(): boolean {
    return this.#uses > 0;
  }

  /** Whether free() detached the JS views (Deno, Bun, Node >= 22 can; else views must not be used after free). */
  get viewsDetached(): boolean {
    return this.#viewsDetached;
  }

  /** The native address: an escape hatch for callers with their own FFI; invalid after free(). */
  get unsafePointer(): Pointer {
    this.#assertLive();
    return this.#pointer;
  }

  /** The whole buffer as bytes, without a copy. The view is detached by free() where possible. */
  get bytes(): Uint8Array {
    this.#assertLive();
    this.#arrayBuffer ??= this.#native.view(this.#pointer, this.byteLength);
    return new Uint8Array(this.#arrayBuffer);
  }

  /** How many whole Fr elements (32 bytes) fit. */
  get frCount(): number {
    return Math.floor(this.byteLength / FR_BYTES);
  }

  /** The 32 bytes of Fr element `index`, without a copy. */
  fr(index: number): Uint8Array {
    if (!Number.isInteger(index) || index < 0 || index >= this.frCount) {
      throw new RangeError(`Fr index ${index} out of range 0..${this.frCount - 1}`);
    }
    return this.bytes.subarray(index * FR_BYTES, (index + 1) * FR_BYTES);
  }

  /** Fr element `index` as a bigint (little-endian, standard form). */
  getFr(index: number): bigint {
    const bytes = this.fr(index);
    let value = 0n;
    for (let i = FR_BYTES - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i]);
    return value;
  }

  /** Writes `value` (0 <= value < 2^256) as Fr element `index`. */
  setFr(index: number, value: bigint): void {
    if (value < 0n || value >> 256n !== 0n) throw new RangeError("an Fr element must be in [0, 2^256)");
    const bytes = this.fr(index);
    for (let i = 0; i < FR_BYTES; i++) {
      bytes[i] = Number(value & 0xffn);
      value >>= 8n;
    }
  }

  /** Copies `source` into the buffer at `offset`. */
  set(source: ArrayLike<number>, offset = 0): void {
    this.bytes.set(source, offset);
  }

  /**
   * Marks the buffer as used by a native call until the returned function is called; free()
   * throws BUSY meanwhile. The object layer wraps every call that reads or writes the buffer.
   */
  acquire(): () => void {
    this.#assertLive();
    this.#uses++;
    let released = false;
    return () => {
      if (!released) {
        released = true;
        this.#uses--;
      }
    };
  }

  /** Runs `work` with the buffer acquired (see `acquire`). */
  async use<T>(work: (pointer: Pointer) => Promise<T> | T): Promise<T> {
    const release = this.acquire();
    try {
      return await work(this.#pointer);
    } finally {
      release();
    }
  }

  /**
   * Returns the memory to the library. Idempotent. Throws BUSY while a native call uses the
   * buffer. Views from `bytes`/`fr` are detached where the runtime supports it.
   */
  free(): void {
    if (this.#pointer === 0n) return;
    if (this.#uses > 0) {
      throw new CuzkError("BUSY", `cannot free a ${this.#kind} of ${this.byteLength} bytes: ${this.#uses} native call(s) use it`);
    }
    invoke(this.#native, "cuzk_host_free", [this.#pointer]);
    this.#pointer = 0n as Pointer;
    leakWarnings.unregister(this);
    this.#detachViews();
  }

  #detachViews(): void {
    const buffer = this.#arrayBuffer as (ArrayBuffer & { transfer?: (length?: number) => ArrayBuffer }) | undefined;
    this.#arrayBuffer = undefined;
    if (!buffer) {
      this.#viewsDetached = true;
      return;
    }
    try {
      if (typeof buffer.transfer === "function") {
        buffer.transfer(0);
        this.#viewsDetached = buffer.byteLength === 0;
      }
    } catch {
      // External buffers that cannot be detached (e.g. some Node versions): views stay dangling.
      this.#viewsDetached = false;
    }
  }

  #assertLive(): void {
    if (this.#pointer === 0n) throw new CuzkError("CLOSED", `this ${this.#kind} was freed`);
  }

  /** Same as free(). */
  [Symbol.dispose](): void {
    this.free();
  }
}

/** Ordinary (pageable) host memory from the native library. */
export class HostBuffer extends NativeBuffer {
  private constructor(native: Native, pointer: Pointer, byteLength: number) {
    super(native, "HostBuffer", pointer, byteLength);
  }

  /**
   * Allocates `byteLength` bytes (zeroed is not promised): from 1 to this machine's memory
   * (`os.totalmem()`); more is refused with OUT_OF_MEMORY before the library is asked.
   */
  static alloc(byteLength: number, options: AllocOptions = {}): HostBuffer {
    const native = nativeOf(options.library);
    const [pointer] = NativeBuffer.allocate(native, byteLength, 0, 0);
    return new HostBuffer(native, pointer, byteLength);
  }
}

/** Page-locked host memory (or ordinary memory where no GPU driver can pin: see `pinned`). */
export class PinnedBuffer extends NativeBuffer {
  /** True when the memory really is page-locked. */
  readonly pinned: boolean;

  private constructor(native: Native, pointer: Pointer, byteLength: number, pinned: boolean) {
    super(native, "PinnedBuffer", pointer, byteLength);
    this.pinned = pinned;
  }

  /**
   * Allocates `byteLength` bytes (from 1 to this machine's memory, as HostBuffer.alloc); slow when
   * really pinned (seconds per GiB): allocate once, reuse.
   */
  static alloc(byteLength: number, options: PinnedAllocOptions = {}): PinnedBuffer {
    const native = nativeOf(options.library);
    const [pointer, flags] = NativeBuffer.allocate(native, byteLength, ABI.HOST_PINNED, options.device ?? 0);
    return new PinnedBuffer(native, pointer, byteLength, (flags & ABI.HOST_IS_PINNED) !== 0);
  }
}
