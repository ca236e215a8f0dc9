/**
 * @module
 * Promise: a CommonJS program loads cuzk with `require` (the module graph has no top-level await,
 * which `require` of an ES module refuses) and proves with it. Runs a .cjs file as a child process
 * of whichever runtime runs the tests; the package's own CommonJS consumer runs in
 * tools/package_test.sh against the installed tarballs.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { needs } from "./support/native.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

test("require() of the package proves and verifies from a CommonJS program", needs("cuzk_prove", "cuzk_key_open"), () => {
  const dir = mkdtempSync(join(tmpdir(), "cuzk-cjs-"));
  try {
    const fixture = join(ROOT, "tests", "fixtures", "bn254", "mulchain_4");
    const program = join(dir, "prove.cjs");
    writeFileSync(program, `
const { readFileSync } = require("node:fs");
const { groth16, Prover } = require(${JSON.stringify(join(ROOT, "mod.ts"))});
(async () => {
  const prover = await Prover.open({ zkey: ${JSON.stringify(join(fixture, "circuit.zkey"))}, backend: "cpu" });
  try {
    const { proof, publicSignals } = await groth16.prove(prover, ${JSON.stringify(join(fixture, "witness.wtns"))});
    const vkey = JSON.parse(readFileSync(${JSON.stringify(join(fixture, "verification_key.json"))}, "utf8"));
    console.log(await groth16.verify(vkey, publicSignals, proof) ? "verified" : "NOT VERIFIED");
  } finally {
    prover.close();
  }
})().catch((e) => { console.error(e); process.exit(1); });
`);
    const runtime = "Deno" in globalThis ? ["run", "-A", program] : [program];
    const r = spawnSync(process.execPath, runtime, { cwd: dir, encoding: "utf8", timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^verified$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
