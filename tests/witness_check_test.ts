/**
 * @module
 * Promise: `Key.checkWitness` is the library's one witness check (the one every proof makes
 * first), reachable from the public API: a good .wtns or raw witness passes and says where its
 * values start and what its public signals are; each kind of bad witness is refused with its own
 * code before any work, and `prove` refuses it with the same code; a refusal carries what the check
 * found (the witness's curve, its value count, the first value not below r) as data.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CuzkError, HostBuffer, Key, Prover } from "../mod.ts";
import type { WitnessFacts } from "../mod.ts";
import { refusedWith as refused } from "./support/errors.ts";
import { fixtures, needs } from "./support/native.ts";
import { rawValues, wtnsParts } from "./support/wtns.ts";

const api = ["cuzk_key_open", "cuzk_key_get_info", "cuzk_key_close", "cuzk_key_check_witness", "cuzk_host_alloc", "cuzk_host_free"] as const;

const all = fixtures();
const bn = all.find((f) => f.curve === "bn254" && f.name === "mulchain_4")!;
const bls = all.find((f) => f.curve === "bls12_381" && f.name === "mulchain_4")!;


test("a good witness passes in every form and says where its values start", needs(...api), async () => {
  for (const fixture of [bn, bls]) {
    using key = await Key.open(fixture.file("circuit.zkey"));
    const wtns = fixture.bytes("witness.wtns");
    const expected = fixture.json<string[]>("public.json");
    const fromWtns = key.checkWitness(wtns);
    assert.deepEqual(fromWtns, { format: "wtns", valuesOffset: wtnsParts(wtns).valuesOffset, publicSignals: expected });
    const { raw } = rawValues(wtns);
    assert.deepEqual(key.checkWitness(raw), { format: "raw", valuesOffset: 0, publicSignals: expected });
    using native = HostBuffer.alloc(raw.length);
    native.set(raw);
    assert.deepEqual(key.checkWitness(native), { format: "raw", valuesOffset: 0, publicSignals: expected });
  }
});

test("each kind of bad witness is refused with its own code", needs(...api), async () => {
  using key = await Key.open(bn.file("circuit.zkey"));
  const wtns = bn.bytes("witness.wtns");
  const { raw } = rawValues(wtns);
  const nVars = key.info().nVars;
  assert.throws(() => key.checkWitness(wtns.subarray(0, wtns.length - 40)), refused("FORMAT"), "truncated values");
  assert.throws(() => key.checkWitness(wtns.subarray(0, 10)), refused("FORMAT"), "truncated header");
  assert.throws(() => key.checkWitness(bls.bytes("witness.wtns")), refused("CURVE_MISMATCH"), "another curve's field");
  assert.throws(() => key.checkWitness(raw.subarray(32)), refused("WITNESS_LENGTH"), "one value short");
  const other = all.find((f) => f.curve === "bn254" && f.name === "bits_10")!;
  assert.throws(() => key.checkWitness(other.bytes("witness.wtns")), refused("WITNESS_LENGTH"), "another circuit's witness");
  const big = raw.slice();
  big.fill(0xff, big.length - 32);
  assert.throws(() => key.checkWitness(big), refused("INVALID_ARGUMENT", new RegExp(String(nVars - 1))), "a value not below r");
  const badOne = raw.slice();
  badOne[0] = 2;
  assert.throws(() => key.checkWitness(badOne), refused("UNSATISFIED"), "w[0] != 1");
});

/** The facts of the CuzkError `check` throws (it must throw one). */
function factsOf(check: () => unknown): WitnessFacts | undefined {
  try {
    check();
  } catch (error) {
    assert.ok(error instanceof CuzkError, `a CuzkError, got ${error}`);
    return error.witness;
  }
  assert.fail("the check passed");
}

