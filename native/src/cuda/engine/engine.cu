// The GPU prover engine's proof pipeline: per proof, its own work (the front: the witness uploaded,
// a/b/c from the witness and the key's rows, the H scalars by six NTTs) and then the five MSMs (the
// back), all on one device (B2's on the CPU beside it with g2_on_cpu). Asked to overlap
// (EngineOptions::overlap) and given the room for a second proof's buffers (overlap_bytes), a batch
// queues proof p+1's front on its own stream before proof p's MSMs, so that the two share the GPU.
// Otherwise one proof after another, proof p+1's witness uploaded on a second stream while proof p
// computes when the room holds a second witness buffer. How the key is held is the key store's
// (key_store.cuh); how the MSMs run in the plan's chunks, the dispatch's (msm_dispatch.cuh). A
// batch reads a streamed section once per group of proofs (choose_group): the group's witnesses
// are the caller's memory and its H scalars go to pinned host memory (as many proofs as the plan's
// host budget holds), and each chunk of the section's points comes up once and is summed with
// every proof's scalars. When the plan's phases share memory (phases_shared), a group's proofs and
// its streamed sums take turns in the same device memory: enter_proof_phase and enter_stream_phase
// give one side's buffers back and allocate the other's.
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
#include "engine/scalar_pack.hpp"
#include "util/machine.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::cuda {

namespace {

using formats::PointSection;
using formats::kPointSections;

// The order a proof's streamed groups of sections are summed in.
constexpr engine::PointGroup kStreamOrder[] = {engine::kGroupAC, engine::kGroupB, engine::kGroupH};

template <class C>
class GpuEngine final : public engine::Engine<C> {
  using D = DeviceCurve<C>;
  using F = typename D::Fr;
  using A1 = typename D::G1;
  using A2 = typename D::G2;

 public:
  GpuEngine(DeviceContext* dev, const engine::KeyView<C>& key) : dev_(dev), key_(key), store_(dev, key), msm_(dev, store_) {}
  ~GpuEngine() override {
    store_.drain();
    if (h_out_.stream) cudaStreamSynchronize(h_out_.stream);  // nothing in flight writes h_host_
    pinned_free(h_host_, h_host_bytes_);
    if (prefetch_.stream) cudaStreamDestroy(prefetch_.stream);
    if (prefetch_.after_reads) cudaEventDestroy(prefetch_.after_reads);
    if (prefetch_.uploaded) cudaEventDestroy(prefetch_.uploaded);
    if (h_out_.stream) cudaStreamDestroy(h_out_.stream);
    for (cudaEvent_t e : h_out_.copied)
      if (e) cudaEventDestroy(e);
    if (h_out_.ready) cudaEventDestroy(h_out_.ready);
    if (front_.stream) cudaStreamDestroy(front_.stream);
    for (cudaEvent_t e : front_.done)
      if (e) cudaEventDestroy(e);
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
    prefetch_.ready = false;
    cuzk_status st = choose_group(batch.size(), err);
    if (st != CUZK_OK) return st;
    msm_.watch(&batch);
    if (overlaps(batch.size())) return compute_overlapped(batch, times, sums, err);
    st = compute_groups(batch, times, sums, err);
    // Nothing in flight reads the caller's memory or writes the kept H scalars when this returns.
    if (st != CUZK_OK) {
      if (prefetch_.ready) cudaStreamSynchronize(prefetch_.stream);
      prefetch_.ready = false;
      if (h_out_.stream) cudaStreamSynchronize(h_out_.stream);
    }
    return st;
  }

 private:
  // The batch in groups (choose_group), proof after proof, each group's streamed sums after its
  // proofs' fronts.
  cuzk_status compute_groups(engine::WitnessSource& batch, engine::PhaseTimes& times, engine::ProofSums<C>* sums,
                             std::string& err) {
    for (size_t first = 0; first < batch.size(); first += group_) {
      const size_t count = std::min(group_, batch.size() - first);
      group_end_ = first + count;
      CUZK_TRY(enter_proof_phase(err));
      for (size_t k = 0; k < count; k++) {
        const size_t p = first + k;
        // Waits for proof p's check, which ran on the host while proof p-1 was on the GPU.
        engine::ProofInputs in;
        CUZK_TRY(batch.inputs(p, &in, err));
        group_w_[k] = in.w;
        // The group's reads of the witness come up packed when that takes at most an eighth of it
        // (bits and bytes), packed on the host while the GPU works on this proof.
        std::thread packer;
        if (packs_witness()) {
          packed_[k].clear();
          try {
            packer = std::thread([this, k, w = in.w] {
              packed_[k].pack(w, key_.n_vars, default_thread_pool(), (uint64_t)key_.n_vars * 32 / 8);
            });
          } catch (const std::system_error&) {
            // no thread: the group reads the witness as it is
          }
        }
        cuzk_status st = prove_one(in, p, k, batch, times, sums, err);
        if (packer.joinable()) packer.join();
        if (st == CUZK_OK && grouped()) {
          // Its spans are read once its work is done (its kept H scalars' copy out included, unless
          // that runs on its own stream beside the next proof).
          if (cudaError_t e = cudaStreamSynchronize(dev_->stream); e != cudaSuccess) st = fail(e, "cudaStreamSynchronize", err);
        }
        dev_->timeline.flush(times);
        if (st != CUZK_OK) return st;
        if (!grouped()) batch.computed(p);
      }
      if (!grouped()) continue;
      CUZK_TRY(enter_stream_phase(err));
      CUZK_TRY(streamed_sums(first, count, times, sums, err));
      for (size_t k = 0; k < count; k++) batch.computed(first + k);
    }
    return CUZK_OK;
  }

