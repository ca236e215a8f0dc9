/**
 * @module
 * Promise: cuzk is a drop-in for snarkjs's proving surface. snarkjs's own CLI
 * (node node_modules/snarkjs/cli.js) and ours run the same command lines on the same committed
 * fixtures, both curves, with and without public signals, and give: the same .wtns, verification
 * key, public.json and calldata byte for byte, the same exit statuses (0, 1 for a proof that does
 * not verify or a missing file, 99 for a command line neither can use), and proofs (random, so
 * different) that snarkjs's verifier accepts, as ours accepts snarkjs's. `zkey export
 * solidityverifier` writes snarkjs's verifier.sol byte for byte (BN254; BLS12-381, for which
 * snarkjs fills its BN254 template with values that overflow it, is refused); `r1cs info` and
 * `wtns check` print snarkjs's lines (less its logger's prefix) with its verdicts. In process, the
 * JS API takes the file forms snarkjs takes and returns its shapes and text; bad input is a CuzkError.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { curveOf, CuzkError, groth16, synthCircuit, wtns, zKey } from "../mod.ts";
import type { CircuitInput, Groth16Proof } from "../mod.ts";
import { snarkjsJson } from "../cli/io.ts";
import { findSnarkjs } from "../cli/solidity_verifier.ts";
import { fixtures, needs } from "./support/native.ts";
import type { Fixture } from "./support/native.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "cli.ts");
const SNARKJS = join(ROOT, "node_modules", "snarkjs", "cli.js");
const work = mkdtempSync(join(tmpdir(), "cuzk-compat-"));
after(() => rmSync(work, { recursive: true, force: true }));

const proverApi = ["cuzk_key_open", "cuzk_key_open_memory", "cuzk_prover_create", "cuzk_prove", "cuzk_verify", "cuzk_key_export_vk_alphabeta"] as const;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (a timeout turns a hang into a failure). */
function run(command: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
    let stdout = "", stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** snarkjs's CLI under plain Node. */
const snarkjs = (args: string[], cwd: string) => run("node", [SNARKJS, ...args], cwd);

/** The same command line run by snarkjs's CLI (plain Node) and ours (the runtime running this file) at once, each in its folder. */
function both(args: string[], cwd: { snarkjs: string; cuzk: string }): Promise<[Ran, Ran]> {
  const ours = "Deno" in globalThis ? ["run", "-A", CLI] : [CLI];
  return Promise.all([snarkjs(args, cwd.snarkjs), run(process.execPath, [...ours, ...args], cwd.cuzk)]);
}

/** Each command line's exit status is the same from both CLIs, and ours says why in one line on stderr. */
async function sameExits(cases: Array<[string[], number]>, dirs: { snarkjs: string; cuzk: string }): Promise<void> {
  for (const [args, code] of cases) {
    const [s, c] = await both(args, dirs);
    assert.equal(s.code, code, `snarkjs ${args.join(" ")}: ${s.stdout}`);
    assert.equal(c.code, code, `cuzk ${args.join(" ")}: ${c.stderr}`);
    assert.equal(c.stderr.trim().split("\n").length, 1, `one line on stderr: ${c.stderr}`);
    assert.match(c.stderr, /^cuzk: /);
  }
}

const pick = (curve: string, name: string): Fixture => {
  const found = fixtures().find((f) => f.curve === curve && f.name === name);
  assert.ok(found, `fixture ${curve}/${name} is committed`);
  return found;
};

/** Two folders, one per CLI, each holding the fixture's files under snarkjs's default names. */
function workspace(label: string, fixture: Fixture): { snarkjs: string; cuzk: string } {
  const dirs = { snarkjs: join(work, label, "snarkjs"), cuzk: join(work, label, "cuzk") };
  for (const dir of Object.values(dirs)) {
    mkdirSync(dir, { recursive: true });
    copyFileSync(fixture.file("circuit.zkey"), join(dir, "circuit_final.zkey"));
    copyFileSync(fixture.file("circuit.wasm"), join(dir, "circuit.wasm"));
    copyFileSync(fixture.file("input.json"), join(dir, "input.json"));
  }
  return dirs;
}

const read = (dir: string, name: string) => readFileSync(join(dir, name));
const sameBytes = (dirs: { snarkjs: string; cuzk: string }, name: string, label: string) =>
  assert.ok(read(dirs.snarkjs, name).equals(read(dirs.cuzk, name)), `${label}: ${name} differs from snarkjs's:\n${read(dirs.cuzk, name)}\n---\n${read(dirs.snarkjs, name)}`);
const sameExit = ([s, c]: [Ran, Ran], code: number, label: string) => {
  assert.equal(s.code, code, `${label}: snarkjs exit ${s.code}: ${s.stdout}${s.stderr}`);
  assert.equal(c.code, code, `${label}: cuzk exit ${c.code}: ${c.stderr}`);
};

const isCuzk = (code: string, pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof CuzkError, `a CuzkError, got ${error}`);
  assert.equal(error.code, code, error.message);
  if (pattern) assert.match(error.message, pattern);
  return true;
};

