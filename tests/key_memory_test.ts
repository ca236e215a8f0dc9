/**
 * @module
 * Promise: the key memory plan reaches TypeScript. A key opened with
 * `pointsOnDemand` leaves its points in the file; provers made from it with any budget (automatic,
 * everything streamed, a mixed plan) give the same proof as the key read whole, and `memoryPlan()`
 * says where each section lives, how many points at infinity were dropped, what the key holds in
 * host memory and the bytes of each part against the budget (every plan fits its budget). The
 * least budget the plan names gives a plan too; one byte less is a typed OUT_OF_MEMORY naming both.
 * MSMs and streams in chunks (chunkPoints) give the same proof. A bad budget is INVALID_ARGUMENT
 * before any native call.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Key, Prover, verify } from "../mod.ts";
import type { MemoryPlan, VerificationKeyJson } from "../mod.ts";
import { refusedWith } from "./support/errors.ts";
import { fixtures, needs } from "./support/native.ts";

const api = ["cuzk_key_open", "cuzk_prover_create_with", "cuzk_prover_memory_plan", "cuzk_prove"] as const;
const fixture = fixtures().find((f) => f.curve === "bn254" && f.name === "poseidon_10")!;
const randomness = { r: 0x1234567n, s: 0x7654321n };

const placements = (plan: MemoryPlan) => Object.values(plan.sections).filter((s) => s.storedBytes > 0n).map((s) => s.placement);

/** The plan's arithmetic: its parts add up to its total, which fits its budget and is at least its minimum. */
function assertFits(plan: MemoryPlan): void {
  assert.equal(plan.totalBytes, plan.fixedBytes + BigInt(plan.nttVectors) * plan.vectorBytes + plan.rowsBytes + plan.msmWorkspaceBytes + plan.residentBytes + plan.streamBufferBytes - plan.sharedBytes + plan.overlapBytes + plan.hCopiesBytes);
  assert.equal(plan.sharedBytes > 0n, plan.phasesShared, `shared ${plan.sharedBytes} bytes, phasesShared ${plan.phasesShared}`);
  if (plan.phasesShared) assert.equal(plan.backend, "cuda", "only the CUDA engine shares its phases' memory");
  assert.ok(plan.minBudget <= plan.totalBytes && plan.totalBytes <= plan.budget, `${plan.minBudget} <= ${plan.totalBytes} <= ${plan.budget}`);
}

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
    const plan = prover.memoryPlan();
    assertFits(plan);
    return plan;
  };
  const resident = await proveWith(0n);
  assert.ok(placements(resident).every((p) => p === "resident"));
  assert.ok(resident.keyHostBytes < inPlace.keyHostBytes, `${resident.keyHostBytes} < ${inPlace.keyHostBytes}`);
  assert.equal(resident.sections.A.points, BigInt(key.info().nVars));
  assert.equal(resident.streamBufferBytes, 0n);

  // From the least budget to the one that keeps everything resident: every plan gives the proof.
  const least = await proveWith(resident.minBudget);
  assert.ok(placements(least).every((p) => p === "streamed"), JSON.stringify(placements(least)));
  assert.ok(least.streamBufferBytes > 0n && least.streamedBytesPerProof > 0n);
  const seen = new Set<string>();
  for (let step = 1n; step < 8n; step++) {
    const plan = await proveWith(resident.minBudget + (resident.totalBytes - resident.minBudget) * step / 8n);
    seen.add(JSON.stringify(placements(plan)));
  }
  assert.ok([...seen].some((p) => p.includes("resident") && p.includes("streamed")), `a mixed plan among ${[...seen].join(" ")}`);

  await assert.rejects(
    Prover.open({ zkey: key, backend: "cpu", memoryBudget: resident.minBudget - 1n }),
    refusedWith("OUT_OF_MEMORY", new RegExp(`host memory budget of ${resident.minBudget - 1n} bytes.*at least ${resident.minBudget} bytes`)),
  );
});

test("MSMs and streams in chunks of 2^10 points give the proof of the unchunked plan", needs(...api), async () => {
  // Domain 2^11 and 1025 signals: with chunks of 2^10 points, H and A each take two chunks.
  for (const f of fixtures().filter((f) => f.name === "mulchain_10_over")) {
    const wtns = f.bytes("witness.wtns");
    using key = await Key.open(f.file("circuit.zkey"), { pointsOnDemand: true });
    const proofs: string[] = [];
    for (const settings of [{}, { chunkPoints: 1024 }, { chunkPoints: 1024, streamAll: true }]) {
      using prover = await Prover.open({ zkey: key, backend: "cpu", ...settings });
      const plan = prover.memoryPlan();
      assertFits(plan);
      assert.equal(plan.msmChunkPoints, "chunkPoints" in settings ? 1024n : 2048n, `${f.curve} ${JSON.stringify(settings)}: the chunk`);
      const { proof, publicSignals } = await prover.prove(wtns, { randomness });
      assert.equal(await verify(f.json<VerificationKeyJson>("verification_key.json"), publicSignals, proof), true);
      proofs.push(JSON.stringify(proof));
    }
    assert.equal(new Set(proofs).size, 1, `${f.curve}: one proof whatever the chunk`);
  }
});

test("a memory budget must be a byte count", needs(...api), async () => {
  for (const memoryBudget of [-1, 1.5, Number.MAX_SAFE_INTEGER + 2, 2n ** 64n]) {
    await assert.rejects(Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu", memoryBudget }), refusedWith("INVALID_ARGUMENT", /memoryBudget/));
  }
});
