/**
 * @module
 * snarkjs's own verifier over the proofs a test made, all in one Node process
 * (tests/support/snarkjs_verify.mjs): the tests never trust the library's word about its own output.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("./snarkjs_verify.mjs", import.meta.url));

/** One proof to check: a name unique among the cases, its verification key's path, the snarkjs JSON. */
export interface SnarkjsCase {
  name: string;
  vkey: string;
  publicSignals: unknown;
  proof: unknown;
}

/** snarkjs's verdict on each case by name: true, false, or "error: ..." when it threw. */
export function snarkjsVerdicts(cases: SnarkjsCase[], timeoutMs = 300_000): Record<string, unknown> {
  const dir = mkdtempSync(join(tmpdir(), "cuzk-snarkjs-"));
  try {
    writeFileSync(join(dir, "cases.json"), JSON.stringify(cases));
    const output = execFileSync("node", [SCRIPT, join(dir, "cases.json")], { encoding: "utf8", timeout: timeoutMs });
    return JSON.parse(output.trim().split("\n").pop()!);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Fails unless snarkjs accepts every one of `cases` (and answered for each). */
export function assertSnarkjsAccepts(cases: SnarkjsCase[], timeoutMs?: number): void {
  const verdicts = snarkjsVerdicts(cases, timeoutMs);
  assert.deepEqual(Object.entries(verdicts).filter(([, ok]) => ok !== true), [], "proofs snarkjs does not accept");
  assert.equal(Object.keys(verdicts).length, cases.length);
}
