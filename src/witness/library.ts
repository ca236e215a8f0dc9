/**
 * @module
 * A per-circuit native witness library (built by `cuzk witness compile`, native/witness/), opened
 * with the FFI of the runtime we run in through the adapters libcuzk.so uses, with its own symbol
 * table. `NativeWitnessCalculator` computes witnesses off the JS thread, straight into the
 * caller's buffer (a pooled PinnedBuffer in a proving loop), or as .wtns bytes.
 */
import { existsSync } from "node:fs";
import { check, CuzkError, errorBuffer } from "../errors.ts";
import { loadBunFfi } from "../ffi/bun.ts";
import { openBunLibrary } from "../ffi/bun.ts";
import { openDenoLibrary } from "../ffi/deno.ts";
import { exportedFunctions } from "../ffi/elf.ts";
import { runtime } from "../ffi/load.ts";
import { openNodeLibrary } from "../ffi/node.ts";
import { ABI } from "../ffi/symbols.ts";
import type { NativeArgument, NativeLibrary } from "../ffi/types.ts";
import { NativeBuffer } from "../memory/buffer.ts";
import type { CircuitInput } from "../witness_calculator.ts";
import { encodeInputs } from "./inputs.ts";
import { WITNESS_ABI_VERSION, WITNESS_INFO_LAYOUT, witnessSymbolTable } from "./symbols.ts";
import type { WitnessSymbolName } from "./symbols.ts";

/** What a witness library says about its circuit. */
export interface WitnessLibraryInfo {
  curve: "bn254" | "bls12_381";
  /** Witness length, w[0] = 1 included: the key's n_vars. */
  nVars: number;
  /** All signals of the circuit. */
  nSignals: number;
  /** The field's prime r. */
  prime: bigint;
}

async function openWithRuntime(path: string): Promise<NativeLibrary> {
  let exported: Set<string>;
  try {
    exported = exportedFunctions(path);
  } catch (cause) {
    throw new CuzkError("LOAD", `cannot read ${path}: ${(cause as Error)?.message ?? cause}`, { cause, operation: "load witness library" });
  }
  const absent = Object.keys(witnessSymbolTable).filter((name) => !exported.has(name));
  if (absent.length > 0) {
    throw new CuzkError("FORMAT", `${path} is not a cuzk witness library (it does not export ${absent.join(", ")}); build one with: cuzk witness compile circuit.circom`, {
      operation: "load witness library",
    });
  }
  const available = new Set(Object.keys(witnessSymbolTable));
  try {
    return runtime === "deno"
      ? openDenoLibrary(path, witnessSymbolTable, available)
      : runtime === "bun"
      ? openBunLibrary(loadBunFfi(), path, witnessSymbolTable, available)
      : openNodeLibrary(path, witnessSymbolTable, available);
  } catch (cause) {
    throw new CuzkError("LOAD", `cannot load ${path} with ${runtime}'s FFI: ${(cause as Error)?.message ?? cause}`, { cause, operation: "load witness library" });
  }
}

const opened = new Map<string, Promise<NativeWitnessCalculator>>();

/** Witnesses of one circuit from its native library; reusable for any number of inputs, concurrently. */
export class NativeWitnessCalculator {
  readonly #library: NativeLibrary;
  readonly #sizes: ReadonlyMap<bigint, number>;
  readonly #inputValues: number;
  /** Where the library was loaded from. */
  readonly source: string;
  /** The circuit's curve, witness length and prime. */
  readonly info: WitnessLibraryInfo;

  private constructor(library: NativeLibrary, source: string) {
    this.#library = library;
    this.source = source;
    const version = library.call("cuzk_witness_abi_version", []) as number;
    if (version !== WITNESS_ABI_VERSION) {
      throw new CuzkError("ABI_MISMATCH", `${source} implements witness ABI ${version}, these bindings ${WITNESS_ABI_VERSION}: rebuild it with: cuzk witness compile`);
    }
    const out = new Uint8Array(WITNESS_INFO_LAYOUT.size);
    const view = new DataView(out.buffer);
    view.setUint32(WITNESS_INFO_LAYOUT.struct_size, WITNESS_INFO_LAYOUT.size, true);
    this.#call("cuzk_witness_info_get", [out]);
    let prime = 0n;
    for (let i = 31; i >= 0; i--) prime = (prime << 8n) | BigInt(out[WITNESS_INFO_LAYOUT.prime + i]);
    const curveId = view.getUint32(WITNESS_INFO_LAYOUT.curve, true);
    this.info = {
      curve: curveId === ABI.CURVE_BN254 ? "bn254" : "bls12_381",
      nVars: Number(view.getBigUint64(WITNESS_INFO_LAYOUT.n_vars, true)),
      nSignals: Number(view.getBigUint64(WITNESS_INFO_LAYOUT.n_signals, true)),
      prime,
    };
    this.#inputValues = view.getUint32(WITNESS_INFO_LAYOUT.n_input_values, true);
    const nInputs = view.getUint32(WITNESS_INFO_LAYOUT.n_inputs, true);
    const hashes = new BigUint64Array(Math.max(nInputs, 1));
    const sizes = new BigUint64Array(Math.max(nInputs, 1));
    const count = new BigUint64Array(1);
    this.#call("cuzk_witness_inputs", [hashes, sizes, nInputs, count]);
    const table = new Map<bigint, number>();
    for (let i = 0; i < Number(count[0]); i++) table.set(hashes[i], Number(sizes[i]));
    this.#sizes = table;
  }

