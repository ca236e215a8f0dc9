/**
 * @module
 * Promise: the circuit's native witness executable that `cuzk witness compile`
 * links beside the library (`<name>.witness <input.json | -> <output.wtns>`, no JavaScript runtime)
 * reads input JSON exactly as circom_runtime does (JSON.parse, then BigInt() of every leaf) and
 * writes the same .wtns bytes as the WASM: on every committed fixture, and on random inputs
 * written in every form JSON and BigInt() allow (decimal, signed, hex, octal and binary strings,
 * padded or empty strings, JSON numbers as the doubles JSON.parse makes, booleans, nested arrays,
 * escaped keys, repeated keys). Whatever the WASM path refuses it refuses too, with exit status 1,
 * one line naming the signal or the place in the text, and no output file; bounds on the file and
 * the nesting hold; a command line it cannot use is exit status 2.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { WitnessCalculator } from "../mod.ts";
import type { CircuitInput } from "../mod.ts";
import { circuitByName } from "../tools/fixtures/circuits.mjs";
import { allLibraries, CACHE, committed, libraryOf, NODE_MODULES, randomBelow, ROOT, same, scratchDir } from "./support/witness_fixtures.ts";
import type { ManifestEntry } from "./support/witness_fixtures.ts";

const WORK = scratchDir();

/** The executable `cuzk witness compile` left beside the fixture's library. */
async function executableOf(f: ManifestEntry): Promise<string> {
  const executable = (await libraryOf(f)).replace(/\.so$/, "");
  assert.ok(existsSync(executable), `${executable} is linked beside the library`);
  return executable;
}

interface Run {
  status: number | null;
  stderr: string;
  stdout: string;
}

function runExecutable(executable: string, args: string[], stdin?: string): Run {
  const r = spawnSync(executable, args, { encoding: "utf8", input: stdin, stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
  return { status: r.status, stderr: r.stderr ?? "", stdout: r.stdout ?? "" };
}

let counter = 0;
/** `text` in a fresh file under WORK; its output path beside it (not there yet). */
function inputFile(text: string | Uint8Array): { input: string; output: string } {
  const dir = join(WORK, "command", String(counter++));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "input.json"), text);
  return { input: join(dir, "input.json"), output: join(dir, "out.wtns") };
}

const pick = <T>(items: readonly T[]): T => items[Number(randomBelow(BigInt(items.length)))];
const space = () => pick(["", " ", "\n", "\t", "  \r\n "]);

/**
 * A random leaf as JSON text, in one of the forms circom_runtime's BigInt() takes. `small`: the
 * value must read as an integer in [0, 2^64) (the bit-decomposition circuits assert it).
 */
function leafText(prime: bigint, small: boolean): string {
  const v = small ? randomBelow(1n << 64n) : randomBelow(prime);
  const forms: Array<() => string> = [
    () => `"${v}"`,
    () => `"+${v}"`,
    () => `"000${v}"`,
    () => `"0x${v.toString(16)}"`,
    () => `"0X${v.toString(16).toUpperCase()}"`,
    () => `"0o${v.toString(8)}"`,
    () => `"0b${v.toString(2)}"`,
    () => `" \\t${v}\\n "`,
    () => `"\\u00a0\\u2028${v}\\ufeff"`,
    () => `""`,
    () => `"   "`,
    () => `${v % (1n << 53n)}`,
    () => `${v % 100000n}.0`,
    () => `${v % 1000n}e3`,
    () => `${v % 1000n}E+2`,
    () => pick(["true", "false"]),
    () => (small ? "1.8e19" : `${(Number(v % 100000n) + 1) * 1.2345678901234567}e40`), // the double JSON.parse makes, taken exactly
  ];
  if (!small) {
    forms.push(
      () => `"-${v}"`,
      () => `-${v % (1n << 53n)}`,
      () => "-0",
      () => `"${v + prime * randomBelow(1000n)}"`, // above r: reduced
      () => `"${"9".repeat(200)}"`,
      () => `"-${"7".repeat(120)}"`,
    );
  }
  return pick(forms)();
}

