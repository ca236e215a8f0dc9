// The GPU prover engine's proof pipeline: per proof, its witness uploaded (proof p+1's on a second
// stream while proof p computes, when the device has room for a second buffer: outside the memory
// plan; without room, each proof uploads its own first), a/b/c from the witness and the key's rows,
// the H scalars by six NTTs, and the five MSMs, all on one device (B2's on the CPU beside it with
// g2_on_cpu). How the key is held is the key store's (key_store.cuh); how an MSM is planned and
// run, the dispatch's (msm_dispatch.cuh). A batch reads a streamed section once per group of
// proofs whose kept scalars fit (choose_group), else once per proof.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "cpu/msm.hpp"
#include "cuda/context/device_context.cuh"
#include "cuda/engine/abc.cuh"
#include "cuda/engine/key_store.cuh"
#include "cuda/engine/make_engine.hpp"
#include "cuda/engine/msm_dispatch.cuh"
#include "util/thread_pool.hpp"

namespace cuzk::cuda {

namespace {

using formats::PointSection;
using formats::kPointSections;

template <class C>
class GpuEngine final : public engine::Engine<C> {
  using D = DeviceCurve<C>;
  using F = typename D::Fr;
  using A1 = typename D::G1;
  using A2 = typename D::G2;

 public:
  GpuEngine(DeviceContext* dev, const engine::KeyView<C>& key) : dev_(dev), key_(key), store_(dev, key), msm_(dev, store_) {}
  ~GpuEngine() override {
    if (prefetch_.stream) cudaStreamDestroy(prefetch_.stream);
    if (prefetch_.after_reads) cudaEventDestroy(prefetch_.after_reads);
    if (prefetch_.uploaded) cudaEventDestroy(prefetch_.uploaded);
  }

  cuzk_backend kind() const override { return CUZK_BACKEND_CUDA; }
  engine::MemoryPlan memory_plan() const override { return store_.memory_plan(); }
  bool reads_host_rows() const override { return false; }  // uploaded in init, then only on the device

  cuzk_status init(const engine::EngineOptions& options, const Progress& progress, std::string& err) {
    std::lock_guard<std::mutex> lock(dev_->mutex);
    CUZK_TRY(dev_->make_current(err));
    CUZK_TRY(store_.plan(options, err));
    CUZK_TRY(dev_->ntt<C>().init(err));
    return store_.upload(progress, err);
  }

  cuzk_status compute(engine::WitnessSource& batch, engine::PhaseTimes& times, engine::ProofSums<C>* sums,
                      std::string& err) override {
    std::lock_guard<std::mutex> lock(dev_->mutex);
    CUZK_TRY(dev_->make_current(err));
    const size_t nv = key_.n_vars, nd = key_.domain_size;
    w_ = &w_bufs_[0];
    CUZK_TRY(w_->ensure(nv * 32, err));
    prefetch_.ready = false;
    CUZK_TRY(va_.ensure(nd * sizeof(F), err));
    CUZK_TRY(vb_.ensure(nd * sizeof(F), err));
    CUZK_TRY(vc_.ensure(nd * sizeof(F), err));
    group_ = choose_group(batch.size());
    for (size_t first = 0; first < batch.size(); first += group_) {
      const size_t count = std::min(group_, batch.size() - first);
      for (size_t k = 0; k < count; k++) {
        const size_t p = first + k;
        // Waits for proof p's check, which ran on the host while proof p-1 was on the GPU.
        engine::ProofInputs in;
        CUZK_TRY(batch.inputs(p, &in, err));
        cuzk_status st = prove_one(in, p, k, batch, times, sums[p], err);
        // A span's events must be complete to be read: alone, the proof's last MSM waited for
        // them; in a group, its last step may still be queued.
        if (st == CUZK_OK && group_ > 1) {
          if (cudaError_t e = cudaStreamSynchronize(dev_->stream); e != cudaSuccess) st = fail(e, "cudaStreamSynchronize", err);
        }
        dev_->timeline.flush(times);
        if (st != CUZK_OK) {
          if (prefetch_.ready) cudaStreamSynchronize(prefetch_.stream);  // nothing in flight reads the caller's memory
          prefetch_.ready = false;
          return st;
        }
        if (group_ == 1) batch.computed(p);
      }
      if (group_ == 1) continue;
      if (cuzk_status st = streamed_sums(first, count, times, sums, err); st != CUZK_OK) {
        if (prefetch_.ready) cudaStreamSynchronize(prefetch_.stream);
        prefetch_.ready = false;
        return st;
      }
      for (size_t k = 0; k < count; k++) batch.computed(first + k);
    }
    return CUZK_OK;
  }

