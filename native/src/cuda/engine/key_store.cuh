// The memory plan's device side: how a GPU engine holds its key. The key's points are held without
// the points at infinity (engine/key_memory.hpp): per group of sections that share scalars (A and
// C, B1 and B2, H) one support, uploaded as an index so that each group's scalars can be gathered
// on the device. C's points are stored at the witness indices of the A+C support (explicit
// infinities for w[0..n_public]). The plan (engine/memory_plan.hpp, priced by gpu_costs.cpp) says
// which sections are resident and which stream, and the chunk every MSM and stream works in. A
// streamed section's points are copied once to pinned host memory when the host budget holds
// them (else packed from the key per chunk) and come up chunk by chunk on a copy stream into two
// chunk buffers. A resident H section is held as precomputed copies of its points (msm/bases.cuh:
// t copies, each 2^(c*V) times the one before, so that msm_h reduces V = ceil(W/t) windows instead
// of W): as many as the plan chose (its room, or EngineOptions::h_copies forcing a count, 0 turning
// them off; automatic, the default, only from 2^16 points, and only while H's MSM is one chunk).
// g2_on_cpu leaves B2 in the key's memory for the CPU; keep_infinity stores the points at infinity
// too (for measurements).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda/context/device_context.cuh"
#include "cuda/engine/abc.cuh"
#include "cuda/engine/gpu_costs.hpp"
#include "cuda/engine/row_chunks.hpp"
#include "cuda/msm/bases.cuh"
#include "engine/engine.hpp"
#include "engine/key_memory.hpp"
#include "engine/scalar_pack.hpp"
#include "util/progress.hpp"
#include "util/machine.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::cuda {

template <class C>
class GpuKeyStore {
  using D = DeviceCurve<C>;
  using F = typename D::Fr;
  using A1 = typename D::G1;
  using A2 = typename D::G2;
  using PointSection = formats::PointSection;
  static constexpr int kPointSections = formats::kPointSections;

 public:
  GpuKeyStore(DeviceContext* dev, const engine::KeyView<C>& key) : dev_(dev), key_(key) {}
  ~GpuKeyStore() {
    drain();  // no DMA reads what is freed below
    for (int i = 0; i < 2; i++) {
      pinned_free(pack_buf_[i], pack_bytes_);
      for (cudaEvent_t e : {pack_ev_[i], loaded_[i], points_free_[i], span_loaded_[i], span_free_[i]})
        if (e) cudaEventDestroy(e);
    }
    for (int s = 0; s < kPointSections; s++) pinned_free(host_points_[s], plan_.stored_bytes[s]);
    pinned_free(host_rows_, host_rows_bytes_);
    for (int i = 0; i < 2; i++)
      for (cudaEvent_t e : {rows_loaded_[i], rows_free_[i]})
        if (e) cudaEventDestroy(e);
    if (copy_stream_) cudaStreamDestroy(copy_stream_);
    if (span_stream_) cudaStreamDestroy(span_stream_);
  }
  GpuKeyStore(const GpuKeyStore&) = delete;
  GpuKeyStore& operator=(const GpuKeyStore&) = delete;

