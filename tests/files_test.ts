/**
 * @module
 * Promise: witness, key, circuit and generator files given by path are refused with a typed error
 * before anything is read unless they are regular files of a bounded size: /dev/zero and a FIFO
 * are refused at once (never read without end, never blocking), and so is a witness file larger
 * than the key's witness can be.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { groth16, Key, Prover, setupInsecureDev, WitnessCalculator } from "../mod.ts";
import { refusedWith } from "./support/errors.ts";
import { fixtures, needs } from "./support/native.ts";

const api = ["cuzk_key_open", "cuzk_key_check_witness", "cuzk_prover_create", "cuzk_prove", "cuzk_key_attach_r1cs"] as const;
const bn = fixtures().find((f) => f.curve === "bn254" && f.name === "mulchain_4")!;
const work = mkdtempSync(join(tmpdir(), "cuzk-files-"));
const fifo = join(work, "fifo");
execFileSync("mkfifo", [fifo]);
after(() => rmSync(work, { recursive: true, force: true }));

const refused = (pattern: RegExp) => refusedWith("INVALID_ARGUMENT", pattern);

test("/dev/zero and a FIFO as a witness, key, .r1cs or circuit.wasm are refused before reading", needs(...api), async () => {
  const zkey = bn.file("circuit.zkey");
  for (const path of ["/dev/zero", fifo, work]) {
    await assert.rejects(groth16.prove(zkey, path, { backend: "cpu" }), refused(/not a regular file/), `witness ${path}`);
    await assert.rejects(WitnessCalculator.load(path), refused(/not a regular file/), `wasm ${path}`);
    // The library reads keys and .r1cs files itself, and refuses them (IO) before reading.
    await assert.rejects(Key.open(path), refusedWith("IO", /not a regular file/), `key ${path}`);
    await assert.rejects(Prover.open({ zkey, r1cs: path, backend: "cpu" }), refusedWith("IO", /not a regular file/), `r1cs ${path}`);
    await assert.rejects(setupInsecureDev(path, join(work, "x.zkey")), refusedWith("IO", /not a regular file/), `setup r1cs ${path}`);
  }
});

test("a witness file larger than the key's witness can be is refused before it is read", needs(...api), async () => {
  using key = await Key.open(bn.file("circuit.zkey"));
  const big = join(work, "big.wtns");
  writeFileSync(big, bn.bytes("witness.wtns"));
  truncateSync(big, key.info().nVars * 32 + 64 * 1024 + 1); // sparse: nothing to read but its size
  await assert.rejects(groth16.prove(key, big, { backend: "cpu" }), refused(/more than the/));
  const { proof, publicSignals } = await groth16.prove(key, bn.file("witness.wtns"), { backend: "cpu" });
  assert.deepEqual(publicSignals, bn.json<string[]>("public.json"));
  assert.equal(await groth16.verify(bn.json("verification_key.json"), publicSignals, proof), true);
});
