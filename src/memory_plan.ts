/**
 * @module
 * A prover's key memory plan (`cuzk_prover_memory_plan`): where its engine keeps each point
 * section of the key (A, B1, B2, C, H): resident in the engine's memory, streamed in (read once
 * per group of a batch's proofs whose scalars the budget's room keeps, else once per proof), or
 * read in place from the key (the CPU engine with a key in memory); how many points are at
 * infinity and not stored; and the bytes against the budget (`ProverOptions.memoryBudget`).
 */
import { integerIn } from "./bounds.ts";
import { allocateStruct, decodeStruct, MEMORY_PLAN_LAYOUT, PROVER_OPTIONS_LAYOUT } from "./ffi/structs.ts";
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

/** A `cuzk_prover_options` for `cuzk_prover_create_with`: the budget in bytes (0 = automatic). */
export function proverOptionsStruct(memoryBudget: number | bigint): Uint8Array {
  const asNumber = typeof memoryBudget === "bigint" ? Number(memoryBudget) : memoryBudget;
  const budget = BigInt(integerIn(asNumber, "memoryBudget (bytes)", 0, Number.MAX_SAFE_INTEGER));
  const bytes = allocateStruct(PROVER_OPTIONS_LAYOUT);
  new DataView(bytes.buffer).setBigUint64(PROVER_OPTIONS_LAYOUT.fields.memory_budget.offset, budget, true);
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
