/**
 * @module
 * Witnesses from circuit inputs, through the witness generator circom compiles to WebAssembly
 * (`circuit.wasm`), run by the npm package circom_runtime exactly as snarkjs runs it. The result
 * is a snarkjs .wtns file, or its raw values written straight into a buffer the caller holds (a
 * pooled PinnedBuffer in a proving loop). circom_runtime is imported on first use, so code that
 * never computes a witness does not need it. The generator runs on the JS thread (as in snarkjs);
 * only proving runs off it.
 *
 * Where the circuit has a native witness library (`cuzk witness compile`, src/witness/), that is
 * used instead: given in place of the .wasm, or found beside it (`<name>.witness.so` in the
 * .wasm's folder or the one above, at least as new as the .wasm). It runs off the JS thread and
 * gives the same bytes.
 */
import { existsSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LIMITS } from "./bounds.ts";
import { CuzkError } from "./errors.ts";
import { ABI } from "./ffi/symbols.ts";
import { readRegularFile } from "./files.ts";
import { NativeBuffer } from "./memory/buffer.ts";
import { NativeWitnessCalculator } from "./witness/library.ts";

/**
 * Circuit inputs as circom reads them: signal name -> a value or (nested) arrays of values; values
 * are bigints, numbers or decimal/hex strings (snarkjs's input.json).
 */
export type CircuitInput = Record<string, unknown>;

/** Options of WitnessCalculator.load. */
export interface WitnessCalculatorOptions {
  /** Let the generator check every constraint it can while computing (circom's sanity check; the native library always checks its asserts). */
  sanityCheck?: boolean;
  /**
   * Which generator: "auto" (default: a native library given or found beside the .wasm, else the
   * WASM), "wasm" (circom_runtime only), "native" (a native library or an error).
   */
  engine?: "auto" | "wasm" | "native";
}

const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46];

/** A native witness library for `wasmPath`: the path itself when it is one, else a fresh sibling. */
export function nativeLibraryFor(wasmPath: string): string | undefined {
  if (/\.so$/.test(wasmPath)) return wasmPath;
  const name = basename(wasmPath).replace(/\.wasm$/, "");
  const folder = dirname(wasmPath);
  let wasmTime = 0;
  try {
    wasmTime = statSync(wasmPath).mtimeMs;
  } catch {
    return undefined;
  }
  for (const candidate of [join(folder, `${name}.witness.so`), join(dirname(folder), `${name}.witness.so`)]) {
    // An older library may belong to an earlier version of the circuit: the WASM is used then.
    if (existsSync(candidate) && statSync(candidate).mtimeMs >= wasmTime) return candidate;
  }
  return undefined;
}

/** The part of circom_runtime's calculator object used here (circom 2 generators). */
interface CircomCalculator {
  circom_version(): number;
  witnessSize?: number;
  prime: bigint;
  calculateWTNSBin?(input: CircuitInput, sanityCheck?: boolean): Promise<Uint8Array>;
}

type CircomBuilder = (code: Uint8Array, options?: { sanityCheck?: boolean }) => Promise<CircomCalculator>;

let builderPromise: Promise<CircomBuilder> | undefined;

/** circom_runtime's WitnessCalculatorBuilder, imported once. */
function circomBuilder(): Promise<CircomBuilder> {
  builderPromise ??= import("circom_runtime").then(
    (module) => (module as unknown as { WitnessCalculatorBuilder: CircomBuilder }).WitnessCalculatorBuilder,
    (cause) => {
      builderPromise = undefined;
      throw new CuzkError(
        "LOAD",
        "computing witnesses needs the npm package circom_runtime; install it with: npm install circom_runtime",
        { cause, operation: "import circom_runtime" },
      );
    },
  );
  return builderPromise;
}

/** Turns circom_runtime's plain Errors into CuzkErrors: a failed circuit assert is UNSATISFIED. */
function inputError(cause: unknown): CuzkError {
  const text = String((cause as Error)?.message ?? cause).trim().replace(/\s*\n\s*/g, "; ");
  const code = /assert failed/i.test(text) ? "UNSATISFIED" : "INVALID_ARGUMENT";
  return new CuzkError(code, `witness generation failed: ${text}`, { cause, operation: "witness calculator" });
}

/** A compiled circom witness generator (circuit.wasm), reusable for any number of inputs. */
export class WitnessCalculator {
  readonly #calculator: CircomCalculator | NativeWitnessCalculator;
  readonly #sanityCheck: boolean;
  /** Where the generator came from (path, or "<memory>"). */
  readonly source: string;

  private constructor(calculator: CircomCalculator | NativeWitnessCalculator, source: string, sanityCheck: boolean) {
    this.#calculator = calculator;
    this.source = source;
    this.#sanityCheck = sanityCheck;
  }

  /** "native" when a native witness library computes the witnesses, "wasm" for circom_runtime. */
  get engine(): "native" | "wasm" {
    return this.#calculator instanceof NativeWitnessCalculator ? "native" : "wasm";
  }

