// Kernel dispatch for a GPU engine's MSMs, in the plan's chunks. A pass takes the sections of one
// point group over the same scalars (their support's): chunk by chunk it makes one plan over the
// chunk's scalars (gathered on the device by the support, or a contiguous slice when the group
// keeps every point) and runs each section's MSM over the chunk's points with it, adding the
// partial sums. Scalars are on the device (the proof's witness or H scalars) or, for a group of
// proofs that share a streamed section, on the host: then each chunk's range of scalar indices
// comes up per proof. A streamed section's chunk comes up once for all of the pass's proofs, the
// next one copying while the current one is summed. Each chunk's work is timed as its section's
// phase on the device's timeline.
#pragma once

#include <vector>

#include "cuda/context/device_context.cuh"
#include "cuda/engine/key_store.cuh"

namespace cuzk::cuda {

// out[j] = scalars[index[j] - offset] (32-byte scalars as two V = uint4): a chunk of the scalars of
// a compacted point set, in its order, from a slice of the scalars that starts at index `offset`.
template <class V>
__global__ void gather_scalars(const V* __restrict__ scalars, const uint32_t* __restrict__ index, uint32_t m,
                               uint32_t offset, V* __restrict__ out) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m) return;
  const V* src = scalars + 2 * (size_t)(index[j] - offset);
  out[2 * (size_t)j] = src[0];
  out[2 * (size_t)j + 1] = src[1];
}

// One proof's scalars for a pass: all of its group's scalars on the device, or on the host.
struct PassScalars {
  const uint8_t* device = nullptr;
  const uint8_t* host = nullptr;
};

template <class C>
class GpuMsmDispatch {
  using PointSection = formats::PointSection;

 public:
  GpuMsmDispatch(DeviceContext* dev, GpuKeyStore<C>& store) : dev_(dev), store_(store) {}

  // The batch whose cancel flag is checked between chunks.
  void watch(const engine::WitnessSource* batch) { batch_ = batch; }

  // Sections `secs` of point group g (all resident, or one streamed) for proofs first..first+count-1
  // (scalars[k]: proof first+k's), their sums added into sums[first + k].
  cuzk_status pass(engine::PointGroup g, const std::vector<PointSection>& secs, const PassScalars* scalars, size_t first,
                   size_t count, engine::ProofSums<C>* sums, engine::PhaseTimes& times, std::string& err) {
    if (secs.empty() || count == 0) return CUZK_OK;
    const engine::Support& sup = store_.support(g);
    const uint64_t n = sup.size(), q = store_.chunk();
    const bool streams = store_.streamed(secs[0]);
    for (size_t k = 0; k < count; k++)
      for (PointSection s : secs) clear(sums[first + k], s);
    if (n == 0) return CUZK_OK;
    GpuTimeline& tl = dev_->timeline;
    const uint64_t chunks = (n + q - 1) / q;
    if (streams) CUZK_TRY(store_.load_chunk(secs[0], 0, std::min(q, n), 0, err));
    for (uint64_t c = 0; c < chunks; c++) {
      const uint64_t j0 = c * q, m = std::min(q, n - j0);
      if (c > 0 && batch_ && batch_->cancelled()) {
        err = std::string("cancelled during MSM ") + engine::section_name(secs[0]) + ", between chunks; no proof returned";
        return CUZK_ERR_CANCELLED;
      }
      const void* chunk_points = nullptr;
      if (streams) {
        // The next chunk copies while this one is summed: its slot's readers finished with the
        // chunk before this one (each MSM ends synchronised).
        if (c + 1 < chunks) CUZK_TRY(store_.load_chunk(secs[0], j0 + q, std::min(q, n - j0 - q), (int)((c + 1) & 1), err));
        CUZK_TRY(store_.chunk_points((int)(c & 1), &chunk_points, err));
      }
      for (size_t k = 0; k < count; k++) {
        const size_t p = first + k;
        CUZK_TRY(tl.begin(dev_->stream, err));
        int from = tl.mark(err);
        cuzk_status st = plan_chunk(g, scalars[k], j0, (uint32_t)m, err);
        for (size_t i = 0; st == CUZK_OK && i < secs.size(); i++) {
          const PointSection s = secs[i];
          times.entering(engine::msm_phase(s));
          const void* points = streams ? chunk_points : store_.resident_points(s, j0);
          st = s == formats::kSecB2 ? add_msm<2>(points, engine::msm_phase(s), p, &sums[p].b2, from, err)
                                    : add_msm<1>(points, engine::msm_phase(s), p, &sums[p].g1(s), from, err);
          from = -1;
        }
        tl.flush(times);
        CUZK_TRY(st);
      }
    }
    return CUZK_OK;
  }

