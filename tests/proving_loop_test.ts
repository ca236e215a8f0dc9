/**
 * @module
 * Promise: a proving loop over pooled pinned buffers allocates nothing after warm-up. For 1,000
 * proofs the witness generator writes each witness into a buffer leased from a BufferPool and the
 * prover reads it in place; the library's count of live buffers never moves and the process's
 * resident memory stays within a small bound. A buffer (or a prover) that a queued or running
 * proof uses cannot be freed or closed: that is refused with BUSY, and works once the proof
 * settles. A `using` prover whose scope ends mid-proof closes itself when the proof settles.
 */
import assert from "node:assert/strict";
import process from "node:process";
import { test } from "node:test";
import { BufferPool, CuzkError, Prover, verify, WitnessCalculator } from "../mod.ts";
import type { CircuitInput, PinnedBuffer, ProofResult, VerificationKeyJson } from "../mod.ts";
import { fixtures, library, needs } from "./support/native.ts";

const loopApi = ["cuzk_key_open", "cuzk_prover_create", "cuzk_prove", "cuzk_verify", "cuzk_host_alloc", "cuzk_host_free", "cuzk_host_stats"] as const;

const ITERATIONS = 1000;
const WARM_UP = 50;
/**
 * Resident-memory growth allowed over the loop. Nothing native may grow (checked exactly through
 * the live-buffer count); this bounds the JS side, whose garbage each runtime collects on its own
 * schedule (a leak of one proof's buffers per iteration would exceed it several times over).
 */
const RSS_BOUND_MIB = 48;

/** The smallest committed circuit on a curve this library supports. */
function tinyFixture() {
  const all = fixtures();
  let curves: string[] = ["bn254", "bls12_381"];
  try {
    curves = library().info().curves;
  } catch {
    // no library: the test runs and fails with the load error
  }
  return ["bn254", "bls12_381"].filter((c) => curves.includes(c))
    .map((curve) => all.find((f) => f.curve === curve && f.name === "mulchain_4"))
    .find((f) => f !== undefined) ?? all[0];
}

const mib = (bytes: number) => bytes / (1 << 20);

/** Collects garbage where the runtime lets a test ask for it (Bun always; Node/Deno with --expose-gc). */
function collectGarbage(): void {
  const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
  if (bun) bun.gc(true);
  else (globalThis as { gc?: () => void }).gc?.();
}

test(`${ITERATIONS} proofs over pooled pinned buffers: no growth in live buffers or resident memory`, needs(...loopApi), async () => {
  const fixture = tinyFixture();
  const input = fixture.json<CircuitInput>("input.json");
  const expectedSignals = fixture.json<string[]>("public.json");
  const vkey = fixture.json<VerificationKeyJson>("verification_key.json");
  const calculator = await WitnessCalculator.load(fixture.file("circuit.wasm"));
  using prover = await Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu" });
  using pool = new BufferPool();

  /** One iteration: lease, write the witness into the lease, prove from it, give it back. */
  const proveOnce = async () => {
    using lease = pool.lease(calculator.rawBytes);
    await calculator.writeRaw(input, lease.buffer);
    return await prover.prove(lease.buffer);
  };

  for (let i = 0; i < WARM_UP; i++) await proveOnce();
  collectGarbage();
  const liveAfterWarmUp = library().hostStats();
  const rssAfterWarmUp = process.memoryUsage().rss;
  let peakRss = rssAfterWarmUp;
  let rssHalfway = rssAfterWarmUp;

  const started = performance.now();
  let last: ProofResult | undefined;
  for (let i = 1; i <= ITERATIONS; i++) {
    last = await proveOnce();
    const { proof, publicSignals } = last;
    if (i % 100 === 0) {
      assert.deepEqual(publicSignals, expectedSignals, `iteration ${i}: the public signals`);
      assert.equal(await prover.verify(publicSignals, proof), true, `iteration ${i}: the proof verifies`);
      assert.equal(library().hostStats().liveBuffers, liveAfterWarmUp.liveBuffers, `iteration ${i}: live native buffers`);
      const rss = process.memoryUsage().rss;
      peakRss = Math.max(peakRss, rss);
      if (i === ITERATIONS / 2) rssHalfway = rss;
    }
  }
  const elapsedMs = performance.now() - started;
  assert.equal(await verify(vkey, last!.publicSignals, last!.proof), true, "the last proof verifies against verification_key.json");
  collectGarbage();
  const liveAfter = library().hostStats();
  const rssAfter = process.memoryUsage().rss;
  peakRss = Math.max(peakRss, rssAfter);

  console.log(
    `proving loop (${fixture.curve}/${fixture.name}, ${ITERATIONS} proofs, ${(elapsedMs / ITERATIONS).toFixed(2)} ms each): ` +
      `live buffers ${liveAfterWarmUp.liveBuffers} -> ${liveAfter.liveBuffers} (${liveAfter.liveBytes} bytes); ` +
      `RSS ${mib(rssAfterWarmUp).toFixed(1)} -> ${mib(rssAfter).toFixed(1)} MiB (peak ${mib(peakRss).toFixed(1)} MiB, ` +
      `growth ${mib(rssAfter - rssAfterWarmUp).toFixed(1)} MiB, over the second half ${mib(rssAfter - rssHalfway).toFixed(1)} MiB, ` +
      `bound ${RSS_BOUND_MIB} MiB)`,
  );
  assert.equal(liveAfter.liveBuffers, liveAfterWarmUp.liveBuffers, "no native buffer was allocated after warm-up");
  assert.equal(liveAfter.liveBytes, liveAfterWarmUp.liveBytes);
  assert.equal(pool.stats.allocations, 1, "the pool allocated one buffer, once");
  assert.equal(pool.stats.reuses, WARM_UP + ITERATIONS - 1);
  assert.ok(
    mib(peakRss - rssAfterWarmUp) < RSS_BOUND_MIB,
    `resident memory grew by ${mib(peakRss - rssAfterWarmUp).toFixed(1)} MiB over ${ITERATIONS} proofs (bound ${RSS_BOUND_MIB} MiB)`,
  );
  // A runtime may start high and shrink (Deno frees its type checker); a leak shows as steady growth.
  assert.ok(
    mib(rssAfter - rssHalfway) < RSS_BOUND_MIB / 2,
    `resident memory grew by ${mib(rssAfter - rssHalfway).toFixed(1)} MiB over the last ${ITERATIONS / 2} proofs`,
  );
});

