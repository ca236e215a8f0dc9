// Candidate forms of the MSM's bucket walk (cuda/msm/msm.cuh msm_accumulate), for gpu_bench's
// msm-acc section: each runs the library's walk (accumulate_chunk) over the same sorted pairs,
// writing the same buckets, carries and tails, with the running sum of a run kept differently.
// The section checks that every form writes exactly the bytes the library's kernel writes before
// it times any of them.
//
// Why these forms: the library's kernel is latency-bound (each multiply-add waits on the carry of
// the one before) at 192 registers, 8 warps an SM; capping its registers spills. A form that needs
// fewer live values can take more warps without spills:
//   Register  the library's walk, here only under launch bounds;
//   Lean      the mixed addition ordered so that ZZ and ZZZ are replaced as soon as their
//             products exist and X and Y are read last (fewer values live at once);
//   Shared    the running sum in shared memory, limb-major (conflict-free), each coordinate read
//             where the formula needs it and written back as soon as it is made;
//   Calls     the field products (and squares) as real calls (the G2 walk's form): the kernel's
//             code a fraction of the inlined one's, the caller's registers few.
//   Pairs     the mixed addition's independent products two (or three) to a call: one called
//             product is one carry chain after another, so a warp waits on each multiply-add's
//             latency; two chains side by side in one function give the scheduler a second
//             instruction to issue while the first waits (the G2 field's Karatsuba products
//             have three such chains already).
#pragma once

#include "cuda/msm/msm.cuh"

