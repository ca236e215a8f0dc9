// Fp2 = Fp[u]/(u^2 + 1) computed by two lanes of a warp together: the even lane holds c0, the odd
// lane c1, and each makes its own component of every result. Each lane holds half the registers
// the one-thread Fp2 needs, so a kernel over it runs more warps an SM (the G2 bucket walk was
// bound by the latency of its carry chains at 8 warps and 255 registers).
//
// The interface is field/fp2.hpp's, so curve/point.hpp's formulas run on it unchanged. Both lanes
// of a pair must make the same calls in the same order (the formulas branch on is_zero, which both
// lanes see alike).
//
// Lanes: how a lane finds its parity and its partner's values. WarpPairLanes is the device's
// (shuffles within the pair); a test can run the two lanes as host threads.
#pragma once

#include "cuda/field/field.cuh"

namespace cuzk::cuda {

template <class F, class Lanes>
struct Fp2Pair {
  using Base = F;
  static constexpr size_t BYTES = 2 * F::BYTES;
  F v;  // this lane's component

  static CUZK_DHD Fp2Pair zero() { return {F::zero()}; }
  static CUZK_DHD Fp2Pair one() { return {Lanes::odd() ? F::zero() : F::one()}; }
  CUZK_DHD bool is_zero() const { return Lanes::both(v.is_zero()); }
  CUZK_DHD bool operator==(const Fp2Pair& o) const { return Lanes::both(v == o.v); }
  CUZK_DHD bool operator!=(const Fp2Pair& o) const { return !(*this == o); }

  CUZK_DHD Fp2Pair operator+(const Fp2Pair& o) const { return {v + o.v}; }
  CUZK_DHD Fp2Pair operator-(const Fp2Pair& o) const { return {v - o.v}; }
  CUZK_DHD Fp2Pair operator-() const { return {-v}; }
  CUZK_DHD Fp2Pair dbl() const { return {v.dbl()}; }
  CUZK_DHD Fp2Pair& operator+=(const Fp2Pair& o) { return *this = *this + o; }
  CUZK_DHD Fp2Pair& operator-=(const Fp2Pair& o) { return *this = *this - o; }
  CUZK_DHD Fp2Pair& operator*=(const Fp2Pair& o) { return *this = *this * o; }

  // c0 = a0 b0 - a1 b1 (even lane: a0 b0 + a1 (p - b1)), c1 = a1 b0 + a0 b1 (odd lane): one sum of
  // two products each, the same instructions on both lanes. On the device a call whose arguments
  // are this lane's two components (they fit the registers a call passes), exchanging inside.
  CUZK_DHD Fp2Pair operator*(const Fp2Pair& o) const {
#ifdef __CUDA_ARCH__
    return {mul_call(v, o.v)};
#else
    return {mul_inline(v, o.v)};
#endif
  }
  // (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: one product a lane.
  CUZK_DHD Fp2Pair sqr() const {
#ifdef __CUDA_ARCH__
    return {sqr_call(v)};
#else
    return {sqr_inline(v)};
#endif
  }
  static CUZK_DHD F mul_inline(const F& a, const F& b) {
    const F a_other = Lanes::other(a), b_other = Lanes::other(b);
    const bool odd = Lanes::odd();
    return F::dot2(a, odd ? b_other : b, a_other, odd ? b : -b_other);
  }
  static CUZK_DHD F sqr_inline(const F& a) {
    const F a_other = Lanes::other(a);
    const bool odd = Lanes::odd();
    return (odd ? a.dbl() : a + a_other).mul(odd ? a_other : a - a_other);
  }
#ifdef __CUDACC__
  static __device__ __noinline__ F mul_call(F a, F b) { return mul_inline(a, b); }
  static __device__ __noinline__ F sqr_call(F a) { return sqr_inline(a); }
#endif
};

// The two lanes 2j and 2j+1 of a warp (blocks of a multiple of 32 threads). Defined for the device
// compiler only; host code may name it.
struct WarpPairLanes;
#ifdef __CUDACC__
struct WarpPairLanes {
  static __device__ __forceinline__ bool odd() { return threadIdx.x & 1; }
  static __device__ __forceinline__ uint32_t mask() { return 3u << (threadIdx.x & 30); }
  template <class F>
  static __device__ __forceinline__ F other(const F& x) {
    F r;
#pragma unroll
    for (int i = 0; i < F::N; i++) r.l[i] = __shfl_xor_sync(mask(), x.l[i], 1);
    return r;
  }
  static __device__ __forceinline__ bool both(bool b) { return __shfl_xor_sync(mask(), (int)b, 1) && b; }
};
#endif

}  // namespace cuzk::cuda
