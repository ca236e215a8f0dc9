/**
 * @module
 * Promise (the parts no second GPU is needed for): a ProverSet divides a batch between
 * its devices in contiguous shares, each proof made by exactly one device's prover and named with
 * it, the proofs equal to the same witnesses proved alone with the same r, s and accepted by
 * snarkjs; progress sums the devices; a failure names its device and leaves the set usable; a
 * cancel rejects with CANCELLED; bad device lists are refused before anything is opened; the
 * waterfall draws one lane per device. Run on the CPU backend, where a "device" is a lane of its
 * own (a context with its own pool).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { CuzkError, batchShares, HostBuffer, lanesTimelineSvg, Prover, ProverSet, setupInsecureDevKey, synthWitnessBytes, synthWitnesses, writeSynthCircuit } from "../mod.ts";
import type { DevKeyResult, NativeBuffer } from "../mod.ts";
import { needs } from "./support/native.ts";
import { assertSnarkjsAccepts } from "./support/snarkjs.ts";

const work = mkdtempSync(join(tmpdir(), "cuzk-prover-set-"));
const circuit = { curve: "bn254" as const, profile: "porep" as const, constraints: 1 << 10, publicInputs: 2, seed: 3 };
let made: DevKeyResult;
let witnesses: NativeBuffer[] = [];
let vkeyPath = "";
const api = needs("cuzk_setup_insecure_dev_key", "cuzk_synth_witnesses", "cuzk_prove");

before(async () => {
  if (api.skip) return;
  const r1cs = join(work, "c.r1cs");
  await writeSynthCircuit(circuit, { r1cs, wtns: join(work, "c.wtns") });
  made = await setupInsecureDevKey(r1cs, { cpuOnly: true });
  vkeyPath = join(work, "vk.json");
  writeFileSync(vkeyPath, JSON.stringify(made.verificationKey));
  witnesses = Array.from({ length: 7 }, () => HostBuffer.alloc(synthWitnessBytes(circuit)));
  await synthWitnesses(circuit, witnesses.map((_, i) => i + 1), witnesses);
});
after(() => {
  for (const w of witnesses) w.free();
  made?.key.close();
  rmSync(work, { recursive: true, force: true });
});

test("batchShares: contiguous shares as equal as they can be, the first ones larger", () => {
  assert.deepEqual(batchShares(7, 2), [{ from: 0, to: 4 }, { from: 4, to: 7 }]);
  assert.deepEqual(batchShares(1, 3), [{ from: 0, to: 1 }, { from: 1, to: 1 }, { from: 1, to: 1 }]);
  assert.deepEqual(batchShares(0, 2), [{ from: 0, to: 0 }, { from: 0, to: 0 }]);
  for (const [n, k] of [[10, 3], [5, 5], [64, 7]]) {
    const shares = batchShares(n, k);
    assert.equal(shares.at(-1)!.to, n);
    const sizes = shares.map((s) => s.to - s.from);
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1);
  }
});

test("a batch across two devices: each proof on one device, equal to the single proof, snarkjs accepts", api, async () => {
  using set = await ProverSet.open({ zkey: made.key, devices: [0, 1], backend: "cpu", cpuThreads: 1 });
  assert.deepEqual(set.devices, [0, 1]);
  assert.equal(set.provers.length, 2);
  assert.equal(set.memoryPlans().length, 2);
  const randomness = witnesses.map((_, i) => ({ r: 5n + BigInt(i), s: 9n + BigInt(i) }));
  const progress: number[] = [];
  const results = await set.proveBatch(witnesses, { randomness, onProgress: (p) => progress.push(p.done) });
  assert.deepEqual(results.map((r) => r.device), [0, 0, 0, 0, 1, 1, 1]);
  assert.equal(progress.at(-1), 7, "progress sums both devices' proofs");
  // The same witnesses alone, on one prover: the same proofs (each witness went to one device, whole).
  using alone = await Prover.open({ zkey: made.key, backend: "cpu" });
  for (const [i, w] of witnesses.entries()) {
    const single = await alone.prove(w, { randomness: randomness[i] });
    assert.deepEqual(results[i].proof, single.proof, `proof ${i}`);
    assert.deepEqual(results[i].publicSignals, single.publicSignals);
  }
  assert.equal(new Set(results.map((r) => r.publicSignals.join())).size, 7, "seven different witnesses");
  assertSnarkjsAccepts(results.map((r, i) => ({ name: `set#${i}`, vkey: vkeyPath, publicSignals: r.publicSignals, proof: r.proof })));

  // The waterfall: one lane per device, the phases of both.
  const svg = lanesTimelineSvg(results);
  assert.match(svg, /dev 0 msm_h #0/);
  assert.match(svg, /dev 1 msm_h #2/);
  assert.ok(!/dev 2/.test(svg));
  writeFileSync(join(work, "lanes.svg"), svg);

  // Fewer witnesses than devices: device 1 gets none; none at all: nothing.
  const one = await set.proveBatch(witnesses.slice(0, 1));
  assert.deepEqual(one.map((r) => r.device), [0]);
  assert.deepEqual(await set.proveBatch([]), []);
});

test("a failure names its device and the set stays usable; a cancel is CANCELLED", api, async () => {
  using set = await ProverSet.open({ zkey: made.key, devices: [3, 1], backend: "cpu", cpuThreads: 1 });
  const bad = new Uint8Array(witnesses[0].bytes);
  bad[32 * 5] = 7; // a wire of the private inputs set to 7: the circuit is not satisfied
  // The key has no .r1cs: the self-check is what refuses the proof.
  const batch = [witnesses[0], witnesses[1], witnesses[2], bad];
  await assert.rejects(set.proveBatch(batch), (e: unknown) => e instanceof CuzkError && e.code === "SELF_CHECK" && /^device 1: /.test(e.message));
  const after = await set.proveBatch(witnesses.slice(0, 4));
  assert.deepEqual(after.map((r) => r.device), [3, 3, 1, 1]);
  const abort = new AbortController();
  abort.abort();
  await assert.rejects(set.proveBatch(witnesses, { signal: abort.signal }), (e: unknown) => e instanceof CuzkError && e.code === "CANCELLED");
  set.close();
  set.close(); // idempotent
  await assert.rejects(set.proveBatch(witnesses), (e: unknown) => e instanceof CuzkError && e.code === "CLOSED");
});

test("bad device lists are refused before anything is opened", api, async () => {
  const refused = (devices: number[], code: string) =>
    assert.rejects(ProverSet.open({ zkey: made.key, devices, backend: "cpu" }), (e: unknown) => e instanceof CuzkError && e.code === code);
  await refused([], "INVALID_ARGUMENT");
  await refused([0, 0], "INVALID_ARGUMENT");
  await refused(Array.from({ length: 65 }, (_, i) => i), "INVALID_ARGUMENT");
  await refused([0, -1], "INVALID_ARGUMENT");
  // The key is still usable: nothing was left holding it.
  using set = await ProverSet.open({ zkey: made.key, backend: "cpu" });
  assert.deepEqual(set.devices, [0]);
});
