/**
 * @module
 * The fixed layouts of the structs of cuzk.h (those it writes into caller memory and those the caller
 * fills for it), as offset tables, and their decoding through DataView. Every struct starts with
 * `struct_size`; the sizes and offsets here are checked against the header by tests/structs_test.ts
 * and against the library at run time.
 */

/** A field of a fixed-layout struct. */
export interface FieldLayout {
  readonly offset: number;
  /** `pointer`: a native address, 8 bytes (the bindings run on 64-bit hosts only). */
  readonly type: "u32" | "i32" | "u64" | "pointer" | "char" | "interval";
  /** Array length (char[N], cuzk_interval[N], uint32_t[N], uint64_t[N]); absent for scalars. */
  readonly count?: number;
}

/** A fixed-layout struct: its size and its fields by C name. */
export interface StructLayout {
  readonly name: string;
  readonly size: number;
  readonly fields: Readonly<Record<string, FieldLayout>>;
}

/** `cuzk_interval`: { uint64_t start_ns; uint64_t end_ns; }, 16 bytes. */
export const INTERVAL_BYTES = 16;

/** `cuzk_timings`, 408 bytes. */
export const TIMINGS_LAYOUT = {
  name: "cuzk_timings",
  size: 408,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    phase_count: { offset: 4, type: "u32" },
    backend: { offset: 8, type: "u32" },
    proof_index: { offset: 12, type: "u32" },
    total_ns: { offset: 16, type: "u64" },
    phases: { offset: 24, type: "interval", count: 24 },
  },
} as const satisfies StructLayout;

/** `cuzk_key_info`, 64 bytes. */
export const KEY_INFO_LAYOUT = {
  name: "cuzk_key_info",
  size: 64,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    curve: { offset: 4, type: "u32" },
    n_vars: { offset: 8, type: "u32" },
    n_public: { offset: 12, type: "u32" },
    n_constraints: { offset: 16, type: "u32" },
    domain_size: { offset: 20, type: "u32" },
    log_domain: { offset: 24, type: "u32" },
    n_coefs: { offset: 28, type: "u32" },
    fq_bytes: { offset: 32, type: "u32" },
    proof_bytes: { offset: 36, type: "u32" },
    vk_bytes: { offset: 40, type: "u32" },
    has_r1cs: { offset: 44, type: "u32" },
    file_bytes: { offset: 48, type: "u64" },
    open_ns: { offset: 56, type: "u64" },
  },
} as const satisfies StructLayout;

/** `cuzk_library_info`, 64 bytes. */
export const LIBRARY_INFO_LAYOUT = {
  name: "cuzk_library_info",
  size: 64,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    abi_version: { offset: 4, type: "u32" },
    backends: { offset: 8, type: "u32" },
    curves: { offset: 12, type: "u32" },
    cpu_threads: { offset: 16, type: "u32" },
    cuda_device_count: { offset: 20, type: "u32" },
    cuda_runtime_version: { offset: 24, type: "u32" },
    cuda_driver_version: { offset: 28, type: "u32" },
    version: { offset: 32, type: "char", count: 32 },
  },
} as const satisfies StructLayout;

/** `cuzk_device_info`, 296 bytes. */
export const DEVICE_INFO_LAYOUT = {
  name: "cuzk_device_info",
  size: 296,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    index: { offset: 4, type: "i32" },
    cc_major: { offset: 8, type: "u32" },
    cc_minor: { offset: 12, type: "u32" },
    sm_count: { offset: 16, type: "u32" },
    reserved: { offset: 20, type: "u32" },
    total_memory: { offset: 24, type: "u64" },
    free_memory: { offset: 32, type: "u64" },
    name: { offset: 40, type: "char", count: 256 },
  },
} as const satisfies StructLayout;

