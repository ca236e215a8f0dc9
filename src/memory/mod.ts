/**
 * @module
 * Host memory for the prover: native buffers (pinned or not), the pool that reuses them, and
 * registration of caller memory.
 */
export { FR_BYTES, HostBuffer, NativeBuffer, PinnedBuffer } from "./buffer.ts";
export type { AllocOptions, PinnedAllocOptions } from "./buffer.ts";
export { BufferPool } from "./pool.ts";
export type { BufferPoolOptions, BufferPoolStats, PoolLease } from "./pool.ts";
export { RegisteredMemory } from "./register.ts";
