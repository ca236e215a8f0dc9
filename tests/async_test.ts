/**
 * @module
 * Promise: long native calls run off the JS thread in every runtime (Deno nonblocking, koffi
 * async, a Bun worker): timers keep firing while an NTT or a whole proof runs, results land in the caller's memory,
 * errors come back as CuzkErrors, and a buffer a running call uses cannot be freed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Context, Key, PinnedBuffer, Prover } from "../mod.ts";
import { fixtures, library, needs } from "./support/native.ts";

/** Equality of large byte arrays without assert's element diff (quadratic in memory on big arrays). */
function assertSameBytes(actual: Uint8Array, expected: Uint8Array, message: string): void {
  assert.equal(actual.length, expected.length, `${message}: length`);
  const at = actual.findIndex((byte, i) => byte !== expected[i]);
  assert.equal(at, -1, `${message}: first difference at byte ${at}`);
}

const kernelApi = ["cuzk_context_create", "cuzk_context_backend", "cuzk_context_destroy", "cuzk_ntt", "cuzk_host_alloc"] as const;

/** Small distinct values, all below r (the rest of each 32-byte element zeroed: host memory is not). */
function fillValues(buffer: PinnedBuffer): void {
  const count = buffer.frCount;
  const bytes = buffer.bytes;
  bytes.fill(0);
  for (let i = 0; i < count; i++) {
    bytes[i * 32] = i & 0xff;
    bytes[i * 32 + 1] = (i >> 8) & 0xff;
    bytes[i * 32 + 2] = (i >> 16) & 0xff;
  }
}

test("timers keep firing during a long native call (NTT)", needs(...kernelApi), async () => {
  library();
  // One worker thread leaves a core to the JS thread on a 2-core machine.
  using context = Context.create({ backend: "cpu", cpuThreads: 1 });
  const curve = library().info().curves.includes("bn254") ? "bn254" : "bls12_381";
  const TICK_MS = 5;
  for (let logN = 16; ; logN += 2) {
    using values = PinnedBuffer.alloc((1 << logN) * 32);
    fillValues(values);
    const ticks: number[] = [];
    const timer = setInterval(() => ticks.push(performance.now()), TICK_MS);
    let start = 0, end = 0;
    try {
      // let the interval settle before the measured call
      await new Promise((resolve) => setTimeout(resolve, 3 * TICK_MS));
      start = performance.now();
      await context.ntt(curve, values, { kind: "forward" });
      end = performance.now();
    } finally {
      clearInterval(timer);
    }
    const duration = end - start;
    if (duration < 150 && logN < 22) continue; // too fast to tell: try a bigger input (at most 128 MiB)
    const during = ticks.filter((t) => t > start && t < end).length;
    assert.ok(
      during >= Math.max(1, Math.floor((duration / TICK_MS) * 0.25)),
      `only ${during} timer ticks during a ${duration.toFixed(0)} ms NTT of 2^${logN} values: the JS thread was blocked`,
    );
    assert.equal(values.busy, false, "the buffer is released when the call settles");
    return;
  }
});

const proverApi = ["cuzk_key_open", "cuzk_context_create", "cuzk_prover_create", "cuzk_prove", "cuzk_host_alloc"] as const;