 private:
  // Proof p (slot k of its group): its upload, a/b/c, NTTs and the MSMs it computes itself.
  cuzk_status prove_one(const engine::ProofInputs& in, size_t p, size_t k, engine::WitnessSource& batch,
                        engine::PhaseTimes& times, engine::ProofSums<C>& out, std::string& err) {
    cudaStream_t s = dev_->stream;
    GpuTimeline& tl = dev_->timeline;
    const auto& z = *key_.zkey;
    const uint32_t nv = key_.n_vars, nd = key_.domain_size;
    CUZK_TRY(tl.begin(s, err));

    int t0 = tl.mark(err);
    if (prefetch_.ready && prefetch_.source == in.w && prefetch_.index == p) {
      w_ = prefetch_.into;  // uploaded while proof p-1 computed: only wait for it
      CUZK_CU(cudaStreamWaitEvent(s, prefetch_.uploaded, 0));
    } else {
      if (prefetch_.ready) CUZK_CU(cudaStreamSynchronize(prefetch_.stream));  // not this proof's: drop it
      CUZK_TRY(dev_->staging.upload(w_->as(), in.w, (size_t)nv * 32, s, err));
    }
    prefetch_.ready = false;
    const bool have_abc = in.a != nullptr;
    if (have_abc) {
      CUZK_TRY(dev_->staging.upload(va_.as(), in.a, (size_t)nd * 32, s, err));
      CUZK_TRY(dev_->staging.upload(vb_.as(), in.b, (size_t)nd * 32, s, err));
      CUZK_TRY(dev_->staging.upload(vc_.as(), in.c, (size_t)nd * 32, s, err));
    }
    int t1 = tl.mark(err);
    tl.span(t0, t1, CUZK_PHASE_UPLOAD, p);

    // B2 on the CPU overlaps everything below; its witness bytes are the caller's.
    auto b2_on_cpu = [&] {
      engine::PhaseScope scope(times, p, CUZK_PHASE_MSM_B2);
      out.b2 = cpu::msm<C, typename C::Fq2>(default_thread_pool(), z.points_b2, in.w, nv);
    };
    std::thread cpu_b2;
    bool b2_after = false;
    if (store_.b2_on_cpu()) {
      try {
        cpu_b2 = std::thread(b2_on_cpu);
      } catch (const std::system_error&) {
        b2_after = true;  // the OS refused the thread: the same sum, after the GPU part instead of beside it
      }
    }
    cuzk_status st = gpu_part(have_abc, p, k, batch, out, err);
    if (cpu_b2.joinable()) cpu_b2.join();
    if (b2_after && st == CUZK_OK) b2_on_cpu();
    return st;
  }

