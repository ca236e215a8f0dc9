/**
 * @module
 * Promise: `cuzk plan` prints the memory plan the library makes for a key (a .zkey, both curves)
 * or the synthetic PoRep circuit, on a machine with or without a GPU: as text (the budgets, each
 * section, the chunk, the totals, the minimum, the host memory, the groups, the link bytes, and
 * that a described key keeps every point) or as JSON equal to `planMemory`'s plan for the same
 * options. A budget below the minimum exits 1 with the library's message after showing the
 * minimum; a command line it cannot use exits 2. Runs the CLI as a child process of whichever
 * runtime runs the tests.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Key, Library, planMemory } from "../mod.ts";
import { needs } from "./support/native.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "cli.ts");
const GiB = 2 ** 30;
const api = ["cuzk_plan_memory", "cuzk_key_open"] as const;

/** Runs the CLI under the runtime that runs this test file. */
function cli(...args: string[]) {
  const runtime = "Deno" in globalThis ? ["run", "-A", CLI] : [CLI];
  const r = spawnSync(process.execPath, [...runtime, ...args], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const zkeyOf = (curve: string, name: string) => join(ROOT, "tests", "fixtures", curve, name, "circuit.zkey");
/** JSON as the CLI writes it: bigints as decimal strings. */
const asJson = (value: unknown) => JSON.parse(JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));

for (const curve of ["bn254", "bls12_381"]) {
  test(`cli plan ${curve}: --json is planMemory's plan for the key's counts; the text shows every part`, needs(...api), async () => {
    const zkey = zkeyOf(curve, "mulchain_10_over");
    using key = await Key.open(zkey, { pointsOnDemand: true });
    const json = cli("plan", zkey, "--backend", "cuda", "--gpu-memory", "1GiB", "--host-memory", "512MiB", "--batch", "3", "--json");
    assert.equal(json.code, 0, json.stderr);
    const expected = planMemory({ backend: "cuda", key, memoryBudget: GiB, hostMemoryBudget: 512 * 2 ** 20, batch: 3 });
    assert.deepEqual(JSON.parse(json.stdout), asJson(expected));

    const cpu = cli("plan", zkey, "--backend", "cpu", "--host-memory", "64MiB", "--points-on-demand", "--json");
    assert.equal(cpu.code, 0, cpu.stderr);
    assert.deepEqual(JSON.parse(cpu.stdout), asJson(planMemory({ backend: "cpu", key, memoryBudget: 64 * 2 ** 20, pointsOnDemand: true })));

    const text = cli("plan", zkey, "--backend", "cuda", "--gpu-memory", "1GiB", "--host-memory", "512MiB", "--batch", "3");
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`${curve}, 1022 constraints \\(domain 2\\^11\\), 1025 signals`));
    assert.match(text.stdout, /a described key keeps every point; a prover's plan drops the points at infinity/);
    assert.match(text.stdout, /budgets: GPU memory 1\.00 GiB \(1073741824 bytes\), host memory beyond the key 512\.00 MiB/);
    for (const section of ["A", "B1", "B2", "C", "H"]) assert.match(text.stdout, new RegExp(`^${section} +(resident|streamed) +\\d+ +\\d`, "m"));
    assert.match(text.stdout, new RegExp(`chunk: 2\\^${Math.log2(Number(expected.msmChunkPoints))} points per MSM chunk`));
    assert.match(text.stdout, /totals: fixed .*, rows .*, MSM workspace .*, resident points .*, stream buffers /);
    assert.match(text.stdout, new RegExp(`= .* \\(${expected.totalBytes} bytes\\) of the 1\\.00 GiB budget`));
    assert.match(text.stdout, new RegExp(`minimum budget: .* \\(${expected.minBudget} bytes\\)`));
    assert.match(text.stdout, /host memory: .* of 512\.00 MiB/);
    // 1025 signals: three witnesses of 1025 x 32 bytes (the plan's host bytes are 0 here: all resident).
    assert.equal(expected.hostBytes, 0n);
    assert.match(text.stdout, /^witnesses: 3 x 32\.03 KiB = 96\.09 KiB of the caller's memory .*; with the plan's, 96\.09 KiB of host memory besides the key$/m);
    assert.match(text.stdout, /batch: 3 proof\(s\) a call/);
    assert.match(text.stdout, /read over the link \(PCIe\): .* per proof \(a partition\)/);
  });
}

