// Multi-scalar multiplication on the GPU (Pippenger's bucket method), G1 or G2 of either curve.
//
//   plan (scalars only, reusable for every point set that shares them):
//     classify  scalars equal to 0 are dropped, those equal to 1 listed apart (summed by a plain
//               batch addition: no buckets), the rest compacted: the small ones (below 2^32: a
//               witness's bytes and counters) first, then the large;
//     digits    each remaining scalar cut into signed c-bit digits (|d| <= 2^(c-1)), one
//               (bucket key, point index | sign) pair per window, a small scalar's only for the
//               windows its bits reach (msm_choose_windows: with no large scalar only those
//               windows are reduced, at a window chosen for them);
//     sort      one radix sort of all pairs by key = window * 2^(c-1) + |d| - 1.
//   With t precomputed copies of the points (msm/bases.cuh: copy j = 2^(j*c*V) P, V = the
//   windows per copy, ceil(W/t) of the scalar's W windows), window w's digit goes to copy w / V's
//   point in window w % V: the execute step sees an MSM of t*n points and V windows (the same
//   additions into buckets, V windows to reduce instead of W).
//   Without copies the windows may be taken in groups (window_groups): digits and sort of one
//   group's windows at a time, then its accumulate and reduce, then the next group's; the pairs
//   and buckets take a group's room (the scalars are read again per group).
//   execute (per point set):
//     accumulate  the sorted list cut into equal chunks, one thread each: every thread does the
//                 same number of mixed additions whatever the digit distribution (skewed real
//                 witnesses included); runs that cross a chunk edge are merged after;
//     reduce      per window, sum_b b * B_b: running sums over segments of L buckets, then a
//                 fold of the segment sums by bit (parallel trees), the last few dozen points
//                 combined on the host (where a sequential chain of doublings is cheapest).
#pragma once

#include <cub/device/device_partition.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/discard_iterator.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "cuda/curve/curves.cuh"
#include "cuda/msm/digit_steps.hpp"
#include "cuda/msm/msm_sizes.hpp"
#include "cuda/msm/reduce_steps.hpp"
#include "cuda/runtime/runtime.cuh"

namespace cuzk::cuda {

// ---------------------------------------------------------------------------------------------
// Scalars: 8 x 32-bit limbs, standard form, little-endian (the witness bytes as they are).
// ---------------------------------------------------------------------------------------------
template <class P>
__device__ __forceinline__ void load_scalar(const uint32_t* scalars, uint32_t i, uint32_t (&s)[8]) {
  const uint4* p = reinterpret_cast<const uint4*>(scalars) + 2 * (size_t)i;
  uint4 a = __ldg(p), b = __ldg(p + 1);
  s[0] = a.x; s[1] = a.y; s[2] = a.z; s[3] = a.w;
  s[4] = b.x; s[5] = b.y; s[6] = b.z; s[7] = b.w;
  // Any 256-bit value is accepted and reduced mod r (2^256 < 6r on both curves).
  constexpr auto r = split64(P::MODULUS);
#pragma unroll 1
  for (int it = 0; it < 6; it++) {
    uint32_t t[8];
    t[0] = ptx::sub_cc(s[0], r.v[0]);
#pragma unroll
    for (int k = 1; k < 8; k++) t[k] = ptx::subc_cc(s[k], r.v[k]);
    uint32_t borrow = ptx::subc(0, 0);
    if (borrow) break;
#pragma unroll
    for (int k = 0; k < 8; k++) s[k] = t[k];
  }
}

// The scalars equal to 1 (summed apart, without buckets).
template <class P>
struct OneScalar {
  const uint32_t* scalars;
  __device__ __forceinline__ bool operator()(uint32_t i) const {
    uint32_t s[8];
    load_scalar<P>(scalars, i, s);
    return small_scalar_bits(s) == 1;
  }
};

// A small scalar other than 0 and 1 (digit_steps.hpp); the longest one's bit length goes to *bits.
template <class P>
struct SmallScalar {
  const uint32_t* scalars;
  uint32_t* bits;
  __device__ __forceinline__ bool operator()(uint32_t i) const {
    uint32_t s[8];
    load_scalar<P>(scalars, i, s);
    const int b = small_scalar_bits(s);
    if (b < 2) return false;
    // Read first: the maximum is reached early, so few threads write.
    if ((uint32_t)b > *reinterpret_cast<volatile uint32_t*>(bits)) atomicMax(bits, (uint32_t)b);
    return true;
  }
};
template <class P>
struct LargeScalar {
  const uint32_t* scalars;
  __device__ __forceinline__ bool operator()(uint32_t i) const {
    uint32_t s[8];
    load_scalar<P>(scalars, i, s);
    return small_scalar_bits(s) < 0;
  }
};

// The pairs of windows [first, last) of the m scalars (idx: their indices, or all): per window and
// scalar one (bucket key, point index | sign) pair, the key of a zero digit the sentinel (sorted
// last). per_copy: the windows of one copy of the points (all of them without copies), whose
// points lie `stride` indices after the previous copy's.
template <class P>
__global__ void msm_digits(const uint32_t* __restrict__ scalars, const uint32_t* __restrict__ idx, uint32_t m, int c,
                           int first, int last, int per_copy, uint32_t stride, uint32_t sentinel,
                           uint32_t* __restrict__ keys, uint32_t* __restrict__ vals) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m) return;
  uint32_t i = idx ? idx[j] : j;
  uint32_t s[9];
  {
    uint32_t t[8];
    load_scalar<P>(scalars, i, t);
#pragma unroll
    for (int k = 0; k < 8; k++) s[k] = t[k];
    s[8] = 0;
  }
  scalar_digits(s, c, first, last, per_copy, [&](int w, int local, int copy, uint32_t d, uint32_t neg) {
    const size_t o = (size_t)(w - first) * m + j;
    keys[o] = d == 0 ? sentinel : ((uint32_t)(local - first) << (c - 1)) + d - 1;
    vals[o] = (i + (uint32_t)copy * stride) | (neg << 31);
  });
}

template <class A>
__device__ __forceinline__ A load_affine(const A* __restrict__ points, uint32_t i) {
  return load16(points + i);
}