/**
 * Every supported command on one fixture, both CLIs: under snarkjs's words with its default file
 * names ("words"), or under its aliases with every file named ("aliases").
 */
async function compareOn(fixture: Fixture, spelling: "words" | "aliases"): Promise<void> {
  const label = `${fixture.curve}/${fixture.name} (${spelling})`;
  const dirs = workspace(`${fixture.curve}-${fixture.name}`, fixture);
  const same = (args: string[]) => both(args, dirs);
  const words = spelling === "words";
  const say = (long: string, alias: string, ...files: string[]) => [...(words ? long.split(" ") : [alias]), ...files];

  // wtns calculate; zkey export verificationkey (snarkjs's default name is circuit_vk.json).
  sameExit(await same(words ? ["wtns", "calculate"] : ["wc", "circuit.wasm", "input.json", "witness.wtns"]), 0, `${label} wtns calculate`);
  sameBytes(dirs, "witness.wtns", label);
  const vk = words ? "circuit_vk.json" : "verification_key.json";
  sameExit(await same(words ? ["zkey", "export", "verificationkey"] : ["zkev", "circuit_final.zkey", vk]), 0, `${label} zkey export verificationkey`);
  sameBytes(dirs, vk, label);
  assert.deepEqual(JSON.parse(read(dirs.cuzk, vk).toString()), fixture.json("verification_key.json"));

  // groth16 prove and fullprove: public.json byte for byte; each side's proof checked by the other's verifier.
  sameExit(await same(words ? ["groth16", "prove"] : ["g16p", "circuit_final.zkey", "witness.wtns", "proof.json", "public.json"]), 0, `${label} groth16 prove`);
  sameBytes(dirs, "public.json", label);
  if (fixture.json<string[]>("public.json").length === 0) assert.equal(read(dirs.cuzk, "public.json").toString(), "[\n]", "snarkjs's form, not []");
  const fullprove = say("groth16 fullprove", "g16f", "input.json", "circuit.wasm", "circuit_final.zkey", "full_proof.json", "full_public.json");
  sameExit(await same(fullprove), 0, `${label} groth16 fullprove`);
  sameBytes(dirs, "full_public.json", label);
  for (const [proof, pub] of [["proof.json", "public.json"], ["full_proof.json", "full_public.json"]]) {
    const proofs = { snarkjs: read(dirs.snarkjs, proof), cuzk: read(dirs.cuzk, proof) };
    assert.ok(!proofs.snarkjs.equals(proofs.cuzk), "fresh randomness on each side");
    // The other side's proof, under the same name: each verifier checks the other's proof.
    writeFileSync(join(dirs.snarkjs, `other_${proof}`), proofs.cuzk);
    writeFileSync(join(dirs.cuzk, `other_${proof}`), proofs.snarkjs);
    const verdicts = await same(say("groth16 verify", "g16v", vk, pub, `other_${proof}`));
    sameExit(verdicts, 0, `${label} groth16 verify of the other side's ${proof}`);
    assert.match(verdicts[0].stdout, /OK!/);
    assert.match(verdicts[1].stdout, /^OK!$/m);
    // The proof shape snarkjs writes: the same keys in the same order, and laid out as snarkjs lays
    // out its own (random points differ, so the layout is compared through one writer).
    const parsed = { snarkjs: JSON.parse(proofs.snarkjs.toString()), cuzk: JSON.parse(proofs.cuzk.toString()) };
    assert.deepEqual(Object.keys(parsed.cuzk), Object.keys(parsed.snarkjs));
    assert.equal(snarkjsJson(parsed.snarkjs), proofs.snarkjs.toString(), "cli/io.ts writes snarkjs's proof.json byte for byte");
    assert.equal(snarkjsJson(parsed.cuzk), proofs.cuzk.toString());
  }

  // zkey export soliditycalldata of the same files (snarkjs's proof): the same text on stdout.
  const calldata = await same(say("zkey export soliditycalldata", "zkesc", join(dirs.snarkjs, "public.json"), join(dirs.snarkjs, "proof.json")));
  sameExit(calldata, 0, `${label} zkey export soliditycalldata`);
  assert.equal(calldata[1].stdout, calldata[0].stdout, `${label}: calldata`);
  assert.match(calldata[1].stdout, /^\["0x[0-9a-f]{64,}/);

  // A proof that does not verify (proof points swapped, or a public signal changed): exit 1 on both sides.
  const signals = JSON.parse(read(dirs.cuzk, "public.json").toString()) as string[];
  const proof = JSON.parse(read(dirs.cuzk, "proof.json").toString()) as Groth16Proof;
  for (const dir of Object.values(dirs)) {
    writeFileSync(join(dir, "bad_proof.json"), JSON.stringify({ ...proof, pi_a: proof.pi_c, pi_c: proof.pi_a }));
    writeFileSync(join(dir, "bad_public.json"), JSON.stringify(signals.map((s, i) => (i === 0 ? String(BigInt(s) + 1n) : s))));
  }
  sameExit(await same(say("groth16 verify", "g16v", vk, "public.json", "bad_proof.json")), 1, `${label} verify of a changed proof`);
  if (signals.length > 0) sameExit(await same(say("groth16 verify", "g16v", vk, "bad_public.json", "other_proof.json")), 1, `${label} verify with a changed signal`);
}

const CASES = [["bn254", "mulchain_8", "words"], ["bls12_381", "mulchain_8", "aliases"], ["bn254", "zero_public", "aliases"], ["bls12_381", "zero_public", "words"]] as const;
for (const [curve, name, spelling] of CASES) {
  test(`snarkjs's CLI and ours on ${curve}/${name} (${spelling}): wtns calculate, zkey export verificationkey, groth16 prove/fullprove/verify, soliditycalldata`, needs(...proverApi), async () => {
    await compareOn(pick(curve, name), spelling);
  });
}

test("exit statuses of both CLIs: missing file 1, too many files 99, unknown command 99; --version and --help", needs(...proverApi), async () => {
  const dirs = workspace("exits", pick("bn254", "mulchain_8"));
  const cases: Array<[string[], number]> = [
    [["g16v", "missing_vk.json", "public.json", "proof.json"], 1],
    [["groth16", "prove", "missing.zkey", "witness.wtns"], 1],
    [["wtns", "calculate", "circuit.wasm", "missing_input.json", "w.wtns"], 1],
    [["zkev", "missing.zkey", "vk.json"], 1],
    [["zkesc", "missing_public.json", "proof.json"], 1],
    [["g16v", "a.json", "b.json", "c.json", "d.json"], 99],
    [["g16p", "a", "b", "c", "d", "e"], 99],
    [["frobnicate"], 99],
  ];
  await sameExits(cases, dirs);
  const [version, help] = await Promise.all([both(["--version"], dirs), both(["-h"], dirs)]);
  assert.match(version[0].stdout, /^snarkjs@/); // snarkjs prints its version with its help (exit 99)
  assert.equal(version[1].code, 0);
  assert.match(version[1].stdout, /^cuzk@\d+\.\d+\.\d+\n$/);
  assert.equal(help[1].code, 0);
  const listed = ["groth16 prove", "groth16 fullprove", "groth16 verify", "wtns calculate", "wtns check", "zkey export verificationkey", "zkey export soliditycalldata", "zkey export solidityverifier", "r1cs info"];
  for (const words of [...listed, "g16p", "zkesc", "zkesv", "wchk", "ri"]) {
    assert.ok(help[1].stdout.includes(words), `--help names ${words}`);
  }
});

test("snarkjs commands cuzk does not run are refused with the snarkjs command line to run instead, before their options are read", needs(...proverApi), async () => {
  const dirs = workspace("elsewhere", pick("bn254", "mulchain_8"));
  const ours = "Deno" in globalThis ? ["run", "-A", CLI] : [CLI];
  const cases: string[][] = [
    ["groth16", "setup", "circuit.r1cs", "pot.ptau", "circuit_0000.zkey"],
    ["zkey", "contribute", "circuit_0000.zkey", "circuit_0001.zkey", "--name=First contribution", "-v", "-e=entropy"],
    ["powersoftau", "new", "bn128", "12", "pot12_0000.ptau"],
    ["ZKEY", "export", "json", "circuit_final.zkey", "circuit_final.zkey.json"],
    ["plonk", "prove", "circuit.zkey", "witness.wtns"],
    ["r1cs", "print", "circuit.r1cs", "circuit.sym"],
    ["wtns", "export", "json", "witness.wtns", "witness.json"],
  ];
  for (const args of cases) {
    const c = await run(process.execPath, [...ours, ...args], dirs.cuzk);
    assert.equal(c.code, 99, `cuzk ${args.join(" ")}: ${c.stderr}`);
    assert.equal(c.stderr.trim().split("\n").length, 1, c.stderr);
    assert.match(c.stderr, new RegExp(`"${args.slice(0, args[1] === "export" ? 3 : 2).join(" ").toLowerCase()}" is snarkjs's, not cuzk's`));
    // The line to run is the user's own, options and all, quoted for a shell where needed.
    assert.ok(c.stderr.includes(`npx snarkjs ${args.map((a) => (/^[\w./:=@%+,-]+$/.test(a) ? a : `'${a}'`)).join(" ")}`), c.stderr);
    assert.doesNotMatch(c.stderr, /unknown (option|command)/);
  }
  const typo = await run(process.execPath, [...ours, "groth16", "sett"], dirs.cuzk);
  assert.equal(typo.code, 99);
  assert.match(typo.stderr, /unknown command "groth16 sett"/);
});

/** snarkjs's log lines as cuzk prints them: without colours and without the `[INFO]  snarkJS: ` prefix. */
const logLines = (stdout: string) =>
  stdout.replace(/\x1b\[[0-9;]*m/g, "").split("\n").filter((line) => line !== "").map((line) => line.replace(/^\[(INFO|WARN)\]  snarkJS: /, ""));

/** Both CLIs printed the same lines (snarkjs's as logLines reads them) and exited `code`. */
function sameLines(ran: [Ran, Ran], code: number, label: string): void {
  sameExit(ran, code, label);
  assert.deepEqual(ran[1].stdout.split("\n").filter((line) => line !== ""), logLines(ran[0].stdout), `${label}: cuzk's lines are snarkjs's`);
  assert.equal(ran[1].stdout.endsWith("\n"), true, `${label}: whole lines`);
}

/** Where a .wtns of 32-byte values (both curves) keeps its count and its values (magic, version, sections; n8, q, count; section 2's header). */
const WTNS_COUNT_AT = 12 + 12 + 4 + 32, WTNS_VALUES_AT = WTNS_COUNT_AT + 4 + 12;
const wtnsCount = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset).getUint32(WTNS_COUNT_AT, true);

/** A copy of a .wtns with value `index` changed by `change` (mod 2^256). */
function changedWitness(bytes: Uint8Array, index: number, change: (value: bigint) => bigint): Uint8Array {
  const out = new Uint8Array(bytes);
  const at = WTNS_VALUES_AT + index * 32;
  assert.equal(out.length, WTNS_VALUES_AT + wtnsCount(bytes) * 32, "a .wtns of 32-byte values");
  let value = 0n;
  for (let i = 31; i >= 0; i--) value = (value << 8n) | BigInt(out[at + i]);
  value = BigInt.asUintN(256, change(value));
  for (let i = 0; i < 32; i++) out[at + i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return out;
}

test("zkey export solidityverifier: snarkjs's verifier.sol byte for byte for BN254 keys (words and default names, both aliases); BLS12-381 refused", needs(...proverApi), async () => {
  const spellings: Array<[string, string[]]> = [
    ["mulchain_8", ["zkey", "export", "solidityverifier"]],
    ["zero_public", ["zkesv", "circuit_final.zkey", "verifier.sol"]],
    ["many_public", ["generateverifier", "circuit_final.zkey", "verifier.sol"]],
  ];
  for (const [name, args] of spellings) {
    const label = `bn254/${name} ${args[0]}`;
    const dirs = workspace(`solidity-${name}`, pick("bn254", name));
    sameExit(await both(args, dirs), 0, label);
    sameBytes(dirs, "verifier.sol", label);
    const code = read(dirs.cuzk, "verifier.sol").toString();
    assert.match(code, /contract Groth16Verifier/, label);
    const nPublic = pick("bn254", name).json<{ nPublic: number }>("verification_key.json").nPublic;
    assert.ok(code.includes(`uint[${nPublic}] calldata _pubSignals`), `${label}: ${nPublic} public signals`);
  }
  // snarkjs fills its BN254 template with the BLS12-381 key's 381-bit coordinates (they overflow its
  // uint256 constants, so the contract does not compile); cuzk refuses and writes nothing.
  const dirs = workspace("solidity-bls", pick("bls12_381", "mulchain_8"));
  const [s, c] = await both(["zkesv"], dirs);
  assert.equal(s.code, 0, s.stdout);
  const constants = [...read(dirs.snarkjs, "verifier.sol").toString().matchAll(/uint256 constant \w+\s*=\s*(\d+);/g)].map((m) => BigInt(m[1]));
  assert.ok(constants.some((value) => value >= 2n ** 256n), "snarkjs's BLS12-381 contract holds constants beyond uint256");
  assert.equal(c.code, 1, c.stderr);
  assert.match(c.stderr, /^cuzk: .*bls12381.*bn128 \(BN254\) only/);
  assert.equal(c.stderr.trim().split("\n").length, 1, c.stderr);
  assert.equal(existsSync(join(dirs.cuzk, "verifier.sol")), false, "nothing written");
});

test("zkey export solidityverifier takes the template of the snarkjs the current project installs, else cuzk's own; without one it says how to install it", needs(...proverApi), async () => {
  const own = findSnarkjs();
  assert.equal(own.version, JSON.parse(readFileSync(join(ROOT, "node_modules", "snarkjs", "package.json"), "utf8")).version);
  assert.ok(existsSync(join(own.dir, "templates", "verifier_groth16.sol.ejs")), own.dir);
  const bare = join(work, "no-snarkjs");
  mkdirSync(bare, { recursive: true });
  assert.throws(() => findSnarkjs([join(bare, "package.json")]), isCuzk("UNSUPPORTED", /not installed.*`npm install snarkjs`/));

  // A project whose own snarkjs has another template (written here, with ejs beside it): that one is filled.
  const project = join(work, "project");
  const fake = join(project, "node_modules", "snarkjs");
  mkdirSync(join(fake, "templates"), { recursive: true });
  writeFileSync(join(fake, "package.json"), JSON.stringify({ name: "snarkjs", version: "0.0.1-test", main: "index.js" }));
  writeFileSync(join(fake, "index.js"), "module.exports = {};\n");
  writeFileSync(join(fake, "templates", "verifier_groth16.sol.ejs"), "alpha <%= vk_alpha_1[0] %>, <%= nPublic %> public<% for (const p of IC) { %> <%= p[1] %><% } %>\n");
  const ejs = existsSync(join(own.dir, "node_modules", "ejs")) ? join(own.dir, "node_modules", "ejs") : join(own.dir, "..", "ejs");
  symlinkSync(ejs, join(project, "node_modules", "ejs"));
  const fixture = pick("bn254", "mulchain_8");
  copyFileSync(fixture.file("circuit.zkey"), join(project, "circuit_final.zkey"));
  const ours = "Deno" in globalThis ? ["run", "-A", CLI] : [CLI];
  const made = await run(process.execPath, [...ours, "zkesv"], project);
  assert.equal(made.code, 0, made.stderr);
  const vk = fixture.json<{ vk_alpha_1: string[]; nPublic: number; IC: string[][] }>("verification_key.json");
  assert.equal(read(project, "verifier.sol").toString(), `alpha ${vk.vk_alpha_1[0]}, ${vk.nPublic} public${vk.IC.map((p) => ` ${p[1]}`).join("")}\n`);
});

test("r1cs info: snarkjs's lines on both curves (words and default name, alias ri)", async () => {
  for (const fixture of fixtures().filter((f) => ["poseidon_10", "many_public"].includes(f.name))) {
    const label = `${fixture.curve}/${fixture.name}`;
    const dirs = workspace(`r1cs-info-${fixture.curve}-${fixture.name}`, fixture);
    for (const dir of Object.values(dirs)) copyFileSync(fixture.file("circuit.r1cs"), join(dir, "circuit.r1cs"));
    const ran = await both(fixture.name === "poseidon_10" ? ["r1cs", "info"] : ["ri", fixture.file("circuit.r1cs")], dirs);
    sameLines(ran, 0, label);
    assert.match(ran[1].stdout, new RegExp(`^Curve: ${fixture.curve === "bn254" ? "bn-128" : "bls12-381"}\n# of Wires: \\d+\n`));
  }
});

test("wtns check: snarkjs's lines and exit statuses on both curves, for a witness that satisfies the circuit and ones that do not", async () => {
  for (const curve of ["bn254", "bls12_381"]) {
    const fixture = pick(curve, "poseidon_10");
    const dirs = workspace(`wtns-check-${curve}`, fixture);
    const r = curveOf(curve).r;
    const witness = fixture.bytes("witness.wtns");
    const wires = wtnsCount(witness);
    for (const dir of Object.values(dirs)) {
      copyFileSync(fixture.file("circuit.r1cs"), join(dir, "circuit.r1cs"));
      copyFileSync(fixture.file("witness.wtns"), join(dir, "witness.wtns"));
      writeFileSync(join(dir, "changed.wtns"), changedWitness(witness, wires - 500, (v) => v ^ 1n));
      // As snarkjs, values are taken modulo r: v + r satisfies what v does.
      writeFileSync(join(dir, "plus_r.wtns"), changedWitness(witness, wires - 500, (v) => v + r));
    }
    const good = await both(["wtns", "check"], dirs);
    sameLines(good, 0, `${curve} wtns check`);
    assert.match(good[1].stdout, /^WITNESS CHECKING STARTED\n[^]*\n  Constraints:    960\n[^]*WITNESS IS CORRECT\nWITNESS CHECKING FINISHED SUCCESSFULLY\n$/);
    const bad = await both(["wchk", "circuit.r1cs", "changed.wtns"], dirs);
    sameLines(bad, 1, `${curve} wchk of a changed witness`);
    assert.match(bad[1].stdout, /··· aborting checking process at constraint \d+\nWITNESS IS NOT CORRECT\n/);
    sameLines(await both(["wtns", "check", "circuit.r1cs", "plus_r.wtns"], dirs), 0, `${curve} wtns check of a value + r`);
  }
});

test("wtns check of a synthetic circuit whose constraints outgrow one read of the .r1cs: snarkjs's lines and verdicts", needs("cuzk_synth_circuit"), async () => {
  const constraints = 1 << 15;
  const { r1cs, wtns: witness } = await synthCircuit({ curve: "bls12_381", profile: "uniform", constraints, seed: 7 });
  const chunk = 1 << 22; // what cli/r1cs_commands.ts reads of a section at a time
  assert.ok(r1cs.length > chunk, `${r1cs.length} bytes: more than one read`);
  const dirs = { snarkjs: join(work, "synth-check", "snarkjs"), cuzk: join(work, "synth-check", "cuzk") };
  const count = wtnsCount(witness);
  for (const dir of Object.values(dirs)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "circuit.r1cs"), r1cs);
    writeFileSync(join(dir, "witness.wtns"), witness);
    writeFileSync(join(dir, "late.wtns"), changedWitness(witness, count - 1, (v) => v + 1n));
  }
  sameLines(await both(["wtns", "check"], dirs), 0, "synthetic wtns check");
  const late = await both(["wtns", "check", "circuit.r1cs", "late.wtns"], dirs);
  sameLines(late, 1, "synthetic wtns check of a changed last value");
  const at = Number(/aborting checking process at constraint (\d+)/.exec(late[1].stdout)?.[1]);
  assert.ok(at * (r1cs.length / constraints) > chunk, `the failing constraint ${at} lies past the first read`);
});

test("r1cs info, wtns check, zkey export solidityverifier: bad input is one line and a nonzero exit (missing, FIFO, folder, wrong file type, too many files)", needs(...proverApi), async () => {
  const fixture = pick("bn254", "mulchain_8");
  const dirs = workspace("bad-input", fixture);
  for (const dir of Object.values(dirs)) {
    copyFileSync(fixture.file("circuit.r1cs"), join(dir, "circuit.r1cs"));
    copyFileSync(fixture.file("witness.wtns"), join(dir, "witness.wtns"));
    copyFileSync(pick("bls12_381", "mulchain_8").file("witness.wtns"), join(dir, "bls.wtns"));
    copyFileSync(pick("bn254", "poseidon_10").file("witness.wtns"), join(dir, "other.wtns"));
    mkdirSync(join(dir, "folder"));
  }
  // Both CLIs: the same exit status.
  const cases: Array<[string[], number]> = [
    [["r1cs", "info", "missing.r1cs"], 1],
    [["ri", "circuit_final.zkey"], 1],
    [["ri", "folder"], 1],
    [["ri", "circuit.r1cs", "extra"], 99],
    [["wtns", "check", "missing.r1cs", "witness.wtns"], 1],
    [["wchk", "circuit.r1cs", "missing.wtns"], 1],
    [["wchk", "witness.wtns", "circuit.r1cs"], 1],
    [["wchk", "circuit.r1cs", "bls.wtns"], 1],
    [["wchk", "circuit.r1cs", "witness.wtns", "extra"], 99],
    [["zkesv", "missing.zkey", "v.sol"], 1],
    [["zkesv", "circuit.r1cs", "v.sol"], 1],
    [["zkesv", "circuit_final.zkey", "folder"], 1],
    [["zkesv", "circuit_final.zkey", "v.sol", "extra"], 99],
  ];
  await sameExits(cases, dirs);
  // cuzk only: snarkjs would wait on a FIFO for ever; another circuit's witness (snarkjs reads past its end).
  execFileSync("mkfifo", [join(dirs.cuzk, "fifo")]);
  const ours = "Deno" in globalThis ? ["run", "-A", CLI] : [CLI];
  const refusals: Array<[string[], RegExp]> = [
    [["ri", "fifo"], /circuit \.r1cs fifo is not a regular file/],
    [["wchk", "circuit.r1cs", "fifo"], /witness fifo is not a regular file/],
    [["zkesv", "fifo", "v.sol"], /fifo/],
    [["zkesv", "circuit_final.zkey", "fifo"], /refusing to write the Solidity verifier to fifo: it is a FIFO/],
    [["zkesv", "circuit_final.zkey", "circuit_final.zkey"], /would be written over the key/],
    [["wchk", "circuit.r1cs", "other.wtns"], /has 963 values, but the circuit has 256 wires/],
    [["ri", "circuit.r1cs.truncated"], /./],
  ];
  writeFileSync(join(dirs.cuzk, "circuit.r1cs.truncated"), fixture.bytes("circuit.r1cs").subarray(0, 100));
  for (const [args, pattern] of refusals) {
    const c = await run(process.execPath, [...ours, ...args], dirs.cuzk);
    assert.equal(c.code, 1, `cuzk ${args.join(" ")}: ${c.stderr}`);
    assert.equal(c.stderr.trim().split("\n").length, 1, `one line on stderr: ${c.stderr}`);
    assert.match(c.stderr, /^cuzk: /);
    assert.match(c.stderr, pattern);
  }
  assert.equal(existsSync(join(dirs.cuzk, "v.sol")), false, "no verifier written by a refused command");
});

test("zKey.exportVerificationKey of every committed fixture is its verification_key.json (snarkjs's) byte for byte, vk_alphabeta_12 from the library", needs(...proverApi), async () => {
  const all = fixtures();
  assert.ok(all.length >= 22, `${all.length} fixtures`);
  for (const fixture of all) {
    const exported = await zKey.exportVerificationKey(fixture.file("circuit.zkey"));
    assert.equal(`${snarkjsJson(exported)}\n`, readFileSync(fixture.file("verification_key.json"), "utf8"), `${fixture.curve}/${fixture.name}`);
  }
});

test("cuzk setup --insecure-dev writes the verification_key.json that snarkjs's zkey export verificationkey writes for its key, byte for byte", needs(...proverApi, "cuzk_setup_insecure_dev"), async () => {
  for (const curve of ["bn254", "bls12_381"]) {
    const dir = join(work, `setup-${curve}`);
    mkdirSync(dir, { recursive: true });
    copyFileSync(pick(curve, "mulchain_4").file("circuit.r1cs"), join(dir, "circuit.r1cs"));
    const ours = "Deno" in globalThis ? ["run", "-A", CLI] : [CLI];
    const setup = await run(process.execPath, [...ours, "setup", "--insecure-dev", "circuit.r1cs", "circuit.zkey", "cuzk_vk.json"], dir);
    assert.equal(setup.code, 0, setup.stderr);
    const exported = await snarkjs(["zkev", "circuit.zkey", "snarkjs_vk.json"], dir);
    assert.equal(exported.code, 0, exported.stdout);
    assert.equal(read(dir, "cuzk_vk.json").toString(), read(dir, "snarkjs_vk.json").toString(), curve);
    assert.match(read(dir, "cuzk_vk.json").toString(), /"vk_alphabeta_12": \[/);
  }
});

test("what a user runs (mod.ts, src/, cli.ts, cli/) imports no package outside package.json's dependencies", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  const sources = [join(ROOT, "mod.ts"), join(ROOT, "cli.ts")];
  for (const dir of ["src", "cli"]) {
    for (const name of readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })) if (name.endsWith(".ts")) sources.push(join(ROOT, dir, name));
  }
  const outside: string[] = [];
  for (const file of sources) {
    // Static (`from "x"`) and dynamic (`import("x")`) specifiers of packages (not relative, not node:
    // builtins), outside comment lines (mod.ts's examples import "cuzk").
    const code = readFileSync(file, "utf8").split("\n").filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line)).join("\n");
    for (const [, specifier] of code.matchAll(/(?:\bfrom|\bimport\()\s*["']([^"'.][^"']*)["']/g)) {
      const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0];
      if (!name.startsWith("node:") && !(name in manifest.dependencies)) outside.push(`${file.slice(ROOT.length)}: ${specifier}`);
    }
  }
  assert.ok(sources.length > 30, `${sources.length} sources read`);
  assert.deepEqual(outside, [], "an installed package has no devDependencies: such an import fails there");
});

