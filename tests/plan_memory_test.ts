/**
 * @module
 * Promise: `planMemory` answers what an engine would plan for a key and a batch without a key
 * file's points or a device. The seed's workload (the synthetic PoRep key at 2^27, BLS12-381, a
 * batch of 10) planned for 16, 24, 48 and 80 GiB GPUs: each budget either gives a plan that fits it
 * (total = fixed + NTT vectors + rows + MSM workspace + resident + stream buffers - what a proof's work
 * and a group's streamed sums share + a second proof's buffers when proofs overlap + the copies of
 * the H points <= budget,
 * minimum <= budget)
 * or is refused with OUT_OF_MEMORY whose message names "at least <minBudget> bytes" and whose
 * memoryPlan carries that minimum above the budget; which budgets fit is not written here. A key's
 * counts (an open Key or its KeyInfo) give the same plan, whose sections keep every point (a prover
 * made from that key stores at most as many). Every caller-chosen number is bounded before the
 * native call.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CuzkError, Key, Library, planMemory, Prover } from "../mod.ts";
import type { MemoryPlan, PlanMemoryOptions } from "../mod.ts";
import { refusedWith } from "./support/errors.ts";
import { fixtures, needs } from "./support/native.ts";

const api = ["cuzk_plan_memory"] as const;
const GiB = 2 ** 30;
const porep27 = { synthetic: "porep", curve: "bls12_381", constraints: 2 ** 27 - 16 } as const;

/** The plan's own arithmetic, whatever it chose. */
function assertConsistent(plan: MemoryPlan, budget: bigint): void {
  assert.equal(plan.budget, budget);
  assert.equal(plan.totalBytes, plan.fixedBytes + BigInt(plan.nttVectors) * plan.vectorBytes + plan.rowsBytes + plan.msmWorkspaceBytes + plan.residentBytes + plan.streamBufferBytes - plan.sharedBytes + plan.overlapBytes + plan.hCopiesBytes);
  assert.equal(plan.hCopies >= 2, plan.hCopiesBytes > 0n, `${plan.hCopies} H copies, ${plan.hCopiesBytes} bytes`);
  if (plan.hCopies > 0) {
    assert.equal(plan.backend, "cuda", "only the CUDA engine copies the H points");
    assert.equal(plan.sections.H.placement, "resident");
    assert.equal(plan.hCopiesBytes, BigInt(plan.hCopies - 1) * plan.sections.H.storedBytes);
  }
  assert.equal(plan.sharedBytes > 0n, plan.phasesShared, `shared ${plan.sharedBytes} bytes, phasesShared ${plan.phasesShared}`);
  if (plan.overlapBytes > 0n) {
    // A second proof's witness and vectors, only beside a plan that keeps everything resident and the rows whole.
    assert.equal(plan.backend, "cuda", "only the CUDA engine overlaps proofs");
    assert.ok(Object.values(plan.sections).every((s) => s.placement !== "streamed"), "nothing streamed");
    assert.ok(plan.rowsChunkBytes === 0n && !plan.phasesShared, "rows whole, phases not shared");
    assert.ok(plan.overlapBytes > BigInt(plan.nttVectors) * plan.vectorBytes, `overlap ${plan.overlapBytes}: the vectors and a witness`);
  }
  if (plan.phasesShared) assert.equal(plan.backend, "cuda", "only the CUDA engine shares its phases' memory");
  assert.ok([1, 2, 4, 8].includes(plan.msmWindowGroups), `${plan.msmWindowGroups} window groups`);
  if (plan.backend === "cpu") assert.equal(plan.msmWindowGroups, 1, "the CPU engine sorts no windows");
  // The H MSM's chunk: the others', or (CUDA) a larger power of two of its own.
  const h = plan.hChunkPoints, q = plan.msmChunkPoints;
  assert.ok(h >= q && (h & (h - 1n)) === 0n && h <= q * 8n, `H chunk ${h}, others ${q}`);
  assert.ok(h === q || plan.backend === "cuda", "only the CUDA engine gives H a chunk of its own");
  assert.ok([1, 2, 4, 8].includes(plan.hWindowGroups), `${plan.hWindowGroups} window groups of H`);
  if (h === q) assert.equal(plan.hWindowGroups, plan.msmWindowGroups);
  assert.ok(plan.nttVectors === 3 || (plan.backend === "cuda" && (plan.nttVectors === 2 || plan.nttVectors === 4)), `${plan.nttVectors} NTT vectors`);
  // A fourth only where a group's H scalars go out to the host beside the next proof: H streamed,
  // the rows whole, the proofs grouped or the phases shared.
  if (plan.nttVectors === 4) {
    assert.ok(plan.sections.H.placement === "streamed" && plan.rowsChunkBytes === 0n && (plan.phasesShared || plan.groupSize > 1n),
      "four NTT vectors only beside a streamed H's scalars going out");
  }
  assert.ok(plan.totalBytes <= budget, `total ${plan.totalBytes} within the budget ${budget}`);
  assert.ok(plan.minBudget <= plan.totalBytes, `minimum ${plan.minBudget} <= total ${plan.totalBytes}`);
  const resident = Object.values(plan.sections).filter((s) => s.placement === "resident").reduce((sum, s) => sum + s.storedBytes, 0n);
  assert.equal(plan.residentBytes, resident);
  assert.ok(plan.groupSize >= 1n && plan.groupSize <= plan.batch, `group ${plan.groupSize} of a batch of ${plan.batch}`);
  // Only streamed sections are pinned, only by the CUDA engine, and the host budget holds them.
  const pinned = Object.values(plan.sections).filter((s) => s.pinned);
  assert.ok(pinned.every((s) => s.placement === "streamed" && plan.backend === "cuda"), "pinned sections are streamed (CUDA)");
  assert.ok(pinned.reduce((sum, s) => sum + s.storedBytes, 0n) <= plan.hostBytes, "the host bytes count the pinned points");
  assert.ok(plan.hostBytes <= plan.hostBudget, `host ${plan.hostBytes} within ${plan.hostBudget}`);
}

