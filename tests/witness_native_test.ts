/**
 * @module
 * Promise: a circuit's native witness library (`cuzk witness compile`) gives
 * the same witness, byte for byte, as circom_runtime's WASM: on every committed fixture's input
 * and on random inputs, for both curves; circom's operators (field, integer, bitwise, shifts,
 * comparisons) on random and edge operands; locals filled from constant tables (the compile
 * step's rewrites of circom's code), also after a failed assert; a failed assert is an UNSATISFIED CuzkError naming
 * the template and line, bad inputs are INVALID_ARGUMENT naming the signal, and the process lives
 * on. The fixtures' libraries come from tests/support/witness_fixtures.ts (compiled once per
 * `npm test`).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { compileWitnessLibrary, CuzkError, fullProveMany, groth16, NativeWitnessCalculator, Prover, WitnessCalculator } from "../mod.ts";
import type { CircuitInput } from "../mod.ts";
import { rewriteCircuitCpp } from "../src/witness/rewrite.ts";
import { library, needs } from "./support/native.ts";
import { assertSnarkjsAccepts } from "./support/snarkjs.ts";
import { allLibraries, CACHE, committed, libraryOf, NODE_MODULES, PRIME_OF, randomBelow, randomInput, ROOT, same, scratchDir } from "./support/witness_fixtures.ts";

const WORK = scratchDir();

test("every committed fixture: the native witness equals the WASM's and the committed witness.wtns, byte for byte", async () => {
  assert.ok(committed.length >= 22, `the manifest lists the committed fixtures (${committed.length})`);
  await allLibraries();
  for (const f of committed) {
    const label = `${f.curve}/${f.name}`;
    const native = await WitnessCalculator.load(await libraryOf(f));
    assert.equal(native.engine, "native", label);
    const wasm = await WitnessCalculator.load(join(ROOT, f.dir, "circuit.wasm"), { engine: "wasm" });
    const input = JSON.parse(readFileSync(join(ROOT, f.dir, "input.json"), "utf8")) as CircuitInput;
    const fromNative = await native.wtns(input);
    assert.ok(same(fromNative, await wasm.wtns(input)), `${label}: native == WASM`);
    assert.ok(same(fromNative, new Uint8Array(readFileSync(join(ROOT, f.dir, "witness.wtns")))), `${label}: native == witness.wtns`);
    assert.equal(native.nVars, wasm.nVars, label);
    assert.equal(native.prime, wasm.prime, label);
  }
});

test("random inputs: the native witness equals the WASM's on every committed fixture (3 inputs each), raw values too", async () => {
  await allLibraries();
  let compared = 0;
  for (const f of committed) {
    const label = `${f.curve}/${f.name}`;
    const native = await NativeWitnessCalculator.load(await libraryOf(f));
    const wasm = await WitnessCalculator.load(join(ROOT, f.dir, "circuit.wasm"), { engine: "wasm" });
    const shape = JSON.parse(readFileSync(join(ROOT, f.dir, "input.json"), "utf8")) as CircuitInput;
    for (let i = 0; i < 3; i++) {
      const input = randomInput(shape, wasm.prime, f.name);
      const expected = await wasm.wtns(input);
      assert.ok(same(await native.wtns(input), expected), `${label}: random input ${i} (${JSON.stringify(input).slice(0, 120)})`);
      const raw = new Uint8Array(native.rawBytes + 64);
      assert.equal(await native.writeRaw(input, raw, 64), native.rawBytes);
      assert.ok(same(raw.subarray(64), expected.subarray(expected.length - native.rawBytes)), `${label}: writeRaw at an offset`);
      compared++;
    }
  }
  assert.equal(compared, committed.length * 3);
});

// Every operator circom compiles to an Fr_* call, on two operands and a shift amount.
const OPS_SOURCE = `pragma circom 2.1.0;
template Ops() {
    signal input a;
    signal input b;
    signal input k;
    signal output o[29];
    o[0] <-- a + b;      o[1] <-- a - b;      o[2] <-- a * b;      o[3] <-- a / b;
    o[4] <-- a \\ b;     o[5] <-- a % b;      o[6] <-- a ** k;     o[7] <-- -a;
    o[8] <-- a < b;      o[9] <-- a > b;      o[10] <-- a <= b;    o[11] <-- a >= b;
    o[12] <-- a == b;    o[13] <-- a != b;    o[14] <-- a && b;    o[15] <-- a || b;
    o[16] <-- !a;        o[17] <-- a & b;     o[18] <-- a | b;     o[19] <-- a ^ b;
    o[20] <-- ~a;        o[21] <-- a << k;    o[22] <-- a >> k;    o[23] <-- a << (0 - k);
    o[24] <-- a >> (0 - k);
    o[25] <-- (a & 255) * 7 + (b >> 250);
    o[26] <-- a * a * a + b;
    var acc = 0;
    for (var i = 0; i < 8; i++) { acc = acc + (a >> i) % 3; }
    o[27] <-- acc;
    o[28] <-- (k < 5) ? a : b;
}
component main = Ops();
`;

/** circom --c --wasm of `source` into `dir` as `<name>.circom` (Node runs circom2's WASI build). */
function circomBoth(source: string, dir: string, prime: string, name = "ops"): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.circom`);
  writeFileSync(file, source);
  const r = spawnSync("node", [join(NODE_MODULES, "circom2/cli.js"), file, "--c", "--wasm", "--prime", prime, "-o", dir], { cwd: "/", encoding: "utf8" });
  assert.equal(r.status, 0, `circom: ${r.stdout}${r.stderr}`);
}

test("circom's operators on random and edge operands: native == WASM on both curves (a folder from circom --c as the source)", async () => {
  for (const curve of ["bn254", "bls12_381"]) {
    const dir = join(WORK, `ops_${curve}`);
    circomBoth(OPS_SOURCE, dir, PRIME_OF[curve]);
    const { library } = await compileWitnessLibrary(join(dir, "ops_cpp"), { cacheDir: CACHE, outDir: dir });
    const native = await NativeWitnessCalculator.load(library);
    const wasm = await WitnessCalculator.load(join(dir, "ops_js/ops.wasm"), { engine: "wasm" });
    const p = wasm.prime;
    assert.equal(native.prime, p);
    const edges = [1n, 2n, 3n, 255n, (1n << 31n) - 1n, 1n << 31n, (1n << 32n) + 5n, (p - 1n) / 2n, (p + 1n) / 2n, p - 1n, p - 2n, p - (1n << 31n), 1n << 200n];
    const operand = () => randomBelow(3n) === 0n ? edges[Number(randomBelow(BigInt(edges.length)))] : randomBelow(p);
    const shiftAmount = () => [0n, 1n, 7n, 31n, 64n, 253n, 254n, 255n, 300n][Number(randomBelow(9n))];
    for (let i = 0; i < 60; i++) {
      const input = { a: operand().toString(), b: operand().toString(), k: (i < 9 ? [0n, 1n, 7n, 31n, 64n, 253n, 254n, 255n, 300n][i] : shiftAmount()).toString() };
      assert.ok(same(await native.wtns(input), await wasm.wtns(input)), `${curve}: ops on ${JSON.stringify(input)}`);
    }
  }
});

// Locals filled from constant tables (src/witness/rewrite.ts copies them from an image): Dynamic
// writes its table at a loop index (circom's copy on every run), Kept only at constant indices
// (its locals are kept per thread and those it writes restored on the next run: its loop reads
// u[3] before writing it), and its assert fails after those writes. Three components of each, in a
// chain, so a stale local shows.
const LOCALS_SOURCE = `pragma circom 2.1.0;
template Dynamic() {
    signal input x;
    signal output y;
    var t[12] = [3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 1 << 100, 1 << 200];
    for (var i = 0; i < 12; i++) { t[i] = t[i] * x + t[(i + 1) % 12]; }
    var acc = 0;
    for (var i = 0; i < 12; i++) { acc = acc * 5 + t[i]; }
    y <-- acc;
}
template Kept() {
    signal input x;
    signal output y;
    var u[10] = [2, 4, 6, 8, 10, 12, 14, 16, 18, 1 << 150];
    var acc = 0;
    for (var i = 0; i < 10; i++) { acc = acc * x + u[i]; }
    u[3] = acc;
    u[9] = u[9] * x;
    assert(x != 7);
    y <-- acc + u[3] * 5 + u[9];
}
template Chain(n) {
    signal input x;
    signal output y;
    component k[n];
    component d[n];
    signal s[n + 1];
    s[0] <== x;
    for (var i = 0; i < n; i++) {
        k[i] = Kept();
        k[i].x <== s[i];
        d[i] = Dynamic();
        d[i].x <== k[i].y;
        s[i + 1] <== d[i].y;
    }
    y <== s[n];
}
component main = Chain(3);
`;

test("locals from constant tables (copied from an image; kept per thread where only constant indices are written): native == WASM on both curves, also after a failed assert", async () => {
  for (const curve of ["bn254", "bls12_381"]) {
    const dir = join(WORK, `locals_${curve}`);
    circomBoth(LOCALS_SOURCE, dir, PRIME_OF[curve], "locals");
    // The two forms this test is about are the ones the rewrite chose.
    const rewritten = rewriteCircuitCpp(readFileSync(join(dir, "locals_cpp/locals.cpp"), "utf8"));
    const body = (template: string) => rewritten.slice(rewritten.search(new RegExp(`^void ${template}_\\d+_run\\(uint ctx_index,Circom_CalcWit\\* ctx\\)\\{`, "m"))).split(/\n\}\n\n/)[0];
    assert.match(body("Kept"), /cuzk_kept_lvar/);
    assert.match(body("Kept"), /restore_constants/);
    assert.doesNotMatch(body("Dynamic"), /cuzk_kept_lvar/);
    assert.match(body("Dynamic"), /copy_constants/);
    const { library } = await compileWitnessLibrary(join(dir, "locals_cpp"), { cacheDir: CACHE, outDir: dir });
    const native = await NativeWitnessCalculator.load(library);
    const wasm = await WitnessCalculator.load(join(dir, "locals_js/locals.wasm"), { engine: "wasm" });
    for (let i = 0; i < 6; i++) {
      const input = { x: (i < 2 ? BigInt(i + 5) : randomBelow(wasm.prime)).toString() };
      assert.ok(same(await native.wtns(input), await wasm.wtns(input)), `${curve}: x = ${input.x}`);
      if (i === 2) {
        await assert.rejects(native.wtns({ x: "7" }), (e: unknown) => e instanceof CuzkError && e.code === "UNSATISFIED" && /Kept/.test(e.message));
      }
    }
  }
});

test("failures: a failed assert is UNSATISFIED with circom's template and line; bad inputs are INVALID_ARGUMENT naming the signal", async () => {
  const bits = committed.find((f) => f.name === "bits_10" && f.curve === "bn254")!;
  const native = await NativeWitnessCalculator.load(await libraryOf(bits));
  const shape = JSON.parse(readFileSync(join(ROOT, bits.dir, "input.json"), "utf8")) as { v: string[] };
  // v[2] >= 2^64: its 64 bits do not recompose it, so the circuit's `lc === v[m]` fails (the WASM fails too).
  const tooBig = { v: shape.v.map((v, i) => i === 2 ? (1n << 64n).toString() : v) };
  const wasm = await WitnessCalculator.load(join(ROOT, bits.dir, "circuit.wasm"), { engine: "wasm" });
  await assert.rejects(wasm.wtns(tooBig), (e: unknown) => e instanceof CuzkError && e.code === "UNSATISFIED");
  await assert.rejects(native.wtns(tooBig), (e: unknown) => {
    assert.ok(e instanceof CuzkError && e.code === "UNSATISFIED", String(e));
    assert.match(e.message, /Failed assert in template\/function Bits line \d+/);
    assert.match(e.message, /main/);
    return true;
  });
  const zeroed = new Uint8Array(native.rawBytes).fill(7);
  await assert.rejects(native.writeRaw(tooBig, zeroed));
  assert.ok(zeroed.every((b) => b === 0), "a failed computation leaves zeros, not a partial witness");
  const cases: Array<[unknown, RegExp]> = [
    [{ v: shape.v.slice(1) }, /input signal v takes 15 value\(s\); 14 given/],
    [{ v: shape.v, extra: "1" }, /input signal extra is not an input of the circuit/],
    [{}, /not all inputs have been set: 0 of 15/],
    [{ v: shape.v.map((v, i) => i === 0 ? "1.5" : v) }, /input signal v: "1.5" is not an integer/],
    [[1, 2], /must be an object/],
  ];
  for (const [input, message] of cases) {
    await assert.rejects(native.wtns(input as CircuitInput), (e: unknown) => e instanceof CuzkError && e.code === "INVALID_ARGUMENT" && message.test(e.message), String(message));
  }
  await assert.rejects(native.writeRaw(shape, new Uint8Array(native.rawBytes - 1)), (e: unknown) => e instanceof CuzkError && e.code === "SHORT_BUFFER");
  // The process lives on and the library still computes.
  assert.ok(same(await native.wtns(shape), new Uint8Array(readFileSync(join(ROOT, bits.dir, "witness.wtns")))));
  await assert.rejects(NativeWitnessCalculator.load(join(ROOT, bits.dir, "circuit.wasm")), (e: unknown) => e instanceof CuzkError);
  await assert.rejects(NativeWitnessCalculator.load(join(WORK, "absent.witness.so")), (e: unknown) => e instanceof CuzkError && e.code === "IO");
});

test("concurrent computations on one library give the same bytes as one at a time; a .wasm with a fresh sibling library is routed to it", async () => {
  const f = committed.find((c) => c.name === "poseidon_10" && c.curve === "bls12_381")!;
  const library = await libraryOf(f);
  const native = await NativeWitnessCalculator.load(library);
  const wasm = await WitnessCalculator.load(join(ROOT, f.dir, "circuit.wasm"), { engine: "wasm" });
  const shape = JSON.parse(readFileSync(join(ROOT, f.dir, "input.json"), "utf8")) as CircuitInput;
  const inputs = Array.from({ length: 8 }, () => randomInput(shape, wasm.prime, f.name));
  const together = await Promise.all(inputs.map((input) => native.wtns(input)));
  for (let i = 0; i < inputs.length; i++) assert.ok(same(together[i], await wasm.wtns(inputs[i])), `input ${i}`);
  // A copy of the fixture's .wasm with the library beside it (newer): auto picks the native one.
  const dir = join(WORK, "sibling");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "circuit.wasm"), readFileSync(join(ROOT, f.dir, "circuit.wasm")));
  writeFileSync(join(dir, "circuit.witness.so"), readFileSync(library));
  const routed = await WitnessCalculator.load(join(dir, "circuit.wasm"));
  assert.equal(routed.engine, "native");
  assert.ok(same(await routed.wtns(inputs[0]), together[0]));
  assert.equal((await WitnessCalculator.load(join(dir, "circuit.wasm"), { engine: "wasm" })).engine, "wasm");
  assert.ok(existsSync(join(dir, "circuit.witness.so")));
});

test("fullProveMany: witness i+1 is computed while proof i runs, never two ahead; proofs in order, each accepted; a bad input stops the stream by index", needs("cuzk_prover_create", "cuzk_prove", "cuzk_host_alloc"), async () => {
  const f = committed.find((c) => c.name === "poseidon_10" && c.curve === "bn254")!;
  const shape = JSON.parse(readFileSync(join(ROOT, f.dir, "input.json"), "utf8")) as CircuitInput;
  const wasm = await WitnessCalculator.load(join(ROOT, f.dir, "circuit.wasm"), { engine: "wasm" });
  const inputs = Array.from({ length: 6 }, () => randomInput(shape, wasm.prime, f.name));
  const vkey = join(ROOT, f.dir, "verification_key.json");
  const prover = await Prover.open({ zkey: join(ROOT, f.dir, "circuit.zkey"), backend: "cpu" });
  try {
    for (const [engine, generator] of [["native", await libraryOf(f)], ["wasm", wasm]] as const) {
      const seen: number[] = [];
      const results = await fullProveMany(inputs, generator, prover, { onResult: (i) => seen.push(i) });
      assert.deepEqual(seen, [0, 1, 2, 3, 4, 5], engine);
      for (let i = 0; i + 1 < results.length; i++) {
        // Pipelined: the next witness starts before this proof ends (a sequential loop would start it after)...
        assert.ok(results[i + 1].witnessSpan.start < results[i].proofSpan.end, `${engine}: witness ${i + 1} starts while proof ${i} runs`);
        assert.ok(results[i + 1].witnessSpan.start <= results[i].proofSpan.start, `${engine}: witness ${i + 1} starts with proof ${i}`);
        // ... and one ahead at most: witness i+2 waits for proof i (bounded memory).
        if (i + 2 < results.length) assert.ok(results[i + 2].witnessSpan.start >= results[i].proofSpan.end, `${engine}: witness ${i + 2} waits for proof ${i}`);
      }
      for (let i = 0; i < inputs.length; i++) {
        const single = await groth16.fullProve(inputs[i], wasm, prover);
        assert.deepEqual(results[i].publicSignals, single.publicSignals, `${engine}: input ${i}'s public signals`);
        assert.equal(await groth16.verify(JSON.parse(readFileSync(vkey, "utf8")), results[i].publicSignals, results[i].proof), true, `${engine}: proof ${i}`);
      }
      const witnessMs = results.reduce((t, r) => t + r.witnessSpan.end - r.witnessSpan.start, 0);
      const proofMs = results.reduce((t, r) => t + r.proofSpan.end - r.proofSpan.start, 0);
      const wallMs = results[results.length - 1].proofSpan.end - results[0].witnessSpan.start;
      console.log(`fullProveMany ${engine}: 6 inputs in ${wallMs.toFixed(0)} ms; witnesses ${witnessMs.toFixed(0)} ms + proofs ${proofMs.toFixed(0)} ms one after the other`);
      assertSnarkjsAccepts(results.slice(0, 2).map((r, i) => ({ name: `${engine}-${i}`, vkey, publicSignals: r.publicSignals, proof: r.proof })));
    }
    // Input 3 names a signal the circuit lacks: the stream stops there, naming it; the pooled buffers are all given back.
    const stats = library().hostStats(); // after the prover staged its first JS-memory witness (it keeps that buffer)
    const bad = [...inputs];
    bad[3] = { x: shape.x, w: shape.w, extra: "1" } as CircuitInput;
    await assert.rejects(fullProveMany(bad, await libraryOf(f), prover), (e: unknown) => e instanceof CuzkError && /^input 3: /.test(e.message) && e.code === "INVALID_ARGUMENT");
    const after = library().hostStats();
    assert.equal(after.liveBuffers, stats.liveBuffers, "every pooled witness buffer was freed");
    await assert.rejects(fullProveMany(inputs, wasm, prover, { ahead: 0 }), (e: unknown) => e instanceof CuzkError && e.code === "INVALID_ARGUMENT");
  } finally {
    prover.close();
  }
});