/** Random JSON text in the shape of `input`: leaves in random forms, arrays re-nested at random. */
function randomText(input: CircuitInput, prime: bigint, small: boolean): string {
  const leaves = (value: unknown): number => Array.isArray(value) ? value.reduce((n: number, v) => n + leaves(v), 0) : 1;
  // n leaves as a nested array: flattening (all circom_runtime does) gives them back in order.
  const nest = (items: string[]): string => {
    if (items.length > 1 && randomBelow(3n) === 0n) {
      const cut = 1 + Number(randomBelow(BigInt(items.length - 1)));
      return `[${space()}${nest(items.slice(0, cut))},${space()}${nest(items.slice(cut))}${space()}]`;
    }
    return `[${items.map((s) => space() + s).join(",")}${space()}]`;
  };
  const members = Object.entries(input).map(([name, value]) => {
    const texts = Array.from({ length: leaves(value) }, () => leafText(prime, small));
    const body = Array.isArray(value) || randomBelow(4n) === 0n ? nest(texts) : texts[0];
    // The name's first character as a \u escape, now and then.
    const key = randomBelow(3n) === 0n ? `\\u${name.charCodeAt(0).toString(16).padStart(4, "0")}${name.slice(1)}` : name;
    // A repeated key: JSON.parse keeps the last value (here not even an integer at first).
    const earlier = randomBelow(4n) === 0n ? `"${name}":${space()}"1.5",${space()}` : "";
    return `${earlier}"${key}"${space()}:${space()}${body}`;
  });
  return `${space()}{${space()}${members.join(`,${space()}`)}${space()}}${space()}`;
}

test("every committed fixture: the executable's .wtns equals the committed witness.wtns (the WASM's) byte for byte", async () => {
  assert.ok(committed.length >= 22, `the manifest lists the committed fixtures (${committed.length})`);
  await allLibraries();
  for (const f of committed) {
    const executable = await executableOf(f);
    const output = join(WORK, `${f.curve}-${f.name}.wtns`);
    const r = runExecutable(executable, [join(ROOT, f.dir, "input.json"), output]);
    assert.equal(r.status, 0, `${f.curve}/${f.name}: ${r.stderr}`);
    assert.equal(r.stderr, "", `${f.curve}/${f.name}: nothing on stderr`);
    assert.ok(same(new Uint8Array(readFileSync(output)), new Uint8Array(readFileSync(join(ROOT, f.dir, "witness.wtns")))), `${f.curve}/${f.name}`);
  }
});

test("random inputs in every form JSON and BigInt() allow: the executable == circom_runtime's WASM on JSON.parse of the same text (every fixture, 3 texts each)", async () => {
  await allLibraries();
  let compared = 0;
  for (const f of committed) {
    const executable = await executableOf(f);
    const wasm = await WitnessCalculator.load(join(ROOT, f.dir, "circuit.wasm"), { engine: "wasm" });
    const shape = JSON.parse(readFileSync(join(ROOT, f.dir, "input.json"), "utf8")) as CircuitInput;
    for (let i = 0; i < 3; i++) {
      const text = randomText(shape, wasm.prime, f.name.startsWith("bits"));
      const label = `${f.curve}/${f.name} input ${i}: ${text.slice(0, 300)}`;
      const expected = await wasm.wtns(JSON.parse(text) as CircuitInput);
      const { input, output } = inputFile(text);
      const r = runExecutable(executable, [input, output]);
      assert.equal(r.status, 0, `${label}\n${r.stderr}`);
      assert.ok(same(new Uint8Array(readFileSync(output)), expected), label);
      compared++;
    }
  }
  assert.equal(compared, committed.length * 3);
});

