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
cuzk_status check_range(const char* name, const uint8_t* points, size_t n, bool g2, uint64_t first, ThreadPool& pool,
                        std::string& err) {
  uint64_t bad = g2 ? first_bad_point<C, typename C::Fq2>(points, n, C::G2_BYTES, pool)
                    : first_bad_point<C, typename C::Fq>(points, n, C::G1_BYTES, pool);
  if (bad == ~0ull) return CUZK_OK;
  err = std::string("point ") + std::to_string(first + bad) + " of " + name +
        " is not on the curve (or has a coordinate >= q): the key is corrupted";
  return CUZK_ERR_FORMAT;
}

template <class C>
cuzk_status check_all(const formats::ZkeyGroth16& z, ThreadPool& pool, std::string& err) {
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
    if (!s.points) continue;  // a section left in the file (on demand): checked by check_section_points
    cuzk_status st = check_range<C>(s.name, s.points, s.n, s.g2, 0, pool, err);
    if (st != CUZK_OK) return st;
  }
  return CUZK_OK;
}

}  // namespace

cuzk_status check_key_points(const formats::ZkeyGroth16& zkey, ThreadPool& pool, std::string& err) {
  if (zkey.curve == CUZK_CURVE_BN254) return check_all<curve::Bn254>(zkey, pool, err);
  return check_all<curve::Bls12381>(zkey, pool, err);
}

cuzk_status check_section_points(cuzk_curve curve, const char* name, const uint8_t* points, size_t n, bool g2,
                                 uint64_t first, ThreadPool& pool, std::string& err) {
  if (curve == CUZK_CURVE_BN254) return check_range<curve::Bn254>(name, points, n, g2, first, pool, err);
  return check_range<curve::Bls12381>(name, points, n, g2, first, pool, err);
}

}  // namespace cuzk::prover
