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
import module from "node:module";
import process from "node:process";

// Node type-strips and compiles every module of the command line again on each start
// unless its compile cache is on (Node >= 22.1; NODE_DISABLE_COMPILE_CACHE=1 turns it off). Deno
// and Bun keep caches of their own. It applies to modules loaded after this line: main.ts is loaded
// by the dynamic import below.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

/** Runs the CLI on `argv` (without the runtime and script); resolves the exit status. */
export const main: (argv: string[]) => Promise<number> = (await import("./cli/main.ts")).main;

// Run when executed directly (not when imported by the tests).
const isMain = (import.meta as { main?: boolean }).main ??
  (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href);
if (isMain) {
  const code = await main(process.argv.slice(2));
  process.exit(code);
}