// A bucket's sum written (or, for buckets kept across an MSM's chunks, added to what it holds:
// zeroed bytes are an empty bucket). One writer per bucket and call. A template parameter, so that
// the plain kernels carry no addition they do not make (their registers stay as they were).
template <bool kAdd, class X>
__device__ __forceinline__ void put_bucket(X* __restrict__ buckets, uint32_t key, const X& acc) {
  if constexpr (kAdd) buckets[key] = buckets[key].add(acc);
  else buckets[key] = acc;
}

// out[i] += in[i] for n buckets (zeroed bytes: empty buckets).
template <class X>
__global__ void msm_add_buckets(const X* __restrict__ in, size_t n, X* __restrict__ out) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = out[i].add(in[i]);
}

// How the bucket walk keeps a run's running sum: in registers, the formula's own order. The walk
// takes the form as a parameter so that other forms (bench/gpu/accumulate_variants.cuh) run the
// same loop; smem is the block's dynamic shared memory, for forms that keep the sum there.
template <class X>
struct RegisterSum {
  X acc = X::infinity();
  __device__ explicit RegisterSum(uint32_t* /*smem*/) {}
  template <class A>
  __device__ __forceinline__ void step(bool open, const A& p) { acc = open ? acc.add_affine(p) : X::from_affine(p); }
  __device__ __forceinline__ X sum() const { return acc; }
};

// Thread t's chunk of K sorted pairs. A run (a bucket's pairs) that ends inside the chunk and
// started inside it is complete: written to its bucket. A run that started in an earlier chunk
// goes to carry[t]; one that starts here and goes on goes to tails[t] with its key, and
// msm_merge_tails adds the carries of the chunks after it.
template <class A, class X, bool kAdd, class Sum>
__device__ __forceinline__ void accumulate_chunk(uint32_t t, const uint32_t* __restrict__ keys,
                                                 const uint32_t* __restrict__ vals, uint32_t total, uint32_t sentinel,
                                                 uint32_t K, const A* __restrict__ points, X* __restrict__ buckets,
                                                 X* __restrict__ carry, X* __restrict__ tails,
                                                 uint32_t* __restrict__ tail_key, Sum& run) {
  size_t begin = (size_t)t * K;
  if (begin >= total) return;
  size_t end = begin + K < total ? begin + K : total;
  tail_key[t] = sentinel;
  uint32_t key = keys[begin];
  if (key == sentinel) return;
  bool head_continues = begin > 0 && keys[begin - 1] == key;
  bool open = false;
  for (size_t e = begin; e < end; e++) {
    uint32_t v = vals[e];
    A p = load_affine(points, v & 0x7fffffffu);
    if (v >> 31) p = -p;
    run.step(open, p);
    open = true;
    uint32_t next = e + 1 < total ? keys[e + 1] : sentinel;
    if (next != key) {
      if (head_continues) carry[t] = run.sum();
      else put_bucket<kAdd>(buckets, key, run.sum());
      head_continues = false;
      open = false;
      if (next == sentinel) return;
      key = next;
    }
  }
  if (open) {  // the run goes on past the chunk
    if (head_continues) carry[t] = run.sum();
    else { tails[t] = run.sum(); tail_key[t] = key; }
  }
}

// The bucket walk: one thread per chunk (accumulate_chunk), the running sum in registers.
template <class A, class X, bool kAdd>
__global__ void msm_accumulate(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ vals, uint32_t total,
                               uint32_t sentinel, uint32_t K, const A* __restrict__ points, X* __restrict__ buckets,
                               X* __restrict__ carry, X* __restrict__ tails, uint32_t* __restrict__ tail_key) {
  RegisterSum<X> run(nullptr);
  accumulate_chunk<A, X, kAdd>(blockIdx.x * blockDim.x + threadIdx.x, keys, vals, total, sentinel, K, points, buckets,
                               carry, tails, tail_key, run);
}

// Block-wide sum of one XYZZ point per thread; the result is in sh[0]. blockDim.x: a power of two.
template <class X>
__device__ __forceinline__ void block_sum(X* sh, X acc) {
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (uint32_t h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) sh[threadIdx.x] = sh[threadIdx.x].add(sh[threadIdx.x + h]);
    __syncthreads();
  }
}

// One block per listed long run: thread i adds every blockDim.x-th carry of the run from the
// i-th on, then a block tree. The chain each thread walks is the run's length over the block's
// threads: a bucket that holds a large share of an MSM's pairs (small values repeated across a
// witness) spans thousands of chunks.
template <class X, bool kAdd>
__global__ void msm_merge_long(const uint32_t* __restrict__ keys, uint32_t total, uint32_t K, uint32_t chunks,
                               const X* __restrict__ carry, const X* __restrict__ tails,
                               const uint32_t* __restrict__ tail_key, X* __restrict__ buckets,
                               const uint32_t* __restrict__ long_count, const uint32_t* __restrict__ long_list) {
  extern __shared__ __align__(16) unsigned char smem[];
  if (blockIdx.x >= *long_count) return;  // block-uniform, before any barrier
  const uint32_t t = long_list[blockIdx.x], key = tail_key[t];
  X acc = threadIdx.x == 0 ? tails[t] : X::infinity();
  for (uint32_t u = t + 1 + threadIdx.x; u < chunks && (size_t)u * K < total && keys[(size_t)u * K] == key; u += blockDim.x)
    acc = acc.add(carry[u]);
  X* sh = reinterpret_cast<X*>(smem);
  block_sum(sh, acc);
  if (threadIdx.x == 0) put_bucket<kAdd>(buckets, key, sh[0]);
}

// One thread per chunk with an open tail: it adds the carries of the chunks its run covers. A run
// longer than 32 chunks (a huge bucket: skewed scalars, one value repeated across the witness)
// is listed instead and summed by a whole block in msm_merge_long.
template <class X, bool kAdd>
__global__ void msm_merge_tails(const uint32_t* __restrict__ keys, uint32_t total, uint32_t K, uint32_t chunks,
                                uint32_t sentinel, const X* __restrict__ carry, const X* __restrict__ tails,
                                const uint32_t* __restrict__ tail_key, X* __restrict__ buckets,
                                uint32_t* __restrict__ long_count, uint32_t* __restrict__ long_list) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= chunks) return;
  uint32_t key = tail_key[t];
  if (key == sentinel) return;
  if (t + 32 < chunks && keys[(size_t)(t + 32) * K] == key) {
    long_list[atomicAdd(long_count, 1u)] = t;
    return;
  }
  X acc = tails[t];
  for (uint32_t u = t + 1; u < chunks && (size_t)u * K < total && keys[(size_t)u * K] == key; u++) acc = acc.add(carry[u]);
  put_bucket<kAdd>(buckets, key, acc);
}

