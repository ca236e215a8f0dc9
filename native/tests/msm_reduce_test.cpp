// The GPU MSM's bucket reduction, its arithmetic run on the host (cuda/msm/reduce_steps.hpp: the
// functions the kernels run per thread, and the host combination): over a toy group (integers
// mod 2^61 - 1 under addition) the segments, the fold of every block's lanes, the per-window sums
// and msm_combine must give sum_w 2^(c w) sum_b b B_{w,b} plus the ones' sum, for every window c
// the MSM chooses (2..22) and several window counts; and every window's shape must tile its
// buckets with a power-of-two count of segments (the fold's bit arithmetic assumes it). Then an
// MSM whose windows are taken in groups (cuda/msm/digit_steps.hpp: the digits msm_digits emits,
// group by group; each group's buckets accumulated and reduced into its windows' sums, as
// msm_execute_into does): the combined sums equal sum_i s_i P_i for every window c and grouping,
// with and without the points' copies, and with small scalars (below 2^32) taking only their own
// windows (msm_choose_windows: its choices, and that they fit the workspace priced for the MSM).
// Last, a pass's chunks at their own windows, their sums kept in sets by window size (SumSets, as
// the dispatch keeps them): the pass's sum.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "check.hpp"
#include "cuda/engine/sum_sets.hpp"
#include "cuda/msm/digit_steps.hpp"
#include "cuda/msm/msm_sizes.hpp"
#include "cuda/msm/reduce_steps.hpp"

