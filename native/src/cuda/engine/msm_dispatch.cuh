// Kernel dispatch for a GPU engine's MSMs, in the plan's chunks. A pass takes the sections of one
// point group over the same scalars (their support's): chunk by chunk it makes one plan over the
// chunk's scalars (gathered on the device by the support, or a contiguous slice when the group
// keeps every point) and runs each section's MSM over the chunk's points with it. Partial sums of
// one window size add up on the device, so a pass keeps, per proof and section, a set of them for
// each window size its chunks take: the full chunk's and up to three others, the first ones a
// chunk's own scalars call for (a PoRep chunk of A, B or C, whose scalars are 0, 1 and bytes,
// reduces one window of a few hundred buckets at its own; the chunk that holds the public inputs
// reduces every window at the same size). A chunk whose own window size is none of them is
// planned again at the full chunk's. Each set
// is combined once, on the host, at the end of the pass (each chunk reduces its own buckets, but
// a chunk of few buckets adds them into its set's kept buckets, reduced once before: SumSets). Scalars
// are on the device (the proof's witness or H scalars) or, for a group of proofs that share a
// streamed section, on the host: then each step's range of scalar indices comes up on its own
// stream while the step before is summed. A streamed section's chunk comes up once for all of the
// pass's proofs, the next one copying while the current one is summed. The ones' sums of a step's
// sections run on a lane of their own beside the bucket parts (MsmOnesLane), joined before the next
// step. Each chunk's work is timed as its section's phase on the device's timeline, the step's
// ones' sums as the batch addition up to the join (an envelope, as a pass's phases are).
#pragma once

#include <vector>

#include "cuda/context/device_context.cuh"
#include "cuda/engine/key_store.cuh"
#include "cuda/engine/sum_sets.hpp"

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

// out[j] = scalar index[j] (or first + j without an index) of a range of packed scalars
// (engine/scalar_pack.hpp) that came up as one buffer laid out as r.
__global__ void gather_packed(const uint8_t* __restrict__ packed, engine::PackedRange r, const uint32_t* __restrict__ index,
                              uint32_t m, uint64_t first, uint4* __restrict__ out) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m) return;
  uint32_t s[8];
  engine::decode_packed(packed, r, index ? index[j] : first + j, s);
  out[2 * (size_t)j] = make_uint4(s[0], s[1], s[2], s[3]);
  out[2 * (size_t)j + 1] = make_uint4(s[4], s[5], s[6], s[7]);
}

// One proof's scalars for a pass: all of its group's scalars on the device, or on the host (and
// then, when they pack small, also packed: what comes up per chunk instead).
struct PassScalars {
  const uint8_t* device = nullptr;
  const uint8_t* host = nullptr;
  const engine::PackedScalars* packed = nullptr;
};

template <class C>
class GpuMsmDispatch {
  using PointSection = formats::PointSection;
  using G1x = typename Group<C, 1>::Xyzz;
  using G2x = typename Group<C, 2>::Xyzz;

 public:
  GpuMsmDispatch(DeviceContext* dev, GpuKeyStore<C>& store) : dev_(dev), store_(store) {}

  // The batch whose cancel flag is checked between chunks.
  void watch(const engine::WitnessSource* batch) { batch_ = batch; }

  // The streamed pass that follows this one (its group and sections): its first chunk of points
  // comes up into the free chunk buffer while this pass sums its last chunk.
  struct NextPass {
    engine::PointGroup g = engine::kGroupAC;
    std::vector<PointSection> secs;  // empty: none
  };

  // Sections `secs` of point group g (all resident, or all streamed) for proofs first..first+count-1
  // (scalars[k]: proof first+k's), their sums added into sums[first + k]. Synchronises at the end.
  // next: the streamed pass the caller runs right after this one, if any (see NextPass).
  cuzk_status pass(engine::PointGroup g, const std::vector<PointSection>& secs, const PassScalars* scalars, size_t first,
                   size_t count, engine::ProofSums<C>* sums, engine::PhaseTimes& times, std::string& err,
                   const NextPass& next = NextPass()) {
    cuzk_status st = run_pass(g, secs, scalars, first, count, sums, times, err, next);
    if (st != CUZK_OK) {  // nothing in flight reads the caller's memory when this returns
      preloaded_.valid = false;
      if (ones_.stream) cudaStreamSynchronize(ones_.stream);
      ones_.pending = false;
      cudaStreamSynchronize(dev_->stream);
      store_.drain();
      (void)cudaGetLastError();
    }
    return st;
  }

