/**
 * @module
 * Promise: `cuzk setup --insecure-dev` (and `setupInsecureDev`) makes keys that both provers accept
 * and snarkjs agrees with: on both curves, for synthetic circuits of both profiles, proofs made by
 * cuzk with such a key are accepted by snarkjs's own verifier against the verification key we
 * write, which is the one `snarkjs zkey export verificationkey` reads from our .zkey; snarkjs's
 * `wtns check` accepts the synthetic witnesses. The CLI warns on stderr; bad input (a file that is
 * not an .r1cs, a missing file, an unwritable path, bad counts) is a typed error, never a crash.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CuzkError, HostBuffer, PinnedBuffer, Prover, setupInsecureDev, setupInsecureDevKey, synthCircuit, synthWitnessBytes, synthWitnesses, verify, writeSynthCircuit } from "../mod.ts";
import type { Groth16Proof, SynthProfile } from "../mod.ts";
import { library, needs } from "./support/native.ts";
import { assertSnarkjsAccepts } from "./support/snarkjs.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "cli.ts");
const SNARKJS = join(ROOT, "node_modules", "snarkjs", "cli.js");
const work = mkdtempSync(join(tmpdir(), "cuzk-setup-"));
after(() => rmSync(work, { recursive: true, force: true }));

const setupApi = ["cuzk_synth_circuit", "cuzk_synth_circuit_write", "cuzk_setup_insecure_dev", "cuzk_prove"] as const;

/** Proofs made here, checked by snarkjs's verifier in one process at the end. */
const madeProofs: Array<{ name: string; vkey: string; publicSignals: string[]; proof: Groth16Proof }> = [];

