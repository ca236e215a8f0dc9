/**
 * @module
 * Promise: the Prover turns every fixture's witness into a proof in snarkjs's exact shape, with
 * the public signals snarkjs would report and per-phase timings; the proof verifies natively and
 * with snarkjs's own verifier. Every witness form gives the same proof for the same randomness;
 * batches work; keys, contexts and provers refuse to close out of order; bad witnesses fail with
 * the right code.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { CuzkError, Key, PinnedBuffer, Prover, verify } from "../mod.ts";
import type { Groth16Proof, VerificationKeyJson } from "../mod.ts";
import { fixtures, library, needs } from "./support/native.ts";
import type { Fixture } from "./support/native.ts";
import { rawValues } from "./support/wtns.ts";
import { assertSnarkjsAccepts } from "./support/snarkjs.ts";
import { refusedWith as refused } from "./support/errors.ts";
import { nativeOf } from "../src/library.ts";
import { nvidiaGpuPresent } from "../src/ffi/load.ts";
import { invoke } from "../src/native_call.ts";
import { ABI } from "../src/ffi/symbols.ts";
import { allocateStruct, PROVE_ARGS_LAYOUT, writeField } from "../src/ffi/structs.ts";

const proverApi = [
  "cuzk_key_open",
  "cuzk_key_get_info",
  "cuzk_key_close",
  "cuzk_context_create",
  "cuzk_context_backend",
  "cuzk_context_destroy",
  "cuzk_prover_create",
  "cuzk_prover_destroy",
  "cuzk_prove",
  "cuzk_host_alloc",
  "cuzk_host_free",
] as const;

const all = fixtures();
const supported = (f: Fixture) => {
  try {
    return library().info().curves.includes(f.curve as "bn254" | "bls12_381");
  } catch {
    return true; // no library: let the test run and fail with the load error
  }
};
/** Proofs made here, checked by snarkjs in one process at the end. */
const madeProofs: Array<{ name: string; vkey: string; publicSignals: string[]; proof: Groth16Proof }> = [];
const randomness = { r: 0x1234567n, s: 0x7654321n };

function rawWitness(fixture: Fixture): { raw: Uint8Array; values: bigint[] } {
  return rawValues(fixture.bytes("witness.wtns"));
}

for (const fixture of all) {
  const label = `${fixture.curve}/${fixture.name}`;
  test(`${label}: proves the witness in snarkjs's shape, verifiable natively`, needs(...proverApi, "cuzk_verify"), async (t) => {
    if (!supported(fixture)) return t.diagnostic?.(`library built without ${fixture.curve}`);
    const vkey = fixture.json<VerificationKeyJson>("verification_key.json");
    const prover = await Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu" });
    try {
      const info = prover.info;
      assert.equal(info.curve, fixture.curve);
      assert.equal(info.nPublic, vkey.nPublic);
      if (fixture.manifest) {
        assert.equal(info.nVars, fixture.manifest.n_vars);
        assert.equal(info.domainSize, fixture.manifest.domain_size);
      }
      const { proof, publicSignals, timings } = await prover.prove(fixture.bytes("witness.wtns"));
      assert.deepEqual(Object.keys(proof).sort(), ["curve", "pi_a", "pi_b", "pi_c", "protocol"]);
      assert.equal(proof.protocol, "groth16");
      assert.equal(proof.curve, vkey.curve);
      assert.equal(proof.pi_a.length, 3);
      assert.equal(proof.pi_a[2], "1");
      assert.deepEqual(proof.pi_b[2], ["1", "0"]);
      for (const c of [...proof.pi_a, ...proof.pi_b.flat(), ...proof.pi_c]) assert.match(c, /^\d+$/);
      assert.deepEqual(publicSignals, fixture.json<string[]>("public.json"));
      assert.equal(timings.proofIndex, 0);
      assert.equal(timings.backend, "cpu");
      assert.ok(timings.totalMs > 0, "the library timed the call");
      for (const [phase, span] of Object.entries(timings.phases)) {
        assert.ok(span!.end >= span!.start, `${phase} ends after it starts`);
        assert.ok(span!.end <= timings.totalMs + 1e-6, `${phase} ends within the call`);
      }
      assert.equal(await verify(vkey, publicSignals, proof), true, "native verification");
      madeProofs.push({ name: label, vkey: fixture.file("verification_key.json"), publicSignals, proof });
    } finally {
      prover.close();
    }
  });
}

