/**
 * @module
 * The rest of snarkjs's proving surface beside `groth16`: `zKey.exportVerificationKey` and
 * `wtns.calculate`, the forms in which snarkjs takes its files (fastfile's: a file name, the
 * bytes, `{ type: "mem", data }`, `{ type: "file", fileName }`), and `computeWitness`, the one
 * function through which the JS API and the CLI compute a witness.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CuzkError } from "./errors.ts";
import type { VerificationKeyJson } from "./formats/snarkjs.ts";
import { Key } from "./key.ts";
import type { KeyOpenOptions } from "./key.ts";
import { WitnessCalculator } from "./witness_calculator.ts";
import type { CircuitInput } from "./witness_calculator.ts";

/** A file as snarkjs takes one: its name, its bytes, or fastfile's `{ type: "mem" }` / `{ type: "file" }`. */
export type SnarkjsFile = string | Uint8Array | { type: "mem"; data: Uint8Array } | { type: "file"; fileName: string };

/** A witness generator: circuit.wasm as a SnarkjsFile or a URL, or a WitnessCalculator loaded once for many calls. */
export type WasmSource = SnarkjsFile | URL | WitnessCalculator;

/** Where a SnarkjsFile's bytes are: a path to read, or memory. */
export type FileForm = { path: string } | { bytes: Uint8Array };

/** The path or the bytes of a file given in any of snarkjs's forms; INVALID_ARGUMENT otherwise. */
export function fileForm(source: unknown, what: string): FileForm {
  if (typeof source === "string") return { path: source };
  if (source instanceof URL) return { path: fileURLToPath(source) };
  if (source instanceof Uint8Array) return { bytes: source };
  if (typeof source === "object" && source !== null) {
    const { type, data, fileName } = source as { type?: unknown; data?: unknown; fileName?: unknown };
    if (type === "mem" && data instanceof Uint8Array) return { bytes: data };
    if (type === "file" && typeof fileName === "string") return { path: fileName };
  }
  throw new CuzkError(
    "INVALID_ARGUMENT",
    `${what} must be a file name, a Uint8Array, { type: "mem", data: Uint8Array } or { type: "file", fileName } (snarkjs's forms; "bigMem" is not taken)`,
  );
}

/** Opens a .zkey given in any of snarkjs's forms (bytes are copied by the library). The caller closes it. */
export async function openKey(zkey: SnarkjsFile, options: KeyOpenOptions = {}): Promise<Key> {
  const form = fileForm(zkey, "zkey");
  return "path" in form ? await Key.open(form.path, options) : Key.fromBytes(form.bytes, options);
}

/** What computeWitness returns. */
export interface ComputedWitness {
  /** The bytes of a snarkjs .wtns file. */
  wtns: Uint8Array;
  /** Time spent computing it from the input (not loading the generator), in ms. */
  computeMs: number;
}

/**
 * Computes the witness of `input`: the one place the JS API (groth16.fullProve, wtns.calculate)
 * and, through them, the CLI compute one. Today through circom_runtime's WASM (WitnessCalculator).
 */
export async function computeWitness(input: CircuitInput, wasm: WasmSource, options: { sanityCheck?: boolean } = {}): Promise<ComputedWitness> {
  let calculator: WitnessCalculator;
  if (wasm instanceof WitnessCalculator) {
    calculator = wasm;
  } else {
    const form = fileForm(wasm, "wasm");
    calculator = await WitnessCalculator.load("path" in form ? form.path : form.bytes, { sanityCheck: options.sanityCheck });
  }
  const started = performance.now();
  const wtns = await calculator.wtns(input);
  return { wtns, computeMs: performance.now() - started };
}

/** verification_key.json as `snarkjs zkey export verificationkey` writes it: its fields, in its order. */
export type SnarkjsVerificationKey = VerificationKeyJson & { vk_alphabeta_12: string[][][] };

/** snarkjs's verification_key.json of an open key, field for field and in snarkjs's key order. */
export function snarkjsVerificationKey(key: Key): SnarkjsVerificationKey {
  const { IC, ...points } = key.exportVkJson();
  return { ...points, vk_alphabeta_12: key.exportVkAlphaBeta(), IC };
}

/** snarkjs's `zKey`: what of it a prover needs. */
export const zKey = {
  /** snarkjs's `zKey.exportVerificationKey(zkey)`: verification_key.json's object. `zkey` in any of snarkjs's forms. */
  async exportVerificationKey(zkey: SnarkjsFile, options: Omit<KeyOpenOptions, "skipPointChecks"> = {}): Promise<SnarkjsVerificationKey> {
    using key = await openKey(zkey, options);
    return snarkjsVerificationKey(key);
  },
};

/** snarkjs's `wtns`: witness calculation. */
export const wtns = {
  /**
   * snarkjs's `wtns.calculate(input, wasm, wtnsOut)`: computes the witness of `input` and writes it
   * as a .wtns file to `wtnsOut`, a file name, `{ type: "file", fileName }`, or `{ type: "mem" }`
   * (whose `data` is set to the bytes, as fastfile does). Resolves the .wtns bytes as well.
   */
  async calculate(
    input: CircuitInput,
    wasm: WasmSource,
    wtnsOut: string | { type: "file"; fileName: string } | { type: "mem"; data?: Uint8Array },
    options: { sanityCheck?: boolean } = {},
  ): Promise<Uint8Array> {
    const target = wtnsTarget(wtnsOut);
    const { wtns } = await computeWitness(input, wasm, options);
    if (typeof target === "string") {
      try {
        writeFileSync(target, wtns);
      } catch (cause) {
        throw new CuzkError("IO", `cannot write the witness to ${target}: ${(cause as Error).message}`, { cause });
      }
    } else {
      target.data = wtns;
    }
    return wtns;
  },
};

/** The path to write, or the `{ type: "mem" }` object whose data is set; checked before any work. */
function wtnsTarget(out: unknown): string | { data?: Uint8Array } {
  if (typeof out === "string") return out;
  if (typeof out === "object" && out !== null) {
    const o = out as { type?: unknown; fileName?: unknown; data?: Uint8Array };
    if (o.type === "file" && typeof o.fileName === "string") return o.fileName;
    if (o.type === "mem") return o;
  }
  throw new CuzkError("INVALID_ARGUMENT", `wtnsOut must be a file name, { type: "file", fileName } or { type: "mem" }`);
}