  /** Opens the library at `path` (once per path and process). */
  static load(path: string): Promise<NativeWitnessCalculator> {
    if (!existsSync(path)) {
      return Promise.reject(new CuzkError("IO", `no witness library at ${path}; build one with: cuzk witness compile circuit.circom`, { operation: "load witness library" }));
    }
    let loading = opened.get(path);
    if (!loading) {
      loading = openWithRuntime(path).then((library) => new NativeWitnessCalculator(library, path));
      loading.catch(() => opened.delete(path));
      opened.set(path, loading);
    }
    return loading;
  }

  #call(name: WitnessSymbolName, args: NativeArgument[]): void {
    const err = errorBuffer();
    check(this.#library.call(name, [...args, err, err.length]) as number, err, name, (reason) => `the witness library ${this.source} refused: ${reason}`);
  }

  /** Witness length (w[0] = 1 included). */
  get nVars(): number {
    return this.info.nVars;
  }

  /** The circuit's prime. */
  get prime(): bigint {
    return this.info.prime;
  }

  /** Bytes of the raw witness (nVars values of 32 bytes): what `writeRaw` writes. */
  get rawBytes(): number {
    return this.nVars * ABI.FR_BYTES;
  }

  /**
   * Computes the witness of `input` off the JS thread and writes it as raw Fr values (32 bytes
   * each, standard LE, w[0] = 1) into `target` at byte `offset`. Returns the bytes written.
   * INVALID_ARGUMENT for bad inputs, UNSATISFIED when an assert of the circuit fails (the message
   * names the template, line and component), SHORT_BUFFER when the target is too small.
   */
  async writeRaw(input: CircuitInput, target: Uint8Array | NativeBuffer, offset = 0): Promise<number> {
    const encoded = encodeInputs(input, this.#sizes, this.#inputValues, this.prime);
    const length = this.rawBytes;
    const capacity = target.byteLength;
    if (!Number.isSafeInteger(offset) || offset < 0 || offset + length > capacity) {
      throw new CuzkError("SHORT_BUFFER", `the witness needs ${length} bytes at offset ${offset}; the target holds ${capacity}`);
    }
    const compute = async (out: NativeArgument) => {
      const err = errorBuffer();
      const status = await this.#library.callAsync("cuzk_witness_compute", [
        encoded.hashes,
        encoded.hashes.length,
        encoded.values,
        encoded.valueCount,
        out,
        length,
        err,
        err.length,
      ]) as number;
      check(status, err, `cuzk_witness_compute(${this.source})`, (reason) => `cannot compute the witness with ${this.source}: ${reason}`);
    };
    if (target instanceof NativeBuffer) {
      await target.use((pointer) => compute((pointer + BigInt(offset)) as typeof pointer));
    } else {
      await compute(target.subarray(offset, offset + length));
    }
    return length;
  }

  /** The witness of `input` as the bytes of a snarkjs .wtns file (what circom_runtime writes). */
  async wtns(input: CircuitInput): Promise<Uint8Array> {
    const header = 12 + 12 + 4 + 32 + 4 + 12;
    const bytes = new Uint8Array(header + this.rawBytes);
    const view = new DataView(bytes.buffer);
    bytes.set([0x77, 0x74, 0x6e, 0x73]); // "wtns"
    view.setUint32(4, 2, true); // version
    view.setUint32(8, 2, true); // sections
    view.setUint32(12, 1, true); // section 1: header
    view.setBigUint64(16, 40n, true);
    view.setUint32(24, 32, true); // n8
    let p = this.prime;
    for (let i = 0; i < 32; i++, p >>= 8n) bytes[28 + i] = Number(p & 0xffn);
    view.setUint32(60, this.nVars, true);
    view.setUint32(64, 2, true); // section 2: values
    view.setBigUint64(68, BigInt(this.rawBytes), true);
    await this.writeRaw(input, bytes, header);
    return bytes;
  }
}
