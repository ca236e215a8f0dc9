// The GPU prover engine: per proof, a/b/c from the witness and the key's rows, the H scalars by
// six NTTs, and the five MSMs, all on one device. Key points are uploaded once, when the engine
// is made, and stay resident when they fit; otherwise each MSM streams its points in.
//
// The four witness MSMs (A, B1, B2 and C) share one plan: the same scalars, so the same sorted
// digits. C's points are stored behind n_public+1 points at infinity so that its scalars are the
// whole witness too. CUZK_GPU_B2=cpu moves the G2 MSM to the CPU, concurrently with the GPU work.
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include "cpu/msm.hpp"
#include "cuda/abc.cuh"
#include "cuda/cuda_backend.hpp"
#include "cuda/device.cuh"
#include "util/thread_pool.hpp"

namespace cuzk::cuda {

namespace {

struct RowBuffers {
  DeviceBuffer start, signal, coef;
};

template <class C>
class GpuEngine final : public engine::Engine<C> {
  using D = DeviceCurve<C>;
  using F = typename D::Fr;
  using A1 = typename D::G1;
  using A2 = typename D::G2;

 public:
  GpuEngine(Device* dev, const engine::KeyView<C>& key) : dev_(dev), key_(key) {}

  cuzk_backend kind() const override { return CUZK_BACKEND_CUDA; }
  engine::MemoryPlan memory_plan() const override { return {}; }  // the GPU plan: next commit

  // Key bytes held on the device (rows, and the points when resident): the key upload's units.
  uint64_t device_bytes() const {
    uint64_t b = 0;
    for (const DeviceBuffer* d : {&bufs_a_.start, &bufs_a_.signal, &bufs_a_.coef, &bufs_b_.start, &bufs_b_.signal,
                                  &bufs_b_.coef, &pa_, &pb1_, &pb2_, &pc_, &ph_})
      b += d->bytes();
    return b;
  }

  cuzk_status init(std::string& err) {
    std::lock_guard<std::mutex> lock(dev_->mutex);
    CUZK_TRY(dev_->make_current(err));
    CUZK_TRY(dev_->ntt<C>().init(err));
    const auto& z = *key_.zkey;
    const size_t nv = key_.n_vars, nd = key_.domain_size;
    cpu_b2_ = [] {
      const char* v = std::getenv("CUZK_GPU_B2");
      return v && std::strcmp(v, "cpu") == 0;
    }();
    CUZK_TRY(upload_rows(key_.a, rows_a_, bufs_a_, err));
    CUZK_TRY(upload_rows(key_.b, rows_b_, bufs_b_, err));

    // Keep the points resident when they fit beside the proving workspace (witness, a/b/c, the
    // sorted digits of the larger MSM, buckets): estimated generously, 320 bytes per scalar.
    const size_t g1 = sizeof(A1), g2 = sizeof(A2);
    const size_t points = (3 * nv + nd) * g1 + (cpu_b2_ ? 0 : nv * g2);
    const size_t work = 4 * nd * sizeof(F) + nv * 32 + 320 * std::max(nv, nd) + (512u << 20);
    size_t free_b = 0, total_b = 0;
    CUZK_CU(cudaMemGetInfo(&free_b, &total_b));
    // CUZK_GPU_STREAM=1 forces the streamed path (tests: it must give the same proofs).
    const char* force_stream = std::getenv("CUZK_GPU_STREAM");
    resident_ = points + work < free_b && !(force_stream && std::strcmp(force_stream, "1") == 0);
    if (resident_) {
      CUZK_TRY(put(pa_, z.points_a, nv * g1, 0, err));
      CUZK_TRY(put(pb1_, z.points_b1, nv * g1, 0, err));
      if (!cpu_b2_) CUZK_TRY(put(pb2_, z.points_b2, nv * g2, 0, err));
      CUZK_TRY(put(pc_, z.points_c, z.n_private() * g1, (key_.n_public + 1) * g1, err));
      CUZK_TRY(put(ph_, z.points_h, nd * g1, 0, err));
    } else {
      // One buffer that each MSM fills in turn; C still needs its leading infinities.
      CUZK_TRY(stream_points_.ensure(std::max(nv * (cpu_b2_ ? g1 : g2), nd * g1), err));
    }
    CUZK_CU(cudaStreamSynchronize(dev_->stream));
    return CUZK_OK;
  }

  cuzk_status compute(engine::WitnessSource& batch, engine::PhaseTimes& times, engine::ProofSums<C>* sums,
                      std::string& err) override {
    std::lock_guard<std::mutex> lock(dev_->mutex);
    CUZK_TRY(dev_->make_current(err));
    const size_t nv = key_.n_vars, nd = key_.domain_size;
    CUZK_TRY(w_.ensure(nv * 32, err));
    CUZK_TRY(va_.ensure(nd * sizeof(F), err));
    CUZK_TRY(vb_.ensure(nd * sizeof(F), err));
    CUZK_TRY(vc_.ensure(nd * sizeof(F), err));
    for (size_t p = 0; p < batch.size(); p++) {
      // Waits for proof p's check, which ran on the host while proof p-1 was on the GPU.
      engine::ProofInputs in;
      CUZK_TRY(batch.inputs(p, &in, err));
      cuzk_status st = prove_one(in, p, times, sums[p], err);
      dev_->timeline.flush(times);
      if (st != CUZK_OK) return st;
      batch.computed(p);
    }
    return CUZK_OK;
  }