/** `cuzk_setup_info`, 80 bytes. */
export const SETUP_INFO_LAYOUT = {
  name: "cuzk_setup_info",
  size: 80,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    curve: { offset: 4, type: "u32" },
    n_vars: { offset: 8, type: "u32" },
    n_public: { offset: 12, type: "u32" },
    n_constraints: { offset: 16, type: "u32" },
    domain_size: { offset: 20, type: "u32" },
    threads: { offset: 24, type: "u32" },
    g1_window_bits: { offset: 28, type: "u32" },
    g2_window_bits: { offset: 32, type: "u32" },
    gpu: { offset: 36, type: "u32" },
    zkey_bytes: { offset: 40, type: "u64" },
    total_ns: { offset: 48, type: "u64" },
    scalars_ns: { offset: 56, type: "u64" },
    tables_ns: { offset: 64, type: "u64" },
    points_ns: { offset: 72, type: "u64" },
  },
} as const satisfies StructLayout;

/** `cuzk_progress`, 32 bytes: the caller owns it (8-byte aligned); the library writes stage/phase/done/total, reads cancel. */
export const PROGRESS_LAYOUT = {
  name: "cuzk_progress",
  size: 32,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    cancel: { offset: 4, type: "u32" },
    stage: { offset: 8, type: "u32" },
    phase: { offset: 12, type: "u32" },
    done: { offset: 16, type: "u64" },
    total: { offset: 24, type: "u64" },
  },
} as const satisfies StructLayout;

/** `cuzk_prover_options`, 40 bytes: the caller fills it (cuzk_prover_create_with, cuzk_plan_memory). */
export const PROVER_OPTIONS_LAYOUT = {
  name: "cuzk_prover_options",
  size: 40,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    flags: { offset: 4, type: "u32" },
    memory_budget: { offset: 8, type: "u64" },
    h_copies: { offset: 16, type: "i32" },
    reserved: { offset: 20, type: "u32" },
    host_memory_budget: { offset: 24, type: "u64" },
    chunk_points: { offset: 32, type: "u32" },
    reserved2: { offset: 36, type: "u32" },
  },
} as const satisfies StructLayout;

/**
 * `cuzk_memory_plan`, 416 bytes: where an engine keeps the key's points (arrays: A, B1, B2, C, H),
 * the chunk its MSMs and streams run in, the NTT stage's vectors, and the bytes against the budgets.
 */
export const MEMORY_PLAN_LAYOUT = {
  name: "cuzk_memory_plan",
  size: 416,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    backend: { offset: 4, type: "u32" },
    budget: { offset: 8, type: "u64" },
    fixed_bytes: { offset: 16, type: "u64" },
    resident_bytes: { offset: 24, type: "u64" },
    stream_buffer_bytes: { offset: 32, type: "u64" },
    streamed_bytes_per_proof: { offset: 40, type: "u64" },
    key_host_bytes: { offset: 48, type: "u64" },
    points_dropped: { offset: 56, type: "u64" },
    placement: { offset: 64, type: "u32", count: 5 },
    pinned_sections: { offset: 84, type: "u32" },
    points: { offset: 88, type: "u64", count: 5 },
    infinity: { offset: 128, type: "u64", count: 5 },
    stored: { offset: 168, type: "u64", count: 5 },
    stored_bytes: { offset: 208, type: "u64", count: 5 },
    rows_bytes: { offset: 248, type: "u64" },
    rows_chunk_bytes: { offset: 256, type: "u64" },
    msm_chunk_points: { offset: 264, type: "u64" },
    msm_workspace_bytes: { offset: 272, type: "u64" },
    total_bytes: { offset: 280, type: "u64" },
    min_budget: { offset: 288, type: "u64" },
    host_budget: { offset: 296, type: "u64" },
    host_bytes: { offset: 304, type: "u64" },
    batch: { offset: 312, type: "u64" },
    group_size: { offset: 320, type: "u64" },
    link_bytes_per_proof: { offset: 328, type: "u64" },
    predicted_extra_ns: { offset: 336, type: "u64" },
    group_max: { offset: 344, type: "u64" },
    vector_bytes: { offset: 352, type: "u64" },
    ntt_vectors: { offset: 360, type: "u32" },
    phases_shared: { offset: 364, type: "u32" },
    shared_bytes: { offset: 368, type: "u64" },
    overlap_bytes: { offset: 376, type: "u64" },
    h_copies_bytes: { offset: 384, type: "u64" },
    h_copies: { offset: 392, type: "u32" },
    msm_window_groups: { offset: 396, type: "u32" },
    h_chunk_points: { offset: 400, type: "u64" },
    h_window_groups: { offset: 408, type: "u32" },
    reserved: { offset: 412, type: "u32" },
  },
} as const satisfies StructLayout;