namespace cuzk::cuda::bench {

constexpr int kAccThreads = 128;  // the library's block size for the walk

// this + q for an XYZZ sum (X, Y, ZZ, ZZZ) read and written through `io` (a register set or shared
// memory), with every special case of Xyzz::add_affine, in an order that lets each product's inputs
// die as early as possible.
template <class F, class IO>
__device__ __forceinline__ void lean_add_affine(IO& io, const curve::Affine<F>& q) {
  using X = curve::Xyzz<F>;
  if (q.is_infinity()) return;
  const F ZZ = io.get(2);
  if (ZZ.is_zero()) { io.put_all(X::from_affine(q)); return; }
  const F P = q.x * ZZ - io.get(0);
  const F ZZZ = io.get(3);
  const F R = q.y * ZZZ - io.get(1);
  if (P.is_zero()) {
    io.put_all(R.is_zero() ? X::dbl_affine(q) : X::infinity());
    return;
  }
  const F PP = P.sqr();
  io.put(2, ZZ * PP);
  const F PPP = P * PP;
  io.put(3, ZZZ * PPP);
  const F Q = io.get(0) * PP;
  const F X3 = R.sqr() - PPP - Q.dbl();
  io.put(0, X3);
  const F YP = io.get(1) * PPP;
  io.put(1, R * (Q - X3) - YP);
}

// Products side by side in one call (see Pairs above): a.mul(b) is the field's inline product.
template <class F>
struct Products2 {
  F ab, cd;
};
template <class F>
struct Products3 {
  F ab, cd, ef;
};
template <class F>
__device__ __noinline__ Products2<F> mul2_call(F a, F b, F c, F d) {
  return {a.mul(b), c.mul(d)};
}
template <class F>
__device__ __noinline__ Products3<F> mul3_call(F a, F b, F c, F d, F e, F f) {
  return {a.mul(b), c.mul(d), e.mul(f)};
}

// Xyzz::add_affine with its products grouped by what they depend on: {U2, S2}, then
// {PPP, Q, ZZ3} and {ZZZ3, Y PPP, R (Q - X3)} as triples (kTriples) or pairs.
template <class F, bool kTriples, class IO>
__device__ __forceinline__ void grouped_add_affine(IO& io, const curve::Affine<F>& q) {
  using X = curve::Xyzz<F>;
  if (q.is_infinity()) return;
  const F ZZ = io.get(2);
  if (ZZ.is_zero()) { io.put_all(X::from_affine(q)); return; }
  const F ZZZ = io.get(3);
  const Products2<F> us = mul2_call(q.x, ZZ, q.y, ZZZ);
  const F P = us.ab - io.get(0);
  const F R = us.cd - io.get(1);
  if (P.is_zero()) {
    io.put_all(R.is_zero() ? X::dbl_affine(q) : X::infinity());
    return;
  }
  const F PP = P.sqr();
  F PPP, Q, ZZ3;
  if constexpr (kTriples) {
    const Products3<F> t = mul3_call(P, PP, io.get(0), PP, ZZ, PP);
    PPP = t.ab, Q = t.cd, ZZ3 = t.ef;
  } else {
    const Products2<F> t = mul2_call(P, PP, io.get(0), PP);
    PPP = t.ab, Q = t.cd;
  }
  const F X3 = R.sqr() - PPP - Q.dbl();
  F ZZZ3, YP, RQ;
  if constexpr (kTriples) {
    const Products3<F> t = mul3_call(ZZZ, PPP, io.get(1), PPP, R, Q - X3);
    ZZZ3 = t.ab, YP = t.cd, RQ = t.ef;
  } else {
    const Products2<F> z = mul2_call(ZZ, PP, ZZZ, PPP);
    const Products2<F> y = mul2_call(io.get(1), PPP, R, Q - X3);
    ZZ3 = z.ab, ZZZ3 = z.cd, YP = y.ab, RQ = y.cd;
  }
  io.put(0, X3);
  io.put(1, RQ - YP);
  io.put(2, ZZ3);
  io.put(3, ZZZ3);
}

// The running sum in registers.
template <class X>
struct RegisterIO {
  using F = typename X::Field;
  X acc;
  __device__ explicit RegisterIO(uint32_t*) {}
  __device__ F get(int k) const { return k == 0 ? acc.X : k == 1 ? acc.Y : k == 2 ? acc.ZZ : acc.ZZZ; }
  __device__ void put(int k, const F& v) {
    if (k == 0) acc.X = v;
    else if (k == 1) acc.Y = v;
    else if (k == 2) acc.ZZ = v;
    else acc.ZZZ = v;
  }
  __device__ void put_all(const X& v) { acc = v; }
  __device__ X sum() const { return acc; }
  static constexpr size_t kSharedBytes = 0;
};

// The running sum in shared memory: word i of coordinate k of thread t at [(k*N + i) * 128 + t]
// (N: a coordinate's 32-bit words; Fp or Fp2).
template <class X>
struct SharedIO {
  using F = typename X::Field;
  static constexpr int N = (int)(sizeof(F) / 4);
  static constexpr size_t kSharedBytes = (size_t)4 * N * 4 * kAccThreads;
  uint32_t* w;
  __device__ explicit SharedIO(uint32_t* smem) : w(smem + threadIdx.x) {}
  __device__ F get(int k) const {
    F r;
    uint32_t* rw = reinterpret_cast<uint32_t*>(&r);
#pragma unroll
    for (int i = 0; i < N; i++) rw[i] = w[(k * N + i) * kAccThreads];
    return r;
  }
  __device__ void put(int k, const F& v) {
    const uint32_t* vw = reinterpret_cast<const uint32_t*>(&v);
#pragma unroll
    for (int i = 0; i < N; i++) w[(k * N + i) * kAccThreads] = vw[i];
  }
  __device__ void put_all(const X& v) { put(0, v.X), put(1, v.Y), put(2, v.ZZ), put(3, v.ZZZ); }
  __device__ X sum() const { return {get(0), get(1), get(2), get(3)}; }
};

// How a walk adds: the library's formula (Xyzz::add_affine on a register sum), the lean order, or
// the products grouped in pairs or triples; the running-sum form accumulate_chunk takes (msm.cuh's
// RegisterSum is the library's).
enum WalkOrder : int { kLibraryOrder = 0, kLeanOrder = 1, kPairedProducts = 2, kTripledProducts = 3 };
template <class X, WalkOrder kOrder, template <class> class IO>
struct Walk {
  using F = typename X::Field;
  static constexpr size_t kSharedBytes = IO<X>::kSharedBytes;
  IO<X> io;
  __device__ explicit Walk(uint32_t* smem) : io(smem) {}
  __device__ void step(bool open, const curve::Affine<F>& p) {
    if (!open) io.put_all(X::from_affine(p));
    else if constexpr (kOrder == kLeanOrder) lean_add_affine<F>(io, p);
    else if constexpr (kOrder == kPairedProducts || kOrder == kTripledProducts)
      grouped_add_affine<F, kOrder == kTripledProducts>(io, p);
    else io.put_all(io.sum().add_affine(p));
  }
  __device__ X sum() const { return io.sum(); }
};

// The library's walk (accumulate_chunk: same chunks, same outputs) with the running sum kept by W,
// under launch bounds. A and X may be the outlined-product twins of the library's types (the same
// bytes).
template <class A, class X, class W, int kMinBlocks>
__global__ void __launch_bounds__(kAccThreads, kMinBlocks)
    accumulate_variant(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ vals, uint32_t total,
                       uint32_t sentinel, uint32_t K, const A* __restrict__ points, X* __restrict__ buckets,
                       X* __restrict__ carry, X* __restrict__ tails, uint32_t* __restrict__ tail_key) {
  extern __shared__ __align__(16) uint32_t acc_smem[];
  W walk(acc_smem);
  accumulate_chunk<A, X, false>(blockIdx.x * blockDim.x + threadIdx.x, keys, vals, total, sentinel, K, points, buckets,
                                carry, tails, tail_key, walk);
}

}  // namespace cuzk::cuda::bench
