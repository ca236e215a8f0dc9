// Kernel dispatch for a GPU engine's MSMs: one plan per point group over its scalars (all of them,
// or its support's gathered on the device: same scalars, same sorted digits for every section of
// the group), then each section's MSM over that plan, its points resident or streamed in first
// (the key store says which), each timed as its phase on the device's timeline.
#pragma once

#include "cuda/context/device_context.cuh"
#include "cuda/engine/key_store.cuh"

namespace cuzk::cuda {

// out[j] = scalars[index[j]] (32-byte scalars as two V = uint4): the scalars of a compacted point
// set, in its order.
template <class V>
__global__ void gather_scalars(const V* __restrict__ scalars, const uint32_t* __restrict__ index, uint32_t m,
                               V* __restrict__ out) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m) return;
  const V* src = scalars + 2 * (size_t)index[j];
  out[2 * (size_t)j] = src[0];
  out[2 * (size_t)j + 1] = src[1];
}

template <class C>
class GpuMsmDispatch {
  using PointSection = formats::PointSection;

 public:
  GpuMsmDispatch(DeviceContext* dev, GpuKeyStore<C>& store) : dev_(dev), store_(store) {}

  // The device's plan over group g's scalars: all of them, or those of its support gathered.
  cuzk_status plan_group(engine::PointGroup g, const uint32_t* scalars, std::string& err) {
    const engine::Support& sup = store_.support(g);
    const uint32_t m = (uint32_t)sup.size();
    if (!sup.all && m > 0) {
      gather_scalars<<<ceil_div(m, 256), 256, 0, dev_->stream>>>(reinterpret_cast<const uint4*>(scalars),
                                                                store_.support_index(g), m, store_.gathered_scalars());
      CUZK_LAUNCHED("gather_scalars");
      scalars = reinterpret_cast<const uint32_t*>(store_.gathered_scalars());
    }
    const MsmBases& copies = store_.h_copies();
    if (g == engine::kGroupH && copies.copies > 1)
      return msm_plan<typename C::Fr::Params>(dev_->plan, scalars, m, true, copies.c, dev_->stream, err, copies.copies);
    return msm_plan<typename C::Fr::Params>(dev_->plan, scalars, m, true, 0, dev_->stream, err);
  }

  // Section s's MSM with the current plan: its points resident, or streamed in first (timed as
  // UPLOAD of proof p). `from`: the mark the phase starts at (-1: now).
  template <int G, class HX>
  cuzk_status run(PointSection s, cuzk_phase phase, size_t p, HX* out, int from, std::string& err) {
    GpuTimeline& tl = dev_->timeline;
    if (from < 0) from = tl.mark(err);
    const bool copies = s == formats::kSecH && store_.h_copies().copies > 1;
    if (copies && !store_.h_copies().serves(dev_->plan)) {
      err = "msm_h: the plan's windows are not those of the H copies";
      return CUZK_ERR_INTERNAL;
    }
    const void* points = store_.resident_points(s);
    if (store_.streamed(s)) {
      int u0 = tl.mark(err);
      CUZK_TRY(store_.stream_in(s, &points, err));
      tl.span(u0, tl.mark(err), CUZK_PHASE_UPLOAD, p);
    }
    return msm_over<G>(points, phase, p, out, from, err);
  }

  // The MSM of the current plan over `points` (device) into out, timed as `phase` from mark `from`.
  template <int G, class HX>
  cuzk_status msm_over(const void* points, cuzk_phase phase, size_t p, HX* out, int from, std::string& err) {
    using A = typename Group<C, G>::Affine;
    GpuTimeline& tl = dev_->timeline;
    MsmMarks marks;
    marks.timeline = &tl;
    CUZK_TRY((msm_execute<C, G>(dev_->plan, static_cast<const A*>(points), dev_->msm, dev_->stream, out, err, &marks)));
    tl.span(from, marks.ones_done, phase, p);
    if (dev_->plan.n_ones) tl.span(marks.buckets_done, marks.ones_done, CUZK_PHASE_BATCH_ADD, p);
    return CUZK_OK;
  }

 private:
  DeviceContext* dev_;
  GpuKeyStore<C>& store_;
};

}  // namespace cuzk::cuda