test("the seed's workload at 16, 24, 48 and 80 GiB: a plan within each budget, or a refusal naming the minimum", needs(...api), () => {
  let fitted = 0, minimum: bigint | undefined;
  for (const gib of [16, 24, 48, 80]) {
    const budget = BigInt(gib * GiB);
    const options: PlanMemoryOptions = { backend: "cuda", key: porep27, batch: 10, memoryBudget: budget, hostMemoryBudget: 256 * GiB };
    let plan: MemoryPlan;
    try {
      plan = planMemory(options);
    } catch (error) {
      assert.ok(error instanceof CuzkError && error.code === "OUT_OF_MEMORY", String(error));
      const refused = error.memoryPlan;
      assert.ok(refused, "the refusal carries the plan the library filled in");
      assert.ok(refused.minBudget > budget, `minimum ${refused.minBudget} above the refused budget ${budget}`);
      assert.ok(error.message.includes(`at least ${refused.minBudget} bytes`), error.message);
      assert.equal(minimum ??= refused.minBudget, refused.minBudget, "one minimum whatever the budget");
      continue;
    }
    fitted++;
    assertConsistent(plan, budget);
    assert.equal(plan.backend, "cuda");
    assert.equal(plan.batch, 10n);
    assert.equal(plan.hostBudget, BigInt(256 * GiB));
    assert.ok(plan.hostBytes <= plan.hostBudget);
    assert.equal(minimum ??= plan.minBudget, plan.minBudget, "one minimum whatever the budget");
    assert.equal(plan.pointsDropped, 0n, "a described key keeps every point");
    assert.ok(plan.msmChunkPoints >= 1024n && Number.isInteger(Math.log2(Number(plan.msmChunkPoints))), `chunk ${plan.msmChunkPoints}`);
    const points = Object.values(plan.sections).map((s) => s.points);
    assert.ok(points.every((n) => n >= BigInt(porep27.constraints)), `every section has the circuit's points: ${points}`);
  }
  assert.ok(minimum !== undefined);
  // A budget at the minimum itself fits, and one byte less does not.
  assertConsistent(planMemory({ backend: "cuda", key: porep27, batch: 10, memoryBudget: minimum, hostMemoryBudget: 256 * GiB }), minimum);
  assert.throws(
    () => planMemory({ backend: "cuda", key: porep27, batch: 10, memoryBudget: minimum! - 1n, hostMemoryBudget: 256 * GiB }),
    refusedWith("OUT_OF_MEMORY", new RegExp(`at least ${minimum} bytes`)),
  );
  assert.ok(fitted > 0 || minimum > BigInt(80 * GiB), "a budget above the minimum fits");
});

