/**
 * @module
 * Promise: the example in examples/ runs as its README says and reports a verified proof. It is a
 * Deno script, so it runs under `deno test` and is skipped under Bun and Node.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const isDeno = "Deno" in globalThis;

test("examples/prove.ts proves the bundled circuit, verifies it and prints the phases", { skip: isDeno ? false : "a Deno script: runs under deno test" }, () => {
  const r = spawnSync(process.execPath, ["run", "-A", "examples/prove.ts", "--backend", "cpu"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /proof verifies: true/);
  assert.match(r.stdout, /msm_h\s+[\d.]+ ms/);
  assert.match(r.stdout, /witness \(circuit\.wasm\)/);
});
