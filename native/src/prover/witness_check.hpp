// The checks of one witness against a key, made before any proving work: the one implementation
// behind cuzk_key_check_witness and the witness collection of cuzk_prove.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuzk.h"
#include "formats/zkey.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::prover {

// What a check found about a witness, as far as it got: the facts its messages word, for callers
// that word their own refusals (cuzk_witness_check). Left at these values when not reached.
struct WitnessFacts {
  uint32_t curve = 0;                      // cuzk_curve of the .wtns prime; 0: raw, or not known
  uint64_t values = 0;                     // the .wtns count, or witness_len / 32 for raw
  uint64_t first_bad_index = UINT64_MAX;   // first value not < r; UINT64_MAX: none, or not scanned
  uint64_t values_offset = 0;              // where w[0] starts, once the layout passed
};

// witness: witness_len bytes in `format` (CUZK_WITNESS_WTNS or CUZK_WITNESS_RAW). Checks the .wtns
// header and its prime against the key's curve, the value count against n_vars, every value < r
// and w[0] = 1. On CUZK_OK, *values points at the n_vars raw 32-byte values inside `witness`.
// Messages name no proof index; the caller prefixes it. The values are scanned on `pool`.
// facts (may be NULL): what was found, on success and on refusal.
cuzk_status check_witness(const formats::ZkeyGroth16& key, const uint8_t* witness, size_t witness_len,
                          uint32_t format, ThreadPool& pool, const uint8_t** values, std::string& err,
                          WitnessFacts* facts = nullptr);

// The O(1) part of check_witness: everything but the scan of every value < r (header, prime,
// count, w[0] = 1), for callers that check a witness before queueing it and leave the O(n_vars)
// scan to cuzk_prove (which runs it on its pool, beside the previous proof of a batch).
cuzk_status check_witness_shape(const formats::ZkeyGroth16& key, const uint8_t* witness, size_t witness_len,
                                uint32_t format, const uint8_t** values, std::string& err,
                                WitnessFacts* facts = nullptr);

// Index of the first of n values (32 bytes each, standard LE) that is not below the key's r, or n.
// pool: scans chunks in parallel (the result is the same as a serial scan); NULL scans serially.
size_t first_value_not_below_r(const formats::ZkeyGroth16& key, const uint8_t* values, size_t n,
                               ThreadPool* pool = nullptr);

// w[0] = 1 (standard LE): the constant wire every circuit relies on.
bool is_constant_one(const uint8_t* value);

}  // namespace cuzk::prover
