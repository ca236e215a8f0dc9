/**
 * @module
 * Promise: long calls report progress and can be cancelled. A proveBatch aborted
 * after its first proof rejects with CANCELLED, leaks no native memory (host stats unchanged) and
 * leaves the prover usable (it proves and verifies afterwards); a dev setup aborted between chunks
 * of key points rejects with CANCELLED and leaves no file; a setup that runs to the end reports
 * progress up to its total. The progress struct is read by a JS timer while the call runs off the
 * JS thread, the same in Deno, Bun and Node.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { Prover, setupInsecureDev, verify, writeSynthCircuit } from "../mod.ts";
import type { Groth16Proof, Progress } from "../mod.ts";
import { refusedWith } from "./support/errors.ts";
import { assertSnarkjsAccepts } from "./support/snarkjs.ts";
import { fixtures, library, needs } from "./support/native.ts";

const work = mkdtempSync(join(tmpdir(), "cuzk-progress-"));
after(() => rmSync(work, { recursive: true, force: true }));

const proveApi = ["cuzk_key_open", "cuzk_prover_create", "cuzk_prove", "cuzk_verify", "cuzk_host_alloc", "cuzk_host_stats"] as const;
const setupApi = ["cuzk_synth_circuit_write", "cuzk_setup_insecure_dev", "cuzk_host_stats"] as const;
const fixture = fixtures().find((f) => f.curve === "bls12_381" && f.name === "poseidon_10")!;
const madeProofs: Array<{ name: string; vkey: string; publicSignals: string[]; proof: Groth16Proof }> = [];

const stats = () => {
  const { liveBuffers, liveBytes } = library().hostStats();
  return { liveBuffers, liveBytes };
};

test("a proveBatch aborted after its first proof rejects with CANCELLED, leaks nothing, and the prover proves afterwards", needs(...proveApi), async () => {
  using prover = await Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu" });
  const wtns = fixture.bytes("witness.wtns");
  const batch = Array.from({ length: 24 }, () => wtns);

  // A batch that runs to the end: progress counts its proofs up to the total. It also warms the
  // staging pool, so that the stats below compare like with like.
  const seen: Progress[] = [];
  const results = await prover.proveBatch(batch, { onProgress: (p) => seen.push(p) });
  assert.equal(results.length, batch.length);
  assert.deepEqual(seen.at(-1), { stage: "prove", done: batch.length, total: batch.length, phase: "self_check" }, "the last report is the whole batch, at its last step");
  for (const [i, p] of seen.entries()) {
    assert.equal(p.total, batch.length);
    if (i > 0) assert.ok(p.done >= seen[i - 1].done, "done never goes back");
  }

  const before = stats();
  const controller = new AbortController();
  let doneAtAbort = -1;
  const cancelled = prover.proveBatch(batch, {
    signal: controller.signal,
    onProgress: (p) => {
      if (p.done >= 1 && doneAtAbort < 0) {
        doneAtAbort = p.done;
        controller.abort();
      }
    },
  });
  await assert.rejects(cancelled, refusedWith("CANCELLED", /cancelled after \d+ of 24 proofs/));
  assert.ok(doneAtAbort >= 1 && doneAtAbort < batch.length, `aborted mid-batch (after ${doneAtAbort} proofs)`);
  assert.deepEqual(stats(), before, "no native memory left behind by the cancelled call");

  // An already-aborted signal stops the call before any work, also when it waited behind another.
  const first = prover.proveBatch(batch.slice(0, 2));
  await assert.rejects(prover.prove(wtns, { signal: AbortSignal.abort() }), refusedWith("CANCELLED"));
  await first;

  // The prover is fine: its next proofs verify (natively here, by snarkjs at the end).
  const vkey = fixture.json<Parameters<typeof verify>[0]>("verification_key.json");
  for (const [i, { proof, publicSignals }] of (await prover.proveBatch(batch.slice(0, 3))).entries()) {
    assert.equal(await verify(vkey, publicSignals, proof), true);
    madeProofs.push({ name: `after-cancel#${i}`, vkey: fixture.file("verification_key.json"), publicSignals, proof });
  }
});

test("Prover.open with an aborted signal rejects with CANCELLED and keeps nothing open", needs(...proveApi), async () => {
  const before = stats();
  await assert.rejects(Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu", signal: AbortSignal.abort() }), refusedWith("CANCELLED"));
  assert.deepEqual(stats(), before);
  const stages: string[] = [];
  using prover = await Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu", onProgress: (p) => stages.push(p.stage) });
  assert.ok(stages.every((s) => s === "key_upload"), `only the key upload is reported: ${stages}`);
  assert.ok(prover.info.nVars > 0);
});

test("a dev setup aborted between chunks of key points rejects with CANCELLED and leaves no file; run again it reports up to its total", needs(...setupApi), async () => {
  // 2^16 constraints: about 4 x 2^16 key points, in CPU chunks of 2^15 (native/src/setup/dev_setup.cpp).
  const dir = join(work, "setup");
  const r1cs = join(work, "big.r1cs"), wtns = join(work, "big.wtns");
  await writeSynthCircuit({ curve: "bn254", profile: "porep", constraints: 1 << 16, publicInputs: 2, seed: 3 }, { r1cs, wtns });
  mkdirSync(dir);
  const zkey = join(dir, "big.zkey");

  const before = stats();
  const controller = new AbortController();
  let atAbort: Progress | undefined;
  const setup = setupInsecureDev(r1cs, zkey, {
    cpuOnly: true,
    signal: controller.signal,
    onProgress: (p) => {
      if (p.done >= 1 && !atAbort) {
        atAbort = p;
        controller.abort();
      }
    },
  });
  await assert.rejects(setup, refusedWith("CANCELLED", /no file written/));
  assert.ok(atAbort && atAbort.stage === "setup" && atAbort.done < atAbort.total, `aborted mid-setup: ${JSON.stringify(atAbort)}`);
  assert.deepEqual(readdirSync(dir), [], "neither the key nor its temporary file is left");
  assert.deepEqual(stats(), before, "the progress struct was freed");

  const seen: Progress[] = [];
  const result = await setupInsecureDev(r1cs, zkey, { cpuOnly: true, onProgress: (p) => seen.push(p) });
  const last = seen.at(-1)!;
  assert.equal(last.stage, "setup");
  assert.ok(last.total > 4 * (1 << 16), `total ${last.total} counts the key points`);
  assert.equal(last.done, last.total, "progress reaches the total");
  assert.ok(seen.length >= 2, `reported while running too (${seen.length} reports)`);
  assert.ok(existsSync(zkey));
  assert.deepEqual(stats(), before);

  // The key proves: the setup that was cancelled before did not spoil anything.
  const vkeyPath = join(work, "big-vk.json");
  writeFileSync(vkeyPath, JSON.stringify(result.verificationKey));
  using prover = await Prover.open({ zkey, backend: "cpu" });
  const { proof, publicSignals } = await prover.prove(new Uint8Array(readFileSync(wtns)));
  assert.equal(await verify(result.verificationKey, publicSignals, proof), true);
  madeProofs.push({ name: "setup-after-cancel", vkey: vkeyPath, publicSignals, proof });
});

test("every proof made here is accepted by snarkjs's own verifier", needs(...proveApi, ...setupApi), () => {
  assert.equal(madeProofs.length, 4);
  assertSnarkjsAccepts(madeProofs);
});
