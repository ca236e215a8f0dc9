/**
 * @module
 * `cuzk witness compile`: builds a circuit's native witness library (src/witness/compile.ts), which
 * fullprove, wtns calculate, the JS API and the service then use in place of the WASM generator
 * (given instead of the .wasm, or found beside it). Exit statuses as the cuzk forms: 0, 1 for an
 * error, 2 for a command line it cannot use.
 *
 *   cuzk witness compile <circuit.circom | circuit_cpp/> [-l dir]... [-o outdir]
 *                        [--prime bn128|bls12381] [--O0|--O1|--O2] [--cache dir] [--progress bar|plain|none]
 */
import process from "node:process";

import { compileWitnessLibrary, defaultWitnessCache } from "../mod.ts";
import type { CircomPrime } from "../mod.ts";
import { EXIT, UsageError } from "./io.ts";
import { progressFlag, stepReporter } from "./long_call.ts";

export const WITNESS_USAGE = `  cuzk witness compile <circuit.circom | circuit_cpp/> [-l include_dir]... [-o outdir] [--prime bn128|bls12381]
             [--O0|--O1|--O2] [--cache dir] [--progress bar|plain|none]   (writes <outdir>/<name>.witness.so and the executable <outdir>/<name>.witness
             <input.json> <out.wtns>; circom's --prime and --O flag
             must be those the .r1cs/.zkey were made with; default bn128, --O1)`;

interface CompileArgs {
  source: string;
  include: string[];
  outDir?: string;
  prime?: CircomPrime;
  optimize?: "--O0" | "--O1" | "--O2";
  cacheDir?: string;
  progress?: string;
}

function parseCompileArgs(argv: string[]): CompileArgs {
  const args: CompileArgs = { source: "", include: [] };
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "-l") args.include.push(value());
    else if (a === "-o" || a === "--output") args.outDir = value();
    else if (a === "--cache") args.cacheDir = value();
    else if (a === "--progress") args.progress = value();
    else if (a.startsWith("--progress=")) args.progress = a.slice("--progress=".length);
    else if (a === "-p" || a === "--prime") {
      const prime = value();
      if (prime !== "bn128" && prime !== "bls12381") throw new UsageError(`--prime must be bn128 or bls12381, not ${prime}`);
      args.prime = prime;
    } else if (a === "--O0" || a === "--O1" || a === "--O2") args.optimize = a;
    else if (a.startsWith("-")) throw new UsageError(`unknown option ${a} of witness compile`);
    else positional.push(a);
  }
  if (positional.length !== 1) throw new UsageError("witness compile takes one circuit.circom or one folder circom --c wrote");
  args.source = positional[0];
  return args;
}

/** Runs `cuzk witness <subcommand> ...` (argv after "witness"); resolves the exit status. */
export async function witnessCommand(argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  if (subcommand !== "compile") throw new UsageError(`usage:\n${WITNESS_USAGE}`);
  const args = parseCompileArgs(rest);
  const mode = progressFlag(args.progress);
  const steps = stepReporter(mode);
  let result;
  try {
    result = await compileWitnessLibrary(args.source, {
      include: args.include,
      outDir: args.outDir,
      prime: args.prime,
      optimize: args.optimize,
      cacheDir: args.cacheDir ?? defaultWitnessCache(),
      onStep: steps.onStep,
    });
  } finally {
    steps.done();
  }
  const how = result.cached ? "from the cache" : `compiled in ${(result.compileMs / 1000).toFixed(1)} s`;
  if (mode !== "none") process.stderr.write(`cuzk: ${result.curve} witness library ${how} (circom ${(result.circomMs / 1000).toFixed(1)} s)\n`);
  process.stdout.write(result.library + "\n" + result.executable + "\n");
  return EXIT.ok;
}