  // A proof's own buffers: its witness on the device and the NTT stage's vectors (a ends as its H
  // scalars). Set 1's vectors are used only when proofs overlap; one after another, its witness
  // buffer takes the prefetched next witness.
  struct ProofBuffers {
    DeviceBuffer w, va, vb, vc;
    DeviceBuffer vd;  // the fourth vector of a rotation of four (serial_lane)
  };
  // The stream proofs' fronts go on when they overlap the MSMs, its timeline, and per buffer set
  // the event its front's work is done at.
  struct Front {
    cudaStream_t stream = nullptr;
    GpuTimeline timeline;
    cudaEvent_t done[2] = {nullptr, nullptr};
  };

  // A batch with proofs overlapped: proof p+1's front is queued on the front stream (into buffer
  // set (p+1) & 1) before proof p's MSMs, which wait on the device for proof p's front only. Set
  // (p+1) & 1 was last read by proof p-1's MSMs, done when the host queues it (a pass returns once
  // its work is done).
  cuzk_status compute_overlapped(engine::WitnessSource& batch, engine::PhaseTimes& times, engine::ProofSums<C>* sums,
                                 std::string& err) {
    CUZK_TRY(enter_proof_phase(err));
    CUZK_TRY(ensure_proof_buffers(bufs_[1], err));
    CUZK_TRY(ensure_front_stream(err));
    const size_t n = batch.size();
    engine::ProofInputs next;
    cuzk_status st = batch.inputs(0, &next, err);
    if (st == CUZK_OK) st = front(next, 0, 0, front_lane(0), batch, times, err);
    for (size_t p = 0; st == CUZK_OK && p < n; p++) {
      const engine::ProofInputs in = next;
      if (cudaError_t e = cudaStreamWaitEvent(dev_->stream, front_.done[p & 1], 0); e != cudaSuccess) {
        st = fail(e, "cudaStreamWaitEvent", err);
        break;
      }
      if (p + 1 < n) {
        st = batch.inputs(p + 1, &next, err);
        if (st == CUZK_OK) st = front(next, p + 1, 0, front_lane(p + 1), batch, times, err);
        if (st != CUZK_OK) break;
      }
      st = with_b2(in, p, times, sums, [&] { return back(p, bufs_[p & 1].w, bufs_[p & 1].va, times, sums, err); });
      if (st == CUZK_OK) batch.computed(p);
    }
    // Nothing in flight reads the caller's memory when this returns; the last front's spans are read.
    if (cudaError_t e = cudaStreamSynchronize(front_.stream); e != cudaSuccess && st == CUZK_OK)
      st = fail(e, "cudaStreamSynchronize", err);
    if (st == CUZK_OK) front_.timeline.flush(times);
    return st;
  }

  // Where a proof's front is queued: a stream, the timeline its spans go on, the buffers it fills
  // (the witness's may be the other set's, where it was prefetched).
  struct Lane {
    cudaStream_t stream;
    GpuTimeline* timeline;
    DeviceBuffer* w;
    DeviceBuffer *va, *vb, *vc;
    bool serial;  // the device's own stream, one proof after another (prefetching the next witness)
    int a_slot;   // rotating: which of the rotation's vectors is va (slot k % rotation() of the group's proof k)
  };
  // One after another. When the kept H scalars go out beside the next proof (rotates_vectors),
  // proof k of a group forms a and H in vector k % R of a rotation of R (rotation()) and b and c in
  // the next ones, so that proof k-1's H scalars, in the vector before va, can be copied out
  // meanwhile. Of three, b and c share one vector (c is formed again once a*b is); of four, each
  // has its own.
  Lane serial_lane(size_t k) {
    ProofBuffers& b = bufs_[0];
    if (!rotates_vectors()) return {dev_->stream, &dev_->timeline, w_, &b.va, &b.vb, &b.vc, true, -1};
    DeviceBuffer* v[4] = {&b.va, &b.vb, &b.vc, &b.vd};
    const int r = rotation(), a = (int)(k % r);
    return {dev_->stream, &dev_->timeline, w_, v[a], v[(a + 1) % r], v[(a + 2) % r], true, a};
  }
  // The vectors a rotation takes turns in: the plan's, three or four.
  int rotation() const { return store_.memory_plan().vectors >= 4 ? 4 : 3; }
  Lane front_lane(size_t p) {
    ProofBuffers& b = bufs_[p & 1];
    return {front_.stream, &front_.timeline, &b.w, &b.va, &b.vb, &b.vc, false, -1};
  }

