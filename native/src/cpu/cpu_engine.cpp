#include "cpu/cpu_engine.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cpu/msm.hpp"
#include "cpu/ntt.hpp"
#include "util/machine.hpp"
#include "util/scratch.hpp"

namespace cuzk::cpu {

engine::EngineCosts cpu_costs(const engine::KeyShape& key, bool compact) {
  engine::EngineCosts c;
  c.memory = "host";
  const uint64_t fr = 32, nd = key.domain;
  // The rows (read in place, counted here), the H scalars and the supports' indices; a, b, c are
  // the NTT stage's vectors (all three).
  c.fixed = 2 * (key.rows + 1) * 8 + key.coefs * (4 + fr) + nd * 32 + key.index_count * 4;
  c.vector_bytes = nd * fr;
  c.vectors_min = 3;
  c.largest_msm = std::max({key.support[0], key.support[1], key.support[2], (uint64_t)1});
  const bool gathers = key.index_count > 0;
  for (int k = engine::kMinChunkLog; k <= engine::kMaxChunkLog; k++)
    c.msm_workspace[0][k] = gathers ? std::min<uint64_t>(1ull << k, c.largest_msm) * 32 : 0;
  const bool bls = key.curve == CUZK_CURVE_BLS12_381;
  for (int s = 0; s < engine::kSections; s++) {
    c.stored[s] = key.support[engine::group_of((formats::PointSection)s)];
    // Points in the key's encoding: x, y over Fq (G2: Fq2).
    c.point_bytes[s] = compact ? (bls ? 96 : 64) * (s == formats::kSecB2 ? 2 : 1) : 0;
  }
  c.h_kept_per_proof = nd * 32;
  c.kept_on_host = false;   // the group's H scalars are this engine's own memory
  c.stream_buffers = 1;     // a chunk is read, then summed
  c.link_bytes_per_s = 2e9;  // points packed from the key file or its generator
  c.chunk_cost_s = 1e-3;
  return c;
}

namespace {

#define CUZK_CPU_TRY(expr)                  \
  do {                                      \
    if (cuzk_status st_ = (expr); st_ != CUZK_OK) return st_; \
  } while (0)

using engine::PhaseScope;
using formats::PointSection;

template <class C>
class CpuEngine final : public engine::Engine<C> {
  using Fr = typename C::Fr;
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;

 public:
  CpuEngine(const engine::KeyView<C>& key, ThreadPool& pool) : key_(key), pool_(pool) {}

  cuzk_backend kind() const override { return CUZK_BACKEND_CPU; }
  engine::MemoryPlan memory_plan() const override { return plan_; }

  // A key in memory is read in place (its points at infinity cost the MSMs nothing: they are
  // skipped when the scalars are classified). A key whose points stay in its file (on demand) is
  // held compacted: each section resident in this engine's memory or read in per group of proofs,
  // as the plan chosen from the budget says. Every MSM runs in the plan's chunks.
  cuzk_status init(const engine::EngineOptions& options, const Progress& progress, std::string& err) {
    options_ = options;
    const auto& z = *key_.zkey;
    compact_ = z.source != nullptr;
    engine::KeyShape shape = engine::describe_key(C::ID, key_.n_vars, key_.n_public, key_.n_constraints,
                                                  key_.a.signal.size() + key_.b.signal.size());
    if (compact_) {
      CUZK_CPU_TRY(keys_.build(z, pool_, err));
      engine::shape_of(z, keys_, shape);
    }
    engine::PlanLimits limits;
    limits.budget = options.memory_budget ? options.memory_budget : physical_memory();
    limits.host_budget = limits.budget;
    limits.batch = 1;  // judged per proof: a prover may be given single proofs
    limits.stream_all = options.stream_all;
    limits.chunk_points = options.chunk_points;
    CUZK_CPU_TRY(engine::plan_memory(cpu_costs(shape, compact_), limits, plan_, err));
    for (int s = 0; s < formats::kPointSections; s++) {
      plan_.points[s] = shape.points[s];
      plan_.infinity[s] = shape.infinity[s];
    }
    progress.set_total(plan_.resident_bytes());
    for (int i = 0; i < formats::kPointSections; i++) {
      const PointSection s = (PointSection)i;
      if (plan_.placement[s] != engine::kResident) continue;
      uint8_t* dst = resident_[s].reserve(plan_.stored_bytes[s]);
      const uint64_t pb = z.point_bytes(s);
      for (uint64_t j = 0; j < plan_.stored[s]; j += kReadChunk) {
        const uint64_t count = std::min(kReadChunk, plan_.stored[s] - j);
        CUZK_CPU_TRY(keys_.pack(z, s, j, count, dst + j * pb, scratch_, err));
        CUZK_CPU_TRY(engine::upload_step(progress, count * pb, err));
      }
    }
    if (plan_.stream_buffer_bytes()) stream_.reserve(plan_.stream_buffer_bytes());
    return CUZK_OK;
  }