 private:
  cuzk_status run_pass(engine::PointGroup g, const std::vector<PointSection>& secs, const PassScalars* scalars,
                       size_t first, size_t count, engine::ProofSums<C>* sums, engine::PhaseTimes& times,
                       std::string& err, const NextPass& next) {
    if (secs.empty() || count == 0) return CUZK_OK;
    // A first chunk the pass before loaded for this one (any other is stale: loaded again).
    const Preloaded pre = preloaded_;
    preloaded_.valid = false;
    const engine::Support& sup = store_.support(g);
    const uint64_t n = sup.size(), q = store_.chunk(g);
    const bool streams = store_.streamed(secs[0]);
    for (size_t k = 0; k < count; k++)
      for (PointSection s : secs) clear(sums[first + k], s);
    if (n == 0) return CUZK_OK;
    cudaStream_t s = dev_->stream;
    GpuTimeline& tl = dev_->timeline;
    const uint64_t chunks = (n + q - 1) / q;
    // The window of a full chunk, the one the plan priced the workspace at (a chunk's own window,
    // for fewer scalars, needs no more).
    window_ = msm_window_bits((size_t)std::min(q, n), C::Fr::Params::BITS);
    sums_ready_ = false;
    const bool host_scalars = scalars[0].device == nullptr;
    // Chunk c comes up into chunk buffer (base + c) & 1: base is where the pass before put chunk 0.
    const bool preloaded = streams && pre.valid && pre.pass.g == g && pre.pass.secs == secs && pre.count == std::min(q, n);
    const int base = preloaded ? pre.slot : 0;
    if (streams && !preloaded) CUZK_TRY(store_.load_chunk(secs, 0, std::min(q, n), 0, err));
    if (host_scalars) CUZK_TRY(stage_span(g, scalars[0], 0, std::min(q, n), 0, err));
    CUZK_TRY(tl.begin(s, err));
    const int marks_per_step = 2 + 2 * (int)secs.size();
    for (uint64_t c = 0; c < chunks; c++) {
      const uint64_t j0 = c * q, m = std::min(q, n - j0);
      if (c > 0 && batch_ && batch_->cancelled()) {
        err = std::string("cancelled during MSM ") + engine::section_name(secs[0]) + ", between chunks; no proof returned";
        return CUZK_ERR_CANCELLED;
      }
      const uint8_t* chunk_points = nullptr;
      if (streams) {
        CUZK_TRY(store_.chunk_points((base + (int)c) & 1, &chunk_points, err));
        // The next chunk copies while this one is summed, once the chunk before this one is done;
        // after the last, the next pass's first.
        const int other = (base + (int)c + 1) & 1;
        if (c + 1 < chunks) {
          CUZK_TRY(store_.load_chunk(secs, j0 + q, std::min(q, n - j0 - q), other, err));
        } else if (!next.secs.empty() && store_.streamed(next.secs[0])) {
          const uint64_t next_n = store_.support(next.g).size();
          if (next_n > 0) {
            const uint64_t next_m = std::min(store_.chunk(next.g), next_n);
            CUZK_TRY(store_.load_chunk(next.secs, 0, next_m, other, err));
            preloaded_ = Preloaded{true, next, other, next_m};
          }
        }
      }
      for (size_t k = 0; k < count; k++) {
        const size_t p = first + k;
        const uint64_t step = c * count + k;
        if (host_scalars) {  // the next step's scalars come up while this step is summed
          const uint64_t c1 = k + 1 < count ? c : c + 1;
          const size_t k1 = k + 1 < count ? k + 1 : 0;
          if (c1 < chunks)
            CUZK_TRY(stage_span(g, scalars[k1], c1 * q, std::min(q, n - c1 * q), (int)((step + 1) & 1), err));
        }
        CUZK_TRY(timeline_room(marks_per_step, times, err));
        int from = tl.mark(err);
        const int step_from = from;
        CUZK_TRY(plan_chunk(g, scalars[k], j0, (uint32_t)m, (int)(step & 1), err));
        if (!sums_ready_) CUZK_TRY(begin_sums(count, secs, err));
        // A chunk of only 0s and 1s writes its ones' sum alone (no window): any set takes it.
        int set = dev_->plan.n_rest == 0 ? 0 : sets_.take(dev_->plan.c, dev_->plan.nwin);
        if (set < 0) {  // no set left: this chunk at the full chunk's window, which the plan priced
          CUZK_TRY(plan_chunk(g, scalars[k], j0, (uint32_t)m, (int)(step & 1), err, window_));
          set = sets_.take(dev_->plan.c, dev_->plan.nwin);
          if (set != 0) { err = "MSM pass: a chunk planned at the pass's window is not in its sums"; return CUZK_ERR_INTERNAL; }
        }
        used_[set][k] = true;
        const MsmPlan& plan = dev_->plan;
        bool keep = false;
        if (plan.n_rest && SumSets::keeps(plan.c, plan.nwin, plan.groups(), plan.copies)) {
          CUZK_TRY(kept_ready(set, err, &keep));
          if (keep) {
            sets_.keep(set, plan.nwin);
            kept_used_[set][k] = true;
          }
        }
        for (size_t i = 0; i < secs.size(); i++) {
          const PointSection sec = secs[i];
          times.entering(engine::msm_phase(sec));
          const void* points = streams ? chunk_points + store_.section_offset(secs, i) : store_.resident_points(sec, j0);
          uint8_t* kept = keep ? kept_slot(set, k, i) : nullptr;
          if (sec == formats::kSecB2)
            CUZK_TRY(add_msm<2>(points, engine::msm_phase(sec), p, slot(set, k, i), from, err, kept));
          else
            CUZK_TRY(add_msm<1>(points, engine::msm_phase(sec), p, slot(set, k, i), from, err, kept));
          from = -1;
        }
        // The step's ones' sums are done before the next step's plan rewrites their list.
        if (ones_.pending) {
          CUZK_TRY(ones_.join(s, err));
          tl.span(step_from, tl.mark(err), CUZK_PHASE_BATCH_ADD, p);
        }
      }
    }
    CUZK_TRY(reduce_kept(first, secs, times, err));
    // One download of every proof's and section's partial sums, each set combined on the host.
    CUZK_CU(cudaMemcpyAsync(host_sums_.as(), sums_.as(), sums_bytes_, cudaMemcpyDeviceToHost, s));
    CUZK_CU(cudaStreamSynchronize(s));
    tl.flush(times);
    for (int set = 0; set < SumSets::kCount; set++) {
      const int c = sets_.c[set], nwin = sets_.nwin[set];
      if (c == 0) continue;
      for (size_t k = 0; k < count; k++) {
        if (!used_[set][k]) continue;
        for (size_t i = 0; i < secs.size(); i++) {
          const uint8_t* at = host_sums_.as<const uint8_t>() + (slot(set, k, i) - sums_.as<uint8_t>());
          engine::ProofSums<C>& out = sums[first + k];
          if (secs[i] == formats::kSecB2)
            out.b2 = out.b2.add(msm_combine(reinterpret_cast<const typename C::G2x*>(at), c, nwin));
          else
            out.g1(secs[i]) = out.g1(secs[i]).add(msm_combine(reinterpret_cast<const typename C::G1x*>(at), c, nwin));
        }
      }
    }
    return CUZK_OK;
  }

