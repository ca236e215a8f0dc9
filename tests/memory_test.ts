/**
 * @module
 * Promise: native host memory is owned safely from JavaScript. Buffers allocate and free (free is
 * idempotent), refuse to be freed while a call uses them, detach their views on free, and the pool
 * reuses buffers so that a loop allocates nothing after warm-up. The library's live-buffer count
 * is back to zero at the end of every test.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BufferPool, CuzkError, HostBuffer, PinnedBuffer, RegisteredMemory } from "../mod.ts";
import type { SymbolName } from "../src/ffi/symbols.ts";
import { library, needs } from "./support/native.ts";

const hostApi = ["cuzk_host_alloc", "cuzk_host_free", "cuzk_host_stats"] as const;
const live = () => library().hostStats();

/**
 * A test that must leave no live native buffer behind. (An explicit check rather than afterEach:
 * Deno's node:test does not run module-level hooks.)
 */
function memoryTest(name: string, body: () => void | Promise<void>, symbols: readonly SymbolName[] = hostApi): void {
  test(name, needs(...symbols), async () => {
    await body();
    assert.equal(live().liveBuffers, 0, "every test frees what it allocates");
  });
}

memoryTest("a pinned buffer allocates, exposes zero-copy views and frees idempotently", () => {
  const before = live();
  const buffer = PinnedBuffer.alloc(1 << 16);
  assert.equal(buffer.byteLength, 1 << 16);
  assert.equal(typeof buffer.pinned, "boolean");
  if (library().info().cudaDeviceCount === 0) assert.equal(buffer.pinned, false, "no driver: falls back to pageable memory");
  assert.equal(live().liveBuffers, before.liveBuffers + 1);
  assert.equal(live().liveBytes, before.liveBytes + (1 << 16));

  const bytes = buffer.bytes;
  bytes[5] = 42;
  assert.equal(buffer.bytes[5], 42, "views share the native memory");
  assert.equal(buffer.frCount, (1 << 16) / 32);
  buffer.setFr(3, 2n ** 255n + 7n);
  assert.equal(buffer.getFr(3), 2n ** 255n + 7n);
  assert.equal(buffer.fr(3)[0], 7);
  assert.throws(() => buffer.fr(buffer.frCount), RangeError);

  buffer.free();
  buffer.free(); // idempotent
  assert.equal(buffer.freed, true);
  assert.equal(live().liveBuffers, before.liveBuffers);
  assert.throws(() => buffer.bytes, { code: "CLOSED" });
  if (typeof (ArrayBuffer.prototype as { transfer?: unknown }).transfer === "function") {
    assert.equal(buffer.viewsDetached, true);
    assert.equal(bytes.byteLength, 0, "the old view is detached, not dangling");
  }
});

memoryTest("a host buffer is pageable memory from the same allocator", () => {
  using buffer = HostBuffer.alloc(4096);
  buffer.set([1, 2, 3], 10);
  assert.deepEqual([...buffer.bytes.subarray(10, 13)], [1, 2, 3]);
  assert.equal(live().liveBuffers, 1);
});

memoryTest("free() is refused while a native call uses the buffer", async () => {
  const buffer = PinnedBuffer.alloc(1024);
  const release = buffer.acquire();
  assert.equal(buffer.busy, true);
  assert.throws(() => buffer.free(), (error: unknown) => error instanceof CuzkError && error.code === "BUSY");
  release();
  release(); // releasing twice counts once
  assert.equal(buffer.busy, false);
  await buffer.use(async () => {
    assert.throws(() => buffer.free(), { code: "BUSY" });
  });
  buffer.free();
  assert.throws(() => buffer.acquire(), { code: "CLOSED" });
});

memoryTest("[Symbol.dispose] frees the buffer", () => {
  {
    using buffer = PinnedBuffer.alloc(256);
    assert.equal(buffer.freed, false);
  }
  assert.equal(live().liveBuffers, 0);
});

memoryTest("invalid sizes are refused before reaching the library", () => {
  assert.throws(() => PinnedBuffer.alloc(0), { code: "INVALID_ARGUMENT" });
  assert.throws(() => HostBuffer.alloc(-1), { code: "INVALID_ARGUMENT" });
});

memoryTest("the pool reuses buffers: a loop allocates nothing after warm-up", () => {
  const pool = new BufferPool();
  for (let round = 0; round < 5; round++) {
    const a = pool.take(4096);
    const b = pool.take(8192);
    assert.equal(a.byteLength, 4096);
    pool.give(a);
    pool.give(b);
  }
  const stats = pool.stats;
  assert.equal(stats.allocations, 2, "one allocation per size");
  assert.equal(stats.reuses, 8);
  assert.equal(stats.inUse, 0);
  assert.equal(stats.idle, 2);
  assert.equal(live().liveBuffers, 2, "idle buffers stay allocated for reuse");

  {
    using lease = pool.lease(4096);
    assert.equal(pool.stats.inUse, 1);
    assert.equal(lease.buffer.byteLength, 4096);
  }
  assert.equal(pool.stats.inUse, 0);

  const busy = pool.take(4096);
  const release = busy.acquire();
  assert.throws(() => pool.give(busy), { code: "BUSY" });
  release();
  pool.give(busy);
  assert.throws(() => pool.give(busy), { code: "INVALID_ARGUMENT" }, "a buffer cannot be given back twice");

  pool.close();
  assert.equal(live().liveBuffers, 0);
  assert.throws(() => pool.take(16), { code: "CLOSED" });
});

memoryTest("the pool frees given-back buffers beyond maxIdleBytes", () => {
  const pool = new BufferPool({ kind: "host", maxIdleBytes: 4096 });
  const a = pool.take(4096), b = pool.take(4096);
  pool.give(a);
  pool.give(b);
  assert.equal(pool.stats.idle, 1);
  assert.equal(live().liveBuffers, 1);
  pool.close();
});

memoryTest("registering caller memory is explicit and timed (NO_DEVICE without a GPU driver)", () => {
  const memory = new Uint8Array(1 << 20);
  if (library().info().cudaDeviceCount === 0) {
    assert.throws(() => RegisteredMemory.register(memory), { code: "NO_DEVICE" });
    return;
  }
  const registration = RegisteredMemory.register(memory);
  assert.ok(registration.registerMs >= 0);
  assert.equal(registration.registered, true);
  registration.unregister();
  registration.unregister(); // idempotent
  assert.equal(registration.registered, false);
}, [...hostApi, "cuzk_host_register", "cuzk_host_unregister"]);