/**
 * `cuzk_plan_request`, 48 bytes: the caller fills it (cuzk_plan_memory): a key described by its
 * counts, or the synthetic PoRep circuit of a size, and the batch to plan for.
 */
export const PLAN_REQUEST_LAYOUT = {
  name: "cuzk_plan_request",
  size: 48,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    backend: { offset: 4, type: "u32" },
    curve: { offset: 8, type: "u32" },
    flags: { offset: 12, type: "u32" },
    n_vars: { offset: 16, type: "u32" },
    n_public: { offset: 20, type: "u32" },
    n_constraints: { offset: 24, type: "u32" },
    reserved: { offset: 28, type: "u32" },
    n_coefs: { offset: 32, type: "u64" },
    batch: { offset: 40, type: "u64" },
  },
} as const satisfies StructLayout;

/**
 * `cuzk_witness_check`, 32 bytes: the caller sets struct_size; the library writes what a witness
 * check found (cuzk_key_check_witness), on success and on refusal.
 */
export const WITNESS_CHECK_LAYOUT = {
  name: "cuzk_witness_check",
  size: 32,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    witness_curve: { offset: 4, type: "u32" },
    values: { offset: 8, type: "u64" },
    first_bad_index: { offset: 16, type: "u64" },
    values_offset: { offset: 24, type: "u64" },
  },
} as const satisfies StructLayout;

/**
 * `cuzk_prove_args`, 128 bytes: the caller fills it (cuzk_prove). Its pointers are native addresses,
 * so every buffer it names must be native memory (a JS array's address is not stable across the
 * runtimes' FFIs); a pointer the input does not use stays 0.
 */
export const PROVE_ARGS_LAYOUT = {
  name: "cuzk_prove_args",
  size: 128,
  fields: {
    struct_size: { offset: 0, type: "u32" },
    input: { offset: 4, type: "u32" },
    witness_format: { offset: 8, type: "u32" },
    flags: { offset: 12, type: "u32" },
    n_proofs: { offset: 16, type: "u64" },
    witness_stride: { offset: 24, type: "u64" },
    witnesses: { offset: 32, type: "pointer" },
    witness_list: { offset: 40, type: "pointer" },
    a: { offset: 48, type: "pointer" },
    b: { offset: 56, type: "pointer" },
    c: { offset: 64, type: "pointer" },
    assignment: { offset: 72, type: "pointer" },
    r: { offset: 80, type: "pointer" },
    s: { offset: 88, type: "pointer" },
    proofs: { offset: 96, type: "pointer" },
    proofs_cap: { offset: 104, type: "u64" },
    timings: { offset: 112, type: "pointer" },
    progress: { offset: 120, type: "pointer" },
  },
} as const satisfies StructLayout;

/** Every struct layout of cuzk.h, by C name. */
export const STRUCT_LAYOUTS: Readonly<Record<string, StructLayout>> = {
  cuzk_timings: TIMINGS_LAYOUT,
  cuzk_key_info: KEY_INFO_LAYOUT,
  cuzk_library_info: LIBRARY_INFO_LAYOUT,
  cuzk_device_info: DEVICE_INFO_LAYOUT,
  cuzk_setup_info: SETUP_INFO_LAYOUT,
  cuzk_progress: PROGRESS_LAYOUT,
  cuzk_prover_options: PROVER_OPTIONS_LAYOUT,
  cuzk_memory_plan: MEMORY_PLAN_LAYOUT,
  cuzk_plan_request: PLAN_REQUEST_LAYOUT,
  cuzk_witness_check: WITNESS_CHECK_LAYOUT,
  cuzk_prove_args: PROVE_ARGS_LAYOUT,
};