test("disposing a buffer (or the prover) while a proof uses it is refused with BUSY", needs(...loopApi), async () => {
  const fixture = tinyFixture();
  const calculator = await WitnessCalculator.load(fixture.file("circuit.wasm"));
  // Counted before the prover: the library may hold host memory of its own for a prover until it closes.
  const liveBefore = library().hostStats().liveBuffers;
  const prover = await Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu" });
  const pool = new BufferPool();
  const lease = pool.lease(calculator.rawBytes);
  const buffer: PinnedBuffer = lease.buffer;
  await calculator.writeRaw(fixture.json<CircuitInput>("input.json"), buffer);

  const busy = (error: unknown) => {
    assert.ok(error instanceof CuzkError, `a CuzkError, got ${error}`);
    assert.equal(error.code, "BUSY");
    assert.match(error.message, /native call|queued or running/, "the message says why");
    return true;
  };
  const proving = [prover.prove(buffer), prover.prove(buffer)]; // the second one waits behind the first
  assert.equal(buffer.busy, true, "busy from the moment the call is made");
  assert.throws(() => buffer.free(), busy);
  assert.throws(() => buffer[Symbol.dispose](), busy);
  assert.throws(() => lease[Symbol.dispose](), busy, "nor can it go back to the pool");
  assert.throws(() => prover.close(), busy);
  await proving[0];
  assert.equal(buffer.busy, true, "still used by the queued call");
  assert.throws(() => buffer.free(), busy);
  const [first, second] = await Promise.all(proving);
  assert.deepEqual(first.publicSignals, second.publicSignals);

  assert.equal(buffer.busy, false, "released when the calls settle");
  lease[Symbol.dispose]();
  pool.close();
  prover.close();
  assert.equal(library().hostStats().liveBuffers, liveBefore, "the pool freed its buffer, the prover its memory");
  assert.equal(buffer.freed, true);
});

test("a `using` prover whose scope ends while its proof runs is closed when the proof ends", needs(...loopApi), async () => {
  const fixture = tinyFixture();
  const liveBefore = library().hostStats().liveBuffers;
  let escaped: Prover | undefined;
  let running: Promise<ProofResult> | undefined;
  {
    using prover = await Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu" });
    escaped = prover;
    running = prover.prove(fixture.bytes("witness.wtns"));
  } // the scope ends here, the proof still queued or running: disposing must not throw
  assert.equal(escaped.closed, false, "still open while its proof runs");
  await assert.rejects(escaped.prove(fixture.bytes("witness.wtns")), (error: unknown) => error instanceof CuzkError && error.code === "CLOSED", "no new calls once disposed");
  const { proof, publicSignals } = await running!;
  assert.deepEqual(publicSignals, fixture.json<string[]>("public.json"));
  assert.equal(escaped.closed, true, "closed as soon as its last call settled");
  assert.equal(library().hostStats().liveBuffers, liveBefore, "and its memory freed");
  assert.equal(await verify(fixture.json<VerificationKeyJson>("verification_key.json"), publicSignals, proof), true, "the proof verifies");
});
