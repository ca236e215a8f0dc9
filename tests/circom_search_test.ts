/**
 * @module
 * Promise: `witness compile` finds circom 2 the way the user's project would: `$CIRCOM` as a path
 * relative to the working folder (or absolute, or a command name), `circom` or `circom2` on PATH,
 * the npm package circom2 in the node_modules of the working folder or a folder above it, then
 * cuzk's own; a `$CIRCOM` that names no file is refused naming the path it looked at.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { findCircom } from "../src/witness/compile.ts";

const work = mkdtempSync(join(tmpdir(), "cuzk-circom-"));
after(() => rmSync(work, { recursive: true, force: true }));
const NOWHERE = join(work, "no-bin");

test("$CIRCOM: a path relative to the working folder, an absolute one, or a command name", () => {
  const project = join(work, "p1");
  mkdirSync(join(project, "tools"), { recursive: true });
  writeFileSync(join(project, "tools", "circom"), "#!/bin/sh\necho circom 2.1.9\n");
  chmodSync(join(project, "tools", "circom"), 0o755);
  assert.deepEqual(findCircom({ env: { CIRCOM: "./tools/circom", PATH: NOWHERE }, cwd: project }), [join(project, "tools", "circom")]);
  assert.deepEqual(findCircom({ env: { CIRCOM: join(project, "tools", "circom"), PATH: NOWHERE }, cwd: "/" }), [join(project, "tools", "circom")]);
  assert.deepEqual(findCircom({ env: { CIRCOM: "my-circom", PATH: NOWHERE }, cwd: project }), ["my-circom"]);
  assert.throws(() => findCircom({ env: { CIRCOM: "./missing/circom", PATH: NOWHERE }, cwd: project }), (e: Error & { code?: string }) =>
    e.code === "IO" && e.message.includes(join(project, "missing", "circom")));
});

test("circom, then circom2, on PATH", () => {
  const bin = join(work, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "circom2"), "#!/bin/sh\necho circom 2.1.9\n");
  chmodSync(join(bin, "circom2"), 0o755);
  assert.deepEqual(findCircom({ env: { PATH: bin }, cwd: work }), ["circom2"]);
  writeFileSync(join(bin, "circom"), "#!/bin/sh\necho circom compiler 2.1.9\n");
  chmodSync(join(bin, "circom"), 0o755);
  assert.deepEqual(findCircom({ env: { PATH: bin }, cwd: work }), ["circom"]);
});

test("the npm package circom2 in the project's node_modules, from a folder below it, before cuzk's own", () => {
  const project = join(work, "p2");
  const cli = join(project, "node_modules", "circom2", "cli.js");
  mkdirSync(join(project, "node_modules", "circom2"), { recursive: true });
  mkdirSync(join(project, "circuits", "deep"), { recursive: true });
  writeFileSync(cli, "");
  const found = findCircom({ env: { PATH: NOWHERE }, cwd: join(project, "circuits", "deep") });
  assert.equal(found.at(-1), cli);
  // Outside any project: cuzk's own dependency.
  const own = fileURLToPath(new URL("../node_modules/circom2/cli.js", import.meta.url));
  assert.equal(findCircom({ env: { PATH: NOWHERE }, cwd: work }).at(-1), own);
});