namespace {

constexpr uint64_t kP = (1ull << 61) - 1;

// A cyclic group of prime order: enough to check linear bookkeeping.
struct Toy {
  uint64_t v = 0;
  static Toy infinity() { return Toy{}; }
  Toy add(const Toy& o) const {
    uint64_t s = v + o.v;
    return Toy{s >= kP ? s - kP : s};
  }
  Toy dbl() const { return add(*this); }
  Toy neg() const { return Toy{v == 0 ? 0 : kP - v}; }
};

uint64_t mul_mod(uint64_t a, uint64_t b) { return (uint64_t)((unsigned __int128)a * b % kP); }

// What the kernels and the host do for window c over nwin windows of buckets `b` (nwin x nb,
// bucket k at index k - 1) and the ones' sum `ones`.
Toy reduce(int c, int nwin, const std::vector<Toy>& b, Toy ones) {
  using namespace cuzk::cuda;
  const MsmShape sh = MsmShape::of(c, 1);
  std::vector<Toy> seg_t((size_t)nwin * sh.S), seg_r((size_t)nwin * sh.S);
  for (uint32_t g = 0; g < (uint32_t)nwin * sh.S; g++)  // msm_segments: one thread a segment
    segment_sums(b.data() + (size_t)(g / sh.S) * sh.nb + (size_t)(g % sh.S) * sh.L, sh.L, seg_t[g], seg_r[g]);
  const uint32_t n_fold = (uint32_t)nwin * (sh.J + 1), lanes = 64;
  std::vector<Toy> sums(msm_sums_points(c, nwin));
  sums[0] = ones;
  for (uint32_t block = 0; block < n_fold * sh.parts; block++) {  // msm_fold, then msm_sum_groups
    Toy acc;
    for (uint32_t lane = 0; lane < lanes; lane++)
      acc = acc.add(fold_share(seg_t.data(), seg_r.data(), sh.S, sh.J, sh.parts, block, lane, lanes));
    sums[1 + block / sh.parts] = sums[1 + block / sh.parts].add(acc);
  }
  return msm_combine(sums.data(), c, nwin);
}

void windows() {
  std::mt19937_64 rng(5);
  for (int c = 2; c <= 22; c++) {
    const cuzk::cuda::MsmShape sh = cuzk::cuda::MsmShape::of(c, 1);
    CHECK(sh.L * sh.S == sh.nb && (sh.S & (sh.S - 1)) == 0 && (1u << sh.J) == sh.S);
    CHECK(sh.parts >= 1 && sh.parts <= 32 && sh.parts <= sh.S);  // msm_sum_groups: one warp a (w, j)
    for (int nwin : {1, 2, 3}) {
      if (c > 18 && nwin > 1) continue;  // the widest windows once: millions of buckets
      std::vector<Toy> b((size_t)nwin * sh.nb);
      for (Toy& x : b) x.v = rng() % kP;
      if (c >= 16) for (size_t i = 0; i < b.size(); i += 3) b[i].v = 0;  // empty buckets among them
      const Toy ones{rng() % kP};
      uint64_t expect = ones.v;
      for (int w = 0; w < nwin; w++) {
        uint64_t window = 0;
        for (uint32_t k = 1; k <= sh.nb; k++) window = (window + mul_mod(k, b[(size_t)w * sh.nb + k - 1].v)) % kP;
        uint64_t weight = 1;
        for (int i = 0; i < c * w; i++) weight = (weight * 2) % kP;
        expect = (expect + mul_mod(weight, window)) % kP;
      }
      const Toy got = reduce(c, nwin, b, ones);
      if (got.v != expect) std::fprintf(stderr, "c = %d, %d windows: %llu, expected %llu\n", c, nwin,
                                        (unsigned long long)got.v, (unsigned long long)expect);
      CHECK(got.v == expect);
    }
  }
}

// s mod kP for a scalar of eight little-endian 32-bit words.
uint64_t scalar_mod(const uint32_t (&s)[9]) {
  uint64_t r = 0;
  for (int k = 7; k >= 0; k--) r = (uint64_t)((((unsigned __int128)r << 32) + s[k]) % kP);
  return r;
}

// sum_i s_i P_i through the GPU's steps at window c, its windows in groups of `group_windows` (or,
// with copies, over `copies` copies of the points: copy j of P is 2^(j c V) P, V windows a copy).
// windows: those reduced (0: every window of the field); a small scalar's digits (2 <= s < 2^32)
// are emitted for the first small_windows of them only, as msm_sort_windows does.
// Its folded sums are added into `sums` (msm_sums_points(c, nwin) of them at least, nwin: the
// windows reduced) and combined by grouped_msm.
// The reduction of group_nwin windows of buckets (window c) into their folded sums at out[0..]
// (msm_reduce_into at sums + 1 + first window's).
void reduce_buckets(const std::vector<Toy>& buckets, int c, int group_nwin, Toy* out) {
  using namespace cuzk::cuda;
  const MsmShape sh = MsmShape::of(c, 1);
  const uint32_t per_window = sh.J + 1;
  std::vector<Toy> seg_t((size_t)group_nwin * sh.S), seg_r((size_t)group_nwin * sh.S);
  for (uint32_t g = 0; g < (uint32_t)group_nwin * sh.S; g++)
    segment_sums(buckets.data() + (size_t)(g / sh.S) * sh.nb + (size_t)(g % sh.S) * sh.L, sh.L, seg_t[g], seg_r[g]);
  for (uint32_t block = 0; block < (uint32_t)group_nwin * per_window * sh.parts; block++) {
    Toy acc;
    for (uint32_t lane = 0; lane < 64; lane++)
      acc = acc.add(fold_share(seg_t.data(), seg_r.data(), sh.S, sh.J, sh.parts, block, lane, 64));
    out[block / sh.parts] = out[block / sh.parts].add(acc);
  }
}

// The buckets of windows [first, last) of window c (key ((w - first) << (c - 1)) + d - 1), added
// into `buckets`; a small scalar's digits only in its first small_windows windows.
void add_buckets(const std::vector<std::array<uint32_t, 9>>& scalars, const std::vector<Toy>& pts, uint32_t n, int c,
                 int first, int last, int per_copy, int copies, int small_windows, std::vector<Toy>& buckets) {
  using namespace cuzk::cuda;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t s[9];
    std::copy(scalars[i].begin(), scalars[i].end(), s);
    const int own_last = small_scalar_bits(s) >= 2 ? std::min(last, small_windows) : last;
    scalar_digits(s, c, first, own_last, per_copy, [&](int, int local, int copy, uint32_t d, uint32_t neg) {
      if (d == 0) return;
      const size_t key = ((size_t)(local - (copies > 1 ? 0 : first)) << (c - 1)) + d - 1;
      const Toy p = pts[(size_t)copy * n + i];
      buckets[key] = buckets[key].add(neg ? p.neg() : p);
    });
  }
}