test("refusals: what JSON.parse or circom_runtime refuses is exit status 1 with one line naming the signal or the place, and no output file", async () => {
  const bits = committed.find((f) => f.name === "bits_10" && f.curve === "bn254")!;
  const executable = await executableOf(bits);
  const wasm = await WitnessCalculator.load(join(ROOT, bits.dir, "circuit.wasm"), { engine: "wasm" });
  const good = JSON.parse(readFileSync(join(ROOT, bits.dir, "input.json"), "utf8")) as { v: string[] };
  const withLeaf = (leaf: string) => `{"v": [${[leaf, ...good.v.slice(1).map((v) => `"${v}"`)].join(", ")}]}`;
  // [text, the message, whether JSON.parse itself refuses it (else circom_runtime does)]
  const cases: Array<[string | Uint8Array, RegExp, boolean]> = [
    [`{"v": ${JSON.stringify(good.v.slice(1))}}`, /input signal v takes 15 value\(s\); 14 given/, false],
    [`{"v": ${JSON.stringify(good.v)}, "extra": "1"}`, /input signal extra is not an input of the circuit/, false],
    ["{}", /not all inputs have been set: 0 of 15 values given/, false],
    ["[1, 2]", /must be an object/, false],
    ["null", /must be an object/, false],
    ...["\"1.5\"", "\"1e3\"", "\"0x\"", "\"-0x1\"", "\"1_000\"", "\"- 1\"", "\"Infinity\"", "\"12a\"", "null", "{}", "{\"a\": 1}", "1.5", "1e400", "-1e-7"]
      .map((leaf): [string, RegExp, boolean] => [withLeaf(leaf), /^[^\n]*: input signal v: .* is not an integer\n$/, false]),
    // v[2] >= 2^64: its 64 bits do not recompose it, so the circuit's assert fails (circom's message).
    [`{"v": ${JSON.stringify(good.v.map((v, i) => i === 2 ? (1n << 64n).toString() : v))}}`, /Failed assert in template\/function Bits line \d+/, false],
    ...["{\"v\": [1, 2,]}", "{'v': 1}", "{\"v\": \"abc", "{\"v\": \"a\u0001\"}", "{\"v\": 01}", "{\"v\": NaN}", "{\"v\": 1} x", "", "   ",
      "{\"v\": -}", "{\"v\": 1.}", "{\"v\": .5}", "{\"v\": 1e}", "{\"v\": \"\\x\"}", "{\"v\": \"\\u12\"}", "{\"v\" 1}", "{v: 1}", "{\"v\": [1}"]
      .map((text): [string, RegExp, boolean] => [text, /the input is not valid JSON: .* at line \d+, column \d+/, true]),
    [new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(JSON.stringify(good))]), /not valid JSON: .* at line 1, column 1\n/, true], // a BOM
  ];
  for (const [text, message, parseRefuses] of cases) {
    const shown = typeof text === "string" ? text.slice(0, 120) : "(a BOM, then the fixture's input)";
    // As readFileSync(path, "utf8") reads it (circom_runtime's callers): a BOM is kept.
    const decoded = typeof text === "string" ? text : new TextDecoder("utf-8", { ignoreBOM: true }).decode(text);
    if (parseRefuses) {
      assert.throws(() => JSON.parse(decoded), `JSON.parse refuses ${shown}`);
    } else {
      await assert.rejects(wasm.wtns(JSON.parse(decoded) as CircuitInput), `circom_runtime refuses ${shown}`);
    }
    const { input, output } = inputFile(text);
    writeFileSync(output, "kept"); // a file already there is left alone
    const r = runExecutable(executable, [input, output]);
    assert.equal(r.status, 1, `${shown}: exit status\n${r.stderr}`);
    assert.match(r.stderr, message, shown);
    assert.equal(r.stderr.trim().split("\n").length, 1, `${shown}: one line (${r.stderr})`);
    assert.ok(r.stderr.startsWith(`${bits.name}.witness: `), `${shown}: the program's name first (${r.stderr})`);
    assert.equal(readFileSync(output, "utf8"), "kept", `${shown}: the output file untouched`);
  }
  // A repeated key: the last value counts (JSON.parse), so a bad first one is no error.
  const repeated = inputFile(`{"v": ["1.5"], "v": ${JSON.stringify(good.v)}}`);
  assert.equal(runExecutable(executable, [repeated.input, repeated.output]).status, 0);
  assert.ok(same(new Uint8Array(readFileSync(repeated.output)), new Uint8Array(readFileSync(join(ROOT, bits.dir, "witness.wtns")))));
});

