// The GPU prover engine: per proof, a/b/c from the witness and the key's rows, the H scalars by
// six NTTs, and the five MSMs, all on one device. The key's points are held without the points at
// infinity (engine/key_memory.hpp): per group of sections that share scalars (A and C, B1 and B2,
// H) one support, whose scalars are gathered on the device before that group's one MSM plan
// (same scalars, same sorted digits). C's points are stored at the witness indices of the A+C
// support (explicit infinities for w[0..n_public]). Each section is resident or streamed in, as
// the memory plan chosen from the budget at creation says (cuzk_prover_memory_plan); a batch reads
// a streamed section once per group of proofs whose kept scalars fit (choose_group), else once
// per proof.
// A resident H section is held as precomputed copies of its points (msm_bases.cuh: t copies,
// each 2^(c*V) times the one before, so that msm_h reduces V = ceil(W/t) windows instead of W),
// made once when the engine is made: t as large as the budget's room after the plan and the
// device's free memory allow (EngineOptions::h_copies forces a count, 0 turns them off; automatic,
// the default, only from 2^16 points).
// g2_on_cpu moves the G2 MSM to the CPU, concurrently with the GPU work (keys in memory);
// keep_infinity stores the points at infinity too (for measurements). In a batch, proof p+1's
// witness (pinned) is uploaded on a second stream into a second buffer while proof p computes,
// when the device has room for that buffer (it is outside the memory plan: without room, each
// proof uploads its own witness first, as proof 0 does).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "cpu/msm.hpp"
#include "cuda/abc.cuh"
#include "cuda/cuda_backend.hpp"
#include "cuda/device.cuh"
#include "cuda/msm_bases.cuh"
#include "util/thread_pool.hpp"

namespace cuzk::cuda {

namespace {

using formats::PointSection;
using formats::kPointSections;

struct RowBuffers {
  DeviceBuffer start, signal, coef;
};

// out[j] = scalars[index[j]] (32-byte scalars): the scalars of a compacted point set, in its order.
__global__ void gather_scalars(const uint4* __restrict__ scalars, const uint32_t* __restrict__ index, uint32_t m,
                               uint4* __restrict__ out) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m) return;
  const uint4* src = scalars + 2 * (size_t)index[j];
  out[2 * (size_t)j] = src[0];
  out[2 * (size_t)j + 1] = src[1];
}

template <class C>
class GpuEngine final : public engine::Engine<C> {
  using D = DeviceCurve<C>;
  using F = typename D::Fr;
  using A1 = typename D::G1;
  using A2 = typename D::G2;

 public:
  GpuEngine(Device* dev, const engine::KeyView<C>& key) : dev_(dev), key_(key) {}
  ~GpuEngine() override {
    for (int i = 0; i < 2; i++) {
      pinned_free(pack_buf_[i], kPackChunk);
      if (pack_ev_[i]) cudaEventDestroy(pack_ev_[i]);
    }
    if (prefetch_.stream) cudaStreamDestroy(prefetch_.stream);
    if (prefetch_.after_reads) cudaEventDestroy(prefetch_.after_reads);
    if (prefetch_.uploaded) cudaEventDestroy(prefetch_.uploaded);
  }

  cuzk_backend kind() const override { return CUZK_BACKEND_CUDA; }
  engine::MemoryPlan memory_plan() const override { return plan_; }
  bool reads_host_rows() const override { return false; }  // uploaded in init, then only on the device

