/**
 * @module
 * The proving service on PostgreSQL under load: a private PostgreSQL server
 * (tests/support/postgres.ts, or --database-url), one API process and 1, 2, 3 ... worker processes
 * on this machine. For each worker count, `--clients` closed-loop clients (submit the fixture's
 * .wtns, long-poll until final, fetch the result) run for `--seconds`: jobs per second; the same
 * against the in-process service (no database) for reference. Then the database's cost per job at
 * low load: one client, one job at a time, submit to result received, in-process and with the API
 * and one worker; median and p99 of each and the difference. Every 10th proof is checked with the
 * module's verifier. With --witness-dir, the same low-load run once more with every witness sent
 * through that directory (the row limit lowered to 1 KiB): what a witness file costs a job. Not a
 * test: it prints a Markdown table (and JSON with --json).
 *
 *   bun bench/cluster_load.ts [--key bn254/mulchain_8] [--workers 1,2,3] [--clients 16] [--seconds 10]
 *                             [--latency-jobs 200] [--batch-size 8] [--database-url URL] [--witness-dir DIR] [--json out.json]
 *
 * Runs under Bun, Deno (-A) or Node >= 24; the service processes run on Bun.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { verify } from "../mod.ts";
import type { Groth16Proof, VerificationKeyJson } from "../mod.ts";
import { startPostgres } from "../tests/support/postgres.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const args = process.argv.slice(2);
const opt = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const keyName = opt("--key", "bn254/mulchain_8");
const workerCounts = opt("--workers", "1,2,3").split(",").map(Number);
const clients = Number(opt("--clients", "16"));
const seconds = Number(opt("--seconds", "10"));
const latencyJobs = Number(opt("--latency-jobs", "200"));
const batchSize = opt("--batch-size", "8");
const jsonOut = args.includes("--json") ? opt("--json", "") : undefined;
const witnessDir = opt("--witness-dir", "");
const keyId = keyName.replaceAll("/", ".");
const fixtureDir = join(ROOT, "tests/fixtures", keyName);
const wtns = new Uint8Array(readFileSync(join(fixtureDir, "witness.wtns")));
const vkey = JSON.parse(readFileSync(join(fixtureDir, "verification_key.json"), "utf8")) as VerificationKeyJson;

/** Starts `bun service/main.ts` with `extra`; resolves once it printed `ready` (listening or worker_started). */
function startService(extra: string[], ready: string): Promise<{ child: ChildProcess; url?: string }> {
  const child = spawn(join(ROOT, "node_modules/.bin/bun"), ["service/main.ts", "--keys-dir", join(ROOT, "tests/fixtures"), "--preload", keyName, "--batch-size", batchSize, "--queue-size", "100000", "--queue-size-per-key", "100000", ...extra], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let text = "";
    child.stdout!.on("data", (chunk: Uint8Array) => {
      text += new TextDecoder().decode(chunk);
      for (const line of text.split("\n")) {
        if (!line.includes(`"event":"${ready}"`)) continue;
        resolve({ child, url: JSON.parse(line).url });
      }
    });
    child.on("exit", (code) => reject(new Error(`service exited (${code}) before ${ready}`)));
  });
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(children.map((child) => new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.on("exit", () => resolve());
    child.kill("SIGTERM");
  })));
}

/** Waits until /readyz answers 200 (keys preloaded). */
async function ready(url: string): Promise<void> {
  for (;;) {
    const response = await fetch(`${url}/readyz`).catch(() => undefined);
    await response?.arrayBuffer();
    if (response?.status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

let verified = 0;
/** One job end to end; returns ms from submit to result received. */
async function oneJob(url: string, check: boolean): Promise<number> {
  const started = performance.now();
  const submit = await fetch(`${url}/v1/jobs?key=${keyId}`, { method: "POST", body: wtns, headers: { "content-type": "application/octet-stream" } });
  const job = await submit.json();
  if (submit.status !== 202) throw new Error(`submit: ${submit.status} ${JSON.stringify(job)}`);
  for (;;) {
    const view = await (await fetch(`${url}/v1/jobs/${job.id}/wait?timeout_s=30`)).json();
    if (view.state === "succeeded") break;
    if (view.state === "failed" || view.state === "cancelled") throw new Error(`job ${job.id}: ${JSON.stringify(view)}`);
  }
  const result = await (await fetch(`${url}/v1/jobs/${job.id}/result`)).json() as { proof: Groth16Proof; publicSignals: string[] };
  const ms = performance.now() - started;
  if (check) {
    if (!(await verify(vkey, result.publicSignals, result.proof))) throw new Error(`job ${job.id}: proof rejected`);
    verified++;
  }
  return ms;
}

/** `n` closed-loop clients for `s` seconds: completed jobs and latencies. */
async function closedLoop(url: string, n: number, s: number): Promise<{ jobs: number; seconds: number }> {
  const end = performance.now() + s * 1000;
  let jobs = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: n }, async () => {
    while (performance.now() < end) {
      await oneJob(url, jobs % 10 === 0);
      jobs++;
    }
  }));
  return { jobs, seconds: (performance.now() - started) / 1000 };
}

