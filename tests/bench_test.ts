/**
 * @module
 * Promise: the per-phase benchmark suite (bench/phases.ts) runs under the runtime that runs this
 * file, its per-phase figures add up to the end-to-end time within the remainder it reports, its
 * phases cover the library's call (the unaccounted part inside the library is small), every proof
 * it made was verified, and its JSON carries the date, library version, runtime and machine. Runs
 * the suite in its quick mode (2^8, BN254, 3 samples) in a child process, as a user would.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { ProofAccount } from "../bench/lib/accounting.ts";
import { Library } from "../mod.ts";
import { needs } from "./support/native.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "cuzk-bench-"));
after(() => rmSync(work, { recursive: true, force: true }));

const runtimeName = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const SAMPLES = 3;
const BATCH = 2;

const CORE_PHASES = ["abc", "ntt_h", "msm_a", "msm_b1", "msm_b2", "msm_c", "msm_h"];

test(
  "bench/phases.ts --quick: phases add up, proofs verified, JSON complete",
  needs("cuzk_prove", "cuzk_msm", "cuzk_ntt", "cuzk_synth_circuit_write", "cuzk_setup_insecure_dev"),
  () => {
  const json = join(work, "phases.json");
  const timeline = join(work, "waterfall");
  const runtimeArgs = runtimeName === "deno" ? ["run", "-A"] : [];
  const started = Date.now();
  const r = spawnSync(process.execPath, [
    ...runtimeArgs, join(ROOT, "bench", "phases.ts"), "--quick", "--samples", String(SAMPLES), "--batch", String(BATCH),
    "--json", json, "--timeline", timeline, "--cache", join(work, "cache"),
  ], { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 24 });
  assert.equal(r.status, 0, `suite failed:\n${r.stdout}\n${r.stderr}`);

  const report = JSON.parse(readFileSync(json, "utf8"));
  // Provenance of the figures.
  const date = Date.parse(report.date);
  assert.ok(date >= started - 60_000 && date <= Date.now(), `date ${report.date}`);
  assert.equal(report.library.version, Library.default().info().version);
  assert.ok(report.runtime.startsWith(`${runtimeName} `), `runtime ${report.runtime}`);
  assert.equal(report.machine.cores, cpus().length);
  assert.equal(report.machine.cpu, cpus()[0].model);
  assert.equal(report.machine.loadAverageStart.length, 3);
  assert.equal(report.backend, "cpu");
  assert.equal(report.mitata.mode, "manual");

  // Kernels: one result per kernel; the library's time of a call is within the caller's wall time.
  assert.deepEqual(report.kernels.map((k: { kernel: string }) => k.kernel).sort(), ["msm_g1", "msm_g2", "ntt"]);
  for (const k of report.kernels) {
    assert.ok(k.wallMs.median > 0 && k.libraryMs.median > 0, `${k.kernel}: no time`);
    assert.ok(k.libraryMs.median <= k.wallMs.median + 1e-9, `${k.kernel}: library ${k.libraryMs.median} ms > wall ${k.wallMs.median} ms`);
  }

  assert.deepEqual(report.proves.map((p: { kind: string }) => p.kind), ["prove", "batch"]);
  for (const p of report.proves) {
    const what = `${p.kind} ${p.curve} 2^${p.log}`;
    assert.equal(p.calls.length, SAMPLES, `${what}: calls`);
    assert.equal(p.verified, SAMPLES * p.batch, `${what}: every proof verified`);
    for (const name of CORE_PHASES) assert.ok(p.phasesMs[name]?.median > 0, `${what}: phase ${name} missing`);
    for (const c of p.calls as ProofAccount[]) {
      // The figures add up: phases - overlap + unaccounted = end to end.
      const sum = (Object.values(c.phases) as number[]).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - c.phaseSumMs) < 1e-6, `${what}: phase sum ${sum} vs ${c.phaseSumMs}`);
      assert.ok(Math.abs(c.phaseSumMs - c.overlapMs + c.unaccountedMs - c.endToEndMs) < 1e-6, `${what}: does not add up`);
      assert.ok(c.overlapMs >= -1e-6, `${what}: negative overlap`);
      // The caller waits at least as long as the library works, and the phases cover the library's call.
      assert.ok(c.outsideLibraryMs >= 0, `${what}: library ${c.libraryMs} ms longer than the call ${c.endToEndMs} ms`);
      assert.ok(c.unaccountedInLibraryMs >= -1e-6, `${what}: phases outside the call`);
    }
    // The phases cover the library's call: at most a tenth of it in no phase, in the median call
    // (one call preempted on a busy machine leaves a gap that is not the instrument's).
    const gaps = (p.calls as ProofAccount[]).map((c) => c.unaccountedInLibraryMs / c.libraryMs).sort((a, b) => a - b);
    const medianGap = gaps[Math.floor(gaps.length / 2)];
    assert.ok(medianGap <= 0.1, `${what}: ${(100 * medianGap).toFixed(1)} % of the median call in no phase (${gaps})`);
    assert.ok((p.calls as ProofAccount[]).some((c) => c.endToEndMs === p.medianCall.endToEndMs), `${what}: median call not among the calls`);
    assert.ok(p.timelineFile && existsSync(p.timelineFile), `${what}: no waterfall`);
    const svg = readFileSync(p.timelineFile, "utf8");
    assert.ok(svg.startsWith("<svg") && svg.includes("msm_h"), `${what}: waterfall is not an SVG of the phases`);
  }

  // The printed line for each call adds up too (to the printed precision).
  const lines = [...r.stdout.matchAll(/median call: ([\d.-]+) \(phases\) - ([\d.-]+) \(overlap\) \+ ([\d.-]+) \(unaccounted.*?= ([\d.]+) ms end to end/g)];
  assert.equal(lines.length, 2, r.stdout);
  for (const [, phases, overlap, unaccounted, total] of lines) {
    assert.ok(Math.abs(+phases - +overlap + +unaccounted - +total) < 0.01, `printed: ${phases} - ${overlap} + ${unaccounted} != ${total}`);
  }
  },
);