  // At least n marks left on the device's timeline: else the spans so far are read (the stream
  // synchronised) before its events are reused.
  cuzk_status timeline_room(int n, engine::PhaseTimes& times, std::string& err) {
    GpuTimeline& tl = dev_->timeline;
    if (tl.free_marks() >= n) return CUZK_OK;
    CUZK_CU(cudaStreamSynchronize(dev_->stream));
    tl.flush(times);
    return tl.begin(dev_->stream, err);
  }

  static void clear(engine::ProofSums<C>& sums, PointSection s) {
    if (s == formats::kSecB2) sums.b2 = C::G2x::infinity();
    else sums.g1(s) = C::G1x::infinity();
  }

  // The pass's partial sums on the device, zeroed, in SumSets::kCount sets: set 0 at the window of a
  // full chunk, the others at the next window sizes plans take (chunks' own, or the H copies'). One
  // slot per set, proof and section, as wide as a G2 point's when B2 is among the sections and as
  // many points as the sums of any window size take, so that it is at slot(set, k, i).
  cuzk_status begin_sums(size_t count, const std::vector<PointSection>& secs, std::string& err) {
    sets_.reset(window_, msm_windows(C::Fr::Params::BITS, window_));
    sums_secs_ = secs.size();
    sums_count_ = count;
    const bool g2 = std::find(secs.begin(), secs.end(), formats::kSecB2) != secs.end();
    uint32_t most = 0;
    for (int c = 2; c <= std::max(kMsmMaxWindowWithCopies, std::max(window_, dev_->plan.c)); c++)
      most = std::max(most, msm_sums_points(c, msm_windows(C::Fr::Params::BITS, c)));
    sums_stride_ = (size_t)most * (g2 ? sizeof(G2x) : sizeof(G1x));
    sums_bytes_ = SumSets::kCount * count * secs.size() * sums_stride_;
    CUZK_TRY(sums_.ensure(sums_bytes_, err));
    CUZK_TRY(host_sums_.ensure(sums_bytes_, err));
    CUZK_CU(cudaMemsetAsync(sums_.as(), 0, sums_bytes_, dev_->stream));  // zero bytes: empty sums
    for (auto& u : used_) u.assign(count, false);
    for (auto& u : kept_used_) u.assign(count, false);
    std::fill(std::begin(kept_zeroed_), std::end(kept_zeroed_), false);
    kept_stride_ = (size_t)SumSets::kKeptBuckets * (g2 ? sizeof(G2x) : sizeof(G1x));
    sums_ready_ = true;
    return CUZK_OK;
  }
  uint8_t* slot(int set, size_t k, size_t i) {
    return sums_.as<uint8_t>() + (((size_t)set * sums_count_ + k) * sums_secs_ + i) * sums_stride_;
  }