const first = all.find((f) => f.name === "mulchain_8" && f.curve === "bn254") ?? all[0];

test("every witness form gives the same proof for the same randomness", needs(...proverApi), async () => {
  const { raw, values } = rawWitness(first);
  using prover = await Prover.open({ zkey: first.file("circuit.zkey"), backend: "cpu" });
  const fromWtns = await prover.prove(first.bytes("witness.wtns"), { randomness });
  const fromRaw = await prover.prove(raw, { randomness });
  const fromBigints = await prover.prove(values, { randomness });
  using pinned = PinnedBuffer.alloc(first.bytes("witness.wtns").length);
  pinned.set(first.bytes("witness.wtns"));
  const fromPinned = await prover.prove(pinned, { randomness });
  assert.equal(pinned.busy, false);
  for (const other of [fromRaw, fromBigints, fromPinned]) {
    assert.deepEqual(other.proof, fromWtns.proof);
    assert.deepEqual(other.publicSignals, fromWtns.publicSignals);
  }
  const fresh = await prover.prove(raw);
  assert.notDeepEqual(fresh.proof, fromWtns.proof, "without fixed randomness every proof differs");
  madeProofs.push({ name: "fixed randomness", vkey: first.file("verification_key.json"), ...fromPinned });
});

test("proveBatch proves several witnesses in one call, in order", needs(...proverApi), async () => {
  const { values } = rawWitness(first);
  using prover = await Prover.open({ zkey: first.file("circuit.zkey"), backend: "cpu" });
  const batch = await prover.proveBatch([values, values, values], {
    randomness: [randomness, { r: 5n, s: 6n }, randomness],
  });
  assert.equal(batch.length, 3);
  batch.forEach((result, i) => assert.equal(result.timings.proofIndex, i));
  assert.deepEqual(batch[0].proof, batch[2].proof, "same witness and randomness, same proof");
  assert.notDeepEqual(batch[0].proof, batch[1].proof);
  const single = await prover.prove(values, { randomness });
  assert.deepEqual(single.proof, batch[0].proof, "a batch proves exactly what single calls prove");
  batch.forEach((result, i) =>
    madeProofs.push({ name: `batch ${i}`, vkey: first.file("verification_key.json"), ...result })
  );
  assert.deepEqual(await prover.proveBatch([]), []);
});

test("a batch reads native buffers in place beside JS-memory witnesses (a witness list), proving what single calls prove", needs(...proverApi), async () => {
  const { raw, values } = rawWitness(first);
  using prover = await Prover.open({ zkey: first.file("circuit.zkey"), backend: "cpu" });
  // A pooled buffer may be larger than the witness it holds: only its first nVars values count.
  using pinnedA = PinnedBuffer.alloc(raw.length + 96);
  pinnedA.set(raw);
  using pinnedB = PinnedBuffer.alloc(raw.length);
  pinnedB.set(raw);
  const seeds = [1n, 2n, 3n, 4n].map((k) => ({ r: randomness.r + k, s: randomness.s + 7n * k }));
  const pending = prover.proveBatch([pinnedA, values, pinnedB, raw], { randomness: seeds });
  assert.equal(pinnedA.busy && pinnedB.busy, true, "native witnesses are read in place: busy until the call settles");
  const batch = await pending;
  assert.equal(pinnedA.busy || pinnedB.busy, false);
  for (const [i, result] of batch.entries()) {
    assert.equal(result.timings.proofIndex, i);
    assert.deepEqual(result.proof, (await prover.prove(values, { randomness: seeds[i] })).proof, `proof ${i}`);
    madeProofs.push({ name: `list batch ${i}`, vkey: first.file("verification_key.json"), ...result });
  }
  // Only native buffers: no staging at all.
  const natives = await prover.proveBatch([pinnedB, pinnedA], { randomness: [seeds[2], seeds[0]] });
  assert.deepEqual(natives.map((r) => r.proof), [batch[2].proof, batch[0].proof]);
});

