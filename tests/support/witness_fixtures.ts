/**
 * @module
 * The committed fixtures' native witness libraries and random inputs, shared by the witness tests
 * (witness_native_test.ts: the library; witness_command_test.ts: the executable beside it).
 * Libraries are compiled into a content-addressed cache ($CUZK_WITNESS_TEST_CACHE, default under
 * the OS temp folder), kept between runs. Within one `npm test` (tools/run-tests.mjs names it with
 * $CUZK_TEST_RUN_ID) the first runtime compiles and leaves each fixture's library path beside it;
 * the runtimes after it take that path, without running circom again (the cache's key is circom's
 * output). Each test file works in its own scratch folder (scratchDir), removed after its tests.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import { compileWitnessLibrary } from "../../mod.ts";
import type { CircuitInput } from "../../mod.ts";
import { circuitByName } from "../../tools/fixtures/circuits.mjs";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const NODE_MODULES = join(ROOT, "node_modules");
export const CACHE = process.env.CUZK_WITNESS_TEST_CACHE ?? join(tmpdir(), "cuzk-witness-test-cache");
/** The fixtures' libraries and executables: in the cache folder too (kept between runs, like the cache). */
const LIBRARIES = join(CACHE, "fixtures");

/**
 * A scratch folder for the calling test file, removed after its tests: call it at the file's top
 * level (Bun runs several files in one process, sharing this module; Deno's test workers may end
 * without an exit event, so the hook is the file's own `after`).
 */
export function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "cuzk-witness-test-"));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  after(remove);
  process.on("exit", remove);
  return dir;
}

export const PRIME_OF: Record<string, "bn128" | "bls12381"> = { bn254: "bn128", bls12_381: "bls12381" };

export interface ManifestEntry {
  name: string;
  curve: string;
  committed: boolean;
  dir: string;
  optimize: "--O1" | "--O2";
}
export const committed: ManifestEntry[] = (JSON.parse(readFileSync(join(ROOT, "tests/fixtures/manifest.json"), "utf8")).fixtures as ManifestEntry[])
  .filter((f) => f.committed);

const libraries = new Map<string, Promise<string>>();
const RUN_ID = process.env.CUZK_TEST_RUN_ID?.replace(/[^\w.-]/g, "");

/** The native library of a committed fixture, compiled from its circom source (memoized). */
export function libraryOf(f: ManifestEntry): Promise<string> {
  const key = `${f.curve}/${f.name}`;
  let made = libraries.get(key);
  if (!made) {
    const dir = join(LIBRARIES, f.curve);
    mkdirSync(dir, { recursive: true });
    const marker = RUN_ID ? join(dir, `${f.name}.run-${RUN_ID}`) : undefined;
    const earlier = marker && existsSync(marker) ? readFileSync(marker, "utf8") : undefined;
    if (earlier && existsSync(earlier)) made = Promise.resolve(earlier);
    else {
      const source = join(dir, `${f.name}.circom`);
      writeFileSync(source, (circuitByName(f.name) as { source(): string }).source());
      made = compileWitnessLibrary(source, { prime: PRIME_OF[f.curve], optimize: f.optimize, include: [NODE_MODULES], cacheDir: CACHE, outDir: dir })
        .then((r) => {
          if (marker) {
            // One marker a fixture: those of earlier runs go.
            for (const old of readdirSync(dir)) if (old.startsWith(`${f.name}.run-`)) rmSync(join(dir, old), { force: true });
            writeFileSync(marker, r.library);
          }
          return r.library;
        });
    }
    libraries.set(key, made);
  }
  return made;
}

/** Compiles every committed fixture's library, two at a time (the compiler is the slow part). */
export async function allLibraries(): Promise<void> {
  const queue = [...committed];
  await Promise.all([0, 1].map(async () => {
    for (let f = queue.shift(); f; f = queue.shift()) await libraryOf(f);
  }));
}

export const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

export function randomBelow(bound: bigint): bigint {
  const bits = bound.toString(2).length;
  for (;;) {
    const v = BigInt("0x" + randomBytes(Math.ceil(bits / 8)).toString("hex")) >> BigInt(Math.ceil(bits / 8) * 8 - bits);
    if (v < bound) return v;
  }
}

/** `input`'s shape with random values: below 2^64 for the bit-decomposition circuits, else any field element, some as negative numbers. */
export function randomInput(input: CircuitInput, prime: bigint, name: string): CircuitInput {
  const leaf = (): string => {
    if (name.startsWith("bits")) return randomBelow(1n << 64n).toString();
    const v = randomBelow(prime);
    return randomBelow(4n) === 0n ? (v - prime).toString() : v.toString();
  };
  const walk = (value: unknown): unknown => Array.isArray(value) ? value.map(walk) : leaf();
  return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, walk(v)]));
}