  cuzk_status gpu_part(bool have_abc, size_t p, size_t k, engine::WitnessSource& batch, engine::ProofSums<C>& out,
                       std::string& err) {
    cudaStream_t s = dev_->stream;
    GpuTimeline& tl = dev_->timeline;
    const uint32_t nd = key_.domain_size, L = key_.log_domain;
    const uint32_t rows = key_.n_constraints + key_.n_public + 1;
    F* va = va_.as<F>();
    F* vb = vb_.as<F>();
    F* vc = vc_.as<F>();
    const uint32_t* w = w_->as<uint32_t>();

    int t1 = tl.mark(err);
    if (have_abc) {
      for (F* v : {va, vb, vc}) {
        to_mont_kernel<F><<<ceil_div(nd, 256), 256, 0, s>>>(v, nd);
        CUZK_LAUNCHED("to_mont_kernel");
      }
    } else {
      abc_rows<F><<<ceil_div(nd, 128), 128, 0, s>>>(store_.rows_a(), store_.rows_b(), rows, nd, w_->as<F>(), va, vb, vc);
      CUZK_LAUNCHED("abc_rows");
    }
    int t2 = tl.mark(err);
    tl.span(t1, t2, CUZK_PHASE_ABC, p);

    auto& ntt = dev_->ntt<C>();
    for (F* v : {va, vb, vc}) CUZK_TRY(ntt.to_coset(v, L, s, err));
    ntt_h_scalars<F><<<ceil_div(nd, 256), 256, 0, s>>>(va, vb, vc, nd);
    CUZK_LAUNCHED("ntt_h_scalars");
    // The GPU has this proof's NTTs queued: time for the host to start the next witness's upload.
    prefetch(batch, p + 1);
    int t3 = tl.mark(err);
    tl.span(t2, t3, CUZK_PHASE_NTT_H, p);

    // In a group, the streamed sections wait for the group (streamed_sums): keep their scalars.
    auto now = [&](PointSection sec) { return group_ == 1 || !store_.streamed(sec); };
    if (keep_w_) CUZK_CU(cudaMemcpyAsync(w_store_.as<uint8_t>() + k * key_.n_vars * 32, w, (size_t)key_.n_vars * 32,
                                         cudaMemcpyDeviceToDevice, s));
    // One plan per group over its support's scalars; each phase's span includes its plan.
    const bool plan_ac = now(formats::kSecA) || now(formats::kSecC);
    if (plan_ac) CUZK_TRY(msm_.plan_group(engine::kGroupAC, w, err));
    if (now(formats::kSecA)) CUZK_TRY(msm_.template run<1>(formats::kSecA, CUZK_PHASE_MSM_A, p, &out.a, t3, err));
    if (now(formats::kSecC)) CUZK_TRY(msm_.template run<1>(formats::kSecC, CUZK_PHASE_MSM_C, p, &out.c, -1, err));
    int tb = tl.mark(err);
    // B over the whole witness too: A's plan is B's (one plan for four MSMs, as without compaction).
    const bool b_shares_plan = store_.support(engine::kGroupB).all && store_.support(engine::kGroupAC).all;
    const bool b2_here = !store_.b2_on_cpu() && now(formats::kSecB2);
    if (now(formats::kSecB1) || b2_here) {
      if (!(b_shares_plan && plan_ac)) CUZK_TRY(msm_.plan_group(engine::kGroupB, w, err));
      if (now(formats::kSecB1)) CUZK_TRY(msm_.template run<1>(formats::kSecB1, CUZK_PHASE_MSM_B1, p, &out.b1, tb, err));
      if (b2_here) CUZK_TRY(msm_.template run<2>(formats::kSecB2, CUZK_PHASE_MSM_B2, p, &out.b2, -1, err));
    }
    // The H MSM: its own plan over the NTT's output (standard form, in va).
    int th = tl.mark(err);
    if (now(formats::kSecH)) {
      CUZK_TRY(msm_.plan_group(engine::kGroupH, reinterpret_cast<const uint32_t*>(va), err));
      CUZK_TRY(msm_.template run<1>(formats::kSecH, CUZK_PHASE_MSM_H, p, &out.h, th, err));
    } else {
      CUZK_CU(cudaMemcpyAsync(h_store_.as<uint8_t>() + k * nd * 32, va, (size_t)nd * 32, cudaMemcpyDeviceToDevice, s));
    }
    return CUZK_OK;
  }

