/**
 * @module
 * Promise: witness, key, circuit and generator files given by path are refused with a typed error
 * before anything is read unless they are regular files of a bounded size: /dev/zero and a FIFO
 * are refused at once (never read without end, never blocking), and so is a witness file larger
 * than the key's witness can be. A key or .r1cs is refused on its header before it is read whole.
 * setup writes its key only onto a new path or a regular file.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
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
  // The message names both counts: the usual cause is the witness of another circuit.
  const nVars = key.info().nVars;
  await assert.rejects(groth16.prove(key, big, { backend: "cpu" }),
    refused(new RegExp(`room for about ${Math.floor((nVars * 32 + 64 * 1024 + 1) / 32)} values, but the key's circuit has ${nVars} wires.*another circuit`)));
  const { proof, publicSignals } = await groth16.prove(key, bn.file("witness.wtns"), { backend: "cpu" });
  assert.deepEqual(publicSignals, bn.json<string[]>("public.json"));
  assert.equal(await groth16.verify(bn.json("verification_key.json"), publicSignals, proof), true);
});

/** Resident memory of this process, in bytes. */
const rss = () => process.memoryUsage.rss();

test("a key or .r1cs of 3 GiB of zeros is refused on its header, holding no memory", needs(...api), async () => {
  const zeros = join(work, "zeros");
  writeFileSync(zeros, "");
  truncateSync(zeros, 3 * 2 ** 30); // sparse: no disk
  const before = rss();
  const started = performance.now();
  await assert.rejects(Key.open(zeros), refusedWith("FORMAT", /not a zkey file: magic is 0x00000000/), "as a key");
  const keyMs = performance.now() - started;
  await assert.rejects(Key.open(zeros, { pointsOnDemand: true }), refusedWith("FORMAT", /magic/), "as a key, points on demand");
  await assert.rejects(Prover.open({ zkey: bn.file("circuit.zkey"), r1cs: zeros, backend: "cpu" }), refusedWith("FORMAT", /not a r1cs file/), "as a .r1cs");
  await assert.rejects(setupInsecureDev(zeros, join(work, "never.zkey")), refusedWith("FORMAT", /not a r1cs file/), "as setup's .r1cs");
  const grewMiB = (rss() - before) / 2 ** 20;
  console.log(`3 GiB of zeros as a key: refused in ${keyMs.toFixed(1)} ms, resident memory grew ${grewMiB.toFixed(1)} MiB over the four refusals`);
  assert.ok(grewMiB < 10, `resident memory grew ${grewMiB.toFixed(1)} MiB`);
  // Generous against scheduling noise; reading the file whole took seconds.
  assert.ok(keyMs < 1000, `refused in ${keyMs.toFixed(0)} ms`);
});

test("setup's key is written only onto a new path or a regular file: a link, FIFO, folder or device stays as it was", needs(...api), async () => {
  const r1cs = bn.file("circuit.r1cs");
  const target = join(work, "precious.txt"), link = join(work, "link.zkey"), folder = join(work, "folder.zkey");
  writeFileSync(target, "precious");
  symlinkSync(target, link);
  mkdirSync(folder);
  const device = join(work, "null.zkey");
  let hasDevice = true;
  try {
    execFileSync("mknod", [device, "c", "1", "3"], { stdio: "ignore" }); // a /dev/null of our own (root only)
  } catch {
    hasDevice = false;
  }
  const cases: Array<[string, RegExp]> = [[link, /symbolic link/], [fifo, /FIFO/], [folder, /directory/], ...(hasDevice ? [[device, /device/] as [string, RegExp]] : [])];
  for (const [path, kind] of cases) {
    await assert.rejects(setupInsecureDev(r1cs, path), refusedWith("IO", kind), path);
  }
  assert.ok(lstatSync(link).isSymbolicLink(), "the link is still a link");
  assert.equal(readFileSync(target, "utf8"), "precious", "and its target untouched");
  assert.ok(lstatSync(fifo).isFIFO() && lstatSync(folder).isDirectory(), "the FIFO and the folder are what they were");
  if (hasDevice) assert.ok(lstatSync(device).isCharacterDevice(), "the device node is still one");
  assert.deepEqual(readdirSync(work).filter((name) => name.includes(".tmp.")), [], "no temporary file is left");
  await assert.rejects(setupInsecureDev(r1cs, r1cs), refusedWith("INVALID_ARGUMENT", /over its own circuit/), "the key over its .r1cs");
  // A regular file is replaced whole, and the key opens.
  const fresh = join(work, "fresh.zkey");
  writeFileSync(fresh, "old contents");
  await setupInsecureDev(r1cs, fresh);
  (await Key.open(fresh)).close();
});
