/**
 * @module
 * The cuzk forms of the CLI: prove, verify, info, synth, setup, plan (plan_command.ts). `proveWith`
 * and `verifyFiles` are also what the snarkjs forms (snarkjs_commands.ts) run.
 */
import { rmSync } from "node:fs";
import process from "node:process";

import { CuzkError, groth16, Key, Library, MAX_DEVICE, nativeLibraryFor, phaseTable, Prover, readWitnessFile, requireRegularFile, setupInsecureDev, timelineSvg, verify, writeSynthCircuit } from "../mod.ts";
import type { BackendName, CircuitInput, ProofResult } from "../mod.ts";
import { checkOutputs, countFlag, EXIT, integerFlag, readJson, say, snarkjsJson, UsageError, writeOutputs } from "./io.ts";
import type { FileArg, Parsed } from "./io.ts";
import { cancelled, longCall, progressFlag } from "./long_call.ts";
import { plan } from "./plan_command.ts";

/** The self-check is on unless --no-self-check; --self-check (the old opt-in) is still accepted. */
function selfCheckFlag(p: Parsed): boolean {
  if (p.flags.has("--self-check") && p.flags.has("--no-self-check")) {
    throw new UsageError("give --no-self-check or --self-check (the default), not both");
  }
  return !p.flags.has("--no-self-check");
}

/** What proves: a witness file, or circuit inputs and their witness generator (fullprove). */
export type ProofSource = { wtns: string } | { input: string; wasm: string };

/** Where a proof goes. */
export interface ProofFiles {
  zkey: string;
  proof: string;
  public: string;
}

/**
 * Proves `source` with the key `files.zkey` and writes proof.json and public.json, with the options
 * of `cuzk prove` (backend, device, --r1cs, self-check, timings, timeline; `--verbose` shows the
 * phase table as --timings does). Ctrl-C cancels: exit 130 and nothing written.
 */
export async function proveWith(source: ProofSource, files: ProofFiles, p: Parsed): Promise<number> {
  const backend = (p.flags.get("--backend") ?? "auto") as string;
  if (!["auto", "cpu", "cuda"].includes(backend)) throw new UsageError(`--backend must be auto, cpu or cuda, not ${backend}`);
  const device = integerFlag(p, "--device", 0, 0, MAX_DEVICE, " (a GPU index)");
  const selfCheck = selfCheckFlag(p);
  const r1cs = p.flags.get("--r1cs");
  const inputs: FileArg[] = [
    { path: files.zkey, what: "key" },
    ...("wtns" in source ? [{ path: source.wtns, what: "witness" }] : [{ path: source.input, what: "circuit inputs" }, { path: source.wasm, what: "witness generator" }]),
    ...(typeof r1cs === "string" ? [{ path: r1cs, what: "circuit .r1cs" }] : []),
  ];
  checkOutputs(proofOutputs(files, p), inputs);
  // Files that are not regular are refused before the key is opened (Key.open checks the key and
  // the .r1cs itself); a witness's size is checked once the key says how many values it needs.
  const input = "input" in source ? readJson(source.input, "circuit inputs") as CircuitInput : undefined;
  if ("wtns" in source) requireRegularFile(source.wtns, "witness");
  const mode = progressFlag(p.flags.get("--progress"));
  const call = longCall(mode);
  let prover: Prover | undefined;
  try {
    prover = await Prover.open({
      // One proof a process: precomputed copies of the H points (made with the prover: +2 s at
      // 2^24 on an H200) would cost more than the one proof gains.
      hCopies: 0,
      zkey: files.zkey,
      backend: backend as "auto" | BackendName,
      device,
      r1cs: typeof r1cs === "string" ? r1cs : undefined,
      selfCheck,
      ...call,
    });
    const options = { selfCheck, ...call };
    let result: ProofResult;
    try {
      if ("wtns" in source) {
        // A witness holds the key's n_vars values and a .wtns header: anything larger is not one.
        const wtns = readWitnessFile(source.wtns, prover.info.nVars);
        result = await prover.prove(wtns, options);
      } else {
        // A native witness library beside the .wasm is used in its place: say so.
        const native = nativeLibraryFor(source.wasm);
        if (native && native !== source.wasm && mode !== "none") say(`computing the witness with ${native} (the native witness library beside ${source.wasm})`);
        result = await groth16.fullProve(input!, source.wasm, prover, options);
      }
    } catch (error) {
      // A proof that fails the self-check is an error here: nothing is written.
      if (error instanceof CuzkError && error.code === "SELF_CHECK" && r1cs === undefined) {
        const options = { cause: error, nativeMessage: error.nativeMessage, operation: error.operation };
        throw new CuzkError("SELF_CHECK", `${error.message} (here: prove again with --r1cs circuit.r1cs)`, options);
      }
      throw error;
    }
    call.done();
    const data = new Map<string, string>([
      [files.proof, snarkjsJson(result.proof)],
      [files.public, snarkjsJson(result.publicSignals)],
    ]);
    const jsonTimings = p.flags.get("--json-timings"), timeline = p.flags.get("--timeline");
    if (typeof jsonTimings === "string") data.set(jsonTimings, snarkjsJson(result.timings));
    if (typeof timeline === "string") data.set(timeline, timelineSvg(result.timings));
    writeOutputs(proofOutputs(files, p).map((out) => ({ ...out, data: data.get(out.path)! })));
    if (p.flags.has("--timings") || p.flags.has("--verbose")) process.stderr.write(phaseTable(result.timings) + "\n");
  } catch (error) {
    if (!cancelled(error, call)) throw error;
    call.done();
    say("cancelled (Ctrl-C); no proof written");
    return EXIT.cancelled;
  } finally {
    call.done();
    prover?.close();
  }
  return EXIT.ok;
}

