/**
 * @module
 * Promise: every proof is self-checked by default (Prover, groth16.prove, groth16.fullProve), a
 * proof that fails is never returned but refused with a SELF_CHECK CuzkError carrying the
 * library's message, and `selfCheck: false` turns it off (its proofs are then the caller's to
 * verify: a wrong one is returned, and the verifier rejects it). The check is a timed phase.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CuzkError, groth16, Prover } from "../mod.ts";
import type { CircuitInput, VerificationKeyJson } from "../mod.ts";
import { refusedWith } from "./support/errors.ts";
import { fixtures, needs } from "./support/native.ts";
import { rawValues } from "./support/wtns.ts";

const api = ["cuzk_key_open", "cuzk_key_check_witness", "cuzk_prover_create", "cuzk_prove", "cuzk_verify", "cuzk_key_attach_r1cs"] as const;
const bn = fixtures().find((f) => f.curve === "bn254" && f.name === "mulchain_4")!;
const bls = fixtures().find((f) => f.curve === "bls12_381" && f.name === "mulchain_4")!;

/** The fixture's witness with its last value changed: well-formed, but it satisfies no constraint system of the key. */
function brokenWitness(values: bigint[]): bigint[] {
  const broken = [...values];
  broken[broken.length - 1] += 1n;
  return broken;
}

const selfCheckFailure = (pattern?: RegExp) => (error: unknown) => {
  refusedWith("SELF_CHECK")(error);
  const { nativeMessage } = error as CuzkError;
  assert.ok(nativeMessage.length > 0, "the library's message is kept");
  if (pattern) assert.match(nativeMessage, pattern);
  return true;
};

test("a Prover self-checks by default: a wrong proof is refused, a good one carries the self_check phase", needs(...api), async () => {
  for (const fixture of [bn, bls]) {
    const { values } = rawValues(fixture.bytes("witness.wtns"));
    using prover = await Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu" });
    await assert.rejects(prover.prove(brokenWitness(values)), selfCheckFailure());
    const { proof, publicSignals, timings } = await prover.prove(values);
    assert.ok(timings.phases.self_check, "the self-check is a timed phase");
    assert.equal(await prover.verify(publicSignals, proof), true);
  }
});

test("selfCheck: false skips it: the wrong proof is returned and the verifier rejects it", needs(...api), async () => {
  const { values } = rawValues(bn.bytes("witness.wtns"));
  using prover = await Prover.open({ zkey: bn.file("circuit.zkey"), backend: "cpu", selfCheck: false });
  const wrong = await prover.prove(brokenWitness(values));
  assert.equal(wrong.timings.phases.self_check, undefined, "no self-check ran");
  assert.equal(await prover.verify(wrong.publicSignals, wrong.proof), false, "the unchecked proof is wrong");
  await assert.rejects(prover.prove(brokenWitness(values), { selfCheck: true }), selfCheckFailure(), "one call can turn it back on");
  const good = await prover.prove(values);
  assert.equal(await prover.verify(good.publicSignals, good.proof), true);
});

test("groth16.prove and fullProve self-check by default", needs(...api), async () => {
  const { values } = rawValues(bn.bytes("witness.wtns"));
  const zkey = bn.file("circuit.zkey");
  await assert.rejects(groth16.prove(zkey, brokenWitness(values), { backend: "cpu" }), selfCheckFailure());
  const { proof, publicSignals, timings } = await groth16.fullProve(bn.json<CircuitInput>("input.json"), bn.file("circuit.wasm"), zkey, { backend: "cpu" });
  assert.ok(timings.phases.self_check, "fullProve's proof was self-checked");
  assert.equal(await groth16.verify(bn.json<VerificationKeyJson>("verification_key.json"), publicSignals, proof), true);
});

test("with the .r1cs attached, a failed self-check says the witness is at fault", needs(...api), async () => {
  const { values } = rawValues(bn.bytes("witness.wtns"));
  using prover = await Prover.open({ zkey: bn.file("circuit.zkey"), r1cs: bn.file("circuit.r1cs"), backend: "cpu" });
  await assert.rejects(prover.prove(brokenWitness(values), { skipR1csCheck: true }), selfCheckFailure(/witness does not satisfy/));
});