/** Runs the CLI under the runtime that runs this test file. */
function cli(...args: string[]) {
  const runtime = "Deno" in globalThis ? ["run", "-A", CLI] : [CLI];
  const r = spawnSync(process.execPath, [...runtime, ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** snarkjs's own CLI, under plain Node. */
function snarkjs(...args: string[]) {
  const r = spawnSync("node", [SNARKJS, ...args], { encoding: "utf8", timeout: 300_000 });
  return { code: r.status, out: r.stdout + r.stderr };
}

const cases: Array<[curve: "bn254" | "bls12_381", profile: SynthProfile, constraints: number, publicInputs: number]> = [
  ["bn254", "porep", 1 << 10, 4],
  ["bn254", "uniform", 1000, 1],
  ["bls12_381", "porep", 1 << 10, 3],
  ["bls12_381", "uniform", 777, 0],
];

for (const [curve, profile, constraints, publicInputs] of cases) {
  test(`${curve}/${profile}: setupInsecureDev key, proofs by cuzk, vk equal to snarkjs's export`, needs(...setupApi), async () => {
    const base = join(work, `${curve}-${profile}`);
    const paths = { r1cs: `${base}.r1cs`, wtns: `${base}.wtns` };
    await writeSynthCircuit({ curve, profile, constraints, publicInputs, seed: 5 }, paths);
    // The key points go to the GPU when there is one, unless cpuOnly; alternate to cover both.
    const cpuOnly = profile === "uniform";
    const setup = await setupInsecureDev(paths.r1cs, `${base}.zkey`, { cpuOnly });
    assert.equal(setup.gpu, !cpuOnly && library().info().cudaDeviceCount > 0, "where the points were made");
    assert.equal(setup.curve, curve);
    assert.equal(setup.nConstraints, constraints);
    assert.equal(setup.nPublic, publicInputs);
    assert.ok(setup.domainSize >= constraints + publicInputs + 1 && setup.domainSize / 2 < constraints + publicInputs + 1);
    assert.equal(setup.zkeyBytes, readFileSync(`${base}.zkey`).length);
    assert.equal(setup.verificationKey.IC.length, publicInputs + 1);
    const vkeyPath = `${base}-vk.json`;
    writeFileSync(vkeyPath, JSON.stringify(setup.verificationKey));

    // snarkjs reads our .zkey and finds the same verification key.
    const exported = `${base}-snarkjs-vk.json`;
    const r = snarkjs("zkey", "export", "verificationkey", `${base}.zkey`, exported);
    assert.equal(r.code, 0, r.out);
    const theirs = JSON.parse(readFileSync(exported, "utf8"));
    assert.deepEqual(theirs, setup.verificationKey);

    using prover = await Prover.open({ zkey: `${base}.zkey`, r1cs: paths.r1cs, backend: "cpu" });
    const wtns = new Uint8Array(readFileSync(paths.wtns));
    for (let i = 0; i < 2; i++) {
      const { proof, publicSignals } = await prover.prove(wtns);
      assert.equal(publicSignals.length, publicInputs);
      assert.equal(await verify(setup.verificationKey, publicSignals, proof), true);
      madeProofs.push({ name: `${curve}/${profile}#${i}`, vkey: vkeyPath, publicSignals, proof });
    }
  });
}

test("setupInsecureDevKey + synthWitnesses: a key made in memory proves other witnesses of the circuit, snarkjs accepts", needs(...setupApi, "cuzk_setup_insecure_dev_key", "cuzk_synth_witnesses"), async () => {
  for (const curve of ["bn254", "bls12_381"] as const) {
    const circuit = { curve, profile: "porep" as const, constraints: 700, publicInputs: 2, seed: 11 };
    const paths = { r1cs: join(work, `mem-key-${curve}.r1cs`), wtns: join(work, `mem-key-${curve}.wtns`) };
    await writeSynthCircuit(circuit, paths);
    const made = await setupInsecureDevKey(paths.r1cs, { cpuOnly: curve === "bn254" });
    using key = made.key;
    assert.equal(made.curve, curve);
    assert.equal(made.nConstraints, 700);
    assert.ok(made.zkeyBytes > 0 && made.zkeyBytes < 700 * 5 * 96, "the points are not held");
    const vkeyPath = join(work, `mem-key-${curve}-vk.json`);
    writeFileSync(vkeyPath, JSON.stringify(made.verificationKey));

    // Four witnesses: the circuit's own (seed 0, equal to the .wtns's values) and three others.
    const bytes = synthWitnessBytes(circuit);
    assert.equal(bytes, key.info().nVars * 32);
    const buffers = [0, 1, 2, 3].map((i) => i % 2 ? PinnedBuffer.alloc(bytes) : HostBuffer.alloc(bytes));
    try {
      await synthWitnesses(circuit, [0, 1, 2, 99n], buffers);
      const wtns = new Uint8Array(readFileSync(paths.wtns));
      assert.deepEqual(buffers[0].bytes, wtns.subarray(wtns.length - bytes));
      assert.notDeepEqual(buffers[1].bytes, buffers[0].bytes);
      using prover = await Prover.open({ zkey: key, r1cs: paths.r1cs, backend: "cpu" });
      const results = await prover.proveBatch(buffers);
      assert.equal(new Set(results.map((r) => r.publicSignals.join())).size, 4, "four different witnesses");
      for (const [i, { proof, publicSignals }] of results.entries()) {
        assert.equal(await verify(made.verificationKey, publicSignals, proof), true);
        madeProofs.push({ name: `key in memory ${curve}#${i}`, vkey: vkeyPath, publicSignals, proof });
      }
    } finally {
      for (const b of buffers) b.free();
    }

    // Refusals: count mismatch, a short buffer, too many, a missing .r1cs.
    using small = HostBuffer.alloc(bytes - 32);
    await assert.rejects(synthWitnesses(circuit, [1, 2], [small]), TypeError);
    await assert.rejects(synthWitnesses(circuit, [1], [small]), (e: unknown) => e instanceof CuzkError && e.code === "SHORT_BUFFER");
    await assert.rejects(synthWitnesses(circuit, [], []));
    await assert.rejects(setupInsecureDevKey(join(work, "missing.r1cs")), (e: unknown) => e instanceof CuzkError && e.code === "IO");
  }
});

test("cuzk synth + setup --insecure-dev + prove (CLI): snarkjs groth16 verify accepts, on both curves", needs(...setupApi), () => {
  for (const curve of ["bn254", "bls12_381"]) {
    const base = join(work, `cli-${curve}`);
    let r = cli("synth", `${base}.r1cs`, `${base}.wtns`, "--constraints", "2^10", "--curve", curve, "--public", "2", "--seed", "9");
    assert.equal(r.code, 0, r.stderr);
    const w = snarkjs("wtns", "check", `${base}.r1cs`, `${base}.wtns`);
    assert.match(w.out, /WITNESS IS CORRECT/, w.out);

    r = cli("setup", `${base}.r1cs`, `${base}.zkey`);
    assert.equal(r.code, 2, "setup without --insecure-dev is refused");
    assert.match(r.stderr, /--insecure-dev/);
    assert.ok(!existsSync(`${base}.zkey`));

    r = cli("setup", "--insecure-dev", `${base}.r1cs`, `${base}.zkey`, `${base}-vk.json`, "--threads", "2");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /FOR TESTING AND BENCHMARKS ONLY/);
    assert.match(r.stderr, /INSECURE key for 1024 constraints/);
    assert.equal(r.stdout, "", "the warning goes to stderr, nothing to stdout");

    r = cli("prove", `${base}.zkey`, `${base}.wtns`, `${base}-proof.json`, `${base}-public.json`, "--r1cs", `${base}.r1cs`);
    assert.equal(r.code, 0, r.stderr);
    const v = snarkjs("groth16", "verify", `${base}-vk.json`, `${base}-public.json`, `${base}-proof.json`);
    assert.equal(v.code, 0, v.out);
    assert.match(v.out, /OK!/);

    // A tampered public signal is rejected by snarkjs: the check above can fail.
    const pub = JSON.parse(readFileSync(`${base}-public.json`, "utf8")) as string[];
    pub[0] = (BigInt(pub[0]) + 1n).toString();
    writeFileSync(`${base}-public-bad.json`, JSON.stringify(pub));
    const bad = snarkjs("groth16", "verify", `${base}-vk.json`, `${base}-public-bad.json`, `${base}-proof.json`);
    assert.notEqual(bad.code, 0);
  }
});

test("synthCircuit: the same seed gives the same bytes, another seed others; files equal memory", needs(...setupApi), async () => {
  const options = { curve: "bn254" as const, profile: "porep" as const, constraints: 300, publicInputs: 2, seed: 42n };
  const a = await synthCircuit(options);
  const b = await synthCircuit(options);
  const c = await synthCircuit({ ...options, seed: 43 });
  assert.deepEqual(a, b);
  assert.notDeepEqual(a.wtns, c.wtns);
  assert.equal(new TextDecoder().decode(a.r1cs.subarray(0, 4)), "r1cs");
  assert.equal(new TextDecoder().decode(a.wtns.subarray(0, 4)), "wtns");
  const paths = { r1cs: join(work, "mem.r1cs"), wtns: join(work, "mem.wtns") };
  await writeSynthCircuit(options, paths);
  assert.deepEqual(new Uint8Array(readFileSync(paths.r1cs)), a.r1cs);
  assert.deepEqual(new Uint8Array(readFileSync(paths.wtns)), a.wtns);
});

test("bad input is a typed error: not an .r1cs, missing file, unwritable path, bad counts", needs(...setupApi), async () => {
  const r1cs = join(work, "bad.r1cs"), wtns = join(work, "bad.wtns");
  await writeSynthCircuit({ curve: "bls12_381", constraints: 64 }, { r1cs, wtns });
  const rejects = (promise: Promise<unknown>, code: string) =>
    assert.rejects(promise, (e: unknown) => e instanceof CuzkError && e.code === code && e.message.length > 0);
  await rejects(setupInsecureDev(wtns, join(work, "x.zkey")), "FORMAT");
  const cut = join(work, "cut.r1cs");
  writeFileSync(cut, readFileSync(r1cs).subarray(0, 100));
  await rejects(setupInsecureDev(cut, join(work, "x.zkey")), "FORMAT");
  await rejects(setupInsecureDev(join(work, "missing.r1cs"), join(work, "x.zkey")), "IO");
  await rejects(setupInsecureDev(r1cs, join(work, "no", "such", "dir", "x.zkey")), "IO");
  assert.ok(!existsSync(join(work, "x.zkey")));
  await rejects(synthCircuit({ curve: "bn254", constraints: 0 }), "INVALID_ARGUMENT");
  await rejects(synthCircuit({ curve: "bn254", constraints: 3, publicInputs: 4 }), "INVALID_ARGUMENT");
  await rejects(writeSynthCircuit({ curve: "bn254", constraints: 8 }, { r1cs: join(work, "no", "a.r1cs"), wtns: join(work, "a.wtns") }), "IO");
  await assert.rejects(synthCircuit({ curve: "bn254", constraints: 8, profile: "sha" as SynthProfile }), TypeError);
  await rejects(setupInsecureDev(r1cs, join(work, "y.zkey"), { threads: -1 }), "INVALID_ARGUMENT");
  const r = cli("setup", "--insecure-dev", wtns, join(work, "z.zkey"));
  assert.equal(r.code, 1);
  assert.match(r.stderr, /not a r1cs file/);
  assert.equal(r.stderr.trim().split("\n").filter((l) => l.startsWith("cuzk:")).length, 1, "one error line");
});

test("every proof made here is accepted by snarkjs's own verifier", needs(...setupApi), () => {
  assert.equal(madeProofs.length, 2 * cases.length + 8);
  assertSnarkjsAccepts(madeProofs);
});
