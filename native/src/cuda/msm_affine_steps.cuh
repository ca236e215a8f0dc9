// One level of the batch-affine bucket accumulation (msm_affine.cuh), written as plain per-thread
// steps so that the same code runs in the GPU kernels and, through field.cuh's host emulation, in
// the host test (native/tests/msm_affine_test.cpp) with no GPU.
//
// A level takes a list of (key, affine point) sorted by key and adds the pairs (2j, 2j+1) whose
// keys are equal (slot j): the output list, still sorted, holds each such sum in place of the two
// points and every other point as it was. The sums of all the slots a block takes share one field
// inversion (Montgomery's trick: a thread keeps the running product of its slots' denominators,
// the block inverts the product of its threads' products once), so an addition costs
// 5 products + 1 square + the share of the inversion, against 8 + 2 for the XYZZ mixed addition.
//
//   count      count[j] = the outputs of slot j (1 for a pair or a lone last point, 2 for two
//              keys, 0 past the list) -> an exclusive scan gives each slot's output position;
//   forward    per thread, over its slots: prefix[j] = product of the denominators before j;
//              returns the product of all of them;
//   invert     per block: every thread's product replaced by its inverse (one inversion);
//   backward   per thread, its slots in reverse: each pair's inverse denominator from the
//              prefix, its sum, the outputs written at their positions.
#pragma once

#include <cstdint>

#include "cuda/field.cuh"
#include "curve/point.hpp"

#if defined(__CUDACC__)
#include "cuda/runtime.cuh"
#endif