  // Set `set`'s kept buckets for this pass (one slot per proof and section, SumSets::kKeptBuckets
  // points each), zeroed on first use; *ok false (buckets reduced per chunk, as without) when
  // they would take more than kKeptMaxBytes: a group of very many proofs.
  static constexpr size_t kKeptMaxBytes = 64u << 20;
  cuzk_status kept_ready(int set, std::string& err, bool* ok) {
    const size_t bytes = sums_count_ * sums_secs_ * kept_stride_;
    *ok = bytes <= kKeptMaxBytes;
    if (!*ok || kept_zeroed_[set]) return CUZK_OK;
    CUZK_TRY(kept_[set].ensure(bytes, err));
    CUZK_CU(cudaMemsetAsync(kept_[set].as(), 0, bytes, dev_->stream));
    kept_zeroed_[set] = true;
    return CUZK_OK;
  }
  uint8_t* kept_slot(int set, size_t k, size_t i) {
    return kept_[set].as<uint8_t>() + (k * sums_secs_ + i) * kept_stride_;
  }
  // Each set's kept buckets reduced into its sums (after the pass's last chunk), timed as the
  // section's phase.
  cuzk_status reduce_kept(size_t first, const std::vector<PointSection>& secs, engine::PhaseTimes& times,
                          std::string& err) {
    GpuTimeline& tl = dev_->timeline;
    for (int set = 0; set < SumSets::kCount; set++) {
      if (!sets_.kept_nwin[set]) continue;
      for (size_t k = 0; k < sums_count_; k++) {
        if (!kept_used_[set][k]) continue;
        for (size_t i = 0; i < secs.size(); i++) {
          CUZK_TRY(timeline_room(2, times, err));
          const int from = tl.mark(err);
          const int c = sets_.c[set], nwin = sets_.kept_nwin[set];
          if (secs[i] == formats::kSecB2)
            CUZK_TRY((msm_reduce_into<C, 2>(c, nwin, reinterpret_cast<const G2x*>(kept_slot(set, k, i)), dev_->msm,
                                             dev_->stream, reinterpret_cast<G2x*>(slot(set, k, i)), err)));
          else
            CUZK_TRY((msm_reduce_into<C, 1>(c, nwin, reinterpret_cast<const G1x*>(kept_slot(set, k, i)), dev_->msm,
                                             dev_->stream, reinterpret_cast<G1x*>(slot(set, k, i)), err)));
          tl.span(from, tl.mark(err), engine::msm_phase(secs[i]), first + k);
        }
      }
    }
    return CUZK_OK;
  }

  // Starts the host scalars of the chunk [j0, j0 + m) of group g's stored points up into span slot
  // `slot`: the range of scalar indices the chunk covers (stored point j is scalar j when the
  // group keeps every point).
  cuzk_status stage_span(engine::PointGroup g, const PassScalars& from, uint64_t j0, uint64_t m, int slot, std::string& err) {
    const engine::Support& sup = store_.support(g);
    const uint64_t lo = sup.all ? j0 : sup.index[j0], hi = sup.all ? j0 + m - 1 : sup.index[j0 + m - 1];
    span_packed_[slot] = false;
    if (from.packed) {  // packed when the range packs smaller than it is
      span_range_[slot] = from.packed->range(lo, hi);
      if (span_range_[slot].bytes < (hi - lo + 1) * 32) {
        span_packed_[slot] = true;
        return store_.upload_span(slot, *from.packed, span_range_[slot], err);
      }
    }
    return store_.upload_span(slot, from.host + lo * 32, (size_t)(hi - lo + 1) * 32, err);
  }

