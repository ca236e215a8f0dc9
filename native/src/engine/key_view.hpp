// A proving key as the prover engines see it: the .zkey's sections used in place (points in key
// encoding, pointers into the key's bytes), plus the A and B coefficients regrouped by row (CSR)
// once per key so that a = A.w and b = B.w are computed row-parallel without write conflicts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuzk.h"
#include "formats/zkey.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::engine {

// One sparse matrix (A or B) in compressed-row form. Coefficients stay in the key's encoding
// (v * R^2 mod r), so a Montgomery product with a standard-form witness value gives v*w in
// Montgomery form directly.
template <class Fr>
struct SparseRows {
  std::vector<uint64_t> row_start;  // n_rows + 1 offsets into signal/coef
  std::vector<uint32_t> signal;
  std::vector<Fr> coef;
  size_t rows() const { return row_start.empty() ? 0 : row_start.size() - 1; }
};

// The A and B coefficients as a table of their distinct values and a 16-bit index per coefficient
// (in each matrix's row order): circuits built from bit gadgets use a handful of values (1, -1,
// powers of two), so an engine can hold 2 bytes a coefficient instead of 32. `fits` is false when
// there are more than kMaxEntries distinct values (the engine then holds the coefficients).
template <class Fr>
struct CoefTable {
  static constexpr size_t kMaxEntries = 1u << 16;
  bool fits = false;
  std::vector<Fr> values;
  std::vector<uint16_t> index_a, index_b;
  // Builds it on the pool (per chunk of coefficients, then merged); gives up at kMaxEntries.
  void build(const SparseRows<Fr>& a, const SparseRows<Fr>& b, ThreadPool& pool);
  void release() { *this = CoefTable{}; }
};

template <class C>
struct KeyView {
  using Fr = typename C::Fr;
  const formats::ZkeyGroth16* zkey = nullptr;
  uint32_t n_vars = 0, n_public = 0, n_constraints = 0, domain_size = 0, log_domain = 0;
  // rows = n_constraints + n_public + 1 (the input rows snarkjs appends to A)
  SparseRows<Fr> a, b;

  // Builds the view; fails only on an internal inconsistency the format checks did not catch.
  cuzk_status build(const formats::ZkeyGroth16& z, ThreadPool& pool, std::string& err);
  // Frees the rows (an engine that holds its own copy): the counts stay.
  void release_rows() {
    a = SparseRows<Fr>{};
    b = SparseRows<Fr>{};
  }
};

}  // namespace cuzk::engine
