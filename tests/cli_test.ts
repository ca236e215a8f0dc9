/**
 * @module
 * Promise: the CLI is a drop-in for `snarkjs groth16 prove` — same arguments, proof.json and
 * public.json that `snarkjs groth16 verify` accepts — and its error paths print one clear line on
 * stderr and exit non-zero. Runs the CLI as a child process of whichever runtime runs the tests.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import process from "node:process";
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ABI } from "../src/ffi/symbols.ts";
import { library } from "./support/native.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "cli.ts");
const work = mkdtempSync(join(tmpdir(), "cuzk-cli-"));
after(() => rmSync(work, { recursive: true, force: true }));

/** Runs the CLI under the runtime that runs this test file. */
function cli(...args: string[]) {
  const runtime = "Deno" in globalThis ? ["run", "-A", CLI] : [CLI];
  // The timeout turns a hang (a FIFO or /dev/zero read without end) into a failure.
  const r = spawnSync(process.execPath, [...runtime, ...args], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** snarkjs's own CLI check, under plain Node (the reference verifier). */
function snarkjsVerify(vkey: string, pub: string, proof: string): boolean {
  const snarkjs = join(ROOT, "node_modules", "snarkjs", "cli.js");
  const r = spawnSync("node", [snarkjs, "groth16", "verify", vkey, pub, proof], { encoding: "utf8" });
  return r.status === 0 && r.stdout.includes("OK!");
}

const fixture = (curve: string, name: string) => join(ROOT, "tests", "fixtures", curve, name);

for (const [curve, name] of [["bn254", "poseidon_10"], ["bls12_381", "many_public"], ["bn254", "zero_public"]]) {
  test(`cli prove ${curve}/${name}: snarkjs groth16 verify accepts the files`, () => {
    const dir = fixture(curve, name);
    const proof = join(work, `${curve}-${name}-proof.json`), pub = join(work, `${curve}-${name}-public.json`);
    const timeline = join(work, `${curve}-${name}-timeline.svg`);
    const r = cli("prove", join(dir, "circuit.zkey"), join(dir, "witness.wtns"), proof, pub, "--r1cs", join(dir, "circuit.r1cs"), "--timings", "--timeline", timeline);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /msm_h/); // the phase table
    const svg = readFileSync(timeline, "utf8");
    assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.match(svg, />msm_h</, "the waterfall has a row per phase");
    assert.match(svg, /<\/svg>\s*$/);
    assert.deepEqual(JSON.parse(readFileSync(pub, "utf8")), JSON.parse(readFileSync(join(dir, "public.json"), "utf8")));
    assert.ok(snarkjsVerify(join(dir, "verification_key.json"), pub, proof));
    const v = cli("verify", join(dir, "verification_key.json"), pub, proof);
    assert.equal(v.code, 0);
    assert.match(v.stdout, /OK!/);
  });
}

test("cli verify rejects a tampered public signal with exit 1", () => {
  const dir = fixture("bn254", "mulchain_8");
  const proof = join(work, "t-proof.json"), pub = join(work, "t-public.json");
  assert.equal(cli("prove", join(dir, "circuit.zkey"), join(dir, "witness.wtns"), proof, pub).code, 0);
  const signals = JSON.parse(readFileSync(pub, "utf8")) as string[];
  signals[0] = (BigInt(signals[0]) + 1n).toString();
  writeFileSync(pub, JSON.stringify(signals));
  const v = cli("verify", join(dir, "verification_key.json"), pub, proof);
  assert.equal(v.code, 1);
  assert.match(v.stderr, /Invalid proof/);
  assert.ok(!snarkjsVerify(join(dir, "verification_key.json"), pub, proof));
});

// One error line; progress lines (stderr is not a terminal here: a line per step) come before it.
const PROGRESS_LINE = /^cuzk: (prove|setup|key upload) \d+\/\d+ /;
/** stderr without the progress lines a slow proof writes before its message (a sanitized library, a busy machine). */
const messageLines = (s: string) => s.trim().split("\n").filter((line) => !PROGRESS_LINE.test(line));
const withoutProgress = (s: string) => messageLines(s).join("\n");
const oneLine = (s: string) => messageLines(s).length === 1;

test("cli errors: missing file, wrong curve, mismatched witness, bad usage — one line, non-zero", () => {
  const bn = fixture("bn254", "mulchain_8"), bls = fixture("bls12_381", "mulchain_8");
  const out = [join(work, "e-proof.json"), join(work, "e-public.json")];
  const notJson = join(work, "not-json.json");
  writeFileSync(notJson, "{ proof");
  const vk = join(bn, "verification_key.json"), pub = join(bn, "public.json"), proof = join(bn, "proof.json");
  const cases: Array<[string[], RegExp]> = [
    [["prove", join(work, "missing.zkey"), join(bn, "witness.wtns"), ...out], /missing\.zkey/],
    [["prove", join(bn, "circuit.zkey"), join(work, "missing.wtns"), ...out], /cannot read witness/],
    [["prove", join(bn, "circuit.zkey"), join(bls, "witness.wtns"), ...out], /bn254|bls12_381/],
    [["prove", join(bn, "circuit.zkey"), join(fixture("bn254", "mulchain_4"), "witness.wtns"), ...out], /values|variables/],
    [["prove", join(bn, "circuit.zkey")], /prove needs/],
    [["prove", join(bn, "circuit.zkey"), join(bn, "witness.wtns"), ...out, "--backend", "tpu"], /--backend/],
    [["prove", join(bn, "circuit.zkey"), join(bn, "witness.wtns"), ...out, "--device", "-1"], /--device/],
    [["prove", join(bn, "circuit.zkey"), join(bn, "witness.wtns"), join(work, "no-such-dir", "proof.json"), out[1]], /cannot write/],
    [["prove", join(bn, "witness.wtns"), join(bn, "witness.wtns"), ...out], /zkey|format|magic/i],
    [["verify", join(work, "missing-vk.json"), pub, proof], /cannot read verification key/],
    [["verify", vk, pub, notJson], /not valid JSON/],
    [["verify", join(bls, "verification_key.json"), pub, proof], /^(cuzk: .*|Invalid proof)$/m],
    [["verify", vk, pub], /verify needs/],
    [["info", join(work, "missing.zkey")], /missing\.zkey/],
    [["prove", "--frobnicate"], /unknown option/],
    [["prove", join(bn, "circuit.zkey"), join(bn, "witness.wtns"), ...out, "--self-check", "--no-self-check"], /not both/],
    ...boundCases(bn, out),
    [["frobnicate"], /unknown command/],
  ];
  for (const [args, pattern] of cases) {
    const r = cli(...args);
    assert.notEqual(r.code, 0, `expected failure for ${args.join(" ")}`);
    assert.ok(oneLine(r.stderr), `one line expected for ${args.join(" ")}, got: ${r.stderr}`);
    assert.match(r.stderr, /^(cuzk: |Invalid proof$)/m, "the line says who is speaking (or is snarkjs's verdict)");
    assert.equal(r.stdout, "", "nothing on stdout");
    assert.match(r.stderr, pattern);
  }
});

/**
 * The sizes and files a caller gives the CLI, past their limits: an int32 GPU index, a thread
 * count within the library's cores, and files that are regular and not larger than they can be
 * (a witness: the key's n_vars values plus a header; /dev/zero and a FIFO are refused unread).
 */
function boundCases(bn: string, out: string[]): Array<[string[], RegExp]> {
  const fifo = join(work, "witness.fifo");
  spawnSync("mkfifo", [fifo]);
  assert.ok(existsSync(fifo), "mkfifo made the FIFO");
  const oversized = join(work, "oversized.wtns");
  writeFileSync(oversized, "");
  const nVars = 256; // bn254/mulchain_8
  truncateSync(oversized, nVars * 32 + 64 * 1024 + 1); // sparse: nothing is written
  const cores = library().info().cpuThreads;
  const prove = (zkey: string, wtns: string, ...extra: string[]) => ["prove", zkey, wtns, ...out, ...extra];
  return [
    [prove(join(bn, "circuit.zkey"), join(bn, "witness.wtns"), "--device", "4294967296"), /--device must be a whole number from 0 to 2147483647 \(a GPU index\), not 4294967296/],
    [prove(join(bn, "circuit.zkey"), join(bn, "witness.wtns"), "--device", "2147483648"), /--device must be a whole number from 0 to 2147483647/],
    [prove(join(bn, "circuit.zkey"), join(bn, "witness.wtns"), "--device", "1.5"), /--device must be a whole number/],
    [prove(join(bn, "circuit.zkey"), join(bn, "witness.wtns"), "--device", "0x10"), /--device must be a whole number/],
    [prove(join(bn, "circuit.zkey"), "/dev/zero"), /witness \/dev\/zero is not a regular file/],
    [prove(join(bn, "circuit.zkey"), fifo), /witness .*witness\.fifo is not a regular file/],
    [prove(join(bn, "circuit.zkey"), oversized), new RegExp(`oversized\.wtns has ${nVars * 32 + 64 * 1024 + 1} bytes, room for about \\d+ values, but the key.s circuit has ${nVars} wires \\(its witness is at most ${nVars * 32 + 64 * 1024} bytes\\)`)],
    [prove("/dev/zero", join(bn, "witness.wtns")), /\/dev\/zero.*not a regular file/],
    [prove(join(bn, "circuit.zkey"), join(bn, "witness.wtns"), "--r1cs", fifo), /witness\.fifo.*not a regular file/],
    [["verify", "/dev/zero", join(bn, "public.json"), join(bn, "proof.json")], /verification key \/dev\/zero is not a regular file/],
    [["verify", join(bn, "verification_key.json"), fifo, join(bn, "proof.json")], /public signals .*witness\.fifo is not a regular file/],
    [["info", "/dev/zero"], /\/dev\/zero.*not a regular file/],
    [["setup", "--insecure-dev", join(bn, "circuit.r1cs"), join(work, "never.zkey"), "--threads", String(cores + 1)], new RegExp(`--threads must be a whole number from 0 to ${cores} `)],
    [["setup", "--insecure-dev", join(bn, "circuit.r1cs"), join(work, "never.zkey"), "--threads", "100000"], /--threads must be a whole number/],
  ];
}

/** bn254/mulchain_8's witness with its last (private) value changed: well formed, in range, but no proof from it verifies. */
function unsatisfiedWitness(): string {
  const bad = new Uint8Array(readFileSync(join(fixture("bn254", "mulchain_8"), "witness.wtns")));
  bad[bad.length - 32] ^= 1;
  const path = join(work, "bad.wtns");
  writeFileSync(path, bad);
  return path;
}

test("cli prove self-checks by default: a proof that fails is never written (exit 1, the library's message), a good one shows its self_check phase", () => {
  const dir = fixture("bn254", "mulchain_8");
  const badPath = unsatisfiedWitness();
  const proof = join(work, "sc-proof.json"), pub = join(work, "sc-public.json");
  for (const flags of [[], ["--self-check"]]) {
    const r = cli("prove", join(dir, "circuit.zkey"), badPath, proof, pub, ...flags);
    assert.equal(r.code, 1, `${flags.join(" ")}: ${r.stderr}`);
    assert.ok(oneLine(r.stderr), r.stderr);
    assert.match(withoutProgress(r.stderr), /^cuzk: .*self-check/);
    assert.ok(!existsSync(proof) && !existsSync(pub), "no proof.json or public.json written");
  }
  const good = cli("prove", join(dir, "circuit.zkey"), join(dir, "witness.wtns"), proof, pub, "--timings");
  assert.equal(good.code, 0, good.stderr);
  assert.match(good.stderr, /^self_check\s/m);
  assert.ok(snarkjsVerify(join(dir, "verification_key.json"), pub, proof));
});

test("cli prove --no-self-check opts out: the same witness then gives a proof (exit 0) that snarkjs rejects", () => {
  const dir = fixture("bn254", "mulchain_8");
  const proof = join(work, "nosc-proof.json"), pub = join(work, "nosc-public.json");
  const r = cli("prove", join(dir, "circuit.zkey"), unsatisfiedWitness(), proof, pub, "--no-self-check", "--timings");
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /self_check/, "no self_check phase when opted out");
  assert.ok(!snarkjsVerify(join(dir, "verification_key.json"), pub, proof));
});

