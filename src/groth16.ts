/**
 * @module
 * `groth16`: snarkjs's entry points (`fullProve`, `prove`, `verify`) over the cuzk prover, with
 * the same arguments and the same result shapes, so that code written against snarkjs switches by
 * changing its import. The results also carry the library's phase timings (and, for fullProve,
 * the time the witness generator took).
 */
import { LIMITS } from "./bounds.ts";
import { CuzkError } from "./errors.ts";
import { readRegularFile } from "./files.ts";
import { ABI } from "./ffi/symbols.ts";
import type { Groth16Proof, VerificationKeyJson } from "./formats/snarkjs.ts";
import { Key } from "./key.ts";
import type { Library } from "./library.ts";
import { Prover, verify } from "./prover.ts";
import type { ProveOptions, ProverOptions, Randomness, Witness } from "./prover.ts";
import type { Timings } from "./timings.ts";
import { WitnessCalculator } from "./witness_calculator.ts";
import type { CircuitInput } from "./witness_calculator.ts";

/** A proving key for the groth16 functions: a .zkey path, an open Key, or a Prover to reuse. */
export type ZkeySource = string | Key | Prover;

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
  /** Computing the witness from the input (circuit.wasm, on the JS thread), in ms. */
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
  if (typeof zkey !== "string" && !(zkey instanceof Key)) {
    throw new CuzkError("INVALID_ARGUMENT", "zkey must be a .zkey path, a Key or a Prover");
  }
  const prover = await Prover.open({
    zkey,
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
}

/** snarkjs's groth16 API on the cuzk prover. */
export const groth16 = {
  /**
   * Computes the witness of `input` with the circuit's witness generator (circuit.wasm, through
   * circom_runtime) and proves it: snarkjs's `groth16.fullProve(input, wasm, zkey)`.
   * `wasm` may be a path, the file's bytes, or a WitnessCalculator loaded once for many calls;
   * `zkey` a path, a Key, or a Prover (reused, not closed). Without a Prover, one is opened on
   * `options.backend` (default "auto") for the call.
   */
  async fullProve(
    input: CircuitInput,
    wasm: string | URL | Uint8Array | WitnessCalculator,
    zkey: ZkeySource,
    options: FullProveOptions = {},
  ): Promise<FullProveResult> {
    const calculator = wasm instanceof WitnessCalculator ? wasm : await WitnessCalculator.load(wasm, { sanityCheck: options.sanityCheck });
    const started = performance.now();
    const witness = await calculator.wtns(input);
    const witnessMs = performance.now() - started;
    const { proof, publicSignals, timings } = await withProver(zkey, options, (prover) => prover.prove(witness, options));
    return { proof, publicSignals, timings: { ...timings, witnessMs } };
  },

  /**
   * Proves a witness: snarkjs's `groth16.prove(zkey, wtns)`. `witness` may be the path of a .wtns
   * file or any form Prover.prove accepts (.wtns bytes, raw values, bigints, a filled PinnedBuffer).
   * A path must name a regular file of at most nVars × 32 bytes + 64 KiB (INVALID_ARGUMENT before
   * anything is read: /dev/zero or a FIFO is refused at once).
   */
  async prove(zkey: ZkeySource, witness: string | Witness, options: Groth16Options = {}): Promise<Groth16Result> {
    return await withProver(zkey, options, (prover) => {
      // A path is read only if it is a regular file no larger than the key's witness can be.
      const bytes = typeof witness === "string"
        ? readRegularFile(witness, "witness", prover.info.nVars * ABI.FR_BYTES + LIMITS.witnessFileSlack)
        : witness;
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
};
