/**
 * @module
 * Promise: `verify` checks snarkjs proofs against snarkjs verification keys with the library's
 * pairing check: every fixture's snarkjs-made proof is accepted; a changed public signal or a
 * changed proof is rejected; inputs of the wrong shape are errors, not "false".
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { verify } from "../mod.ts";
import type { Groth16Proof, VerificationKeyJson } from "../mod.ts";
import { curveOf } from "../src/formats/snarkjs.ts";
import { fixtures, library, needs } from "./support/native.ts";

const all = fixtures();

for (const fixture of all) {
  test(`${fixture.curve}/${fixture.name}: snarkjs's proof verifies natively; tampered ones do not`, needs("cuzk_verify"), async (t) => {
    if (!library().info().curves.includes(fixture.curve as "bn254")) return t.diagnostic?.(`no ${fixture.curve}`);
    const vkey = fixture.json<VerificationKeyJson>("verification_key.json");
    const publicSignals = fixture.json<string[]>("public.json");
    const proof = fixture.json<Groth16Proof>("proof.json");
    assert.equal(await verify(vkey, publicSignals, proof), true);

    if (publicSignals.length > 0) {
      const r = curveOf(fixture.curve).r;
      const changed = [...publicSignals];
      changed[0] = ((BigInt(changed[0]) + 1n) % r).toString();
      assert.equal(await verify(vkey, changed, proof), false, "changed public signal");
    }
    const swapped = { ...proof, pi_a: proof.pi_c, pi_c: proof.pi_a };
    assert.equal(await verify(vkey, publicSignals, swapped), false, "A and C swapped");
  });
}

test("a wrong number of public signals or a malformed proof is an error", needs("cuzk_verify"), async () => {
  const fixture = all.find((f) => f.curve === "bn254")!;
  const vkey = fixture.json<VerificationKeyJson>("verification_key.json");
  const publicSignals = fixture.json<string[]>("public.json");
  const proof = fixture.json<Groth16Proof>("proof.json");
  await assert.rejects(verify(vkey, [...publicSignals, "1"], proof), { code: "INVALID_ARGUMENT" });
  await assert.rejects(verify(vkey, publicSignals, { ...proof, pi_a: ["x", "1", "1"] }), { code: "FORMAT" });
  await assert.rejects(verify(vkey, publicSignals.map(() => curveOf("bn254").r.toString()), proof), { code: "FORMAT" });
});
