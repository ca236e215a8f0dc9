/**
 * @module
 * Promise: the library's settings travel with the call, never through the process environment.
 * Each engine setting of Prover.open (memoryBudget, hostMemoryBudget, chunkPoints, hCopies,
 * streamAll, streamPerProof, keepInfinity, streamRows, overlap) and of Context.create (g2OnCpu) has its default, takes every value in its bounds
 * and refuses the others with INVALID_ARGUMENT naming it, before any native work; a CUZK_*
 * variable in the environment changes nothing; none of them changes a proof's bytes (proofs with
 * fixed r, s compared, each verified). mod.ts no longer offers setNativeEnv.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import * as cuzk from "../mod.ts";
import { Context, CuzkError, Prover, verify } from "../mod.ts";
import type { ProverOptions, VerificationKeyJson } from "../mod.ts";
import { fixtures, needs } from "./support/native.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ZKEY = join(ROOT, "tests/fixtures/bn254/poseidon_10/circuit.zkey");
const api = ["cuzk_prover_create_with", "cuzk_prover_memory_plan", "cuzk_prove"] as const;

const refused = (name: string) => (error: unknown) =>
  error instanceof CuzkError && error.code === "INVALID_ARGUMENT" && error.message.includes(name);

/** The placements of a CPU prover's plan over a key read on demand (the CPU engine then holds the points). */
async function placements(options: Partial<ProverOptions>): Promise<string[]> {
  const prover = await Prover.open({ zkey: ZKEY, backend: "cpu", pointsOnDemand: true, ...options });
  try {
    return Object.values(prover.memoryPlan().sections).map((s) => s.placement);
  } finally {
    prover.close();
  }
}

test("engine settings: defaults, values in bounds, and values out of bounds refused by name", needs(...api), async () => {
  assert.ok((await placements({})).every((p) => p === "resident"), "default: every section resident");
  assert.ok((await placements({ streamAll: true })).every((p) => p === "streamed"), "streamAll: every section streamed");
  assert.ok((await placements({ streamAll: false })).every((p) => p === "resident"));
  for (const hCopies of ["auto", 0, 1, 2, 64] as const) assert.ok((await placements({ hCopies })).length === 5, `hCopies ${hCopies}`);
  for (const keepInfinity of [true, false]) await placements({ keepInfinity, streamPerProof: !keepInfinity });
  // The CPU engine reads its rows from the key: streamRows asks for nothing it must change.
  for (const streamRows of [true, false]) assert.ok((await placements({ streamRows })).every((p) => p === "resident"), `streamRows ${streamRows}`);
  for (const hostMemoryBudget of [0, 2 ** 30, 2n ** 40n]) assert.ok((await placements({ hostMemoryBudget })).length === 5, `hostMemoryBudget ${hostMemoryBudget}`);
  for (const chunkPoints of [0, 1024, 2 ** 20, 2 ** 31]) assert.ok((await placements({ chunkPoints })).every((p) => p === "resident"), `chunkPoints ${chunkPoints}`);

  const bad: Array<[Partial<ProverOptions>, string]> = [
    [{ hCopies: -1 }, "hCopies"],
    [{ hCopies: 65 }, "hCopies"],
    [{ hCopies: 2.5 }, "hCopies"],
    [{ hCopies: "all" as unknown as number }, "hCopies"],
    [{ streamAll: 1 as unknown as boolean }, "streamAll"],
    [{ streamPerProof: "yes" as unknown as boolean }, "streamPerProof"],
    [{ keepInfinity: null as unknown as boolean }, "keepInfinity"],
    [{ streamRows: 0 as unknown as boolean }, "streamRows"],
    [{ overlap: "no" as unknown as boolean }, "overlap"],
    [{ memoryBudget: -1 }, "memoryBudget"],
    [{ memoryBudget: 2 ** 60 }, "memoryBudget"],
    [{ hostMemoryBudget: -1 }, "hostMemoryBudget"],
    [{ hostMemoryBudget: 2 ** 60 }, "hostMemoryBudget"],
    [{ hostMemoryBudget: "1GiB" as unknown as number }, "hostMemoryBudget"],
    [{ chunkPoints: 512 }, "chunkPoints"],
    [{ chunkPoints: 1000 }, "chunkPoints"],
    [{ chunkPoints: 2 ** 32 }, "chunkPoints"],
    [{ chunkPoints: 1024.5 }, "chunkPoints"],
    [{ g2OnCpu: "true" as unknown as boolean }, "g2OnCpu"],
  ];
  for (const [options, name] of bad) await assert.rejects(placements(options), refused(name), JSON.stringify(options));
  assert.throws(() => Context.create({ backend: "cpu", g2OnCpu: 0 as unknown as boolean }), refused("g2OnCpu"));
  Context.create({ backend: "cpu", g2OnCpu: true }).close();
});

test("the environment is not a way in: CUZK_* variables change no plan; setNativeEnv is gone", needs(...api), async () => {
  const saved = { ...process.env };
  try {
    for (const name of ["CUZK_CPU_STREAM", "CUZK_GPU_STREAM", "CUZK_STREAM_PER_PROOF"]) process.env[name] = "1";
    assert.ok((await placements({})).every((p) => p === "resident"), "the variables are not read");
  } finally {
    for (const name of ["CUZK_CPU_STREAM", "CUZK_GPU_STREAM", "CUZK_STREAM_PER_PROOF"]) if (!(name in saved)) delete process.env[name];
  }
  assert.equal((cuzk as Record<string, unknown>).setNativeEnv, undefined);
});

test("no setting changes a proof: the same r, s give the same bytes streamed, per proof or resident", needs(...api), async () => {
  for (const fixture of fixtures().filter((f) => f.name === "poseidon_10")) {
    const vk = fixture.json<VerificationKeyJson>("verification_key.json");
    const wtns = fixture.bytes("witness.wtns");
    const randomness = [{ r: 5n, s: 9n }, { r: 6n, s: 10n }];
    const proofs: string[] = [];
    const settings: Array<Partial<ProverOptions>> = [{}, { streamAll: true }, { streamAll: true, streamPerProof: true }, { hCopies: 0, keepInfinity: true, g2OnCpu: true }, { chunkPoints: 1024, hostMemoryBudget: 2 ** 30 }, { streamRows: true, streamAll: true }, { overlap: true }];
    for (const options of settings) {
      const prover = await Prover.open({ zkey: fixture.file("circuit.zkey"), backend: "cpu", pointsOnDemand: true, ...options });
      try {
        const batch = await prover.proveBatch([wtns, wtns], { randomness });
        for (const { proof, publicSignals } of batch) assert.equal(await verify(vk, publicSignals, proof), true);
        proofs.push(JSON.stringify(batch.map((p) => p.proof)));
      } finally {
        prover.close();
      }
    }
    assert.ok(proofs.every((p) => p === proofs[0]), `${fixture.curve}: the same proofs under every setting`);
  }
});