/** One client, `count` jobs one after another: latency percentiles. */
async function lowLoad(url: string, count: number): Promise<{ p50: number; p99: number; jobs: number }> {
  for (let i = 0; i < 5; i++) await oneJob(url, false); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < count; i++) samples.push(await oneJob(url, i % 10 === 0));
  samples.sort((a, b) => a - b);
  const at = (p: number) => samples[Math.min(samples.length - 1, Math.ceil((p / 100) * samples.length) - 1)];
  return { p50: at(50), p99: at(99), jobs: count };
}

const round = (x: number) => Math.round(x * 10) / 10;
const postgres = opt("--database-url", "") ? undefined : await startPostgres();
const databaseFor = async (name: string) => opt("--database-url", "") || await postgres!.createDatabase(name);
const load: Array<Record<string, number>> = [];
try {
  for (const workers of workerCounts) {
    const url = await databaseFor(`bench_w${workers}`);
    const api = await startService(["--database-url", url, "--port", "0", "--backend", "cpu"], "listening");
    const procs = [api.child];
    for (let w = 0; w < workers; w++) procs.push((await startService(["--role", "worker", "--database-url", url, "--worker-id", `bench-${w}`], "worker_started")).child);
    await ready(api.url!);
    const run = await closedLoop(api.url!, clients, seconds);
    load.push({ workers, clients, jobs: run.jobs, jobsPerS: round(run.jobs / run.seconds), loadAvg: round(loadavg()[0]) });
    console.error(`${workers} worker(s): ${run.jobs} jobs in ${run.seconds.toFixed(1)} s`);
    await stopAll(procs);
  }
  const memory = await startService(["--port", "0"], "listening");
  await ready(memory.url!);
  const memoryRun = await closedLoop(memory.url!, clients, seconds);
  const inProcess = await lowLoad(memory.url!, latencyJobs);
  await stopAll([memory.child]);
  /** One client's jobs in turn against an API and one worker, both given `extra`. */
  const clusteredLowLoad = async (database: string, extra: string[]) => {
    const url = await databaseFor(database);
    const api = await startService(["--database-url", url, "--port", "0", "--backend", "cpu", ...extra], "listening");
    const worker = await startService(["--role", "worker", "--database-url", url, "--worker-id", "bench-latency", ...extra], "worker_started");
    await ready(api.url!);
    const run = await lowLoad(api.url!, latencyJobs);
    await stopAll([api.child, worker.child]);
    return run;
  };
  const clustered = await clusteredLowLoad("bench_latency", []);
  const throughFiles = witnessDir ? await clusteredLowLoad("bench_files", ["--db-witness-max-bytes", "1024", "--witness-dir", witnessDir]) : undefined;

  const lines = [
    `${keyName}, batch size ${batchSize}, ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${new Date().toISOString()}; ${verified} proofs verified`,
    "",
    "| workers | clients | jobs | jobs/s | load avg |",
    "|---|---|---|---|---|",
    ...load.map((r) => `| ${r.workers} | ${r.clients} | ${r.jobs} | ${r.jobsPerS} | ${r.loadAvg} |`),
    `| in-process, no database | ${clients} | ${memoryRun.jobs} | ${round(memoryRun.jobs / memoryRun.seconds)} | ${round(loadavg()[0])} |`,
    "",
    `| one client, ${latencyJobs} jobs in turn | p50 ms | p99 ms |`,
    "|---|---|---|",
    `| in-process (no database) | ${round(inProcess.p50)} | ${round(inProcess.p99)} |`,
    `| PostgreSQL: API + 1 worker | ${round(clustered.p50)} | ${round(clustered.p99)} |`,
    `| the database's cost per job | ${round(clustered.p50 - inProcess.p50)} | ${round(clustered.p99 - inProcess.p99)} |`,
    ...(throughFiles ? [`| PostgreSQL, witnesses through --witness-dir ${witnessDir} | ${round(throughFiles.p50)} | ${round(throughFiles.p99)} |`] : []),
  ];
  console.log(lines.join("\n"));
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ key: keyName, batchSize, load, memoryRun, inProcess, clustered, throughFiles, verified }, null, 2));
} finally {
  await postgres?.stop();
}
process.exit(0);
