/**
 * @module
 * A prover's key memory plan (`cuzk_prover_memory_plan`): where its engine keeps each point
 * section of the key (A, B1, B2, C, H): resident in the engine's memory, streamed in (read once
 * per group of a batch's proofs whose scalars the budget's room keeps, else once per proof), or
 * read in place from the key (the CPU engine with a key in memory); how many points are at
 * infinity and not stored; and the bytes against the budget (`ProverOptions.memoryBudget`).
 */
import { integerIn } from "./bounds.ts";
import { CuzkError } from "./errors.ts";
import { allocateStruct, decodeStruct, MEMORY_PLAN_LAYOUT, PROVER_OPTIONS_LAYOUT, writeField } from "./ffi/structs.ts";
import { ABI } from "./ffi/symbols.ts";

/** The point sections, in the order of the plan's arrays. */
export const POINT_SECTIONS = ["A", "B1", "B2", "C", "H"] as const;
export type PointSectionName = typeof POINT_SECTIONS[number];

export interface SectionPlan {
  placement: "in_key" | "resident" | "streamed";
  /** Points of the section in the key, and of those at infinity. */
  points: bigint;
  infinity: bigint;
  /** Points the engine holds (0 when read in place) and their bytes. */
  stored: bigint;
  storedBytes: bigint;
}

export interface MemoryPlan {
  /** Bytes the engine may use (the budget asked for, or automatic: free device memory / physical memory). */
  budget: bigint;
  /** Rows and proving workspace. */
  fixedBytes: bigint;
  residentBytes: bigint;
  streamBufferBytes: bigint;
  /** Bytes of the streamed sections, read once per proof alone or once per group of a batch's proofs. */
  streamedBytesPerProof: bigint;
  /** Host memory the key itself holds (its file, less the point sections a key opened on demand leaves there). */
  keyHostBytes: bigint;
  pointsDropped: bigint;
  sections: Record<PointSectionName, SectionPlan>;
}

const PLACEMENTS: Record<number, SectionPlan["placement"]> = {
  [ABI.PLACEMENT_IN_KEY]: "in_key",
  [ABI.PLACEMENT_RESIDENT]: "resident",
  [ABI.PLACEMENT_STREAMED]: "streamed",
};

/**
 * The settings of a prover's engine (cuzk_prover_options). Each has a default and a bound; a value
 * out of bounds is INVALID_ARGUMENT naming it. None changes a proof's bytes.
 */
export interface EngineSettings {
  /**
   * Bytes of the engine's memory (CUDA: device, CPU: host) the prover may take for the key's rows,
   * points and proving workspace; default automatic (free device memory / physical memory). Each
   * point section then stays resident or is streamed in (`memoryPlan()`: in a batch, read once per
   * group of proofs whose kept scalars fit the room the plan leaves, else once per proof); a key
   * that does not fit even streamed is OUT_OF_MEMORY before anything is allocated.
   */
  memoryBudget?: number | bigint;
  /**
   * CUDA: precomputed copies of the key's H points, made when the prover is made, so that msm_h
   * reduces fewer windows: "auto" (default: as many as the memory the plan leaves allows, from
   * 2^16 points; ~2 s more prover creation at 2^24), 0 = none (a process that makes one proof),
   * or a count up to 64. The CPU engine ignores it.
   */
  hCopies?: "auto" | number;
  /** Stream every point section the engine holds instead of keeping any resident (tests, measurements). Default false. */
  streamAll?: boolean;
  /** In a batch, read each streamed section once per proof instead of once per group of proofs (measurements). Default false. */
  streamPerProof?: boolean;
  /** CUDA: store the key's points at infinity too (measurements). Default false. */
  keepInfinity?: boolean;
}

/** The `cuzk_prover_options` of `settings` for `cuzk_prover_create_with`, each bound checked. */
export function proverOptionsStruct(settings: EngineSettings): Uint8Array {
  const memoryBudget = settings.memoryBudget ?? 0;
  const asNumber = typeof memoryBudget === "bigint" ? Number(memoryBudget) : memoryBudget;
  const budget = BigInt(integerIn(asNumber, "memoryBudget (bytes)", 0, Number.MAX_SAFE_INTEGER));
  const hCopies = settings.hCopies ?? "auto";
  const copies = hCopies === "auto" ? ABI.H_COPIES_AUTO : integerIn(hCopies, "hCopies", 0, ABI.H_COPIES_MAX, ' (or "auto")');
  let flags = 0;
  for (const [name, bit] of [["streamAll", ABI.PROVER_STREAM_ALL], ["streamPerProof", ABI.PROVER_STREAM_PER_PROOF], ["keepInfinity", ABI.PROVER_KEEP_INFINITY]] as const) {
    const value = settings[name];
    if (value !== undefined && typeof value !== "boolean") throw new CuzkError("INVALID_ARGUMENT", `${name} must be true or false, not ${JSON.stringify(value)}`);
    if (value) flags |= bit;
  }
  const bytes = allocateStruct(PROVER_OPTIONS_LAYOUT);
  const view = new DataView(bytes.buffer);
  const { fields } = PROVER_OPTIONS_LAYOUT;
  writeField(view, 0, fields.flags, flags);
  writeField(view, 0, fields.memory_budget, budget);
  writeField(view, 0, fields.h_copies, copies);
  return bytes;
}

/** Decodes a `cuzk_memory_plan` the library wrote. */
export function decodeMemoryPlan(bytes: Uint8Array): MemoryPlan {
  const plan = decodeStruct(MEMORY_PLAN_LAYOUT, bytes);
  const sections = {} as Record<PointSectionName, SectionPlan>;
  POINT_SECTIONS.forEach((name, i) => {
    sections[name] = {
      placement: PLACEMENTS[plan.placement[i]] ?? "in_key",
      points: plan.points[i],
      infinity: plan.infinity[i],
      stored: plan.stored[i],
      storedBytes: plan.stored_bytes[i],
    };
  });
  return {
    budget: plan.budget,
    fixedBytes: plan.fixed_bytes,
    residentBytes: plan.resident_bytes,
    streamBufferBytes: plan.stream_buffer_bytes,
    streamedBytesPerProof: plan.streamed_bytes_per_proof,
    keyHostBytes: plan.key_host_bytes,
    pointsDropped: plan.points_dropped,
    sections,
  };
}

/** Zeroed memory for the library to write a plan into. */
export function memoryPlanStruct(): Uint8Array {
  return allocateStruct(MEMORY_PLAN_LAYOUT);
}