void msm_sums(const std::vector<std::array<uint32_t, 9>>& scalars, const std::vector<Toy>& points, int c,
              int group_windows, int copies, int windows, int small_windows, std::vector<Toy>& sums) {
  using namespace cuzk::cuda;
  const int bits = 255;
  if (windows == 0) windows = msm_windows(bits, c);
  const int per_copy = copies > 1 ? msm_windows_per_copy(bits, c, copies) : windows, nwin = per_copy;  // reduced windows
  const uint32_t n = (uint32_t)points.size();
  // The copies' points, as bases.cuh lays them out: copy j at j * n.
  std::vector<Toy> pts(points);
  for (int j = 1; j < msm_copies_used(bits, c, copies); j++)
    for (uint32_t i = 0; i < n; i++) {
      Toy p = pts[(size_t)(j - 1) * n + i];
      for (int k = 0; k < c * per_copy; k++) p = p.dbl();
      pts.push_back(p);
    }
  const MsmShape sh = MsmShape::of(c, 1);
  const uint32_t per_window = sh.J + 1;
  if (sums.size() < msm_sums_points(c, nwin)) sums.resize(msm_sums_points(c, nwin));
  const int step = copies > 1 ? windows : group_windows;
  for (int first = 0; first < windows; first += step) {
    const int last = std::min(windows, first + step), group_nwin = copies > 1 ? nwin : last - first;
    std::vector<Toy> buckets((size_t)group_nwin * sh.nb);
    add_buckets(scalars, pts, n, c, first, last, per_copy, copies, small_windows, buckets);
    // The group's reduction into its windows' sums (msm_reduce_into at sums + first * per_window).
    reduce_buckets(buckets, c, group_nwin, sums.data() + (size_t)(copies > 1 ? 0 : first) * per_window + 1);
  }
}
Toy grouped_msm(const std::vector<std::array<uint32_t, 9>>& scalars, const std::vector<Toy>& points, int c,
                int group_windows, int copies, int windows = 0, int small_windows = 1 << 20) {
  using namespace cuzk::cuda;
  if (windows == 0) windows = msm_windows(255, c);
  std::vector<Toy> sums;
  msm_sums(scalars, points, c, group_windows, copies, windows, small_windows, sums);
  return msm_combine(sums.data(), c, copies > 1 ? msm_windows_per_copy(255, c, copies) : windows);
}

void windows_in_groups() {
  std::mt19937_64 rng(11);
  const uint32_t n = 40;
  std::vector<Toy> points(n);
  std::vector<std::array<uint32_t, 9>> scalars(n);
  for (uint32_t i = 0; i < n; i++) {
    points[i].v = rng() % kP;
    for (int k = 0; k < 8; k++) scalars[i][k] = (uint32_t)rng();
    scalars[i][7] &= 0x7fffffffu;  // 255 bits
    scalars[i][8] = 0;
  }
  // Edge scalars: 0, 1, all ones (every digit borrows), 2^254.
  scalars[0].fill(0);
  scalars[1].fill(0);
  scalars[1][0] = 1;
  scalars[2].fill(0xffffffffu);
  scalars[2][7] = 0x7fffffffu;
  scalars[2][8] = 0;
  scalars[3].fill(0);
  scalars[3][7] = 0x40000000u;
  uint64_t expect = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t s[9];
    std::copy(scalars[i].begin(), scalars[i].end(), s);
    expect = (expect + mul_mod(scalar_mod(s), points[i].v)) % kP;
  }
  int runs = 0;
  for (int c = 2; c <= 16; c++) {
    const int windows = cuzk::cuda::msm_windows(255, c);
    for (int groups : {1, 2, 3, 5, 16}) {
      const int gw = cuzk::cuda::msm_group_windows(windows, groups);
      const Toy got = grouped_msm(scalars, points, c, gw, 1);
      if (got.v != expect) std::fprintf(stderr, "c = %d in %d groups of %d windows: wrong sum\n", c, groups, gw);
      CHECK(got.v == expect);
      runs++;
    }
    for (int copies : {2, 3}) {
      const Toy got = grouped_msm(scalars, points, c, windows, copies);
      if (got.v != expect) std::fprintf(stderr, "c = %d over %d copies: wrong sum\n", c, copies);
      CHECK(got.v == expect);
      runs++;
    }
  }
  std::printf("windows in groups: %d MSMs of %u points equal sum_i s_i P_i\n", runs, n);
}

