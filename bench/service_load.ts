/**
 * @module
 * Load on the proving service (service/): starts it on loopback (or uses `--url`), then for each
 * concurrency level runs that many closed-loop clients (submit a .wtns, long-poll until done, fetch
 * the result) for a fixed time, and reports jobs per second and end-to-end latency percentiles.
 * Meanwhile a separate process probes /healthz every 5 ms, so its latencies are the server's and
 * not this process's event loop. Every 10th proof is checked with the module's verifier. Not a
 * test: it prints figures (a Markdown table, and JSON with --json).
 *
 *   bun bench/service_load.ts [--key bn254/mulchain_8] [--levels 1,4,16,64] [--seconds 10]
 *                             [--batch-size 8] [--batch-wait-ms 0] [--url http://...] [--json out.json]
 *
 * Runs under Bun, Deno (-A) or Node >= 24; the service itself always runs on Bun.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { verify } from "../mod.ts";
import type { Groth16Proof, VerificationKeyJson } from "../mod.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const args = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};

// --- /healthz prober (a child process of this script) -----------------------------------------
if (args[0] === "--probe-health") {
  const url = args[1];
  const samples: number[] = [];
  let stop = false;
  process.on("SIGTERM", () => (stop = true));
  while (!stop) {
    const started = performance.now();
    const response = await fetch(url);
    await response.arrayBuffer();
    samples.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 5));
  }
  console.log(JSON.stringify(samples));
  process.exit(0);
}

const keyName = opt("--key", "bn254/mulchain_8");
const levels = opt("--levels", "1,4,16,64").split(",").map(Number);
const seconds = Number(opt("--seconds", "10"));
const batchSize = opt("--batch-size", "8");
const batchWaitMs = opt("--batch-wait-ms", "0");
const jsonOut = args.includes("--json") ? opt("--json", "") : undefined;
const fixtureDir = join(ROOT, "tests/fixtures", keyName);
const keyId = keyName.replaceAll("/", ".");
const wtns = new Uint8Array(readFileSync(join(fixtureDir, "witness.wtns")));
const vkey = JSON.parse(readFileSync(join(fixtureDir, "verification_key.json"), "utf8")) as VerificationKeyJson;

/** The command line of this runtime, to start the prober with. */
function selfCommand(): string[] {
  const script = fileURLToPath(import.meta.url);
  if ("Deno" in globalThis) return [process.execPath, "run", "-A", script];
  return [process.execPath, script];
}

async function startService(): Promise<{ url: string; child?: ChildProcess }> {
  const given = opt("--url", "");
  if (given) return { url: given };
  const child = spawn(
    join(ROOT, "node_modules/.bin/bun"),
    ["service/main.ts", "--host", "127.0.0.1", "--port", "0", "--keys-dir", join(ROOT, "tests/fixtures"), "--preload", keyName, "--batch-size", batchSize, "--batch-wait-ms", batchWaitMs, "--queue-size", "4096"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"], env: process.env },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout!.on("data", (chunk: Uint8Array) => {
      text += new TextDecoder().decode(chunk);
      for (const line of text.split("\n")) {
        try {
          const event = JSON.parse(line);
          if (event.event === "listening") resolve(event.url);
        } catch {
          // partial line
        }
      }
    });
    child.on("exit", (code) => reject(new Error(`the service exited (${code})`)));
  });
  for (;;) {
    const ready = await fetch(`${url}/readyz`).then((r) => r.status, () => 0);
    if (ready === 200) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, child };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

interface LevelResult {
  concurrency: number;
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  meanBatch: number;
  healthMs: { samples: number; p50: number; p99: number; max: number };
  loadAverage: [number, number, number];
  verified: number;
}