test("the MSM's windows in groups: an unlimited plan sorts them all at once, budgets between it and the minimum in groups where that pays, a larger budget never a slower prediction", needs(...api), () => {
  const options = (memoryBudget: bigint | number): PlanMemoryOptions => ({ backend: "cuda", key: porep27, batch: 10, memoryBudget, hostMemoryBudget: 256 * GiB });
  const unlimited = planMemory(options(2 ** 50));
  assertConsistent(unlimited, BigInt(2 ** 50));
  assert.equal(unlimited.msmWindowGroups, 1, "room for everything: the windows all at once");
  const least = planMemory(options(unlimited.minBudget));
  assertConsistent(least, unlimited.minBudget);
  // Between the two, each budget's plan, whatever groups it takes: some sort the windows in
  // groups, some give the H MSM larger chunks of its own in the same workspace.
  let before = Number(least.predictedExtraNs);
  let grouped = 0, ownH = 0;
  for (const gib of [14, 16, 20, 24, 32, 48, 64]) {
    const plan = planMemory(options(gib * GiB));
    assertConsistent(plan, BigInt(gib * GiB));
    assert.ok(Number(plan.predictedExtraNs) <= before, `${gib} GiB predicts no slower than a smaller budget`);
    before = Number(plan.predictedExtraNs);
    if (plan.msmWindowGroups > 1 || plan.hWindowGroups > 1) grouped++;
    if (plan.hChunkPoints > plan.msmChunkPoints) ownH++;
  }
  assert.ok(grouped > 0, "some budget sorts the windows in groups");
  assert.ok(ownH > 0, "some budget gives the H MSM chunks of its own");
});

test("the host budget decides which streamed sections are pinned: none in one byte, some in 64 GiB, all in 256 GiB, never a slower prediction for more", needs(...api), () => {
  const pinnedOf = (plan: MemoryPlan) => Object.entries(plan.sections).filter(([, s]) => s.pinned).map(([name]) => name);
  const streamedOf = (plan: MemoryPlan) => Object.entries(plan.sections).filter(([, s]) => s.placement === "streamed").map(([name]) => name);
  let before = Number.POSITIVE_INFINITY;
  const seen: string[] = [];
  for (const host of [1, 16 * GiB, 64 * GiB, 256 * GiB]) {
    const plan = planMemory({ backend: "cuda", key: porep27, batch: 10, memoryBudget: 24 * GiB, hostMemoryBudget: host });
    assertConsistent(plan, BigInt(24 * GiB));
    const predicted = Number(plan.predictedExtraNs);
    assert.ok(predicted <= before, `host ${host}: +${predicted} ns, not above +${before}`);
    before = predicted;
    const pinned = pinnedOf(plan), streamed = streamedOf(plan);
    assert.ok(streamed.length > 0, "24 GiB streams the 2^27 key");
    if (host === 1) assert.deepEqual(pinned, [], "no host memory, nothing pinned");
    if (host === 64 * GiB) assert.ok(pinned.length > 0 && pinned.length < streamed.length, `64 GiB pins some: ${pinned} of ${streamed}`);
    if (host === 256 * GiB) assert.deepEqual(pinned, streamed, "256 GiB pins every streamed section");
    seen.push(`${host}: ${pinned.join(" ") || "none"}`);
  }
  assert.equal(seen.length, 4, seen.join("; "));
});

