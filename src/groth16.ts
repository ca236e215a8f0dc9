/**
 * @module
 * `groth16`: snarkjs's entry points (`fullProve`, `prove`, `verify`, `exportSolidityCallData`)
 * over the cuzk prover, with the same arguments (a file name, bytes or `{ type: "mem", data }` for
 * each file) and the same result shapes, so that code written against snarkjs switches by changing
 * its import. The results also carry the library's phase timings (and, for fullProve, the time the
 * witness generator took).
 */
import { CuzkError } from "./errors.ts";
import { readWitnessFile } from "./files.ts";
import type { Groth16Proof, VerificationKeyJson } from "./formats/snarkjs.ts";
import { Key } from "./key.ts";
import type { Library } from "./library.ts";
import { NativeBuffer } from "./memory/buffer.ts";
import { Prover, verify } from "./prover.ts";
import type { ProveOptions, ProverOptions, Randomness, Witness } from "./prover.ts";
import { computeWitness, fileForm, openKey } from "./snarkjs_api.ts";
import type { SnarkjsFile, WasmSource } from "./snarkjs_api.ts";
import type { Timings } from "./timings.ts";
import type { CircuitInput } from "./witness_calculator.ts";

/** A proving key for the groth16 functions: a .zkey in any of snarkjs's forms, an open Key, or a Prover to reuse. */
export type ZkeySource = SnarkjsFile | Key | Prover;

/**
 * Options of groth16.prove and groth16.fullProve. Every proof is self-checked (a pairing check)
 * before it is returned unless `selfCheck: false`: see ProverOptions.selfCheck for its cost.
 */
export interface Groth16Options extends ProveOptions, Pick<ProverOptions, "backend" | "device" | "cpuThreads" | "r1cs" | "skipPointChecks"> {
  library?: Library;
  /** Fixed r and s (tests only; never in production). */
  randomness?: Randomness;
}

/** Options of groth16.fullProve. */
export interface FullProveOptions extends Groth16Options {
  /** Let the witness generator check the constraints it can (circom's sanity check). */
  sanityCheck?: boolean;
}

/** The library's phase timings of a fullProve, plus the time the witness generator took. */
export interface FullProveTimings extends Timings {
  /** Computing the witness from the input (circuit.wasm, on the JS thread; not loading it), in ms. */
  witnessMs: number;
}

/** What groth16.prove returns: snarkjs's `{ proof, publicSignals }` plus timings. */
export interface Groth16Result {
  proof: Groth16Proof;
  publicSignals: string[];
  timings: Timings;
}

/** What groth16.fullProve returns: snarkjs's `{ proof, publicSignals }` plus timings. */
export interface FullProveResult extends Groth16Result {
  timings: FullProveTimings;
}

/** Runs `work` with a prover for `zkey`: the given one, or one opened (and closed) for the call. */
async function withProver<T>(zkey: ZkeySource, options: Groth16Options, work: (prover: Prover) => Promise<T>): Promise<T> {
  if (zkey instanceof Prover) return await work(zkey);
  // A key given as bytes (or in fastfile's forms) is opened here and closed after the call.
  const key = zkey instanceof Key ? zkey : await openKey(zkey, { library: options.library, skipPointChecks: options.skipPointChecks });
  try {
    const prover = await Prover.open({
      zkey: key,
      backend: options.backend ?? "auto",
      device: options.device,
      cpuThreads: options.cpuThreads,
      r1cs: options.r1cs,
      skipPointChecks: options.skipPointChecks,
      selfCheck: options.selfCheck,
      library: options.library,
    });
    try {
      return await work(prover);
    } finally {
      prover.close();
    }
  } finally {
    if (key !== zkey) key.close();
  }
}

/** A number as snarkjs's calldata writes it: "0x" and at least 64 hex digits, in quotes. */
function hex256(value: unknown, what: string): string {
  let n: bigint;
  try {
    n = BigInt(value as string);
  } catch {
    throw new CuzkError("FORMAT", `${what}: ${JSON.stringify(value)} is not an integer`);
  }
  if (n < 0n) throw new CuzkError("FORMAT", `${what} is negative`);
  return `"0x${n.toString(16).padStart(64, "0")}"`;
}

