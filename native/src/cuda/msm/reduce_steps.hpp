// The bucket reduction's arithmetic, in plain C++ (__host__ __device__): the kernels of msm.cuh
// run these per thread, and a host test runs the same over a toy group to check that the segments,
// the fold and the host combination give sum_b b * B_b for every window shape (MsmShape).
//
// Window w's buckets B_1 .. B_nb (stored at index b - 1) are cut into S segments of L. Segment s's
// running sums from the top give T_s = sum (b - sL) B_b and R_s = sum B_b; then
// sum_b b B_b = sum_s T_s + L * sum_s s R_s = T + L * sum_j 2^j U_j, with U_j the sum of R_s over
// the segments s whose bit j is set (J bits index a segment).
#pragma once

#include <cstdint>

#include "cuda/msm/msm_sizes.hpp"
#include "util/hd.hpp"

namespace cuzk::cuda {

// T_s and R_s of one segment of L buckets starting at b.
template <class X>
CUZK_HD void segment_sums(const X* b, uint32_t L, X& t, X& r) {
  r = X::infinity();
  t = X::infinity();
  for (int i = (int)L - 1; i >= 0; i--) {
    r = r.add(b[i]);
    t = t.add(r);
  }
}

// The segments split evenly over `threads` threads (msm_segments_split) so that they fill whole
// waves of the device, not leaving a last wave of a few blocks: thread g takes the buckets
// [split_begin(g), split_begin(g + 1)) of all q = nwin * nb, cut where segments end. With
// threads <= q / L each range holds at least L buckets, so a segment is cut at most once, at
// offset x: its lower part [0, x) is the thread before's, its upper part [x, L) the thread's own:
//   T_s = t_lower + t_upper + x * r_upper,  R_s = r_lower + r_upper
// (t_upper counts its buckets from x). A thread writes its whole segments' and its lower part's
// sums to seg_t and seg_r, and its upper part's t and r into its own first two buckets, which it
// has read by then; join_segment adds them in.
// The segments' threads of the bucket reduction: 0 (one thread a segment) when they fill whole
// waves of the device or less than one, else the whole waves they fill, the segments split over
// them. resident: the split kernel's threads the device runs at once.
inline uint32_t msm_segment_threads(uint64_t segments, uint64_t resident) {
  const uint64_t waves = resident ? segments / resident : 0;
  return waves && segments % resident ? (uint32_t)(waves * resident) : 0;
}

CUZK_HD uint64_t split_begin(uint64_t g, uint64_t threads, uint64_t q) { return g * q / threads; }

template <class X>
CUZK_HD void split_segments(X* b, uint32_t L, uint64_t q0, uint64_t q1, X* seg_t, X* seg_r) {
  const uint64_t s0 = q0 / L, s1 = (q1 - 1) / L;
  for (uint64_t sg = s1 + 1; sg-- > s0;) {  // from the top: the first two buckets are read last
    const uint32_t lo = sg == s0 ? (uint32_t)(q0 - sg * L) : 0, hi = sg == s1 ? (uint32_t)(q1 - sg * L) : L;
    X t, r;
    segment_sums(b + sg * L + lo, hi - lo, t, r);
    if (lo == 0) {
      seg_t[sg] = t;
      seg_r[sg] = r;
    } else {
      b[q0] = t;
      b[q0 + 1] = r;
    }
  }
}

// The upper part left at q0 (the start of a thread's range) added into its segment's sums; nothing
// where q0 is a segment's first bucket. L < 2^16.
template <class X>
CUZK_HD void join_segment(const X* b, uint32_t L, uint64_t q0, X* seg_t, X* seg_r) {
  const uint64_t sg = q0 / L;
  const uint32_t x = (uint32_t)(q0 - sg * L);
  if (!x) return;
  const X r = b[q0 + 1];
  X xr = X::infinity();
  for (int i = 15; i >= 0; i--) {
    xr = xr.dbl();
    if ((x >> i) & 1) xr = xr.add(r);
  }
  seg_t[sg] = seg_t[sg].add(b[q0]).add(xr);
  seg_r[sg] = seg_r[sg].add(r);
}

// Fold block `block` (window w, sum j, part; msm_fold's grid of nwin * (J + 1) * parts blocks):
// lane `lane` of `lanes` sums its share. For j < J the block walks only the S / 2 segments with
// bit j set (k with a 1 inserted at bit j), so no lane idles on the others; j = J sums every T_s.
template <class X>
CUZK_HD X fold_share(const X* seg_t, const X* seg_r, uint32_t S, int J, uint32_t parts, uint32_t block, uint32_t lane,
                     uint32_t lanes) {
  const uint32_t part = block % parts, wj = block / parts;
  const uint32_t w = wj / (J + 1), j = wj % (J + 1);
  const bool all = (int)j == J;
  const uint32_t count = all ? S : S / 2;
  const uint32_t per = (count + parts - 1) / parts, k0 = part * per, k1 = k0 + per < count ? k0 + per : count;
  const X* src = (all ? seg_t : seg_r) + (size_t)w * S;
  const uint32_t low = all ? 0 : (1u << j) - 1;
  X acc = X::infinity();
  for (uint32_t k = k0 + lane; k < k1; k += lanes) {
    const uint32_t s = all ? k : ((k & ~low) << 1) | (1u << j) | (k & low);
    acc = acc.add(src[s]);
  }
  return acc;
}

// The MSM's point from its partial sums on the host (msm_sums_points' layout for window c and nwin
// reduced windows: the ones' sum, then per window U_0 .. U_{J-1}, T): per window
// T + L * sum_j 2^j U_j, then Horner over the windows (top first), plus the ones' sum. A chain of
// doublings is cheapest here, on one core.
template <class HX>
HX msm_combine(const HX* sums, int c, int nwin) {
  const MsmShape sh = MsmShape::of(c, 1);
  const HX* fold = sums + 1;
  HX total = HX::infinity();
  for (int w = nwin - 1; w >= 0; w--) {
    for (int k = 0; k < c; k++) total = total.dbl();
    const HX* f = fold + (size_t)w * (sh.J + 1);
    HX u = HX::infinity();
    for (int j = sh.J - 1; j >= 0; j--) u = u.dbl().add(f[j]);
    for (uint32_t l = 1; l < sh.L; l <<= 1) u = u.dbl();
    total = total.add(u).add(f[sh.J]);
  }
  return total.add(sums[0]);
}

}  // namespace cuzk::cuda