  // How many proofs share one read of each streamed section (engine::stream_group_size), from the
  // room the budget leaves and the device has for their kept scalars (the witness when A, C, B1 or
  // B2 streams, the H scalars when H does); it sets keep_w_ and allocates the stores. Without room
  // (or when the stores cannot be had) 1: each proof reads the sections itself.
  size_t choose_group(size_t n) {
    const uint64_t nv = key_.n_vars, nd = key_.domain_size;
    bool w_needed = false;
    for (PointSection sec : {formats::kSecA, formats::kSecC, formats::kSecB1, formats::kSecB2})
      w_needed |= store_.streamed(sec);
    const bool h_needed = store_.streamed(formats::kSecH);
    const uint64_t per_proof = (w_needed ? nv * 32 : 0) + (h_needed ? nd * 32 : 0);
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) { (void)cudaGetLastError(); free_b = 0; }
    // The device's room: its free memory and the stores already held, less the prefetch's second
    // witness buffer when it is still to come and a margin for the runtime.
    const uint64_t held = w_store_.bytes() + h_store_.bytes(), margin = (256ull << 20) + (w_bufs_[1].bytes() ? 0 : nv * 32);
    const uint64_t device_room = free_b + held > margin ? free_b + held - margin : 0;
    const engine::MemoryPlan& plan = store_.memory_plan();
    const size_t group = engine::stream_group_size(plan, n, per_proof, std::min(device_room, plan.room()),
                                                    store_.options().stream_per_proof);
    keep_w_ = false;
    if (group < 2) return 1;
    std::string e;
    if ((w_needed && w_store_.ensure(group * nv * 32, e) != CUZK_OK) ||
        (h_needed && h_store_.ensure(group * nd * 32, e) != CUZK_OK)) {
      w_store_.release();  // not sticky (fail() cleared it): the batch goes proof by proof
      h_store_.release();
      return 1;
    }
    keep_w_ = w_needed;
    return group;
  }

  // A group's streamed sections: each read once into the stream buffer (timed as UPLOAD of the
  // group's first proof), then summed with every proof's kept scalars, in order.
  cuzk_status streamed_sums(size_t first, size_t count, engine::PhaseTimes& times, engine::ProofSums<C>* sums,
                            std::string& err) {
    GpuTimeline& tl = dev_->timeline;
    const uint64_t nv = key_.n_vars, nd = key_.domain_size;
    for (PointSection sec : {formats::kSecA, formats::kSecC, formats::kSecB1, formats::kSecB2, formats::kSecH}) {
      if (!store_.streamed(sec)) continue;
      const engine::PointGroup g = engine::group_of(sec);
      CUZK_TRY(tl.begin(dev_->stream, err));
      const int u0 = tl.mark(err);
      const void* points = nullptr;
      cuzk_status st = store_.stream_in(sec, &points, err);
      tl.span(u0, tl.mark(err), CUZK_PHASE_UPLOAD, first);
      if (cudaError_t e = cudaStreamSynchronize(dev_->stream); e != cudaSuccess && st == CUZK_OK)
        st = fail(e, "cudaStreamSynchronize", err);  // the end mark must be complete to be read
      tl.flush(times);
      CUZK_TRY(st);
      for (size_t k = 0; k < count; k++) {
        CUZK_TRY(tl.begin(dev_->stream, err));
        const int from = tl.mark(err);
        const uint8_t* scalars = g == engine::kGroupH ? h_store_.as<uint8_t>() + k * nd * 32 : w_store_.as<uint8_t>() + k * nv * 32;
        st = msm_.plan_group(g, reinterpret_cast<const uint32_t*>(scalars), err);
        engine::ProofSums<C>& out = sums[first + k];
        if (st == CUZK_OK)
          st = sec == formats::kSecB2 ? msm_.template msm_over<2>(points, CUZK_PHASE_MSM_B2, first + k, &out.b2, from, err)
                                      : msm_.template msm_over<1>(points, engine::msm_phase(sec), first + k, &out.g1(sec), from, err);
        tl.flush(times);
        CUZK_TRY(st);
      }
    }
    return CUZK_OK;
  }