/** The files a prove writes: proof, public signals, and the timing files it was asked for. */
function proofOutputs(files: ProofFiles, p: Parsed): FileArg[] {
  const jsonTimings = p.flags.get("--json-timings"), timeline = p.flags.get("--timeline");
  return [
    { path: files.proof, what: "proof" },
    { path: files.public, what: "public signals" },
    ...(typeof jsonTimings === "string" ? [{ path: jsonTimings, what: "timings (--json-timings)" }] : []),
    ...(typeof timeline === "string" ? [{ path: timeline, what: "timeline (--timeline)" }] : []),
  ];
}

/** Checks a proof from its three JSON files: "OK!" on stdout and exit 0, or "Invalid proof" on stderr and exit 1. */
export async function verifyFiles(vkPath: string, publicPath: string, proofPath: string): Promise<number> {
  const vk = readJson(vkPath, "verification key");
  const pub = readJson(publicPath, "public signals");
  const proof = readJson(proofPath, "proof");
  if (!Array.isArray(pub)) throw new CuzkError("FORMAT", `${publicPath} must hold a JSON array of decimal strings`);
  // deno-lint-ignore no-explicit-any
  const ok = await verify(vk as any, pub as string[], proof as any);
  // The same words snarkjs prints, so scripts that grep for them keep working.
  if (ok) {
    process.stdout.write("OK!\n");
    return EXIT.ok;
  }
  process.stderr.write("Invalid proof\n");
  return EXIT.failed;
}

async function prove(p: Parsed): Promise<number> {
  if (p.positional.length !== 4) throw new UsageError("prove needs <circuit.zkey> <witness.wtns> <proof.json> <public.json>");
  const [zkey, wtns, proof, pub] = p.positional;
  return await proveWith({ wtns }, { zkey, proof, public: pub }, p);
}

async function verifyCommand(p: Parsed): Promise<number> {
  if (p.positional.length !== 3) throw new UsageError("verify needs <verification_key.json> <public.json> <proof.json>");
  const [vk, pub, proof] = p.positional;
  return await verifyFiles(vk, pub, proof);
}

async function info(p: Parsed): Promise<number> {
  if (p.positional.length > 1) throw new UsageError("info takes at most one .zkey");
  const lib = Library.default();
  const out: Record<string, unknown> = { library: lib.path, ...lib.info(), devices: lib.devices() };
  if (p.positional.length === 1) {
    using key = await Key.open(p.positional[0]);
    out.key = key.info();
  }
  process.stdout.write(JSON.stringify(out, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2) + "\n");
  return EXIT.ok;
}