test("files, bounds and the command line: stdin, a missing or oversized input, nesting past the bound, an output it cannot create, usage", async () => {
  const bits = committed.find((f) => f.name === "bits_10" && f.curve === "bls12_381")!;
  const executable = await executableOf(bits);
  const text = readFileSync(join(ROOT, bits.dir, "input.json"), "utf8");
  const expected = new Uint8Array(readFileSync(join(ROOT, bits.dir, "witness.wtns")));
  const dir = join(WORK, "files");
  mkdirSync(dir, { recursive: true });

  const fromStdin = runExecutable(executable, ["-", join(dir, "stdin.wtns")], text);
  assert.equal(fromStdin.status, 0, fromStdin.stderr);
  assert.ok(same(new Uint8Array(readFileSync(join(dir, "stdin.wtns"))), expected), "input from stdin");

  const failures: Array<[string[], RegExp]> = [
    [[join(dir, "absent.json"), join(dir, "a.wtns")], /cannot open .*absent\.json: No such file/],
    [[dir, join(dir, "b.wtns")], /is not a regular file/],
    [[join(ROOT, bits.dir, "input.json"), join(dir, "no-such-folder", "c.wtns")], /cannot create .*c\.wtns: No such file/],
  ];
  // Past the 1 GiB bound (a sparse file: nothing is written to disk).
  const huge = join(dir, "huge.json");
  writeFileSync(huge, "");
  truncateSync(huge, (1 << 30) + 1);
  failures.push([[huge, join(dir, "d.wtns")], /holds 1073741825 bytes; inputs are read up to 1073741824/]);
  // Nesting past the bound (1024): refused before it can exhaust the stack.
  const deep = inputFile(`{"v": ${"[".repeat(5000)}${"]".repeat(5000)}}`);
  failures.push([[deep.input, deep.output], /values nested too deep at line 1/]);
  for (const [args, message] of failures) {
    const r = runExecutable(executable, args);
    assert.equal(r.status, 1, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.ok(!existsSync(args[1]), `${args[1]}: not written`);
  }
  rmSync(huge);

  for (const args of [[], ["only-one.json"], ["a.json", "b.wtns", "c"]]) {
    const r = runExecutable(executable, args);
    assert.equal(r.status, 2, `usage: ${args.join(" ")}`);
    assert.match(r.stderr, /usage: .*\.witness <input\.json \| -> <output\.wtns>/);
  }
  const help = runExecutable(executable, ["--help"]);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /usage: /);
});

test("cuzk witness compile prints the library and the executable; the executable proves the fixture's witness", async () => {
  const f = committed.find((c) => c.name === "poseidon_10" && c.curve === "bls12_381")!;
  const dir = join(WORK, "cli");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "poseidon_10.circom"), (circuitByName(f.name) as { source(): string }).source());
  const runtime = "Deno" in globalThis ? ["run", "-A", join(ROOT, "cli.ts")] : [join(ROOT, "cli.ts")];
  const r = spawnSync(process.execPath, [...runtime, "witness", "compile", join(dir, "poseidon_10.circom"), "-l", NODE_MODULES, "--prime", "bls12381",
    "--O2", "-o", join(dir, "out"), "--cache", CACHE], { cwd: ROOT, encoding: "utf8", timeout: 300_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split("\n"), [join(dir, "out", "poseidon_10.witness.so"), join(dir, "out", "poseidon_10.witness")]);
  assert.match(r.stderr, /^cuzk: circom /m, "piped: a line per step");
  // Again, from the cache: --progress none writes nothing on stderr, the same paths on stdout.
  const quiet = spawnSync(process.execPath, [...runtime, "witness", "compile", join(dir, "poseidon_10.circom"), "-l", NODE_MODULES, "--prime", "bls12381",
    "--O2", "-o", join(dir, "out"), "--cache", CACHE, "--progress", "none"], { cwd: ROOT, encoding: "utf8", timeout: 300_000 });
  assert.equal(quiet.status, 0, quiet.stderr);
  assert.equal(quiet.stderr, "");
  assert.equal(quiet.stdout, r.stdout);
  const run = runExecutable(join(dir, "out", "poseidon_10.witness"), [join(ROOT, f.dir, "input.json"), join(dir, "w.wtns")]);
  assert.equal(run.status, 0, run.stderr);
  assert.ok(same(new Uint8Array(readFileSync(join(dir, "w.wtns"))), new Uint8Array(readFileSync(join(ROOT, f.dir, "witness.wtns")))));
  // fullprove with the .wasm beside the library: the library computes the witness, and says so.
  const wasm = join(dir, "out", "poseidon_10.wasm");
  copyFileSync(join(ROOT, f.dir, "circuit.wasm"), wasm);
  const past = new Date(Date.now() - 60_000);
  utimesSync(wasm, past, past);
  const proof = join(dir, "proof.json"), pub = join(dir, "public.json");
  const full = spawnSync(process.execPath, [...runtime, "groth16", "fullprove", join(ROOT, f.dir, "input.json"), wasm, join(ROOT, f.dir, "circuit.zkey"), proof, pub],
    { cwd: ROOT, encoding: "utf8", timeout: 300_000 });
  assert.equal(full.status, 0, full.stderr);
  assert.match(full.stderr, new RegExp(`computing the witness with ${join(dir, "out", "poseidon_10.witness.so").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  const check = spawnSync(process.execPath, [...runtime, "groth16", "verify", join(ROOT, f.dir, "verification_key.json"), pub, proof], { cwd: ROOT, encoding: "utf8" });
  assert.equal(check.status, 0, check.stdout + check.stderr);
});