// An MSM in chunks whose buckets are kept across them (msm_execute_into's kept: every window's
// buckets, each window group adding into its slice at first << (c - 1)), reduced once after the
// last chunk: the sum of the whole MSM, for every window, grouping and chunk size.
void kept_across_chunks() {
  using namespace cuzk::cuda;
  std::mt19937_64 rng(23);
  const uint32_t n = 45;
  std::vector<Toy> points(n);
  std::vector<std::array<uint32_t, 9>> scalars(n);
  uint64_t expect = 0;
  for (uint32_t i = 0; i < n; i++) {
    points[i].v = rng() % kP;
    scalars[i].fill(0);
    if (i % 5) {
      for (int k = 0; k < 8; k++) scalars[i][k] = (uint32_t)rng();
      scalars[i][7] &= 0x7fffffffu;
    } else {
      scalars[i][0] = (uint32_t)(rng() % 300);  // small ones among them
    }
    uint32_t s[9];
    std::copy(scalars[i].begin(), scalars[i].end(), s);
    expect = (expect + mul_mod(scalar_mod(s), points[i].v)) % kP;
  }
  int runs = 0;
  for (int c = 2; c <= 16; c++) {
    const int windows = msm_windows(255, c);
    const MsmShape sh = MsmShape::of(c, 1);
    for (int groups : {1, 2, 3, 5}) {
      const int gw = msm_group_windows(windows, groups);
      for (uint32_t q : {7u, 16u, 45u}) {
        std::vector<Toy> kept((size_t)windows * sh.nb);
        for (uint32_t j0 = 0; j0 < n; j0 += q) {
          const uint32_t m = std::min(q, n - j0);
          const std::vector<std::array<uint32_t, 9>> cs(scalars.begin() + j0, scalars.begin() + j0 + m);
          const std::vector<Toy> cp(points.begin() + j0, points.begin() + j0 + m);
          for (int first = 0; first < windows; first += gw) {
            const int last = std::min(windows, first + gw);
            std::vector<Toy> group((size_t)(last - first) * sh.nb);
            add_buckets(cs, cp, m, c, first, last, windows, 1, 1 << 20, group);
            const size_t at = (size_t)first << (c - 1);  // the kernel's slice of this group's windows
            for (size_t k = 0; k < group.size(); k++) kept[at + k] = kept[at + k].add(group[k]);
          }
        }
        std::vector<Toy> sums(msm_sums_points(c, windows));
        reduce_buckets(kept, c, windows, sums.data() + 1);
        const Toy got = msm_combine(sums.data(), c, windows);
        if (got.v != expect) std::fprintf(stderr, "c = %d, %d groups, chunks of %u, kept: wrong sum\n", c, groups, q);
        CHECK(got.v == expect);
        runs++;
      }
    }
  }
  std::printf("kept across chunks: %d MSMs of %u points equal sum_i s_i P_i\n", runs, n);
}