  // The plan, on the host: a key that does not fit is refused before any device allocation. The
  // caller holds the device's mutex with the device current (also for upload).
  cuzk_status plan(const engine::EngineOptions& options, std::string& err) {
    const auto& z = *key_.zkey;
    options_ = options;
    cpu_b2_ = options.g2_on_cpu && z.points_b2 != nullptr;  // in place: a key in memory only
    CUZK_TRY(compact_.build(z, default_thread_pool(), err));
    if (options.keep_infinity) {
      for (engine::Support& sup : compact_.support) {
        sup.all = true;
        sup.index.clear();
      }
    }
    engine::KeyShape shape = engine::describe_key(C::ID, key_.n_vars, key_.n_public, key_.n_constraints,
                                                  key_.a.signal.size() + key_.b.signal.size());
    engine::shape_of(z, compact_, shape);
    coef_table_.build(key_.a, key_.b, default_thread_pool());
    shape.coef_values = coef_table_.fits ? coef_table_.values.size() : 0;
    packing_ = EntryPacking::of(key_.n_vars, shape.coef_values);
    size_t free_b = 0, total_b = 0;
    CUZK_CU(cudaMemGetInfo(&free_b, &total_b));
    engine::PlanLimits limits;
    // A budget above what is free would let the device run out mid-upload: the free memory caps it.
    limits.budget = options.memory_budget ? std::min<uint64_t>(options.memory_budget, free_b) : free_b;
    limits.host_budget = options.host_budget ? options.host_budget : physical_memory() / 4 * 3;
    limits.batch = 1;  // judged per proof: a prover may be given single proofs
    limits.stream_all = options.stream_all;  // tests: every section streamed gives the same proofs
    limits.stream_rows = options.stream_rows;
    limits.overlap = options.overlap;
    limits.h_copies = options.h_copies;
    limits.chunk_points = options.chunk_points;
    CUZK_TRY(engine::plan_memory(gpu_costs(shape, cpu_b2_), limits, plan_, err));
    for (int s = 0; s < kPointSections; s++) {
      plan_.points[s] = shape.points[s];
      plan_.infinity[s] = shape.infinity[s];
    }
    // The most scalar indices one chunk of a support covers (a streamed H chunk of its own: of
    // H's): a streamed chunk's scalars come up so.
    chunk_span_ = shape.span[engine::chunk_log_of(plan_.msm_chunk)];
    if (plan_.h_chunk > plan_.msm_chunk && engine::streamed(plan_, formats::kSecH))
      chunk_span_ = std::max(chunk_span_, shape.group_span[engine::kGroupH][engine::chunk_log_of(plan_.h_chunk)]);
    return CUZK_OK;
  }