  cuzk_status compute(engine::WitnessSource& batch, engine::PhaseTimes& times, engine::ProofSums<C>* sums,
                      std::string& err) override {
    const size_t n = key_.domain_size;
    batch_ = &batch;
    // A batch reads each streamed section once per group of proofs (engine::stream_group): when H
    // streams, the group's H scalars are kept meanwhile (n * 32 bytes a proof, in what the budget
    // leaves); the witnesses are the caller's, valid for the whole call.
    const bool keep_h = engine::streamed(plan_, formats::kSecH);
    const size_t group = engine::stream_group(plan_, batch.size(), options_.stream_per_proof);
    // Workspace kept between calls: a proving loop allocates nothing after its first proof.
    Fr* a = a_.reserve(n);
    Fr* b = b_.reserve(n);
    Fr* c = c_.reserve(n);
    uint8_t* h_group = h_.reserve((keep_h ? group : 1) * n * 32);
    std::vector<const uint8_t*> w_group(group), h_of(group);
    std::vector<engine::ProofSums<C>*> out_of(group);
    for (size_t first = 0; first < batch.size(); first += group) {
      const size_t count = std::min(group, batch.size() - first);
      for (size_t k = 0; k < count; k++) {
        const size_t p = first + k;
        engine::ProofInputs in;
        cuzk_status st = batch.inputs(p, &in, err);  // waits for its check; fails the batch with it
        if (st != CUZK_OK) return st;
        const uint8_t* w = w_group[k] = in.w;
        uint8_t* h = h_group + (keep_h ? k : 0) * n * 32;
        h_of[k] = h;
        out_of[k] = &sums[p];
        {
          PhaseScope t(times, p, CUZK_PHASE_ABC);
          if (!in.a) {
            evaluate_rows(key_.a, w, a);
            evaluate_rows(key_.b, w, b);
            pool_.parallel_range(n, [&](size_t lo, size_t hi) {
              for (size_t i = lo; i < hi; i++) c[i] = a[i] * b[i];
            }, 1024);
          } else {
            load_evaluations(in.a, a);
            load_evaluations(in.b, b);
            load_evaluations(in.c, c);
          }
        }
        {
          // snarkjs's recipe (formats.md): to coefficients, then evaluate on the odd coset, where
          // the key's H points expect a*b - c (the vanishing polynomial is folded into them).
          PhaseScope t(times, p, CUZK_PHASE_NTT_H);
          for (Fr* v : {a, b, c}) {
            ntt(pool_, v, key_.log_domain, NttKind::Inverse);
            ntt(pool_, v, key_.log_domain, NttKind::CosetForward);
          }
          pool_.parallel_range(n, [&](size_t lo, size_t hi) {
            for (size_t i = lo; i < hi; i++) (a[i] * b[i] - c[i]).to_bytes_std(&h[i * 32]);
          }, 1024);
        }
        // Alone, a proof reads its streamed sections itself; in a group they wait for the group.
        for (PointSection s : kSections) {
          if (group > 1 && engine::streamed(plan_, s)) continue;
          const uint8_t* scalars = s == formats::kSecH ? h : w;
          engine::ProofSums<C>* out = &sums[p];
          CUZK_CPU_TRY(section_msm(s, &scalars, &out, &p, 1, times, err));
        }
        if (group == 1) batch.computed(p);
      }
      if (group == 1) continue;
      // Each streamed section read once, chunk by chunk, each chunk summed with every proof's
      // scalars (each proof's sums timed as its phase).
      std::vector<size_t> proofs(count);
      for (size_t k = 0; k < count; k++) proofs[k] = first + k;
      for (PointSection s : kSections) {
        if (!engine::streamed(plan_, s)) continue;
        CUZK_CPU_TRY(section_msm(s, s == formats::kSecH ? h_of.data() : w_group.data(), out_of.data(), proofs.data(),
                                 count, times, err));
      }
      for (size_t k = 0; k < count; k++) batch.computed(first + k);
    }
    batch_ = nullptr;
    return CUZK_OK;
  }