test("a refusal carries the check's facts: the witness's curve, its value count, the first value not below r", needs(...api), async () => {
  using key = await Key.open(bn.file("circuit.zkey"));
  const wtns = bn.bytes("witness.wtns");
  const { raw } = rawValues(wtns);
  const nVars = key.info().nVars;
  const blsWtns = bls.bytes("witness.wtns");
  const other = all.find((f) => f.curve === "bn254" && f.name === "bits_10")!.bytes("witness.wtns");
  for (const check of [(w: Uint8Array) => key.checkWitness(w), (w: Uint8Array) => key.checkWitnessShape(w)]) {
    assert.deepEqual(factsOf(() => check(blsWtns)), { curve: "bls12_381", values: wtnsParts(blsWtns).count }, "another curve's .wtns");
    assert.deepEqual(factsOf(() => check(other)), { curve: "bn254", values: wtnsParts(other).count }, "another circuit's .wtns");
    assert.deepEqual(factsOf(() => check(raw.subarray(32))), { values: nVars - 1 }, "raw, one value short");
    assert.deepEqual(factsOf(() => check(raw.subarray(0, raw.length - 20))), { values: nVars - 1 }, "raw, a partial value: counted down");
    assert.deepEqual(factsOf(() => check(wtns.subarray(0, 10))), { values: 0 }, "a .wtns header not read");
    const badOne = raw.slice();
    badOne[0] = 2;
    assert.deepEqual(factsOf(() => check(badOne)), { values: nVars }, "w[0] != 1, raw");
  }
  const big = raw.slice();
  for (const index of [nVars - 1, 5, 3]) big.fill(0xff, index * 32, index * 32 + 32);
  assert.deepEqual(factsOf(() => key.checkWitness(big)), { values: nVars, firstBadIndex: 3 }, "the smallest bad index");
  const bigWtns = wtns.slice();
  bigWtns.set(big, wtnsParts(wtns).valuesOffset);
  assert.deepEqual(factsOf(() => key.checkWitness(bigWtns)), { curve: "bn254", values: nVars, firstBadIndex: 3 }, "the same in a .wtns");
  assert.throws(() => key.checkWitness(big), /witness value 3 is not < r/, "the message names the same index");
  assert.equal(key.checkWitnessShape(big).valuesOffset, 0, "the shape check does not scan");
});

test("prove refuses a bad witness with the code checkWitness gives, naming its index in a batch", needs(...api, "cuzk_prove"), async () => {
  using prover = await Prover.open({ zkey: bn.file("circuit.zkey"), backend: "cpu" });
  const { raw } = rawValues(bn.bytes("witness.wtns"));
  const badOne = raw.slice();
  badOne[0] = 2;
  await assert.rejects(prover.prove(badOne), refused("UNSATISFIED"));
  await assert.rejects(prover.proveBatch([raw, badOne]), refused("UNSATISFIED", /^witness 1: /));
  await assert.rejects(prover.prove(bls.bytes("witness.wtns")), refused("CURVE_MISMATCH"));
  // The check's facts survive the prover's "witness i:" wrapping.
  await assert.rejects(prover.proveBatch([raw, bls.bytes("witness.wtns")]), (e: unknown) =>
    e instanceof CuzkError && /^witness 1: /.test(e.message) && e.witness?.curve === "bls12_381");
  await assert.rejects(prover.prove([-1n, ...rawValues(bn.bytes("witness.wtns")).values.slice(1)]), refused("INVALID_ARGUMENT", /value 0/));
  const { proof, publicSignals } = await prover.prove(raw);
  assert.deepEqual(publicSignals, bn.json<string[]>("public.json"), "the prover still works after refusals");
  assert.equal(await prover.verify(publicSignals, proof), true);
});

test("checkWitnessShape makes the O(1) checks only; a value not below r is then refused by the proof call, naming the proof", needs(...api, "cuzk_prove"), async () => {
  using prover = await Prover.open({ zkey: bn.file("circuit.zkey"), backend: "cpu" });
  using key = await Key.open(bn.file("circuit.zkey"));
  const wtns = bn.bytes("witness.wtns");
  const { raw } = rawValues(wtns);
  const big = raw.slice();
  big.fill(0xff, big.length - 32);
  const nVars = key.info().nVars;
  assert.deepEqual(key.checkWitnessShape(big), key.checkWitness(raw), "the shape passes: the scan is not made");
  for (const [bad, code, what] of [
    [wtns.subarray(0, 10), "FORMAT", "truncated header"],
    [bls.bytes("witness.wtns"), "CURVE_MISMATCH", "another curve's field"],
    [raw.subarray(32), "WITNESS_LENGTH", "one value short"],
    [(() => { const w = raw.slice(); w[0] = 2; return w; })(), "UNSATISFIED", "w[0] != 1"],
  ] as const) {
    assert.throws(() => key.checkWitnessShape(bad), refused(code), what);
  }
  await assert.rejects(prover.proveBatch([raw, big]), refused("INVALID_ARGUMENT", new RegExp(`proof 1: witness value ${nVars - 1} is not < r`)));
  using pinned = HostBuffer.alloc(big.length);
  pinned.set(big);
  await assert.rejects(prover.proveBatch([raw, pinned]), refused("INVALID_ARGUMENT", /proof 1: /), "in place too");
  assert.equal(pinned.busy, false);
  const { proof, publicSignals } = await prover.prove(raw);
  assert.equal(await prover.verify(publicSignals, proof), true, "the prover works after the refusal");
});

test("a closed key refuses the check", needs(...api), async () => {
  const key = await Key.open(bn.file("circuit.zkey"));
  key.close();
  assert.throws(() => key.checkWitness(bn.bytes("witness.wtns")), refused("CLOSED"));
});
