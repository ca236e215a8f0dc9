#!/usr/bin/env -S deno run --allow-all
/**
 * @module
 * Example: prove the bundled Poseidon circuit from its inputs with cuzk, verify the proof and print
 * where the time went. A Deno script that also runs unchanged under Bun and Node >= 24. Run from
 * the repository root after building the native library:
 *
 *   deno run -A examples/prove.ts [fixture directory] [--backend auto|cpu|cuda]
 *   bun examples/prove.ts ...        node examples/prove.ts ...   (Node >= 24)
 *
 * The directory (default tests/fixtures/bn254/poseidon_10) holds what circom and snarkjs make for
 * a circuit: circuit.wasm, circuit.zkey, verification_key.json and input.json.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { groth16, Library, phaseTable, Prover } from "../mod.ts";
import type { BackendName, CircuitInput, VerificationKeyJson } from "../mod.ts";

const args = process.argv.slice(2);
const backendAt = args.indexOf("--backend");
const backend = (backendAt >= 0 ? args.splice(backendAt, 2)[1] : "auto") as "auto" | BackendName;
const dir = args[0] ?? fileURLToPath(new URL("../tests/fixtures/bn254/poseidon_10/", import.meta.url));

const input = JSON.parse(readFileSync(join(dir, "input.json"), "utf8")) as CircuitInput;
const vkey = JSON.parse(readFileSync(join(dir, "verification_key.json"), "utf8")) as VerificationKeyJson;

const library = Library.default();
console.log(`cuzk ${library.info().version} from ${library.path} (backends: ${library.info().backends.join(", ")})`);

// One prover for the key: it maps the .zkey once and keeps its workspace between proofs.
using prover = await Prover.open({ zkey: join(dir, "circuit.zkey"), backend });
console.log(`key: ${prover.info.curve}, ${prover.info.nConstraints} constraints, ${prover.info.nPublic} public signal(s); proving on ${prover.backend}`);

const { proof, publicSignals, timings } = await groth16.fullProve(input, join(dir, "circuit.wasm"), prover);
const valid = await groth16.verify(vkey, publicSignals, proof);
console.log(`public signals: ${JSON.stringify(publicSignals)}`);
console.log(`proof verifies: ${valid}`);
console.log(`${"witness (circuit.wasm)".padEnd(22)} ${timings.witnessMs.toFixed(2).padStart(9)} ms`);
console.log(phaseTable(timings));
process.exitCode = valid ? 0 : 1;