 private:
  static constexpr PointSection kSections[] = {formats::kSecA, formats::kSecB1, formats::kSecB2, formats::kSecC,
                                               formats::kSecH};
  static constexpr uint64_t kReadChunk = 1u << 16;  // points read in between progress reports and cancel checks

  // Section s's sums over `count` proofs' scalars (their group's: the witness, or h for H) into
  // their places in outs, chunk by chunk: a streamed chunk is read once for all of them.
  // proofs[k]: the batch index of scalars[k]'s proof (each chunk's MSM is timed as its phase).
  cuzk_status section_msm(PointSection s, const uint8_t* const* scalars, engine::ProofSums<C>* const* outs,
                          const size_t* proofs, size_t count, engine::PhaseTimes& times, std::string& err) {
    if (s == formats::kSecB2) {
      std::vector<typename C::G2x*> o(count);
      for (size_t k = 0; k < count; k++) o[k] = &outs[k]->b2;
      return chunked_msm<typename C::G2x, Fq2>(s, scalars, o.data(), proofs, count, times, err);
    }
    std::vector<typename C::G1x*> o(count);
    for (size_t k = 0; k < count; k++) o[k] = &outs[k]->g1(s);
    return chunked_msm<typename C::G1x, Fq>(s, scalars, o.data(), proofs, count, times, err);
  }

  template <class X, class F>
  cuzk_status chunked_msm(PointSection s, const uint8_t* const* scalars, X* const* outs, const size_t* proofs,
                          size_t count, engine::PhaseTimes& times, std::string& err) {
    const cuzk_phase phase = engine::msm_phase(s);
    const auto& z = *key_.zkey;
    const uint64_t pb = z.point_bytes(s), q = plan_.chunk_of(engine::group_of(s));
    for (size_t k = 0; k < count; k++) *outs[k] = X::infinity();
    if (!compact_) {  // in place; C's points belong to the scalars after w[n_public]
      const size_t lead = s == formats::kSecC ? (size_t)key_.n_public + 1 : 0;
      const uint64_t n = z.point_count(s);
      for (uint64_t j = 0; j < n; j += q) {
        if (j > 0 && batch_ && batch_->cancelled()) return cancelled_in(s, err);
        const uint64_t m = std::min(q, n - j);
        for (size_t k = 0; k < count; k++) {
          PhaseScope t(times, proofs[k], phase);
          *outs[k] = outs[k]->add(msm<C, F>(pool_, z.points(s) + j * pb, scalars[k] + (lead + j) * 32, m));
        }
      }
      return CUZK_OK;
    }
    const engine::Support& sup = keys_.support[engine::group_of(s)];
    const bool is_streamed = plan_.placement[s] == engine::kStreamed;
    const uint64_t n = plan_.stored[s];
    for (uint64_t j = 0; j < n; j += q) {
      if (j > 0 && batch_ && batch_->cancelled()) return cancelled_in(s, err);
      const uint64_t m = std::min(q, n - j);
      const uint8_t* points = nullptr;
      if (is_streamed) {
        PhaseScope t(times, proofs[0], phase);  // the chunk's read, in the first proof's phase
        CUZK_CPU_TRY(keys_.pack(z, s, j, m, stream_.data(), scratch_, err));
        points = stream_.data();
      } else {
        points = resident_[s].data() + j * pb;
      }
      for (size_t k = 0; k < count; k++) {
        PhaseScope t(times, proofs[k], phase);
        const uint8_t* chunk_scalars = scalars[k] + j * 32;
        if (!sup.all) {  // the scalars of the stored points, in their order
          uint8_t* dst = gathered_.reserve((size_t)q * 32);
          const uint8_t* from = scalars[k];
          pool_.parallel_range(m, [&](size_t lo, size_t hi) {
            for (size_t i = lo; i < hi; i++) std::memcpy(dst + i * 32, from + (size_t)sup.index[j + i] * 32, 32);
          }, 4096);
          chunk_scalars = dst;
        }
        *outs[k] = outs[k]->add(msm<C, F>(pool_, points, chunk_scalars, m));
      }
    }
    return CUZK_OK;
  }

