/**
 * @module
 * The key memory plan (`cuzk_memory_plan`): where an engine keeps each point section of the key
 * (A, B1, B2, C, H): resident in the engine's memory, streamed in chunk by chunk (read once per
 * group of a batch's proofs whose scalars the budget's room keeps, else once per proof), or read
 * in place from the key (the CPU engine with a key in memory); how many points are at infinity and
 * not stored; the chunk the MSMs and the streams run in; and the bytes against the budgets
 * (`EngineSettings`). A prover's plan comes from `prover.memoryPlan()`; `planMemory` asks the
 * library what an engine would plan for a key or a synthetic circuit, without a key or a device.
 */
import { integerIn, LIMITS } from "./bounds.ts";
import { CuzkError } from "./errors.ts";
import { allocateStruct, decodeStruct, MEMORY_PLAN_LAYOUT, PLAN_REQUEST_LAYOUT, PROVER_OPTIONS_LAYOUT, writeField } from "./ffi/structs.ts";
import { ABI } from "./ffi/symbols.ts";
import { curveOf } from "./formats/snarkjs.ts";
import { Key } from "./key.ts";
import type { KeyInfo } from "./key.ts";
import type { BackendName, CurveName, Library } from "./library.ts";
import { nativeOf } from "./library.ts";
import { invoke } from "./native_call.ts";

/** The point sections, in the order of the plan's arrays. */
export const POINT_SECTIONS = ["A", "B1", "B2", "C", "H"] as const;
export type PointSectionName = typeof POINT_SECTIONS[number];

export interface SectionPlan {
  placement: "in_key" | "resident" | "streamed";
  /** Points of the section in the key, and of those at infinity (0 in a plan of a described key). */
  points: bigint;
  infinity: bigint;
  /** Points the engine holds (0 when read in place) and their bytes. */
  stored: bigint;
  storedBytes: bigint;
  /** CUDA, a streamed section: copied once to pinned host memory (else packed from the key on the host per group). */
  pinned: boolean;
}

/**
 * An engine's memory plan: of the plans that fit the budget (every large buffer has a chunked form),
 * the one predicted to cost the least time per proof. `totalBytes` = fixed + rows + MSM workspace +
 * resident + stream buffers, at most `budget`.
 */
