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