test("proofs overlap, when asked, where the plan keeps everything resident and has a second proof's buffers left over", needs(...api), () => {
  // The seed's key at 2^26 on an 80 GiB card: resident, with room to spare.
  const key = { ...porep27, constraints: 2 ** 26 - 16 };
  const roomy = planMemory({ backend: "cuda", key, batch: 10, memoryBudget: 80 * GiB, hostMemoryBudget: 256 * GiB, overlap: true });
  assertConsistent(roomy, BigInt(80 * GiB));
  assert.ok(roomy.overlapBytes > 0n, `overlap at 80 GiB: ${roomy.overlapBytes}`);
  const serial = planMemory({ backend: "cuda", key, batch: 10, memoryBudget: 80 * GiB, hostMemoryBudget: 256 * GiB });
  assertConsistent(serial, BigInt(80 * GiB));
  assert.equal(serial.overlapBytes, 0n, "not asked: none");
  assert.equal(serial.totalBytes - serial.hCopiesBytes, roomy.totalBytes - roomy.overlapBytes - roomy.hCopiesBytes, "the same plan, less the second proof's buffers");
  // A budget just below the overlapped total: the same placements without the overlap.
  const tight = planMemory({ backend: "cuda", key, batch: 10, memoryBudget: roomy.totalBytes - roomy.hCopiesBytes - 1n, hostMemoryBudget: 256 * GiB, overlap: true });
  assertConsistent(tight, roomy.totalBytes - roomy.hCopiesBytes - 1n);
  assert.equal(tight.overlapBytes, 0n);
  assert.deepEqual(Object.values(tight.sections).map((s) => s.placement), Object.values(roomy.sections).map((s) => s.placement));
  // The CPU engine never overlaps.
  assert.equal(planMemory({ backend: "cpu", key: { ...key, constraints: 2 ** 16 }, memoryBudget: 8 * GiB, overlap: true }).overlapBytes, 0n);
});

test("copies of the H points are part of the plan: chosen from the room left, forced, or none", needs(...api), () => {
  const key = { ...porep27, constraints: 2 ** 24 - 16 };
  const base = { backend: "cuda", key, batch: 10, memoryBudget: 80 * GiB, hostMemoryBudget: 256 * GiB } as const;
  const chosen = planMemory(base);
  assertConsistent(chosen, BigInt(80 * GiB));
  assert.ok(chosen.hCopies >= 2, `${chosen.hCopies} copies chosen at 2^24 in 80 GiB`);
  const none = planMemory({ ...base, hCopies: 0 });
  assertConsistent(none, BigInt(80 * GiB));
  assert.equal(none.hCopies, 0);
  assert.equal(none.totalBytes, chosen.totalBytes - chosen.hCopiesBytes);
  const two = planMemory({ ...base, hCopies: 2 });
  assert.equal(two.hCopies, 2);
  assertConsistent(two, BigInt(80 * GiB));
  // More than the budget holds while they are made: refused, naming them and the budget they need.
  // (A budget that holds the plan without copies, and nothing more.)
  assert.throws(() => planMemory({ ...base, memoryBudget: none.totalBytes, hCopies: 64 }), (error: unknown) => {
    assert.ok(error instanceof CuzkError && error.code === "OUT_OF_MEMORY", String(error));
    assert.match(error.message, /copies of the H points/);
    assert.ok(error.memoryPlan && error.memoryPlan.minBudget > none.totalBytes);
    return true;
  });
});

test("CUDA is planned on any machine given a budget; without one it needs a GPU", needs(...api), () => {
  const plan = planMemory({ backend: "cuda", key: { synthetic: "porep", curve: "bn254", constraints: 2 ** 16 }, memoryBudget: 8 * GiB });
  assertConsistent(plan, BigInt(8 * GiB));
  const gpus = Library.default().info().cudaDeviceCount;
  const automatic = () => planMemory({ backend: "cuda", key: { synthetic: "porep", curve: "bn254", constraints: 2 ** 16 } });
  if (gpus === 0) assert.throws(automatic, refusedWith("NO_DEVICE", /budget/));
  else assert.ok(automatic().budget > 0n);
});

