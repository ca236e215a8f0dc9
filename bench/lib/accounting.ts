/**
 * @module
 * Where the time of one proof (or one batch call) went: the library's phases (which may overlap, e.g. a G2 MSM on the
 * CPU while the GPU works), the part of the native call no phase covers, and the part outside the
 * native call (FFI, staging the witness, the JS thread hop, decoding). By construction
 *   sum of phases - overlap + unaccounted in library + outside library = end-to-end,
 * so the per-phase figures add up to the end-to-end time within the remainder this reports.
 */
import type { PhaseName, Timings } from "../../mod.ts";

/** One proof's time, in ms. */
export interface ProofAccount {
  /** Wall time of the call as the caller saw it (JS clock around prove/proveBatch). */
  endToEndMs: number;
  /** The native call's own total (cuzk_timings.total_ns). */
  libraryMs: number;
  /** Duration of each phase that ran. */
  phases: Partial<Record<PhaseName, number>>;
  /** Sum of the phase durations. */
  phaseSumMs: number;
  /** Time covered by at least one phase (union of the intervals). */
  coveredMs: number;
  /** phaseSum - covered: time counted twice because phases ran at once. */
  overlapMs: number;
  /** library - covered: inside the native call, outside every phase. */
  unaccountedInLibraryMs: number;
  /** endToEnd - library: outside the native call. */
  outsideLibraryMs: number;
  /** unaccountedInLibrary + outsideLibrary: everything the phases do not explain. */
  unaccountedMs: number;
}

/** Length of the union of intervals. */
function unionLength(spans: Array<{ start: number; end: number }>): number {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let total = 0, from = -Infinity, to = -Infinity;
  for (const { start, end } of sorted) {
    if (start > to) {
      if (to > from) total += to - from;
      from = start;
      to = end;
    } else if (end > to) {
      to = end;
    }
  }
  if (to > from) total += to - from;
  return total;
}

/**
 * Accounts one native call: a single proof, or a batch (one cuzk_timings record per proof, all with
 * offsets from the call's start and the call's total; a phase shared by the batch, such as parsing,
 * appears with the same interval in every record and is counted once). `endToEndMs` is the caller's
 * wall time around the call.
 */
export function accountCall(records: ReadonlyArray<Timings>, endToEndMs: number): ProofAccount {
  const unique = new Map<string, { name: PhaseName; start: number; end: number }>();
  for (const timings of records) {
    for (const [name, span] of Object.entries(timings.phases) as Array<[PhaseName, { start: number; end: number }]>) {
      unique.set(`${name}@${span.start}-${span.end}`, { name, ...span });
    }
  }
  const spans = [...unique.values()];
  const phases: Partial<Record<PhaseName, number>> = {};
  for (const { name, start, end } of spans) phases[name] = (phases[name] ?? 0) + (end - start);
  const phaseSumMs = spans.reduce((sum, span) => sum + (span.end - span.start), 0);
  const coveredMs = unionLength(spans);
  const libraryMs = Math.max(...records.map((t) => t.totalMs));
  const unaccountedInLibraryMs = libraryMs - coveredMs;
  const outsideLibraryMs = endToEndMs - libraryMs;
  return {
    endToEndMs,
    libraryMs,
    phases,
    phaseSumMs,
    coveredMs,
    overlapMs: phaseSumMs - coveredMs,
    unaccountedInLibraryMs,
    outsideLibraryMs,
    unaccountedMs: unaccountedInLibraryMs + outsideLibraryMs,
  };
}

/**
 * A batch's records as one Timings whose rows are the phases of every proof ("msm_a #1"), for a
 * waterfall of the whole call; shared phases appear once.
 */
export function mergeBatchTimings(records: ReadonlyArray<Timings>): Timings {
  const phases: Record<string, { start: number; end: number }> = {};
  const seen = new Set<string>();
  for (const timings of records) {
    for (const [name, span] of Object.entries(timings.phases) as Array<[string, { start: number; end: number }]>) {
      const id = `${name}@${span.start}-${span.end}`;
      if (seen.has(id)) continue;
      seen.add(id);
      phases[records.length > 1 ? `${name} #${timings.proofIndex}` : name] = span;
    }
  }
  return { ...records[0], totalMs: Math.max(...records.map((t) => t.totalMs)), phases: phases as Timings["phases"] };
}

/** Percentile with mitata's convention (sorted samples, index (q * (n - 1)) | 0). */
export function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[(q * (sorted.length - 1)) | 0];
}

/** Summary of a list of ms figures. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  p25: number;
  p75: number;
}

export function summarize(values: number[]): Summary {
  return {
    median: percentile(values, 0.5),
    min: Math.min(...values),
    max: Math.max(...values),
    p25: percentile(values, 0.25),
    p75: percentile(values, 0.75),
  };
}