test("under Node the CLI keeps its compiled modules in Node's compile cache (in the temp folder unless NODE_COMPILE_CACHE names one)", { skip: "Deno" in globalThis || "Bun" in globalThis }, () => {
  const temp = mkdtempSync(join(work, "tmp-"));
  const env: Record<string, string | undefined> = { ...process.env, TMPDIR: temp };
  delete env.NODE_COMPILE_CACHE;
  const r = spawnSync(process.execPath, [CLI, "--version"], { cwd: ROOT, encoding: "utf8", env, timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const cache = join(temp, "node-compile-cache");
  assert.ok(existsSync(cache) && readdirSync(cache).length > 0, `no compile cache under ${temp}`);
  const off = mkdtempSync(join(work, "tmp-"));
  const r2 = spawnSync(process.execPath, [CLI, "--version"], { cwd: ROOT, encoding: "utf8", env: { ...env, TMPDIR: off, NODE_DISABLE_COMPILE_CACHE: "1" }, timeout: 120_000 });
  assert.equal(r2.status, 0, r2.stderr);
  assert.ok(!existsSync(join(off, "node-compile-cache")), "NODE_DISABLE_COMPILE_CACHE=1 leaves no cache");
});

test("cli info reports the library and a key summary", () => {
  const r = cli("info", join(fixture("bls12_381", "single"), "circuit.zkey"));
  assert.equal(r.code, 0, r.stderr);
  const info = JSON.parse(r.stdout);
  assert.equal(info.abiVersion, ABI.ABI_VERSION);
  assert.equal(info.key.curve, "bls12_381");
  assert.equal(info.key.nConstraints, 1);
});

test("cli outputs: one file for two outputs, or over an input, is refused before proving; a failing output leaves none", () => {
  const dir = fixture("bn254", "mulchain_8");
  const zkey = join(dir, "circuit.zkey"), wtns = join(dir, "witness.wtns");
  const same = join(work, "o-same.json");
  writeFileSync(same, "untouched");
  for (const [proof, pub] of [[same, same], [same, join(work, "..", basename(work), "o-same.json")]]) {
    const r = cli("prove", zkey, wtns, proof, pub);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the proof and the public signals would both be written to/);
    assert.ok(oneLine(r.stderr), r.stderr);
  }
  assert.equal(readFileSync(same, "utf8"), "untouched");
  const keyCopy = join(work, "o-key.zkey");
  writeFileSync(keyCopy, readFileSync(zkey));
  const overInput = cli("prove", keyCopy, wtns, keyCopy, join(work, "o-public.json"));
  assert.equal(overInput.code, 1);
  assert.match(overInput.stderr, /the proof would be written over the key/);
  assert.deepEqual(readFileSync(keyCopy), readFileSync(zkey), "the key is untouched");
  // The second output's folder does not exist: neither file is left.
  const proof = join(work, "o-proof.json");
  const failing = cli("prove", zkey, wtns, proof, join(work, "no-such-folder", "public.json"));
  assert.equal(failing.code, 1);
  assert.match(failing.stderr, /cannot write the public signals to .*no-such-folder.*nothing was written/);
  assert.ok(!existsSync(proof), "no proof.json without its public.json");
  assert.deepEqual(readdirSync(work).filter((name) => name.includes(".tmp.")), [], "no temporary file is left");
  // A symlink as an output is refused, its target untouched; the snarkjs form the same.
  const target = join(work, "o-target.json"), link = join(work, "o-link.json");
  writeFileSync(target, "target");
  symlinkSync(target, link);
  const linked = cli("groth16", "prove", zkey, wtns, link, join(work, "o-public2.json"));
  assert.equal(linked.code, 1);
  assert.match(linked.stderr, /refusing to write the proof to .*symbolic link/);
  assert.equal(readFileSync(target, "utf8"), "target");
  const synthSame = cli("synth", join(work, "o-c.r1cs"), join(work, "o-c.r1cs"), "--constraints", "8");
  assert.equal(synthSame.code, 1);
  assert.match(synthSame.stderr, /would both be written to/);
});