/** One `cuzk_interval`: when a phase ran, in ns from the start of the call. */
export interface Interval {
  start_ns: bigint;
  end_ns: bigint;
}

/** A decoded field value: numbers for 32-bit fields, bigints for 64-bit ones and pointers, strings for char[]. */
export type FieldValue = number | bigint | string | Interval[] | number[] | bigint[];

/** The value type of one field, from its layout (an array for a 32- or 64-bit field with a count). */
export type ValueOf<F extends FieldLayout> = F["type"] extends "u32" | "i32" ? (F extends { count: number } ? number[] : number)
  : F["type"] extends "u64" ? (F extends { count: number } ? bigint[] : bigint)
  : F["type"] extends "pointer" ? bigint
  : F["type"] extends "char" ? string
  : Interval[];

/** A decoded struct: every field of `L` by C name, with the type its layout gives. */
export type Decoded<L extends StructLayout> = { -readonly [K in keyof L["fields"]]: ValueOf<L["fields"][K]> };

/** Zeroed memory for `layout`, with `struct_size` filled in. */
export function allocateStruct(layout: StructLayout, count = 1): Uint8Array {
  const bytes = new Uint8Array(layout.size * count);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < count; i++) view.setUint32(i * layout.size, layout.size, true);
  return bytes;
}

/** Writes a 32-bit, 64-bit or pointer field of the struct at `base` in `view` (0n: NULL). */
export function writeField(view: DataView, base: number, field: FieldLayout, value: number | bigint): void {
  const at = base + field.offset;
  switch (field.type) {
    case "u32":
      view.setUint32(at, Number(value), true);
      return;
    case "i32":
      view.setInt32(at, Number(value), true);
      return;
    case "u64":
    case "pointer":
      view.setBigUint64(at, BigInt(value), true);
      return;
    default:
      throw new TypeError(`cannot write a ${field.type} field`);
  }
}

/** Reads one field of the struct at `base` in `view`. */
export function readField(view: DataView, base: number, field: FieldLayout): FieldValue {
  const at = base + field.offset;
  if (field.count !== undefined && (field.type === "u32" || field.type === "i32" || field.type === "u64")) {
    const width = field.type === "u64" ? 8 : 4;
    const values = Array.from({ length: field.count }, (_, i) => readField(view, base + i * width, { offset: field.offset, type: field.type }));
    return values as number[] | bigint[];
  }
  switch (field.type) {
    case "u32":
      return view.getUint32(at, true);
    case "i32":
      return view.getInt32(at, true);
    case "u64":
    case "pointer":
      return view.getBigUint64(at, true);
    case "char": {
      const bytes = new Uint8Array(view.buffer, view.byteOffset + at, field.count ?? 1);
      const end = bytes.indexOf(0);
      return new TextDecoder().decode(bytes.subarray(0, end < 0 ? bytes.length : end));
    }
    case "interval": {
      const out: Interval[] = [];
      for (let i = 0; i < (field.count ?? 1); i++) {
        const p = at + i * INTERVAL_BYTES;
        out.push({ start_ns: view.getBigUint64(p, true), end_ns: view.getBigUint64(p + 8, true) });
      }
      return out;
    }
  }
}

/** Decodes the struct at record `index` of `bytes` into an object keyed by C field name. */
export function decodeStruct<L extends StructLayout>(layout: L, bytes: Uint8Array, index = 0): Decoded<L> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const base = index * layout.size;
  const out: Record<string, FieldValue> = {};
  for (const [name, field] of Object.entries(layout.fields)) out[name] = readField(view, base, field);
  // Each value was read with the type its field layout names, which is what Decoded<L> states.
  return out as Decoded<L>;
}
