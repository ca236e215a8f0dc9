/**
 * @module
 * A pool of pinned buffers: pinning is slow (seconds per GiB) and bursts of it stall a GPU, so a
 * proving loop takes its staging buffers from here and gives them back; after the first round it
 * allocates nothing. Buffers are matched by exact size, which is what a loop over one circuit asks.
 */
import { deviceIndex, hostBytes, integerIn, LIMITS } from "../bounds.ts";
import { CuzkError } from "../errors.ts";
import type { Library } from "../library.ts";
import { HostBuffer, PinnedBuffer } from "./buffer.ts";
import type { NativeBuffer } from "./buffer.ts";

/** Options of a BufferPool. */
export interface BufferPoolOptions {
  library?: Library;
  /** "pinned" (default) or "host" (pageable). */
  kind?: "pinned" | "host";
  /** GPU whose driver pins the memory (default 0): an integer from 0 to 2^31 - 1. */
  device?: number;
  /** Free buffers kept for reuse, in bytes, beyond which given-back buffers are freed (default: no limit): an integer >= 0. */
  maxIdleBytes?: number;
  /**
   * Buffers the pool holds at once, handed out plus idle: 1 to 4096, default 64. take() beyond it
   * frees an idle buffer of another size, or, when none is idle, is refused with BUSY.
   */
  maxBuffers?: number;
}

/** Counters of a BufferPool. */
export interface BufferPoolStats {
  /** Buffers allocated over the pool's life. */
  allocations: number;
  /** take() calls served by an idle buffer. */
  reuses: number;
  /** Buffers handed out and not yet given back. */
  inUse: number;
  /** Buffers waiting to be reused, and their bytes. */
  idle: number;
  idleBytes: number;
}

/** A buffer taken from a pool; disposing it gives it back. */
export interface PoolLease<B extends NativeBuffer> {
  readonly buffer: B;
  [Symbol.dispose](): void;
}

/** Hands out pinned (or host) buffers and takes them back for reuse. */
export class BufferPool<B extends NativeBuffer = PinnedBuffer> {
  readonly #options: BufferPoolOptions;
  readonly #idle = new Map<number, B[]>();
  readonly #out = new Set<B>();
  #idleBytes = 0;
  #allocations = 0;
  #reuses = 0;
  #closed = false;

  readonly #maxBuffers: number;

  /** A pool; its options are checked against their bounds (INVALID_ARGUMENT). */
  constructor(options: BufferPoolOptions = {}) {
    if (options.device !== undefined) deviceIndex(options.device);
    if (options.maxIdleBytes !== undefined) integerIn(options.maxIdleBytes, "maxIdleBytes", 0, Number.MAX_SAFE_INTEGER);
    this.#maxBuffers = integerIn(options.maxBuffers ?? LIMITS.poolBuffers, "maxBuffers", 1, LIMITS.poolBuffersMax);
    this.#options = options;
  }

  /**
   * A buffer of exactly `byteLength` bytes (at most this machine's memory): an idle one when there
   * is one, else a new one (see maxBuffers).
   */
  take(byteLength: number): B {
    if (this.#closed) throw new CuzkError("CLOSED", "this BufferPool was closed");
    hostBytes(byteLength, "pool buffer size");
    const reusable = this.#idle.get(byteLength);
    let buffer = reusable?.pop();
    if (buffer) {
      this.#reuses++;
      this.#idleBytes -= byteLength;
    } else {
      this.#makeRoom();
      const { library, device } = this.#options;
      buffer = (this.#options.kind === "host"
        ? HostBuffer.alloc(byteLength, { library })
        : PinnedBuffer.alloc(byteLength, { library, device })) as unknown as B;
      this.#allocations++;
    }
    this.#out.add(buffer);
    return buffer;
  }

  /** Keeps the count within maxBuffers: frees an idle buffer (of another size), or refuses. */
  #makeRoom(): void {
    let held = this.#out.size;
    for (const list of this.#idle.values()) held += list.length;
    if (held < this.#maxBuffers) return;
    for (const [size, list] of this.#idle) {
      const spare = list.pop();
      if (!spare) continue;
      if (list.length === 0) this.#idle.delete(size);
      this.#idleBytes -= size;
      spare.free();
      return;
    }
    throw new CuzkError("BUSY", `the pool holds ${this.#maxBuffers} buffers (its maxBuffers), all handed out; give one back first`);
  }

  /** Gives back a buffer from take(); it is kept for reuse (or freed past maxIdleBytes). */
  give(buffer: B): void {
    if (!this.#out.delete(buffer)) throw new CuzkError("INVALID_ARGUMENT", "this buffer was not taken from this pool");
    if (buffer.busy) {
      this.#out.add(buffer);
      throw new CuzkError("BUSY", "cannot give back a buffer a native call still uses");
    }
    const limit = this.#options.maxIdleBytes ?? Infinity;
    if (this.#closed || this.#idleBytes + buffer.byteLength > limit) {
      buffer.free();
      return;
    }
    const list = this.#idle.get(buffer.byteLength) ?? [];
    list.push(buffer);
    this.#idle.set(buffer.byteLength, list);
    this.#idleBytes += buffer.byteLength;
  }

  /** take() as a lease that gives the buffer back when disposed. */
  lease(byteLength: number): PoolLease<B> {
    const buffer = this.take(byteLength);
    return { buffer, [Symbol.dispose]: () => this.give(buffer) };
  }

  /** The pool's counters. */
  get stats(): BufferPoolStats {
    let idle = 0;
    for (const list of this.#idle.values()) idle += list.length;
    return {
      allocations: this.#allocations,
      reuses: this.#reuses,
      inUse: this.#out.size,
      idle,
      idleBytes: this.#idleBytes,
    };
  }

  /**
   * Frees the idle buffers. Buffers still taken out are freed when given back; with `force`,
   * they are freed now (throwing BUSY if a native call still uses one).
   */
  close(options: { force?: boolean } = {}): void {
    this.#closed = true;
    for (const list of this.#idle.values()) for (const buffer of list) buffer.free();
    this.#idle.clear();
    this.#idleBytes = 0;
    if (options.force) {
      for (const buffer of this.#out) buffer.free();
      this.#out.clear();
    }
  }

  /** Same as close(). */
  [Symbol.dispose](): void {
    this.close();
  }
}