test("cuzk_prove with a witness list refuses a NULL entry, naming it; its argument struct is checked (size, input, pointers the input does not use)", needs(...proverApi), async () => {
  const { raw } = rawWitness(first);
  using prover = await Prover.open({ zkey: first.file("circuit.zkey"), backend: "cpu" });
  const native = nativeOf(library());
  using pinned = PinnedBuffer.alloc(raw.length);
  pinned.set(raw);
  const proofBytes = prover.info.proofBytes;
  // The struct holds addresses: the list and the proofs are native memory too.
  using list = PinnedBuffer.alloc(2 * 8);
  using proofs = PinnedBuffer.alloc(2 * proofBytes);
  const fields = PROVE_ARGS_LAYOUT.fields;
  const argsFor = (entries: bigint[], edit: (set: (field: keyof typeof fields, value: number | bigint) => void) => void = () => {}) => {
    const view = new DataView(list.bytes.buffer, list.bytes.byteOffset, list.bytes.byteLength);
    entries.forEach((address, i) => view.setBigUint64(i * 8, address, true));
    const args = allocateStruct(PROVE_ARGS_LAYOUT);
    const argsView = new DataView(args.buffer);
    const set = (field: keyof typeof fields, value: number | bigint) => writeField(argsView, 0, fields[field], value);
    set("input", ABI.INPUT_WITNESS_LIST);
    set("witness_format", ABI.WITNESS_RAW);
    set("flags", ABI.PROVE_NO_SELF_CHECK);
    set("n_proofs", entries.length);
    set("witness_stride", raw.length);
    set("witness_list", list.unsafePointer);
    set("proofs", proofs.unsafePointer);
    set("proofs_cap", proofs.byteLength);
    edit(set);
    return args;
  };
  const call = (args: Uint8Array) => invoke(native, "cuzk_prove", [prover.unsafeHandle, args]);
  assert.throws(() => call(argsFor([pinned.unsafePointer, 0n])), refused("INVALID_ARGUMENT", /witnesses\[1\] is NULL/));
  call(argsFor([pinned.unsafePointer, pinned.unsafePointer]));
  assert.ok(proofs.bytes.some((b) => b !== 0), "proofs written");
  const both = [pinned.unsafePointer, pinned.unsafePointer];
  assert.throws(() => call(argsFor(both, (set) => set("struct_size", PROVE_ARGS_LAYOUT.size - 8))), refused("INVALID_ARGUMENT", /struct_size/));
  assert.throws(() => call(argsFor(both, (set) => set("input", 7))), refused("INVALID_ARGUMENT", /unknown input 7/));
  assert.throws(() => call(argsFor(both, (set) => set("witnesses", pinned.unsafePointer))), refused("INVALID_ARGUMENT", /witnesses must be NULL/));
});

test("concurrent prove() calls on one prover queue up and all succeed", needs(...proverApi), async () => {
  const { values } = rawWitness(first);
  using prover = await Prover.open({ zkey: first.file("circuit.zkey"), backend: "cpu" });
  const results = await Promise.all([0, 1, 2].map(() => prover.prove(values, { randomness })));
  for (const r of results) assert.deepEqual(r.proof, results[0].proof);
});

test("a key shared by a prover cannot be closed before it; handles close idempotently", needs(...proverApi), async () => {
  const key = await Key.open(first.file("circuit.zkey"));
  const prover = await Prover.open({ zkey: key, backend: "cpu" });
  assert.throws(() => key.close(), (error: unknown) => error instanceof CuzkError && error.code === "BUSY");
  assert.throws(() => prover.context.close(), { code: "BUSY" });
  prover.close();
  prover.close();
  assert.equal(key.closed, false, "a prover does not close a key it was given");
  assert.equal(prover.context.closed, true, "a prover closes the context it made");
  key.close();
  key.close();
  await assert.rejects(prover.prove(rawWitness(first).values), { code: "CLOSED" });
  assert.throws(() => key.info(), { code: "CLOSED" });
});

