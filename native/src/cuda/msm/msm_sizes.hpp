// The sizes of a GPU MSM, plain C++: the window arithmetic (how a scalar is cut into signed
// digits, with and without precomputed copies of the points), the launch shape of the execute
// step, and the bytes of every buffer the plan and the execute step hold. msm.cuh sizes its
// buffers from here, and the memory plan (cuda/engine/gpu_costs.cpp) prices an MSM chunk with
// the same figures, on a machine without a GPU too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cuzk::cuda {

// Signed c-bit windows of a scalar of `bits` bits (one more bit: the top digit's carry).
inline int msm_windows(int bits, int c) { return (bits + 1 + c - 1) / c; }
// With `copies` precomputed copies of the points: the windows each copy takes (those the execute
// step reduces), and the copies that takes (at most `copies`; more would repeat a window count).
inline int msm_windows_per_copy(int bits, int c, int copies) {
  const int w = msm_windows(bits, c);
  return (w + copies - 1) / copies;
}
inline int msm_copies_used(int bits, int c, int copies) {
  const int v = msm_windows_per_copy(bits, c, copies);
  return (msm_windows(bits, c) + v - 1) / v;
}
// The largest window with copies (their buckets, 2^(c-1) per reduced window, take 1.6 GiB at
// 24 bits on BLS12-381 G1; without copies the chooser stops at 22, as measured in #4).
constexpr int kMsmMaxWindowWithCopies = 24;

// Below this many buckets in all, the reduction kernels run too few threads to fill the GPU and
// their time stops falling with the count (H200, one window per copy at 2^22: c = 22 27.8 ms,
// c = 20 29.0): with copies the chooser prices at least this many.
constexpr double kMsmReductionFloorBuckets = double(1u << 20);

// The most groups an MSM's windows are sorted and summed in (msm_plan's window_groups), and the
// windows of each group (the last may have fewer).
constexpr int kMsmMaxWindowGroups = 16;
inline int msm_group_windows(int windows, int groups) {
  groups = std::max(1, std::min(groups, windows));
  return (windows + groups - 1) / groups;
}

// Window size for m bucket-bound scalars of `bits` bits: minimises the mixed additions (m per
// window of the scalar) plus the bucket reduction (~3 additions per bucket per reduced window:
// with copies, per window of one copy).
inline int msm_window_bits(size_t m, int bits, int copies = 1) {
  int best = 2;
  double best_cost = 1e300;
  for (int c = 2; c <= (copies > 1 ? kMsmMaxWindowWithCopies : 22); c++) {
    int nwin = msm_windows(bits, c);
    // A top window of a few bits has a few huge buckets (measured on the H200: windows 15, 17
    // and 21 ran 2-5x slower than 16, 19 and 20 at 2^22-2^24 on BLS12-381): skip such sizes.
    int top_bits = bits + 1 - (nwin - 1) * c;
    if (top_bits < (c <= 8 ? (c + 1) / 2 : 8)) continue;
    double buckets = (double)msm_windows_per_copy(bits, c, copies) * (double)(1u << (c - 1));
    if (copies > 1) buckets = std::max(buckets, kMsmReductionFloorBuckets);
    double cost = (double)m * nwin + 3.0 * buckets;
    if (cost < best_cost) { best_cost = cost; best = c; }
  }
  return best;
}

// Launch shapes of the execute step, from the window c and the sorted pairs' count.
struct MsmShape {
  uint32_t nb, K, chunks, L, S, parts;
  int J;
  static MsmShape of(int c, uint32_t total) {
    MsmShape sh{};
    sh.nb = 1u << (c - 1);
    // ~256K chunk threads fill the GPU; longer chunks cost nothing but fewer threads. (Rounded up:
    // then no total has more chunks than msm_chunks_bound of a larger one.)
    uint32_t K = (uint32_t)(((uint64_t)total + (1u << 18) - 1) >> 18);
    sh.K = K < 16 ? 16 : K > 512 ? 512 : K;
    sh.chunks = (uint32_t)(((uint64_t)total + sh.K - 1) / sh.K);
    // Segments of L buckets, one thread each (2 additions a bucket either way). About 4096 a window
    // keep the GPU busy at a chunk's window (c = 16: 8 buckets a segment, 64K threads over 16
    // windows); at most 64 buckets a segment where the window is wide (fewer segments to fold).
    uint32_t L = sh.nb >> 12;
    L = L < 4 ? 4 : L > 64 ? 64 : L;
    sh.L = L < sh.nb ? L : sh.nb;
    sh.S = sh.nb / sh.L;
    sh.J = 0;
    while ((1u << sh.J) < sh.S) sh.J++;
    sh.parts = sh.S / 1024;  // msm_fold: 8-16 segments per thread, few block trees
    sh.parts = sh.parts < 1 ? 1 : sh.parts > 32 ? 32 : sh.parts;
    return sh;
  }
  // The same shape with the chunks lengthened until they fill whole waves of `resident` chunk
  // threads (what the device runs at once; 0: unknown, the shape as it is). The walk is bound by
  // the latency of its additions, so a last wave of a few blocks an SM costs more than its share
  // of the work. Never more chunks than before, so the carries' bound (msm_chunks_bound) holds.
  MsmShape in_waves(uint32_t total, uint64_t resident) const {
    MsmShape sh = *this;
    const uint64_t waves = resident ? chunks / resident : 0;
    if (!waves) return sh;
    const uint64_t threads = waves * resident;
    sh.K = (uint32_t)((total + threads - 1) / threads);
    sh.chunks = (uint32_t)((total + sh.K - 1) / sh.K);
    return sh;
  }
};

