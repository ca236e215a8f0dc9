/**
 * @module
 * Promise: every size a caller of the bindings chooses has a documented bound and is refused with
 * a typed CuzkError before anything is allocated or started: thread counts (the library's limit,
 * with the process's thread count staying low), GPU indices (int32 range: 2^32 is not GPU 0),
 * batch sizes, queued calls, pool sizes and counts, host buffer sizes.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { test } from "node:test";
import { BufferPool, Context, HostBuffer, PinnedBuffer, Prover, setupInsecureDev } from "../mod.ts";
import { refusedWith as refused } from "./support/errors.ts";
import { nativeOf } from "../src/library.ts";
import { invoke } from "../src/native_call.ts";
import { fixtures, library, needs } from "./support/native.ts";
import { rawValues } from "./support/wtns.ts";

const contextApi = ["cuzk_context_create", "cuzk_context_backend", "cuzk_context_destroy", "cuzk_library_info_get"] as const;
const hostApi = ["cuzk_host_alloc", "cuzk_host_free", "cuzk_host_stats"] as const;
const proverApi = [...contextApi, ...hostApi, "cuzk_key_open", "cuzk_key_check_witness", "cuzk_prover_create", "cuzk_prove", "cuzk_verify"] as const;

const bn = fixtures().find((f) => f.curve === "bn254" && f.name === "mulchain_4")!;

/** Threads of this process now (Linux). */
function processThreads(): number {
  const line = readFileSync("/proc/self/status", "utf8").split("\n").find((l) => l.startsWith("Threads:"))!;
  return Number(line.split(/\s+/)[1]);
}


test("cpuThreads above the library's limit is refused, and no thread is started for it", needs(...contextApi), async () => {
  const limit = library().info().cpuThreads;
  const cores = cpus().length;
  assert.ok(limit >= 1, "the library reports its thread limit");
  // The runtime has threads of its own (JIT, GC, FFI pools): what the call adds is measured.
  const before = processThreads();
  assert.throws(() => Context.create({ backend: "cpu", cpuThreads: 100000 }), refused("INVALID_ARGUMENT", new RegExp(`0 to ${limit}`)));
  assert.ok(processThreads() - before < 2 * cores, `threads ${before} -> ${processThreads()} (cores ${cores})`);
  for (const bad of [-1, 1.5, Number.NaN, limit + 1, 2 ** 32]) {
    assert.throws(() => Context.create({ backend: "cpu", cpuThreads: bad }), refused("INVALID_ARGUMENT"), `cpuThreads ${bad}`);
  }
  assert.throws(() => Context.create({ backend: "cpu", cpuThreads: "4" as unknown as number }), refused("INVALID_ARGUMENT"));
  await assert.rejects(Prover.open({ zkey: bn.file("circuit.zkey"), backend: "cpu", cpuThreads: 100000 }), refused("INVALID_ARGUMENT"));
  await assert.rejects(setupInsecureDev("/nonexistent.r1cs", "/nonexistent.zkey", { threads: 100000 }), refused("INVALID_ARGUMENT"));
  using context = Context.create({ backend: "cpu", cpuThreads: limit });
  assert.equal(context.backend, "cpu", "the limit itself is accepted");
  assert.ok(processThreads() - before < 2 * cores, `threads with a context at the limit: ${before} -> ${processThreads()}`);
});

test("the library refuses such a thread count too, when asked past the bindings", needs(...contextApi), () => {
  const native = nativeOf(library());
  const cores = cpus().length;
  const before = processThreads();
  const out = new BigUint64Array(1);
  assert.throws(() => invoke(native, "cuzk_context_create", [1 /* CPU */, 0, 100000, 0, out]), refused("INVALID_ARGUMENT", /100000/));
  assert.equal(out[0], 0n, "no context was made");
  assert.ok(processThreads() - before < 2 * cores, `threads ${before} -> ${processThreads()} (cores ${cores})`);
});

test("a GPU index must be a safe integer in int32 range: 2^32 is refused, not GPU 0", needs(...contextApi, ...hostApi), () => {
  for (const bad of [2 ** 32, 2 ** 31, -1, 0.5, Number.POSITIVE_INFINITY]) {
    assert.throws(() => Context.create({ backend: "cpu", device: bad }), refused("INVALID_ARGUMENT"), `device ${bad}`);
    assert.throws(() => PinnedBuffer.alloc(64, { device: bad }), refused("INVALID_ARGUMENT"), `pinned device ${bad}`);
    assert.throws(() => new BufferPool({ device: bad }), refused("INVALID_ARGUMENT"), `pool device ${bad}`);
  }
  assert.equal(library().hostStats().liveBuffers, 0, "nothing was allocated");
});

test("host buffer sizes: positive, and not above this machine's memory", needs(...hostApi), () => {
  const before = library().hostStats().liveBuffers;
  assert.throws(() => HostBuffer.alloc(totalmem() + 1), refused("OUT_OF_MEMORY"));
  assert.throws(() => PinnedBuffer.alloc(2 ** 52), refused("OUT_OF_MEMORY"));
  assert.throws(() => HostBuffer.alloc(2 ** 53), refused("INVALID_ARGUMENT"), "not a safe integer");
  assert.throws(() => HostBuffer.alloc(0), refused("INVALID_ARGUMENT"));
  assert.equal(library().hostStats().liveBuffers, before, "nothing was allocated");
});

test("a BufferPool's sizes and counts are bounded", needs(...hostApi), () => {
  for (const bad of [-1, Number.NaN, 1.5]) {
    assert.throws(() => new BufferPool({ maxIdleBytes: bad }), refused("INVALID_ARGUMENT"), `maxIdleBytes ${bad}`);
  }
  for (const bad of [0, 4097, 2.5]) {
    assert.throws(() => new BufferPool({ maxBuffers: bad }), refused("INVALID_ARGUMENT"), `maxBuffers ${bad}`);
  }
  using pool = new BufferPool({ kind: "host", maxBuffers: 2 });
  assert.throws(() => pool.take(totalmem() + 1), refused("OUT_OF_MEMORY"));
  const a = pool.take(64), b = pool.take(64);
  assert.throws(() => pool.take(64), refused("BUSY", /2 buffers/), "a third buffer is refused");
  pool.give(a);
  const c = pool.take(64);
  assert.equal(c, a, "a given-back buffer is reused within the count");
  pool.give(b);
  pool.give(c);
  pool.close();
  assert.equal(library().hostStats().liveBuffers, 0);
});

test("proveBatch refuses more than 1024 witnesses, and more than 64 queued calls, before staging anything", needs(...proverApi), async () => {
  using prover = await Prover.open({ zkey: bn.file("circuit.zkey"), backend: "cpu" });
  const { raw } = rawValues(bn.bytes("witness.wtns"));
  const before = library().hostStats().liveBuffers;
  await assert.rejects(prover.proveBatch(Array.from({ length: 1025 }, () => raw)), refused("INVALID_ARGUMENT", /1024/));
  assert.equal(library().hostStats().liveBuffers, before, "no staging buffer was taken");
  const calls = Array.from({ length: 64 }, () => prover.prove(raw));
  await assert.rejects(prover.prove(raw), refused("BUSY", /64/));
  const results = await Promise.all(calls);
  const expected = bn.json<string[]>("public.json");
  for (const { proof, publicSignals } of results) {
    assert.deepEqual(publicSignals, expected);
    assert.equal(await prover.verify(publicSignals, proof), true);
  }
  const { proof, publicSignals } = await prover.prove(raw);
  assert.equal(await prover.verify(publicSignals, proof), true, "the prover takes calls again once the queue drained");
});
