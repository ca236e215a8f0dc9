/**
 * @module
 * cuzk: a Groth16 prover with a C++/CUDA core, driven through FFI from Deno, Bun and Node.
 * This file only re-exports the public API.
 *
 * ```ts
 * import { Prover, verify } from "cuzk";
 * const prover = await Prover.open({ zkey: "circuit.zkey", backend: "auto" });
 * try {
 *   const { proof, publicSignals, timings } = await prover.prove(wtnsBytes);
 *   console.log(await verify(vkeyJson, publicSignals, proof));
 * } finally {
 *   prover.close();
 * }
 * ```
 *
 * Or, as with snarkjs, from circuit inputs:
 *
 * ```ts
 * import { groth16 } from "cuzk";
 * const { proof, publicSignals, timings } = await groth16.fullProve(input, "circuit.wasm", "circuit.zkey");
 * ```
 */
export { Library } from "./src/library.ts";
export type { BackendName, CurveName, DeviceInfo, HostStats, LibraryInfo, LoadOptions, StagingStats } from "./src/library.ts";
export { CuzkError } from "./src/errors.ts";
export type { CuzkErrorCode, NativeErrorCode } from "./src/errors.ts";
export type { WitnessFacts } from "./src/errors.ts";
export { Key } from "./src/key.ts";
export type { KeyInfo, KeyOpenOptions, WitnessCheck } from "./src/key.ts";
export { Context } from "./src/context.ts";
export type { ContextOptions, KernelMemory, NttKind } from "./src/context.ts";
export { Prover, verify } from "./src/prover.ts";
export type { ProofResult, ProveOptions, ProverOptions, Randomness, Witness } from "./src/prover.ts";
export { batchShares, MAX_SET_DEVICES, ProverSet } from "./src/prover_set.ts";
export type { DeviceProofResult, ProverSetOptions } from "./src/prover_set.ts";
export { planMemory } from "./src/memory_plan.ts";
export type { EngineSettings, MemoryPlan, PlanMemoryOptions, PlannedKey, PlannedSyntheticKey, PointSectionName, SectionPlan } from "./src/memory_plan.ts";
export { groth16 } from "./src/groth16.ts";
export type { FullProveOptions, FullProveResult, FullProveTimings, Groth16Options, Groth16Result, ZkeySource } from "./src/groth16.ts";
export { nativeLibraryFor, WitnessCalculator } from "./src/witness_calculator.ts";
export type { CircuitInput, WitnessCalculatorOptions } from "./src/witness_calculator.ts";
export { BufferPool, FR_BYTES, HostBuffer, NativeBuffer, PinnedBuffer, RegisteredMemory } from "./src/memory/mod.ts";
export type { AllocOptions, BufferPoolOptions, BufferPoolStats, PinnedAllocOptions, PoolLease } from "./src/memory/mod.ts";
export type { PhaseName, PhaseSpan, Timings } from "./src/timings.ts";
export { setupInsecureDev, setupInsecureDevKey, synthCircuit, synthWitnessBytes, synthWitnesses, writeSynthCircuit } from "./src/setup.ts";
export type { DevKeyResult, DevSetupOptions, DevSetupResult, SynthOptions, SynthProfile, SyntheticCircuit } from "./src/setup.ts";
export { PROGRESS_POLL_MS } from "./src/progress.ts";
export type { LongCallOptions, Progress, ProgressStage } from "./src/progress.ts";
export { lanesTimelineSvg, timelineSvg } from "./src/timeline.ts";
export type { LaneProof, TimelineOptions } from "./src/timeline.ts";
export { curveOf } from "./src/formats/snarkjs.ts";
export type { CurveParameters, Groth16Proof, VerificationKeyJson } from "./src/formats/snarkjs.ts";
export type { Pointer } from "./src/ffi/types.ts";
export { phaseTable } from "./src/timeline.ts";
export { isWtns } from "./src/formats/witness.ts";
export { LIMITS, MAX_DEVICE } from "./src/bounds.ts";
export { readRegularFile, readWitnessFile, requireRegularFile } from "./src/files.ts";
export { wtns, zKey } from "./src/snarkjs_api.ts";
export type { SnarkjsFile, SnarkjsVerificationKey, WasmSource } from "./src/snarkjs_api.ts";
export { compileWitnessLibrary, defaultWitnessCache } from "./src/witness/compile.ts";
export type { CircomPrime, WitnessCompileOptions, WitnessCompileResult } from "./src/witness/compile.ts";
export { NativeWitnessCalculator } from "./src/witness/library.ts";
export type { WitnessLibraryInfo } from "./src/witness/library.ts";
export { fullProveMany, MAX_PIPELINE_INPUTS } from "./src/witness/pipeline.ts";
export type { FullProveManyOptions, PipelinedProof, StageSpan } from "./src/witness/pipeline.ts";