 private:
  static void clear(engine::ProofSums<C>& sums, PointSection s) {
    if (s == formats::kSecB2) sums.b2 = C::G2x::infinity();
    else sums.g1(s) = C::G1x::infinity();
  }

  // The device's plan over chunk [j0, j0 + m) of group g's stored points' scalars.
  cuzk_status plan_chunk(engine::PointGroup g, const PassScalars& from, uint64_t j0, uint32_t m, std::string& err) {
    const engine::Support& sup = store_.support(g);
    cudaStream_t s = dev_->stream;
    const uint32_t* scalars = nullptr;
    if (from.device) {
      if (sup.all) {
        scalars = reinterpret_cast<const uint32_t*>(from.device + j0 * 32);
      } else {
        gather_scalars<<<ceil_div(m, 256), 256, 0, s>>>(reinterpret_cast<const uint4*>(from.device),
                                                       store_.support_index(g) + j0, m, 0u, store_.gathered_scalars());
        CUZK_LAUNCHED("gather_scalars");
        scalars = reinterpret_cast<const uint32_t*>(store_.gathered_scalars());
      }
    } else {
      // The chunk's range of scalar indices comes up from the host (stored point j is scalar j when
      // the group keeps every point), then is gathered by the support.
      const uint64_t lo = sup.all ? j0 : sup.index[j0], hi = sup.all ? j0 + m - 1 : sup.index[j0 + m - 1];
      uint4* span = sup.all ? store_.gathered_scalars() : store_.scalar_span();
      CUZK_TRY(dev_->staging.upload(span, from.host + lo * 32, (size_t)(hi - lo + 1) * 32, s, err));
      if (!sup.all) {
        gather_scalars<<<ceil_div(m, 256), 256, 0, s>>>(span, store_.support_index(g) + j0, m, (uint32_t)lo,
                                                       store_.gathered_scalars());
        CUZK_LAUNCHED("gather_scalars");
      }
      scalars = reinterpret_cast<const uint32_t*>(store_.gathered_scalars());
    }
    const MsmBases& copies = store_.h_copies();
    if (g == engine::kGroupH && copies.copies > 1) {
      if (m != sup.size()) { err = "msm_h: the H copies serve one MSM over all the points"; return CUZK_ERR_INTERNAL; }
      return msm_plan<typename C::Fr::Params>(dev_->plan, scalars, m, true, copies.c, s, err, copies.copies);
    }
    return msm_plan<typename C::Fr::Params>(dev_->plan, scalars, m, true, 0, s, err);
  }

  // The MSM of the current plan over `points` (device), added into *out, timed as `phase` from
  // mark `from` (-1: now).
  template <int G, class HX>
  cuzk_status add_msm(const void* points, cuzk_phase phase, size_t p, HX* out, int from, std::string& err) {
    using A = typename Group<C, G>::Affine;
    GpuTimeline& tl = dev_->timeline;
    if (from < 0) from = tl.mark(err);
    MsmMarks marks;
    marks.timeline = &tl;
    HX part;
    CUZK_TRY((msm_execute<C, G>(dev_->plan, static_cast<const A*>(points), dev_->msm, dev_->stream, &part, err, &marks)));
    *out = out->add(part);
    tl.span(from, marks.ones_done, phase, p);
    if (dev_->plan.n_ones) tl.span(marks.buckets_done, marks.ones_done, CUZK_PHASE_BATCH_ADD, p);
    return CUZK_OK;
  }

  DeviceContext* dev_;
  GpuKeyStore<C>& store_;
  const engine::WitnessSource* batch_ = nullptr;
};

}  // namespace cuzk::cuda