// One thread per segment s of window w (reduce_steps.hpp): its T_s and R_s.
template <class X>
__global__ void msm_segments(const X* __restrict__ buckets, uint32_t nb, uint32_t L, uint32_t S, uint32_t nwin,
                             X* __restrict__ seg_t, X* __restrict__ seg_r) {
  uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= nwin * S) return;
  uint32_t w = g / S, s = g % S;
  X t, r;
  segment_sums(buckets + (size_t)w * nb + (size_t)s * L, L, t, r);
  seg_t[g] = t;
  seg_r[g] = r;
}

// Block (w, j, part) of the fold (reduce_steps.hpp): the part's share of U_j (j < J) or of T
// (j = J), summed over the block's lanes.
template <class X>
__global__ void msm_fold(const X* __restrict__ seg_t, const X* __restrict__ seg_r, uint32_t S, int J, uint32_t parts,
                         X* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char smem[];
  X* sh = reinterpret_cast<X*>(smem);
  block_sum(sh, fold_share(seg_t, seg_r, S, J, parts, blockIdx.x, threadIdx.x, blockDim.x));
  if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}

// Block b: out[b] += sum of in[b*group .. (b+1)*group), group <= blockDim.x.
template <class X>
__global__ void msm_sum_groups(const X* __restrict__ in, uint32_t group, X* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char smem[];
  X* sh = reinterpret_cast<X*>(smem);
  X acc = threadIdx.x < group ? in[(size_t)blockIdx.x * group + threadIdx.x] : X::infinity();
  block_sum(sh, acc);
  if (threadIdx.x == 0) out[blockIdx.x] = out[blockIdx.x].add(sh[0]);
}