test("timers keep firing during a long proof", needs(...proverApi), async () => {
  const curves = library().info().curves as string[];
  // The committed fixture with the largest domain, on one worker thread (a core left to the JS thread).
  const fixture = fixtures().filter((f) => curves.includes(f.curve))
    .sort((a, b) => Number(b.manifest?.domain_size ?? 0) - Number(a.manifest?.domain_size ?? 0))[0];
  using prover = await Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu", cpuThreads: 1 });
  const witness = fixture.bytes("witness.wtns");
  const TICK_MS = 5;
  for (let batch = 1; ; batch *= 2) {
    const ticks: number[] = [];
    const timer = setInterval(() => ticks.push(performance.now()), TICK_MS);
    let start = 0, end = 0, proofs = 0;
    try {
      await new Promise((resolve) => setTimeout(resolve, 3 * TICK_MS));
      start = performance.now();
      proofs = (await prover.proveBatch(Array.from({ length: batch }, () => witness))).length;
      end = performance.now();
    } finally {
      clearInterval(timer);
    }
    const duration = end - start;
    if (duration < 150 && batch < 64) continue; // too fast to tell: prove more witnesses in one call
    assert.equal(proofs, batch);
    const during = ticks.filter((t) => t > start && t < end).length;
    console.log(`timers during a proof: ${during} ticks of ${TICK_MS} ms during a ${duration.toFixed(0)} ms call (${batch} x ${fixture.curve}/${fixture.name})`);
    assert.ok(
      during >= Math.max(1, Math.floor((duration / TICK_MS) * 0.25)),
      `only ${during} timer ticks during a ${duration.toFixed(0)} ms proof call (${batch} x ${fixture.curve}/${fixture.name}): the JS thread was blocked`,
    );
    return;
  }
});

test("an NTT run off-thread writes its result into the caller's memory", needs(...kernelApi), async () => {
  using context = Context.create({ backend: "cpu" });
  const curve = library().info().curves.includes("bn254") ? "bn254" : "bls12_381";
  using values = PinnedBuffer.alloc(1024 * 32);
  fillValues(values);
  const original = values.bytes.slice();
  await context.ntt(curve, values, { kind: "forward" });
  assert.notEqual(values.bytes.findIndex((byte, i) => byte !== original[i]), -1, "the forward NTT changed the values in place");
  const forward = values.bytes.slice();
  await context.ntt(curve, values, { kind: "inverse" });
  assertSameBytes(values.bytes, original, "inverse(forward(x)) = x");

  const jsMemory = original.slice();
  await context.ntt(curve, jsMemory, { kind: "forward" });
  assertSameBytes(jsMemory, forward, "JS memory is transformed in place like native memory");
  await context.ntt(curve, jsMemory, { kind: "inverse" });
  assertSameBytes(jsMemory, original, "JS memory works as well as native memory");
});

test("a buffer cannot be freed while an async call uses it", needs(...kernelApi), async () => {
  using context = Context.create({ backend: "cpu" });
  const curve = library().info().curves.includes("bn254") ? "bn254" : "bls12_381";
  const values = PinnedBuffer.alloc((1 << 16) * 32);
  fillValues(values);
  const running = context.ntt(curve, values);
  assert.equal(values.busy, true);
  assert.throws(() => values.free(), { code: "BUSY" });
  assert.throws(() => context.close(), { code: "BUSY" }, "the context is busy too");
  await running;
  values.free();
});

test("errors of an async call come back as CuzkErrors with the native message", needs("cuzk_key_open"), async () => {
  await assert.rejects(Key.open("/nonexistent/circuit.zkey"), (error: unknown) => {
    assert.equal((error as { code?: string }).code, "IO");
    assert.match((error as Error).message, /nonexistent\/circuit\.zkey/);
    return true;
  });
});

test("several async calls can be in flight at once", needs(...kernelApi), async () => {
  // One context per call: a context may serialise its own calls, the bindings must not.
  const contexts = [0, 1, 2].map(() => Context.create({ backend: "cpu", cpuThreads: 1 }));
  const curve = library().info().curves.includes("bn254") ? "bn254" : "bls12_381";
  const buffers = [0, 1, 2].map(() => {
    const b = PinnedBuffer.alloc(4096 * 32);
    fillValues(b);
    return b;
  });
  try {
    const before = buffers.map((b) => b.bytes.slice());
    await Promise.all(buffers.map((b, i) => contexts[i].ntt(curve, b)));
    await Promise.all(buffers.map((b, i) => contexts[i].ntt(curve, b, { kind: "inverse" })));
    buffers.forEach((b, i) => assertSameBytes(b.bytes, before[i], `buffer ${i}`));
  } finally {
    for (const b of buffers) b.free();
    for (const c of contexts) c.close();
  }
});
