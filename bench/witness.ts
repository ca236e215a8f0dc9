/**
 * @module
 * Native witness generation against circom_runtime's WASM: Poseidon chains
 * (circomlib Poseidon(2), --O2, 240 constraints a hash, the fixtures' poseidonChain) filling
 * 2^14, 2^16, 2^18 constraints, on both curves. For each: circom --c --wasm once, the native
 * library compiled into a fresh cache (the compile time stated once per circuit), then
 *   in-process: median wall time of `wtns(input)` on one loaded calculator (after a warm-up;
 *               native and WASM calls interleaved, as are the processes below),
 *   whole process: median wall and CPU time (the child's rusage: user + system, all threads) of
 *                  the commands a user runs: `cuzk wtns calculate chain_js/chain.wasm input.json
 *                  out.wtns` (cli.ts, under this runtime) with the native library beside the
 *                  .wasm (as `cuzk witness compile` leaves it: the CLI picks it) and with the
 *                  .wasm alone (a copy in a folder without one: circom_runtime's WASM); the
 *                  circuit's native executable (`chain.witness input.json out.wtns`, which
 *                  `cuzk witness compile` links beside the library: no JavaScript runtime); and
 *                  snarkjs's own `wtns calculate` (Node) on the same .wasm; the four interleaved;
 * every native witness is checked equal to the WASM's. Prints a table (markdown).
 *
 *   deno run -A bench/witness.ts [--logs 14,16,18] [--curves bn254,bls12_381] [--samples 9]
 *                                [--process-samples 11] [--work dir] [--json file] [--reuse]
 * (--reuse: keep the libraries compiled by an earlier run instead of a cold compile)
 *
 * fullProve with a native witness (the issue's H200 figure): one resident prover, `samples`
 * calls of groth16.fullProve(input, library, prover) (witness and proof timed apart), then a
 * stream of `--many` inputs through fullProveMany (witness i+1 while proof i runs):
 *
 *   deno run -A bench/witness.ts --fullprove <name.witness.so> <input.json> <circuit.zkey>
 *                                [--backend cuda|cpu|auto] [--samples 5] [--many 8]
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { compileWitnessLibrary, fullProveMany, groth16, Prover, WitnessCalculator } from "../mod.ts";
import { circuitByName } from "../tools/fixtures/circuits.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const argv = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
};

/** The runtime's own command line for a script (deno run -A, bun, node). */
function selfCommand(script: string): string[] {
  const exec = process.execPath;
  if (typeof (globalThis as { Deno?: unknown }).Deno !== "undefined") return [exec, "run", "-A", script];
  return [exec, script];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// --fullprove <library> <input.json> <circuit.zkey>: fullProve's time split into witness and proof.
if (argv[0] === "--fullprove") {
  const [, library, inputPath, zkey] = argv;
  const samples = Number(opt("--samples", "5"));
  const many = Number(opt("--many", "8"));
  const input = JSON.parse(readFileSync(inputPath, "utf8"));
  const calculator = await WitnessCalculator.load(library, { engine: "native" });
  const prover = await Prover.open({ zkey, backend: opt("--backend", "auto") as "auto" | "cpu" | "cuda" });
  try {
    const runs: Array<{ witnessMs: number; proofMs: number; totalMs: number }> = [];
    for (let i = 0; i <= samples; i++) {
      const started = performance.now();
      const { timings } = await groth16.fullProve(input, calculator, prover);
      const totalMs = performance.now() - started;
      if (i > 0) runs.push({ witnessMs: timings.witnessMs ?? NaN, proofMs: totalMs - (timings.witnessMs ?? 0), totalMs }); // i = 0: warm-up
    }
    const m = (key: "witnessMs" | "proofMs" | "totalMs") => median(runs.map((r) => r[key])).toFixed(1);
    const inputs = Array.from({ length: many }, (_, i) => ({ ...input, x: (BigInt(input.x) + BigInt(i)).toString() }));
    const started = performance.now();
    const stream = await fullProveMany(inputs, calculator, prover);
    const streamMs = performance.now() - started;
    const perWitness = median(stream.map((r) => r.witnessSpan.end - r.witnessSpan.start));
    const perProof = median(stream.map((r) => r.proofSpan.end - r.proofSpan.start));
    console.log(`fullProve, ${calculator.nVars} witness values, native witness (${library}), backend ${prover.backend}, medians of ${samples}:`);
    console.log(`| witness | proof (prove call, self-check included) | fullProve |\n|---|---|---|\n| ${m("witnessMs")} ms | ${m("proofMs")} ms | ${m("totalMs")} ms |`);
    console.log(`fullProveMany of ${many} inputs: ${streamMs.toFixed(0)} ms, ${(streamMs / many).toFixed(1)} ms per proof (witness ${perWitness.toFixed(1)} ms, proof ${perProof.toFixed(1)} ms each, medians)`);
  } finally {
    prover.close();
  }
  process.exit(0);
}

const logs = opt("--logs", "14,16,18").split(",").map(Number);
const curves = opt("--curves", "bn254,bls12_381").split(",");
const samples = Number(opt("--samples", "9"));
const processSamples = Number(opt("--process-samples", "11"));
const work = opt("--work", join(ROOT, ".cache/bench-witness"));
const HASHES: Record<number, number> = { 10: 4, 12: 17, 14: 68, 16: 273, 18: 1092, 20: 4369 };
const PRIME: Record<string, string> = { bn254: "bn128", bls12_381: "bls12381" };

function chainSource(hashes: number): string {
  const source = (circuitByName("poseidon_14") as { source(): string }).source();
  if (!source.includes("PoseidonChain(68)")) throw new Error("tools/fixtures/circuits.mjs's poseidon_14 changed shape");
  return source.replace("PoseidonChain(68)", `PoseidonChain(${hashes})`);
}

// The child's CPU time (user + system, all its threads, from its rusage) to the millisecond: bash's
// `time` keyword (GNU time rounds to 10 ms, a tenth of a native process here).
const TIMED = ["bash", "-c", 'TIMEFORMAT="cuzk-bench-cpu %3U %3S"; time "$@"', "timed"];

/** Wall and CPU ms of one run of `command`. */
function timeProcess(command: string[]): { wallMs: number; cpuMs: number } {
  const started = performance.now();
  const r = spawnSync(TIMED[0], [...TIMED.slice(1), ...command], { cwd: ROOT, encoding: "utf8" });
  const wallMs = performance.now() - started;
  if (r.status !== 0) throw new Error(`${command.join(" ")} failed: ${r.stdout}${r.stderr}`);
  const cpu = /cuzk-bench-cpu ([\d.]+) ([\d.]+)/.exec(r.stderr);
  return { wallMs, cpuMs: cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : NaN };
}

interface Row {
  curve: string;
  log: number;
  nVars: number;
  circomS: number;
  compileS: number;
  wasmMs: number;
  nativeMs: number;
  wasmCpuMs: number;
  nativeCpuMs: number;
  wasmProcessMs: number;
  nativeProcessMs: number;
  executableProcessMs: number;
  snarkjsProcessMs: number;
  wasmProcessCpuMs: number;
  nativeProcessCpuMs: number;
  executableProcessCpuMs: number;
  snarkjsProcessCpuMs: number;
}

const rows: Row[] = [];
const loadBefore = loadavg()[0];
for (const log of logs) {
  const hashes = HASHES[log];
  if (!hashes) throw new Error(`--logs: no Poseidon chain for 2^${log}`);
  for (const curve of curves) {
    const dir = join(work, `poseidon_2^${log}_${curve}`);
    mkdirSync(dir, { recursive: true });
    const source = join(dir, "chain.circom");
    writeFileSync(source, chainSource(hashes));
    const circomStarted = performance.now();
    if (!existsSync(join(dir, "chain_js/chain.wasm")) || !existsSync(join(dir, "chain_cpp/chain.dat"))) {
      const r = spawnSync("node", [join(ROOT, "node_modules/circom2/cli.js"), source, "--c", "--wasm", "--O2", "--prime", PRIME[curve], "-l", join(ROOT, "node_modules"), "-o", dir], { cwd: "/", encoding: "utf8" });
      if (r.status !== 0) throw new Error(`circom: ${r.stdout}${r.stderr}`);
    }
    const circomS = (performance.now() - circomStarted) / 1000;
    const cache = join(dir, "cache");
    // A cold compile (its time is the figure stated), unless --reuse keeps an earlier one.
    if (!argv.includes("--reuse")) rmSync(cache, { recursive: true, force: true });
    const compiled = await compileWitnessLibrary(join(dir, "chain_cpp"), { cacheDir: cache, outDir: dir });
    const wasmPath = join(dir, "chain_js/chain.wasm");
    const input = { x: "12345678901234567890", w: "98765432109876543210" };
    const inputPath = join(dir, "input.json");
    writeFileSync(inputPath, JSON.stringify(input));

    const wasm = await WitnessCalculator.load(wasmPath, { engine: "wasm" });
    const native = await WitnessCalculator.load(compiled.library, { engine: "native" });
    const reference = await wasm.wtns(input);
    const mine = await native.wtns(input);
    if (reference.length !== mine.length || !reference.every((b, i) => b === mine[i])) throw new Error(`${curve} 2^${log}: native witness differs from the WASM's`);
    // Interleaved, so that the other load of a shared machine falls on both alike.
    // CPU time too (process.cpuUsage: every thread, so the native call's worker thread counts): on
    // a shared machine it moves far less with the others' load than wall time does.
    const wasmTimes: number[] = [], nativeTimes: number[] = [], wasmCpu: number[] = [], nativeCpu: number[] = [];
    for (let i = 0; i < samples; i++) {
      for (const [calculator, times, cpu] of [[wasm, wasmTimes, wasmCpu], [native, nativeTimes, nativeCpu]] as const) {
        const cpuStarted = process.cpuUsage();
        const started = performance.now();
        await calculator.wtns(input);
        times.push(performance.now() - started);
        const used = process.cpuUsage(cpuStarted);
        cpu.push((used.user + used.system) / 1000);
      }
    }
    const wasmMs = median(wasmTimes);
    const nativeMs = median(nativeTimes);
    const wasmCpuMs = median(wasmCpu);
    const nativeCpuMs = median(nativeCpu);
    // The .wasm alone, in a folder without a library beside it or above it: the CLI runs the WASM.
    const wasmOnly = join(dir, "wasm-only/chain_js/chain.wasm");
    mkdirSync(join(dir, "wasm-only/chain_js"), { recursive: true });
    copyFileSync(wasmPath, wasmOnly);
    for (const [path, engine] of [[wasmPath, "native"], [wasmOnly, "wasm"]] as const) {
      const picked = (await WitnessCalculator.load(path)).engine;
      if (picked !== engine) throw new Error(`the CLI would run ${picked} for ${path}, not ${engine}`);
    }
    const cli = selfCommand(join(ROOT, "cli.ts"));
    const out = join(dir, "out.wtns");
    const commands = {
      wasm: [...cli, "wtns", "calculate", wasmOnly, inputPath, out],
      native: [...cli, "wtns", "calculate", wasmPath, inputPath, out],
      executable: [compiled.executable, inputPath, out],
      snarkjs: ["node", join(ROOT, "node_modules/snarkjs/cli.js"), "wtns", "calculate", wasmPath, inputPath, out],
    };
    const engines = ["wasm", "native", "executable", "snarkjs"] as const;
    const processTimes = Object.fromEntries(engines.map((e) => [e, [] as number[]])) as Record<typeof engines[number], number[]>;
    const processCpu = Object.fromEntries(engines.map((e) => [e, [] as number[]])) as Record<typeof engines[number], number[]>;
    for (let i = 0; i < processSamples; i++) {
      for (const engine of engines) {
        const { wallMs, cpuMs } = timeProcess(commands[engine]);
        processTimes[engine].push(wallMs);
        processCpu[engine].push(cpuMs);
        if (!readFileSync(out).equals(Buffer.from(reference))) throw new Error(`the whole-process ${engine} witness differs`);
        rmSync(out);
      }
    }
    const row = {
      curve, log, nVars: native.nVars, circomS, compileS: compiled.compileMs / 1000, wasmMs, nativeMs, wasmCpuMs, nativeCpuMs,
      wasmProcessMs: median(processTimes.wasm), nativeProcessMs: median(processTimes.native), executableProcessMs: median(processTimes.executable),
      snarkjsProcessMs: median(processTimes.snarkjs), wasmProcessCpuMs: median(processCpu.wasm), nativeProcessCpuMs: median(processCpu.native),
      executableProcessCpuMs: median(processCpu.executable), snarkjsProcessCpuMs: median(processCpu.snarkjs),
    };
    rows.push(row);
    console.error(JSON.stringify(row));
  }
}

const runtimeName = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined" ? "deno" : (process.versions as Record<string, string>).bun ? "bun" : "node";
console.log(`\nWitness generation, Poseidon chains (--O2), ${runtimeName}, ${cpus().length} cores (${cpus()[0]?.model}), load ${loadBefore.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end; medians of ${samples} (in-process) and ${processSamples} (whole process)\n`);
const cliName = `cuzk wtns calculate (${runtimeName})`;
console.log(`| curve | constraints | n_vars | WASM in-process: wall / CPU | native in-process: wall / CPU | speed-up: wall / CPU | ${cliName}, WASM: wall / CPU | ${cliName}, native: wall / CPU | native executable: wall / CPU | snarkjs wtns calculate (node): wall / CPU | executable vs ${cliName} WASM: wall / CPU | executable vs snarkjs: wall / CPU | same CLI, native vs WASM: wall / CPU | native compile |`);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
const pair = (wall: number, cpu: number, digits: number) => `${wall.toFixed(digits)} / ${cpu.toFixed(digits)} ms`;
const ratio = (wallA: number, cpuA: number, wallB: number, cpuB: number) => `${(wallA / wallB).toFixed(1)}x / ${(cpuA / cpuB).toFixed(1)}x`;
for (const r of rows) {
  console.log(`| ${r.curve} | 2^${r.log} | ${r.nVars} | ${pair(r.wasmMs, r.wasmCpuMs, 1)} | ${pair(r.nativeMs, r.nativeCpuMs, 1)} | ` +
    `${ratio(r.wasmMs, r.wasmCpuMs, r.nativeMs, r.nativeCpuMs)} | ` +
    `${pair(r.wasmProcessMs, r.wasmProcessCpuMs, 0)} | ${pair(r.nativeProcessMs, r.nativeProcessCpuMs, 0)} | ` +
    `${pair(r.executableProcessMs, r.executableProcessCpuMs, 0)} | ${pair(r.snarkjsProcessMs, r.snarkjsProcessCpuMs, 0)} | ` +
    `${ratio(r.wasmProcessMs, r.wasmProcessCpuMs, r.executableProcessMs, r.executableProcessCpuMs)} | ` +
    `${ratio(r.snarkjsProcessMs, r.snarkjsProcessCpuMs, r.executableProcessMs, r.executableProcessCpuMs)} | ` +
    `${ratio(r.wasmProcessMs, r.wasmProcessCpuMs, r.nativeProcessMs, r.nativeProcessCpuMs)} | ${argv.includes("--reuse") ? "(reused)" : `${r.compileS.toFixed(1)} s`} |`);
}
const json = opt("--json", "");
if (json) writeFileSync(json, JSON.stringify({ date: new Date().toISOString(), runtime: runtimeName, cores: cpus().length, rows }, null, 2));
