// Batch-affine bucket accumulation, the alternative to msm.cuh's XYZZ walk for
// MSMs whose buckets hold several points each: L levels of pairwise affine additions with batched
// inversions (msm_affine_steps.cuh) shrink the plan's sorted list to about 1/2^L of its points,
// and msm.cuh's XYZZ walk adds what is left into the buckets. Opt-in until measured on a GPU:
// CUZK_GPU_MSM_ACCUMULATE=affine.
//
//   live     the pairs before the zero digits' sentinels (one binary search, one sync);
//   slabs    the live pairs in slabs of at most kAffineSlab, so that the level buffers stay
//            bounded; each slab runs its L levels: count -> exclusive scan -> pairs -> level end,
//            every size kept on the device (no sync per level);
//   rest     each slab's last level appends to one remainder list, sorted by key as the slabs
//            are; a remainder past its capacity (the estimate below; adversarial digit
//            distributions) is detected at the end, and the caller falls back to the XYZZ walk.
#pragma once

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "cuda/msm_affine_steps.cuh"
#include "cuda/runtime.cuh"

namespace cuzk::cuda {

// kFromEnv: CUZK_GPU_MSM_ACCUMULATE=xyzz|affine, xyzz (the measured path) when unset.
enum class MsmAccumulate { kFromEnv, kXyzz, kAffine };

inline cuzk_status msm_accumulate_resolve(MsmAccumulate m, MsmAccumulate& out, std::string& err) {
  out = m;
  if (m != MsmAccumulate::kFromEnv) return CUZK_OK;
  const char* v = std::getenv("CUZK_GPU_MSM_ACCUMULATE");
  out = v && std::strcmp(v, "affine") == 0 ? MsmAccumulate::kAffine : MsmAccumulate::kXyzz;
  if (v && *v && std::strcmp(v, "affine") != 0 && std::strcmp(v, "xyzz") != 0) {
    err = std::string("CUZK_GPU_MSM_ACCUMULATE='") + v + "': xyzz or affine";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  return CUZK_OK;
}

constexpr int kAffineBlock = 128;         // threads per block: one inversion per block and level
constexpr int kAffineMaxLevels = 6;       // beyond, the XYZZ walk takes the rest
constexpr uint32_t kAffineSlab = 1u << 25;  // live pairs per slab (level buffers: 2 x slab points)
constexpr uint32_t kAffineMinLive = 1u << 16;

// The affine path's tuning knobs, from the environment; 0 = chosen by the driver.
//   CUZK_GPU_MSM_AFFINE_LEVELS (1..6), _PER slots per thread (1..4096), _SLAB live pairs per slab,
//   _REST the remainder's capacity (a lower cap: the test of the overflow fallback).
struct MsmAffineKnobs {
  long levels = 0, per = 0, slab = 0, rest = 0;
  cuzk_status read(std::string& err) {
    struct Knob {
      const char* name;
      long* value;
      long hi;
    } knobs[] = {{"CUZK_GPU_MSM_AFFINE_LEVELS", &levels, kAffineMaxLevels},
                 {"CUZK_GPU_MSM_AFFINE_PER", &per, 4096},
                 {"CUZK_GPU_MSM_AFFINE_SLAB", &slab, 1l << 31},
                 {"CUZK_GPU_MSM_AFFINE_REST", &rest, 1l << 31}};
    for (const Knob& k : knobs) {
      *k.value = 0;
      const char* v = std::getenv(k.name);
      if (!v || !*v) continue;
      char* end = nullptr;
      const long x = std::strtol(v, &end, 10);
      if (*end || x < 1 || x > k.hi) {
        err = std::string(k.name) + "='" + v + "': 1.." + std::to_string(k.hi) + ", or unset";
        return CUZK_ERR_INVALID_ARGUMENT;
      }
      *k.value = x;
    }
    return CUZK_OK;
  }
};

// Device words of the driver: the level lists' lengths (word b for level buffer b), the
// remainder's, the overflow flag.
enum AffineWord : int { kWordList0, kWordList1, kWordSlab, kWordRest, kWordOverflow, kWordLive, kAffineWords };
static_assert(kWordList0 == 0 && kWordList1 == 1, "a level buffer's index is its length's word");

struct MsmAffineScratch {
  DeviceBuffer keys[2], points[2], count, pos, prefix, scan_temp, words, rest_keys, rest_points;
  uint32_t* host_words = nullptr;  // pinned: live, then rest length and overflow
  ~MsmAffineScratch() { pinned_free(host_words, 4 * sizeof(uint32_t)); }
};

// What the levels left: `count` points sorted by key, for the XYZZ walk (used = false: the
// levels did not run, or overflowed; the caller walks the plan's list).
struct MsmAffineRest {
  bool used = false;
  int levels = 0;
  uint32_t live = 0, count = 0;
  const uint32_t* keys = nullptr;
  const void* points = nullptr;
};

namespace affine_kernels {

static __global__ void set_word(uint32_t* words, int i, uint32_t v) { words[i] = v; }

// words[kWordLive] = the number of keys below the sentinel (keys sorted ascending).
static __global__ void count_live(const uint32_t* __restrict__ keys, uint32_t total, uint32_t sentinel,
                                  uint32_t* __restrict__ words) {
  uint32_t lo = 0, hi = total;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < sentinel) lo = mid + 1;
    else hi = mid;
  }
  words[kWordLive] = lo;
}

template <class Src>
__global__ void count(Src src, const uint32_t* __restrict__ words, int n_word, uint32_t slots_ub,
                      uint32_t* __restrict__ count) {
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < slots_ub) count[j] = affine_count(src, words[n_word], j);
}