async function synth(p: Parsed): Promise<number> {
  if (p.positional.length !== 2) throw new UsageError("synth needs <circuit.r1cs> <witness.wtns>");
  const [r1cs, wtns] = p.positional;
  const curve = (p.flags.get("--curve") ?? "bn254") as string;
  if (!["bn254", "bls12_381"].includes(curve)) throw new UsageError(`--curve must be bn254 or bls12_381, not ${curve}`);
  const profile = (p.flags.get("--profile") ?? "porep") as string;
  if (!["porep", "uniform"].includes(profile)) throw new UsageError(`--profile must be porep or uniform, not ${profile}`);
  const seedText = p.flags.get("--seed");
  let seed = 1n;
  try {
    if (typeof seedText === "string") seed = BigInt(seedText);
  } catch {
    throw new UsageError(`--seed must be an integer, not ${seedText}`);
  }
  const constraints = countFlag(p, "--constraints");
  checkOutputs([{ path: r1cs, what: "circuit .r1cs" }, { path: wtns, what: "witness" }]);
  const started = performance.now();
  await writeSynthCircuit(
    { curve: curve as "bn254", profile: profile as "porep", constraints, publicInputs: countFlag(p, "--public", 4), seed },
    { r1cs, wtns },
  );
  say(`${profile} circuit, ${constraints} constraints on ${curve}, written in ${((performance.now() - started) / 1000).toFixed(2)} s`);
  return EXIT.ok;
}

const INSECURE_WARNING = `
  ****************************************************************************
  *  cuzk setup --insecure-dev: FOR TESTING AND BENCHMARKS ONLY.             *
  *  The toxic waste (tau, alpha, beta, gamma, delta) was drawn by this one  *
  *  process. Nothing proves it was destroyed: whoever could read this       *
  *  process's memory can forge proofs that this key's verification key      *
  *  accepts. Never use the key to protect anything of value; use a real     *
  *  ceremony (snarkjs powersoftau + zkey contribute) for that.              *
  ****************************************************************************
`;

async function setup(p: Parsed): Promise<number> {
  if (!p.flags.has("--insecure-dev")) {
    throw new UsageError("setup makes only insecure development keys: pass --insecure-dev to say you know (see docs/benchmarks.md)");
  }
  if (p.positional.length < 2 || p.positional.length > 3) {
    throw new UsageError("setup needs <circuit.r1cs> <circuit.zkey> [verification_key.json]");
  }
  const [r1cs, zkey, vkPath] = p.positional;
  const outputs = [{ path: zkey, what: "key" }, ...(vkPath !== undefined ? [{ path: vkPath, what: "verification key" }] : [])];
  checkOutputs(outputs, [{ path: r1cs, what: "circuit .r1cs" }]);
  const cores = Library.default().info().cpuThreads;
  // Checked here too (setupInsecureDev refuses it as well) so that the refusal comes before the warning.
  const threads = integerFlag(p, "--threads", 0, 0, cores, ` (0 = all; the library reports ${cores} cores here)`);
  const mode = progressFlag(p.flags.get("--progress"));
  process.stderr.write(INSECURE_WARNING);
  const call = longCall(mode);
  let result;
  try {
    result = await setupInsecureDev(r1cs, zkey, { threads, cpuOnly: p.flags.has("--cpu"), ...call });
  } catch (error) {
    if (!cancelled(error, call)) throw error;
    call.done();
    say(`setup cancelled (Ctrl-C); no key written: ${(error as Error).message}`);
    return EXIT.cancelled;
  } finally {
    call.done();
  }
  if (vkPath !== undefined) {
    try {
      writeOutputs([{ path: vkPath, what: "verification key", data: snarkjsJson(result.verificationKey) }]);
    } catch (error) {
      rmSync(zkey, { force: true }); // both outputs or neither
      throw error;
    }
  }
  const s = (ms: number) => (ms / 1000).toFixed(2);
  say(
    `INSECURE key for ${result.nConstraints} constraints (domain 2^${Math.log2(result.domainSize)}, ${result.nVars} signals, ` +
      `${result.nPublic} public) on ${result.curve} written to ${zkey} (${(result.zkeyBytes / 1e6).toFixed(1)} MB) in ${s(result.totalMs)} s ` +
      `(scalars ${s(result.scalarsMs)}, tables ${s(result.tablesMs)}, points ${s(result.pointsMs)}; ${result.threads} threads; points on ${result.gpu ? "the GPU" : "the CPU"})`,
  );
  return EXIT.ok;
}

/** The cuzk forms, by command word. */
export const CUZK_COMMANDS: Record<string, (p: Parsed) => Promise<number>> = {
  prove,
  verify: verifyCommand,
  info,
  synth,
  setup,
  plan,
};
