/**
 * @module
 * Promise: the bindings read and write snarkjs's JSON shapes exactly. Proofs and verification
 * keys survive JSON -> bytes -> JSON unchanged, public signals are read from .wtns files as
 * snarkjs writes them, and non-affine or infinite points are encoded as the library expects.
 * Pure TypeScript: runs without the native library.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BLS12_381,
  BN254,
  curveOf,
  proofFromJson,
  proofToJson,
  publicSignalsToBytes,
  readG1,
  readG2,
  readLE,
  verificationKeyFromJson,
  verificationKeyToJson,
  writeG1,
  writeG2,
} from "../src/formats/snarkjs.ts";
import type { Groth16Proof, VerificationKeyJson } from "../src/formats/snarkjs.ts";
import { isWtns, publicSignalsAt } from "../src/formats/witness.ts";
import { fixtures } from "./support/native.ts";
import { rawValues, wtnsParts } from "./support/wtns.ts";

const all = fixtures();

test("fixtures are present for both curves", () => {
  assert.ok(all.some((f) => f.curve === "bn254"), "a BN254 fixture");
  assert.ok(all.some((f) => f.curve === "bls12_381"), "a BLS12-381 fixture");
});

for (const fixture of all) {
  const curve = curveOf(fixture.curve);
  test(`${fixture.curve}/${fixture.name}: proof.json round-trips through the byte encoding`, () => {
    const proof = fixture.json<Groth16Proof>("proof.json");
    const bytes = proofFromJson(curve, proof);
    assert.equal(bytes.length, curve.proofBytes);
    assert.deepEqual(proofToJson(curve, bytes), {
      pi_a: proof.pi_a,
      pi_b: proof.pi_b,
      pi_c: proof.pi_c,
      protocol: "groth16",
      curve: curve.snarkjsName,
    });
  });

  test(`${fixture.curve}/${fixture.name}: verification_key.json round-trips through the vk byte layout`, () => {
    const vkey = fixture.json<VerificationKeyJson>("verification_key.json");
    const { bytes, nPublic, curve: parsed } = verificationKeyFromJson(vkey);
    assert.equal(parsed, curve);
    assert.equal(nPublic, vkey.nPublic);
    const g1 = 2 * curve.fqBytes, g2 = 4 * curve.fqBytes;
    assert.equal(bytes.length, g1 + 3 * g2 + (nPublic + 1) * g1);
    const back = verificationKeyToJson(curve, bytes);
    for (const field of ["vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2", "IC", "nPublic", "curve", "protocol"] as const) {
      assert.deepEqual(back[field], vkey[field], field);
    }
  });

  test(`${fixture.curve}/${fixture.name}: public signals read from witness.wtns equal public.json`, () => {
    const wtns = fixture.bytes("witness.wtns");
    assert.ok(isWtns(wtns));
    const layout = wtnsParts(wtns);
    assert.equal(layout.prime, curve.r, ".wtns prime is the scalar field");
    assert.equal(readLE(wtns, layout.valuesOffset, 32), 1n, "w[0] = 1");
    const expected = fixture.json<string[]>("public.json");
    assert.deepEqual(publicSignalsAt(wtns, layout.valuesOffset, expected.length), expected);
    // the same from raw values
    assert.deepEqual(publicSignalsAt(rawValues(wtns).raw, 0, expected.length), expected);
    assert.equal(isWtns(rawValues(wtns).raw), false, "a raw witness (w[0] = 1) never starts with the magic");
  });
}

test("a Jacobian G1 point (z != 1) is written as its affine coordinates", () => {
  for (const curve of [BN254, BLS12_381]) {
    const vkey = all.find((f) => f.curve === curve.name)!.json<VerificationKeyJson>("verification_key.json");
    const [x, y] = vkey.vk_alpha_1.map(BigInt);
    const z = 5n;
    const jacobian = [(x * z * z) % curve.q, (y * z * z * z) % curve.q, z].map(String);
    const out = new Uint8Array(2 * curve.fqBytes);
    writeG1(curve, jacobian, out, 0);
    assert.deepEqual(readG1(curve, out, 0), vkey.vk_alpha_1);
  }
});

test("a Jacobian G2 point (z in Fp2) is written as its affine coordinates", () => {
  for (const curve of [BN254, BLS12_381]) {
    const q = curve.q;
    const vkey = all.find((f) => f.curve === curve.name)!.json<VerificationKeyJson>("verification_key.json");
    const [[x0, x1], [y0, y1]] = vkey.vk_beta_2.map((c) => c.map(BigInt));
    const mul = (a: bigint[], b: bigint[]) => [((a[0] * b[0] - a[1] * b[1]) % q + q) % q, (a[0] * b[1] + a[1] * b[0]) % q];
    const z = [3n, 7n], z2 = mul(z, z), z3 = mul(z2, z);
    const jacobian = [mul([x0, x1], z2), mul([y0, y1], z3), z].map((c) => c.map(String));
    const out = new Uint8Array(4 * curve.fqBytes);
    writeG2(curve, jacobian, out, 0);
    assert.deepEqual(readG2(curve, out, 0), vkey.vk_beta_2);
  }
});

test("the point at infinity is all-zero bytes and prints as snarkjs does", () => {
  const g1 = new Uint8Array(64).fill(9), g2 = new Uint8Array(128).fill(9);
  writeG1(BN254, ["0", "1", "0"], g1, 0);
  writeG2(BN254, [["0", "0"], ["1", "0"], ["0", "0"]], g2, 0);
  assert.ok(g1.every((b) => b === 0) && g2.every((b) => b === 0));
  assert.deepEqual(readG1(BN254, g1, 0), ["0", "1", "0"]);
  assert.deepEqual(readG2(BN254, g2, 0), [["0", "0"], ["1", "0"], ["0", "0"]]);
});

test("malformed JSON is a FORMAT error, out-of-range public signals too", () => {
  assert.throws(() => writeG1(BN254, ["x", "1", "1"], new Uint8Array(64), 0), { code: "FORMAT" });
  assert.throws(() => writeG1(BN254, [BN254.q.toString(), "1", "1"], new Uint8Array(64), 0), { code: "FORMAT" });
  assert.throws(() => publicSignalsToBytes(BN254, [BN254.r.toString()]), { code: "FORMAT" });
  assert.deepEqual([...publicSignalsToBytes(BN254, ["258"])].slice(0, 3), [2, 1, 0]);
  assert.throws(() => verificationKeyFromJson({ protocol: "plonk" } as unknown as VerificationKeyJson), { code: "FORMAT" });
  assert.throws(() => curveOf("secp256k1"), { code: "UNSUPPORTED" });
});