  // The rows, the supports' indices and the resident points uploaded as the plan says, the
  // streamed points copied to pinned host memory when the plan pins them, then the H copies made.
  cuzk_status upload(const Progress& progress, std::string& err) {
    // The upload's units: the rows, the supports' indices and the points held, in bytes.
    uint64_t index_bytes = 0;
    for (const engine::Support& sup : compact_.support) index_bytes += sup.all ? 0 : sup.index.size() * 4;
    const uint64_t pinned_points = plan_.pinned_bytes();
    progress.set_total(plan_.rows_bytes + index_bytes + plan_.resident_bytes() + pinned_points);
    if (coef_table_.fits) {
      CUZK_TRY(table_.ensure(coef_table_.values.size() * sizeof(F) + 16, err));
      CUZK_TRY(dev_->staging.upload(table_.as(), coef_table_.values.data(), coef_table_.values.size() * sizeof(F),
                                    dev_->stream, err));
    }
    if (plan_.rows_chunk) {
      CUZK_TRY(pin_rows(progress, err));
    } else {
      CUZK_TRY(upload_rows(key_.a, coef_table_.fits ? coef_table_.index_a.data() : nullptr, rows_a_, bufs_a_, err));
      CUZK_TRY(engine::upload_step(progress, plan_.rows_bytes / 2, err));
      CUZK_TRY(upload_rows(key_.b, coef_table_.fits ? coef_table_.index_b.data() : nullptr, rows_b_, bufs_b_, err));
      CUZK_TRY(engine::upload_step(progress, plan_.rows_bytes - plan_.rows_bytes / 2, err));
    }
    CUZK_CU(cudaStreamSynchronize(dev_->stream));
    coef_table_.release();  // on the device now
    for (int g = 0; g < engine::kPointGroups; g++) {
      const engine::Support& sup = compact_.support[g];
      if (sup.all || sup.index.empty()) continue;
      CUZK_TRY(index_[g].ensure(sup.index.size() * 4, err));
      CUZK_TRY(dev_->staging.upload(index_[g].as(), sup.index.data(), sup.index.size() * 4, dev_->stream, err));
      CUZK_TRY(engine::upload_step(progress, sup.index.size() * 4, err));
    }
    // With shared phases the streamed sums' buffers wait for the first group's sums.
    const bool shared = plan_.phases_shared;
    if (!shared || plan_.resident_bytes() > 0) CUZK_TRY(gathered_.ensure(gathered_bytes(), err));
    for (int i = 0; i < kPointSections; i++) {
      const PointSection s = (PointSection)i;
      if (!plan_.stored_bytes[s]) continue;
      if (plan_.placement[s] == engine::kResident) {
        CUZK_TRY(points_[s].ensure(plan_.stored_bytes[s] + 16, err));
        CUZK_TRY(upload_section(s, points_[s].as<uint8_t>(), &progress, err));
      } else if (plan_.pinned_section(s)) {
        // What the host cannot lock now stays in the key, read per group as the plan prices an
        // unpinned section; the plan the caller sees says so.
        if (pinned_alloc(&host_points_[s], plan_.stored_bytes[s]) == cudaSuccess) {
          CUZK_TRY(pin_section(s, progress, err));
        } else {
          (void)cudaGetLastError();
          host_points_[s] = nullptr;
          plan_.pinned &= ~(1u << s);
          plan_.host_bytes -= std::min(plan_.host_bytes, plan_.stored_bytes[s]);
        }
      }
    }
    if (engine::streams_any(plan_) || plan_.rows_chunk) {
      if (!copy_stream_) CUZK_CU(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
      for (int i = 0; i < 2; i++)
        for (cudaEvent_t* e : {&rows_loaded_[i], &rows_free_[i]})
          if (!*e) CUZK_CU(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    }
    if (engine::streams_any(plan_)) {
      if (!shared) CUZK_TRY(ensure_stream_buffers(err));
      if (!span_stream_) CUZK_CU(cudaStreamCreateWithFlags(&span_stream_, cudaStreamNonBlocking));
      for (int i = 0; i < 2; i++)
        for (cudaEvent_t* e : {&loaded_[i], &points_free_[i], &span_loaded_[i], &span_free_[i]})
          if (!*e) CUZK_CU(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    }
    CUZK_CU(cudaStreamSynchronize(dev_->stream));
    return make_h_copies(err);
  }

  const engine::MemoryPlan& memory_plan() const { return plan_; }
  const engine::EngineOptions& options() const { return options_; }
  // The streamed sums' device buffers: the gathered chunk's scalars, two chunks of points, two
  // scalar spans. With shared phases (plan_.phases_shared) they are given back while the proofs
  // of the next group work (the gathered scalars only when no resident section needs them there),
  // and the row chunks while the sums run.
  cuzk_status ensure_stream_buffers(std::string& err) {
    CUZK_TRY(gathered_.ensure(gathered_bytes(), err));
    if (!engine::streams_any(plan_)) return CUZK_OK;
    CUZK_TRY(stream_points_.ensure(plan_.stream_buffer_bytes() + 32, err));
    return span_.ensure(2 * span_slot_bytes(), err);
  }
  void release_stream_buffers(bool gathered) {
    stream_points_.release();
    span_.release();
    if (gathered) gathered_.release();
  }
  cuzk_status ensure_row_slots(std::string& err) {
    return plan_.rows_chunk ? row_slots_.ensure(2 * plan_.rows_chunk, err) : CUZK_OK;
  }
  void release_row_slots() { row_slots_.release(); }
  bool streamed(PointSection s) const { return engine::streamed(plan_, s); }
  // B2's MSM runs on the CPU over the key's points in memory.
  bool b2_on_cpu() const { return cpu_b2_; }
  const engine::Support& support(engine::PointGroup g) const { return compact_.support[g]; }
  const uint32_t* support_index(engine::PointGroup g) const { return index_[g].as<uint32_t>(); }
  // Where a chunk of a support's scalars is gathered before its plan.
  uint4* gathered_scalars() { return gathered_.as<uint4>(); }
  // Scalars that come up from the host for a chunk (the range of indices it covers), in two slots:
  // one step's come up on their own stream while the step before is summed.
  uint4* scalar_span(int slot) { return reinterpret_cast<uint4*>(span_.as<uint8_t>() + (size_t)slot * span_slot_bytes()); }
  // Starts copying `bytes` of host scalars into span slot `slot` once the work queued so far on the
  // device's stream (the slot's last readers among it) is done.
  cuzk_status upload_span(int slot, const void* host, size_t bytes, std::string& err) {
    if (bytes + 16 > span_slot_bytes()) { err = "a chunk's scalars are larger than their buffer"; return CUZK_ERR_INTERNAL; }
    CUZK_TRY(after_device_work(span_free_[slot], span_stream_, err));
    CUZK_CU(cudaMemcpyAsync(scalar_span(slot), host, bytes, cudaMemcpyHostToDevice, span_stream_));
    CUZK_CU(cudaEventRecord(span_loaded_[slot], span_stream_));
    return CUZK_OK;
  }
  // The same from a packed form of the scalars (engine/scalar_pack.hpp): range r of `packed`,
  // written into the slot's pinned stage once that stage's last copy is done.
  cuzk_status upload_span(int slot, const engine::PackedScalars& packed, const engine::PackedRange& r, std::string& err) {
    if (r.bytes + 16 > span_slot_bytes()) { err = "a chunk's packed scalars are larger than their buffer"; return CUZK_ERR_INTERNAL; }
    CUZK_TRY(span_stage_[slot].ensure(span_slot_bytes(), err));
    CUZK_CU(cudaEventSynchronize(span_loaded_[slot]));
    packed.write(r, span_stage_[slot].as<uint8_t>());
    return upload_span(slot, span_stage_[slot].as(), r.bytes, err);
  }
  // The device's stream waits for span slot `slot`'s upload.
  cuzk_status span_ready(int slot, std::string& err) {
    CUZK_CU(cudaStreamWaitEvent(dev_->stream, span_loaded_[slot], 0));
    return CUZK_OK;
  }
  // Runs launch(a, b, r0, r_end) (a cuzk_status) for rows [r0, r_end) of the domain [0, domain)
  // with matrices a and b holding those rows: once when the rows are held whole; else per chunk,
  // each coming up on the copy stream while the one before is used (rows past the matrices go
  // with the last chunk).
  template <class Launch>
  cuzk_status each_rows(uint32_t domain, Launch&& launch, std::string& err) {
    if (!plan_.rows_chunk) return launch(rows_a_, rows_b_, 0u, domain);
    for (size_t i = 0; i < row_chunks_.size(); i++) {
      if (i == 0) CUZK_TRY(load_rows(0, err));
      if (i + 1 < row_chunks_.size()) CUZK_TRY(load_rows(i + 1, err));
      const int slot = (int)(i & 1);
      CUZK_CU(cudaStreamWaitEvent(dev_->stream, rows_loaded_[slot], 0));
      const RowChunk& ch = row_chunks_[i];
      const RowChunkLayout l = chunk_layout(ch);
      const uint8_t* base = row_slots_.as<uint8_t>() + (size_t)slot * plan_.rows_chunk;
      const bool last = i + 1 == row_chunks_.size();
      CUZK_TRY(launch(chunk_rows(base, l.start_a, l.signal_a, l.coef_a, ch.first_a),
                      chunk_rows(base, l.start_b, l.signal_b, l.coef_b, ch.first_b), ch.first, last ? domain : ch.end));
    }
    return CUZK_OK;
  }
  const MsmBases& h_copies() const { return h_copies_; }
  // Group g's MSM chunk and the groups its windows are sorted and summed in.
  uint64_t chunk(engine::PointGroup g) const { return plan_.chunk_of(g); }
  int window_groups(engine::PointGroup g) const { return (int)plan_.window_groups_of(g); }
  // Section s's resident points (the H copies when they are held), from stored point `first` on.
  const void* resident_points(PointSection s, uint64_t first) const {
    const size_t pb = s == formats::kSecB2 ? sizeof(A2) : sizeof(A1);
    const void* base = s == formats::kSecH && h_copies_.copies > 1 ? h_copies_.points.as() : points_[s].as();
    return static_cast<const uint8_t*>(base) + first * pb;
  }
  // Starts copying stored points [first, first + count) of the streamed sections `secs` (of one
  // group) into chunk buffer `slot` (0 or 1) on the copy stream, once the work queued so far on the
  // device's stream (the slot's previous readers among it) is done. Section secs[i]'s points lie
  // at section_offset(secs, i) in the slot.
  cuzk_status load_chunk(const std::vector<PointSection>& secs, uint64_t first, uint64_t count, int slot,
                         std::string& err) {
    uint8_t* dst = stream_points_.as<uint8_t>() + (size_t)slot * slot_bytes();
    if (count > slot_points(secs) || section_offset(secs, secs.size()) > slot_bytes()) {
      err = "a streamed chunk is larger than its buffer";
      return CUZK_ERR_INTERNAL;
    }
    CUZK_TRY(after_device_work(points_free_[slot], copy_stream_, err));
    bool packs = false;  // some section comes from the key, through the slot's pinned pack buffer
    for (PointSection s : secs) packs |= !plan_.pinned_section(s);
    if (packs) {
      CUZK_TRY(ensure_pack_buffers(slot_bytes(), err));
      CUZK_CU(cudaEventSynchronize(pack_ev_[slot]));
    }
    for (size_t i = 0; i < secs.size(); i++) {
      const PointSection s = secs[i];
      const uint64_t pb = plan_.point_bytes[s], at = section_offset(secs, i);
      if (plan_.pinned_section(s)) {
        CUZK_CU(cudaMemcpyAsync(dst + at, static_cast<uint8_t*>(host_points_[s]) + first * pb, count * pb,
                                cudaMemcpyHostToDevice, copy_stream_));
      } else {
        // Packed from the key into a pinned chunk (two in turn: one packs while the other's DMA runs).
        uint8_t* packed = static_cast<uint8_t*>(pack_buf_[slot]) + at;
        CUZK_TRY(compact_.pack(*key_.zkey, s, first, count, packed, scratch_, err));
        CUZK_CU(cudaMemcpyAsync(dst + at, packed, count * pb, cudaMemcpyHostToDevice, copy_stream_));
      }
    }
    if (packs) CUZK_CU(cudaEventRecord(pack_ev_[slot], copy_stream_));
    CUZK_CU(cudaEventRecord(loaded_[slot], copy_stream_));
    return CUZK_OK;
  }
  // Chunk buffer `slot` once its load is done (the device's stream waits for it).
  cuzk_status chunk_points(int slot, const uint8_t** out, std::string& err) {
    CUZK_CU(cudaStreamWaitEvent(dev_->stream, loaded_[slot], 0));
    *out = stream_points_.as<uint8_t>() + (size_t)slot * slot_bytes();
    return CUZK_OK;
  }
  // Where section secs[i]'s points start in a chunk slot (i = secs.size(): the bytes they all take).
  uint64_t section_offset(const std::vector<PointSection>& secs, size_t i) const {
    uint64_t at = 0;
    for (size_t j = 0; j < i; j++) at += slot_points(secs) * plan_.point_bytes[secs[j]];
    return at;
  }
  // Waits until nothing on the copy streams is in flight (before the caller's memory goes away).
  void drain() {
    if (copy_stream_) cudaStreamSynchronize(copy_stream_);
    if (span_stream_) cudaStreamSynchronize(span_stream_);
  }

 private:
  static constexpr size_t kPackChunk = Staging::kChunk;  // the upload's packed chunks

  struct RowBuffers {
    DeviceBuffer start, signal, coef;  // coef: the values, or their 16-bit indices into table_
  };

  // The H section's copies, as the plan chose them: they replace its points (copy 0 is those points).
  cuzk_status make_h_copies(std::string& err) {
    const PointSection h = formats::kSecH;
    const uint64_t n = plan_.stored[h];
    if (plan_.h_copies < 2) return CUZK_OK;
    const int t = plan_.h_copies_asked, c = plan_.h_copies_window;
    const uint64_t t0 = now_ns();
    CUZK_TRY((msm_bases_build<C, 1>(h_copies_, points_[h].as<A1>(), (uint32_t)n, t, c, dev_->stream, err)));
    if (h_copies_.copies != (int)plan_.h_copies) {  // the plan prices exactly these
      err = "H copies: " + std::to_string(h_copies_.copies) + " made, the plan has " + std::to_string(plan_.h_copies);
      h_copies_.points.release();
      h_copies_.copies = 0;
      return CUZK_ERR_INTERNAL;
    }
    points_[h].release();
    if (g_kernel_trace)
      std::fprintf(stderr, "TRACE msm_h copies: %d of 2^%.1f points, window %d, %.2f GiB, made in %.1f ms\n",
                   h_copies_.copies, std::log2((double)n), c, h_copies_.bytes() / 1073741824.0, (now_ns() - t0) / 1e6);
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
    CUZK_TRY(ensure_pack_buffers(kPackChunk, err));
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

  // Two pinned chunks of at least `bytes` that points are packed into on their way up.
  cuzk_status ensure_pack_buffers(size_t bytes, std::string& err) {
    if (bytes > pack_bytes_) {
      for (int i = 0; i < 2; i++) {
        if (pack_ev_[i]) CUZK_CU(cudaEventSynchronize(pack_ev_[i]));
        pinned_free(pack_buf_[i], pack_bytes_);
        pack_buf_[i] = nullptr;
      }
      pack_bytes_ = 0;
      for (int i = 0; i < 2; i++) CUZK_CU(pinned_alloc(&pack_buf_[i], bytes));
      pack_bytes_ = bytes;
    }
    for (int i = 0; i < 2; i++)
      if (!pack_ev_[i]) CUZK_CU(cudaEventCreateWithFlags(&pack_ev_[i], cudaEventDisableTiming));
    return CUZK_OK;
  }

  // Streamed section s's stored points, packed once into its pinned host memory (host_points_[s],
  // allocated by the caller; progress: a step per chunk, with its cancel check).
  cuzk_status pin_section(PointSection s, const Progress& progress, std::string& err) {
    const uint64_t n = plan_.stored[s], pb = plan_.point_bytes[s];
    uint8_t* dst = static_cast<uint8_t*>(host_points_[s]);
    const uint64_t per_chunk = kPackChunk / pb;
    for (uint64_t j = 0; j < n; j += per_chunk) {
      const uint64_t count = std::min(per_chunk, n - j);
      CUZK_TRY(compact_.pack(*key_.zkey, s, j, count, dst + j * pb, scratch_, err));
      CUZK_TRY(engine::upload_step(progress, count * pb, err));
    }
    return CUZK_OK;
  }

  uint64_t largest_support() const {
    uint64_t m = 1;
    for (const engine::Support& sup : compact_.support) m = std::max<uint64_t>(m, sup.size());
    return m;
  }
  // A chunk's gathered scalars: of the largest chunk of any group, H's only when its support
  // drops points (else its chunks' scalars are read in place).
  uint64_t gathered_bytes() const {
    const engine::Support& h = compact_.support[engine::kGroupH];
    const uint64_t h_gathered = h.all ? 0 : std::min<uint64_t>(plan_.h_chunk, h.size());
    return std::max<uint64_t>(std::min<uint64_t>(plan_.msm_chunk, largest_support()), h_gathered) * 32 + 16;
  }
  // One of the stream buffer's chunk slots, and the points of each of sections `secs` it holds
  // (as many as fit, each section's one after another).
  uint64_t slot_bytes() const { return plan_.stream_buffer_bytes() / plan_.stream_buffers; }
  uint64_t slot_points(const std::vector<PointSection>& secs) const {
    uint64_t per_point = 0;
    for (PointSection s : secs) per_point += plan_.point_bytes[s];
    return per_point ? slot_bytes() / per_point : 0;
  }
  // Work queued on `copy` from now on waits for all the work queued so far on the device's stream
  // (a buffer's last readers among it), marked by `ev`.
  cuzk_status after_device_work(cudaEvent_t ev, cudaStream_t copy, std::string& err) {
    CUZK_CU(cudaEventRecord(ev, dev_->stream));
    CUZK_CU(cudaStreamWaitEvent(copy, ev, 0));
    return CUZK_OK;
  }

  // One of the two scalar span slots (16-byte aligned).
  uint64_t span_slot_bytes() const { return chunk_span_ * 32 + 16; }

  // The rows read in chunks: a pinned copy of both matrices on the host (RowChunkLayout of all the
  // rows), cut into chunks of the plan's rows_chunk bytes, and two chunk buffers on the device.
  uint64_t coef_bytes() const { return packing_.coef_bytes(coef_table_.fits ? coef_table_.values.size() : 0, sizeof(F)); }
  RowChunkLayout chunk_layout(const RowChunk& ch) const {
    return RowChunkLayout::of(ch.end - ch.first, ch.end_a - ch.first_a, ch.end_b - ch.first_b, row_coef_bytes_);
  }
  DeviceRows<F> chunk_rows(const uint8_t* base, uint64_t start, uint64_t signal, uint64_t coef, uint64_t first) const {
    const bool valued = row_coef_bytes_ == sizeof(F), indexed = row_coef_bytes_ == 2;
    return DeviceRows<F>{reinterpret_cast<const uint32_t*>(base + start), reinterpret_cast<const uint32_t*>(base + signal),
                         valued ? reinterpret_cast<const F*>(base + coef) : nullptr,
                         indexed ? reinterpret_cast<const uint16_t*>(base + coef) : nullptr,
                         valued ? nullptr : table_.template as<F>(), (uint32_t)first, packing_};
  }
  // A matrix's columns as the rows hold them: packed with their values' indices (EntryPacking) or
  // alone, into out.
  void write_columns(const engine::SparseRows<typename C::Fr>& m, const uint16_t* index, uint32_t* out) const {
    const size_t nnz = m.signal.size();
    if (!packing_.packed()) {
      std::memcpy(out, m.signal.data(), nnz * 4);
      return;
    }
    constexpr size_t kTasks = 64;
    default_thread_pool().parallel_for(kTasks, [&](size_t t) {
      for (size_t k = nnz * t / kTasks; k < nnz * (t + 1) / kTasks; k++) out[k] = packing_.pack(m.signal[k], index[k]);
    });
  }
  cuzk_status pin_rows(const Progress& progress, std::string& err) {
    const auto& a = key_.a;
    const auto& b = key_.b;
    const uint64_t rows = a.rows();
    if (b.rows() != rows) { err = "the A and B rows differ in count"; return CUZK_ERR_INTERNAL; }
    row_coef_bytes_ = coef_bytes();
    host_rows_layout_ = RowChunkLayout::of(rows, a.signal.size(), b.signal.size(), row_coef_bytes_);
    CUZK_CU(pinned_alloc(&host_rows_, host_rows_layout_.bytes));
    host_rows_bytes_ = host_rows_layout_.bytes;
    uint8_t* h = static_cast<uint8_t*>(host_rows_);
    const RowChunkLayout& l = host_rows_layout_;
    for (uint64_t r = 0; r <= rows; r++) {
      reinterpret_cast<uint32_t*>(h + l.start_a)[r] = (uint32_t)a.row_start[r];
      reinterpret_cast<uint32_t*>(h + l.start_b)[r] = (uint32_t)b.row_start[r];
    }
    write_columns(a, coef_table_.index_a.data(), reinterpret_cast<uint32_t*>(h + l.signal_a));
    write_columns(b, coef_table_.index_b.data(), reinterpret_cast<uint32_t*>(h + l.signal_b));
    if (row_coef_bytes_ == 0) {
      // packed with the columns
    } else if (row_coef_bytes_ == 2) {
      std::memcpy(h + l.coef_a, coef_table_.index_a.data(), a.signal.size() * 2);
      std::memcpy(h + l.coef_b, coef_table_.index_b.data(), b.signal.size() * 2);
    } else {
      std::memcpy(h + l.coef_a, a.coef.data(), a.coef.size() * sizeof(F));
      std::memcpy(h + l.coef_b, b.coef.data(), b.coef.size() * sizeof(F));
    }
    row_chunks_ = cut_row_chunks(a.row_start, b.row_start, rows, row_coef_bytes_, plan_.rows_chunk);
    if (row_chunks_.empty() && rows) { err = "a row of A and B is larger than the plan's row chunk"; return CUZK_ERR_INTERNAL; }
    CUZK_TRY(row_slots_.ensure(2 * plan_.rows_chunk, err));
    return engine::upload_step(progress, plan_.rows_bytes, err);
  }
  // Starts chunk i's rows up into row slot i & 1 once the work queued on the device's stream (the
  // slot's last reader among it) is done.
  cuzk_status load_rows(size_t i, std::string& err) {
    const int slot = (int)(i & 1);
    const RowChunk& ch = row_chunks_[i];
    const RowChunkLayout l = chunk_layout(ch), &hl = host_rows_layout_;
    const uint8_t* h = static_cast<const uint8_t*>(host_rows_);
    uint8_t* d = row_slots_.as<uint8_t>() + (size_t)slot * plan_.rows_chunk;
    const uint64_t rows = ch.end - ch.first, cb = row_coef_bytes_;
    CUZK_TRY(after_device_work(rows_free_[slot], copy_stream_, err));
    auto up = [&](uint64_t to, uint64_t from, uint64_t bytes) {
      return cudaMemcpyAsync(d + to, h + from, bytes, cudaMemcpyHostToDevice, copy_stream_);
    };
    CUZK_CU(up(l.start_a, hl.start_a + ch.first * 4ull, (rows + 1) * 4));
    CUZK_CU(up(l.start_b, hl.start_b + ch.first * 4ull, (rows + 1) * 4));
    CUZK_CU(up(l.signal_a, hl.signal_a + ch.first_a * 4, (ch.end_a - ch.first_a) * 4));
    CUZK_CU(up(l.signal_b, hl.signal_b + ch.first_b * 4, (ch.end_b - ch.first_b) * 4));
    if (cb) {  // else packed with the columns
      CUZK_CU(up(l.coef_a, hl.coef_a + ch.first_a * cb, (ch.end_a - ch.first_a) * cb));
      CUZK_CU(up(l.coef_b, hl.coef_b + ch.first_b * cb, (ch.end_b - ch.first_b) * cb));
    }
    CUZK_CU(cudaEventRecord(rows_loaded_[slot], copy_stream_));
    return CUZK_OK;
  }
  cuzk_status upload_rows(const engine::SparseRows<typename C::Fr>& m, const uint16_t* index, DeviceRows<F>& rows,
                          RowBuffers& b, std::string& err) {
    const size_t nnz = m.signal.size();
    std::vector<uint32_t> start(m.row_start.size());
    for (size_t r = 0; r < start.size(); r++) start[r] = (uint32_t)m.row_start[r];
    CUZK_TRY(b.start.ensure(start.size() * 4 + 4, err));
    CUZK_TRY(b.signal.ensure(nnz * 4 + 4, err));
    CUZK_TRY(dev_->staging.upload(b.start.as(), start.data(), start.size() * 4, dev_->stream, err));
    if (index && packing_.packed()) {
      std::vector<uint32_t> entries(nnz);
      write_columns(m, index, entries.data());
      CUZK_TRY(dev_->staging.upload(b.signal.as(), entries.data(), nnz * 4, dev_->stream, err));
      rows = DeviceRows<F>{b.start.template as<uint32_t>(), b.signal.template as<uint32_t>(), nullptr, nullptr,
                           table_.template as<F>(), 0u, packing_};
      return CUZK_OK;
    }
    CUZK_TRY(dev_->staging.upload(b.signal.as(), m.signal.data(), nnz * 4, dev_->stream, err));
    if (index) {
      CUZK_TRY(b.coef.ensure(nnz * 2 + 16, err));
      CUZK_TRY(dev_->staging.upload(b.coef.as(), index, nnz * 2, dev_->stream, err));
      rows = DeviceRows<F>{b.start.template as<uint32_t>(), b.signal.template as<uint32_t>(), nullptr,
                           b.coef.template as<uint16_t>(), table_.template as<F>(), 0u, EntryPacking{}};
    } else {
      CUZK_TRY(b.coef.ensure(nnz * sizeof(F) + sizeof(F), err));
      CUZK_TRY(dev_->staging.upload(b.coef.as(), m.coef.data(), nnz * sizeof(F), dev_->stream, err));
      rows = DeviceRows<F>{b.start.template as<uint32_t>(), b.signal.template as<uint32_t>(), b.coef.template as<F>(),
                           nullptr, nullptr, 0u, EntryPacking{}};
    }
    return CUZK_OK;
  }

  DeviceContext* dev_;
  const engine::KeyView<C>& key_;
  engine::EngineOptions options_;
  bool cpu_b2_ = false;
  engine::CompactKey compact_;
  engine::MemoryPlan plan_;
  RowBuffers bufs_a_, bufs_b_;
  engine::CoefTable<typename C::Fr> coef_table_;  // built in plan(), released once uploaded
  EntryPacking packing_;                           // whether the rows pack each index with its column
  DeviceBuffer table_;                            // the distinct coefficient values
  DeviceRows<F> rows_a_{}, rows_b_{};
  DeviceBuffer index_[engine::kPointGroups], gathered_;  // supports on the device, a chunk's gathered scalars
  DeviceBuffer points_[kPointSections], stream_points_, span_;  // resident points, two stream chunks, two chunks' scalar ranges
  void* host_points_[kPointSections] = {};  // pinned: streamed sections' points, when the plan pins them
  cudaStream_t copy_stream_ = nullptr;      // streamed chunks come up on it
  cudaStream_t span_stream_ = nullptr;      // and their scalars from the host on this one
  cudaEvent_t loaded_[2] = {nullptr, nullptr}, points_free_[2] = {nullptr, nullptr};
  cudaEvent_t span_loaded_[2] = {nullptr, nullptr}, span_free_[2] = {nullptr, nullptr};
  PinnedBuffer span_stage_[2];  // packed scalars on their way to a span slot
  cudaEvent_t rows_loaded_[2] = {nullptr, nullptr}, rows_free_[2] = {nullptr, nullptr};
  std::vector<RowChunk> row_chunks_;  // rows in chunks: the chunks, their host copy, two device slots
  RowChunkLayout host_rows_layout_;
  uint64_t row_coef_bytes_ = 0;
  void* host_rows_ = nullptr;  // pinned
  size_t host_rows_bytes_ = 0;
  DeviceBuffer row_slots_;
  MsmBases h_copies_;  // copies > 1: the H section's points and their copies (make_h_copies)
  void* pack_buf_[2] = {nullptr, nullptr};  // pinned: packed points on their way to the device
  size_t pack_bytes_ = 0;
  uint64_t chunk_span_ = 0;  // the widest range of scalar indices in one chunk of a support (plan())
  cudaEvent_t pack_ev_[2] = {nullptr, nullptr};
  std::vector<uint8_t> scratch_;  // reads from a key file
};

}  // namespace cuzk::cuda
