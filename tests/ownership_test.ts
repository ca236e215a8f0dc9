/**
 * @module
 * Promise: the library owns what it reads after a call returns. A key opened from bytes keeps
 * working after the caller's ArrayBuffer is transferred away and its memory reused; a witness the
 * caller changes right after prove()/proveBatch() returned its promise does not change the proof
 * (JS memory is staged before the call returns). Every proof here is verified.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Key, Prover } from "../mod.ts";
import { fixtures, needs } from "./support/native.ts";
import { rawValues } from "./support/wtns.ts";

const api = ["cuzk_key_open", "cuzk_key_open_memory", "cuzk_key_check_witness", "cuzk_prover_create", "cuzk_prove", "cuzk_verify"] as const;
const all = fixtures();
const bn = all.find((f) => f.curve === "bn254" && f.name === "mulchain_4")!;
const bls = all.find((f) => f.curve === "bls12_381" && f.name === "poseidon_10")!;

type Movable = ArrayBuffer & { transfer?: (length?: number) => ArrayBuffer };

test("Key.fromBytes: the caller's buffer transferred away and overwritten after the open changes nothing", needs(...api), async () => {
  for (const fixture of [bn, bls]) {
    const bytes = fixture.bytes("circuit.zkey");
    const key = Key.fromBytes(bytes);
    // Move the memory out (transfer keeps the backing store: the new buffer is the old memory),
    // then overwrite it: a key that kept a view would now read zeros.
    const buffer = bytes.buffer as Movable;
    const moved = buffer.transfer?.() ?? structuredClone(buffer, { transfer: [buffer] });
    assert.equal(bytes.byteLength, 0, "the caller's view is detached");
    new Uint8Array(moved).fill(0);
    const prover = await Prover.open({ zkey: key, backend: "cpu" });
    const { proof, publicSignals } = await prover.prove(fixture.bytes("witness.wtns"), { selfCheck: false });
    assert.deepEqual(publicSignals, fixture.json<string[]>("public.json"));
    assert.equal(await prover.verify(publicSignals, proof), true, `${fixture.curve}: the proof verifies`);
    prover.close();
    key.close();
  }
});

test("a witness changed right after prove() returned its promise does not change the proof", needs(...api), async () => {
  using prover = await Prover.open({ zkey: bn.file("circuit.zkey"), backend: "cpu" });
  const expected = bn.json<string[]>("public.json");
  const wtns = bn.bytes("witness.wtns");
  const { raw, values } = rawValues(wtns);
  // A call ahead in the queue, so the calls below wait before they run.
  const ahead = prover.prove(raw, { selfCheck: false });

  const wtnsCopy = wtns.slice(), rawCopy = raw.slice(), valuesCopy = [...values];
  const calls = [
    prover.prove(wtnsCopy, { selfCheck: false }),
    prover.prove(rawCopy, { selfCheck: false }),
    prover.prove(valuesCopy, { selfCheck: false }),
    prover.proveBatch([rawCopy, valuesCopy], { selfCheck: false }).then((batch) => batch[1]),
  ];
  // Change a public input and another value (still below r) in every caller-held form.
  for (const bytes of [wtnsCopy, rawCopy]) {
    bytes[bytes.length - 32] ^= 1;
    bytes[bytes.length - 32 * (values.length - 1)] ^= 1;
  }
  valuesCopy[1] += 1n;
  valuesCopy[valuesCopy.length - 1] += 1n;

  for (const { proof, publicSignals } of await Promise.all([ahead, ...calls])) {
    assert.deepEqual(publicSignals, expected, "the public signals are those of the witness as given");
    assert.equal(await prover.verify(publicSignals, proof), true, "the proof is of the witness as given");
  }
});