template <class A, class Src>
__global__ void __launch_bounds__(kAffineBlock) pairs(Src src, const uint32_t* __restrict__ words, int n_word,
                                                      uint32_t per, typename A::Field* __restrict__ prefix,
                                                      const uint32_t* __restrict__ pos, PointList<A> out,
                                                      int base_word) {
  using F = typename A::Field;
  __shared__ __align__(16) unsigned char smem[2 * kAffineBlock * sizeof(F)];
  F* totals = reinterpret_cast<F*>(smem);
  const uint32_t n = words[n_word], slots = affine_slots(n);
  if ((size_t)blockIdx.x * kAffineBlock * per >= slots) return;  // the whole block: before any barrier
  const size_t first = ((size_t)blockIdx.x * kAffineBlock + threadIdx.x) * per;
  const uint32_t j0 = (uint32_t)std::min<size_t>(first, slots), j1 = (uint32_t)std::min<size_t>(first + per, slots);
  totals[threadIdx.x] = affine_forward<A>(src, n, j0, j1, prefix);
  __syncthreads();
  if (threadIdx.x == 0) affine_invert_all(totals, totals + kAffineBlock, kAffineBlock);
  __syncthreads();
  if (base_word >= 0) {
    const uint32_t base = words[base_word];
    out.keys += base;
    out.points += base;
    out.cap = out.cap > base ? out.cap - base : 0;
  }
  affine_backward<A>(src, n, j0, j1, prefix, totals[threadIdx.x], pos, out);
}

// The level's output length: into words[n_word], or added to the remainder's (with the overflow
// flag set when it passes `cap`).
static __global__ void level_end(const uint32_t* __restrict__ count, const uint32_t* __restrict__ pos,
                                 uint32_t slots_ub, uint32_t* __restrict__ words, int n_word, uint32_t cap) {
  const uint32_t out = slots_ub ? pos[slots_ub - 1] + count[slots_ub - 1] : 0;
  if (n_word != kWordRest) {
    words[n_word] = out;
    return;
  }
  const uint64_t rest = (uint64_t)words[kWordRest] + out;
  if (rest > cap) words[kWordOverflow] = 1;
  words[kWordRest] = (uint32_t)std::min<uint64_t>(rest, cap);
}

}  // namespace affine_kernels