test("cli plan of the seed's workload at 16, 24, 48 and 80 GiB: a plan within the budget, or exit 1 naming the minimum", needs(...api), () => {
  const refusals: number[] = [];
  for (const gib of [16, 24, 48, 80]) {
    const args = ["plan", "--synthetic", "porep", "--log2", "27", "--curve", "bls12_381", "--backend", "cuda", "--batch", "10", "--gpu-memory", `${gib}GiB`, "--host-memory", "256GiB"];
    const json = cli(...args, "--json");
    const plan = JSON.parse(json.stdout);
    const budget = BigInt(plan.budget), minimum = BigInt(plan.minBudget);
    assert.equal(budget, BigInt(gib * GiB));
    if (json.code === 0) {
      assert.ok(BigInt(plan.totalBytes) <= budget && minimum <= budget, `${gib} GiB: total ${plan.totalBytes}, minimum ${plan.minBudget}`);
      assert.equal(plan.batch, "10");
      // Beside the plan's host memory the batch's ten witnesses: one value a wire (a point of A), 32 bytes each.
      const witness = BigInt(plan.sections.A.points) * 32n;
      const gibText = (b: bigint) => `${(Number(b) / GiB).toFixed(2)} GiB`;
      const text = cli(...args);
      assert.equal(text.code, 0, text.stderr);
      assert.ok(text.stdout.includes(`witnesses: 10 x ${gibText(witness)} = ${gibText(10n * witness)} of the caller's memory`), text.stdout);
      assert.ok(text.stdout.includes(`with the plan's, ${gibText(10n * witness + BigInt(plan.hostBytes))} of host memory besides the key`), text.stdout);
      continue;
    }
    refusals.push(gib);
    assert.equal(json.code, 1, json.stderr);
    assert.equal(plan.fits, false);
    assert.ok(minimum > budget);
    assert.match(json.stderr, new RegExp(`^cuzk: cannot plan the memory: .*at least ${minimum} bytes`));
    const text = cli(...args);
    assert.equal(text.code, 1);
    assert.match(text.stdout, new RegExp(`minimum budget: [\\d.]+ GiB \\(${minimum} bytes\\)`));
    assert.equal(text.stderr.trim().split("\n").length, 1, "one line on stderr");
  }
  // --log2 27 is --constraints 2^27 - 16: the same plan.
  const byCount = cli("plan", "--synthetic", "porep", "--constraints", String(2 ** 27 - 16), "--curve", "bls12_381", "--backend", "cuda", "--batch", "10", "--gpu-memory", "80GiB", "--host-memory", "256GiB", "--json");
  const byLog = cli("plan", "--synthetic", "porep", "--log2", "27", "--backend", "cuda", "--batch", "10", "--gpu-memory", "80GiB", "--host-memory", "256GiB", "--json");
  assert.equal(byCount.stdout, byLog.stdout);
  assert.ok(refusals.every((gib) => gib < 80), `refused: ${refusals}`);
});

test("cli plan refusals: a budget below the minimum exits 1 showing it; bad command lines exit 2", needs(...api), () => {
  const zkey = zkeyOf("bn254", "poseidon_10");
  const small = cli("plan", zkey, "--backend", "cpu", "--host-memory", "1KiB");
  assert.equal(small.code, 1, small.stderr);
  const minimum = /minimum budget: .* \((\d+) bytes\)/.exec(small.stdout)?.[1];
  assert.ok(minimum && BigInt(minimum) > 1024n, small.stdout);
  assert.match(small.stderr, new RegExp(`^cuzk: cannot plan the memory: the key does not fit the host memory budget of 1024 bytes .*at least ${minimum} bytes`));

  const usage: string[][] = [
    ["plan"],
    ["plan", zkey, "--gpu-memory", "24GB"],
    ["plan", zkey, "--gpu-memory", "-1"],
    ["plan", zkey, "--gpu-memory", "0.5"],
    ["plan", zkey, "--host-memory", "99999999TiB"],
    ["plan", zkey, "--batch", "0"],
    ["plan", zkey, "--batch", "1025"],
    ["plan", zkey, "--backend", "gpu"],
    ["plan", zkey, "--backend", "cpu", "--gpu-memory", "1GiB"],
    ["plan", zkey, "--backend", "cuda", "--gpu-memory", "1GiB", "--points-on-demand"],
    ["plan", zkey, "--log2", "20"],
    ["plan", zkey, "--synthetic", "porep", "--log2", "20"],
    ["plan", "--synthetic", "porep"],
    ["plan", "--synthetic", "porep", "--log2", "20", "--constraints", "1000"],
    ["plan", "--synthetic", "uniform", "--log2", "20"],
    ["plan", "--synthetic", "porep", "--log2", "4"],
    ["plan", "--synthetic", "porep", "--log2", "20", "--curve", "bn128x"],
  ];
  for (const args of usage) {
    const r = cli(...args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^cuzk: .+\n$/, args.join(" "));
  }
  // Sizes: bytes, or KiB/MiB/GiB/TiB, a fraction where it comes to whole bytes.
  for (const [size, bytes] of [["1073741824", 2 ** 30], ["1GiB", 2 ** 30], ["1.5GiB", 1.5 * 2 ** 30], ["1048576KiB", 2 ** 30], ["1tib", 2 ** 40]] as const) {
    const r = cli("plan", "--synthetic", "porep", "--log2", "12", "--backend", "cuda", "--gpu-memory", size, "--json");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).budget, String(bytes), size);
  }
  // Without a budget, CUDA plans for GPU 0's free memory: where there is none, the line says which flag to give.
  const automatic = cli("plan", "--synthetic", "porep", "--log2", "12", "--backend", "cuda");
  if (Library.default().info().cudaDeviceCount === 0) {
    assert.equal(automatic.code, 1);
    assert.match(automatic.stderr, /^cuzk: cannot plan the memory: .*--gpu-memory SIZE/);
  } else {
    assert.equal(automatic.code, 0, automatic.stderr);
  }
  // CUDA on any machine given a budget (above); the CPU plan of a synthetic circuit too.
  const cpu = cli("plan", "--synthetic", "porep", "--log2", "12", "--curve", "bn254", "--backend", "cpu", "--host-memory", "1GiB");
  assert.equal(cpu.code, 0, cpu.stderr);
  assert.match(cpu.stdout, /budgets: host memory 1\.00 GiB/);
  assert.match(cpu.stdout, /4080 constraints \(2\^12 - 16\), 4 public inputs; cpu engine/);
});