test("JS API: snarkjs's file forms for zkey, witness and wasm; snarkjs's shapes, vk and calldata", needs(...proverApi), async () => {
  const fixture = pick("bls12_381", "mulchain_8");
  // snarkjs's own verification key, proof and calldata to compare with.
  const dir = workspace("api", fixture).snarkjs;
  assert.equal((await snarkjs(["wc"], dir)).code, 0);
  for (const made of await Promise.all([snarkjs(["zkev"], dir), snarkjs(["g16p"], dir)])) assert.equal(made.code, 0, made.stdout);
  const zkeyBytes = fixture.bytes("circuit.zkey"), wasmBytes = fixture.bytes("circuit.wasm"), wtnsBytes = fixture.bytes("witness.wtns");
  const input = fixture.json<CircuitInput>("input.json");
  const vk = fixture.json<Record<string, unknown>>("verification_key.json");
  const randomness = { r: 5n, s: 7n };

  // The same vk from every zkey form, written byte for byte as snarkjs's `zkey export verificationkey` wrote it.
  for (const form of [fixture.file("circuit.zkey"), zkeyBytes, { type: "mem" as const, data: zkeyBytes }, { type: "file" as const, fileName: fixture.file("circuit.zkey") }]) {
    const exported = await zKey.exportVerificationKey(form);
    assert.equal(snarkjsJson(exported), readFileSync(join(dir, "circuit_vk.json"), "utf8"));
  }

  // prove: zkey and witness in each form, the same proof for the same r, s; snarkjs's result keys.
  const reference = await groth16.prove(fixture.file("circuit.zkey"), fixture.file("witness.wtns"), { backend: "cpu", randomness });
  assert.deepEqual(Object.keys(reference).filter((k) => k !== "timings"), ["proof", "publicSignals"]);
  assert.equal(await groth16.verify(vk as never, reference.publicSignals, reference.proof), true);
  const forms: Array<[unknown, unknown]> = [
    [zkeyBytes, wtnsBytes],
    [{ type: "mem", data: zkeyBytes }, { type: "mem", data: wtnsBytes }],
    [{ type: "file", fileName: fixture.file("circuit.zkey") }, { type: "file", fileName: fixture.file("witness.wtns") }],
  ];
  for (const [zkey, witness] of forms) {
    const { proof, publicSignals } = await groth16.prove(zkey as never, witness as never, { backend: "cpu", randomness });
    assert.deepEqual(proof, reference.proof);
    assert.deepEqual(publicSignals, reference.publicSignals);
  }

  // fullProve: wasm and zkey as bytes and { type: "mem" }; wtns.calculate to a file and to { type: "mem" }.
  const full = await groth16.fullProve(input, { type: "mem", data: wasmBytes }, zkeyBytes, { backend: "cpu", randomness });
  assert.deepEqual(full.proof, reference.proof);
  const full2 = await groth16.fullProve(input, wasmBytes, { type: "mem", data: zkeyBytes }, { backend: "cpu", randomness });
  assert.deepEqual(full2.proof, reference.proof);
  const memOut: { type: "mem"; data?: Uint8Array } = { type: "mem" };
  await wtns.calculate(input, fixture.file("circuit.wasm"), memOut);
  assert.deepEqual(memOut.data, wtnsBytes);
  const fileOut = join(work, "api.wtns");
  await wtns.calculate(input, wasmBytes, { type: "file", fileName: fileOut });
  assert.deepEqual(new Uint8Array(readFileSync(fileOut)), wtnsBytes);

  // exportSolidityCallData: snarkjs's text for snarkjs's proof (the CLI's stdout, less its newline).
  const snarkjsProof = JSON.parse(readFileSync(join(dir, "proof.json"), "utf8"));
  const snarkjsPublic = JSON.parse(readFileSync(join(dir, "public.json"), "utf8"));
  const calldata = await snarkjs(["zkesc"], dir);
  assert.equal(calldata.code, 0);
  assert.equal(await groth16.exportSolidityCallData(snarkjsProof, snarkjsPublic), calldata.stdout.replace(/\n$/, ""));
});

