/**
 * @module
 * The seed's workload under memory budgets: one PoRep-profile key made in memory (INSECURE
 * development setup) and N witnesses, then for each budget of `--budgets` a prover made with it
 * (the plan chooses the chunks and which sections stream), a warm-up batch, RUNS timed batches of
 * N and one batch with fixed r, s whose proofs must equal the first budget's byte for byte (every
 * proof also self-checked by the library). Prints each prover's plan, the peak device memory
 * (cuzk_device_info, sampled), the peak host RSS and the per-circuit time, and a table last with
 * each budget's time against the first's.
 *
 *   deno run -A bench/gpu/porep_budgets.ts --log2 26 [--curve bls12_381] [--n 10] [--runs 2]
 *        [--budgets 0,48GiB,32GiB,24GiB] [--host-budget BYTES] [--dir /tmp/porep] [--timeline DIR]
 *        [--backend cuda|cpu]   (cpu: a dry run of the script on a machine without a GPU)
 *
 * A budget is bytes with an optional KiB/MiB/GiB suffix, 0 the device's free memory, and may carry
 * engine settings after colons: `:h0` (hCopies 0), `:c22` (chunkPoints 2^22), `:overlap` (proofs
 * overlapped where the room allows), e.g. `0:c22` or `0:overlap`. Each variant also prints how long, per circuit, one
 * proof's NTTs ran while another proof's MSMs did (the proofs' overlap), and with `--timeline DIR`
 * writes the waterfall of its last timed batch to DIR/<variant>.svg.
 * INSECURE: the key is made from toxic waste this process knows; benchmark use only.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import process from "node:process";
import { Library, PinnedBuffer, Prover, setupInsecureDevKey, synthWitnessBytes, synthWitnesses, timelineSvg, writeSynthCircuit } from "../../mod.ts";
import type { CurveName, MemoryPlan, ProofResult } from "../../mod.ts";
import { mergeBatchTimings } from "../lib/accounting.ts";

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
function bytesOf(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(KiB|MiB|GiB|TiB)?$/.exec(text.trim());
  if (!m) throw new Error(`not a size: ${text}`);
  const unit = { KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40 }[m[2] ?? ""] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

const log2 = Number(option("log2", "22"));
const curve = option("curve", "bls12_381") as CurveName;
const n = Number(option("n", "10"));
const runs = Number(option("runs", "2"));
const dir = option("dir", "/tmp/cuzk-porep");
// One prover per variant: a budget and its optional settings.
const variants = option("budgets", "0").split(",").map((text) => {
  const [size, ...settings] = text.split(":");
  const v = { text, budget: bytesOf(size), hCopies: "auto" as "auto" | number, chunkPoints: 0, overlap: false };
  for (const x of settings) {
    if (x === "overlap") v.overlap = true;
    else if (/^h\d+$/.test(x)) v.hCopies = Number(x.slice(1));
    else if (/^c\d+$/.test(x)) v.chunkPoints = 2 ** Number(x.slice(1));
    else throw new Error(`unknown setting ${x} in ${text}`);
  }
  return v;
});
const hostBudget = bytesOf(option("host-budget", "0"));
const timelineDir = option("timeline", "");
const backend = option("backend", "cuda") as "cuda" | "cpu";
const constraints = 2 ** log2 - 16;
const circuit = { curve, profile: "porep" as const, constraints, publicInputs: 4, seed: 1 };
const gib = (b: number | bigint) => (Number(b) / 2 ** 30).toFixed(2);
/** " (points pinned: A C H; B2 from the key)": which streamed sections are pinned on the host. */
function pinnedText(p: MemoryPlan): string {
  const streamed = Object.entries(p.sections).filter(([, s]) => s.placement === "streamed");
  if (streamed.length === 0) return "";
  const pinned = streamed.filter(([, s]) => s.pinned).map(([n]) => n);
  const fromKey = streamed.filter(([, s]) => !s.pinned).map(([n]) => n);
  return ` (points pinned: ${pinned.join(" ") || "none"}${fromKey.length ? `; ${fromKey.join(" ")} from the key` : ""})`;
}
const s = (ms: number) => (ms / 1000).toFixed(1);
const log = (line: string) => console.log(`[${s(performance.now())} s] ${line}`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// The length covered by a set of [start, end] intervals.
function unionLength(list: Array<[number, number]>): number {
  const sorted = [...list].sort((a, b) => a[0] - b[0]);
  let total = 0, from = -Infinity, to = -Infinity;
  for (const [a, b] of sorted) {
    if (a > to) {
      if (to > from) total += to - from;
      from = a;
      to = b;
    } else to = Math.max(to, b);
  }
  return to > from ? total + to - from : total;
}
// The disjoint, sorted union of a set of intervals.
function union(list: Array<[number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const [a, b] of [...list].sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}
// The length of time covered by both sets of intervals.
function bothLength(x: Array<[number, number]>, y: Array<[number, number]>): number {
  const a = union(x), b = union(y);
  let total = 0;
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    total += Math.max(0, Math.min(a[i][1], b[j][1]) - Math.max(a[i][0], b[j][0]));
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return total;
}
// Per circuit, how long one proof's NTTs ran while another proof's MSMs did.
function proofsOverlap(results: ProofResult[]): number {
  let total = 0;
  results.forEach((res, p) => {
    const ntt = res.timings.phases.ntt_h;
    if (!ntt) return;
    const msms: Array<[number, number]> = [];
    results.forEach((other, q) => {
      if (q === p) return;
      for (const [name, x] of Object.entries(other.timings.phases)) if (x && name.startsWith("msm_")) msms.push([x.start, x.end]);
    });
    total += bothLength([[ntt.start, ntt.end]], msms);
  });
  return total / results.length;
}

const library = Library.default();
const deviceUsed = () => {
  const d = library.info().cudaDeviceCount > 0 ? library.device(0) : undefined;
  return d ? d.totalMemory - d.freeMemory : 0;
};

mkdirSync(dir, { recursive: true });
const r1cs = `${dir}/porep-${curve}-2^${log2}.r1cs`, wtns = `${dir}/porep-${curve}-2^${log2}.wtns`;
let t = performance.now();
await writeSynthCircuit(circuit, { r1cs, wtns });
rmSync(wtns);
log(`synth: ${constraints} constraints, ${curve}, in ${s(performance.now() - t)} s`);
t = performance.now();
const made = await setupInsecureDevKey(r1cs);
rmSync(r1cs);
log(`setup (INSECURE, key in memory): ${s(performance.now() - t)} s; the key holds ${gib(made.zkeyBytes)} GiB`);
using key = made.key;

const buffers = Array.from({ length: n }, () => PinnedBuffer.alloc(synthWitnessBytes(circuit)));
t = performance.now();
await synthWitnesses(circuit, buffers.map((_, i) => i + 1), buffers);
log(`witnesses: ${n} made in ${s(performance.now() - t)} s`);
const randomness = buffers.map((_, i) => ({ r: 1000n + BigInt(i), s: 2000n + BigInt(i) }));

const planText = (p: MemoryPlan) =>
  `total ${gib(p.totalBytes)} of ${gib(p.budget)} GiB (min ${gib(p.minBudget)}; fixed ${gib(p.fixedBytes)}, rows ${gib(p.rowsBytes)}, ` +
  `MSM ${gib(p.msmWorkspaceBytes)} at chunk 2^${Math.log2(Number(p.msmChunkPoints))} in ${p.msmWindowGroups} window groups` +
  `${p.hChunkPoints !== p.msmChunkPoints ? ` (H 2^${Math.log2(Number(p.hChunkPoints))} in ${p.hWindowGroups})` : ""}, resident ${gib(p.residentBytes)}, ` +
  `stream buffers ${gib(p.streamBufferBytes)}, ${p.nttVectors} vectors ${gib(BigInt(p.nttVectors) * p.vectorBytes)}` +
  `${p.phasesShared ? `, less ${gib(p.sharedBytes)} shared by the proof and stream phases` : ""}` +
  `${p.overlapBytes > 0n ? `, overlap ${gib(p.overlapBytes)}` : ""}${p.hCopies ? `, ${p.hCopies} H copies ${gib(p.hCopiesBytes)}` : ""}); host ${gib(p.hostBytes)} GiB${pinnedText(p)}; ` +
  `groups of up to ${p.groupMax}; ${Object.entries(p.sections).map(([name, x]) => `${name} ${x.placement}`).join(", ")}`;

const rows: Array<{ label: string; perCircuit: number; peak: number; rss: number; plan: MemoryPlan; same: boolean; overlap: number }> = [];
let reference: string[] | undefined;
for (const v of variants) {
  const label = v.text;
  try {
    t = performance.now();
    const idle = deviceUsed();
    using prover = await Prover.open({
      zkey: key, backend, memoryBudget: v.budget, hostMemoryBudget: hostBudget, hCopies: v.hCopies, chunkPoints: v.chunkPoints,
      overlap: v.overlap,
    });
    const plan = prover.memoryPlan();
    log(`${label}: prover made in ${s(performance.now() - t)} s; plan: ${planText(plan)}`);
    let peak = deviceUsed() - idle;
    // The process's resident host memory at its highest while this variant proves (the key, the
    // witnesses, and what the prover holds: pinned points, kept H scalars).
    let rss = process.memoryUsage.rss();
    const sample = setInterval(() => {
      peak = Math.max(peak, deviceUsed() - idle);
      rss = Math.max(rss, process.memoryUsage.rss());
    }, 50);
    await prover.proveBatch(buffers.slice(0, Math.min(n, 2)));
    const fixed = await prover.proveBatch(buffers, { randomness });
    const proofs = fixed.map((r) => JSON.stringify(r.proof));
    reference ??= proofs;
    const same = proofs.every((p, i) => p === reference![i]);
    const walls: number[] = [];
    const phases = new Map<string, number[]>();
    // Per phase, the batch's time with it under way (the union of its proofs' intervals) over n: a
    // proof's interval of a phase runs from its first run to its last, so in a group that shares
    // streamed reads it spans the whole group's pass, and batch_add (each MSM's ones) spans from
    // A's ones to B2's: the A/C and B passes, not time of its own.
    const shares = new Map<string, number[]>();
    const overlaps: number[] = [];
    let last: ProofResult[] = [];
    for (let r = 0; r < runs; r++) {
      t = performance.now();
      const results = await prover.proveBatch(buffers);
      walls.push(performance.now() - t);
      overlaps.push(proofsOverlap(results));
      last = results;
      const intervals = new Map<string, Array<[number, number]>>();
      for (const res of results) {
        for (const [name, x] of Object.entries(res.timings.phases)) {
          if (!x) continue;
          phases.set(name, [...(phases.get(name) ?? []), x.end - x.start]);
          intervals.set(name, [...(intervals.get(name) ?? []), [x.start, x.end]]);
        }
      }
      for (const [name, list] of intervals) shares.set(name, [...(shares.get(name) ?? []), unionLength(list) / n]);
    }
    clearInterval(sample);
    if (timelineDir) {
      mkdirSync(timelineDir, { recursive: true });
      const title = `cuzk batch of ${n} PoRep-profile circuits, ${curve} 2^${log2}, budget ${label}: ${walls[walls.length - 1].toFixed(0)} ms`;
      writeFileSync(`${timelineDir}/${label.replace(/[^A-Za-z0-9_-]/g, "_")}.svg`, timelineSvg(mergeBatchTimings(last.map((r) => r.timings)), { title, width: 900 }));
    }
    const perCircuit = median(walls) / n;
    rows.push({ label, perCircuit, peak, rss, plan, same, overlap: median(overlaps) });
    log(`${label}: phase medians per circuit (ms): ${[...phases].map(([name, xs]) => `${name} ${median(xs).toFixed(1)}`).join(", ")}`);
    log(`${label}: batch time under way per circuit (ms): ${[...shares].map(([name, xs]) => `${name} ${median(xs).toFixed(1)}`).join(", ")}`);
    log(`${label}: one proof's NTTs beside another's MSMs: ${median(overlaps).toFixed(1)} ms per circuit (median of ${runs})`);
    log(`${label}: batches ${walls.map((w) => w.toFixed(0)).join(", ")} ms = ${perCircuit.toFixed(1)} ms per circuit; peak device ${gib(peak)} GiB above idle; peak host RSS ${gib(rss)} GiB; proofs ${same ? "equal to the first budget's" : "DIFFER from the first budget's"}`);
  } catch (e) {
    log(`${label}: ${(e as Error).message}`);
  }
}

const device = library.info().cudaDeviceCount > 0 ? library.device(0).name : "no GPU";
console.log(`\nporep_budgets.ts: ${n} circuits, ${curve} 2^${log2} PoRep profile, on ${device}`);
console.log(`| variant | plan total (min) | chunk | streamed sections | peak device | peak host RSS | per circuit | vs first | NTTs beside MSMs | proofs |`);
console.log(`|---|---|---|---|---|---|---|---|---|---|`);
for (const r of rows) {
  const streamed = Object.entries(r.plan.sections).filter(([, x]) => x.placement === "streamed").map(([name]) => name).join(" ") || "-";
  console.log(`| ${r.label} | ${gib(r.plan.totalBytes)} (${gib(r.plan.minBudget)}) GiB | 2^${Math.log2(Number(r.plan.msmChunkPoints))}${r.plan.hChunkPoints !== r.plan.msmChunkPoints ? ` (H 2^${Math.log2(Number(r.plan.hChunkPoints))})` : ""} | ${streamed} | ${gib(r.peak)} GiB | ${gib(r.rss)} GiB | ${r.perCircuit.toFixed(1)} ms | ${(r.perCircuit / rows[0].perCircuit).toFixed(2)}x | ${r.overlap.toFixed(1)} ms | ${r.same ? "same" : "DIFFER"} |`);
}
if (rows.some((r) => !r.same) || rows.length < variants.length) process.exitCode = 1;