async function runLevel(url: string, concurrency: number): Promise<LevelResult> {
  const [command, ...rest] = selfCommand();
  const prober = spawn(command, [...rest, "--probe-health", `${url}/healthz`], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  let probeOut = "";
  prober.stdout!.on("data", (chunk: Uint8Array) => (probeOut += new TextDecoder().decode(chunk)));
  const proberDone = new Promise<void>((resolve) => prober.on("close", () => resolve()));

  const latencies: number[] = [];
  const batches: number[] = [];
  const toVerify: Array<{ proof: Groth16Proof; publicSignals: string[] }> = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const submitted = await fetch(`${url}/v1/jobs?key=${keyId}`, { method: "POST", body: wtns, headers: { "content-type": "application/octet-stream" } });
      const job = await submitted.json();
      if (submitted.status !== 202) throw new Error(`submit: ${submitted.status} ${JSON.stringify(job)}`);
      let state = job;
      while (!["succeeded", "failed", "cancelled"].includes(state.state)) state = await (await fetch(`${url}/v1/jobs/${job.id}/wait?timeout_s=30`)).json();
      if (state.state !== "succeeded") throw new Error(`job ${job.id}: ${JSON.stringify(state)}`);
      const result = await (await fetch(`${url}/v1/jobs/${job.id}/result`)).json();
      latencies.push(performance.now() - t0);
      batches.push(state.timings.batchSize);
      if (latencies.length % 10 === 1) toVerify.push(result);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  const load = loadavg() as [number, number, number];
  prober.kill("SIGTERM");
  await proberDone;
  const health = (JSON.parse(probeOut.trim() || "[]") as number[]).sort((a, b) => a - b);
  let verified = 0;
  for (const { proof, publicSignals } of toVerify) {
    if (!(await verify(vkey, publicSignals, proof))) throw new Error("a proof from the service does not verify");
    verified++;
  }
  latencies.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    concurrency,
    jobs: latencies.length,
    seconds: round(elapsed),
    jobsPerSecond: round(latencies.length / elapsed),
    latencyMs: { p50: round(percentile(latencies, 50)), p90: round(percentile(latencies, 90)), p99: round(percentile(latencies, 99)), max: round(latencies[latencies.length - 1]) },
    meanBatch: round(batches.reduce((a, b) => a + b, 0) / batches.length),
    healthMs: { samples: health.length, p50: round(percentile(health, 50)), p99: round(percentile(health, 99)), max: round(health[health.length - 1]) },
    loadAverage: load.map(round) as [number, number, number],
    verified,
  };
}

const { url, child } = await startService();
const machine = {
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  date: new Date().toISOString(),
  runtime: "Bun" in globalThis ? `bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}` : "Deno" in globalThis ? "deno" : `node ${process.versions.node}`,
  loadAverageBefore: loadavg().map((x) => Math.round(x * 100) / 100),
};
const ready = await (await fetch(`${url}/readyz`)).json();
console.log(`service at ${url}: key ${keyName}, backend ${ready.backend}, ${ready.cpuThreads} CPU threads, batch size ${batchSize}, batch wait ${batchWaitMs} ms; ${seconds} s per level`);
console.log(`${machine.cpu}, ${machine.cores} cores, ${machine.date}, load average before: ${machine.loadAverageBefore.join(" ")}`);
// Warm-up: the first calls of a batch size allocate the prover's workspace.
for (let i = 0; i < 3; i++) {
  const job = await (await fetch(`${url}/v1/jobs?key=${keyId}`, { method: "POST", body: wtns, headers: { "content-type": "application/octet-stream" } })).json();
  await fetch(`${url}/v1/jobs/${job.id}/wait?timeout_s=30`);
}

const results: LevelResult[] = [];
console.log("\n| clients | jobs | jobs/s | p50 ms | p90 ms | p99 ms | mean batch | /healthz p50 / p99 / max ms (n) | load avg (1 min) |");
console.log("|---|---|---|---|---|---|---|---|---|");
for (const level of levels) {
  const r = await runLevel(url, level);
  results.push(r);
  console.log(`| ${r.concurrency} | ${r.jobs} | ${r.jobsPerSecond} | ${r.latencyMs.p50} | ${r.latencyMs.p90} | ${r.latencyMs.p99} | ${r.meanBatch} | ${r.healthMs.p50} / ${r.healthMs.p99} / ${r.healthMs.max} (${r.healthMs.samples}) | ${r.loadAverage[0]} |`);
}
const metrics = await (await fetch(`${url}/metrics`)).text();
const fallbacks = /^cuzk_batch_fallbacks_total (\d+)$/m.exec(metrics)?.[1] ?? "0";
console.log(`\nbatch fallbacks: ${fallbacks}; proofs checked with the module's verifier: ${results.reduce((n, r) => n + r.verified, 0)}`);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ machine, key: keyName, batchSize: Number(batchSize), batchWaitMs: Number(batchWaitMs), seconds, results }, null, 2) + "\n");
if (child) {
  child.kill("SIGTERM");
  await new Promise((resolve) => child.on("close", resolve));
}
process.exit(0);
