/**
 * @module
 * `fullProveMany`: many circuit inputs to proofs, pipelined: the witness of
 * input i+1 is computed into a pooled pinned buffer while proof i runs, so a stream goes at the
 * speed of the slower stage rather than the sum of both. The native witness library computes off
 * the JS thread; circom_runtime's WASM computes on it, which still overlaps, since the proof runs
 * off it. Each result carries when its witness and its proof ran (ms from the call's start).
 */
import { integerIn } from "../bounds.ts";
import { CuzkError } from "../errors.ts";
import type { Key } from "../key.ts";
import type { Library } from "../library.ts";
import { BufferPool } from "../memory/pool.ts";
import { Prover } from "../prover.ts";
import type { ProofResult } from "../prover.ts";
import { WitnessCalculator } from "../witness_calculator.ts";
import type { CircuitInput } from "../witness_calculator.ts";

/** Most inputs one call takes (results are kept until it returns). */
export const MAX_PIPELINE_INPUTS = 1 << 20;

/** Options of fullProveMany. */
export interface FullProveManyOptions {
  /** Backend of the prover opened for a .zkey path (default "auto"); ignored for a Prover. */
  backend?: "auto" | "cpu" | "cuda";
  device?: number;
  /** Verify each proof before returning it (default true). */
  selfCheck?: boolean;
  /** Witnesses computed ahead of the proof that runs (default 1: input i+1 while proof i; at most 8). */
  ahead?: number;
  /** Called with each result as soon as its proof is done, in input order. */
  onResult?: (index: number, result: PipelinedProof) => void;
  library?: Library;
}

/** A span of one stage of one input: ms from the call's start. */
export interface StageSpan {
  start: number;
  end: number;
}

/** One input's proof, and when its two stages ran. */
export interface PipelinedProof extends ProofResult {
  witnessSpan: StageSpan;
  proofSpan: StageSpan;
}

/**
 * Proves every input of `inputs` with the circuit's witness generator `wasm` (a circuit.wasm
 * path, a native witness library, or a loaded WitnessCalculator; a path's fresh native library
 * beside it is used, see WitnessCalculator.load) and the key `zkey` (a .zkey path or Key, proved
 * by a prover opened for the call, or a Prover, reused). Results in input order. The first input
 * that fails stops the stream with its CuzkError (the message starts "input <i>: ").
 */
export async function fullProveMany(
  inputs: readonly CircuitInput[],
  wasm: string | URL | WitnessCalculator,
  zkey: string | Key | Prover,
  options: FullProveManyOptions = {},
): Promise<PipelinedProof[]> {
  integerIn(inputs.length, "the number of inputs", 0, MAX_PIPELINE_INPUTS);
  const ahead = integerIn(options.ahead ?? 1, "ahead", 1, 8);
  const calculator = wasm instanceof WitnessCalculator ? wasm : await WitnessCalculator.load(wasm);
  const prover = zkey instanceof Prover
    ? zkey
    : await Prover.open({ zkey, backend: options.backend ?? "auto", device: options.device, selfCheck: options.selfCheck, library: options.library });
  const pool = new BufferPool({ library: options.library, maxBuffers: ahead + 1 });
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const tagged = (i: number) => (error: unknown) => {
    if (error instanceof CuzkError) throw new CuzkError(error.code, `input ${i}: ${error.message}`, { cause: error, status: error.status, nativeMessage: error.nativeMessage, operation: error.operation });
    throw error;
  };
  // Witness i: a pooled buffer filled with its raw values, and when that ran.
  const witness = async (i: number) => {
    const buffer = pool.take(calculator.rawBytes);
    const start = now();
    try {
      await calculator.writeRaw(inputs[i], buffer);
    } catch (error) {
      pool.give(buffer);
      tagged(i)(error);
    }
    return { buffer, span: { start, end: now() } };
  };
  const results: PipelinedProof[] = [];
  const queued: Array<ReturnType<typeof witness>> = [];
  try {
    const start = (i: number) => {
      const pending = witness(i);
      pending.catch(() => {}); // awaited in its turn; not an unhandled rejection meanwhile
      queued.push(pending);
    };
    for (let i = 0; i < Math.min(ahead, inputs.length); i++) start(i);
    for (let i = 0; i < inputs.length; i++) {
      const { buffer, span } = await queued.shift()!;
      if (i + ahead < inputs.length) start(i + ahead); // runs while proof i does
      const proofStart = now();
      try {
        const result = await prover.prove(buffer, { selfCheck: options.selfCheck }).catch(tagged(i));
        const proof = { ...result, witnessSpan: span, proofSpan: { start: proofStart, end: now() } };
        results.push(proof);
        options.onResult?.(i, proof);
      } finally {
        pool.give(buffer);
      }
    }
    return results;
  } finally {
    // Witnesses still computing after a failure: wait for them, give their buffers back.
    for (const pending of queued) await pending.then(({ buffer }) => pool.give(buffer), () => {});
    pool.close();
    if (prover !== zkey) prover.close();
  }
}