  // Proof p (slot k of its group), one proof after another: its front, then the MSMs it computes
  // itself.
  cuzk_status prove_one(const engine::ProofInputs& in, size_t p, size_t k, engine::WitnessSource& batch,
                        engine::PhaseTimes& times, engine::ProofSums<C>* sums, std::string& err) {
    return with_b2(in, p, times, sums, [&]() -> cuzk_status {
      Lane lane = serial_lane(k);
      CUZK_TRY(front(in, p, k, lane, batch, times, err));
      // The passes time their chunks on a fresh timeline: this proof's spans so far are read first.
      CUZK_CU(cudaStreamSynchronize(dev_->stream));
      dev_->timeline.flush(times);
      return back(p, *w_, *lane.va, times, sums, err, &batch);
    });
  }

  // Runs gpu_work with proof p's B2 sum on the CPU beside it when the key store says so; its
  // witness bytes are the caller's.
  template <class Work>
  cuzk_status with_b2(const engine::ProofInputs& in, size_t p, engine::PhaseTimes& times, engine::ProofSums<C>* sums,
                      Work&& gpu_work) {
    const auto& z = *key_.zkey;
    auto b2_on_cpu = [&] {
      engine::PhaseScope scope(times, p, CUZK_PHASE_MSM_B2);
      sums[p].b2 = cpu::msm<C, typename C::Fq2>(default_thread_pool(), z.points_b2, in.w, key_.n_vars);
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
    cuzk_status st = gpu_work();
    if (cpu_b2.joinable()) cpu_b2.join();
    if (b2_after && st == CUZK_OK) b2_on_cpu();
    return st;
  }

  // Proof p's front on `lane`: its witness up, a/b/c, and the NTTs that leave its H scalars in va.
  cuzk_status front(const engine::ProofInputs& in, size_t p, size_t k, const Lane& lane, engine::WitnessSource& batch,
                    engine::PhaseTimes& times, std::string& err) {
    cudaStream_t s = lane.stream;
    GpuTimeline& tl = *lane.timeline;
    const uint32_t nv = key_.n_vars, nd = key_.domain_size, L = key_.log_domain;
    const uint32_t rows = key_.n_constraints + key_.n_public + 1;
    if (!lane.serial) {  // the lane's previous front is done once its stream is: its spans are read first
      // Row chunks come up ordered after the device's stream: a lane of its own needs them whole.
      if (store_.memory_plan().rows_chunk) { err = "proofs overlap only with the rows held whole"; return CUZK_ERR_INTERNAL; }
      CUZK_CU(cudaStreamSynchronize(s));
      tl.flush(times);
    }
    CUZK_TRY(tl.begin(s, err));

    times.entering(CUZK_PHASE_UPLOAD);
    int t0 = tl.mark(err);
    DeviceBuffer* w = lane.w;
    if (lane.serial && prefetch_.ready && prefetch_.source == in.w && prefetch_.index == p) {
      w_ = w = prefetch_.into;  // uploaded while proof p-1 computed: only wait for it
      CUZK_CU(cudaStreamWaitEvent(s, prefetch_.uploaded, 0));
    } else {
      if (prefetch_.ready) CUZK_CU(cudaStreamSynchronize(prefetch_.stream));  // not this proof's: drop it
      CUZK_TRY(dev_->staging.upload(w->as(), in.w, (size_t)nv * 32, s, err));
    }
    prefetch_.ready = false;
    prefetch_.read_marked = false;
    const bool have_abc = in.a != nullptr;
    // Two vectors: a and b through the NTTs and multiplied, then c in b's place (from the rows
    // again, or the caller's), the same field operations as with three.
    const bool rotating = lane.a_slot >= 0;
    const bool two = store_.memory_plan().vectors < 3 || (rotating && rotation() < 4);
    // Two vectors, the previous proof's H scalars still going out of va: b and its NTT first.
    const bool b_first = lane.serial && !have_abc && forms_b_first();
    F* va = lane.va->template as<F>();
    F* vb = lane.vb->template as<F>();
    F* vc = lane.vc->template as<F>();
    // Copies out of earlier proofs' H scalars that may still read the vectors this proof writes:
    // rotating, those of its vectors (all but the one proof k-1's H scalars leave through); b
    // first, va's, waited for before a.
    if (rotating) {
      const int r = rotation();
      for (int i = 0; i < (two ? 2 : 3); i++) CUZK_CU(cudaStreamWaitEvent(s, h_out_.copied[(lane.a_slot + i) % r], 0));
    } else if (lane.serial && !b_first && forms_b_first()) {
      CUZK_CU(cudaStreamWaitEvent(s, h_out_.copied[0], 0));
    }
    if (have_abc) {
      CUZK_TRY(dev_->staging.upload(va, in.a, (size_t)nd * 32, s, err));
      CUZK_TRY(dev_->staging.upload(vb, in.b, (size_t)nd * 32, s, err));
      if (!two) CUZK_TRY(dev_->staging.upload(vc, in.c, (size_t)nd * 32, s, err));
    }
    int t1 = tl.mark(err);
    tl.span(t0, t1, CUZK_PHASE_UPLOAD, p);
    // When nothing after the front reads the witness on the device, the next one may come up into
    // this buffer as soon as a/b/c (and c's rows) have read it.
    const bool frees_witness = lane.serial && witness_freed_by_front();

    times.entering(CUZK_PHASE_ABC);
    if (have_abc) {
      for (F* v : {va, vb, vc}) {
        if (two && v == vc) continue;
        to_mont_kernel<F><<<ceil_div(nd, 256), 256, 0, s>>>(v, nd);
        CUZK_LAUNCHED("to_mont_kernel");
      }
    } else if (b_first) {
      CUZK_TRY(dot_pass(false, rows, w->as<F>(), vb, s, err));
    } else {
      CUZK_TRY(store_.each_rows(nd, [&](const DeviceRows<F>& ra, const DeviceRows<F>& rb, uint32_t r0, uint32_t r1) {
        abc_rows<F><<<ceil_div(r1 - r0, 128), 128, 0, s>>>(ra, rb, r0, r1, rows, w->as<F>(), va, vb, two ? nullptr : vc);
        return check_launch("abc_rows", err);
      }, err));
    }
    if (frees_witness && !two) mark_witness_read(s);
    int t2 = tl.mark(err);
    tl.span(t1, t2, CUZK_PHASE_ABC, p);

    times.entering(CUZK_PHASE_NTT_H);
    auto& ntt = dev_->ntt<C>();
    if (!two) {
      for (F* v : {va, vb, vc}) CUZK_TRY(ntt.to_coset(v, L, s, err));
      ntt_h_scalars<F><<<ceil_div(nd, 256), 256, 0, s>>>(va, vb, vc, nd);
      CUZK_LAUNCHED("ntt_h_scalars");
    } else {
      if (b_first) {
        CUZK_TRY(ntt.to_coset(vb, L, s, err));
        CUZK_CU(cudaStreamWaitEvent(s, h_out_.copied[0], 0));  // the previous proof's H scalars are out of va
        CUZK_TRY(dot_pass(true, rows, w->as<F>(), va, s, err));
        CUZK_TRY(ntt.to_coset(va, L, s, err));
      } else {
        for (F* v : {va, vb}) CUZK_TRY(ntt.to_coset(v, L, s, err));
      }
      ntt_h_product<F><<<ceil_div(nd, 256), 256, 0, s>>>(va, vb, nd);
      CUZK_LAUNCHED("ntt_h_product");
      if (have_abc) {
        CUZK_TRY(dev_->staging.upload(vb, in.c, (size_t)nd * 32, s, err));
        to_mont_kernel<F><<<ceil_div(nd, 256), 256, 0, s>>>(vb, nd);
        CUZK_LAUNCHED("to_mont_kernel");
      } else {
        CUZK_TRY(store_.each_rows(nd, [&](const DeviceRows<F>& ra, const DeviceRows<F>& rb, uint32_t r0, uint32_t r1) {
          c_rows<F><<<ceil_div(r1 - r0, 128), 128, 0, s>>>(ra, rb, r0, r1, rows, w->as<F>(), vb);
          return check_launch("c_rows", err);
        }, err));
      }
      if (frees_witness) mark_witness_read(s);
      CUZK_TRY(ntt.to_coset(vb, L, s, err));
      ntt_h_less<F><<<ceil_div(nd, 256), 256, 0, s>>>(va, vb, nd);
      CUZK_LAUNCHED("ntt_h_less");
    }
    // The GPU has this proof's NTTs queued: time for the host to start the next witness's upload.
    if (lane.serial) prefetch(batch, p + 1);
    int t3 = tl.mark(err);
    tl.span(t2, t3, CUZK_PHASE_NTT_H, p);
    if (!lane.serial) CUZK_CU(cudaEventRecord(front_.done[p & 1], s));
    // In a group, the streamed sections wait for the group (streamed_sums): the H scalars go to
    // the host meanwhile (the witnesses are the caller's).
    if (grouped() && store_.streamed(formats::kSecH)) {
      uint8_t* to = static_cast<uint8_t*>(h_host_) + k * (size_t)nd * 32;
      if (!rotating && !b_first) {
        CUZK_CU(cudaMemcpyAsync(to, va, (size_t)nd * 32, cudaMemcpyDeviceToHost, s));
      } else {  // on its own stream, beside the next proof, which waits for it before writing va
        CUZK_CU(cudaEventRecord(h_out_.ready, s));
        CUZK_CU(cudaStreamWaitEvent(h_out_.stream, h_out_.ready, 0));
        CUZK_CU(cudaMemcpyAsync(to, va, (size_t)nd * 32, cudaMemcpyDeviceToHost, h_out_.stream));
        CUZK_CU(cudaEventRecord(h_out_.copied[rotating ? lane.a_slot : 0], h_out_.stream));
      }
    }
    return CUZK_OK;
  }

  // Proof p's MSMs on the device's stream, over its witness w and H scalars h on the device: the
  // resident sections, then (alone) the streamed ones. In a group the streamed sections wait for
  // the group (streamed_sums). next_up: one proof after another, the batch whose next witness may
  // come up into w beside the H MSM (nullptr: proofs overlapped).
  cuzk_status back(size_t p, const DeviceBuffer& wbuf, const DeviceBuffer& hbuf, engine::PhaseTimes& times,
                   engine::ProofSums<C>* sums, std::string& err, engine::WitnessSource* next_up = nullptr) {
    const PassScalars w{wbuf.as<uint8_t>(), nullptr}, h{hbuf.as<uint8_t>(), nullptr};
    auto here = [&](PointSection sec) {
      return (sec != formats::kSecB2 || !store_.b2_on_cpu()) && store_.memory_plan().stored[sec] > 0;
    };
    auto resident = [&](std::initializer_list<PointSection> of) {
      std::vector<PointSection> out;
      for (PointSection sec : of)
        if (here(sec) && !store_.streamed(sec)) out.push_back(sec);
      return out;
    };
    // B over the whole witness too: A's plan is B's (one plan for four MSMs, as without compaction).
    const bool b_shares_plan = store_.support(engine::kGroupB).all && store_.support(engine::kGroupAC).all;
    if (b_shares_plan) {
      CUZK_TRY(msm_.pass(engine::kGroupAC, resident({formats::kSecA, formats::kSecC, formats::kSecB1, formats::kSecB2}),
                         &w, p, 1, sums, times, err));
    } else {
      CUZK_TRY(msm_.pass(engine::kGroupAC, resident({formats::kSecA, formats::kSecC}), &w, p, 1, sums, times, err));
      CUZK_TRY(msm_.pass(engine::kGroupB, resident({formats::kSecB1, formats::kSecB2}), &w, p, 1, sums, times, err));
    }
    // The witness's last reader on the device is done (a pass returns once its work is): when the
    // front could not prefetch the next witness into a second buffer, it comes up into this one
    // while the H MSM runs.
    if (next_up && !prefetch_.ready && witness_freed_by_back()) {
      mark_witness_read(dev_->stream);
      prefetch(*next_up, p + 1);
    }
    CUZK_TRY(msm_.pass(engine::kGroupH, resident({formats::kSecH}), &h, p, 1, sums, times, err));
    if (grouped()) return CUZK_OK;
    // Alone, the proof streams its sections itself, over its scalars on the device.
    for (engine::PointGroup g : kStreamOrder)
      CUZK_TRY(msm_.pass(g, streamed_of(g), g == engine::kGroupH ? &h : &w, p, 1, sums, times, err));
    return CUZK_OK;
  }

  // One matrix's dot products (A when a_rows, else B) over the whole rows into out.
  cuzk_status dot_pass(bool a_rows, uint32_t rows, const F* w, F* out, cudaStream_t s, std::string& err) {
    return store_.each_rows(key_.domain_size, [&](const DeviceRows<F>& ra, const DeviceRows<F>& rb, uint32_t r0, uint32_t r1) {
      dot_rows<F><<<ceil_div(r1 - r0, 128), 128, 0, s>>>(a_rows ? ra : rb, r0, r1, rows, w, out);
      return check_launch("dot_rows", err);
    }, err);
  }

  // Whether a group's proofs copy their kept H scalars out beside the next proof: H streams and
  // the rows are whole (the next proof reads them once more than it would: row chunks would come
  // over the link again). With three or four vectors the roles rotate (serial_lane, rotates_vectors);
  // with two the next proof forms b and its NTT first, then a in the vector the copy has left
  // (forms_b_first).
  bool wants_h_out() const {
    return grouped() && store_.streamed(formats::kSecH) && store_.memory_plan().rows_chunk == 0;
  }
  bool rotates_vectors() const { return wants_h_out() && h_out_.stream && store_.memory_plan().vectors >= 3; }
  bool forms_b_first() const { return wants_h_out() && h_out_.stream && store_.memory_plan().vectors < 3; }

  // Whether a batch of n overlaps its proofs: the plan has room for the second set of buffers
  // (every section resident, the rows whole) and the batch has a second proof.
  bool overlaps(size_t n) const { return n >= 2 && store_.memory_plan().overlap_bytes > 0 && !grouped(); }

  cuzk_status ensure_proof_buffers(ProofBuffers& b, std::string& err) {
    const size_t nv = key_.n_vars, nd = key_.domain_size;
    CUZK_TRY(b.w.ensure(nv * 32, err));
    CUZK_TRY(b.va.ensure(nd * sizeof(F), err));
    CUZK_TRY(b.vb.ensure(nd * sizeof(F), err));
    if (store_.memory_plan().vectors >= 3) CUZK_TRY(b.vc.ensure(nd * sizeof(F), err));
    if (store_.memory_plan().vectors >= 4) CUZK_TRY(b.vd.ensure(nd * sizeof(F), err));
    return CUZK_OK;
  }

  cuzk_status ensure_front_stream(std::string& err) {
    if (!front_.stream) CUZK_CU(cudaStreamCreateWithFlags(&front_.stream, cudaStreamNonBlocking));
    for (cudaEvent_t& e : front_.done)
      if (!e) CUZK_CU(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return CUZK_OK;
  }

  // The streamed sections of group g that the GPU sums (they come up together, chunk by chunk).
  std::vector<PointSection> streamed_of(engine::PointGroup g) const {
    std::vector<PointSection> out;
    for (int i = 0; i < kPointSections; i++) {
      const PointSection sec = (PointSection)i;
      if (engine::group_of(sec) != g || !store_.streamed(sec)) continue;
      if (sec == formats::kSecB2 && store_.b2_on_cpu()) continue;
      out.push_back(sec);
    }
    return out;
  }

  // Whether a group's witnesses are packed for its reads: some section over the witness streams
  // and is summed here, the group has several proofs, and the CPU pool is free (B2 on the CPU
  // uses it beside the GPU).
  bool packs_witness() const {
    if (!grouped() || store_.b2_on_cpu()) return false;
    return !streamed_of(engine::kGroupAC).empty() || !streamed_of(engine::kGroupB).empty();
  }

  // Whether the streamed sections wait for the group's proofs (streamed_sums), over scalars on
  // the host: a group of several, or any group when the phases share memory (a proof alone then
  // is a group of one).
  bool grouped() const { return group_ > 1 || store_.memory_plan().phases_shared; }

  // How many proofs share one read of each streamed section (engine::stream_group, from the
  // plan's host budget for the kept H scalars), into group_; it allocates their pinned host area
  // when H streams. Without it (pinned memory refused) 1: each proof reads the sections itself,
  // unless the phases share memory, which needs the host area: then out of memory.
  cuzk_status choose_group(size_t n, std::string& err) {
    const uint64_t nd = key_.domain_size;
    group_ = std::min((size_t)engine::stream_group(store_.memory_plan(), n, store_.options().stream_per_proof), kMaxGroup);
    if (grouped() && store_.streamed(formats::kSecH) && group_ * nd * 32 > h_host_bytes_) {
      // The area held now is given back first, so it counts as room.
      const uint64_t room = pinnable_bytes();
      group_ = engine::group_within_room(group_, nd * 32, room == UINT64_MAX ? room : room + h_host_bytes_);
      if (!grouped() || group_ * nd * 32 <= h_host_bytes_) return CUZK_OK;
      pinned_free(h_host_, h_host_bytes_);
      h_host_ = nullptr;
      h_host_bytes_ = 0;
      if (pinned_alloc(&h_host_, group_ * nd * 32) != cudaSuccess) {
        (void)cudaGetLastError();
        h_host_ = nullptr;
        if (store_.memory_plan().phases_shared) {
          const std::string why = pinning_refusal(group_ * nd * 32);
          err = "pinned host memory for " + std::to_string(group_) + " proofs' H scalars (" +
                engine::bytes_text(group_ * nd * 32) + ") was refused" + (why.empty() ? "" : " (" + why + ")") +
                "; the plan's streamed sums need it";
          return CUZK_ERR_OUT_OF_MEMORY;
        }
        group_ = 1;
        return CUZK_OK;
      }
      h_host_bytes_ = group_ * nd * 32;
    }
    return CUZK_OK;
  }

  // A proof's own buffers: its witness and the NTT vectors (and the key store's row chunks). With
  // shared phases the streamed sums' buffers are given back first.
  cuzk_status enter_proof_phase(std::string& err) {
    if (store_.memory_plan().phases_shared && streaming_phase_) {
      CUZK_CU(cudaStreamSynchronize(dev_->stream));
      // The MSM workspace too, unless a resident section is summed in this phase.
      const bool msm_workspace = store_.memory_plan().resident_bytes() == 0;
      store_.release_stream_buffers(msm_workspace);
      if (msm_workspace) {
        dev_->msm.release();
        dev_->plan.release();
      }
      streaming_phase_ = false;
    }
    w_ = &bufs_[0].w;
    CUZK_TRY(ensure_proof_buffers(bufs_[0], err));
    if (wants_h_out() && !h_out_.stream) {  // the stream last: it says the events are there
      for (cudaEvent_t* e : {&h_out_.copied[0], &h_out_.copied[1], &h_out_.copied[2], &h_out_.copied[3], &h_out_.ready})
        if (!*e) CUZK_CU(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
      CUZK_CU(cudaStreamCreateWithFlags(&h_out_.stream, cudaStreamNonBlocking));
    }
    return store_.ensure_row_slots(err);
  }

  // The streamed sums' buffers (stream chunks, scalar spans); with shared phases a proof's own
  // are given back first (nothing in flight reads them: the group's work is synchronised).
  cuzk_status enter_stream_phase(std::string& err) {
    if (h_out_.stream) CUZK_CU(cudaStreamSynchronize(h_out_.stream));  // the group's H scalars have landed
    if (store_.memory_plan().phases_shared) {
      CUZK_CU(cudaStreamSynchronize(dev_->stream));
      if (prefetch_.ready) CUZK_CU(cudaStreamSynchronize(prefetch_.stream));
      prefetch_.ready = false;
      for (ProofBuffers& set : bufs_)
        for (DeviceBuffer* b : {&set.w, &set.va, &set.vb, &set.vc, &set.vd}) b->release();
      store_.release_row_slots();
      streaming_phase_ = true;
    }
    return store_.ensure_stream_buffers(err);
  }

  // A group's streamed sections: each read once, chunk by chunk, and each chunk summed with every
  // proof's scalars from the host (the witnesses, the kept H scalars).
  cuzk_status streamed_sums(size_t first, size_t count, engine::PhaseTimes& times, engine::ProofSums<C>* sums,
                            std::string& err) {
    const uint64_t nd = key_.domain_size;
    std::vector<PassScalars> w(count), h(count);
    for (size_t k = 0; k < count; k++) {
      w[k].host = group_w_[k];
      w[k].packed = packed_[k].size() ? &packed_[k] : nullptr;
      h[k].host = static_cast<const uint8_t*>(h_host_) + k * nd * 32;
    }
    // Each pass's first chunk comes up while the pass before sums its last.
    for (size_t i = 0; i < std::size(kStreamOrder); i++) {
      const engine::PointGroup g = kStreamOrder[i];
      typename GpuMsmDispatch<C>::NextPass next;
      for (size_t j = i + 1; j < std::size(kStreamOrder) && next.secs.empty(); j++) {
        next.g = kStreamOrder[j];
        next.secs = streamed_of(next.g);
      }
      CUZK_TRY(msm_.pass(g, streamed_of(g), g == engine::kGroupH ? h.data() : w.data(), first, count, sums, times, err,
                         next));
    }
    return CUZK_OK;
  }

  // Whether every section the GPU sums over the witness is streamed (`streamed`), or none is.
  bool witness_sections_all(bool streamed) const {
    for (PointSection sec : {formats::kSecA, formats::kSecB1, formats::kSecB2, formats::kSecC}) {
      if (sec == formats::kSecB2 && store_.b2_on_cpu()) continue;
      if (store_.memory_plan().stored[sec] > 0 && store_.streamed(sec) != streamed) return false;
    }
    return true;
  }
  // Whether a proof's witness on the device has no reader after its front: in a group, every
  // section over the witness is summed later from the host copy (or on the CPU).
  bool witness_freed_by_front() const { return grouped() && witness_sections_all(true); }
  // Whether, one proof after another, it has no reader after its resident A, B and C sums: no
  // section over the witness streams (alone, a proof streams its sections after H, from the
  // witness on the device).
  bool witness_freed_by_back() const { return !grouped() && witness_sections_all(false); }

  // A prefetching call's result: a failure (an allocation's is not sticky) is cleared and turns
  // prefetching off for this engine.
  bool prefetch_ok(cudaError_t r) {
    if (r == cudaSuccess) return true;
    cudaGetLastError();
    prefetch_.enabled = false;
    return false;
  }

  bool ensure_prefetch_stream() {
    return (prefetch_.stream || prefetch_ok(cudaStreamCreateWithFlags(&prefetch_.stream, cudaStreamNonBlocking))) &&
           (prefetch_.after_reads || prefetch_ok(cudaEventCreateWithFlags(&prefetch_.after_reads, cudaEventDisableTiming))) &&
           (prefetch_.uploaded || prefetch_ok(cudaEventCreateWithFlags(&prefetch_.uploaded, cudaEventDisableTiming)));
  }

  // The last read of this proof's witness (its front's, or its resident sums') is queued on s: the
  // next witness may come up in place after it (prefetch).
  void mark_witness_read(cudaStream_t s) {
    if (!prefetch_.enabled || !ensure_prefetch_stream()) return;
    if (prefetch_ok(cudaEventRecord(prefetch_.after_reads, s))) prefetch_.read_marked = true;
  }

  // Starts the upload of proof `next`'s witness on the prefetch stream: into this proof's witness
  // buffer once its last reader is done (mark_witness_read), else into the other witness buffer,
  // behind this proof's work so far. Only a pinned witness without a, b, c; a check that fails (or
  // a cancel) is left for the batch loop to report when it asks for that proof; any device error
  // here only turns prefetching off for this engine.
  void prefetch(engine::WitnessSource& batch, size_t next) {
    if (!prefetch_.enabled || next >= batch.size()) return;
    // With shared phases the witness buffers are given back after the group's last proof.
    if (store_.memory_plan().phases_shared && next >= group_end_) return;
    const bool in_place = prefetch_.read_marked;
    // A second witness buffer must fit the room the plan leaves in the budget while proofs
    // compute (with shared phases it is given back with the proof's other buffers).
    if (!in_place && (!bufs_[0].w.bytes() || !bufs_[1].w.bytes()) &&
        (!prefetch_.second_fits || store_.memory_plan().proof_phase_room() < (uint64_t)key_.n_vars * 32)) {
      prefetch_.second_fits = false;
      return;
    }
    engine::ProofInputs in;
    std::string e;
    if (batch.inputs(next, &in, e) != CUZK_OK || in.a || !is_pinned(in.w)) return;
    DeviceBuffer* into = in_place ? w_ : w_ == &bufs_[0].w ? &bufs_[1].w : &bufs_[0].w;
    if (into->ensure((size_t)key_.n_vars * 32, e) != CUZK_OK) { prefetch_ok(cudaErrorMemoryAllocation); return; }
    if (!ensure_prefetch_stream()) return;
    // In place: after the front's reads (recorded there). Else the other buffer's last readers
    // (proof next-2) are done; ordering after this proof's work so far keeps it so.
    if ((!in_place && !prefetch_ok(cudaEventRecord(prefetch_.after_reads, dev_->stream))) ||
        !prefetch_ok(cudaStreamWaitEvent(prefetch_.stream, prefetch_.after_reads, 0)) ||
        !prefetch_ok(cudaMemcpyAsync(into->as(), in.w, (size_t)key_.n_vars * 32, cudaMemcpyHostToDevice, prefetch_.stream)) ||
        !prefetch_ok(cudaEventRecord(prefetch_.uploaded, prefetch_.stream)))
      return;
    prefetch_.ready = true;
    prefetch_.index = next;
    prefetch_.source = in.w;
    prefetch_.into = into;
  }

  DeviceContext* dev_;
  const engine::KeyView<C>& key_;
  GpuKeyStore<C> store_;
  GpuMsmDispatch<C> msm_;
  ProofBuffers bufs_[2];
  Front front_;
  // A group of proofs sharing each streamed section's read (choose_group): their witnesses (the
  // caller's memory) and, when H streams, their H scalars (pinned host memory).
  static constexpr size_t kMaxGroup = 1024;
  size_t group_ = 1;
  size_t group_end_ = 0;          // one past the current group's last proof
  bool streaming_phase_ = true;   // shared phases: the streamed sums' buffers may be held (the first
                                  // proof phase gives back what creating the prover left)
  const uint8_t* group_w_[kMaxGroup] = {};
  engine::PackedScalars packed_[kMaxGroup];  // their packed forms (empty: not packed)
  void* h_host_ = nullptr;
  size_t h_host_bytes_ = 0;
  DeviceBuffer* w_ = &bufs_[0].w;  // the current proof's witness on the device (one after another)
  // The kept H scalars' copies out, on their own stream (rotates_vectors): the event each vector's
  // last copy out is done at, and the one a proof's H scalars are ready at.
  struct HOut {
    cudaStream_t stream = nullptr;
    cudaEvent_t copied[4] = {nullptr, nullptr, nullptr, nullptr};
    cudaEvent_t ready = nullptr;
  } h_out_;
  struct Prefetch {
    bool enabled = true;      // off after a device error
    bool second_fits = true;  // off once the plan's room was found too small for a second witness buffer
    bool read_marked = false; // the current proof's last read of its witness is queued
    bool ready = false;       // an upload was started for proof `index`
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
