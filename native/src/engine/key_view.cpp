#include "engine/key_view.hpp"

#include "curve/curves.hpp"

namespace cuzk::engine {

namespace {

// Counting sort of one matrix's records by row: two passes over the key's coefficient section.
template <class Fr>
cuzk_status build_rows(const formats::ZkeyGroth16& z, uint32_t matrix, uint32_t n_rows, SparseRows<Fr>& out,
                       std::string& err) {
  out.row_start.assign((size_t)n_rows + 1, 0);
  for (uint32_t i = 0; i < z.n_coefs; i++) {
    formats::ZkeyCoef c = z.coef(i);
    if (c.matrix != matrix) continue;
    if (c.constraint >= n_rows) {
      err = "coefficient " + std::to_string(i) + " names row " + std::to_string(c.constraint) + " past the " +
            std::to_string(n_rows) + " rows of the key";
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

}  // namespace

template <class C>
cuzk_status KeyView<C>::build(const formats::ZkeyGroth16& z, ThreadPool& pool, std::string& err) {
  zkey = &z;
  n_vars = z.n_vars;
  n_public = z.n_public;
  n_constraints = z.n_constraints;
  domain_size = z.domain_size;
  log_domain = z.log_domain;
  uint32_t rows = n_constraints + n_public + 1;
  cuzk_status st = build_rows<Fr>(z, 0, rows, a, err);
  if (st != CUZK_OK) return st;
  return build_rows<Fr>(z, 1, rows, b, err);
}

template struct KeyView<curve::Bn254>;
template struct KeyView<curve::Bls12381>;

}  // namespace cuzk::engine
