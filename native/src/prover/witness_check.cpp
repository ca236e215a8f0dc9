#include "prover/witness_check.hpp"

#include <algorithm>
#include <atomic>

#include "formats/primes.hpp"
#include "formats/wtns.hpp"

namespace cuzk::prover {

namespace {

const char* curve_name(cuzk_curve c) { return c == CUZK_CURVE_BN254 ? "bn254" : "bls12_381"; }

}  // namespace

size_t first_value_not_below_r(const formats::ZkeyGroth16& key, const uint8_t* values, size_t n, ThreadPool* pool) {
  auto first_in = [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++)
      if (!formats::less_than_le(values + i * 32, key.r, 32)) return i;
    return hi;
  };
  constexpr size_t kChunk = 1 << 16;  // values per task: ~2 MiB, far above the pool's hand-off cost
  if (!pool || pool->size() == 1 || n <= kChunk) return first_in(0, n);
  // Chunks in parallel; the smallest bad index wins, so the message names the same value as a
  // serial scan. A chunk past a bad one already found is skipped.
  std::atomic<size_t> first{n};
  pool->parallel_for((n + kChunk - 1) / kChunk, [&](size_t t) {
    const size_t lo = t * kChunk, hi = std::min(n, lo + kChunk);
    if (lo >= first.load(std::memory_order_relaxed)) return;
    const size_t bad = first_in(lo, hi);
    if (bad == hi) return;
    size_t seen = first.load(std::memory_order_relaxed);
    while (bad < seen && !first.compare_exchange_weak(seen, bad, std::memory_order_relaxed)) {
    }
  });
  return first.load();
}

bool is_constant_one(const uint8_t* value) {
  if (value[0] != 1) return false;
  for (int i = 1; i < 32; i++)
    if (value[i] != 0) return false;
  return true;
}

namespace {

// The .wtns header and its prime, or the raw length, against the key: where the values start.
// facts: the curve and count as soon as they are read, the offset once the layout passed.
cuzk_status check_layout(const formats::ZkeyGroth16& key, const uint8_t* witness, size_t witness_len,
                         uint32_t format, const uint8_t** values, std::string& err, WitnessFacts& facts) {
  const uint8_t* w = nullptr;
  if (format == CUZK_WITNESS_RAW) {
    facts.values = witness_len / 32;
    const size_t raw_bytes = (size_t)key.n_vars * 32;
    if (witness_len != raw_bytes) {
      err = "raw witness is " + std::to_string(facts.values) + " values (" + std::to_string(witness_len) +
            " bytes); the key has " + std::to_string(key.n_vars) + " variables";
      return CUZK_ERR_WITNESS_LENGTH;
    }
    w = witness;
  } else if (format == CUZK_WITNESS_WTNS) {
    formats::Wtns wtns;
    cuzk_status st = formats::parse_wtns_layout(witness, witness_len, wtns, err);
    if (st != CUZK_OK) { err = ".wtns: " + err; return st; }
    facts.curve = wtns.curve;
    facts.values = wtns.n_witness;
    if (wtns.curve != key.curve) {
      err = std::string("the witness is for ") + curve_name(wtns.curve) + " but the key is for " + curve_name(key.curve);
      return CUZK_ERR_CURVE_MISMATCH;
    }
    if (wtns.n_witness != key.n_vars) {
      err = "the witness has " + std::to_string(wtns.n_witness) + " values; the key has " + std::to_string(key.n_vars) +
            " variables";
      return CUZK_ERR_WITNESS_LENGTH;
    }
    w = wtns.values;
  } else {
    err = "unknown witness_format " + std::to_string(format);
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  facts.values_offset = (uint64_t)(w - witness);
  *values = w;
  return CUZK_OK;
}

cuzk_status check_constant_wire(const uint8_t* w, std::string& err) {
  if (is_constant_one(w)) return CUZK_OK;
  err = "witness w[0] must be 1 (the constant wire)";
  return CUZK_ERR_UNSATISFIED;
}

// Both checks: the layout, the scan of every value < r on `scan_pool` (NULL: not made), w[0] = 1.
cuzk_status check_in_order(const formats::ZkeyGroth16& key, const uint8_t* witness, size_t witness_len,
                           uint32_t format, ThreadPool* scan_pool, const uint8_t** values, std::string& err,
                           WitnessFacts* facts) {
  WitnessFacts found;
  const uint8_t* w = nullptr;
  cuzk_status st = check_layout(key, witness, witness_len, format, &w, err, found);
  if (st == CUZK_OK && scan_pool) {
    const size_t bad = first_value_not_below_r(key, w, key.n_vars, scan_pool);
    if (bad < key.n_vars) {
      found.first_bad_index = bad;
      err = "witness value " + std::to_string(bad) + " is not < r";
      st = CUZK_ERR_INVALID_ARGUMENT;
    }
  }
  if (st == CUZK_OK) st = check_constant_wire(w, err);
  if (st == CUZK_OK) *values = w;
  if (facts) *facts = found;
  return st;
}

}  // namespace

cuzk_status check_witness_shape(const formats::ZkeyGroth16& key, const uint8_t* witness, size_t witness_len,
                                uint32_t format, const uint8_t** values, std::string& err, WitnessFacts* facts) {
  return check_in_order(key, witness, witness_len, format, nullptr, values, err, facts);
}

cuzk_status check_witness(const formats::ZkeyGroth16& key, const uint8_t* witness, size_t witness_len,
                          uint32_t format, ThreadPool& pool, const uint8_t** values, std::string& err,
                          WitnessFacts* facts) {
  return check_in_order(key, witness, witness_len, format, &pool, values, err, facts);
}

}  // namespace cuzk::prover