test("a key's counts: an open Key and its KeyInfo give one plan, keeping every point a prover of that key stores", needs(...api, "cuzk_prover_create_with", "cuzk_prover_memory_plan"), async () => {
  for (const fixture of fixtures().filter((f) => f.name === "mulchain_10_over")) {
    using key = await Key.open(fixture.file("circuit.zkey"), { pointsOnDemand: true });
    const budget = 64n << 20n;
    const described = planMemory({ backend: "cpu", key, pointsOnDemand: true, memoryBudget: budget });
    assert.deepEqual(planMemory({ backend: "cpu", key: key.info(), pointsOnDemand: true, memoryBudget: budget }), described);
    assertConsistent(described, budget);
    assert.equal(described.sections.H.points, BigInt(key.info().domainSize));
    for (const section of Object.values(described.sections)) assert.ok(section.stored >= section.points && section.infinity === 0n);
    using prover = await Prover.open({ zkey: key, backend: "cpu", memoryBudget: budget });
    const actual = prover.memoryPlan();
    assert.ok(actual.pointsDropped > 0n, `${fixture.curve}: the fixture has points at infinity for the prover to drop`);
    for (const [name, section] of Object.entries(actual.sections)) {
      const kept = described.sections[name as keyof typeof described.sections];
      assert.equal(section.points, kept.points, `${fixture.curve} ${name}: the same points in the key`);
      assert.ok(section.stored <= kept.stored && section.storedBytes <= kept.storedBytes, `${fixture.curve} ${name}: the prover stores at most what the description keeps`);
    }
    // Points read in place from a key in memory: nothing stored, whatever the budget.
    const inPlace = planMemory({ backend: "cpu", key, memoryBudget: budget });
    assert.ok(Object.values(inPlace.sections).every((s) => s.placement === "in_key" && s.storedBytes === 0n));
  }
});

test("planMemory bounds every number it is given, before the native call", needs(...api), () => {
  const key = { synthetic: "porep", curve: "bn254", constraints: 1024 } as const;
  const base: PlanMemoryOptions = { backend: "cpu", key, memoryBudget: GiB };
  const bad: Array<[Partial<PlanMemoryOptions>, string]> = [
    [{ batch: 0 }, "batch"],
    [{ batch: 1025 }, "batch"],
    [{ batch: 1.5 }, "batch"],
    [{ memoryBudget: -1 }, "memoryBudget"],
    [{ memoryBudget: 2n ** 64n }, "memoryBudget"],
    [{ hostMemoryBudget: -1 }, "hostMemoryBudget"],
    [{ hostMemoryBudget: 0.5 }, "hostMemoryBudget"],
    [{ chunkPoints: 512 }, "chunkPoints"],
    [{ chunkPoints: 3000 }, "chunkPoints"],
    [{ chunkPoints: 2 ** 32 }, "chunkPoints"],
    [{ chunkPoints: -1024 }, "chunkPoints"],
    [{ chunkPoints: "1024" as unknown as number }, "chunkPoints"],
    [{ backend: "auto" as "cpu" }, "backend"],
    [{ pointsOnDemand: 1 as unknown as boolean }, "pointsOnDemand"],
    [{ key: { ...key, constraints: 0 } }, "constraints"],
    [{ key: { ...key, constraints: 2 ** 32 } }, "constraints"],
    [{ key: { ...key, publicInputs: -1 } }, "publicInputs"],
    [{ key: { ...key, synthetic: "uniform" as "porep" } }, "synthetic"],
    [{ key: { curve: "bn254", nVars: 10, nPublic: 1, nConstraints: 10, nCoefs: -1 } }, "nCoefs"],
    [{ key: { curve: "bn254", nVars: 2 ** 32, nPublic: 1, nConstraints: 10, nCoefs: 10 } }, "nVars"],
    [{ key: undefined as unknown as PlanMemoryOptions["key"] }, "key"],
  ];
  for (const [change, name] of bad) {
    assert.throws(() => planMemory({ ...base, ...change }), refusedWith("INVALID_ARGUMENT", new RegExp(name)), JSON.stringify(change, (_k, v) => typeof v === "bigint" ? String(v) : v));
  }
  // The library holds the counts to their relations: a witness shorter than its public inputs.
  assert.throws(() => planMemory({ ...base, key: { curve: "bn254", nVars: 2, nPublic: 4, nConstraints: 10, nCoefs: 10 } }), refusedWith("INVALID_ARGUMENT", /n_public/));
  // Each bound's edge is taken.
  for (const chunkPoints of [0, 1024, 2 ** 31]) assertConsistent(planMemory({ ...base, chunkPoints }), BigInt(GiB));
  assert.equal(planMemory({ ...base, batch: 1024, memoryBudget: 4n * BigInt(GiB) }).batch, 1024n);
});
