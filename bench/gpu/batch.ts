/**
 * @module
 * A batch against single proofs on one key (issue 13: "a batch of 4 costs less per proof than one
 * proof alone"): opens one prover (key resident), proves the witness alone RUNS times, then in
 * batches of N copies RUNS times, witnesses in pooled pinned buffers, every proof self-checked (the
 * library's default). Prints the medians, each proof's PARSE and MSM_H spans of the median batch
 * (to show the pipeline's overlap), and a table last.
 *
 *   deno run -A bench/gpu/batch.ts <circuit.zkey> <witness.wtns> [--n 4] [--runs 5] [--backend cuda]
 */
import { readFileSync } from "node:fs";
import process from "node:process";
import { BufferPool, Prover } from "../../mod.ts";
import type { BackendName, ProofResult } from "../../mod.ts";

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const [zkey, wtns] = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--"));
if (!zkey || !wtns) {
  console.error("usage: batch.ts <circuit.zkey> <witness.wtns> [--n 4] [--runs 5] [--backend cuda]");
  process.exit(2);
}
const n = Number(option("n", "4"));
const runs = Number(option("runs", "5"));
const backend = option("backend", "cuda") as BackendName;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const bytes = new Uint8Array(readFileSync(wtns));
using prover = await Prover.open({ zkey, backend });
using pool = new BufferPool();
const leases = Array.from({ length: n }, () => {
  const lease = pool.lease(bytes.byteLength);
  lease.buffer.set(bytes);
  return lease;
});

await prover.prove(leases[0].buffer); // warm-up: kernels, staging, scratch
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
let medianRun: ProofResult[] = [];
const batches: Array<{ wall: number; results: ProofResult[] }> = [];
for (let r = 0; r < runs; r++) {
  const t0 = performance.now();
  const results = await prover.proveBatch(leases.map((l) => l.buffer));
  const wall = performance.now() - t0;
  batch.push(wall);
  batches.push({ wall, results });
}
medianRun = batches.find((b) => b.wall === median(batch))!.results;
for (const l of leases) l[Symbol.dispose]();

console.log(`per proof of the median batch of ${n} (ms from the call's start):`);
for (const result of medianRun) {
  const { parse, msm_h: msmH } = result.timings.phases;
  console.log(`  proof ${result.timings.proofIndex}: parse ${parse?.start.toFixed(1)}-${parse?.end.toFixed(1)}, msm_h ${msmH?.start.toFixed(1)}-${msmH?.end.toFixed(1)}`);
}
console.log(`batch.ts ${zkey} backend ${backend}, ${runs} runs each (medians)`);
console.log(`  single proof:       ${median(single).toFixed(1)} ms wall (parse ${median(singleParse).toFixed(1)} ms)`);
console.log(`  batch of ${n}:         ${median(batch).toFixed(1)} ms wall = ${(median(batch) / n).toFixed(1)} ms per proof`);
console.log(`  batch / single per proof: ${(median(batch) / n / median(single)).toFixed(3)}`);