  static cuzk_status cancelled_in(PointSection s, std::string& err) {
    err = std::string("cancelled during MSM ") + engine::section_name(s) + ", between chunks; no proof returned";
    return CUZK_ERR_CANCELLED;
  }

  // out[row] = sum coef * w[signal]: a Montgomery product of the key's v*R^2 with the standard-form
  // witness value gives v*w in Montgomery form. Rows past the matrix (padding) are zero.
  void evaluate_rows(const engine::SparseRows<Fr>& m, const uint8_t* w, Fr* out) {
    const size_t rows = m.rows(), n = key_.domain_size;
    pool_.parallel_range(n, [&](size_t lo, size_t hi) {
      for (size_t r = lo; r < hi; r++) {
        if (r >= rows) { out[r] = Fr::zero(); continue; }
        Fr acc = Fr::zero();
        for (uint64_t k = m.row_start[r]; k < m.row_start[r + 1]; k++)
          acc += m.coef[k] * Fr::from_bytes_mont(w + (size_t)m.signal[k] * 32);
        out[r] = acc;
      }
    }, 256);
  }

  void load_evaluations(const uint8_t* in, Fr* out) {
    pool_.parallel_range(key_.domain_size, [&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; i++) out[i] = Fr::from_bytes_std(in + i * 32);
    }, 1024);
  }

  const engine::KeyView<C>& key_;
  ThreadPool& pool_;
  // Workspace kept between calls (huge pages: first-touch faults dominated one-shot proofs).
  ScratchArray<Fr> a_, b_, c_;
  ScratchArray<uint8_t> h_;
  // A key on demand: its compact points, resident or read into stream_ per proof.
  bool compact_ = false;
  engine::CompactKey keys_;
  engine::MemoryPlan plan_;
  engine::EngineOptions options_;
  ScratchArray<uint8_t> resident_[formats::kPointSections], stream_, gathered_;
  engine::WitnessSource* batch_ = nullptr;  // the batch being computed (its cancel flag)
  std::vector<uint8_t> scratch_;
};

}  // namespace

template <class C>
cuzk_status make_engine(const engine::KeyView<C>& key, ThreadPool& pool, const engine::EngineOptions& options,
                        const Progress& progress, std::unique_ptr<engine::Engine<C>>* out, std::string& err) {
  auto e = std::make_unique<CpuEngine<C>>(key, pool);
  CUZK_CPU_TRY(e->init(options, progress, err));
  *out = std::move(e);
  return CUZK_OK;
}

template <class C>
std::unique_ptr<engine::Engine<C>> make_engine(const engine::KeyView<C>& key, ThreadPool& pool) {
  std::unique_ptr<engine::Engine<C>> e;
  std::string err;
  make_engine<C>(key, pool, engine::EngineOptions{}, Progress(), &e, err);  // a key in memory, no budget: cannot fail
  return e;
}

#define CUZK_CPU_ENGINE(C)                                                                                       \
  template cuzk_status make_engine(const engine::KeyView<C>&, ThreadPool&, const engine::EngineOptions&,        \
                                   const Progress&, std::unique_ptr<engine::Engine<C>>*, std::string&);         \
  template std::unique_ptr<engine::Engine<C>> make_engine(const engine::KeyView<C>&, ThreadPool&);
CUZK_CPU_ENGINE(curve::Bn254)
CUZK_CPU_ENGINE(curve::Bls12381)

}  // namespace cuzk::cpu