export interface MemoryPlan {
  /** The engine the plan is for. */
  backend: BackendName;
  /** Bytes the engine may use (the budget asked for, or automatic: free device memory / physical memory). */
  budget: bigint;
  /** Needed whatever the plan: witness, a/b/c vectors, indices, margin. */
  fixedBytes: bigint;
  /** The A/B rows in the engine's memory, and the chunk they come up in (0: held whole). */
  rowsBytes: bigint;
  rowsChunkBytes: bigint;
  /** Points per MSM chunk (at least the largest MSM: unchunked), and the MSM scratch at that chunk. */
  msmChunkPoints: bigint;
  msmWorkspaceBytes: bigint;
  /**
   * CUDA: the groups an MSM's windows are sorted and summed in, one after another (1: all at once);
   * more groups take a smaller workspace at the same chunk, for a few ms more a chunk. 1 on the CPU.
   */
  msmWindowGroups: number;
  /**
   * Points per chunk of the H MSM and the groups of its windows: `msmChunkPoints` and
   * `msmWindowGroups`, or (CUDA) a larger chunk of its own where its buffers fit beside the other
   * MSMs' in the same workspace (fewer chunks, fewer bucket reductions).
   */
  hChunkPoints: bigint;
  hWindowGroups: number;
  /** Points stored in the engine's memory. */
  residentBytes: bigint;
  /** Two chunks of the widest streamed point. */
  streamBufferBytes: bigint;
  /** What the plan takes of the budget: fixed + NTT vectors + rows + MSM workspace + resident + stream buffers - shared + overlap. */
  totalBytes: bigint;
  /**
   * CUDA: a proof's own work (its witness, the NTT vectors, the row chunks) and a group's streamed
   * sums (stream buffers, MSM workspace) take turns in the same memory, given back and allocated
   * again once per group; `sharedBytes` is what they share, counted once in `totalBytes`. A proof
   * alone is then a group of one: its H scalars go to the host and back.
   */
  phasesShared: boolean;
  sharedBytes: bigint;
  /**
   * CUDA, with the `overlap` setting: a second proof's witness and NTT vectors, so that in a batch
   * proof p+1's upload, a/b/c and NTTs run beside proof p's MSMs (a plan with every section resident
   * and the rows whole, when the budget has the room left); 0n: one proof after another.
   */
  overlapBytes: bigint;
  /**
   * CUDA: copies of the H points held (copy 0 is the points; msm_h then reduces fewer windows), made
   * when the prover is made and H is resident in one chunk, as many as `hCopies` forces or as the
   * room left holds (up to 16); 0: none. `hCopiesBytes`: the copies beyond the points themselves.
   */
  hCopies: number;
  hCopiesBytes: bigint;
  /** The smallest budget this key can be planned in (with the same host budget). */
  minBudget: bigint;
  /**
   * The NTT stage's full-length vectors held (3: a, b, c; CUDA may hold 2 and form c again, or 4: a
   * fourth the previous proof's H scalars go out of), and the bytes of one.
   */
  nttVectors: number;
  vectorBytes: bigint;
  /** Bytes of the streamed sections, read once per proof alone or once per group of a batch's proofs. */
  streamedBytesPerProof: bigint;
  /** Host memory the key itself holds (its file, less the point sections a key opened on demand leaves there). */
  keyHostBytes: bigint;
  /** Host bytes the plan may take beyond the key, and those it takes (pinned streamed points, a group's kept H scalars). */
  hostBudget: bigint;
  hostBytes: bigint;
  /** Proofs per call the plan was judged for (a prover's: 1), and how many of them share each read of a streamed section. */
  batch: bigint;
  groupSize: bigint;
  /** The most proofs of any batch that share a read (their kept H scalars fit). */
  groupMax: bigint;
  /** Predicted bytes read into the engine per proof besides the witness (PCIe for CUDA). */
  linkBytesPerProof: bigint;
  /** Predicted time per proof above the unconstrained plan's, in ns: an upper bound (the plan's
   * traffic counted as if none of it overlapped the work). */
  predictedExtraNs: bigint;
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
   * points and proving workspace; default automatic (free device memory / physical memory). The
   * plan then chooses the chunk the MSMs run in and keeps each point section resident or streams
   * it in chunks (`memoryPlan()`: in a batch, read once per group of proofs whose kept scalars fit,
   * else once per proof); a key that does not fit even at the smallest chunks is OUT_OF_MEMORY,
   * naming the least budget it needs, before anything is allocated.
   */
  memoryBudget?: number | bigint;
  /**
   * Host bytes the plan may take beyond the key: pinned copies of streamed points, the H scalars a
   * group of proofs keeps; default automatic (CUDA: three quarters of physical memory; the CPU
   * engine's budget is `memoryBudget`). A batch whose kept scalars do not fit proves in groups.
   * CUDA never page-locks more than the host has available (less a reserve of 1/32 of physical
   * memory, at least 1 GiB): a streamed section it cannot pin then stays in the key (`memoryPlan()`
   * says so), a group shrinks to the kept scalars the host can hold, and a buffer the caller asks to
   * be pinned is OUT_OF_MEMORY naming what is available.
   */
  hostMemoryBudget?: number | bigint;
  /**
   * Points per MSM chunk and streamed chunk: 0 or absent (default) = the plan chooses (one chunk
   * when the budget allows); else a power of two from 2^10 to 2^31 (tests and measurements).
   */
  chunkPoints?: number;
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
  /**
   * CUDA: read the A/B rows in chunks per proof from a pinned copy in host memory even when the
   * budget holds them whole (tests, measurements). Default false; a budget too small for the rows
   * reads them in chunks anyway.
   */
  streamRows?: boolean;
  /**
   * CUDA: where the room the plan leaves holds a second proof's witness and NTT vectors, a batch
   * runs proof p+1's upload, a/b/c and NTTs beside proof p's MSMs (measurements: on an H200 the
   * MSMs slowed by about the time the NTTs hid, and the room goes to it instead of the H copies).
   * Default false.
   */
  overlap?: boolean;
}

/** A byte count a caller chose (number or bigint), 0 = automatic: an integer from 0 to 2^53 - 1. */
function byteCount(value: number | bigint | undefined, what: string): bigint {
  const bytes = value ?? 0;
  const asNumber = typeof bytes === "bigint" ? Number(bytes) : bytes;
  return BigInt(integerIn(asNumber, `${what} (bytes)`, 0, Number.MAX_SAFE_INTEGER));
}

/** `chunkPoints`: 0 (the plan chooses) or a power of two within the library's bounds. */
function chunkPointsOf(value: unknown): number {
  if (value === undefined || value === 0) return 0;
  const n = value as number;
  if (typeof value !== "number" || !Number.isInteger(Math.log2(n)) || n < ABI.CHUNK_POINTS_MIN || n > ABI.CHUNK_POINTS_MAX) {
    throw new CuzkError(
      "INVALID_ARGUMENT",
      `chunkPoints must be 0 (the plan chooses) or a power of two from ${ABI.CHUNK_POINTS_MIN} to ${ABI.CHUNK_POINTS_MAX}, not ${typeof value === "string" ? JSON.stringify(value) : String(value)}`,
    );
  }
  return n;
}

