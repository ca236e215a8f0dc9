/**
 * @module
 * Promise: `groth16.fullProve(input, wasm, zkey)` does what snarkjs's does — circuit inputs in,
 * through circom's witness generator (circom_runtime), `{ proof, publicSignals }` out in snarkjs's
 * shapes, accepted by snarkjs's own verifier — in every runtime, plus the phase timings and the
 * witness time. It takes a path, a Key or a Prover; bad inputs fail with a CuzkError.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CuzkError, groth16, Key, PinnedBuffer, Prover, WitnessCalculator } from "../mod.ts";
import type { CircuitInput } from "../mod.ts";
import { fixtures, library, needs } from "./support/native.ts";
import type { Fixture } from "./support/native.ts";
import { assertSnarkjsAccepts } from "./support/snarkjs.ts";

const proverApi = ["cuzk_key_open", "cuzk_prover_create", "cuzk_prove", "cuzk_verify", "cuzk_host_alloc"] as const;

/** Fixtures with a witness generator, on the curves this library was built with. */
function provable(): Fixture[] {
  let curves: string[] = ["bn254", "bls12_381"];
  try {
    curves = library().info().curves;
  } catch {
    // no library: the tests run and fail with the load error
  }
  return fixtures().filter((f) => curves.includes(f.curve));
}

const pick = (curve: string, name: string) => provable().find((f) => f.curve === curve && f.name === name);
/** Both curves; one public signal, many, none; the Poseidon hash circuit of the examples. */
const chosen = [pick("bn254", "poseidon_10"), pick("bls12_381", "mulchain_8"), pick("bn254", "many_public"), pick("bls12_381", "zero_public")]
  .filter((f): f is Fixture => f !== undefined);

test("fullProve: circuit inputs to a snarkjs-shaped proof that snarkjs accepts, on both curves", needs(...proverApi), async () => {
  assert.ok(chosen.length > 0, "fixtures are present");
  const made = [];
  for (const fixture of chosen) {
    const label = `${fixture.curve}/${fixture.name}`;
    const { proof, publicSignals, timings } = await groth16.fullProve(
      fixture.json<CircuitInput>("input.json"),
      fixture.file("circuit.wasm"),
      fixture.file("circuit.zkey"),
      { backend: "cpu" },
    );
    assert.deepEqual(Object.keys(proof).sort(), ["curve", "pi_a", "pi_b", "pi_c", "protocol"], label);
    assert.equal(proof.protocol, "groth16");
    assert.equal(proof.curve, fixture.curve === "bn254" ? "bn128" : "bls12381");
    assert.deepEqual(publicSignals, fixture.json<string[]>("public.json"), `${label}: the public signals snarkjs reports`);
    assert.ok(timings.witnessMs > 0, "the witness generator was timed");
    assert.ok(timings.totalMs > 0 && timings.phases.msm_h !== undefined, "the library's phase timings are there");
    assert.equal(timings.backend, "cpu");
    assert.equal(await groth16.verify(fixture.json("verification_key.json"), publicSignals, proof), true, `${label}: native verification`);
    made.push({ name: label, vkey: fixture.file("verification_key.json"), publicSignals, proof });
  }
  assertSnarkjsAccepts(made);
});

test("fullProve computes the same witness as snarkjs and reuses a Prover and a WitnessCalculator", needs(...proverApi), async () => {
  const fixture = chosen[0];
  const calculator = await WitnessCalculator.load(fixture.file("circuit.wasm"));
  const input = fixture.json<CircuitInput>("input.json");
  assert.deepEqual(await calculator.wtns(input), fixture.bytes("witness.wtns"), "byte for byte the .wtns snarkjs wrote");

  using prover = await Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu" });
  assert.equal(calculator.nVars, prover.info.nVars);
  const randomness = { r: 11n, s: 13n };
  const first = await groth16.fullProve(input, calculator, prover, { randomness });
  const second = await groth16.fullProve(input, calculator, prover, { randomness });
  assert.deepEqual(second.proof, first.proof, "same input and randomness, same proof");
  assert.equal(prover.closed, false, "a Prover that was passed in stays open");

  // The raw witness written into pinned memory proves the same thing.
  using pinned = PinnedBuffer.alloc(calculator.rawBytes);
  assert.equal(await calculator.writeRaw(input, pinned), calculator.rawBytes);
  const fromPinned = await prover.prove(pinned, { randomness });
  assert.deepEqual(fromPinned.proof, first.proof);

  // snarkjs's groth16.prove(zkey, wtns) with file paths, and with a Key.
  const fromPaths = await groth16.prove(fixture.file("circuit.zkey"), fixture.file("witness.wtns"), { backend: "cpu", randomness });
  assert.deepEqual(fromPaths.proof, first.proof);
  using key = await Key.open(fixture.file("circuit.zkey"));
  const fromKey = await groth16.prove(key, fixture.bytes("witness.wtns"), { backend: "cpu", randomness });
  assert.deepEqual(fromKey.proof, first.proof);
  assert.equal(key.closed, false, "a Key that was passed in stays open");
});

test("fullProve errors: unknown signal, missing input, wrong curve, missing files", needs(...proverApi), async () => {
  const fixture = chosen[0];
  const other = chosen.find((f) => f.curve !== fixture.curve);
  const input = fixture.json<CircuitInput>("input.json");
  const isCuzk = (code: string) => (error: unknown) => {
    assert.ok(error instanceof CuzkError, `a CuzkError, got ${error}`);
    assert.equal(error.code, code, error.message);
    return true;
  };
  const zkey = fixture.file("circuit.zkey"), wasm = fixture.file("circuit.wasm");
  // circom_runtime reports a bad input on the console before throwing: keep the test output clean.
  const consoleError = console.error;
  console.error = () => {};
  try {
    await assert.rejects(groth16.fullProve({ ...input, notASignal: 1 }, wasm, zkey, { backend: "cpu" }), isCuzk("INVALID_ARGUMENT"));
    await assert.rejects(groth16.fullProve({}, wasm, zkey, { backend: "cpu" }), isCuzk("INVALID_ARGUMENT"));
  } finally {
    console.error = consoleError;
  }
  if (other) {
    await assert.rejects(
      groth16.fullProve(other.json<CircuitInput>("input.json"), other.file("circuit.wasm"), zkey, { backend: "cpu" }),
      isCuzk("CURVE_MISMATCH"),
    );
  }
  await assert.rejects(groth16.fullProve(input, "/nonexistent/circuit.wasm", zkey), isCuzk("IO"));
  await assert.rejects(groth16.fullProve(input, wasm, "/nonexistent/circuit.zkey"), isCuzk("IO"));
  await assert.rejects(WitnessCalculator.load(fixture.bytes("witness.wtns")), isCuzk("FORMAT"));
  const calculator = await WitnessCalculator.load(wasm);
  await assert.rejects(calculator.writeRaw(input, new Uint8Array(calculator.rawBytes - 1)), isCuzk("SHORT_BUFFER"));
});
