/**
 * @module
 * A batch against single proofs on one key (issue 13: "a batch of 4 costs less per proof than one
 * proof alone"): opens one prover (key resident), proves the witness alone RUNS times, then in
 * batches of N copies RUNS times, witnesses in pooled pinned buffers, every proof self-checked (the
 * library's default). Prints the medians, each proof's PARSE and MSM_H spans of the median batch
 * (to show the pipeline's overlap), the time proveBatch held the JS thread (checks, staging), the
 * library's time (end of its last phase), host and staging memory before/after the timed loop (0
 * allocations and 0 pinning inside it after warm-up), and a table last. `--out DIR` writes the
 * proofs of the median batch as DIR/proof_i.json + public_i.json (for `snarkjs groth16 verify`).
 * `--on-demand` opens the key with its point sections left in the file (pointsOnDemand); the memory
 * plan (resident/streamed bytes, points dropped) and the peak host RSS are printed.
 *
 *   deno run -A bench/gpu/batch.ts <circuit.zkey> <witness.wtns> [--n 4] [--runs 5] [--backend cuda] [--out DIR] [--on-demand]
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { BufferPool, Library, Prover } from "../../mod.ts";
import type { BackendName, ProofResult } from "../../mod.ts";

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const flags = new Set(["--on-demand"]);
const [zkey, wtns] = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !(all[i - 1]?.startsWith("--") && !flags.has(all[i - 1])));
const onDemand = process.argv.includes("--on-demand");
if (!zkey || !wtns) {
  console.error("usage: batch.ts <circuit.zkey> <witness.wtns> [--n 4] [--runs 5] [--backend cuda]");
  process.exit(2);
}
const n = Number(option("n", "4"));
const runs = Number(option("runs", "5"));
const backend = option("backend", "cuda") as BackendName;
const outDir = option("out", "");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const bytes = new Uint8Array(readFileSync(wtns));
const opened = performance.now();
using prover = await Prover.open({ zkey, backend, pointsOnDemand: onDemand });
const openMs = performance.now() - opened;
let peakRss = process.memoryUsage().rss;
const sampleRss = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
using pool = new BufferPool();
const leases = Array.from({ length: n }, () => {
  const lease = pool.lease(bytes.byteLength);
  lease.buffer.set(bytes);
  return lease;
});

await prover.prove(leases[0].buffer); // warm-up: kernels, staging, scratch
await prover.proveBatch(leases.map((l) => l.buffer));
const library = Library.default();
const before = { host: library.hostStats(), staging: library.stagingStats(), pool: pool.stats };
// The end of a result's last phase, in ms from the library call's start.
const libraryEnd = (results: ProofResult[]) =>
  Math.max(...results.flatMap((r) => Object.values(r.timings.phases).map((p) => p?.end ?? 0)));
const single: number[] = [];
const singleParse: number[] = [];
for (let r = 0; r < runs; r++) {
  const t0 = performance.now();
  const result = await prover.prove(leases[0].buffer);
  single.push(performance.now() - t0);
  const parse = result.timings.phases.parse;
  if (parse) singleParse.push(parse.end - parse.start);
}
const batch: number[] = [];
const held: number[] = [];
const libraryMs: number[] = [];
let medianRun: ProofResult[] = [];
const batches: Array<{ wall: number; results: ProofResult[] }> = [];
for (let r = 0; r < runs; r++) {
  const t0 = performance.now();
  const pending = prover.proveBatch(leases.map((l) => l.buffer));
  held.push(performance.now() - t0);
  const results = await pending;
  const wall = performance.now() - t0;
  batch.push(wall);
  libraryMs.push(libraryEnd(results));
  batches.push({ wall, results });
}
medianRun = batches.find((b) => b.wall === median(batch))!.results;
const after = { host: library.hostStats(), staging: library.stagingStats(), pool: pool.stats };
clearInterval(sampleRss);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
const plan = prover.memoryPlan();
for (const l of leases) l[Symbol.dispose]();
if (outDir) {
  mkdirSync(outDir, { recursive: true });
  medianRun.forEach((r, i) => {
    writeFileSync(`${outDir}/proof_${i}.json`, JSON.stringify(r.proof, null, 1));
    writeFileSync(`${outDir}/public_${i}.json`, JSON.stringify(r.publicSignals, null, 1));
  });
}

console.log(`per proof of the median batch of ${n} (ms from the call's start):`);
for (const result of medianRun) {
  const { parse, msm_h: msmH } = result.timings.phases;
  console.log(`  proof ${result.timings.proofIndex}: parse ${parse?.start.toFixed(1)}-${parse?.end.toFixed(1)}, msm_h ${msmH?.start.toFixed(1)}-${msmH?.end.toFixed(1)}`);
}
const spans = Object.entries(medianRun[medianRun.length - 1]?.timings.phases ?? {})
  .map(([name, span]) => `${name} ${(span!.end - span!.start).toFixed(1)}`);
console.log(`  phases of the last proof (ms): ${spans.join(", ")}`);
console.log(`batch.ts ${zkey} backend ${backend}, ${runs} runs each (medians)`);
console.log(`  single proof:       ${median(single).toFixed(1)} ms wall (parse ${median(singleParse).toFixed(1)} ms)`);
console.log(`  batch of ${n}:         ${median(batch).toFixed(1)} ms wall = ${(median(batch) / n).toFixed(1)} ms per proof`);
console.log(`  batch / single per proof: ${(median(batch) / n / median(single)).toFixed(3)}`);
const gib = (b: bigint | number) => (Number(b) / 2 ** 30).toFixed(2);
console.log(`  key open + upload ${(openMs / 1000).toFixed(1)} s (${onDemand ? "points on demand" : "key read whole"}); plan: resident ${gib(plan.residentBytes)} GiB + fixed ${gib(plan.fixedBytes)} GiB + stream buffer ${gib(plan.streamBufferBytes)} GiB, streamed ${gib(plan.streamedBytesPerProof)} GiB per proof, ${plan.pointsDropped} points at infinity dropped, key holds ${gib(plan.keyHostBytes)} GiB of host memory; peak host RSS ${gib(peakRss)} GiB`);
console.log(`  batch: JS thread held ${median(held).toFixed(1)} ms (checks, staging); library's last phase ends at ${median(libraryMs).toFixed(1)} ms`);
console.log(`  timed loop: staging allocations ${after.staging.allocations - before.staging.allocations}, pinned ms ${(after.host.totalPinMs - before.host.totalPinMs).toFixed(1)}, live host buffers ${before.host.liveBuffers} -> ${after.host.liveBuffers}, pool allocations ${JSON.stringify(before.pool)} -> ${JSON.stringify(after.pool)}`);