namespace cuzk::cuda {

// 16-byte accesses on the device (runtime.cuh), plain ones in the host emulation.
template <class T>
CUZK_DHD T affine_ld(const T* p) {
#if defined(__CUDA_ARCH__)
  return load16(p);
#else
  return *p;
#endif
}
template <class T>
CUZK_DHD void affine_st(T* p, const T& v) {
#if defined(__CUDA_ARCH__)
  store16(p, v);
#else
  *p = v;
#endif
}

// The first level's list: the plan's sorted (key, index | sign << 31) pairs over a point table.
template <class A>
struct IndexedPoints {
  const uint32_t* keys;
  const uint32_t* vals;
  const A* points;
  CUZK_DHD uint32_t key(uint32_t i) const { return keys[i]; }
  CUZK_DHD typename A::Field x(uint32_t i) const { return affine_ld(&points[vals[i] & 0x7fffffffu].x); }
  CUZK_DHD A point(uint32_t i) const {
    const uint32_t v = vals[i];
    A p = affine_ld(points + (v & 0x7fffffffu));
    return (v >> 31) ? -p : p;
  }
};

// Every later level's list: the points themselves (what a level writes). A write at or past
// `cap` is dropped: the level's end sees the overflow and the MSM is redone without levels.
template <class A>
struct PointList {
  uint32_t* keys;
  A* points;
  uint32_t cap;
  CUZK_DHD uint32_t key(uint32_t i) const { return keys[i]; }
  CUZK_DHD typename A::Field x(uint32_t i) const { return affine_ld(&points[i].x); }
  CUZK_DHD A point(uint32_t i) const { return affine_ld(points + i); }
  CUZK_DHD void put(uint32_t i, uint32_t key, const A& p) const {
    if (i >= cap) return;
    keys[i] = key;
    affine_st(points + i, p);
  }
};

// What a pair of equal keys needs: a sum through the batch's inversion (kAdd: d = x_q - x_p;
// kDouble: d = 2 y_p), or none (one side at infinity, or p = -q: the sum is known).
enum AffinePairKind : int { kAffineAdd, kAffineDouble, kAffineTakeP, kAffineTakeQ, kAffineInfinity };

template <class A>
CUZK_DHD int affine_pair_kind(const A& p, const A& q, typename A::Field& d) {
  using F = typename A::Field;
  d = F::one();
  if (q.is_infinity()) return kAffineTakeP;
  if (p.is_infinity()) return kAffineTakeQ;
  if (!(p.x == q.x)) {
    d = q.x - p.x;
    return kAffineAdd;
  }
  if (!(p.y == q.y)) return kAffineInfinity;  // q = -p
  d = p.y.dbl();
  if (d.is_zero()) {  // y = 0: a point of order 2 (none in the prime-order groups), 2p = infinity
    d = F::one();
    return kAffineInfinity;
  }
  return kAffineDouble;
}

// A list of n points has ceil(n/2) slots: slot j holds points 2j and 2j + 1 (thread t of a level
// takes slots [t*per, t*per + per)).
CUZK_DHD uint32_t affine_slots(uint32_t n) { return (n + 1) / 2; }

template <class Src>
CUZK_DHD uint32_t affine_count(const Src& src, uint32_t n, uint32_t j) {
  const uint32_t i = 2 * j;
  if (i >= n) return 0;
  if (i + 1 == n) return 1;
  return src.key(i) == src.key(i + 1) ? 1 : 2;
}

// The forward step over slots [j0, j1): prefix[j] (for the pairs that need an inversion) is the
// product of the denominators of the earlier such pairs; returns the product of all of them. The
// common case reads only the two x coordinates.
template <class A, class Src>
CUZK_DHD typename A::Field affine_forward(const Src& src, uint32_t n, uint32_t j0, uint32_t j1,
                                          typename A::Field* prefix) {
  using F = typename A::Field;
  F c = F::one();
  for (uint32_t j = j0; j < j1; j++) {
    const uint32_t i = 2 * j;
    if (i + 1 >= n) break;
    if (src.key(i) != src.key(i + 1)) continue;
    const F xp = src.x(i), xq = src.x(i + 1);
    F d;
    if (xp.is_zero() || xq.is_zero() || xp == xq) {
      const int kind = affine_pair_kind(src.point(i), src.point(i + 1), d);
      if (kind != kAffineAdd && kind != kAffineDouble) continue;
    } else {
      d = xq - xp;
    }
    affine_st(prefix + j, c);
    c = c * d;
  }
  return c;
}

// The backward step: `inv` is the inverse of what affine_forward returned for the same slots.
template <class A, class Src>
CUZK_DHD void affine_backward(const Src& src, uint32_t n, uint32_t j0, uint32_t j1, const typename A::Field* prefix,
                              typename A::Field inv, const uint32_t* pos, const PointList<A>& out) {
  using F = typename A::Field;
  for (uint32_t j = j1; j-- > j0;) {
    const uint32_t i = 2 * j;
    if (i >= n) continue;
    const uint32_t at = pos[j], key = src.key(i);
    const A p = src.point(i);
    if (i + 1 == n) {
      out.put(at, key, p);
      continue;
    }
    const uint32_t key_q = src.key(i + 1);
    const A q = src.point(i + 1);
    if (key != key_q) {
      out.put(at, key, p);
      out.put(at + 1, key_q, q);
      continue;
    }
    F d;
    const int kind = affine_pair_kind(p, q, d);
    if (kind == kAffineTakeP) { out.put(at, key, p); continue; }
    if (kind == kAffineTakeQ) { out.put(at, key, q); continue; }
    if (kind == kAffineInfinity) { out.put(at, key, A::infinity()); continue; }
    const F d_inv = inv * affine_ld(prefix + j);
    inv = inv * d;
    F num;
    if (kind == kAffineAdd) {
      num = q.y - p.y;
    } else {
      const F xx = p.x.sqr();
      num = xx.dbl() + xx;  // 3x^2 (a = 0)
    }
    const F lambda = num * d_inv;
    const F x3 = lambda.sqr() - p.x - q.x;
    out.put(at, key, A{x3, lambda * (p.x - x3) - p.y});
  }
}

// t[0..count) <- their inverses, with one inversion (every t[i] nonzero: products of nonzero
// denominators, or one). One thread of the block runs it; `scratch` holds count elements.
template <class F>
CUZK_DHD void affine_invert_all(F* t, F* scratch, uint32_t count) {
  F acc = F::one();
  for (uint32_t i = 0; i < count; i++) {
    scratch[i] = acc;  // product of t[0..i)
    acc = acc * t[i];
  }
  F inv = acc.inverse();
  for (uint32_t i = count; i-- > 0;) {
    const F ti = t[i];
    t[i] = inv * scratch[i];
    inv = inv * ti;
  }
}

}  // namespace cuzk::cuda
