#include "engine/key_view.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "curve/curves.hpp"

namespace cuzk::engine {

namespace {

constexpr uint64_t kNone = ~0ull;  // no such record

std::string past_rows(uint64_t i, uint32_t row, uint32_t n_rows) {
  return "coefficient " + std::to_string(i) + " names row " + std::to_string(row) + " past the " +
         std::to_string(n_rows) + " rows of the key";
}

// Counting sort of one matrix's records by row: two passes over the key's coefficient section.
template <class Fr>
cuzk_status build_rows_in_order(const formats::ZkeyGroth16& z, uint32_t matrix, uint32_t n_rows, SparseRows<Fr>& out,
                                std::string& err) {
  out.row_start.assign((size_t)n_rows + 1, 0);
  for (uint32_t i = 0; i < z.n_coefs; i++) {
    formats::ZkeyCoef c = z.coef(i);
    if (c.matrix != matrix) continue;
    if (c.constraint >= n_rows) {
      err = past_rows(i, c.constraint, n_rows);
      return CUZK_ERR_FORMAT;
    }
    out.row_start[(size_t)c.constraint + 1]++;
  }
  for (size_t r = 0; r < n_rows; r++) out.row_start[r + 1] += out.row_start[r];
  size_t nnz = out.row_start[n_rows];
  out.signal.resize(nnz);
  out.coef.resize(nnz);
  std::vector<uint64_t> fill(out.row_start.begin(), out.row_start.end() - 1);
  for (uint32_t i = 0; i < z.n_coefs; i++) {
    formats::ZkeyCoef c = z.coef(i);
    if (c.matrix != matrix) continue;
    uint64_t at = fill[c.constraint]++;
    out.signal[at] = c.signal;
    out.coef[at] = Fr::from_bytes_mont(c.value);  // v*R^2 as raw Montgomery limbs (see header)
  }
  return CUZK_OK;
}

// The same rows on the pool when the matrix's records come in row order, as snarkjs and our setup
// write them (then a record's place in the rows is its rank among the matrix's records, and the
// result is the counting sort's): one pass to count and check per chunk of records, one to place
// them. Records out of row order take the counting sort above.
template <class Fr>
cuzk_status build_rows(const formats::ZkeyGroth16& z, uint32_t matrix, uint32_t n_rows, SparseRows<Fr>& out,
                       ThreadPool& pool, std::string& err) {
  const uint64_t n = z.n_coefs;
  const size_t chunks = std::max<size_t>(1, std::min<uint64_t>((uint64_t)pool.size() * 8, n / 65536));
  struct Chunk {
    uint64_t count = 0, first_bad = kNone;
    uint32_t first_row = 0, last_row = 0;
    bool sorted = true;
  };
  std::vector<Chunk> info(chunks);
  auto bounds = [&](size_t t) { return std::pair<uint64_t, uint64_t>{n * t / chunks, n * (t + 1) / chunks}; };
  pool.parallel_for(chunks, [&](size_t t) {
    Chunk& k = info[t];
    const auto [lo, hi] = bounds(t);
    for (uint64_t i = lo; i < hi; i++) {
      formats::ZkeyCoef c = z.coef((uint32_t)i);
      if (c.matrix != matrix) continue;
      if (c.constraint >= n_rows) {
        k.first_bad = i;
        return;
      }
      if (k.count == 0) k.first_row = c.constraint;
      else if (c.constraint < k.last_row) k.sorted = false;
      k.last_row = c.constraint;
      k.count++;
    }
  });
  bool sorted = true;
  uint64_t nnz = 0, prev_last = 0;
  bool any = false;
  for (const Chunk& k : info) {
    if (k.first_bad != kNone) {
      formats::ZkeyCoef c = z.coef((uint32_t)k.first_bad);
      err = past_rows(k.first_bad, c.constraint, n_rows);
      return CUZK_ERR_FORMAT;
    }
    if (k.count == 0) continue;
    sorted = sorted && k.sorted && (!any || k.first_row >= prev_last);
    prev_last = k.last_row;
    any = true;
    nnz += k.count;
  }
  if (!sorted) return build_rows_in_order(z, matrix, n_rows, out, err);
  out.row_start.assign((size_t)n_rows + 1, 0);
  out.signal.resize(nnz);
  out.coef.resize(nnz);
  std::vector<uint64_t> offset(chunks, 0);
  for (size_t t = 1; t < chunks; t++) offset[t] = offset[t - 1] + info[t - 1].count;
  uint64_t* counts = out.row_start.data() + 1;
  pool.parallel_for(chunks, [&](size_t t) {
    const auto [lo, hi] = bounds(t);
    uint64_t at = offset[t];
    for (uint64_t i = lo; i < hi; i++) {
      formats::ZkeyCoef c = z.coef((uint32_t)i);
      if (c.matrix != matrix) continue;
      out.signal[at] = c.signal;
      out.coef[at] = Fr::from_bytes_mont(c.value);  // v*R^2 as raw Montgomery limbs (see header)
      at++;
      __atomic_fetch_add(&counts[c.constraint], 1, __ATOMIC_RELAXED);  // a row may span two chunks
    }
  });
  for (size_t r = 0; r < n_rows; r++) out.row_start[r + 1] += out.row_start[r];
  return CUZK_OK;
}

}  // namespace

namespace {

// A field element's limbs as a hash key.
template <class Fr>
struct LimbHash {
  size_t operator()(const Fr& x) const {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint64_t w : x.l) h = (h ^ w) * 0x100000001b3ull;
    return (size_t)(h ^ (h >> 29));
  }
};

}  // namespace

