#!/usr/bin/env node
/**
 * @module
 * snarkjs's own verifier over many proofs in one process (starting snarkjs once per proof costs a
 * second each): the tests never trust the library's word about its own output.
 *
 *   node tests/support/snarkjs_verify.mjs <cases.json>
 *
 * cases.json: [{ "name", "vkey": <path>, "publicSignals": [...], "proof": {...} }, ...].
 * Prints one JSON line: { "<name>": true | false | "error: ..." } and exits 0.
 */
import { readFileSync } from "node:fs";
import * as snarkjs from "snarkjs";

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = {};
for (const c of cases) {
  try {
    results[c.name] = await snarkjs.groth16.verify(JSON.parse(readFileSync(c.vkey, "utf8")), c.publicSignals, c.proof);
  } catch (error) {
    results[c.name] = `error: ${String(error?.message ?? error).split("\n")[0]}`;
  }
}
console.log(JSON.stringify(results));
process.exit(0); // ffjavascript's worker threads would keep the process alive
