/**
 * @module
 * The snarkjs forms of the CLI: snarkjs's command lines for what cuzk does (groth16 prove,
 * fullprove and verify, wtns calculate and check, zkey export verificationkey, soliditycalldata and
 * solidityverifier, r1cs info), with its aliases, its default file names, its options and its exit
 * statuses (node_modules/snarkjs/cli.js).
 * Command words match in any case, as in snarkjs; the cuzk options of `prove` are taken as well.
 */
import process from "node:process";

import { CuzkError, groth16, wtns, zKey } from "../mod.ts";
import type { CircuitInput } from "../mod.ts";
import { proveWith, verifyFiles } from "./cuzk_commands.ts";
import { checkOutputs, EXIT, readJson, UsageError, writeJson, writeOutputs } from "./io.ts";
import type { Parsed } from "./io.ts";
import { r1csInfo, wtnsCheck } from "./r1cs_commands.ts";
import { exportSolidityVerifier } from "./solidity_verifier.ts";

/** A snarkjs command as cuzk runs it. */
export interface SnarkjsCommand {
  /** Its words, e.g. "groth16 prove". */
  words: string;
  /** Its other spellings in snarkjs (short and old forms). */
  aliases: string[];
  /** The files it takes, in order, each with snarkjs's default name. */
  files: string[];
  description: string;
  run(files: string[], p: Parsed): Promise<number>;
}

/** snarkjs's option spellings (any number of leading dashes; `-name=value`) and what they mean here. */
export const SNARKJS_OPTIONS: ReadonlyMap<string, string> = new Map(
  [["v", "--verbose"], ["verbose", "--verbose"], ["protocol", "--protocol"], ["h", "--help"], ["help", "--help"]]
    .flatMap(([name, flag]) => [[`-${name}`, flag], [`--${name}`, flag]] as Array<[string, string]>),
);

/** Refuses a --protocol other than groth16 (snarkjs's prove commands take one). */
function groth16Only(p: Parsed): void {
  const protocol = p.flags.get("--protocol");
  if (protocol !== undefined && protocol !== true && protocol !== "groth16") {
    throw new UsageError(`cuzk proves groth16 only, not --protocol=${protocol}`);
  }
}

export const SNARKJS_COMMANDS: SnarkjsCommand[] = [
  {
    words: "groth16 prove",
    aliases: ["g16p", "zpw", "zksnark proof", "proof"],
    files: ["circuit_final.zkey", "witness.wtns", "proof.json", "public.json"],
    description: "a proof from a witness",
    run([zkey, wtns, proof, pub], p) {
      groth16Only(p);
      return proveWith({ wtns }, { zkey, proof, public: pub }, p);
    },
  },
  {
    words: "groth16 fullprove",
    aliases: ["g16f", "g16i"],
    files: ["input.json", "circuit.wasm", "circuit_final.zkey", "proof.json", "public.json"],
    description: "a proof from circuit inputs (the witness from circuit.wasm)",
    run([input, wasm, zkey, proof, pub], p) {
      groth16Only(p);
      return proveWith({ input, wasm }, { zkey, proof, public: pub }, p);
    },
  },
  {
    words: "groth16 verify",
    aliases: ["g16v"],
    files: ["verification_key.json", "public.json", "proof.json"],
    description: "checks a proof: OK! and exit 0, or exit 1",
    run: ([vk, pub, proof]) => verifyFiles(vk, pub, proof),
  },
  {
    words: "wtns calculate",
    aliases: ["wc", "calculatewitness"],
    files: ["circuit.wasm", "input.json", "witness.wtns"],
    description: "the witness of circuit inputs, as a .wtns file",
    async run([wasm, input, out]) {
      checkOutputs([{ path: out, what: "witness" }], [{ path: wasm, what: "witness generator" }, { path: input, what: "circuit inputs" }]);
      const bytes = await wtns.calculate(readJson(input, "circuit inputs") as CircuitInput, wasm, { type: "mem" });
      writeOutputs([{ path: out, what: "witness", data: bytes }]);
      return EXIT.ok;
    },
  },
  {
    words: "zkey export verificationkey",
    aliases: ["zkev"],
    // snarkjs's help says verification_key.json, but the name it writes by default is this one.
    files: ["circuit_final.zkey", "circuit_vk.json"],
    description: "the verification key of a .zkey, as verification_key.json",
    async run([zkey, out]) {
      checkOutputs([{ path: out, what: "verification key" }], [{ path: zkey, what: "key" }]);
      writeJson(out, await zKey.exportVerificationKey(zkey), "verification key");
      return EXIT.ok;
    },
  },
  {
    words: "zkey export soliditycalldata",
    aliases: ["zkesc", "generatecall"],
    files: ["public.json", "proof.json"],
    description: "the arguments of the Solidity verifier's verifyProof, on stdout",
    async run([pubPath, proofPath]) {
      const pub = readJson(pubPath, "public signals");
      const proof = readJson(proofPath, "proof") as Record<string, unknown>;
      if (!Array.isArray(pub)) throw new CuzkError("FORMAT", `${pubPath} must hold a JSON array of decimal strings`);
      if (proof?.protocol !== "groth16") throw new CuzkError("UNSUPPORTED", `${proofPath} is a ${proof?.protocol} proof; cuzk exports groth16 calldata only`);
      process.stdout.write((await groth16.exportSolidityCallData(proof, pub)) + "\n");
      return EXIT.ok;
    },
  },
  {
    words: "zkey export solidityverifier",
    // snarkjs's `generateverifier` also names its files with -vk and -v options; cuzk takes them in order.
    aliases: ["zkesv", "generateverifier"],
    files: ["circuit_final.zkey", "verifier.sol"],
    description: "the Groth16 verifier contract of a BN254 key (snarkjs's template, from the installed snarkjs)",
    run: ([zkey, out]) => exportSolidityVerifier(zkey, out),
  },
  {
    words: "wtns check",
    aliases: ["wchk"],
    files: ["circuit.r1cs", "witness.wtns"],
    description: "checks the witness against every constraint: exit 0, or 1 at the first that fails",
    run: ([r1cs, wtns]) => Promise.resolve(wtnsCheck(r1cs, wtns)),
  },
  {
    words: "r1cs info",
    // snarkjs's other alias, `info`, is cuzk's own command.
    aliases: ["ri"],
    files: ["circuit.r1cs"],
    description: "the circuit's curve, wires, constraints, inputs, labels and outputs",
    run: ([r1cs]) => Promise.resolve(r1csInfo(r1cs)),
  },
];