test("JS API: bad input is a CuzkError", needs(...proverApi), async () => {
  const fixture = pick("bn254", "mulchain_8");
  const zkey = fixture.file("circuit.zkey"), witness = fixture.file("witness.wtns");
  await assert.rejects(groth16.prove(42 as never, witness), isCuzk("INVALID_ARGUMENT", /zkey must be a file name/));
  await assert.rejects(groth16.prove({ type: "bigMem", data: [] } as never, witness), isCuzk("INVALID_ARGUMENT", /bigMem/));
  await assert.rejects(groth16.prove(zkey, { type: "mem" } as never, { backend: "cpu" }), isCuzk("INVALID_ARGUMENT", /witness must be/));
  await assert.rejects(groth16.prove(new Uint8Array(100), witness), isCuzk("FORMAT"));
  await assert.rejects(groth16.fullProve({}, { type: "file" } as never, zkey), isCuzk("INVALID_ARGUMENT", /wasm must be/));
  await assert.rejects(zKey.exportVerificationKey({ type: "mem", data: fixture.bytes("witness.wtns") }), isCuzk("FORMAT"));
  await assert.rejects(zKey.exportVerificationKey(join(work, "missing.zkey")), isCuzk("IO"));
  await assert.rejects(wtns.calculate(fixture.json("input.json"), fixture.file("circuit.wasm"), 7 as never), isCuzk("INVALID_ARGUMENT", /wtnsOut/));
  const proof = fixture.json<Record<string, unknown>>("proof.json"), pub = fixture.json<string[]>("public.json");
  await assert.rejects(groth16.exportSolidityCallData({ ...proof, pi_c: undefined }, pub), isCuzk("FORMAT", /pi_c/));
  await assert.rejects(groth16.exportSolidityCallData(proof, ["12", "not a number"]), isCuzk("FORMAT", /public signal 1/));
  await assert.rejects(groth16.exportSolidityCallData(proof, ["-1"]), isCuzk("FORMAT", /negative/));
});