/** The `cuzk_prover_options` of `settings` for `cuzk_prover_create_with` and `cuzk_plan_memory`, each bound checked. */
export function proverOptionsStruct(settings: EngineSettings): Uint8Array {
  const budget = byteCount(settings.memoryBudget, "memoryBudget");
  const hostBudget = byteCount(settings.hostMemoryBudget, "hostMemoryBudget");
  const chunkPoints = chunkPointsOf(settings.chunkPoints);
  const hCopies = settings.hCopies ?? "auto";
  const copies = hCopies === "auto" ? ABI.H_COPIES_AUTO : integerIn(hCopies, "hCopies", 0, ABI.H_COPIES_MAX, ' (or "auto")');
  let flags = 0;
  for (const [name, bit] of [["streamAll", ABI.PROVER_STREAM_ALL], ["streamPerProof", ABI.PROVER_STREAM_PER_PROOF], ["keepInfinity", ABI.PROVER_KEEP_INFINITY], ["streamRows", ABI.PROVER_STREAM_ROWS], ["overlap", ABI.PROVER_OVERLAP]] as const) {
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
  writeField(view, 0, fields.host_memory_budget, hostBudget);
  writeField(view, 0, fields.chunk_points, chunkPoints);
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
      pinned: ((plan.pinned_sections >>> i) & 1) === 1,
    };
  });
  return {
    backend: plan.backend === ABI.BACKEND_CUDA ? "cuda" : "cpu",
    budget: plan.budget,
    fixedBytes: plan.fixed_bytes,
    rowsBytes: plan.rows_bytes,
    rowsChunkBytes: plan.rows_chunk_bytes,
    msmChunkPoints: plan.msm_chunk_points,
    msmWorkspaceBytes: plan.msm_workspace_bytes,
    msmWindowGroups: plan.msm_window_groups,
    hChunkPoints: plan.h_chunk_points,
    hWindowGroups: plan.h_window_groups,
    residentBytes: plan.resident_bytes,
    streamBufferBytes: plan.stream_buffer_bytes,
    totalBytes: plan.total_bytes,
    phasesShared: plan.phases_shared !== 0,
    sharedBytes: plan.shared_bytes,
    overlapBytes: plan.overlap_bytes,
    hCopies: plan.h_copies,
    hCopiesBytes: plan.h_copies_bytes,
    minBudget: plan.min_budget,
    nttVectors: plan.ntt_vectors,
    vectorBytes: plan.vector_bytes,
    streamedBytesPerProof: plan.streamed_bytes_per_proof,
    keyHostBytes: plan.key_host_bytes,
    hostBudget: plan.host_budget,
    hostBytes: plan.host_bytes,
    batch: plan.batch,
    groupSize: plan.group_size,
    groupMax: plan.group_max,
    linkBytesPerProof: plan.link_bytes_per_proof,
    predictedExtraNs: plan.predicted_extra_ns,
    pointsDropped: plan.points_dropped,
    sections,
  };
}

/** Zeroed memory for the library to write a plan into. */
export function memoryPlanStruct(): Uint8Array {
  return allocateStruct(MEMORY_PLAN_LAYOUT);
}

/** A key described by its counts: what `Key.info()` reports (a KeyInfo passes as it is). */
export type PlannedKey = Pick<KeyInfo, "curve" | "nVars" | "nPublic" | "nConstraints" | "nCoefs">;

/** The key of the synthetic PoRep-profile circuit (`synthCircuit({ profile: "porep" })`) of a size. */
export interface PlannedSyntheticKey {
  synthetic: "porep";
  curve: CurveName;
  /** Rows of the R1CS, as `synthCircuit` takes them. */
  constraints: number;
  /** Public inputs; default 4, as `synthCircuit`. */
  publicInputs?: number;
}

/** Options of `planMemory`: the engine, the key, the batch and the engine's settings. */
export interface PlanMemoryOptions extends EngineSettings {
  /** The engine to plan for; "cuda" is planned on any machine (pass `memoryBudget` where there is no GPU). */
  backend: BackendName;
  /** The key: an open Key, its counts (`key.info()`), or a synthetic PoRep circuit's. */
  key: Key | PlannedKey | PlannedSyntheticKey;
  /** Proofs per call, 1 to 1024 (`LIMITS.batchWitnesses`); default 1. */
  batch?: number;
  /** CPU: the engine holds the key's points (a key opened with `pointsOnDemand`) instead of reading them in place. Default false. */
  pointsOnDemand?: boolean;
  library?: Library;
}