// The most chunk threads MsmShape gives any count of pairs up to `total`: what the carries are sized
// by, so that an MSM of fewer pairs than its workspace was priced for never needs more.
inline uint64_t msm_chunks_bound(uint64_t total) {
  return std::min((total + 15) / 16, std::max<uint64_t>(1u << 18, (total + 511) / 512));
}

// The buckets of window c over nwin reduced windows, XYZZ points of xyzz_bytes.
inline size_t msm_bucket_bytes(int c, int nwin, size_t xyzz_bytes) { return (size_t)nwin * ((size_t)1 << (c - 1)) * xyzz_bytes; }

// The partial sums an MSM leaves on the device for the host to combine, for window c and nwin
// reduced windows: the ones' sum, then per window J + 1 folded sums (msm_fold's output). They are
// linear in the buckets, so the sums of several chunks over the same window add up point by point
// into one such set (MsmExecuteSizes::sums), combined once.
inline uint32_t msm_sums_points(int c, int nwin) {
  const MsmShape sh = MsmShape::of(c, 1);
  return 1 + (uint32_t)nwin * (uint32_t)(sh.J + 1);
}

// Bytes of the execute step's device scratch (MsmScratch) for nwin reduced windows of window c
// over `total` sorted pairs, with XYZZ points of xyzz_bytes.
// The buckets, segments and folds are those of the windows summed at a time (group_nwin; 0: all nwin).
struct MsmExecuteSizes {
  size_t buckets, carry, tail_key, long_runs, segments, sums, fold_parts;
  static MsmExecuteSizes of(int c, int nwin, uint32_t total, size_t xyzz_bytes, int group_nwin = 0) {
    const MsmShape sh = MsmShape::of(c, total);
    const int at_once = group_nwin > 0 ? std::min(group_nwin, nwin) : nwin;
    const size_t n_fold = total ? (size_t)at_once * (sh.J + 1) : 0;
    MsmExecuteSizes z{};
    z.buckets = msm_bucket_bytes(c, at_once, xyzz_bytes);
    const size_t chunks = (size_t)msm_chunks_bound(total);
    z.carry = chunks * xyzz_bytes;  // and as much for the tails
    z.tail_key = chunks * 4;
    z.long_runs = (chunks / 32 + 2) * 4;
    z.segments = (size_t)at_once * sh.S * xyzz_bytes;  // each of seg_t and seg_r
    z.sums = (size_t)msm_sums_points(c, nwin) * xyzz_bytes;
    z.fold_parts = n_fold * sh.parts * xyzz_bytes;
    return z;
  }
  size_t total() const { return buckets + 2 * carry + tail_key + long_runs + 2 * segments + sums + fold_parts; }
};

// The device buffers one MSM over m points holds at its chosen window, without copies, buffer by
// buffer. Each is allocated on its own (MsmPlan, MsmScratch) and grows to the largest any MSM run
// with it asks for, so MSMs of several shapes on one plan and scratch hold, buffer by buffer, the
// largest of each.
struct MsmBuffers {
  static constexpr int kCount = 10;
  // The scalar plan's (MsmPlan) 0/1 split index lists, one window group's digit pairs
  // double-buffered for the sort, and the sort's temporary storage (cub's onesweep: a few
  // histograms; priced generously); the execute step's (MsmExecuteSizes) buckets, carries and
  // tails, tail keys, long runs, two segment arrays, sums and fold parts.
  size_t bytes[kCount] = {};
  static constexpr int kSumsBuffer = 8;
  static MsmBuffers of(uint64_t m, int bits, size_t xyzz_bytes, int groups = 1) {
    const int c = msm_window_bits((size_t)m, bits), nwin = msm_windows(bits, c), at_once = msm_group_windows(nwin, groups);
    return sized(m, m * (uint64_t)at_once, c, nwin, at_once, xyzz_bytes);
  }
  // Over m scalars whose largest window group sorts `pairs` pairs, at window c over nwin reduced
  // windows, at_once of them a group.
  static MsmBuffers sized(uint64_t m, uint64_t pairs, int c, int nwin, int at_once, size_t xyzz_bytes) {
    const uint32_t total = pairs >= (1ull << 32) ? 0xffffffffu : (uint32_t)pairs;
    const MsmExecuteSizes z = MsmExecuteSizes::of(c, nwin, total, xyzz_bytes, at_once);
    return MsmBuffers{{(size_t)(8 * m), (size_t)(16 * pairs), (size_t)(pairs / 8 + (32u << 20)), z.buckets, 2 * z.carry,
                       z.tail_key, z.long_runs, 2 * z.segments, z.sums, z.fold_parts}};
  }
  size_t total() const {
    size_t t = 0;
    for (size_t b : bytes) t += b;
    return t;
  }
};