// Scalars below 2^32 take only their own windows: mixed with large ones (every window reduced,
// theirs the first few), alone (only theirs reduced), at every window, in groups, over copies.
void small_scalars() {
  using namespace cuzk::cuda;
  std::mt19937_64 rng(17);
  const uint32_t n = 48;
  std::vector<Toy> points(n);
  for (Toy& p : points) p.v = rng() % kP;
  int runs = 0;
  for (int small_bits : {2, 8, 9, 16, 31, 32}) {
    for (int mixed : {0, 1}) {
      std::vector<std::array<uint32_t, 9>> scalars(n);
      for (uint32_t i = 0; i < n; i++) {
        scalars[i].fill(0);
        if (mixed && i % 3 == 0) {  // large
          for (int k = 0; k < 8; k++) scalars[i][k] = (uint32_t)rng();
          scalars[i][7] &= 0x7fffffffu;
          scalars[i][1] |= 1;  // at least 2^32
        } else {  // small: below 2^small_bits, the top one at exactly small_bits bits
          const uint64_t top = 1ull << small_bits;
          uint64_t v = i == 1 ? top - 1 : i == 2 ? top / 2 : 2 + rng() % (top - 2);
          scalars[i][0] = (uint32_t)v;
        }
      }
      scalars[4].fill(0);  // a 0 and a 1 among them (not small: summed apart on the GPU)
      scalars[5].fill(0);
      scalars[5][0] = 1;
      uint64_t expect = 0;
      int longest = 0;
      for (uint32_t i = 0; i < n; i++) {
        uint32_t s[9];
        std::copy(scalars[i].begin(), scalars[i].end(), s);
        expect = (expect + mul_mod(scalar_mod(s), points[i].v)) % kP;
        longest = std::max(longest, small_scalar_bits(s));
      }
      CHECK(longest == small_bits);
      const uint64_t large = mixed ? (n + 2) / 3 : 0, small = n - large - 2;
      for (int c = 2; c <= 16; c++) {
        for (int forced : {0, 1}) {
          // The windows msm_plan takes: at this window (forced: every window reduced), or with no
          // large scalar only the small ones'.
          MsmWindowChoice wc = msm_choose_windows(small, small_bits, large, 255, 1, c);
          if (!forced && !large) wc.windows = wc.small_windows = msm_windows(small_bits, c);
          for (int groups : {1, 2, 3}) {
            const int gw = msm_group_windows(wc.windows, groups);
            const Toy got = grouped_msm(scalars, points, c, gw, 1, wc.windows, wc.small_windows);
            if (got.v != expect)
              std::fprintf(stderr, "small scalars of %d bits%s, c = %d, %d windows (%d small) in %d groups: wrong sum\n",
                           small_bits, mixed ? " with large ones" : "", c, wc.windows, wc.small_windows, groups);
            CHECK(got.v == expect);
            runs++;
          }
        }
        for (int copies : {2, 3}) {
          const MsmWindowChoice wc = msm_choose_windows(small, small_bits, large, 255, 1, c);
          const Toy got = grouped_msm(scalars, points, c, wc.windows, copies, 0, wc.small_windows);
          if (got.v != expect) std::fprintf(stderr, "small scalars of %d bits, c = %d over %d copies: wrong sum\n", small_bits, c, copies);
          CHECK(got.v == expect);
          runs++;
        }
      }
    }
  }
  std::printf("small scalars: %d MSMs of %u points equal sum_i s_i P_i\n", runs, n);
}