  // The device's plan over chunk [j0, j0 + m) of group g's stored points' scalars, at the window
  // its scalars call for or `window` (host scalars: those staged into span slot `slot`).
  cuzk_status plan_chunk(engine::PointGroup g, const PassScalars& from, uint64_t j0, uint32_t m, int slot,
                         std::string& err, int window = 0) {
    const engine::Support& sup = store_.support(g);
    cudaStream_t s = dev_->stream;
    const uint32_t* scalars = nullptr;
    KernelTrace trace("msm_scalars", s);
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
      CUZK_TRY(store_.span_ready(slot, err));
      trace.mark("span_wait");
      uint4* span = store_.scalar_span(slot);
      if (span_packed_[slot]) {
        gather_packed<<<ceil_div(m, 256), 256, 0, s>>>(reinterpret_cast<const uint8_t*>(span), span_range_[slot],
                                                      sup.all ? nullptr : store_.support_index(g) + j0, m, j0,
                                                      store_.gathered_scalars());
        CUZK_LAUNCHED("gather_packed");
        scalars = reinterpret_cast<const uint32_t*>(store_.gathered_scalars());
      } else if (sup.all) {
        scalars = reinterpret_cast<const uint32_t*>(span);
      } else {
        gather_scalars<<<ceil_div(m, 256), 256, 0, s>>>(span, store_.support_index(g) + j0, m, (uint32_t)sup.index[j0],
                                                       store_.gathered_scalars());
        CUZK_LAUNCHED("gather_scalars");
        scalars = reinterpret_cast<const uint32_t*>(store_.gathered_scalars());
      }
    }
    trace.mark("gather");
    const MsmBases& copies = store_.h_copies();
    if (g == engine::kGroupH && copies.copies > 1) {
      if (m != sup.size()) { err = "msm_h: the H copies serve one MSM over all the points"; return CUZK_ERR_INTERNAL; }
      return msm_plan<typename C::Fr::Params>(dev_->plan, scalars, m, true, copies.c, s, err, copies.copies);
    }
    return msm_plan<typename C::Fr::Params>(dev_->plan, scalars, m, true, window, s, err, 1, 0, store_.window_groups(g));
  }

  // The MSM of the current plan over `points` (device), added into the partial sums at `sums`
  // (kept: its buckets added into those instead, reduced at the pass's end). Timed as `phase`
  // from mark `from` (-1: now).
  template <int G>
  cuzk_status add_msm(const void* points, cuzk_phase phase, size_t p, uint8_t* sums, int from, std::string& err,
                      uint8_t* kept = nullptr) {
    using A = typename Group<C, G>::Affine;
    using X = typename Group<C, G>::Xyzz;
    GpuTimeline& tl = dev_->timeline;
    if (from < 0) from = tl.mark(err);
    MsmMarks marks;
    marks.timeline = &tl;
    CUZK_TRY((msm_execute_into<C, G>(dev_->plan, static_cast<const A*>(points), dev_->msm, dev_->stream,
                                      reinterpret_cast<X*>(sums), err, &marks, reinterpret_cast<X*>(kept), &ones_)));
    tl.span(from, marks.ones_done, phase, p);
    if (dev_->plan.n_ones && marks.ones_done != marks.buckets_done)
      tl.span(marks.buckets_done, marks.ones_done, CUZK_PHASE_BATCH_ADD, p);
    return CUZK_OK;
  }

  // The next pass's first chunk, loaded by the pass before it (run_pass).
  struct Preloaded {
    bool valid = false;
    NextPass pass;
    int slot = 0;
    uint64_t count = 0;
  };

  DeviceContext* dev_;
  GpuKeyStore<C>& store_;
  Preloaded preloaded_;
  MsmOnesLane ones_;            // the ones' sums beside the bucket parts
  const engine::WitnessSource* batch_ = nullptr;
  int window_ = 0;              // the window of a full chunk of the pass
  SumSets sets_;                          // the window of each set of the pass's sums
  std::vector<bool> used_[SumSets::kCount];  // per set, the proofs whose sums it holds
  DeviceBuffer kept_[SumSets::kCount];       // per set, buckets kept across the pass's chunks
  std::vector<bool> kept_used_[SumSets::kCount];  // and the proofs that added into them
  bool kept_zeroed_[SumSets::kCount] = {};
  size_t kept_stride_ = 0;
  bool span_packed_[2] = {false, false};  // what each span slot holds: packed scalars (of that range) or raw
  engine::PackedRange span_range_[2];
  bool sums_ready_ = false;
  size_t sums_secs_ = 0, sums_count_ = 0, sums_stride_ = 0, sums_bytes_ = 0;
  DeviceBuffer sums_;           // the pass's partial sums
  PinnedBuffer host_sums_;      // where they come down
};

}  // namespace cuzk::cuda