/**
 * snarkjs's commands (node_modules/snarkjs/cli.js) that cuzk does not run: ceremonies, other
 * protocols, exports and inspections. Asked for one, cuzk names the snarkjs command line to run
 * instead, rather than an error about an option or a word it does not know.
 */
const SNARKJS_ONLY = [
  "powersoftau new", "powersoftau contribute", "powersoftau export challenge", "powersoftau challenge contribute",
  "powersoftau import response", "powersoftau beacon", "powersoftau prepare phase2", "powersoftau convert",
  "powersoftau truncate", "powersoftau verify", "powersoftau export json",
  "r1cs print", "r1cs export json",
  "wtns debug", "wtns export json",
  "zkey contribute", "zkey export bellman", "zkey bellman contribute", "zkey import bellman", "zkey beacon",
  "zkey verify r1cs", "zkey verify init", "zkey export json",
  "groth16 setup", "zksnark setup",
  "plonk setup", "plonk prove", "plonk fullprove", "plonk verify",
  "fflonk setup", "fflonk prove", "fflonk fullprove", "fflonk verify",
  "file info", "witness verify",
].map((words) => words.split(" "));

/**
 * When `argv` asks for a snarkjs command cuzk does not run: the message that says so and gives
 * the snarkjs command line (the user's own arguments) to run instead; else undefined.
 */
export function snarkjsOnly(argv: readonly string[]): string | undefined {
  const words = argv.map((word) => word.toLowerCase());
  const match = SNARKJS_ONLY.find((command) => command.every((word, i) => words[i] === word));
  if (!match) return undefined;
  const name = match.join(" ");
  const quoted = argv.map((arg) => (/^[\w./:=@%+,-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`)).join(" ");
  return `"${name}" is snarkjs's, not cuzk's (cuzk proves, verifies, checks witnesses and exports verification keys, calldata and verifier contracts; setups, ceremonies and other protocols stay with snarkjs): run it with snarkjs, e.g. npx snarkjs ${quoted}`;
}

/** The command whose words (or an alias's) begin `positional`, and the file names after them. */
export function matchSnarkjs(positional: string[]): { command: SnarkjsCommand; rest: string[] } | undefined {
  for (const command of SNARKJS_COMMANDS) {
    for (const spelling of [command.words, ...command.aliases]) {
      const words = spelling.split(" ");
      if (words.every((word, i) => positional[i]?.toLowerCase() === word)) return { command, rest: positional.slice(words.length) };
    }
  }
  return undefined;
}

/** Runs a matched snarkjs command: missing file names take snarkjs's defaults; more than it takes is a usage error. */
export async function runSnarkjs(command: SnarkjsCommand, rest: string[], p: Parsed): Promise<number> {
  if (rest.length > command.files.length) {
    const files = `${command.files.length} file${command.files.length === 1 ? "" : "s"}`;
    throw new UsageError(`${command.words} takes at most ${files} (${command.files.join(" ")}), not ${rest.length}`);
  }
  const files = command.files.map((fallback, i) => rest[i] ?? fallback);
  return await command.run(files, p);
}

/** One line per snarkjs command: how to call it and its aliases. */
export function snarkjsUsage(command?: SnarkjsCommand): string {
  const line = (c: SnarkjsCommand) =>
    `  cuzk ${c.words} ${c.files.map((f) => `[${f}]`).join(" ")}\n      (${c.aliases.join(", ")}) ${c.description}`;
  return (command ? [command] : SNARKJS_COMMANDS).map(line).join("\n");
}