// An MSM pass's chunks each planned at their own window (msm_choose_windows over the chunk's
// small and large scalars), their sums added into the set of their window size (SumSets: a plan
// of fewer windows into the first ones), a chunk whose size finds no set planned again at set 0's,
// each set combined once at its most windows: the sum of every chunk. Chunks: the one with the
// public inputs (large scalars among bytes), bytes, bits only, 32-bit counters; with more window
// sizes than sets too.
void pass_sum_sets() {
  using namespace cuzk::cuda;
  std::mt19937_64 rng(29);
  // Enough scalars a chunk that its bytes take one window (c = 9), as a PoRep chunk's do.
  const uint32_t q = 1u << 17;
  // Each pass's chunks by their scalars' bits: 0 only 0s and 1s, -8 bytes with the 4 public inputs
  // (large), else b-bit values. A bytes chunk before a 16-bit one or the inputs': the same window,
  // one window, then more. The last pass has more window sizes than sets.
  const std::vector<std::vector<int>> passes = {
      {-8, 8, 0, 32, 8, 16}, {16, 8, 32, 0, 8, -8}, {8, 16, 12, 15, 18, 24, 32, -8}};
  int right = 0, replanned = 0, widened = 0, kept_chunks = 0, mixed_sets = 0;
  for (const std::vector<int>& kinds : passes) {
    const uint32_t chunks = (uint32_t)kinds.size(), n = q * chunks;
    std::vector<Toy> points(n);
    for (Toy& p : points) p.v = rng() % kP;
    std::vector<std::array<uint32_t, 9>> scalars(n);
    for (uint32_t i = 0; i < n; i++) {
      scalars[i].fill(0);
      const int kind = kinds[i / q];
      if (kind == -8 && i % q < 4) {  // a public input: large
        for (int k = 0; k < 8; k++) scalars[i][k] = (uint32_t)rng();
        scalars[i][7] &= 0x7fffffffu;
        scalars[i][1] |= 1;
      } else {
        const int bits = kind == 0 ? 1 : kind < 0 ? -kind : kind;
        scalars[i][0] = (uint32_t)(rng() % (1ull << bits));
      }
    }
    uint64_t expect = 0;
    for (uint32_t i = 0; i < n; i++) {
      uint32_t s[9];
      std::copy(scalars[i].begin(), scalars[i].end(), s);
      expect = (expect + mul_mod(scalar_mod(s), points[i].v)) % kP;
    }
    const int c0 = msm_window_bits(q, 255);
    SumSets sets;
    sets.reset(c0, msm_windows(255, c0));
    std::vector<Toy> set_sums[SumSets::kCount];
    // As the dispatch: a chunk of few buckets adds them into its set's kept buckets, reduced once
    // at the end into the set's sums, which other chunks of the same window reduce into directly.
    std::vector<Toy> kept[SumSets::kCount];
    bool reduced[SumSets::kCount] = {};
    for (uint32_t chunk = 0; chunk < chunks; chunk++) {
      const std::vector<std::array<uint32_t, 9>> cs(scalars.begin() + chunk * q, scalars.begin() + (chunk + 1) * q);
      const std::vector<Toy> cp(points.begin() + chunk * q, points.begin() + (chunk + 1) * q);
      uint64_t small = 0, large = 0;
      int small_bits = 0;
      for (const auto& sc : cs) {
        uint32_t s[9];
        std::copy(sc.begin(), sc.end(), s);
        const int b = small_scalar_bits(s);
        if (b < 0) large++;
        else if (b >= 2) small++, small_bits = std::max(small_bits, b);
      }
      // As the dispatch: only 0s and 1s, its ones' sum into set 0 (here at set 0's window).
      MsmWindowChoice wc = msm_choose_windows(small, small_bits, large, 255, 1, small + large ? 0 : c0);
      const SumSets before = sets;
      int set = small + large ? sets.take(wc.c, wc.windows) : 0;
      // A set that a later plan of more windows widened (bytes, then 16-bit values or the inputs).
      if (set > 0 && before.c[set] == wc.c && sets.nwin[set] > before.nwin[set]) widened++;
      if (set < 0) {
        wc = msm_choose_windows(small, small_bits, large, 255, 1, c0);
        set = sets.take(wc.c, wc.windows);
        replanned++;
        CHECK(set == 0);
        if (set != 0) continue;
      }
      if (small + large && SumSets::keeps(wc.c, wc.windows, 1, 1)) {
        sets.keep(set, wc.windows);
        kept[set].resize(SumSets::kKeptBuckets);
        add_buckets(cs, cp, q, wc.c, 0, wc.windows, wc.windows, 1, wc.small_windows, kept[set]);
        kept_chunks++;
      } else {
        msm_sums(cs, cp, wc.c, wc.windows, 1, wc.windows, wc.small_windows, set_sums[set]);
        reduced[set] = true;
      }
    }
    for (int set = 0; set < SumSets::kCount; set++) {
      if (!sets.kept_nwin[set]) continue;
      mixed_sets += reduced[set];
      set_sums[set].resize(std::max<size_t>(set_sums[set].size(), msm_sums_points(sets.c[set], sets.kept_nwin[set])));
      reduce_buckets(kept[set], sets.c[set], sets.kept_nwin[set], set_sums[set].data() + 1);
    }
    uint64_t got = 0;
    for (int set = 0; set < SumSets::kCount; set++)
      if (sets.c[set] && !set_sums[set].empty()) {
        set_sums[set].resize(std::max<size_t>(set_sums[set].size(), msm_sums_points(sets.c[set], sets.nwin[set])));
        got = (got + msm_combine(set_sums[set].data(), sets.c[set], sets.nwin[set]).v) % kP;
      }
    if (got != expect) std::fprintf(stderr, "a pass of %u chunks: wrong sum\n", chunks);
    CHECK(got == expect);
    right += got == expect;
  }
  CHECK(replanned > 0 && widened > 0);  // both paths taken
  CHECK(kept_chunks > 0 && mixed_sets > 0);  // kept buckets, and a set with kept and reduced chunks
  std::printf("pass sum sets: %d of %zu passes right (%d chunks planned again at the pass's window, %d kept their "
              "buckets, %d sets with both)\n", right, passes.size(), replanned, kept_chunks, mixed_sets);
}