/** The coordinate proof[name][at...] (e.g. pi_b, 0, 1) as calldata, or FORMAT naming what is missing. */
function coordinate(proof: Record<string, unknown>, name: string, ...at: number[]): string {
  let value: unknown = proof[name];
  for (const i of at) value = Array.isArray(value) ? value[i] : undefined;
  const where = `proof.${name}${at.map((i) => `[${i}]`).join("")}`;
  if (value === undefined) throw new CuzkError("FORMAT", `${where} is missing`);
  return hex256(value, where);
}

/** snarkjs's groth16 API on the cuzk prover. */
export const groth16 = {
  /**
   * Computes the witness of `input` with the circuit's witness generator (circuit.wasm, through
   * circom_runtime) and proves it: snarkjs's `groth16.fullProve(input, wasm, zkey)`.
   * `wasm` may be a path, a URL, the file's bytes, `{ type: "mem", data }`, or a WitnessCalculator
   * loaded once for many calls; `zkey` a path, bytes, `{ type: "mem", data }`, a Key, or a Prover
   * (reused, not closed). Without a Prover, one is opened on `options.backend` (default "auto") for the call.
   */
  async fullProve(input: CircuitInput, wasm: WasmSource, zkey: ZkeySource, options: FullProveOptions = {}): Promise<FullProveResult> {
    const { wtns, computeMs } = await computeWitness(input, wasm, { sanityCheck: options.sanityCheck });
    const { proof, publicSignals, timings } = await withProver(zkey, options, (prover) => prover.prove(wtns, options));
    return { proof, publicSignals, timings: { ...timings, witnessMs: computeMs } };
  },

  /**
   * Proves a witness: snarkjs's `groth16.prove(zkey, wtns)`. `witness` may be a .wtns file in any
   * of snarkjs's forms (a path, `{ type: "file", fileName }`, `{ type: "mem", data }`) or any form
   * Prover.prove accepts (.wtns bytes, raw values, bigints, a filled PinnedBuffer). A path must
   * name a regular file of at most nVars × 32 bytes + 64 KiB (INVALID_ARGUMENT before anything is
   * read: /dev/zero or a FIFO is refused at once).
   */
  async prove(zkey: ZkeySource, witness: SnarkjsFile | Witness, options: Groth16Options = {}): Promise<Groth16Result> {
    // Prover.prove's own forms pass through; anything else is a file in one of snarkjs's forms.
    const proverForm = witness instanceof Uint8Array || Array.isArray(witness) || witness instanceof NativeBuffer;
    const file = proverForm ? undefined : fileForm(witness, "witness");
    return await withProver(zkey, options, (prover) => {
      if (!file) return prover.prove(witness as Witness, options);
      // A path is read only if it is a regular file no larger than the key's witness can be.
      const bytes = "path" in file ? readWitnessFile(file.path, prover.info.nVars) : file.bytes;
      return prover.prove(bytes, options);
    });
  },

  /** Checks a proof (natively, off the JS thread): snarkjs's `groth16.verify(vkey, publicSignals, proof)`. */
  verify(
    vkey: VerificationKeyJson,
    publicSignals: ReadonlyArray<string | bigint>,
    proof: Groth16Proof | Record<string, unknown>,
    options: { library?: Library } = {},
  ): Promise<boolean> {
    return verify(vkey, publicSignals, proof, options);
  },

  /**
   * snarkjs's `groth16.exportSolidityCallData(proof, publicSignals)`: the arguments of the
   * generated verifier's verifyProof, as the same text (B's coordinates in the order the EVM's
   * pairing takes them). FORMAT for a proof without its points or a signal that is not an integer.
   */
  exportSolidityCallData(proof: Groth16Proof | Record<string, unknown>, publicSignals: ReadonlyArray<string | bigint>): Promise<string> {
    try {
      const p = proof as Record<string, unknown>;
      const inputs = publicSignals.map((signal, i) => hex256(signal, `public signal ${i}`)).join(",");
      const a = `[${coordinate(p, "pi_a", 0)}, ${coordinate(p, "pi_a", 1)}]`;
      const b = `[[${coordinate(p, "pi_b", 0, 1)}, ${coordinate(p, "pi_b", 0, 0)}],[${coordinate(p, "pi_b", 1, 1)}, ${coordinate(p, "pi_b", 1, 0)}]]`;
      const c = `[${coordinate(p, "pi_c", 0)}, ${coordinate(p, "pi_c", 1)}]`;
      return Promise.resolve(`${a},${b},${c},[${inputs}]`);
    } catch (error) {
      return Promise.reject(error);
    }
  },
};
