// A scalar's signed window digits, in plain C++ (__host__ __device__): msm_digits (msm.cuh) runs
// it per scalar on the GPU, the host tests (msm_reduce_test) run it to check the windows in groups.
#pragma once

#include <cstdint>

#include "util/hd.hpp"

namespace cuzk::cuda {

// The 32 bits of the 64-bit value hi:lo shifted right by `shift` (0..31).
CUZK_HD uint32_t shift_right_pair(uint32_t lo, uint32_t hi, int shift) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, shift);
#else
  return (uint32_t)((((uint64_t)hi << 32) | lo) >> (shift & 31));
#endif
}

// The bit length of a scalar below 2^32 (0 for 0, 1 for 1), -1 for a larger one (s: its eight
// little-endian 32-bit words, reduced). A scalar below 2^b has no nonzero digit beyond its first
// msm_windows(b, c) windows, the last of which takes the carry.
CUZK_HD int small_scalar_bits(const uint32_t* s) {
  if (s[1] | s[2] | s[3] | s[4] | s[5] | s[6] | s[7]) return -1;
  int b = 0;
  for (uint32_t v = s[0]; v; v >>= 1) b++;
  return b;
}

// The signed c-bit digits of one scalar (s: its bits as eight little-endian 32-bit words, then a
// ninth 0 for the top digit's carry), each in (-2^(c-1), 2^(c-1)]: a digit above half borrows from
// the next window. For each window w in [first, last), emit(w, local, copy, magnitude, negative),
// zero digits included: `local` is w's index within its copy of the points (per_copy windows a
// copy: the scalar's windows without copies), `copy` that copy. Windows below `first` only carry.
template <class Emit>
CUZK_HD void scalar_digits(const uint32_t (&s)[9], int c, int first, int last, int per_copy, Emit&& emit) {
  const uint32_t half = 1u << (c - 1), full = 1u << c, mask = full - 1;
  uint32_t carry = 0;
  for (int w = 0, local = 0, copy = 0; w < last; w++, local++) {
    if (local == per_copy) {  // the next copy: its windows from 0
      local = 0;
      copy++;
    }
    const int bit = w * c, limb = bit >> 5;
    uint32_t d = (shift_right_pair(s[limb], s[limb + 1], bit & 31) & mask) + carry;
    uint32_t neg = 0;
    if (d > half) {
      d = full - d;
      neg = 1;
      carry = 1;
    } else {
      carry = 0;
    }
    if (w >= first) emit(w, local, copy, d, neg);
  }
}

}  // namespace cuzk::cuda
