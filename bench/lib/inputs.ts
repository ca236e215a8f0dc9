/**
 * @module
 * Inputs of the benchmarks, made once and cached: synthetic circuits with keys from the INSECURE
 * development setup (docs/benchmarks.md, "Development setup"), at any domain size, so that the
 * suite does not depend on snarkjs's slow setup. The cache layout is shared with
 * `bench/side_by_side.mjs` (which makes the same directories through the CLI):
 *   <cache>/<curve>/synth_<profile>_<log>/{circuit.r1cs, witness.wtns, circuit.zkey, verification_key.json}
 * Also: the point sections of a .zkey (MSM inputs in the key encoding `cuzk_msm` takes) and random
 * scalars.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { setupInsecureDev, writeSynthCircuit } from "../../mod.ts";
import type { CurveName, Library, SynthProfile, VerificationKeyJson } from "../../mod.ts";

/** Where the inputs are kept unless told otherwise (ignored by git). */
export const DEFAULT_CACHE = fileURLToPath(new URL("../../.cache/bench/", import.meta.url));

/** Public inputs of every synthetic benchmark circuit (the generator's default). */
export const PUBLIC_INPUTS = 4;

/** A synthetic circuit with its development key, as files. */
export interface BenchKey {
  curve: CurveName;
  profile: SynthProfile;
  /** log2 of the key's domain. */
  log: number;
  constraints: number;
  dir: string;
  r1cs: string;
  wtns: string;
  zkey: string;
  vkey: string;
  /** Milliseconds spent making it now (0 when it came from the cache). */
  madeMs: number;
}

/**
 * The constraint count that fills a domain of 2^log exactly: snarkjs (and the dev setup) add one
 * row per public input and one for the constant wire, domain = 2^ceil(log2(rows)).
 */
export function constraintsForDomain(log: number): number {
  const constraints = 2 ** log - PUBLIC_INPUTS - 1;
  if (constraints < 1) throw new RangeError(`a domain of 2^${log} is too small for ${PUBLIC_INPUTS} public inputs`);
  return constraints;
}

/** The cache directory of one synthetic key. */
export function benchKeyDir(cache: string, curve: CurveName, profile: SynthProfile, log: number): string {
  return join(cache, curve, `synth_${profile}_${log}`);
}

/** Returns the cached key, making it (synthetic circuit + insecure dev setup) when missing. */
export async function syntheticKey(
  cache: string,
  curve: CurveName,
  profile: SynthProfile,
  log: number,
  library?: Library,
): Promise<BenchKey> {
  const dir = benchKeyDir(cache, curve, profile, log);
  const files = {
    r1cs: join(dir, "circuit.r1cs"),
    wtns: join(dir, "witness.wtns"),
    zkey: join(dir, "circuit.zkey"),
    vkey: join(dir, "verification_key.json"),
  };
  const constraints = constraintsForDomain(log);
  let madeMs = 0;
  if (!Object.values(files).every((f) => existsSync(f))) {
    const started = performance.now();
    // Made in a private directory and renamed into place, so that a run that dies half-way (or two
    // runs at once) never leave a half-written key behind.
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const at = (f: string) => join(tmp, f.slice(dir.length + 1));
    await writeSynthCircuit({ curve, constraints, profile, publicInputs: PUBLIC_INPUTS, seed: 1, library }, { r1cs: at(files.r1cs), wtns: at(files.wtns) });
    const setup = await setupInsecureDev(at(files.r1cs), at(files.zkey), { library });
    if (setup.domainSize !== 2 ** log) throw new Error(`dev setup gave a domain of ${setup.domainSize}, expected 2^${log}`);
    writeFileSync(at(files.vkey), JSON.stringify(setup.verificationKey, null, 1));
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    madeMs = performance.now() - started;
  }
  return { curve, profile, log, constraints, dir, ...files, madeMs };
}

/** The verification key of a bench key. */
export function readVkey(key: BenchKey): VerificationKeyJson {
  return JSON.parse(readFileSync(key.vkey, "utf8"));
}

/** Section ids of a Groth16 .zkey (formats.md): point sections used as MSM inputs. */
export const ZKEY_SECTION = { A: 5, B1: 6, B2: 7, C: 8, H: 9 } as const;

/**
 * The bytes of one section of a .zkey (snarkjs's binary container: "zkey", version, section count,
 * then (id u32, size u64, bytes) records). A view into `file`, not a copy.
 */
export function zkeySection(file: Uint8Array, id: number): Uint8Array {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const magic = new TextDecoder().decode(file.subarray(0, 4));
  if (magic !== "zkey") throw new Error(`not a .zkey (magic ${JSON.stringify(magic)})`);
  const sections = view.getUint32(8, true);
  let offset = 12;
  for (let i = 0; i < sections; i++) {
    const sectionId = view.getUint32(offset, true);
    const size = Number(view.getBigUint64(offset + 4, true));
    offset += 12;
    if (offset + size > file.byteLength) throw new Error(`.zkey section ${sectionId} runs past the end of the file`);
    if (sectionId === id) return file.subarray(offset, offset + size);
    offset += size;
  }
  throw new Error(`.zkey has no section ${id}`);
}

/**
 * `count` elements of `elementBytes` each, taken from `source` in order and repeated when it holds
 * fewer (an MSM's cost does not depend on whether its points repeat).
 */
export function tile(source: Uint8Array, elementBytes: number, count: number): Uint8Array {
  const have = Math.floor(source.byteLength / elementBytes);
  if (have === 0) throw new Error("no elements to tile from");
  const out = new Uint8Array(count * elementBytes);
  for (let done = 0; done < count; done += have) {
    const take = Math.min(have, count - done);
    out.set(source.subarray(0, take * elementBytes), done * elementBytes);
  }
  return out;
}

/**
 * n random 32-byte scalars below 2^253 (< r on both curves: BN254's r is about 2^253.6, BLS12-381's
 * about 2^254.9), so every window of the MSM is used as with real H or witness scalars.
 */
export function randomScalars(n: number): Uint8Array {
  const out = new Uint8Array(n * 32);
  for (let offset = 0; offset < out.length; offset += 65536) {
    crypto.getRandomValues(out.subarray(offset, Math.min(out.length, offset + 65536)));
  }
  for (let i = 0; i < n; i++) out[i * 32 + 31] &= 0x1f;
  return out;
}