// Sum of the points listed in idx (the scalars equal to 1): per-block partial sums.
template <class A, class X>
__global__ void msm_sum_indexed(const A* __restrict__ points, const uint32_t* __restrict__ idx, uint32_t count,
                                X* __restrict__ partial) {
  extern __shared__ __align__(16) unsigned char smem[];
  X* sh = reinterpret_cast<X*>(smem);
  X acc = X::infinity();
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < count; j += gridDim.x * blockDim.x)
    acc = acc.add_affine(load_affine(points, idx[j]));
  block_sum(sh, acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

// One block: out[0] += sum of in[0..count).
template <class X>
__global__ void msm_sum_points(const X* __restrict__ in, uint32_t count, X* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char smem[];
  X* sh = reinterpret_cast<X*>(smem);
  X acc = X::infinity();
  for (uint32_t j = threadIdx.x; j < count; j += blockDim.x) acc = acc.add(in[j]);
  block_sum(sh, acc);
  if (threadIdx.x == 0) out[0] = out[0].add(sh[0]);
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------

// The scalar side of an MSM (see the top of this file).
struct MsmPlan {
  // n_rest = n_small + n_large: the scalars summed in buckets, the small ones (of at most
  // small_bits bits, their digits in the first small_windows windows) listed first
  uint32_t n = 0, n_ones = 0, n_rest = 0, n_small = 0, n_large = 0;
  int small_bits = 0, small_windows = 0;
  // nwin: the windows the execute step reduces (the scalar's windows, or one copy's: copies > 1
  // means the points are `copies` arrays of n points, msm/bases.cuh's layout)
  int c = 0, nwin = 0, copies = 1, scalar_windows = 0;
  // The windows are sorted group_windows at a time (all of them with copies): the pairs and the
  // buckets take a group's room, not the whole MSM's. The group sorted now: windows
  // [group_first, group_first + group_count), whose buckets are group_nwin windows (one copy's with
  // copies); sentinel, total, keys and vals are that group's.
  int group_windows = 0, group_first = 0, group_count = 0, group_nwin = 0;
  uint32_t sentinel = 0;
  // the group's sorted pairs: n_large * group_count + n_small * (its windows among the small
  // scalars'); zero digits sorted last, as sentinel
  uint32_t total = 0;
  const uint32_t* keys = nullptr;
  const uint32_t* vals = nullptr;
  const uint32_t* ones = nullptr;
  // What another group's sort reads again: the scalars, the non-0/1 ones' indices, the copies' stride.
  const uint32_t* scalars = nullptr;
  const uint32_t* rest_idx = nullptr;
  uint32_t copy_stride = 0;
  int groups() const { return group_windows > 0 ? (scalar_windows + group_windows - 1) / group_windows : 1; }
  DeviceBuffer idx_ones, idx_rest, keys0, keys1, vals0, vals1, temp, counts;
  static constexpr int kCounts = 4;  // ones, small, large, the small scalars' bit length
  uint32_t* host_counts = nullptr;   // pinned, kCounts words
  ~MsmPlan() {
    pinned_free(host_counts, kCounts * sizeof(uint32_t));
  }
  // Gives the device buffers back (the next plan allocates them again).
  void release() {
    for (DeviceBuffer* b : {&idx_ones, &idx_rest, &keys0, &keys1, &vals0, &vals1, &temp, &counts}) b->release();
    keys = vals = ones = nullptr;
  }
};

// The pairs of the plan's window group starting at window `first` (a multiple of group_windows),
// digits and sort, replacing the group sorted before. Does not synchronise.
template <class P>
cuzk_status msm_sort_windows(MsmPlan& plan, int first, cudaStream_t s, std::string& err) {
  const int count = std::min(plan.group_windows, plan.scalar_windows - first);
  if (first < 0 || count <= 0 || (plan.copies > 1 && first != 0)) {
    err = "MSM plan: no window group at window " + std::to_string(first);
    return CUZK_ERR_INTERNAL;
  }
  // The small scalars' windows among the group's.
  const int count_small = std::max(0, std::min(first + count, plan.small_windows) - first);
  plan.group_first = first;
  plan.group_count = count;
  plan.group_nwin = plan.copies > 1 ? plan.nwin : count;
  plan.sentinel = (uint32_t)plan.group_nwin << (plan.c - 1);
  const uint32_t small_pairs = plan.n_small * (uint32_t)count_small;
  plan.total = small_pairs + plan.n_large * (uint32_t)count;
  plan.keys = plan.vals = nullptr;
  if (plan.total == 0) return CUZK_OK;
  KernelTrace trace("msm_plan", s);
  const size_t pair_bytes = (size_t)plan.total * 4;
  CUZK_TRY(plan.keys0.ensure(pair_bytes, err));
  CUZK_TRY(plan.keys1.ensure(pair_bytes, err));
  CUZK_TRY(plan.vals0.ensure(pair_bytes, err));
  CUZK_TRY(plan.vals1.ensure(pair_bytes, err));
  if (small_pairs) {
    msm_digits<P><<<ceil_div(plan.n_small, 256), 256, 0, s>>>(plan.scalars, plan.rest_idx, plan.n_small, plan.c, first,
                                                              first + count_small, plan.nwin, plan.copy_stride,
                                                              plan.sentinel, plan.keys0.as<uint32_t>(),
                                                              plan.vals0.as<uint32_t>());
    CUZK_LAUNCHED("msm_digits");
  }
  if (plan.n_large) {
    msm_digits<P><<<ceil_div(plan.n_large, 256), 256, 0, s>>>(
        plan.scalars, plan.rest_idx ? plan.rest_idx + plan.n_small : nullptr, plan.n_large, plan.c, first, first + count,
        plan.nwin, plan.copy_stride, plan.sentinel, plan.keys0.as<uint32_t>() + small_pairs,
        plan.vals0.as<uint32_t>() + small_pairs);
    CUZK_LAUNCHED("msm_digits");
  }
  trace.mark("digits");
  int key_bits = 1;
  while ((1ull << key_bits) <= plan.sentinel) key_bits++;
  cub::DoubleBuffer<uint32_t> dk(plan.keys0.as<uint32_t>(), plan.keys1.as<uint32_t>());
  cub::DoubleBuffer<uint32_t> dv(plan.vals0.as<uint32_t>(), plan.vals1.as<uint32_t>());
  size_t sort_bytes = 0;
  CUZK_CU(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, dk, dv, plan.total, 0, key_bits, s));
  CUZK_TRY(plan.temp.ensure(sort_bytes, err));
  sort_bytes = plan.temp.bytes();
  CUZK_CU(cub::DeviceRadixSort::SortPairs(plan.temp.as(), sort_bytes, dk, dv, plan.total, 0, key_bits, s));
  trace.mark("sort");
  if (trace.on())
    trace.note("c=" + std::to_string(plan.c) + " windows=" + std::to_string(first) + "+" + std::to_string(count) +
               " ones=" + std::to_string(plan.n_ones) + " small=" + std::to_string(plan.n_small) + "/" +
               std::to_string(plan.small_bits) + "b large=" + std::to_string(plan.n_large) +
               " pairs=" + std::to_string(plan.total));
  plan.keys = dk.Current();
  plan.vals = dv.Current();
  return CUZK_OK;
}

// split: drop zeros and sum the ones apart (else every scalar goes through the buckets).
// window: 0 = chosen from the counts of small and large scalars (msm_choose_windows), else forced
// (benchmarks; a chunk summed at its pass's window; and the window the copies were made for:
// required with copies > 1), every window of the field then reduced. copies: of the points (msm/bases.cuh), 1 for none.
// copy_stride: the points between one copy and the next (0: n); a chunk of a point set with
// copies is n points at an offset into copies of copy_stride points each. window_groups: the
// windows are sorted and summed in this many groups (at most; 1: all at once; ignored with
// copies), each taking 1/window_groups of the pairs' and buckets' memory; the first group is
// sorted here, the others by msm_execute_into.
template <class P>
cuzk_status msm_plan(MsmPlan& plan, const uint32_t* d_scalars, uint32_t n, bool split, int window, cudaStream_t s,
                     std::string& err, int copies = 1, uint32_t copy_stride = 0, int window_groups = 1) {
  if (copies < 1 || (copies > 1 && (window < 2 || window > kMsmMaxWindowWithCopies))) {
    err = "MSM plan: copies need the window they were made for (2.." + std::to_string(kMsmMaxWindowWithCopies) + ")";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  if (window_groups < 1 || window_groups > kMsmMaxWindowGroups) {
    err = "MSM plan: window groups " + std::to_string(window_groups) + " outside 1.." + std::to_string(kMsmMaxWindowGroups);
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  if (copy_stride == 0) copy_stride = n;
  if (copies > 1 && (uint64_t)msm_copies_used(P::BITS, window, copies) * copy_stride >= (1ull << 31)) {
    err = "MSM plan: copies * points exceeds 2^31 point indices";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  KernelTrace trace("msm_plan", s);
  plan.n = n;
  plan.n_ones = plan.n_small = 0;
  plan.n_rest = plan.n_large = n;
  plan.small_bits = 0;
  plan.ones = nullptr;
  if (!plan.host_counts)
    CUZK_CU(pinned_alloc(reinterpret_cast<void**>(&plan.host_counts), MsmPlan::kCounts * sizeof(uint32_t)));
  const uint32_t* rest_idx = nullptr;
  if (split && n > 0) {
    static_assert(kMsmSmallBits == 32, "SmallScalar takes the scalars below 2^32");
    // The large scalars' indices land in keys1 (free until the sort), then after the small ones'.
    CUZK_TRY(plan.idx_ones.ensure((size_t)n * 4, err));
    CUZK_TRY(plan.idx_rest.ensure((size_t)n * 4, err));
    CUZK_TRY(plan.keys1.ensure((size_t)n * 4, err));
    CUZK_TRY(plan.counts.ensure(MsmPlan::kCounts * sizeof(uint32_t), err));
    uint32_t* counts = plan.counts.as<uint32_t>();
    CUZK_CU(cudaMemsetAsync(counts, 0, MsmPlan::kCounts * sizeof(uint32_t), s));
    thrust::counting_iterator<uint32_t> first(0);
    auto dropped = thrust::make_discard_iterator();  // the 0s and 1s the partition leaves
    const SmallScalar<P> small{d_scalars, counts + 3};
    const LargeScalar<P> large{d_scalars};
    size_t bytes_ones = 0, bytes_rest = 0;
    CUZK_CU(cub::DeviceSelect::If(nullptr, bytes_ones, first, plan.idx_ones.as<uint32_t>(), counts, n,
                                  OneScalar<P>{d_scalars}, s));
    CUZK_CU(cub::DevicePartition::If(nullptr, bytes_rest, first, plan.idx_rest.as<uint32_t>(), plan.keys1.as<uint32_t>(),
                                     dropped, counts + 1, n, small, large, s));
    CUZK_TRY(plan.temp.ensure(std::max(bytes_ones, bytes_rest), err));
    bytes_ones = bytes_rest = plan.temp.bytes();
    CUZK_CU(cub::DeviceSelect::If(plan.temp.as(), bytes_ones, first, plan.idx_ones.as<uint32_t>(), counts, n,
                                  OneScalar<P>{d_scalars}, s));
    CUZK_CU(cub::DevicePartition::If(plan.temp.as(), bytes_rest, first, plan.idx_rest.as<uint32_t>(),
                                     plan.keys1.as<uint32_t>(), dropped, counts + 1, n, small, large, s));
    trace.mark("classify");
    CUZK_CU(cudaMemcpyAsync(plan.host_counts, counts, MsmPlan::kCounts * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
    CUZK_CU(cudaStreamSynchronize(s));
    plan.n_ones = plan.host_counts[0];
    plan.n_small = plan.host_counts[1];
    plan.n_large = plan.host_counts[2];
    plan.small_bits = (int)plan.host_counts[3];
    plan.n_rest = plan.n_small + plan.n_large;
    plan.ones = plan.idx_ones.as<uint32_t>();
    rest_idx = plan.idx_rest.as<uint32_t>();
    if (plan.n_large)
      CUZK_CU(cudaMemcpyAsync(plan.idx_rest.as<uint32_t>() + plan.n_small, plan.keys1.as(), (size_t)plan.n_large * 4,
                              cudaMemcpyDeviceToDevice, s));
  }
  // With copies the window is the copies' (forced), so every window is reduced.
  const MsmWindowChoice wc = msm_choose_windows(plan.n_small, plan.small_bits, plan.n_large, P::BITS,
                                                copies > 1 ? 1 : window_groups, window);
  plan.c = wc.c;
  plan.scalar_windows = wc.windows;
  plan.small_windows = wc.small_windows;
  plan.copies = msm_copies_used(P::BITS, plan.c, copies);
  plan.nwin = copies > 1 ? msm_windows_per_copy(P::BITS, plan.c, copies) : plan.scalar_windows;
  plan.group_windows = copies > 1 ? plan.scalar_windows : msm_group_windows(plan.scalar_windows, window_groups);
  const uint64_t first_group_pairs = (uint64_t)plan.n_large * plan.group_windows +
                                     (uint64_t)plan.n_small * std::min(plan.group_windows, plan.small_windows);
  if (first_group_pairs >= (1ull << 32)) { err = "MSM too large for one plan"; return CUZK_ERR_INVALID_ARGUMENT; }
  plan.scalars = d_scalars;
  plan.rest_idx = rest_idx;
  plan.copy_stride = copy_stride;
  return msm_sort_windows<P>(plan, 0, s, err);
}

// Scratch of the execute step, shared by every MSM on a device (calls are serialised).
struct MsmScratch {
  DeviceBuffer buckets, carry, tails, tail_key, long_runs, seg_t, seg_r, fold_parts, partial, sums;
  PinnedBuffer host;  // the download area
  // Gives the device buffers back (the next MSM allocates them again).
  void release() {
    for (DeviceBuffer* b : {&buckets, &carry, &tails, &tail_key, &long_runs, &seg_t, &seg_r, &fold_parts, &partial, &sums})
      b->release();
  }
};

// Phase marks the caller wants (GPU events): after the bucket part and after the ones' sum (the
// same mark when the ones' sum runs on a lane of its own).
struct MsmMarks {
  GpuTimeline* timeline = nullptr;
  int buckets_done = -1, ones_done = -1;
};

// A stream the ones' sums run on beside the bucket parts, with scratch of its own (only its partial
// sums are used). Both are chains of additions on a few warps an SM: side by side they fill it.
// msm_execute_into starts the ones' sum there once the work queued on its stream so far is done
// (the plan, the points) and records `done`; the caller makes its stream wait for `done` before
// anything rewrites the plan's list of ones, the points or the sums.
struct MsmOnesLane {
  cudaStream_t stream = nullptr;
  cudaEvent_t ready = nullptr, done = nullptr;
  MsmScratch scratch;
  bool pending = false;  // work was queued since the caller last waited for it
  MsmOnesLane() = default;
  MsmOnesLane(const MsmOnesLane&) = delete;
  MsmOnesLane& operator=(const MsmOnesLane&) = delete;
  ~MsmOnesLane() {
    if (stream) {
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    }
    if (ready) cudaEventDestroy(ready);
    if (done) cudaEventDestroy(done);
  }
  cuzk_status ensure(std::string& err) {
    if (!ready) CUZK_CU(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    if (!done) CUZK_CU(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    if (!stream) CUZK_CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return CUZK_OK;
  }
  // Stream s waits for what was queued here (nothing to wait for: no call).
  cuzk_status join(cudaStream_t s, std::string& err) {
    if (!pending) return CUZK_OK;
    CUZK_CU(cudaStreamWaitEvent(s, done, 0));
    pending = false;
    return CUZK_OK;
  }
};

// The blocks of `threads` threads (and smem bytes of shared memory) that the current device runs
// at once for `kernel`: one wave.
template <class Kernel>
cuzk_status resident_blocks(Kernel kernel, int threads, size_t smem, uint32_t& out, std::string& err) {
  int dev = 0, sms = 0, blocks = 0;
  CUZK_CU(cudaGetDevice(&dev));
  CUZK_CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUZK_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem));
  out = (uint32_t)sms * (uint32_t)(blocks > 0 ? blocks : 1);
  return CUZK_OK;
}

constexpr int kWalkThreads = 128;  // a walk block's chunk threads

// The walk's chunks for the plan (MsmShape's), lengthened to fill whole waves of the device's
// threads for the walk kernel that runs: the one adding into its buckets in place, or the one
// writing fresh buckets.
template <class HC, int G>
cuzk_status msm_walk_in_waves(const MsmPlan& plan, bool add_in_place, MsmShape& out, std::string& err) {
  using WA = typename Group<HC, G>::WalkAffine;
  using WX = typename Group<HC, G>::WalkXyzz;
  uint32_t blocks = 0;
  if (add_in_place) CUZK_TRY(resident_blocks(msm_accumulate<WA, WX, true>, kWalkThreads, 0, blocks, err));
  else CUZK_TRY(resident_blocks(msm_accumulate<WA, WX, false>, kWalkThreads, 0, blocks, err));
  out = MsmShape::of(plan.c, plan.total).in_waves(plan.total, (uint64_t)blocks * kWalkThreads);
  return CUZK_OK;
}

// The bucket part of an MSM: the plan's pairs summed into `buckets` (device, nwin x 2^(c-1) XYZZ
// points of the plan's window: msm_bucket_bytes, zeroed by the caller: a bucket no pair reaches
// stays empty; add: added to the sums they hold). Does not synchronise.
// Adding in place puts a full addition and a read of the bucket at the end of every run, inside
// the accumulation's loop, where one lane's run end stalls its warp: cheap for few buckets (long
// runs, few ends), but past kAddInPlaceBuckets (short runs: a dense MSM in chunks) the pairs are
// summed into fresh buckets (the scratch's) and those added into `buckets` in one parallel step.
// walk: the chunks of the walk (MsmShape::of(plan.c, plan.total) or one with longer chunks: fewer
// of them, so the workspace holds); null: the plan's shape fitted to the device's waves.
constexpr uint32_t kAddInPlaceBuckets = 1u << 12;
template <class HC, int G>
cuzk_status msm_accumulate_into(const MsmPlan& plan, const typename Group<HC, G>::Affine* d_points, MsmScratch& sc,
                                cudaStream_t s, typename Group<HC, G>::Xyzz* buckets, bool add, std::string& err,
                                const MsmShape* walk = nullptr) {
  using A = typename Group<HC, G>::Affine;
  using X = typename Group<HC, G>::Xyzz;
  if (!plan.total) return CUZK_OK;
  const MsmExecuteSizes z = MsmExecuteSizes::of(plan.c, plan.nwin, plan.total, sizeof(X), plan.group_nwin);
  CUZK_TRY(sc.carry.ensure(z.carry, err));
  CUZK_TRY(sc.tails.ensure(z.carry, err));
  CUZK_TRY(sc.tail_key.ensure(z.tail_key, err));
  CUZK_TRY(sc.long_runs.ensure(z.long_runs, err));  // count, then the list
  KernelTrace trace(G == 1 ? "msm_accumulate_g1" : "msm_accumulate_g2", s);
  uint32_t* long_count = sc.long_runs.as<uint32_t>();
  constexpr uint32_t kMergeThreads = 128;        // 48 KiB of shared memory for a BLS12-381 G2 tree
  static_assert(kMergeThreads * sizeof(X) <= 48 * 1024, "the merge tree fits the default shared memory");
  // The walk computes in the group's walk twins (curves.cuh): the same bytes, its own code.
  using WA = typename Group<HC, G>::WalkAffine;
  using WX = typename Group<HC, G>::WalkXyzz;
  static_assert(sizeof(WA) == sizeof(A) && sizeof(WX) == sizeof(X), "walk twins share the layout");
  auto launch = [&](auto adding) -> cuzk_status {
    constexpr bool kAdd = decltype(adding)::value;
    auto* kernel = msm_accumulate<WA, WX, kAdd>;
    MsmShape sh{};
    if (walk) sh = *walk;
    else CUZK_TRY((msm_walk_in_waves<HC, G>(plan, kAdd, sh, err)));
    // The carries hold msm_chunks_bound chunks, and the chunks must cover every pair.
    if (sh.chunks > msm_chunks_bound(plan.total) || (uint64_t)sh.K * sh.chunks < plan.total) {
      err = "MSM walk: " + std::to_string(sh.chunks) + " chunks of " + std::to_string(sh.K) + " for " +
            std::to_string(plan.total) + " pairs (at most " + std::to_string(msm_chunks_bound(plan.total)) +
            " chunks, covering every pair)";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    const uint32_t max_long = sh.chunks / 32 + 1;  // a long run covers more than 32 chunks
    kernel<<<ceil_div(sh.chunks, kWalkThreads), kWalkThreads, 0, s>>>(
        plan.keys, plan.vals, plan.total, plan.sentinel, sh.K, reinterpret_cast<const WA*>(d_points),
        reinterpret_cast<WX*>(buckets), sc.carry.as<WX>(), sc.tails.as<WX>(), sc.tail_key.as<uint32_t>());
    CUZK_LAUNCHED("msm_accumulate");
    trace.mark("accumulate");
    CUZK_CU(cudaMemsetAsync(long_count, 0, 4, s));
    msm_merge_tails<X, kAdd><<<ceil_div(sh.chunks, 128), 128, 0, s>>>(plan.keys, plan.total, sh.K, sh.chunks,
                                                                      plan.sentinel, sc.carry.as<X>(), sc.tails.as<X>(),
                                                                      sc.tail_key.as<uint32_t>(), buckets, long_count,
                                                                      long_count + 1);
    CUZK_LAUNCHED("msm_merge_tails");
    msm_merge_long<X, kAdd><<<max_long, kMergeThreads, kMergeThreads * sizeof(X), s>>>(
        plan.keys, plan.total, sh.K, sh.chunks, sc.carry.as<X>(), sc.tails.as<X>(), sc.tail_key.as<uint32_t>(), buckets,
        long_count, long_count + 1);
    CUZK_LAUNCHED("msm_merge_long");
    trace.mark("merge");
    return CUZK_OK;
  };
  const size_t group_buckets = (size_t)plan.group_nwin << (plan.c - 1);
  if (add && group_buckets > kAddInPlaceBuckets) {
    X* kept = buckets;
    CUZK_TRY(sc.buckets.ensure(group_buckets * sizeof(X), err));
    buckets = sc.buckets.as<X>();
    CUZK_CU(cudaMemsetAsync(buckets, 0, group_buckets * sizeof(X), s));
    CUZK_TRY(launch(std::false_type{}));
    msm_add_buckets<X><<<ceil_div(group_buckets, 256), 256, 0, s>>>(buckets, group_buckets, kept);
    CUZK_LAUNCHED("msm_add_buckets");
    trace.mark("add");
  } else {
    CUZK_TRY(add ? launch(std::true_type{}) : launch(std::false_type{}));
  }
  return CUZK_OK;
}

// The ones' sum runs one wave of blocks (two an SM on an H100): more leave more partial sums to
// the one block that adds them up, which costs more than they save; fewer leave SMs idle. Bounded:
// the partial sums are not priced by the memory plan.
constexpr uint32_t kMaxOnesBlocks = 512;

// The sum of the points whose scalar is 1 (the plan's ones), added into sums[0]. Does not
// synchronise.
template <class HC, int G>
cuzk_status msm_add_ones(const MsmPlan& plan, const typename Group<HC, G>::Affine* d_points, MsmScratch& sc,
                         cudaStream_t s, typename Group<HC, G>::Xyzz* sums, std::string& err) {
  using A = typename Group<HC, G>::Affine;
  using X = typename Group<HC, G>::Xyzz;
  if (!plan.n_ones) return CUZK_OK;
  constexpr uint32_t kSumThreads = 128;
  const size_t xs = sizeof(X);
  uint32_t wave = 0;
  CUZK_TRY(resident_blocks(msm_sum_indexed<A, X>, kSumThreads, kSumThreads * xs, wave, err));
  const uint32_t sum_blocks = std::min(wave, kMaxOnesBlocks);
  CUZK_TRY(sc.partial.ensure((size_t)sum_blocks * xs, err));
  KernelTrace trace(G == 1 ? "msm_ones_g1" : "msm_ones_g2", s);
  msm_sum_indexed<A, X><<<sum_blocks, kSumThreads, kSumThreads * xs, s>>>(d_points, plan.ones, plan.n_ones,
                                                                          sc.partial.as<X>());
  CUZK_LAUNCHED("msm_sum_indexed");
  msm_sum_points<X><<<1, kSumThreads, kSumThreads * xs, s>>>(sc.partial.as<X>(), sum_blocks, sums);
  CUZK_LAUNCHED("msm_sum_points");
  trace.mark("ones");
  if (trace.on()) trace.note("n=" + std::to_string(plan.n_ones));
  return CUZK_OK;
}

// The bucket reduction of window c over nwin windows: adds each window's folded sums into
// sums[1..] (msm_sums_points' layout). Does not synchronise.
template <class HC, int G>
cuzk_status msm_reduce_into(int c, int nwin, const typename Group<HC, G>::Xyzz* buckets, MsmScratch& sc,
                            cudaStream_t s, typename Group<HC, G>::Xyzz* sums, std::string& err) {
  using X = typename Group<HC, G>::Xyzz;
  using WX = typename Group<HC, G>::WalkXyzz;  // the segments' chains of additions, as the walk's
  const MsmShape sh = MsmShape::of(c, 1);
  const size_t xs = sizeof(X);
  const uint32_t n_fold = (uint32_t)nwin * (sh.J + 1);
  const MsmExecuteSizes z = MsmExecuteSizes::of(c, nwin, 1, xs);
  CUZK_TRY(sc.seg_t.ensure(z.segments, err));
  CUZK_TRY(sc.seg_r.ensure(z.segments, err));
  CUZK_TRY(sc.fold_parts.ensure(z.fold_parts, err));
  KernelTrace trace(G == 1 ? "msm_reduce_g1" : "msm_reduce_g2", s);
  msm_segments<WX><<<ceil_div((size_t)nwin * sh.S, 64), 64, 0, s>>>(reinterpret_cast<const WX*>(buckets), sh.nb, sh.L,
                                                                    sh.S, (uint32_t)nwin, sc.seg_t.as<WX>(),
                                                                    sc.seg_r.as<WX>());
  CUZK_LAUNCHED("msm_segments");
  trace.mark("segments");
  msm_fold<X><<<n_fold * sh.parts, 64, 64 * xs, s>>>(sc.seg_t.as<X>(), sc.seg_r.as<X>(), sh.S, sh.J, sh.parts,
                                                    sc.fold_parts.as<X>());
  CUZK_LAUNCHED("msm_fold");
  msm_sum_groups<X><<<n_fold, 32, 32 * xs, s>>>(sc.fold_parts.as<X>(), sh.parts, sums + 1);
  CUZK_LAUNCHED("msm_sum_groups");
  trace.mark("fold");
  return CUZK_OK;
}

// Adds sum_i s_i P_i for the plan's scalars and these points into `sums` (device: the
// msm_sums_points(plan.c, plan.nwin) partial sums, msm_sizes.hpp; zeroed bytes are empty sums):
// its own buckets, reduced at once, then the ones. Chunks of one MSM over the same window add into
// the same sums; msm_combine turns them into the point once they are on the host. Marks: after
// the reduction and after the ones. Does not synchronise.
// With the windows in groups, each group is sorted in turn (the plan's current one first, so that
// sections sharing a plan sort no group twice in a row) and reduced into its windows' sums.
// kept: buckets of the plan's window kept across chunks, every window's (nwin x 2^(c-1), zeroed
// before the first chunk; each window group adds into its own windows' slice), added into instead
// of reduced here: the caller reduces them once (msm_reduce_into into the same sums) after the last
// chunk. For a chunk of few buckets the reduction is a short chain of additions on a few threads,
// as long as the chunk's own bucket work; for an MSM of many buckets in chunks it is paid once.
// ones: the ones' sum runs on that lane beside the bucket part (the caller joins it).
template <class HC, int G>
cuzk_status msm_execute_into(MsmPlan& plan, const typename Group<HC, G>::Affine* d_points, MsmScratch& sc,
                             cudaStream_t s, typename Group<HC, G>::Xyzz* sums, std::string& err,
                             MsmMarks* marks = nullptr, typename Group<HC, G>::Xyzz* kept = nullptr,
                             MsmOnesLane* ones = nullptr) {
  using X = typename Group<HC, G>::Xyzz;
  const bool ones_beside = ones && plan.n_ones;
  if (ones_beside) {
    CUZK_TRY(ones->ensure(err));
    CUZK_CU(cudaEventRecord(ones->ready, s));
    CUZK_CU(cudaStreamWaitEvent(ones->stream, ones->ready, 0));
    CUZK_TRY((msm_add_ones<HC, G>(plan, d_points, ones->scratch, ones->stream, sums, err)));
    CUZK_CU(cudaEventRecord(ones->done, ones->stream));
    ones->pending = true;
  }
  if (plan.n_rest) {
    const int groups = plan.groups(), current = plan.group_first / plan.group_windows;
    const uint32_t per_window = MsmShape::of(plan.c, 1).J + 1;  // folded sums a window leaves
    for (int i = 0; i < groups; i++) {
      const int first = ((current + i) % groups) * plan.group_windows;
      if (first != plan.group_first) CUZK_TRY(msm_sort_windows<typename HC::Fr::Params>(plan, first, s, err));
      if (!plan.total) continue;  // windows only small scalars' digits could reach, and none do
      if (kept) {
        CUZK_TRY((msm_accumulate_into<HC, G>(plan, d_points, sc, s, kept + ((size_t)first << (plan.c - 1)), true, err)));
        continue;
      }
      const size_t bytes = msm_bucket_bytes(plan.c, plan.group_nwin, sizeof(X));
      CUZK_TRY(sc.buckets.ensure(bytes, err));
      X* buckets = sc.buckets.as<X>();
      CUZK_CU(cudaMemsetAsync(buckets, 0, bytes, s));  // empty buckets read as infinity: ZZ = 0
      CUZK_TRY((msm_accumulate_into<HC, G>(plan, d_points, sc, s, buckets, false, err)));
      CUZK_TRY((msm_reduce_into<HC, G>(plan.c, plan.group_nwin, buckets, sc, s, sums + (size_t)first * per_window, err)));
    }
  }
  if (marks && marks->timeline) marks->buckets_done = marks->timeline->mark(err);
  if (ones_beside) {
    if (marks) marks->ones_done = marks->buckets_done;
    return CUZK_OK;
  }
  CUZK_TRY((msm_add_ones<HC, G>(plan, d_points, sc, s, sums, err)));
  if (marks && marks->timeline) marks->ones_done = marks->timeline->mark(err);
  return CUZK_OK;
}

// sum_i s_i P_i for the plan's scalars and these points, into *out (host XYZZ). Synchronises.
template <class HC, int G>
cuzk_status msm_execute(MsmPlan& plan, const typename Group<HC, G>::Affine* d_points, MsmScratch& sc,
                        cudaStream_t s, typename Group<HC, G>::HostXyzz* out, std::string& err, MsmMarks* marks = nullptr) {
  using X = typename Group<HC, G>::Xyzz;
  using HX = typename Group<HC, G>::HostXyzz;
  static_assert(sizeof(X) == sizeof(HX), "device and host XYZZ points share a layout");
  const size_t bytes = (size_t)msm_sums_points(plan.c, plan.nwin) * sizeof(X);
  CUZK_TRY(sc.sums.ensure(bytes, err));
  CUZK_TRY(sc.host.ensure(bytes, err));
  CUZK_CU(cudaMemsetAsync(sc.sums.as(), 0, bytes, s));
  CUZK_TRY((msm_execute_into<HC, G>(plan, d_points, sc, s, sc.sums.as<X>(), err, marks)));
  CUZK_CU(cudaMemcpyAsync(sc.host.as(), sc.sums.as(), bytes, cudaMemcpyDeviceToHost, s));
  CUZK_CU(cudaStreamSynchronize(s));
  *out = msm_combine(sc.host.as<const HX>(), plan.c, plan.nwin);
  return CUZK_OK;
}

// The kernels are compiled once per curve and group (msm/<curve>_g<group>.cu); other files only
// call them.
#define CUZK_MSM_EXTERN_GROUP(HC, G)                                                                              \
  extern template cuzk_status msm_accumulate_into<HC, G>(const MsmPlan&, const Group<HC, G>::Affine*, MsmScratch&, \
                                                          cudaStream_t, Group<HC, G>::Xyzz*, bool, std::string&,   \
                                                          const MsmShape*);                                        \
  extern template cuzk_status msm_walk_in_waves<HC, G>(const MsmPlan&, bool, MsmShape&, std::string&);             \
  extern template cuzk_status msm_add_ones<HC, G>(const MsmPlan&, const Group<HC, G>::Affine*, MsmScratch&,        \
                                                   cudaStream_t, Group<HC, G>::Xyzz*, std::string&);               \
  extern template cuzk_status msm_reduce_into<HC, G>(int, int, const Group<HC, G>::Xyzz*, MsmScratch&, cudaStream_t, \
                                                      Group<HC, G>::Xyzz*, std::string&);
#define CUZK_MSM_EXTERN(HC)                                                                                       \
  extern template cuzk_status msm_plan<HC::Fr::Params>(MsmPlan&, const uint32_t*, uint32_t, bool, int, cudaStream_t, \
                                                        std::string&, int, uint32_t, int);                         \
  extern template cuzk_status msm_sort_windows<HC::Fr::Params>(MsmPlan&, int, cudaStream_t, std::string&);       \
  CUZK_MSM_EXTERN_GROUP(HC, 1)                                                                                    \
  CUZK_MSM_EXTERN_GROUP(HC, 2)
CUZK_MSM_EXTERN(curve::Bn254)
CUZK_MSM_EXTERN(curve::Bls12381)
#undef CUZK_MSM_EXTERN
#undef CUZK_MSM_EXTERN_GROUP

}  // namespace cuzk::cuda
