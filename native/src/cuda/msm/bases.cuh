// Precomputed copies of a fixed point set (the key's resident points) for msm.cuh's plan with
// copies > 1: copy j holds 2^(j*c*V) P_i at index j*n + i, V = msm_windows_per_copy(bits, c, t),
// so that an MSM of W windows becomes one over t*n points and V = ceil(W/t) windows. Copy 0 is the
// points themselves (the ones' batch addition and any plain MSM read it). Made once per point set
// on the GPU (msm/bases.cu): repeated doublings, then affine by batched inversion.
#pragma once

#include "cuda/msm/msm.cuh"

namespace cuzk::cuda {

struct MsmBases {
  uint32_t n = 0;  // points per copy
  int c = 0, copies = 0;
  size_t point_bytes = 0;
  DeviceBuffer points;
  size_t bytes() const { return (size_t)copies * n * point_bytes; }
  // The plan's windows are those these copies were made for (msm_plan(..., c, ..., copies)).
  bool serves(const MsmPlan& plan) const { return plan.n == n && plan.c == c && plan.copies == copies; }
  template <class A>
  const A* as() const { return points.as<const A>(); }
};

// out <- `copies` copies (at most those window c can use: msm_copies_used) of the n device points
// d_points, for window c. Synchronises; the scratch it takes (~2^22 points' worth) is freed after.
template <class HC, int G>
cuzk_status msm_bases_build(MsmBases& out, const typename Group<HC, G>::Affine* d_points, uint32_t n, int copies,
                            int c, cudaStream_t s, std::string& err);

}  // namespace cuzk::cuda
