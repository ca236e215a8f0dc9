/**
 * @module
 * Promise: the key memory plan reaches TypeScript. A key opened with
 * `pointsOnDemand` leaves its points in the file; provers made from it with any budget (automatic,
 * everything streamed, a mixed plan) give the same proof as the key read whole, and `memoryPlan()`
 * says where each section lives, how many points at infinity were dropped and what the key holds
 * in host memory. A budget too small is a typed OUT_OF_MEMORY naming the budget; a bad budget is
 * INVALID_ARGUMENT before any native call.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Key, Prover } from "../mod.ts";
import type { MemoryPlan } from "../mod.ts";
import { refusedWith } from "./support/errors.ts";
import { fixtures, needs } from "./support/native.ts";

const api = ["cuzk_key_open", "cuzk_prover_create_with", "cuzk_prover_memory_plan", "cuzk_prove"] as const;
const fixture = fixtures().find((f) => f.curve === "bn254" && f.name === "poseidon_10")!;
const randomness = { r: 0x1234567n, s: 0x7654321n };

const largest = (plan: MemoryPlan) => Object.values(plan.sections).reduce((m, s) => (s.storedBytes > m ? s.storedBytes : m), 0n);
const placements = (plan: MemoryPlan) => Object.values(plan.sections).filter((s) => s.storedBytes > 0n).map((s) => s.placement);

test("every memory plan of a key on demand gives the proof of the key read whole", needs(...api), async () => {
  const zkey = fixture.file("circuit.zkey");
  const wtns = fixture.bytes("witness.wtns");
  using whole = await Prover.open({ zkey, backend: "cpu" });
  const reference = await whole.prove(wtns, { randomness });
  const inPlace = whole.memoryPlan();
  assert.deepEqual(new Set(Object.values(inPlace.sections).map((s) => s.placement)), new Set(["in_key"]));
  assert.equal(inPlace.residentBytes, 0n);

  using key = await Key.open(zkey, { pointsOnDemand: true });
  const proveWith = async (memoryBudget: bigint) => {
    using prover = await Prover.open({ zkey: key, backend: "cpu", memoryBudget });
    const { proof } = await prover.prove(wtns, { randomness });
    assert.deepEqual(proof, reference.proof);
    return prover.memoryPlan();
  };
  const resident = await proveWith(0n);
  assert.ok(placements(resident).every((p) => p === "resident"));
  assert.ok(resident.keyHostBytes < inPlace.keyHostBytes, `${resident.keyHostBytes} < ${inPlace.keyHostBytes}`);
  assert.equal(resident.sections.A.points, BigInt(key.info().nVars));

  const streamed = await proveWith(resident.fixedBytes + largest(resident));
  assert.ok(placements(streamed).every((p) => p === "streamed"));
  assert.equal(streamed.streamBufferBytes, largest(resident));

  const others = ["A", "B1", "B2", "C"].map((s) => resident.sections[s as "A"].storedBytes).reduce((a, b) => (a > b ? a : b));
  const mixed = await proveWith(resident.fixedBytes + resident.sections.H.storedBytes + others);
  assert.ok(placements(mixed).includes("resident") && placements(mixed).includes("streamed"), JSON.stringify(placements(mixed)));

  await assert.rejects(
    Prover.open({ zkey: key, backend: "cpu", memoryBudget: resident.fixedBytes + largest(resident) - 1n }),
    refusedWith("OUT_OF_MEMORY", /host memory budget of \d+ bytes/),
  );
});

test("a memory budget must be a byte count", needs(...api), async () => {
  for (const memoryBudget of [-1, 1.5, Number.MAX_SAFE_INTEGER + 2, 2n ** 64n]) {
    await assert.rejects(Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu", memoryBudget }), refusedWith("INVALID_ARGUMENT", /memoryBudget/));
  }
});
