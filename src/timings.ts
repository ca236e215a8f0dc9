/**
 * @module
 * Decodes the `cuzk_timings` records the library writes (one per proof) into plain objects keyed
 * by phase name, in milliseconds from the start of the call. Phases may overlap; a phase that did
 * not run is left out.
 */
import { PHASE_NAMES } from "./ffi/symbols.ts";
import { decodeStruct, TIMINGS_LAYOUT } from "./ffi/structs.ts";

/** A phase name of `enum cuzk_phase` (e.g. "ntt_h", "msm_a"), or "phase_N" for one added later. */
export type PhaseName = (typeof PHASE_NAMES)[number] | `phase_${number}`;

/** When one phase ran, in ms from the start of the call. */
export interface PhaseSpan {
  start: number;
  end: number;
}

/** The timings of one proof (or one kernel call). */
export interface Timings {
  /** Backend that did the work. */
  backend: "cpu" | "cuda" | "unknown";
  /** Index of the proof within its batch. */
  proofIndex: number;
  /** The whole call, in ms. */
  totalMs: number;
  /** Phases that ran, by name. */
  phases: Partial<Record<PhaseName, PhaseSpan>>;
}

const BACKENDS = ["unknown", "cpu", "cuda"] as const;

/** Decodes record `index` of an array of cuzk_timings. */
export function decodeTimings(bytes: Uint8Array, index = 0): Timings {
  const raw = decodeStruct(TIMINGS_LAYOUT, bytes, index);
  const intervals = raw.phases;
  const count = Math.min(raw.phase_count, intervals.length);
  const phases: Partial<Record<PhaseName, PhaseSpan>> = {};
  for (let i = 0; i < count; i++) {
    const { start_ns, end_ns } = intervals[i];
    if (start_ns === 0n && end_ns === 0n) continue;
    const name = (PHASE_NAMES[i] ?? `phase_${i}`) as PhaseName;
    phases[name] = { start: Number(start_ns) / 1e6, end: Number(end_ns) / 1e6 };
  }
  return {
    backend: BACKENDS[raw.backend] ?? "unknown",
    proofIndex: raw.proof_index,
    totalMs: Number(raw.total_ns) / 1e6,
    phases,
  };
}