 private:
  cuzk_status prove_one(const engine::ProofInputs& in, size_t p, engine::PhaseTimes& times,
                        engine::ProofSums<C>& out, std::string& err) {
    cudaStream_t s = dev_->stream;
    GpuTimeline& tl = dev_->timeline;
    const auto& z = *key_.zkey;
    const uint32_t nv = key_.n_vars, nd = key_.domain_size;
    F* va = va_.as<F>();
    F* vb = vb_.as<F>();
    F* vc = vc_.as<F>();
    CUZK_TRY(tl.begin(s, err));

    int t0 = tl.mark(err);
    CUZK_TRY(dev_->staging.upload(w_.as(), in.w, (size_t)nv * 32, s, err));
    const bool have_abc = in.a != nullptr;
    if (have_abc) {
      CUZK_TRY(dev_->staging.upload(va, in.a, (size_t)nd * 32, s, err));
      CUZK_TRY(dev_->staging.upload(vb, in.b, (size_t)nd * 32, s, err));
      CUZK_TRY(dev_->staging.upload(vc, in.c, (size_t)nd * 32, s, err));
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
    if (cpu_b2_) {
      try {
        cpu_b2 = std::thread(b2_on_cpu);
      } catch (const std::system_error&) {
        b2_after = true;  // the OS refused the thread: the same sum, after the GPU part instead of beside it
      }
    }
    cuzk_status st = gpu_part(have_abc, p, out, err);
    if (cpu_b2.joinable()) cpu_b2.join();
    if (b2_after && st == CUZK_OK) b2_on_cpu();
    (void)va; (void)vb; (void)vc;
    return st;
  }

  cuzk_status gpu_part(bool have_abc, size_t p, engine::ProofSums<C>& out, std::string& err) {
    cudaStream_t s = dev_->stream;
    GpuTimeline& tl = dev_->timeline;
    const uint32_t nv = key_.n_vars, nd = key_.domain_size, L = key_.log_domain;
    const uint32_t rows = key_.n_constraints + key_.n_public + 1;
    F* va = va_.as<F>();
    F* vb = vb_.as<F>();
    F* vc = vc_.as<F>();
    const uint32_t* w = w_.as<uint32_t>();

    int t1 = tl.mark(err);
    if (have_abc) {
      for (F* v : {va, vb, vc}) {
        to_mont_kernel<F><<<ceil_div(nd, 256), 256, 0, s>>>(v, nd);
        CUZK_LAUNCHED("to_mont_kernel");
      }
    } else {
      abc_rows<F><<<ceil_div(nd, 128), 128, 0, s>>>(rows_a_, rows_b_, rows, nd, w_.as<F>(), va, vb, vc);
      CUZK_LAUNCHED("abc_rows");
    }
    int t2 = tl.mark(err);
    tl.span(t1, t2, CUZK_PHASE_ABC, p);

    auto& ntt = dev_->ntt<C>();
    for (F* v : {va, vb, vc}) CUZK_TRY(ntt.to_coset(v, L, s, err));
    ntt_h_scalars<F><<<ceil_div(nd, 256), 256, 0, s>>>(va, vb, vc, nd);
    CUZK_LAUNCHED("ntt_h_scalars");
    int t3 = tl.mark(err);
    tl.span(t2, t3, CUZK_PHASE_NTT_H, p);

    // The witness MSMs: one plan, four point sets.
    MsmPlan& plan = dev_->plan;
    CUZK_TRY(msm_plan<typename C::Fr::Params>(plan, w, nv, true, 0, s, err));
    CUZK_TRY(run<1>(plan, pa_, key_.zkey->points_a, 0, CUZK_PHASE_MSM_A, p, &out.a, t3, err));
    CUZK_TRY(run<1>(plan, pb1_, key_.zkey->points_b1, 0, CUZK_PHASE_MSM_B1, p, &out.b1, -1, err));
    CUZK_TRY(run<1>(plan, pc_, key_.zkey->points_c, key_.n_public + 1, CUZK_PHASE_MSM_C, p, &out.c, -1, err));
    if (!cpu_b2_) CUZK_TRY(run<2>(plan, pb2_, key_.zkey->points_b2, 0, CUZK_PHASE_MSM_B2, p, &out.b2, -1, err));
    // The H MSM: its own plan over the NTT's output (standard form, in va).
    int th = tl.mark(err);
    CUZK_TRY(msm_plan<typename C::Fr::Params>(plan, reinterpret_cast<const uint32_t*>(va), nd, true, 0, s, err));
    CUZK_TRY(run<1>(plan, ph_, key_.zkey->points_h, 0, CUZK_PHASE_MSM_H, p, &out.h, th, err));
    (void)nv;
    return CUZK_OK;
  }

  // One MSM of the plan with a point set: resident, or streamed in first (lead: leading
  // infinities, for C). `from`: the mark the phase starts at (-1: now).
  template <int G, class HX>
  cuzk_status run(const MsmPlan& plan, DeviceBuffer& resident, const uint8_t* host_points, size_t lead,
                  cuzk_phase phase, size_t p, HX* out, int from, std::string& err) {
    using A = typename Group<C, G>::Affine;
    GpuTimeline& tl = dev_->timeline;
    if (from < 0) from = tl.mark(err);
    const A* points = resident.as<A>();
    if (!resident_) {
      const size_t n = (phase == CUZK_PHASE_MSM_H ? key_.domain_size : key_.n_vars);
      CUZK_CU(cudaMemsetAsync(stream_points_.as(), 0, lead * sizeof(A), dev_->stream));
      int u0 = tl.mark(err);
      CUZK_TRY(dev_->staging.upload(stream_points_.as<uint8_t>() + lead * sizeof(A), host_points, (n - lead) * sizeof(A),
                                    dev_->stream, err));
      tl.span(u0, tl.mark(err), CUZK_PHASE_UPLOAD, p);
      points = stream_points_.as<A>();
    }
    MsmMarks marks;
    marks.timeline = &tl;
    CUZK_TRY((msm_execute<C, G>(plan, points, dev_->msm, dev_->stream, out, err, &marks)));
    tl.span(from, marks.ones_done, phase, p);
    if (plan.n_ones) tl.span(marks.buckets_done, marks.ones_done, CUZK_PHASE_BATCH_ADD, p);
    return CUZK_OK;
  }

  // dst <- lead zero bytes (points at infinity), then the host bytes.
  cuzk_status put(DeviceBuffer& dst, const uint8_t* src, size_t bytes, size_t lead, std::string& err) {
    CUZK_TRY(dst.ensure(lead + bytes + 16, err));
    if (lead) CUZK_CU(cudaMemsetAsync(dst.as(), 0, lead, dev_->stream));
    return dev_->staging.upload(dst.as<uint8_t>() + lead, src, bytes, dev_->stream, err);
  }

  cuzk_status upload_rows(const engine::SparseRows<typename C::Fr>& m, DeviceRows<F>& rows, RowBuffers& b,
                          std::string& err) {
    const size_t nnz = m.signal.size();
    CUZK_TRY(b.start.ensure(m.row_start.size() * 8 + 8, err));
    CUZK_TRY(b.signal.ensure(nnz * 4 + 4, err));
    CUZK_TRY(b.coef.ensure(nnz * sizeof(F) + sizeof(F), err));
    CUZK_TRY(dev_->staging.upload(b.start.as(), m.row_start.data(), m.row_start.size() * 8, dev_->stream, err));
    CUZK_TRY(dev_->staging.upload(b.signal.as(), m.signal.data(), nnz * 4, dev_->stream, err));
    CUZK_TRY(dev_->staging.upload(b.coef.as(), m.coef.data(), nnz * sizeof(F), dev_->stream, err));
    rows = DeviceRows<F>{b.start.as<uint64_t>(), b.signal.as<uint32_t>(), b.coef.as<F>()};
    return CUZK_OK;
  }

  Device* dev_;
  const engine::KeyView<C>& key_;
  bool cpu_b2_ = false, resident_ = false;
  RowBuffers bufs_a_, bufs_b_;
  DeviceRows<F> rows_a_{}, rows_b_{};
  DeviceBuffer pa_, pb1_, pb2_, pc_, ph_, stream_points_;
  DeviceBuffer w_, va_, vb_, vc_;
};

}  // namespace

template <class C>
cuzk_status make_engine(Device* device, const engine::KeyView<C>& key, const engine::EngineOptions& options,
                        const Progress& progress, std::unique_ptr<engine::Engine<C>>* out, std::string& err) {
  (void)options;
  if (!device) { err = "no CUDA device"; return CUZK_ERR_NO_DEVICE; }
  if (key.log_domain > kNttMaxLog - 1) { err = "domain 2^" + std::to_string(key.log_domain) + " exceeds the GPU NTT"; return CUZK_ERR_UNSUPPORTED; }
  auto e = std::make_unique<GpuEngine<C>>(device, key);
  CUZK_TRY(e->init(err));
  // The upload is one step (init): reported whole once it is done.
  const uint64_t uploaded = e->device_bytes();
  progress.set_total(uploaded);
  progress.add(uploaded);
  *out = std::move(e);
  return CUZK_OK;
}

template cuzk_status make_engine<curve::Bn254>(Device*, const engine::KeyView<curve::Bn254>&,
                                               const engine::EngineOptions&, const Progress&,
                                               std::unique_ptr<engine::Engine<curve::Bn254>>*, std::string&);
template cuzk_status make_engine<curve::Bls12381>(Device*, const engine::KeyView<curve::Bls12381>&,
                                                  const engine::EngineOptions&, const Progress&,
                                                  std::unique_ptr<engine::Engine<curve::Bls12381>>*, std::string&);

}  // namespace cuzk::cuda
