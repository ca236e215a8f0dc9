// Number-theoretic transforms over Fr on the CPU: the H-polynomial step of a Groth16 proof
// (3 inverse + 3 coset transforms of the domain size). Implementation in ntt.cpp, compiled for
// both scalar fields.
//
// Convention (it must match snarkjs, whose keys lay out H points by it): with s = Fr two-adicity
// and ROOT the generated Fr ROOT_OF_UNITY (= ffjavascript's Fr.w[s]), the n = 2^k-th root is
// w_k = ROOT^(2^(s-k)) and
//   Forward:      y_i = sum_j a_j w_k^(ij)
//   Inverse:      a_j = n^-1 sum_i y_i w_k^(-ij)
//   CosetForward: y_i = sum_j a_j (g w_k^i)^j, g = w_(k+1)  (snarkjs: scale a_j by Fr.w[k+1]^j, FFT)
//   CosetInverse: its inverse.
#pragma once

#include <cstdint>

#include "field/fp.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::cpu {

enum class NttKind { Forward, Inverse, CosetForward, CosetInverse };

// In place on n = 2^log_n Montgomery-form elements, natural order in and out. log_n may go up to
// the two-adicity (28 on BN254, 32 on BLS12-381), one less for the coset kinds; beyond that it
// throws std::invalid_argument. Twiddles are computed once per field and kept (n elements for
// the largest size used so far).
template <class Fr>
void ntt(ThreadPool& pool, Fr* data, uint32_t log_n, NttKind kind);

extern template void ntt<field::Bn254Fr>(ThreadPool&, field::Bn254Fr*, uint32_t, NttKind);
extern template void ntt<field::Bls12381Fr>(ThreadPool&, field::Bls12381Fr*, uint32_t, NttKind);

}  // namespace cuzk::cpu
