#include "prover/key_check.hpp"

#include <atomic>

#include "curve/ops.hpp"

namespace cuzk::prover {

namespace {

// Index of the first point of a section that is off the curve or has a coordinate >= q, or ~0.
template <class C, class F>
uint64_t first_bad_point(const uint8_t* points, size_t n, size_t stride, ThreadPool& pool) {
  std::atomic<uint64_t> first{~0ull};
  pool.parallel_range(n, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi && i < first.load(std::memory_order_relaxed); i++) {
      auto p = curve::load_key_point<F>(points + i * stride);
      bool ok = p.x.is_canonical() && p.y.is_canonical() && curve::is_on_curve<C, F>(p);
      if (!ok) {
        uint64_t cur = first.load();
        while (i < cur && !first.compare_exchange_weak(cur, i)) {
        }
        break;
      }
    }
  }, 2048);
  return first.load();
}

template <class C>
cuzk_status check_all(const formats::ZkeyGroth16& z, ThreadPool& pool, std::string& err) {
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  struct Section {
    const char* name;
    const uint8_t* points;
    size_t n;
    bool g2;
  };
  const Section sections[] = {
      {"alpha1", z.alpha1, 1, false},     {"beta1", z.beta1, 1, false},    {"beta2", z.beta2, 1, true},
      {"gamma2", z.gamma2, 1, true},      {"delta1", z.delta1, 1, false},  {"delta2", z.delta2, 1, true},
      {"IC (section 3)", z.ic, (size_t)z.n_public + 1, false},
      {"A (section 5)", z.points_a, z.n_vars, false},
      {"B1 (section 6)", z.points_b1, z.n_vars, false},
      {"B2 (section 7)", z.points_b2, z.n_vars, true},
      {"C (section 8)", z.points_c, z.n_private(), false},
      {"H (section 9)", z.points_h, z.domain_size, false},
  };
  for (const Section& s : sections) {
    uint64_t bad = s.g2 ? first_bad_point<C, Fq2>(s.points, s.n, C::G2_BYTES, pool)
                        : first_bad_point<C, Fq>(s.points, s.n, C::G1_BYTES, pool);
    if (bad != ~0ull) {
      err = std::string("point ") + std::to_string(bad) + " of " + s.name +
            " is not on the curve (or has a coordinate >= q): the key is corrupted";
      return CUZK_ERR_FORMAT;
    }
  }
  return CUZK_OK;
}

}  // namespace

cuzk_status check_key_points(const formats::ZkeyGroth16& zkey, ThreadPool& pool, std::string& err) {
  if (zkey.curve == CUZK_CURVE_BN254) return check_all<curve::Bn254>(zkey, pool, err);
  return check_all<curve::Bls12381>(zkey, pool, err);
}

}  // namespace cuzk::prover