template <class Fr>
void CoefTable<Fr>::build(const SparseRows<Fr>& a, const SparseRows<Fr>& b, ThreadPool& pool) {
  *this = CoefTable{};
  using Map = std::unordered_map<Fr, uint32_t, LimbHash<Fr>>;
  const SparseRows<Fr>* mats[2] = {&a, &b};
  std::vector<uint16_t>* outs[2] = {&index_a, &index_b};
  // Each chunk numbers its own distinct values; the tables are merged, then the indices renumbered.
  constexpr size_t kChunk = 1u << 20;
  struct Part {
    int matrix;
    size_t lo, hi;
    std::vector<Fr> local;
    std::vector<uint32_t> local_index, global;
  };
  std::vector<Part> parts;
  for (int m = 0; m < 2; m++)
    for (size_t lo = 0; lo < mats[m]->coef.size(); lo += kChunk)
      parts.push_back(Part{m, lo, std::min(lo + kChunk, mats[m]->coef.size()), {}, {}, {}});
  std::atomic<bool> too_many{false};
  pool.parallel_for(parts.size(), [&](size_t t) {
    Part& part = parts[t];
    Map seen;
    const std::vector<Fr>& coef = mats[part.matrix]->coef;
    part.local_index.resize(part.hi - part.lo);
    for (size_t i = part.lo; i < part.hi && !too_many.load(std::memory_order_relaxed); i++) {
      auto [it, added] = seen.try_emplace(coef[i], (uint32_t)part.local.size());
      if (added) {
        part.local.push_back(coef[i]);
        if (part.local.size() > kMaxEntries) too_many = true;
      }
      part.local_index[i - part.lo] = it->second;
    }
  });
  if (too_many) return;
  Map global;
  for (Part& part : parts) {
    part.global.resize(part.local.size());
    for (size_t j = 0; j < part.local.size(); j++) {
      auto [it, added] = global.try_emplace(part.local[j], (uint32_t)values.size());
      if (added) values.push_back(part.local[j]);
      part.global[j] = it->second;
    }
    if (values.size() > kMaxEntries) {
      values.clear();
      return;
    }
  }
  index_a.resize(a.coef.size());
  index_b.resize(b.coef.size());
  pool.parallel_for(parts.size(), [&](size_t t) {
    const Part& part = parts[t];
    uint16_t* out = outs[part.matrix]->data();
    for (size_t i = part.lo; i < part.hi; i++) out[i] = (uint16_t)part.global[part.local_index[i - part.lo]];
  });
  fits = true;
}

template struct CoefTable<curve::Bn254::Fr>;
template struct CoefTable<curve::Bls12381::Fr>;

template <class C>
cuzk_status KeyView<C>::build(const formats::ZkeyGroth16& z, ThreadPool& pool, std::string& err) {
  zkey = &z;
  n_vars = z.n_vars;
  n_public = z.n_public;
  n_constraints = z.n_constraints;
  domain_size = z.domain_size;
  log_domain = z.log_domain;
  uint32_t rows = n_constraints + n_public + 1;
  cuzk_status st = build_rows<Fr>(z, 0, rows, a, pool, err);
  if (st != CUZK_OK) return st;
  return build_rows<Fr>(z, 1, rows, b, pool, err);
}

template struct KeyView<curve::Bn254>;
template struct KeyView<curve::Bls12381>;

}  // namespace cuzk::engine