  cuzk_status init(const engine::EngineOptions& options, const Progress& progress, std::string& err) {
    std::lock_guard<std::mutex> lock(dev_->mutex);
    CUZK_TRY(dev_->make_current(err));
    const auto& z = *key_.zkey;
    const uint64_t nv = key_.n_vars, nd = key_.domain_size;
    options_ = options;
    cpu_b2_ = options.g2_on_cpu && z.points_b2 != nullptr;  // in place: a key in memory only
    // The plan first, on the host: a key that does not fit is refused before any device allocation.
    CUZK_TRY(compact_.build(z, default_thread_pool(), err));
    // keep_infinity stores every point, infinities included (measurements: the same proofs).
    if (options.keep_infinity) {
      for (engine::Support& sup : compact_.support) {
        sup.all = true;
        sup.index.clear();
      }
    }
    uint64_t point_bytes[kPointSections];
    for (int s = 0; s < kPointSections; s++) point_bytes[s] = s == formats::kSecB2 ? (cpu_b2_ ? 0 : sizeof(A2)) : sizeof(A1);
    plan_.memory = "device";
    engine::describe_sections(z, compact_, point_bytes, plan_);
    // Rows, the gather indices and scalars, and the proving workspace (witness, a/b/c, the sorted
    // digits of the larger MSM, buckets): estimated generously, 320 bytes per scalar.
    uint64_t gathered = 0;
    plan_.fixed = rows_bytes(key_.a) + rows_bytes(key_.b);
    for (const engine::Support& sup : compact_.support) {
      if (sup.all) continue;
      plan_.fixed += sup.index.size() * 4 + 16;
      gathered = std::max<uint64_t>(gathered, sup.index.size() * 32 + 16);
    }
    plan_.fixed += gathered + 4 * nd * sizeof(F) + nv * 32 + 320 * std::max(nv, nd) + (512u << 20);
    size_t free_b = 0, total_b = 0;
    CUZK_CU(cudaMemGetInfo(&free_b, &total_b));
    // A budget above what is free would let the device run out mid-upload: the free memory caps it.
    plan_.budget = options.memory_budget ? std::min<uint64_t>(options.memory_budget, free_b) : free_b;
    // stream_all streams every section (tests: it must give the same proofs).
    CUZK_TRY(engine::choose_placements(plan_, options.stream_all, err));

    CUZK_TRY(dev_->ntt<C>().init(err));
    // The upload's units: the rows, the supports' indices and the resident points, in bytes.
    uint64_t index_bytes = 0;
    for (const engine::Support& sup : compact_.support) index_bytes += sup.all ? 0 : sup.index.size() * 4;
    progress.set_total(rows_bytes(key_.a) + rows_bytes(key_.b) + index_bytes + plan_.resident_bytes());
    CUZK_TRY(upload_rows(key_.a, rows_a_, bufs_a_, err));
    CUZK_TRY(engine::upload_step(progress, rows_bytes(key_.a), err));
    CUZK_TRY(upload_rows(key_.b, rows_b_, bufs_b_, err));
    CUZK_TRY(engine::upload_step(progress, rows_bytes(key_.b), err));
    for (int g = 0; g < engine::kPointGroups; g++) {
      const engine::Support& sup = compact_.support[g];
      if (sup.all || sup.index.empty()) continue;
      CUZK_TRY(index_[g].ensure(sup.index.size() * 4, err));
      CUZK_TRY(dev_->staging.upload(index_[g].as(), sup.index.data(), sup.index.size() * 4, dev_->stream, err));
      CUZK_TRY(engine::upload_step(progress, sup.index.size() * 4, err));
    }
    if (gathered) CUZK_TRY(gathered_.ensure(gathered, err));
    for (int i = 0; i < kPointSections; i++) {
      const PointSection s = (PointSection)i;
      if (plan_.placement[s] != engine::kResident || !plan_.stored_bytes[s]) continue;
      CUZK_TRY(points_[s].ensure(plan_.stored_bytes[s] + 16, err));
      CUZK_TRY(upload_section(s, points_[s].as<uint8_t>(), &progress, err));
    }
    if (plan_.stream_buffer_bytes()) CUZK_TRY(stream_points_.ensure(plan_.stream_buffer_bytes() + 16, err));
    CUZK_CU(cudaStreamSynchronize(dev_->stream));
    return make_h_copies(err);
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
  static constexpr size_t kPackChunk = Staging::kChunk;
  static constexpr uint64_t kAutoCopiesFrom = 1u << 16;  // below, an MSM is launch-bound: copies gain nothing
  static constexpr int kMaxAutoCopies = 16;

  // The H section's copies (see the top of this file), when it is resident: they replace its
  // points (copy 0 is those points).
  cuzk_status make_h_copies(std::string& err) {
    const PointSection h = formats::kSecH;
    const uint64_t n = plan_.stored[h];
    if (plan_.placement[h] != engine::kResident || n == 0) return CUZK_OK;
    const int forced = options_.h_copies;  // -1: automatic (checked at the ABI)
    if (forced == 0 || forced == 1 || (forced < 0 && n < kAutoCopiesFrom)) return CUZK_OK;
    constexpr int bits = C::Fr::Params::BITS;
    const uint64_t pb = sizeof(A1);
    int t = forced, c = 0;
    if (forced < 0) {
      // Room: what the budget leaves after the plan and what the device has free, less the
      // proof's workspace not yet allocated (in plan_.fixed: counted once more here, a margin).
      // While they are made, the copies, the points and 1 GiB of scratch are held at once.
      size_t free_b = 0, total_b = 0;
      CUZK_CU(cudaMemGetInfo(&free_b, &total_b));
      const uint64_t reserve = plan_.fixed + (1ull << 30);
      const uint64_t device_room = free_b > reserve ? free_b - reserve : 0;
      const uint64_t room = std::min(device_room, plan_.room());
      t = 0;
      for (int k = kMaxAutoCopies; k >= 2 && t == 0; k--) {
        const int ck = msm_window_bits(n, bits, k);
        if ((uint64_t)(msm_copies_used(bits, ck, k) + 1) * n * pb + (1ull << 30) <= room) {
          t = k;
          c = ck;
        }
      }
      if (t == 0) return CUZK_OK;
    } else {
      c = msm_window_bits(n, bits, t);
    }
    const uint64_t t0 = now_ns();
    CUZK_TRY((msm_bases_build<C, 1>(h_copies_, points_[h].as<A1>(), (uint32_t)n, t, c, dev_->stream, err)));
    if (h_copies_.copies < 2) {  // no window gives two copies: the plain points
      h_copies_.points.release();
      h_copies_.copies = 0;
      return CUZK_OK;
    }
    points_[h].release();
    if (g_kernel_trace)
      std::fprintf(stderr, "TRACE msm_h copies: %d of 2^%.1f points, window %d, %.2f GiB, made in %.1f ms\n",
                   h_copies_.copies, std::log2((double)n), c, h_copies_.bytes() / 1073741824.0, (now_ns() - t0) / 1e6);
    return CUZK_OK;
  }

  static uint64_t rows_bytes(const engine::SparseRows<typename C::Fr>& m) {
    return m.row_start.size() * 8 + 8 + m.signal.size() * 4 + 4 + (m.coef.size() + 1) * sizeof(F);
  }

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
    if (cpu_b2_) {
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
      abc_rows<F><<<ceil_div(nd, 128), 128, 0, s>>>(rows_a_, rows_b_, rows, nd, w_->as<F>(), va, vb, vc);
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
    auto now = [&](PointSection sec) { return group_ == 1 || !engine::streamed(plan_, sec); };
    if (keep_w_) CUZK_CU(cudaMemcpyAsync(w_store_.as<uint8_t>() + k * key_.n_vars * 32, w, (size_t)key_.n_vars * 32,
                                         cudaMemcpyDeviceToDevice, s));
    // One plan per group over its support's scalars; each phase's span includes its plan.
    const bool plan_ac = now(formats::kSecA) || now(formats::kSecC);
    if (plan_ac) CUZK_TRY(plan_group(engine::kGroupAC, w, err));
    if (now(formats::kSecA)) CUZK_TRY(run<1>(formats::kSecA, CUZK_PHASE_MSM_A, p, &out.a, t3, err));
    if (now(formats::kSecC)) CUZK_TRY(run<1>(formats::kSecC, CUZK_PHASE_MSM_C, p, &out.c, -1, err));
    int tb = tl.mark(err);
    // B over the whole witness too: A's plan is B's (one plan for four MSMs, as without compaction).
    const bool b_shares_plan = compact_.support[engine::kGroupB].all && compact_.support[engine::kGroupAC].all;
    const bool b2_here = !cpu_b2_ && now(formats::kSecB2);
    if (now(formats::kSecB1) || b2_here) {
      if (!(b_shares_plan && plan_ac)) CUZK_TRY(plan_group(engine::kGroupB, w, err));
      if (now(formats::kSecB1)) CUZK_TRY(run<1>(formats::kSecB1, CUZK_PHASE_MSM_B1, p, &out.b1, tb, err));
      if (b2_here) CUZK_TRY(run<2>(formats::kSecB2, CUZK_PHASE_MSM_B2, p, &out.b2, -1, err));
    }
    // The H MSM: its own plan over the NTT's output (standard form, in va).
    int th = tl.mark(err);
    if (now(formats::kSecH)) {
      CUZK_TRY(plan_group(engine::kGroupH, reinterpret_cast<const uint32_t*>(va), err));
      CUZK_TRY(run<1>(formats::kSecH, CUZK_PHASE_MSM_H, p, &out.h, th, err));
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
      w_needed |= engine::streamed(plan_, sec);
    const bool h_needed = engine::streamed(plan_, formats::kSecH);
    const uint64_t per_proof = (w_needed ? nv * 32 : 0) + (h_needed ? nd * 32 : 0);
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) { (void)cudaGetLastError(); free_b = 0; }
    // The device's room: its free memory and the stores already held, less the prefetch's second
    // witness buffer when it is still to come and a margin for the runtime.
    const uint64_t held = w_store_.bytes() + h_store_.bytes(), margin = (256ull << 20) + (w_bufs_[1].bytes() ? 0 : nv * 32);
    const uint64_t device_room = free_b + held > margin ? free_b + held - margin : 0;
    const size_t group = engine::stream_group_size(plan_, n, per_proof, std::min(device_room, plan_.room()),
                                                    options_.stream_per_proof);
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
      if (!engine::streamed(plan_, sec)) continue;
      const engine::PointGroup g = engine::group_of(sec);
      CUZK_TRY(tl.begin(dev_->stream, err));
      const int u0 = tl.mark(err);
      cuzk_status st = upload_section(sec, stream_points_.as<uint8_t>(), nullptr, err);
      tl.span(u0, tl.mark(err), CUZK_PHASE_UPLOAD, first);
      if (cudaError_t e = cudaStreamSynchronize(dev_->stream); e != cudaSuccess && st == CUZK_OK)
        st = fail(e, "cudaStreamSynchronize", err);  // the end mark must be complete to be read
      tl.flush(times);
      CUZK_TRY(st);
      for (size_t k = 0; k < count; k++) {
        CUZK_TRY(tl.begin(dev_->stream, err));
        const int from = tl.mark(err);
        const uint8_t* scalars = g == engine::kGroupH ? h_store_.as<uint8_t>() + k * nd * 32 : w_store_.as<uint8_t>() + k * nv * 32;
        st = plan_group(g, reinterpret_cast<const uint32_t*>(scalars), err);
        engine::ProofSums<C>& out = sums[first + k];
        if (st == CUZK_OK)
          st = sec == formats::kSecB2 ? msm_over<2>(stream_points_.as(), CUZK_PHASE_MSM_B2, first + k, &out.b2, from, err)
                                      : msm_over<1>(stream_points_.as(), engine::msm_phase(sec), first + k, &out.g1(sec), from, err);
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

  // The device's plan over group g's scalars: all of them, or those of its support gathered.
  cuzk_status plan_group(engine::PointGroup g, const uint32_t* scalars, std::string& err) {
    const engine::Support& sup = compact_.support[g];
    const uint32_t m = (uint32_t)sup.size();
    if (!sup.all && m > 0) {
      gather_scalars<<<ceil_div(m, 256), 256, 0, dev_->stream>>>(reinterpret_cast<const uint4*>(scalars),
                                                                index_[g].as<uint32_t>(), m, gathered_.as<uint4>());
      CUZK_LAUNCHED("gather_scalars");
      scalars = gathered_.as<uint32_t>();
    }
    if (g == engine::kGroupH && h_copies_.copies > 1)
      return msm_plan<typename C::Fr::Params>(dev_->plan, scalars, m, true, h_copies_.c, dev_->stream, err,
                                              h_copies_.copies);
    return msm_plan<typename C::Fr::Params>(dev_->plan, scalars, m, true, 0, dev_->stream, err);
  }

  // Section s's MSM with the current plan: its points resident, or streamed in first.
  // `from`: the mark the phase starts at (-1: now).
  template <int G, class HX>
  cuzk_status run(PointSection s, cuzk_phase phase, size_t p, HX* out, int from, std::string& err) {
    GpuTimeline& tl = dev_->timeline;
    if (from < 0) from = tl.mark(err);
    const bool copies = s == formats::kSecH && h_copies_.copies > 1;
    if (copies && !h_copies_.serves(dev_->plan)) {
      err = "msm_h: the plan's windows are not those of the H copies";
      return CUZK_ERR_INTERNAL;
    }
    const void* points = copies ? h_copies_.points.as() : points_[s].as();
    if (engine::streamed(plan_, s)) {
      int u0 = tl.mark(err);
      CUZK_TRY(upload_section(s, stream_points_.as<uint8_t>(), nullptr, err));
      tl.span(u0, tl.mark(err), CUZK_PHASE_UPLOAD, p);
      points = stream_points_.as();
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

  // dst (device) <- section s's stored points. A section stored whole from the key's memory goes
  // through the device's staging; anything else (compacted, or read from the key file) is packed
  // on the host straight into one of two pinned chunks while the other one's DMA runs. progress:
  // the key upload's (a step per chunk, with its cancel check), or NULL for a section streamed in.
  cuzk_status upload_section(PointSection s, uint8_t* dst, const Progress* progress, std::string& err) {
    const auto& z = *key_.zkey;
    cudaStream_t st = dev_->stream;
    const uint64_t n = plan_.stored[s], pb = plan_.stored_bytes[s] / (n ? n : 1);
    const engine::Support& sup = compact_.support[engine::group_of(s)];
    if (sup.all && z.points(s)) {
      const uint64_t lead = s == formats::kSecC ? (uint64_t)key_.n_public + 1 : 0;
      if (lead) CUZK_CU(cudaMemsetAsync(dst, 0, lead * pb, st));
      CUZK_TRY(dev_->staging.upload(dst + lead * pb, z.points(s), (n - lead) * pb, st, err));
      return progress ? engine::upload_step(*progress, n * pb, err) : CUZK_OK;
    }
    for (int i = 0; i < 2; i++) {
      if (!pack_buf_[i]) CUZK_CU(pinned_alloc(&pack_buf_[i], kPackChunk));
      if (!pack_ev_[i]) CUZK_CU(cudaEventCreateWithFlags(&pack_ev_[i], cudaEventDisableTiming));
    }
    const uint64_t per_chunk = kPackChunk / pb;
    int i = 0;
    for (uint64_t j = 0; j < n; j += per_chunk, i ^= 1) {
      const uint64_t count = std::min(per_chunk, n - j);
      CUZK_CU(cudaEventSynchronize(pack_ev_[i]));  // the DMA out of this chunk two rounds ago is done
      uint8_t* chunk = static_cast<uint8_t*>(pack_buf_[i]);
      cuzk_status packed = compact_.pack(z, s, j, count, chunk, scratch_, err);
      if (packed != CUZK_OK) {
        cudaStreamSynchronize(st);  // nothing in flight reads the chunks when this returns
        return packed;
      }
      CUZK_CU(cudaMemcpyAsync(dst + j * pb, chunk, count * pb, cudaMemcpyHostToDevice, st));
      CUZK_CU(cudaEventRecord(pack_ev_[i], st));
      if (progress) {
        if (cuzk_status stop = engine::upload_step(*progress, count * pb, err); stop != CUZK_OK) {
          cudaStreamSynchronize(st);  // nothing in flight reads the chunks when this returns
          return stop;
        }
      }
    }
    CUZK_CU(cudaStreamSynchronize(st));
    return CUZK_OK;
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
  engine::EngineOptions options_;
  bool cpu_b2_ = false;
  engine::CompactKey compact_;
  engine::MemoryPlan plan_;
  RowBuffers bufs_a_, bufs_b_;
  DeviceRows<F> rows_a_{}, rows_b_{};
  DeviceBuffer index_[engine::kPointGroups], gathered_;  // supports on the device, gathered scalars
  DeviceBuffer points_[kPointSections], stream_points_;
  MsmBases h_copies_;  // copies > 1: the H section's points and their copies (make_h_copies)
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
  void* pack_buf_[2] = {nullptr, nullptr};  // pinned: packed points on their way to the device
  cudaEvent_t pack_ev_[2] = {nullptr, nullptr};
  std::vector<uint8_t> scratch_;  // reads from a key file
};

}  // namespace

template <class C>
cuzk_status make_engine(Device* device, const engine::KeyView<C>& key, const engine::EngineOptions& options,
                        const Progress& progress, std::unique_ptr<engine::Engine<C>>* out, std::string& err) {
  if (!device) { err = "no CUDA device"; return CUZK_ERR_NO_DEVICE; }
  if (key.log_domain > kNttMaxLog - 1) { err = "domain 2^" + std::to_string(key.log_domain) + " exceeds the GPU NTT"; return CUZK_ERR_UNSUPPORTED; }
  auto e = std::make_unique<GpuEngine<C>>(device, key);
  CUZK_TRY(e->init(options, progress, err));  // reports the upload as it goes
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
