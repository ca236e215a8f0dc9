/**
 * @module
 * Promise: the example in examples/ runs as its README says, in the runtime that runs the tests,
 * and reports a verified proof with its phase timings.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

test("examples/prove.ts proves the bundled circuit, verifies it and prints the phases", () => {
  const script = ["examples/prove.ts", "--backend", "cpu"];
  const r = spawnSync(process.execPath, "Deno" in globalThis ? ["run", "-A", ...script] : script, { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /proof verifies: true/);
  assert.match(r.stdout, /^msm_h\s+[\d.]+\s+[\d.]+\s+[\d.]+$/m); // the phase table (start, end, took)
  assert.match(r.stdout, /witness \(circuit\.wasm\)/);
});

test("under Deno, the permissions the README lists are enough (no -A)", { skip: "Deno" in globalThis ? false : "a Deno-only promise" }, () => {
  // README, "Use cuzk in your project": the flags a Deno user is told to pass.
  const readme = spawnSync(process.execPath, ["eval", "console.log(Deno.readTextFileSync('README.md'))"], { cwd: ROOT, encoding: "utf8" }).stdout;
  const listed = /run with -A, or ((?:--allow-[a-z]+ ?)+)/.exec(readme);
  assert.ok(listed, "the README lists Deno's permissions");
  const flags = listed[1].trim().split(/\s+/);
  const r = spawnSync(process.execPath, ["run", ...flags, "examples/prove.ts", "--backend", "cpu"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, `with ${flags.join(" ")}: ${r.stderr}`);
  assert.match(r.stdout, /proof verifies: true/);
});
