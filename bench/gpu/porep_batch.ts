/**
 * @module
 * The seed's workload: a batch of N PoRep-profile circuits against one key at sizes
 * whose .zkey would not fit a disk, with an INSECURE development key made in memory
 * (`setupInsecureDevKey`: the points are made on the GPU straight into the prover) and N
 * different witnesses of the one circuit (`synthWitnesses`) in pinned buffers. Steps, each timed:
 * synth (.r1cs on disk), setup (key in memory), prover (points made and uploaded), witnesses,
 * one warm-up proof, then RUNS batches of N, every proof self-checked (the library's default).
 * Prints as it goes (a long run that is stopped still leaves its figures), then the per-circuit
 * phase medians, the batch wall time, peak host RSS and the device's memory in use, and a table
 * last. `--timeline FILE.svg` draws the median batch's waterfall; `--out DIR` writes its proofs and
 * the verification key (for `snarkjs groth16 verify`); `--single` also times RUNS proofs of one
 * witness alone, for the batch / single ratio; `--devices 0,1` divides every batch between those
 * GPUs (ProverSet: a prover per device over the one key; the waterfall in lanes per device; the
 * points of every device are made on GPU 0); `--compare` proves the batch once more with fixed r, s
 * and each witness alone with the same r, s, and fails unless the proofs are equal (the batch's
 * pipelined uploads give each circuit its own witness).
 *
 *   deno run -A bench/gpu/porep_batch.ts --log2 27 [--curve bls12_381] [--n 10] [--runs 2] [--dir /tmp/porep]
 *        [--public 4] [--backend cuda] [--timeline FILE.svg] [--out DIR] [--budget BYTES]
 *        [--h-copies auto|N] [--stream-all] [--stream-per-proof] [--overlap]   (the prover's engine settings)
 *
 * INSECURE: the key is made from toxic waste this process knows; benchmark use only.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import process from "node:process";
import { lanesTimelineSvg, Library, PinnedBuffer, Prover, ProverSet, setupInsecureDevKey, synthWitnessBytes, synthWitnesses, timelineSvg, writeSynthCircuit } from "../../mod.ts";
import type { BackendName, CurveName, DeviceProofResult, PhaseName, ProofResult, Randomness } from "../../mod.ts";
import { mergeBatchTimings } from "../lib/accounting.ts";

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const log2 = Number(option("log2", "20"));
const curve = option("curve", "bls12_381") as CurveName;
const n = Number(option("n", "10"));
const runs = Number(option("runs", "2"));
const dir = option("dir", "/tmp/cuzk-porep");
const publicInputs = Number(option("public", "4"));
const backend = option("backend", "cuda") as BackendName;
const timelineFile = option("timeline", "");
const outDir = option("out", "");
const devices = option("devices", "").split(",").filter(Boolean).map(Number);
const budget = Number(option("budget", "0")); // bytes of the engine's memory (0: automatic)
const single = process.argv.includes("--single");
const hCopiesText = option("h-copies", "auto");
const engine = {
  memoryBudget: budget,
  hCopies: hCopiesText === "auto" ? "auto" as const : Number(hCopiesText),
  streamAll: process.argv.includes("--stream-all"),
  streamPerProof: process.argv.includes("--stream-per-proof"),
  overlap: process.argv.includes("--overlap"),
};
const compare = process.argv.includes("--compare");
// The domain is 2^log2: the constraints plus the public inputs' rows (n_public + 1) fit in it.
const constraints = 2 ** log2 - 16;
const circuit = { curve, profile: "porep" as const, constraints, publicInputs, seed: 1 };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const gib = (b: number | bigint) => (Number(b) / 2 ** 30).toFixed(2);
const s = (ms: number) => (ms / 1000).toFixed(1);
const log = (line: string) => console.log(`[${s(performance.now())} s] ${line}`);

let peakRss = process.memoryUsage().rss;
const sampleRss = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
const library = Library.default();
const deviceUsed = () => {
  const d = library.info().cudaDeviceCount > 0 ? library.device(0) : undefined;
  return d ? d.totalMemory - d.freeMemory : 0;
};
let peakDevice = deviceUsed();

mkdirSync(dir, { recursive: true });
const r1cs = `${dir}/porep-${curve}-2^${log2}.r1cs`, wtns = `${dir}/porep-${curve}-2^${log2}.wtns`;
let t = performance.now();
await writeSynthCircuit(circuit, { r1cs, wtns });
rmSync(wtns); // the witnesses come from synthWitnesses
const synthMs = performance.now() - t;
log(`synth: ${constraints} constraints, ${curve}, .r1cs written in ${s(synthMs)} s`);

t = performance.now();
const made = await setupInsecureDevKey(r1cs);
const setupMs = performance.now() - t;
rmSync(r1cs); // the key holds what it needs
log(`setup (INSECURE, key in memory): ${s(setupMs)} s (scalars ${s(made.scalarsMs)} s); the key holds ${gib(made.zkeyBytes)} GiB`);

using key = made.key;
t = performance.now();
// One prover, or (--devices) one per device behind a ProverSet: the same calls either way.
using prover = devices.length > 0
  ? await ProverSet.open({ zkey: key, devices, backend, ...engine })
  : await Prover.open({ zkey: key, backend, ...engine });
const proverMs = performance.now() - t;
peakDevice = Math.max(peakDevice, deviceUsed());
const plan = prover instanceof ProverSet ? prover.memoryPlans()[0] : prover.memoryPlan();
// A section the plan streams is made again for every read from a key made in memory (seconds at
// 2^27); a batch reads it once per group of proofs (as many as the device keeps scalars for), a
// proof alone once per proof: no single proofs then, so that the call still ends with figures.
const streamed = plan.streamedBytesPerProof > 0n;
if (streamed) log(`the plan streams ${gib(plan.streamedBytesPerProof)} GiB per read, ${engine.streamPerProof ? "once per proof (--stream-per-proof)" : "once per group of proofs"}; with a key made in memory those points are made again for every read`);
const runsDone = runs;
const proveOne = (w: PinnedBuffer, randomness?: Randomness) => prover.proveBatch([w], randomness ? { randomness: [randomness] } : {}).then(([r]) => r);
log(`prover: ${s(proverMs)} s (points made on the GPU and uploaded); plan: resident ${gib(plan.residentBytes)} GiB + fixed ${gib(plan.fixedBytes)} GiB, streamed ${gib(plan.streamedBytesPerProof)} GiB per read, overlap ${gib(plan.overlapBytes)} GiB, ${plan.hCopies} H copies (${gib(plan.hCopiesBytes)} GiB), ${plan.pointsDropped} points at infinity dropped; placements ${Object.entries(plan.sections).map(([name, x]) => `${name} ${x.placement}`).join(", ")}`);

const bytes = synthWitnessBytes(circuit);
t = performance.now();
const buffers = Array.from({ length: n }, () => PinnedBuffer.alloc(bytes));
const pinMs = performance.now() - t;
t = performance.now();
await synthWitnesses(circuit, buffers.map((_, i) => i + 1), buffers);
const witnessMs = performance.now() - t;
log(`witnesses: ${n} x ${gib(bytes)} GiB pinned in ${s(pinMs)} s, made in ${s(witnessMs)} s`);

try {
  t = performance.now();
  // Warm-up: kernels, staging, scratch on every device, and (two proofs a device) the second witness
  // buffer the batch uploads the next witness into: nothing is allocated inside the timed batches.
  await prover.proveBatch(buffers.slice(0, Math.min(n, 2 * Math.max(1, devices.length))));
  const warmMs = performance.now() - t;
  peakDevice = Math.max(peakDevice, deviceUsed());
  log(`warm-up proof: ${warmMs.toFixed(1)} ms`);

  if (compare) {
    const randomness = buffers.map((_, i) => ({ r: 1000n + BigInt(i), s: 2000n + BigInt(i) }));
    const batched = await prover.proveBatch(buffers, { randomness });
    let same = 0;
    for (const [i, b] of buffers.entries()) {
      const alone = await proveOne(b, randomness[i]);
      if (JSON.stringify(alone.proof) === JSON.stringify(batched[i].proof)) same++;
    }
    log(`compare: ${same} of ${n} batch proofs equal to the same witness proved alone with the same r, s`);
    if (same !== n) throw new Error(`${n - same} batch proofs differ from the single proofs`);
  }
  const singles: number[] = [];
  for (let r = 0; single && !streamed && r < runs; r++) {
    t = performance.now();
    await proveOne(buffers[r % n]);
    singles.push(performance.now() - t);
  }
  if (single) log(`single proofs: ${singles.map((x) => x.toFixed(1)).join(", ")} ms`);

  // The pinned pool across the timed batches: no pinning, no staging allocation after the warm-up.
  const before = { host: library.hostStats(), staging: library.stagingStats() };
  const batches: Array<{ wall: number; results: ProofResult[] }> = [];
  for (let r = 0; r < runsDone; r++) {
    t = performance.now();
    const results = await prover.proveBatch(buffers);
    const wall = performance.now() - t;
    peakDevice = Math.max(peakDevice, deviceUsed());
    batches.push({ wall, results });
    log(`batch ${r + 1} of ${runsDone}: ${wall.toFixed(1)} ms = ${(wall / n).toFixed(1)} ms per circuit, ${results.length} proofs self-checked`);
  }
  const after = { host: library.hostStats(), staging: library.stagingStats() };
  const pinned = `staging allocations ${after.staging.allocations - before.staging.allocations}, pinning ${(after.host.totalPinMs - before.host.totalPinMs).toFixed(1)} ms, live host buffers ${before.host.liveBuffers} -> ${after.host.liveBuffers}`;
  log(`timed batches: ${pinned}`);
  clearInterval(sampleRss);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  const walls = batches.map((b) => b.wall);
  const medianBatch = batches.find((b) => b.wall === median(walls))!;

  // Per-circuit phase medians over the runs (each circuit's own spans), and the circuits' GPU
  // cadence: where each one's last MSM ended in the median batch.
  const phaseNames = [...new Set(batches.flatMap((b) => b.results.flatMap((r) => Object.keys(r.timings.phases))))] as PhaseName[];
  console.log(`\nper-circuit phase medians over ${runsDone} batches (ms):`);
  console.log(`  circuit ${phaseNames.map((p) => p.padStart(12)).join("")}`);
  for (let i = 0; i < n; i++) {
    const cells = phaseNames.map((p) => {
      const xs = batches.map((b) => b.results[i].timings.phases[p]).filter((x) => x).map((x) => x!.end - x!.start);
      return (xs.length ? median(xs).toFixed(1) : "-").padStart(12);
    });
    console.log(`  ${String(i).padStart(7)} ${cells.join("")}`);
  }
  const ends = medianBatch.results.map((r) => Math.max(...Object.values(r.timings.phases).map((x) => x?.end ?? 0)));
  const gaps = ends.slice(1).map((e, i) => e - ends[i]);
  console.log(`  median batch: circuits end at ${ends.map((e) => e.toFixed(0)).join(", ")} ms; a circuit every ${median(gaps).toFixed(1)} ms (median gap)`);

  if (timelineFile) {
    const title = `cuzk batch of ${n} PoRep-profile circuits, ${curve} 2^${log2}, ${backend}${devices.length ? ` on devices ${devices.join(",")}` : ""}: ${medianBatch.wall.toFixed(0)} ms (median of ${runsDone})`;
    writeFileSync(timelineFile, devices.length
      ? lanesTimelineSvg(medianBatch.results as DeviceProofResult[], { title, width: 900 })
      : timelineSvg(mergeBatchTimings(medianBatch.results.map((r) => r.timings)), { title, width: 900 }));
  }
  if (devices.length) {
    const byDevice = devices.map((d) => medianBatch.results.filter((r) => (r as DeviceProofResult).device === d).length);
    console.log(`  median batch: circuits per device ${devices.map((d, i) => `${d}: ${byDevice[i]}`).join(", ")}`);
  }
  if (outDir) {
    mkdirSync(outDir, { recursive: true });
    medianBatch.results.forEach((r, i) => {
      writeFileSync(`${outDir}/proof_${i}.json`, JSON.stringify(r.proof, null, 1));
      writeFileSync(`${outDir}/public_${i}.json`, JSON.stringify(r.publicSignals, null, 1));
    });
    writeFileSync(`${outDir}/verification_key.json`, JSON.stringify(made.verificationKey, null, 1));
  }

  const device = library.info().cudaDeviceCount > 0 ? library.device(0) : undefined;
  console.log(`\nporep_batch.ts: ${n} circuits, ${curve} 2^${log2} PoRep profile (${constraints} constraints), ${backend}${device ? ` on ${device.name}` : ""}`);
  console.log(`| step | figure |`);
  console.log(`|---|---|`);
  console.log(`| synth (.r1cs) | ${s(synthMs)} s |`);
  console.log(`| setup, key in memory (INSECURE) | ${s(setupMs)} s |`);
  console.log(`| prover: points made + uploaded | ${s(proverMs)} s |`);
  console.log(`| ${n} witnesses (${gib(bytes)} GiB each, pinned) | ${s(witnessMs)} s |`);
  console.log(`| batch of ${n}, wall (median of ${runsDone}) | ${median(walls).toFixed(1)} ms |`);
  console.log(`| per circuit | **${(median(walls) / n).toFixed(1)} ms** |`);
  if (single && singles.length) console.log(`| one proof alone (median of ${runs}); batch / single per proof | ${median(singles).toFixed(1)} ms; ${(median(walls) / n / median(singles)).toFixed(3)} |`);
  console.log(`| peak device memory in use (cuzk_device_info, sampled) | ${gib(peakDevice)} GiB |`);
  console.log(`| peak host RSS (sampled) | ${gib(peakRss)} GiB |`);
  console.log(`| pinned pool in the timed batches | ${pinned} |`);
  console.log(`| key: resident / fixed / streamed per read | ${gib(plan.residentBytes)} / ${gib(plan.fixedBytes)} / ${gib(plan.streamedBytesPerProof)} GiB${streamed ? (engine.streamPerProof ? ", read per proof" : ", read once per group") : ""} |`);
} finally {
  clearInterval(sampleRss);
  for (const b of buffers) b.free();
}
