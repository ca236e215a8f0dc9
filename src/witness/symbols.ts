/**
 * @module
 * The symbol table of a per-circuit witness library (native/witness/cuzk_witness.h), in the
 * header's order and with the neutral types of src/ffi/symbols.ts, so the same adapters (Deno,
 * Bun, Node) open it. `cuzk_witness_compute` runs off the JS thread.
 */
import type { SymbolDefinition } from "../ffi/types.ts";

/** Every function of cuzk_witness.h, keyed by its C name. */
export const witnessSymbols = {
  // uint32_t cuzk_witness_abi_version(void);
  cuzk_witness_abi_version: { parameters: [], result: "u32" },
  // cuzk_status cuzk_witness_info_get(cuzk_witness_info* out, char* err, size_t err_cap);
  cuzk_witness_info_get: { parameters: ["buffer", "buffer", "usize"], result: "i32" },
  // cuzk_status cuzk_witness_inputs(uint64_t* hashes, uint64_t* sizes, size_t cap, size_t* out_count,
  //                                 char* err, size_t err_cap);
  cuzk_witness_inputs: { parameters: ["buffer", "buffer", "usize", "buffer", "buffer", "usize"], result: "i32" },
  // cuzk_status cuzk_witness_compute(const uint64_t* hashes, size_t n_names, const uint8_t* values,
  //                                  size_t n_values, uint8_t* out, size_t out_cap, char* err, size_t err_cap);
  cuzk_witness_compute: { parameters: ["buffer", "usize", "buffer", "usize", "buffer", "usize", "buffer", "usize"], result: "i32", nonblocking: true },
} as const satisfies Record<string, SymbolDefinition>;

export type WitnessSymbolName = keyof typeof witnessSymbols;

/** The table as the adapters take it. */
export const witnessSymbolTable: Readonly<Record<string, SymbolDefinition>> = witnessSymbols;

/** CUZK_WITNESS_ABI_VERSION of the header these bindings follow. */
export const WITNESS_ABI_VERSION = 1;

/** Byte offsets of `cuzk_witness_info` (64 bytes). */
export const WITNESS_INFO_LAYOUT = {
  size: 64,
  struct_size: 0,
  curve: 4,
  n_vars: 8,
  n_signals: 16,
  n_input_values: 24,
  n_inputs: 28,
  prime: 32,
} as const;
