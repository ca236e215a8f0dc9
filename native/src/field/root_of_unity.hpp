// The roots of unity every transform here uses, as ffjavascript and snarkjs choose them (their
// Fr.w[k]): the generated ROOT_OF_UNITY is a 2^s-th root (s = TWO_ADICITY), and the 2^k-th root is
// it squared s - k times. The NTT's twiddles and coset shift and the dev setup's Lagrange basis
// must all agree with the keys snarkjs lays out by them.
#pragma once

#include <cstdint>

namespace cuzk::field {

// w_k, for k <= TWO_ADICITY (Montgomery form, like every Fr value).
template <class Fr>
Fr root_of_unity(uint32_t k) {
  Fr w = Fr::from_raw(Fr::Params::ROOT_OF_UNITY);
  for (uint32_t i = k; i < (uint32_t)Fr::Params::TWO_ADICITY; i++) w = w.sqr();
  return w;
}

}  // namespace cuzk::field