  // Starts the upload of proof `next`'s witness into the other witness buffer on the prefetch
  // stream, behind this proof's work so far. Only a pinned witness without a, b, c; a check that
  // fails (or a cancel) is left for the batch loop to report when it asks for that proof; any
  // device error here only turns prefetching off for this engine.
  void prefetch(engine::WitnessSource& batch, size_t next) {
    if (!prefetch_.enabled || next >= batch.size()) return;
    engine::ProofInputs in;
    std::string e;
    if (batch.inputs(next, &in, e) != CUZK_OK || in.a || !is_pinned(in.w)) return;
    DeviceBuffer* other = w_ == &w_bufs_[0] ? &w_bufs_[1] : &w_bufs_[0];
    auto ok = [&](cudaError_t r) {
      if (r == cudaSuccess) return true;
      cudaGetLastError();  // an allocation failure is not sticky: clear it and go on without
      prefetch_.enabled = false;
      return false;
    };
    if (other->ensure((size_t)key_.n_vars * 32, e) != CUZK_OK) { ok(cudaErrorMemoryAllocation); return; }
    if (!prefetch_.stream && !ok(cudaStreamCreateWithFlags(&prefetch_.stream, cudaStreamNonBlocking))) return;
    if (!prefetch_.after_reads && !ok(cudaEventCreateWithFlags(&prefetch_.after_reads, cudaEventDisableTiming))) return;
    if (!prefetch_.uploaded && !ok(cudaEventCreateWithFlags(&prefetch_.uploaded, cudaEventDisableTiming))) return;
    // The other buffer's last readers (proof next-2) are done; ordering after this proof's work so
    // far keeps it so for any future use.
    if (!ok(cudaEventRecord(prefetch_.after_reads, dev_->stream)) ||
        !ok(cudaStreamWaitEvent(prefetch_.stream, prefetch_.after_reads, 0)) ||
        !ok(cudaMemcpyAsync(other->as(), in.w, (size_t)key_.n_vars * 32, cudaMemcpyHostToDevice, prefetch_.stream)) ||
        !ok(cudaEventRecord(prefetch_.uploaded, prefetch_.stream)))
      return;
    prefetch_.ready = true;
    prefetch_.index = next;
    prefetch_.source = in.w;
    prefetch_.into = other;
  }

  DeviceContext* dev_;
  const engine::KeyView<C>& key_;
  GpuKeyStore<C> store_;
  GpuMsmDispatch<C> msm_;
  DeviceBuffer w_bufs_[2], va_, vb_, vc_;
  // A group's kept scalars for its streamed sections (choose_group): witnesses, H scalars.
  size_t group_ = 1;
  bool keep_w_ = false;
  DeviceBuffer w_store_, h_store_;
  DeviceBuffer* w_ = &w_bufs_[0];  // the current proof's witness on the device
  struct Prefetch {
    bool enabled = true;   // off after a failure (no room for the second buffer)
    bool ready = false;    // an upload was started for proof `index`
    size_t index = 0;
    const uint8_t* source = nullptr;
    DeviceBuffer* into = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t after_reads = nullptr, uploaded = nullptr;
  } prefetch_;
};

}  // namespace

template <class C>
cuzk_status make_engine(DeviceContext* device, const engine::KeyView<C>& key, const engine::EngineOptions& options,
                        const Progress& progress, std::unique_ptr<engine::Engine<C>>* out, std::string& err) {
  if (!device) { err = "no CUDA device"; return CUZK_ERR_NO_DEVICE; }
  if (key.log_domain > kNttMaxLog - 1) { err = "domain 2^" + std::to_string(key.log_domain) + " exceeds the GPU NTT"; return CUZK_ERR_UNSUPPORTED; }
  auto e = std::make_unique<GpuEngine<C>>(device, key);
  CUZK_TRY(e->init(options, progress, err));  // reports the upload as it goes
  *out = std::move(e);
  return CUZK_OK;
}

template cuzk_status make_engine<curve::Bn254>(DeviceContext*, const engine::KeyView<curve::Bn254>&,
                                               const engine::EngineOptions&, const Progress&,
                                               std::unique_ptr<engine::Engine<curve::Bn254>>*, std::string&);
template cuzk_status make_engine<curve::Bls12381>(DeviceContext*, const engine::KeyView<curve::Bls12381>&,
                                                  const engine::EngineOptions&, const Progress&,
                                                  std::unique_ptr<engine::Engine<curve::Bls12381>>*, std::string&);

}  // namespace cuzk::cuda
