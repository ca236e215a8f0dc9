/* The C ABI of a per-circuit witness library: circom's generated C++ for one circuit, built with
 * cuzk's field code by `cuzk witness compile` (src/witness/compile.ts) into one shared library
 * (the circuit's .dat tables are embedded). Loaded by src/witness/library.ts through the same FFI
 * layers as libcuzk.so. Status codes are cuzk.h's; messages go into the caller's err buffer.
 * Every function may be called from any thread; computations run concurrently. */
#ifndef CUZK_WITNESS_H
#define CUZK_WITNESS_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on every incompatible change of this header. */
#define CUZK_WITNESS_ABI_VERSION 1

CUZK_API uint32_t cuzk_witness_abi_version(void);

/* What the circuit is (64 bytes, fixed layout). */
typedef struct cuzk_witness_info {
  uint32_t struct_size;   /* in: sizeof(cuzk_witness_info) (64) */
  uint32_t curve;         /* CUZK_CURVE_BN254 or CUZK_CURVE_BLS12_381 */
  uint64_t n_vars;        /* witness length, w[0] = 1 included: the key's n_vars */
  uint64_t n_signals;     /* all signals of the circuit (>= n_vars) */
  uint32_t n_input_values;/* values of the main component's inputs, all names together */
  uint32_t n_inputs;      /* input names (entries of cuzk_witness_inputs) */
  uint8_t prime[32];      /* r, little-endian */
} cuzk_witness_info;

/* Fills *out. CUZK_ERR_INVALID_ARGUMENT: out NULL or struct_size < 64; CUZK_ERR_FORMAT: the
 * embedded circuit tables are malformed (the message says which). */
CUZK_API cuzk_status cuzk_witness_info_get(cuzk_witness_info* out, char* err, size_t err_cap);

/* The main inputs: for each, fnv1a-64 of its name (as circom hashes it) and its number of values,
 * in the circuit's order. cap < n_inputs is CUZK_ERR_SHORT_BUFFER (*out_count says how many). */
CUZK_API cuzk_status cuzk_witness_inputs(uint64_t* hashes, uint64_t* sizes, size_t cap, size_t* out_count,
                                         char* err, size_t err_cap);

/* Computes the witness of one input assignment and writes its n_vars values (32 bytes each,
 * little-endian, standard form, w[0] = 1) to out. The inputs: n_names name hashes, each taking
 * as many consecutive 32-byte values (little-endian, standard form, each < r) of `values` as the
 * circuit gives it; n_values in all, which must cover every input value exactly once.
 * Returns CUZK_OK; CUZK_ERR_INVALID_ARGUMENT: a NULL pointer, an unknown or repeated name, value
 * counts that do not add up, a value not below r; CUZK_ERR_SHORT_BUFFER: out_cap < n_vars * 32;
 * CUZK_ERR_UNSATISFIED: an assert or constraint of the circuit failed (the message is circom's:
 * template, line, component path); CUZK_ERR_OUT_OF_MEMORY; CUZK_ERR_FORMAT as info_get. On failure
 * out is zeroed. */
CUZK_API cuzk_status cuzk_witness_compute(const uint64_t* hashes, size_t n_names, const uint8_t* values,
                                          size_t n_values, uint8_t* out, size_t out_cap, char* err, size_t err_cap);

#ifdef __cplusplus
}
#endif

#endif /* CUZK_WITNESS_H */