// msm_choose_windows: without small scalars the count's window (msm_window_bits), forced windows
// reduce every window, a PoRep chunk's bytes take one window, and no choice holds more than the
// workspace MsmBuffers prices for the MSM, buffer by buffer.
void window_choices() {
  using namespace cuzk::cuda;
  for (uint64_t m : {1ull, 100ull, 5000ull, 1ull << 16, 1ull << 20, 3ull << 21, 1ull << 23, 1ull << 26})
    for (int groups : {1, 2, 4, 16}) {
      const MsmWindowChoice wc = msm_choose_windows(0, 0, m, 255, groups);
      CHECK(wc.c == msm_window_bits(m, 255) && wc.windows == msm_windows(255, wc.c) && wc.small_windows == 0);
    }
  const MsmWindowChoice forced = msm_choose_windows(1000, 8, 0, 255, 1, 16);
  CHECK(forced.c == 16 && forced.windows == msm_windows(255, 16) && forced.small_windows == 1);
  // A PoRep chunk's non-binary witness values are bytes: one window, a few hundred buckets.
  for (uint64_t m : {1ull << 18, 1ull << 21, 13ull << 20}) {
    const MsmWindowChoice wc = msm_choose_windows(m, 8, 0, 255, 1);
    if (wc.windows != 1) std::fprintf(stderr, "%llu bytes: c = %d, %d windows\n", (unsigned long long)m, wc.c, wc.windows);
    CHECK(wc.windows == 1 && wc.small_windows == 1 && wc.c >= 9);
  }
  // The carries are sized by msm_chunks_bound: at least the chunks of that many pairs, and never
  // less for more pairs.
  // The chunk with the public inputs: 4 large scalars among its bytes take the bytes' window.
  for (uint64_t m : {1ull << 21, 13ull << 20}) {
    const MsmWindowChoice bytes = msm_choose_windows(m, 8, 0, 255, 1), inputs = msm_choose_windows(m, 8, 4, 255, 1);
    CHECK(inputs.c == bytes.c && inputs.windows == msm_windows(255, inputs.c) && inputs.small_windows == 1);
  }
  std::mt19937_64 rng(23);
  uint64_t last_bound = 0;
  for (uint64_t total = 1; total < (3ull << 28); total += 1 + total / 997 + rng() % 64) {
    const uint64_t bound = msm_chunks_bound(total);
    CHECK(MsmShape::of(16, (uint32_t)std::min<uint64_t>(total, 0xffffffffu)).chunks <= bound && bound >= last_bound);
    last_bound = bound;
  }
  // The walk's chunks fitted to whole waves: never more chunks than the plan's (the carries' bound
  // holds), every pair in one chunk, and the waves full but for less than one thread in K.
  for (int t = 0; t < 20000; t++) {
    const uint32_t total = 1 + (uint32_t)(rng() % (1ull << (1 + rng() % 32)));
    const uint64_t resident = rng() % 4 == 0 ? 0 : 32 * (1 + rng() % 8192);
    const MsmShape sh = MsmShape::of(16, total), fit = sh.in_waves(total, resident);
    CHECK(fit.chunks <= sh.chunks && fit.K >= 1 && (uint64_t)fit.K * fit.chunks >= total &&
          (uint64_t)fit.K * (fit.chunks - 1) < total);
    const uint64_t waves = resident ? sh.chunks / resident : 0;
    if (!waves) {
      CHECK(fit.K == sh.K && fit.chunks == sh.chunks);
      continue;
    }
    const uint64_t threads = waves * resident;
    CHECK(fit.chunks <= threads && (uint64_t)fit.chunks * fit.K >= threads * (fit.K - 1) && fit.K >= sh.K);
  }
  // A BLS12-381 G1 MSM of 2^24 (13 windows at c = 20) on 132 SMs of three 128-thread blocks each:
  // 425984 chunks of 512 (8.4 waves) become 405398 of 538 (8 waves less 106 threads).
  {
    const MsmShape fit = MsmShape::of(20, 218103782u).in_waves(218103782u, 132 * 3 * 128);
    CHECK(MsmShape::of(20, 218103782u).chunks == 425984 && fit.K == 538 && fit.chunks == 405398);
  }
  int checked = 0;
  for (int t = 0; t < 20000; t++) {
    const int bits = rng() % 2 ? 255 : 254, groups = 1 + (int)(rng() % 16), small_bits = 2 + (int)(rng() % 31);
    const uint64_t m = 1 + rng() % (1ull << (4 + rng() % 23));
    const uint64_t small = rng() % 4 == 0 ? m : rng() % 4 == 0 ? 0 : rng() % (m + 1), large = m - small;
    const MsmWindowChoice wc = msm_choose_windows(small, small_bits, large, bits, groups);
    CHECK(wc.c >= 2 && wc.c <= 22 && wc.small_windows <= wc.windows);
    CHECK(wc.windows == msm_windows(large || !small ? bits : small_bits, wc.c) || wc.windows == msm_windows(bits, wc.c));
    if (small) CHECK(wc.small_windows == std::min(wc.windows, msm_windows(small_bits, wc.c)));
    const int at_once = msm_group_windows(wc.windows, groups);
    const uint64_t pairs = large * at_once + small * std::min(at_once, wc.small_windows);
    const MsmBuffers limit = MsmBuffers::of(m, bits, 1, groups);
    const MsmExecuteSizes z = MsmExecuteSizes::of(wc.c, wc.windows, (uint32_t)std::min<uint64_t>(pairs, 0xffffffffu), 1, at_once);
    const bool fits = 16 * pairs <= limit.bytes[1] && z.buckets <= limit.bytes[3] && 2 * z.carry <= limit.bytes[4] &&
                      z.tail_key <= limit.bytes[5] && z.long_runs <= limit.bytes[6] && 2 * z.segments <= limit.bytes[7] &&
                      z.fold_parts <= limit.bytes[9];  // (the sums: the dispatch's, sized for any window)
    if (!fits)
      std::fprintf(stderr, "%llu small (%d bits) + %llu large in %d groups: c = %d, %d windows beyond the priced workspace\n",
                   (unsigned long long)small, small_bits, (unsigned long long)large, groups, wc.c, wc.windows);
    CHECK(fits);
    checked++;
  }
  std::printf("window choices: %d random shapes within the priced workspace\n", checked);
}

}  // namespace

int main() {
  windows();
  windows_in_groups();
  kept_across_chunks();
  small_scalars();
  window_choices();
  pass_sum_sets();
  return cuzk_test::finish("msm_reduce_test");
}
