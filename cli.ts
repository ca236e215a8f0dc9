#!/usr/bin/env -S deno run --allow-all
/**
 * @module
 * The cuzk command line: a drop-in for snarkjs's proving commands (cli/snarkjs_commands.ts:
 * `groth16 prove|fullprove|verify`, `wtns calculate|check`, `zkey export
 * verificationkey|soliditycalldata|solidityverifier`, `r1cs info` and their aliases, with snarkjs's
 * default file names, output files and exit statuses), plus the
 * cuzk forms below (cli/cuzk_commands.ts). Runs under Deno (`deno run -A cli.ts`), Bun (`bun cli.ts`)
 * and Node >= 22 (`node cli.ts`). Exit status 0 on success; otherwise one line on stderr and
 * non-zero: 1 for an error or a proof that does not verify, 2 (cuzk forms) or 99 (snarkjs forms,
 * an unknown command) for a command line it cannot use, 130 after Ctrl-C.
 *
 *   cuzk prove <circuit.zkey> <witness.wtns> <proof.json> <public.json> [options]
 *   cuzk verify <verification_key.json> <public.json> <proof.json>
 *   cuzk info [circuit.zkey]
 *   cuzk synth <circuit.r1cs> <witness.wtns> --constraints N [--curve C] [--profile porep|uniform] [--public N] [--seed N]
 *   cuzk setup --insecure-dev <circuit.r1cs> <circuit.zkey> [verification_key.json] [--threads N] [--cpu]
 *   cuzk plan <circuit.zkey> | --synthetic porep --log2 K [--backend cpu|cuda] [--gpu-memory SIZE] [--host-memory SIZE]
 *             [--batch N] [--json]
 *
 * Options: --backend auto|cpu|cuda, --device N, --r1cs <circuit.r1cs> (check the witness
 * constraint by constraint), --no-self-check (skip the pairing check of the proof before it is
 * written; on by default, --self-check is accepted), --timings (phase table on stderr),
 * --json-timings <file>, --timeline <file.svg> (the phases as an SVG waterfall).
 * Files are read only when they are regular files within a size limit (README, "CLI").
 * `prove`, `fullprove` and `setup` show their progress on stderr: on a terminal a bar redrawn with
 * the phase the library is in and the time, elsewhere a line per step; --progress bar|plain|none
 * chooses. Ctrl-C (SIGINT) cancels them between proofs / chunks of key points: exit 130, no output file.
 * `synth` writes a synthetic circuit and a witness that satisfies it; `setup --insecure-dev` makes a
 * proving key for testing only (docs/benchmarks.md, "Synthetic circuits"). `plan` prints the memory
 * plan an engine would make for a key and a batch, without a GPU (cli/plan_command.ts). `witness compile`
 * builds a circuit's native witness library (cli/witness_command.ts). `-v`/`--version`,
 * `-h`/`--help`. docs/cli.md has the table of commands, ours beside snarkjs's.
 */
import { readFileSync } from "node:fs";
import process from "node:process";

import { CUZK_COMMANDS } from "./cli/cuzk_commands.ts";
import { EXIT, parseArgs, say, UsageError } from "./cli/io.ts";
import { matchSnarkjs, runSnarkjs, SNARKJS_OPTIONS, snarkjsOnly, snarkjsUsage } from "./cli/snarkjs_commands.ts";
import { PLAN_USAGE } from "./cli/plan_command.ts";
import { WITNESS_USAGE, witnessCommand } from "./cli/witness_command.ts";

const USAGE = `usage (docs/cli.md):
snarkjs's commands (the same files, defaults and output; snarkjs's aliases in parentheses):
${snarkjsUsage()}
  options of prove and fullprove: those of cuzk prove, and snarkjs's -v|--verbose (the phase table), --protocol=groth16
cuzk's commands:
  cuzk prove <circuit.zkey> <witness.wtns> <proof.json> <public.json> [--backend auto|cpu|cuda] [--device N]
             [--r1cs circuit.r1cs] [--no-self-check] [--timings] [--json-timings file] [--timeline file.svg]
             [--progress bar|plain|none]
  cuzk verify <verification_key.json> <public.json> <proof.json>
  cuzk info [circuit.zkey]
  cuzk synth <circuit.r1cs> <witness.wtns> --constraints N|2^K [--curve bn254|bls12_381] [--profile porep|uniform]
             [--public N] [--seed N]
  cuzk setup --insecure-dev <circuit.r1cs> <circuit.zkey> [verification_key.json] [--threads N] [--cpu]
             [--progress bar|plain|none] (a proving key from fresh random toxic waste: FOR TESTING ONLY)
${PLAN_USAGE}
${WITNESS_USAGE}
  cuzk -v|--version, cuzk -h|--help`;

/** "cuzk@<version>", from the package.json beside this file. */
function version(): string {
  try {
    const manifest = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version?: string };
    return `cuzk@${manifest.version}`;
  } catch {
    return "cuzk (version unknown: no package.json beside cli.ts)";
  }
}

/** Runs the CLI on `argv` (without the runtime and script); resolves the exit status. */
export async function main(argv: string[]): Promise<number> {
  // Usage errors answer as the form they were given in: 2 for cuzk's, 99 for snarkjs's (and unknown commands).
  let usageExit: number = EXIT.snarkjsUsage;
  try {
    const [command, ...rest] = argv;
    if (command === undefined) {
      process.stdout.write(USAGE + "\n");
      return EXIT.snarkjsUsage;
    }
    // Alone, -v is the version; beside a command it is snarkjs's --verbose (and -h that command's help).
    if (argv.length === 1 && (command === "-v" || command === "--version")) {
      process.stdout.write(version() + "\n");
      return EXIT.ok;
    }
    if (argv.length === 1 && (command === "-h" || command === "--help")) {
      process.stdout.write(USAGE + "\n");
      return EXIT.ok;
    }
    if (command === "witness") {
      usageExit = EXIT.usage;
      return await witnessCommand(rest);
    }
    const cuzk = CUZK_COMMANDS[command];
    if (cuzk) {
      usageExit = EXIT.usage;
      const parsed = parseArgs(rest);
      if (parsed.flags.has("--help")) {
        process.stdout.write(USAGE + "\n");
        return EXIT.ok;
      }
      return await cuzk(parsed);
    }
    // Before options are read: snarkjs's own options (e.g. zkey contribute's --name) are not cuzk's.
    const elsewhere = snarkjsOnly(argv);
    if (elsewhere) throw new UsageError(elsewhere);
    const parsed = parseArgs(argv, SNARKJS_OPTIONS);
    const matched = matchSnarkjs(parsed.positional);
    if (!matched) {
      // A word of snarkjs's command groups names the command by its first two words.
      const group = ["groth16", "zkey", "wtns", "r1cs", "powersoftau", "plonk", "fflonk"].includes(command.toLowerCase());
      const said = group && parsed.positional[1] !== undefined ? `${parsed.positional[0]} ${parsed.positional[1]}` : command;
      throw new UsageError(`unknown command "${said}" (cuzk --help lists them)`);
    }
    if (parsed.flags.has("--help")) {
      process.stdout.write(snarkjsUsage(matched.command) + "\n");
      return EXIT.ok;
    }
    return await runSnarkjs(matched.command, matched.rest, parsed);
  } catch (e) {
    say((e as Error)?.message ?? String(e));
    return e instanceof UsageError ? usageExit : EXIT.failed;
  }
}

// Run when executed directly (not when imported by the tests).
const isMain = (import.meta as { main?: boolean }).main ??
  (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href);
if (isMain) {
  const code = await main(process.argv.slice(2));
  process.exit(code);
}