const U32_MAX = 0xffff_ffff;

/** The `cuzk_plan_request` of `options`, each count bound checked. */
function planRequestStruct(options: PlanMemoryOptions): Uint8Array {
  const backend = options.backend;
  if (backend !== "cpu" && backend !== "cuda") {
    throw new CuzkError("INVALID_ARGUMENT", `backend must be "cpu" or "cuda", not ${JSON.stringify(backend)}`);
  }
  const given = options.key instanceof Key ? options.key.info() : options.key;
  const key = given as Partial<PlannedKey & PlannedSyntheticKey> | undefined;
  if (typeof key !== "object" || key === null) {
    throw new CuzkError("INVALID_ARGUMENT", 'key must be a key\'s counts (key.info()) or { synthetic: "porep", curve, constraints }');
  }
  const pointsOnDemand = options.pointsOnDemand ?? false;
  if (typeof pointsOnDemand !== "boolean") throw new CuzkError("INVALID_ARGUMENT", `pointsOnDemand must be true or false, not ${JSON.stringify(pointsOnDemand)}`);
  const batch = integerIn(options.batch ?? 1, "batch", 1, LIMITS.batchWitnesses);
  const bytes = allocateStruct(PLAN_REQUEST_LAYOUT);
  const view = new DataView(bytes.buffer);
  const { fields } = PLAN_REQUEST_LAYOUT;
  let flags = pointsOnDemand ? ABI.PLAN_POINTS_ON_DEMAND : 0;
  writeField(view, 0, fields.curve, curveOf(key.curve as CurveName).id);
  if ("synthetic" in key) {
    if (key.synthetic !== "porep") throw new CuzkError("INVALID_ARGUMENT", `synthetic must be "porep", not ${JSON.stringify(key.synthetic)}`);
    flags |= ABI.PLAN_SYNTH_POREP;
    writeField(view, 0, fields.n_constraints, integerIn(key.constraints, "constraints", 1, U32_MAX));
    writeField(view, 0, fields.n_public, integerIn(key.publicInputs ?? 4, "publicInputs", 0, U32_MAX));
  } else {
    // The library holds the counts to its own ranges (n_vars > n_public, the largest domain).
    writeField(view, 0, fields.n_vars, integerIn(key.nVars, "nVars", 1, U32_MAX));
    writeField(view, 0, fields.n_public, integerIn(key.nPublic, "nPublic", 0, U32_MAX));
    writeField(view, 0, fields.n_constraints, integerIn(key.nConstraints, "nConstraints", 1, U32_MAX));
    writeField(view, 0, fields.n_coefs, integerIn(key.nCoefs, "nCoefs", 0, Number.MAX_SAFE_INTEGER));
  }
  writeField(view, 0, fields.backend, backend === "cuda" ? ABI.BACKEND_CUDA : ABI.BACKEND_CPU);
  writeField(view, 0, fields.flags, flags);
  writeField(view, 0, fields.batch, batch);
  return bytes;
}

/**
 * The plan an engine of `options.backend` would make for a key (its counts, or a synthetic PoRep
 * circuit's), a batch and engine settings: arithmetic in the library, nothing allocated, no key
 * opened, no device needed, except that CUDA with no `memoryBudget` plans for GPU 0's free memory
 * (NO_DEVICE without a GPU: pass a budget). A described key keeps every point: a prover's plan,
 * which drops the points at infinity but holds an index of the rest, differs a little (a PoRep
 * key's is far smaller). A budget below the minimum throws
 * OUT_OF_MEMORY, its message naming the least budget ("at least N bytes") and its `memoryPlan`
 * holding the plan with `minBudget` set; a value out of bounds is INVALID_ARGUMENT naming it.
 */
export function planMemory(options: PlanMemoryOptions): MemoryPlan {
  const native = nativeOf(options.library);
  native.require("cuzk_plan_memory");
  const request = planRequestStruct(options);
  const settings = proverOptionsStruct(options);
  const out = memoryPlanStruct();
  try {
    invoke(native, "cuzk_plan_memory", [request, settings, out]);
  } catch (error) {
    // The library fills the plan on this refusal too: its minimum is data the caller can use.
    if (error instanceof CuzkError && error.code === "OUT_OF_MEMORY") {
      throw new CuzkError(error.code, error.message, {
        status: error.status,
        nativeMessage: error.nativeMessage,
        operation: error.operation,
        memoryPlan: decodeMemoryPlan(out),
      });
    }
    throw error;
  }
  return decodeMemoryPlan(out);
}
