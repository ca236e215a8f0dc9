// Groth16 verification on the CPU (BN254 and BLS12-381): the check a prover runs on its own output
// before handing it out, and the reference the tests hold snarkjs proofs to.
#pragma once

#include <cstddef>
#include <vector>

#include "curve/curves.hpp"

namespace cuzk::pairing {

// The verifying key, affine points in Montgomery form (as in a .zkey; snarkjs has gamma2 = G2
// generator, but nothing here assumes it). ic has n_public + 1 entries.
template <class C>
struct VerifyingKey {
  typename C::G1 alpha1;
  typename C::G2 beta2, gamma2, delta2;
  std::vector<typename C::G1> ic;
};

// r * P == O (points off the curve are not in it; infinity is).
template <class C> bool in_subgroup_g1(const typename C::G1& p);
template <class C> bool in_subgroup_g2(const typename C::G2& q);

// Groth16: e(A, B) == e(alpha, beta) e(vk_x, gamma) e(C, delta) with vk_x = ic_0 + sum ic_i x_i,
// checked as e(-A, B) e(alpha, beta) e(vk_x, gamma) e(C, delta) == 1 with one final
// exponentiation. public_inputs are Montgomery-form Fr values, n_public == ic.size() - 1.
// Returns false, never crashes, when A, B or C is off its curve or outside the order-r subgroup,
// when a key point is off its curve, or when the counts disagree. The key is otherwise trusted
// (its subgroup membership is not re-checked on every call).
template <class C>
bool verify_groth16(const VerifyingKey<C>& vk, const typename C::G1& a, const typename C::G2& b,
                    const typename C::G1& c, const typename C::Fr* public_inputs, size_t n_public);

}  // namespace cuzk::pairing
