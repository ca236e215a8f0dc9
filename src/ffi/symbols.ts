/**
 * @module
 * The one symbol table of the library: every function of native/include/cuzk.h, in the header's
 * order, with neutral types that deno.ts, bun.ts and node.ts translate at load time. The C
 * prototype sits beside each entry; tests/abi_test.ts checks the table against the header and
 * against the symbols the built library exports.
 *
 * Type choices: `cuzk_status` and other C enums returned by value are `i32`; enum and flag
 * arguments are declared `uint32_t` in the header and are `u32` here; every `T*` that points at
 * memory the call reads or writes is `buffer` (JS or native memory); opaque handles are `pointer`.
 */
import type { NativeType, SymbolDefinition } from "./types.ts";

// Generic so that each entry keeps its parameter tuple: src/native_call.ts types calls from it.
const s = <const P extends readonly NativeType[], R extends NativeType>(
  parameters: P,
  result: R,
  nonblocking = false,
): { readonly parameters: P; readonly result: R; readonly nonblocking?: boolean } =>
  nonblocking ? { parameters, result, nonblocking } : { parameters, result };

/** Every exported function of cuzk.h, keyed by its C name. */
export const symbols = {
  // ---- library and devices -------------------------------------------------------------------
  // uint32_t cuzk_abi_version(void);
  cuzk_abi_version: s([], "u32"),
  // cuzk_status cuzk_library_info_get(cuzk_library_info* out, char* err, size_t err_cap);
  cuzk_library_info_get: s(["buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_device_info_get(int32_t index, cuzk_device_info* out, char* err, size_t err_cap);
  cuzk_device_info_get: s(["i32", "buffer", "buffer", "usize"], "i32"),
  // const char* cuzk_status_name(int32_t status);
  cuzk_status_name: s(["i32"], "cstring"),

  // ---- contexts ------------------------------------------------------------------------------
  // cuzk_status cuzk_context_create(uint32_t backend, int32_t device, uint32_t cpu_threads, uint32_t flags,
  //                                 cuzk_context** out, char* err, size_t err_cap);
  cuzk_context_create: s(["u32", "i32", "u32", "u32", "buffer", "buffer", "usize"], "i32"),
  // uint32_t cuzk_context_backend(const cuzk_context* ctx);
  cuzk_context_backend: s(["pointer"], "u32"),
  // cuzk_status cuzk_context_destroy(cuzk_context* ctx, char* err, size_t err_cap);
  cuzk_context_destroy: s(["pointer", "buffer", "usize"], "i32"),

  // ---- proving keys --------------------------------------------------------------------------
  // cuzk_status cuzk_key_open(const char* path, uint32_t flags, cuzk_key** out, char* err, size_t err_cap);
  cuzk_key_open: s(["cstring", "u32", "buffer", "buffer", "usize"], "i32", true),
  // cuzk_status cuzk_key_open_memory(const uint8_t* data, size_t len, uint32_t flags, cuzk_key** out,
  //                                  char* err, size_t err_cap);
  cuzk_key_open_memory: s(["buffer", "usize", "u32", "buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_key_get_info(const cuzk_key* key, cuzk_key_info* out, char* err, size_t err_cap);
  cuzk_key_get_info: s(["pointer", "buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_key_attach_r1cs(cuzk_key* key, const char* r1cs_path, char* err, size_t err_cap);
  cuzk_key_attach_r1cs: s(["pointer", "cstring", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_key_check_witness(const cuzk_key* key, const uint8_t* witness, size_t witness_len,
  //                                    uint32_t witness_format, uint32_t flags, cuzk_witness_check* out,
  //                                    char* err, size_t err_cap);
  cuzk_key_check_witness: s(["pointer", "buffer", "usize", "u32", "u32", "buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_key_export_vk(const cuzk_key* key, uint8_t* out, size_t out_cap, size_t* out_len,
  //                                char* err, size_t err_cap);
  cuzk_key_export_vk: s(["pointer", "buffer", "usize", "buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_key_export_vk_alphabeta(const cuzk_key* key, uint8_t* out, size_t out_cap, size_t* out_len,
  //                                          char* err, size_t err_cap);
  cuzk_key_export_vk_alphabeta: s(["pointer", "buffer", "usize", "buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_key_close(cuzk_key* key, char* err, size_t err_cap);
  cuzk_key_close: s(["pointer", "buffer", "usize"], "i32"),

  // ---- provers -------------------------------------------------------------------------------
  // cuzk_status cuzk_prover_create(cuzk_context* ctx, cuzk_key* key, uint32_t flags, cuzk_prover** out,
  //                                cuzk_progress* progress, char* err, size_t err_cap);
  cuzk_prover_create: s(["pointer", "pointer", "u32", "buffer", "buffer", "buffer", "usize"], "i32", true),
  // cuzk_status cuzk_prover_create_with(cuzk_context* ctx, cuzk_key* key, const cuzk_prover_options* options,
  //                                     cuzk_prover** out, cuzk_progress* progress, char* err, size_t err_cap);
  cuzk_prover_create_with: s(["pointer", "pointer", "buffer", "buffer", "buffer", "buffer", "usize"], "i32", true),
  // cuzk_status cuzk_prover_memory_plan(const cuzk_prover* prover, cuzk_memory_plan* out, char* err, size_t err_cap);
  cuzk_prover_memory_plan: s(["pointer", "buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_plan_memory(const cuzk_plan_request* request, const cuzk_prover_options* options,
  //                              cuzk_memory_plan* out, char* err, size_t err_cap);
  cuzk_plan_memory: s(["buffer", "buffer", "buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_prover_destroy(cuzk_prover* prover, char* err, size_t err_cap);
  cuzk_prover_destroy: s(["pointer", "buffer", "usize"], "i32"),

  // ---- proving -------------------------------------------------------------------------------
  // cuzk_status cuzk_prove(cuzk_prover* prover, const cuzk_prove_args* args, char* err, size_t err_cap);
  cuzk_prove: s(["pointer", "buffer", "buffer", "usize"], "i32", true),

  // ---- verification --------------------------------------------------------------------------
  // cuzk_status cuzk_verify(uint32_t curve, const uint8_t* vk, size_t vk_len, const uint8_t* proof,
  //                         size_t proof_len, const uint8_t* public_signals, size_t n_public,
  //                         int32_t* out_valid, char* err, size_t err_cap);
  cuzk_verify: s(["u32", "buffer", "usize", "buffer", "usize", "buffer", "usize", "buffer", "buffer", "usize"], "i32", true),

  // ---- kernels -------------------------------------------------------------------------------
  // cuzk_status cuzk_msm(cuzk_context* ctx, uint32_t curve, uint32_t group, const uint8_t* points,
  //                      const uint8_t* scalars, size_t n, uint8_t* out, size_t out_cap,
  //                      cuzk_timings* timings, char* err, size_t err_cap);
  cuzk_msm: s(["pointer", "u32", "u32", "buffer", "buffer", "usize", "buffer", "usize", "buffer", "buffer", "usize"], "i32", true),
  // cuzk_status cuzk_ntt(cuzk_context* ctx, uint32_t curve, uint8_t* values, uint32_t log_n, uint32_t kind,
  //                      cuzk_timings* timings, char* err, size_t err_cap);
  cuzk_ntt: s(["pointer", "u32", "buffer", "u32", "u32", "buffer", "buffer", "usize"], "i32", true),

  // ---- host memory ---------------------------------------------------------------------------
  // cuzk_status cuzk_host_alloc(size_t bytes, uint32_t flags, int32_t device, void** out_ptr,
  //                             uint32_t* out_flags, char* err, size_t err_cap);
  cuzk_host_alloc: s(["usize", "u32", "i32", "buffer", "buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_host_free(void* ptr, char* err, size_t err_cap);
  cuzk_host_free: s(["buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_host_register(void* ptr, size_t bytes, uint64_t* out_ns, char* err, size_t err_cap);
  cuzk_host_register: s(["buffer", "usize", "buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_host_unregister(void* ptr, char* err, size_t err_cap);
  cuzk_host_unregister: s(["buffer", "buffer", "usize"], "i32"),
  // cuzk_status cuzk_host_stats(uint64_t* live_buffers, uint64_t* live_bytes, uint64_t* pinned_bytes,
  //                             uint64_t* total_pin_ns);
  cuzk_host_stats: s(["buffer", "buffer", "buffer", "buffer"], "i32"),
  // cuzk_status cuzk_staging_stats(uint64_t* pinned_bytes, uint64_t* allocations, uint64_t* alloc_ns);
  cuzk_staging_stats: s(["buffer", "buffer", "buffer"], "i32"),

  // ---- synthetic circuits and the insecure development setup ---------------------------------
  // cuzk_status cuzk_synth_circuit(uint32_t curve, uint32_t profile, uint32_t n_constraints, uint32_t n_public,
  //                                uint64_t seed, uint8_t* r1cs, size_t r1cs_cap, size_t* r1cs_len,
  //                                uint8_t* wtns, size_t wtns_cap, size_t* wtns_len, char* err, size_t err_cap);
  cuzk_synth_circuit: s(
    ["u32", "u32", "u32", "u32", "u64", "buffer", "usize", "buffer", "buffer", "usize", "buffer", "buffer", "usize"],
    "i32",
    true,
  ),
  // cuzk_status cuzk_synth_circuit_write(uint32_t curve, uint32_t profile, uint32_t n_constraints,
  //                                      uint32_t n_public, uint64_t seed, const char* r1cs_path,
  //                                      const char* wtns_path, char* err, size_t err_cap);
  cuzk_synth_circuit_write: s(["u32", "u32", "u32", "u32", "u64", "cstring", "cstring", "buffer", "usize"], "i32", true),
  // cuzk_status cuzk_synth_witnesses(uint32_t curve, uint32_t profile, uint32_t n_constraints, uint32_t n_public,
  //                                  uint64_t seed, const uint64_t* witness_seeds, uint8_t* const* values,
  //                                  size_t n_witnesses, size_t values_cap, char* err, size_t err_cap);
  cuzk_synth_witnesses: s(["u32", "u32", "u32", "u32", "u64", "buffer", "buffer", "usize", "usize", "buffer", "usize"], "i32", true),
  // cuzk_status cuzk_setup_insecure_dev(const char* r1cs_path, const char* zkey_path, uint32_t cpu_threads,
  //                                     uint32_t flags, cuzk_setup_info* info, cuzk_progress* progress,
  //                                     char* err, size_t err_cap);
  cuzk_setup_insecure_dev: s(["cstring", "cstring", "u32", "u32", "buffer", "buffer", "buffer", "usize"], "i32", true),
  // cuzk_status cuzk_setup_insecure_dev_key(const char* r1cs_path, uint32_t cpu_threads, uint32_t flags,
  //                                         cuzk_key** out, cuzk_setup_info* info, cuzk_progress* progress,
  //                                         char* err, size_t err_cap);
  cuzk_setup_insecure_dev_key: s(["cstring", "u32", "u32", "buffer", "buffer", "buffer", "buffer", "usize"], "i32", true),
} as const satisfies Record<string, SymbolDefinition>;

/** The C name of a function of the table. */
export type SymbolName = keyof typeof symbols;

/** The table as a plain record, for code that iterates over it. */
export const symbolTable: Readonly<Record<string, SymbolDefinition>> = symbols;

/** Status codes of `enum cuzk_status`, by value; `errors.ts` turns them into symbolic codes. */
export const STATUS_NAMES = [
  "OK",
  "INVALID_ARGUMENT",
  "IO",
  "FORMAT",
  "CURVE_MISMATCH",
  "WITNESS_LENGTH",
  "UNSATISFIED",
  "SHORT_BUFFER",
  "UNSUPPORTED",
  "NO_DEVICE",
  "DEVICE",
  "OUT_OF_MEMORY",
  "BUSY",
  "SELF_CHECK",
  "INTERNAL",
  "CANCELLED",
] as const;

/** Constants of cuzk.h that the TypeScript side uses. */
export const ABI = {
  ABI_VERSION: 6,
  CURVE_BN254: 1,
  CURVE_BLS12_381: 2,
  BACKEND_AUTO: 0,
  BACKEND_CPU: 1,
  BACKEND_CUDA: 2,
  G1: 1,
  G2: 2,
  WITNESS_RAW: 0,
  WITNESS_WTNS: 1,
  CHECK_SCAN: 0x1,
  KEY_SKIP_POINT_CHECKS: 0x1,
  PROVE_SELF_CHECK: 0x1,
  PROVE_SKIP_R1CS_CHECK: 0x2,
  PROVE_NO_SELF_CHECK: 0x4,
  INPUT_WITNESSES: 0,
  INPUT_WITNESS_LIST: 1,
  INPUT_ABC: 2,
  CONTEXT_G2_ON_CPU: 0x1,
  PROVER_STREAM_ALL: 0x1,
  PROVER_STREAM_PER_PROOF: 0x2,
  PROVER_KEEP_INFINITY: 0x4,
  PROVER_STREAM_ROWS: 0x8,
  PROVER_OVERLAP: 0x10,
  CHUNK_POINTS_MIN: 2 ** 10,
  CHUNK_POINTS_MAX: 2 ** 31,
  H_COPIES_AUTO: -1,
  H_COPIES_MAX: 64,
  HOST_PINNED: 0x1,
  HOST_IS_PINNED: 0x1,
  HAS_CPU: 0x1,
  HAS_CUDA: 0x2,
  HAS_BN254: 0x1,
  HAS_BLS12_381: 0x2,
  FR_BYTES: 32,
  PROOF_BYTES_BN254: 256,
  PROOF_BYTES_BLS12_381: 384,
  PHASE_SLOTS: 24,
  NTT_FORWARD: 0,
  NTT_INVERSE: 1,
  NTT_COSET_FORWARD: 2,
  NTT_COSET_INVERSE: 3,
  SYNTH_UNIFORM: 0,
  SYNTH_POREP: 1,
  SETUP_CPU_ONLY: 1,
  STAGE_IDLE: 0,
  STAGE_KEY_UPLOAD: 1,
  STAGE_PROVE: 2,
  STAGE_SETUP: 3,
  KEY_POINTS_ON_DEMAND: 0x2,
  POINT_SECTIONS: 5,
  PLACEMENT_IN_KEY: 1,
  PLACEMENT_RESIDENT: 2,
  PLACEMENT_STREAMED: 3,
  PLAN_POINTS_ON_DEMAND: 0x1,
  PLAN_SYNTH_POREP: 0x2,
} as const;

/** Names of `enum cuzk_phase`, by value (lower-case, without the CUZK_PHASE_ prefix). */
export const PHASE_NAMES = [
  "parse",
  "witness_check",
  "abc",
  "ntt_h",
  "msm_a",
  "msm_b1",
  "msm_b2",
  "msm_c",
  "msm_h",
  "batch_add",
  "upload",
  "download",
  "host_register",
  "finalize",
  "self_check",
] as const;