  /**
   * Compiles a circom 2 witness generator from its path or bytes. A path must name a regular file
   * of at most 2 GiB (`LIMITS.wasmFileBytes`), else INVALID_ARGUMENT; IO when it cannot be read.
   */
  static async load(wasm: string | URL | Uint8Array, options: WitnessCalculatorOptions = {}): Promise<WitnessCalculator> {
    const source = wasm instanceof Uint8Array ? "<memory>" : String(wasm instanceof URL ? wasm.pathname : wasm);
    const engine = options.engine ?? "auto";
    if (engine !== "wasm") {
      const path = wasm instanceof Uint8Array ? undefined : wasm instanceof URL ? fileURLToPath(wasm) : wasm;
      const library = path === undefined ? undefined : nativeLibraryFor(path);
      if (library) return new WitnessCalculator(await NativeWitnessCalculator.load(library), library, false);
      if (engine === "native") {
        throw new CuzkError("INVALID_ARGUMENT", `${source} has no native witness library beside it; build one with: cuzk witness compile circuit.circom`);
      }
    } else if (wasm instanceof Uint8Array ? ELF_MAGIC.every((b, i) => wasm[i] === b) : /\.so$/.test(source)) {
      throw new CuzkError("INVALID_ARGUMENT", `${source} is a native witness library; engine "wasm" takes a circuit.wasm`);
    }
    // A path is read only if it is a regular file of at most 2 GiB (not /dev/zero, not a FIFO).
    const code = wasm instanceof Uint8Array
      ? wasm
      : readRegularFile(wasm instanceof URL ? fileURLToPath(wasm) : wasm, "the witness generator", LIMITS.wasmFileBytes);
    const build = await circomBuilder();
    let calculator: CircomCalculator;
    try {
      calculator = await build(code, { sanityCheck: options.sanityCheck });
    } catch (cause) {
      throw new CuzkError("FORMAT", `${source} is not a circom witness generator: ${(cause as Error)?.message ?? cause}`, { cause, operation: "witness calculator" });
    }
    if (calculator.circom_version() !== 2 || typeof calculator.calculateWTNSBin !== "function") {
      throw new CuzkError("UNSUPPORTED", `${source} was compiled by circom ${calculator.circom_version()}; recompile the circuit with circom 2`);
    }
    return new WitnessCalculator(calculator, source, options.sanityCheck ?? false);
  }

  /** Witness length (w[0] = 1 included): the key's n_vars. */
  get nVars(): number {
    const calculator = this.#calculator;
    return calculator instanceof NativeWitnessCalculator ? calculator.nVars : calculator.witnessSize!;
  }

  /** The scalar field the circuit was compiled for (r of BN254 or BLS12-381). */
  get prime(): bigint {
    return BigInt(this.#calculator.prime);
  }

  /** Bytes of the raw witness (nVars values of 32 bytes): what `writeRaw` writes. */
  get rawBytes(): number {
    return this.nVars * ABI.FR_BYTES;
  }

  /** The witness of `input` as the bytes of a snarkjs .wtns file. */
  async wtns(input: CircuitInput): Promise<Uint8Array> {
    const calculator = this.#calculator;
    if (calculator instanceof NativeWitnessCalculator) return await calculator.wtns(input);
    try {
      return await calculator.calculateWTNSBin!(input, this.#sanityCheck);
    } catch (cause) {
      throw inputError(cause);
    }
  }

  /**
   * Writes the witness of `input` as raw Fr values (32 bytes each, standard LE, w[0] = 1) into
   * `target` at byte `offset`, e.g. a PinnedBuffer leased from a BufferPool, which the prover
   * then reads in place. Returns the number of bytes written (`rawBytes`).
   */
  async writeRaw(input: CircuitInput, target: Uint8Array | NativeBuffer, offset = 0): Promise<number> {
    if (this.#calculator instanceof NativeWitnessCalculator) return await this.#calculator.writeRaw(input, target, offset);
    const wtns = await this.wtns(input);
    // circom_runtime writes one layout: the header, section 1 (n8 at byte 24, the prime, the
    // count), then the values, last; no parse is needed to find them.
    const n8 = new DataView(wtns.buffer, wtns.byteOffset, wtns.byteLength).getUint32(24, true);
    const length = this.rawBytes;
    const bytes = target instanceof NativeBuffer ? target.bytes : target;
    if (n8 !== ABI.FR_BYTES) {
      throw new CuzkError("UNSUPPORTED", `the generator writes ${n8}-byte values; the prover takes ${ABI.FR_BYTES}`);
    }
    if (!Number.isSafeInteger(offset) || offset < 0 || offset + length > bytes.byteLength) {
      throw new CuzkError("SHORT_BUFFER", `the witness needs ${length} bytes at offset ${offset}; the target holds ${bytes.byteLength}`);
    }
    bytes.set(wtns.subarray(wtns.length - length), offset);
    return length;
  }
}
