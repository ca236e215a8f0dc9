// Multi-scalar multiplication on the CPU: sum_i scalars[i] * points[i] over G1 or G2 of either
// curve, straight from key bytes (an mmap'd .zkey section) and witness bytes. The implementation
// lives in msm_impl.hpp and is compiled once a group, in msm_<curve>_g<group>.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu/simd.hpp"  // the bucket additions run 8 at a time on AVX-512 IFMA when active
#include "curve/curves.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::cpu {

// points: n affine points in key encoding (x then y, F::BYTES each, Montgomery LE; all-zero bytes
// = infinity), any alignment. scalars: n * 32 bytes, standard-form LE, each < r (not checked).
// F = C::Fq for G1, C::Fq2 for G2. n = 0 gives infinity. n < 2^31.
// Safe to call from several threads at once. Working memory (on the IFMA path about n x 64-192 B
// of converted points on the calling thread, and each pool thread's bucket trees) is kept per
// thread for the next call rather than freed: re-touching fresh pages cost more than the MSM.
// Not constant time (the scalars steer memory accesses), like snarkjs and rapidsnark.
template <class C, class F>
curve::Xyzz<F> msm(ThreadPool& pool, const uint8_t* points, const uint8_t* scalars, size_t n);

extern template curve::Xyzz<curve::Bn254::Fq> msm<curve::Bn254, curve::Bn254::Fq>(ThreadPool&, const uint8_t*, const uint8_t*, size_t);
extern template curve::Xyzz<curve::Bn254::Fq2> msm<curve::Bn254, curve::Bn254::Fq2>(ThreadPool&, const uint8_t*, const uint8_t*, size_t);
extern template curve::Xyzz<curve::Bls12381::Fq> msm<curve::Bls12381, curve::Bls12381::Fq>(ThreadPool&, const uint8_t*, const uint8_t*, size_t);
extern template curve::Xyzz<curve::Bls12381::Fq2> msm<curve::Bls12381, curve::Bls12381::Fq2>(ThreadPool&, const uint8_t*, const uint8_t*, size_t);

}  // namespace cuzk::cpu