// The levels a list of `live` pairs over `buckets` buckets gets: log2 of the mean run length
// (a level halves every run of two or more), at most kAffineMaxLevels; `forced` if nonzero.
inline int msm_affine_levels_for(uint32_t live, size_t buckets, long forced) {
  if (live < kAffineMinLive || buckets == 0) return 0;
  if (forced) return (int)forced;
  const double mean = (double)live / (double)buckets;
  return mean < 2 ? 0 : std::min(kAffineMaxLevels, (int)std::floor(std::log2(mean)));
}

// Slots per thread at a level of about `slots` slots: enough threads to fill the GPU (~32K), as
// many slots as allow (the block's one inversion is shared by 128 x per slots); `forced` if nonzero.
inline uint32_t msm_affine_per_thread(uint64_t slots, long forced) {
  if (forced) return (uint32_t)forced;
  uint32_t per = 32;
  while (per < 256 && (uint64_t)per * 2 * 32768 <= slots) per *= 2;
  return per;
}

// Runs the levels over the plan's sorted (keys, vals) (`total` pairs, zero digits as `sentinel`
// at the end) and the points; `buckets` is the bucket count (windows x 2^(c-1)).
template <class A>
cuzk_status msm_affine_levels(const uint32_t* keys, const uint32_t* vals, uint32_t total, uint32_t sentinel,
                              size_t buckets, const A* points, MsmAffineScratch& sc, cudaStream_t s,
                              MsmAffineRest& rest, std::string& err) {
  using F = typename A::Field;
  namespace k = affine_kernels;
  rest = MsmAffineRest{};
  MsmAffineKnobs knobs;
  CUZK_TRY(knobs.read(err));
  if (total == 0) return CUZK_OK;
  CUZK_TRY(sc.words.ensure(kAffineWords * sizeof(uint32_t), err));
  if (!sc.host_words) CUZK_CU(pinned_alloc(reinterpret_cast<void**>(&sc.host_words), 4 * sizeof(uint32_t)));
  uint32_t* words = sc.words.as<uint32_t>();
  k::count_live<<<1, 1, 0, s>>>(keys, total, sentinel, words);
  CUZK_LAUNCHED("msm_affine_count_live");
  CUZK_CU(cudaMemcpyAsync(sc.host_words, words + kWordLive, sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
  CUZK_CU(cudaStreamSynchronize(s));
  const uint32_t live = sc.host_words[0];
  const int levels = msm_affine_levels_for(live, buckets, knobs.levels);
  rest.live = live;
  if (levels == 0) return CUZK_OK;

  const uint32_t slab = (uint32_t)std::min<long>(knobs.slab ? knobs.slab : kAffineSlab, live);
  const uint32_t slabs = ceil_div(live, slab);
  const uint32_t slots_ub = affine_slots(slab);
  // The remainder: a run of r points leaves at most r/2^L + 3 after L levels; the estimate
  // counts one point per bucket beyond r/2^L (runs of random digits), an overflow falls back.
  uint64_t cap64 = std::min<uint64_t>(live, ((uint64_t)live >> levels) + buckets + 4ull * slabs);
  if (knobs.rest) cap64 = std::min<uint64_t>(cap64, (uint64_t)knobs.rest);
  const uint32_t cap = (uint32_t)cap64;
  size_t scan_bytes = 0;
  CUZK_CU(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, (const uint32_t*)nullptr, (uint32_t*)nullptr, slots_ub, s));
  const size_t need = 2 * (size_t)slab * (4 + sizeof(A)) + (size_t)slots_ub * (8 + sizeof(F)) +
                      (size_t)cap * (4 + sizeof(A)) + scan_bytes;
  size_t free_bytes = 0, total_bytes = 0;
  CUZK_CU(cudaMemGetInfo(&free_bytes, &total_bytes));
  const size_t held = sc.keys[0].bytes() + sc.keys[1].bytes() + sc.points[0].bytes() + sc.points[1].bytes() +
                      sc.count.bytes() + sc.pos.bytes() + sc.prefix.bytes() + sc.scan_temp.bytes() +
                      sc.rest_keys.bytes() + sc.rest_points.bytes();
  if (need > (free_bytes + held) / 2) return CUZK_OK;  // no room: the XYZZ walk needs none of it
  for (int b = 0; b < 2; b++) {
    CUZK_TRY(sc.keys[b].ensure((size_t)slab * 4, err));
    CUZK_TRY(sc.points[b].ensure((size_t)slab * sizeof(A), err));
  }
  CUZK_TRY(sc.count.ensure((size_t)slots_ub * 4, err));
  CUZK_TRY(sc.pos.ensure((size_t)slots_ub * 4, err));
  CUZK_TRY(sc.prefix.ensure((size_t)slots_ub * sizeof(F), err));
  CUZK_TRY(sc.scan_temp.ensure(std::max<size_t>(scan_bytes, 16), err));
  CUZK_TRY(sc.rest_keys.ensure((size_t)cap * 4, err));
  CUZK_TRY(sc.rest_points.ensure((size_t)cap * sizeof(A), err));
  CUZK_CU(cudaMemsetAsync(words + kWordRest, 0, 2 * sizeof(uint32_t), s));  // rest length, overflow

  KernelTrace trace("msm_affine_levels", s);
  uint32_t* count = sc.count.as<uint32_t>();
  uint32_t* pos = sc.pos.as<uint32_t>();
  F* prefix = sc.prefix.as<F>();
  const PointList<A> rest_list{sc.rest_keys.as<uint32_t>(), sc.rest_points.as<A>(), cap};
  for (uint32_t s0 = 0; s0 < live; s0 += slab) {
    const uint32_t len = std::min(slab, live - s0);
    const uint32_t ub = affine_slots(len);
    k::set_word<<<1, 1, 0, s>>>(words, kWordSlab, len);
    CUZK_LAUNCHED("msm_affine_set_word");
    int cur = -1;  // -1: the plan's list; else the level buffer `cur`
    for (int l = 0; l < levels; l++) {
      const bool last = l == levels - 1;
      const int nxt = cur == 0 ? 1 : 0;
      const PointList<A> out =
          last ? rest_list : PointList<A>{sc.keys[nxt].as<uint32_t>(), sc.points[nxt].as<A>(), slab};
      const int n_word = cur < 0 ? kWordSlab : cur;  // buffer b's length is word b
      const uint32_t per = msm_affine_per_thread(((uint64_t)len >> (l + 1)) + 1, knobs.per);
      const uint32_t blocks = ceil_div(ceil_div(ub, per), kAffineBlock);
      const int base_word = last ? kWordRest : -1;
      auto level = [&](auto src) -> cuzk_status {
        k::count<<<ceil_div(ub, 256), 256, 0, s>>>(src, words, n_word, ub, count);
        CUZK_LAUNCHED("msm_affine_count");
        size_t bytes = sc.scan_temp.bytes();
        CUZK_CU(cub::DeviceScan::ExclusiveSum(sc.scan_temp.as(), bytes, count, pos, ub, s));
        k::pairs<A><<<blocks, kAffineBlock, 0, s>>>(src, words, n_word, per, prefix, pos, out, base_word);
        CUZK_LAUNCHED("msm_affine_pairs");
        k::level_end<<<1, 1, 0, s>>>(count, pos, ub, words, last ? kWordRest : nxt, cap);
        CUZK_LAUNCHED("msm_affine_level_end");
        return CUZK_OK;
      };
      if (cur < 0) CUZK_TRY(level(IndexedPoints<A>{keys + s0, vals + s0, points}));
      else CUZK_TRY(level(PointList<A>{sc.keys[cur].as<uint32_t>(), sc.points[cur].as<A>(), slab}));
      cur = nxt;
    }
  }
  trace.mark("levels");
  CUZK_CU(cudaMemcpyAsync(sc.host_words + 1, words + kWordRest, 2 * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
  CUZK_CU(cudaStreamSynchronize(s));
  rest.levels = levels;
  if (sc.host_words[2]) return CUZK_OK;  // overflow: the caller walks the plan's list
  rest.used = true;
  rest.count = sc.host_words[1];
  rest.keys = sc.rest_keys.as<uint32_t>();
  rest.points = sc.rest_points.as<A>();
  return CUZK_OK;
}

}  // namespace cuzk::cuda