// Scalars below 2^kMsmSmallBits (other than 0 and 1) are "small": a witness's bits and bytes
// packed into field elements, counters, indices. Their top digits are zero, so each takes only the
// windows its bits need (msm_windows(small_bits, c)) instead of every window of the field.
constexpr int kMsmSmallBits = 32;

// An MSM's window and its windows, for `small` scalars of at most small_bits bits and `large`
// ones of `bits` bits (0s and 1s dropped). windows: those reduced (every window of the field when
// a large scalar is among them or the window is forced, else only the small scalars'); the small
// scalars' digit pairs cover the first small_windows of them. With no small scalars this is
// msm_window_bits's choice. An automatic choice never holds more, buffer by buffer, than
// MsmBuffers::of prices for small + large scalars of `bits` bits in `groups` window groups, so a
// chunk's own window fits the workspace its plan was priced at.
struct MsmWindowChoice {
  int c = 2, windows = 0, small_windows = 0;
};
inline MsmWindowChoice msm_choose_windows(uint64_t small, int small_bits, uint64_t large, int bits, int groups,
                                          int window = 0) {
  const auto small_windows = [&](int c, int windows) {
    return small ? std::min(msm_windows(small_bits, c), windows) : 0;
  };
  if (window > 0) {
    const int w = msm_windows(bits, window);
    return MsmWindowChoice{window, w, small_windows(window, w)};
  }
  const uint64_t m = small + large;
  const MsmBuffers limit = MsmBuffers::of(m, bits, 1, groups);
  const int c0 = msm_window_bits((size_t)m, bits);
  MsmWindowChoice best{c0, msm_windows(bits, c0), small_windows(c0, msm_windows(bits, c0))};
  double best_cost = 1e300;
  for (int c = 2; c <= 22; c++) {
    const int top = large ? bits : small_bits, windows = msm_windows(top, c), ws = small_windows(c, windows);
    // As msm_window_bits: no top window of a few bits (a few huge buckets), unless the large
    // scalars are too few to fill one (the public inputs among a chunk of bytes).
    const int top_bits = top + 1 - (windows - 1) * c;
    const bool few_large = small > 0 && large <= (1ull << (c - 1));
    if (top_bits < (c <= 8 ? (c + 1) / 2 : 8) && !few_large) continue;
    const double cost = (double)large * windows + (double)small * ws + 3.0 * windows * (double)(1u << (c - 1));
    if (cost >= best_cost) continue;
    // The first window group holds the most pairs: every scalar's digits of its windows.
    const int at_once = msm_group_windows(windows, groups);
    const uint64_t pairs = large * (uint64_t)at_once + small * (uint64_t)std::min(at_once, ws);
    const MsmBuffers mine = MsmBuffers::sized(m, pairs, c, windows, at_once, 1);
    // (The sums, a few hundred points, are held by the caller of a chunked MSM at the most any
    // window takes: msm_dispatch.cuh.)
    bool fits = true;
    for (int i = 0; i < MsmBuffers::kCount; i++) fits = fits && (i == MsmBuffers::kSumsBuffer || mine.bytes[i] <= limit.bytes[i]);
    if (!fits) continue;
    best_cost = cost;
    best = MsmWindowChoice{c, windows, ws};
  }
  return best;
}

// Everything one MSM over m points holds on the device at its chosen window, without copies:
// the plan and the execute scratch at the larger of the G1 and G2 XYZZ sizes in use.
inline size_t msm_workspace_bytes(uint64_t m, int bits, size_t xyzz_bytes, int groups = 1) {
  return MsmBuffers::of(m, bits, xyzz_bytes, groups).total();
}

}  // namespace cuzk::cuda
