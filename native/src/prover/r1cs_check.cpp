#include "prover/r1cs_check.hpp"

#include <algorithm>
#include <atomic>

#include "curve/curves.hpp"

namespace cuzk::prover {

namespace {

// sum of coefficient * w over one linear combination, in standard form: from_bytes_std gives v*R,
// and a Montgomery product with the raw witness value w gives v*w.
template <class Fr>
Fr dot(const formats::LinearCombination& lc, const uint8_t* w) {
  Fr acc = Fr::zero();
  for (formats::R1csTerm t : lc) acc += Fr::from_bytes_std(t.value) * Fr::from_bytes_mont(w + (size_t)t.wire * 32);
  return acc;
}

}  // namespace

template <class C>
cuzk_status check_r1cs_witness(const formats::R1cs& r1cs, const uint8_t* w, ThreadPool& pool, std::string& err) {
  using Fr = typename C::Fr;
  Fr raw_one = Fr::zero();
  raw_one.l[0] = 1;
  std::atomic<uint64_t> first_bad{~0ull};
  pool.parallel_range(r1cs.n_constraints, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi && i < first_bad.load(std::memory_order_relaxed); i++) {
      Fr a = dot<Fr>(r1cs.lc((uint32_t)i, formats::kMatrixA), w);
      Fr b = dot<Fr>(r1cs.lc((uint32_t)i, formats::kMatrixB), w);
      Fr c = dot<Fr>(r1cs.lc((uint32_t)i, formats::kMatrixC), w);
      // a, b, c are standard-form values: mont(a, b) = ab/R and mont(c, 1) = c/R.
      if (a * b != c * raw_one) {
        uint64_t cur = first_bad.load();
        while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
        }
        break;
      }
    }
  }, 256);
  uint64_t bad = first_bad.load();
  if (bad == ~0ull) return CUZK_OK;
  err = "witness does not satisfy constraint " + std::to_string(bad) + " of " + std::to_string(r1cs.n_constraints) +
        " ((A.w)*(B.w) != C.w)";
  return CUZK_ERR_UNSATISFIED;
}

template cuzk_status check_r1cs_witness<curve::Bn254>(const formats::R1cs&, const uint8_t*, ThreadPool&, std::string&);
template cuzk_status check_r1cs_witness<curve::Bls12381>(const formats::R1cs&, const uint8_t*, ThreadPool&,
                                                          std::string&);

}  // namespace cuzk::prover