test("Key exposes its sizes and exports the verification key of verification_key.json", needs(...proverApi, "cuzk_key_export_vk"), async () => {
  for (const fixture of all.filter(supported)) {
    using key = await Key.open(fixture.file("circuit.zkey"));
    const info = key.info();
    const vkey = fixture.json<VerificationKeyJson>("verification_key.json");
    assert.equal(info.nPublic, vkey.nPublic);
    assert.equal(info.proofBytes, fixture.curve === "bn254" ? 256 : 384);
    assert.equal(info.fqBytes, fixture.curve === "bn254" ? 32 : 48);
    assert.equal(info.domainSize, 2 ** info.logDomain);
    assert.ok(info.domainSize >= info.nConstraints + info.nPublic + 1);
    assert.equal(info.hasR1cs, false);
    const exported = key.exportVkJson();
    assert.equal(key.exportVk().length, info.vkBytes);
    for (const field of ["vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2", "IC"] as const) {
      assert.deepEqual(exported[field], vkey[field], `${fixture.curve}/${fixture.name} ${field}`);
    }
  }
});

test("a witness that breaks a constraint fails with UNSATISFIED when the .r1cs is attached", needs(...proverApi, "cuzk_key_attach_r1cs"), async () => {
  const { values } = rawWitness(first);
  const broken = [...values];
  broken[broken.length - 1] += 1n;
  using prover = await Prover.open({ zkey: first.file("circuit.zkey"), r1cs: first.file("circuit.r1cs"), backend: "cpu" });
  assert.equal(prover.key.info().hasR1cs, true);
  await assert.rejects(prover.prove(broken), (error: unknown) => {
    assert.ok(error instanceof CuzkError);
    assert.equal(error.code, "UNSATISFIED");
    assert.ok(error.nativeMessage.length > 0, "the library names the constraint");
    return true;
  });
  const ok = await prover.prove(values);
  assert.deepEqual(ok.publicSignals, first.json<string[]>("public.json"), "the prover still works after a failure");
});

test("self-check rejects the proof of a broken witness when no .r1cs is attached", needs(...proverApi), async () => {
  const { values } = rawWitness(first);
  const broken = [...values];
  broken[broken.length - 1] += 1n;
  using prover = await Prover.open({ zkey: first.file("circuit.zkey"), backend: "cpu", selfCheck: true });
  await assert.rejects(prover.prove(broken), { code: "SELF_CHECK" });
});

test("witnesses of the wrong size are refused before reaching the library", needs(...proverApi), async () => {
  const { raw, values } = rawWitness(first);
  using prover = await Prover.open({ zkey: first.file("circuit.zkey"), backend: "cpu" });
  await assert.rejects(prover.prove(values.slice(1)), { code: "WITNESS_LENGTH" });
  await assert.rejects(prover.prove(raw.subarray(32)), { code: "WITNESS_LENGTH" });
  await assert.rejects(prover.proveBatch([values, first.bytes("witness.wtns")]), { code: "INVALID_ARGUMENT" });
});

test("a CUDA context without a GPU fails with a clear code, saying there is no GPU and what to do", needs(...proverApi), async () => {
  const info = library().info();
  if (info.cudaDeviceCount > 0 || nvidiaGpuPresent()) return;
  await assert.rejects(
    Prover.open({ zkey: first.file("circuit.zkey"), backend: "cuda" }),
    (error: unknown) =>
      error instanceof CuzkError && error.code === "NO_DEVICE" && /no NVIDIA GPU is visible on this machine/.test(error.message) &&
      /backend "cpu"/.test(error.message),
  );
});

test("every proof made here is accepted by snarkjs's own verifier", needs(...proverApi), () => {
  assert.ok(madeProofs.length > 0, "proofs were made");
  assertSnarkjsAccepts(madeProofs);
});

after(() => {
  madeProofs.length = 0;
});
