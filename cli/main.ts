/**
 * @module
 * The command line's dispatch: the usage text, the version and `main`, which reads a command line
 * and runs the snarkjs form (snarkjs_commands.ts) or the cuzk form (cuzk_commands.ts,
 * witness_command.ts) it names. cli.ts, the entry point, loads this module.
 */
import { readFileSync } from "node:fs";
import process from "node:process";

import { CUZK_COMMANDS } from "./cuzk_commands.ts";
import { EXIT, parseArgs, say, UsageError } from "./io.ts";
import { matchSnarkjs, runSnarkjs, SNARKJS_OPTIONS, snarkjsOnly, snarkjsUsage } from "./snarkjs_commands.ts";
import { PLAN_USAGE } from "./plan_command.ts";
import { WITNESS_USAGE, witnessCommand } from "./witness_command.ts";

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

/** "cuzk@<version>", from the package.json beside cli.ts. */
function version(): string {
  try {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: string };
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
