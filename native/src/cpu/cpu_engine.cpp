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
  // held compacted: each section resident in this engine's memory or read in per proof, as the
  // budget allows.
  cuzk_status init(const engine::EngineOptions& options, const Progress& progress, std::string& err) {
    options_ = options;
    const auto& z = *key_.zkey;
    const uint64_t n = key_.domain_size;
    plan_.memory = "host";
    plan_.budget = options.memory_budget ? options.memory_budget : physical_memory();
    plan_.fixed = rows_bytes(key_.a) + rows_bytes(key_.b) + 3 * n * sizeof(Fr) + n * 32;
    compact_ = z.source != nullptr;
    uint64_t point_bytes[formats::kPointSections] = {};
    if (compact_) {
      CUZK_CPU_TRY(keys_.build(z, pool_, err));
      for (int s = 0; s < formats::kPointSections; s++) point_bytes[s] = z.point_bytes((PointSection)s);
      for (const engine::Support& sup : keys_.support)
        if (!sup.all) plan_.fixed += sup.index.size() * 4 + (uint64_t)sup.n * 32;  // the index, gathered scalars
    }
    engine::describe_sections(z, keys_, point_bytes, plan_);  // without compaction: all kInKey, none stored
    // stream_all streams every section it holds (tests: the same proofs, and batches grouped).
    CUZK_CPU_TRY(engine::choose_placements(plan_, options_.stream_all, err));
    progress.set_total(plan_.resident_bytes());
    constexpr uint64_t kChunk = 1u << 16;  // points read in between progress reports and cancel checks
    for (int i = 0; i < formats::kPointSections; i++) {
      const PointSection s = (PointSection)i;
      if (plan_.placement[s] != engine::kResident) continue;
      uint8_t* dst = resident_[s].reserve(plan_.stored_bytes[s]);
      const uint64_t pb = z.point_bytes(s);
      for (uint64_t j = 0; j < plan_.stored[s]; j += kChunk) {
        const uint64_t count = std::min(kChunk, plan_.stored[s] - j);
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
    // A batch reads each streamed section once per group of proofs (engine::stream_group_size):
    // when H streams, the group's H scalars are kept meanwhile (n * 32 bytes a proof, in what the
    // budget leaves); the witnesses are the caller's, valid for the whole call.
    const bool keep_h = engine::streamed(plan_, formats::kSecH);
    const size_t group = engine::stream_group_size(plan_, batch.size(), keep_h ? (uint64_t)n * 32 : 0, plan_.room(),
                                                    options_.stream_per_proof);
    // Workspace kept between calls: a proving loop allocates nothing after its first proof.
    Fr* a = a_.reserve(n);
    Fr* b = b_.reserve(n);
    Fr* c = c_.reserve(n);
    uint8_t* h_group = h_.reserve((keep_h ? group : 1) * n * 32);
    std::vector<const uint8_t*> w_group(group);
    for (size_t first = 0; first < batch.size(); first += group) {
      const size_t count = std::min(group, batch.size() - first);
      for (size_t k = 0; k < count; k++) {
        const size_t p = first + k;
        engine::ProofInputs in;
        cuzk_status st = batch.inputs(p, &in, err);  // waits for its check; fails the batch with it
        if (st != CUZK_OK) return st;
        const uint8_t* w = w_group[k] = in.w;
        uint8_t* h = h_group + (keep_h ? k : 0) * n * 32;
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
          PhaseScope t(times, p, engine::msm_phase(s));
          CUZK_CPU_TRY(section_msm(s, s == formats::kSecH ? h : w, sums[p], true, err));
        }
        gathered_group_ = -1;  // the next proof has other scalars
        if (group == 1) batch.computed(p);
      }
      if (group == 1) continue;
      // Each streamed section read once (its read timed in the group's first proof), then summed
      // with every proof's scalars.
      for (PointSection s : kSections) {
        if (!engine::streamed(plan_, s)) continue;
        for (size_t k = 0; k < count; k++) {
          PhaseScope t(times, first + k, engine::msm_phase(s));
          gathered_group_ = -1;
          CUZK_CPU_TRY(section_msm(s, s == formats::kSecH ? h_group + k * n * 32 : w_group[k], sums[first + k], k == 0, err));
        }
      }
      gathered_group_ = -1;
      for (size_t k = 0; k < count; k++) batch.computed(first + k);
    }
    return CUZK_OK;
  }

 private:
  static constexpr PointSection kSections[] = {formats::kSecA, formats::kSecB1, formats::kSecB2, formats::kSecC,
                                               formats::kSecH};

  static uint64_t rows_bytes(const engine::SparseRows<Fr>& m) {
    return m.row_start.size() * 8 + m.signal.size() * 4 + m.coef.size() * sizeof(Fr);
  }

  // Section s's sum into its place in `sums`, over its group's scalars (the witness, or h for H).
  cuzk_status section_msm(PointSection s, const uint8_t* scalars, engine::ProofSums<C>& sums, bool read_streamed,
                          std::string& err) {
    return s == formats::kSecB2 ? section_msm(s, scalars, &sums.b2, read_streamed, err)
                                : section_msm(s, scalars, &sums.g1(s), read_streamed, err);
  }

  // sum over section s's points with its group's scalars. A streamed section is read into stream_
  // first unless read_streamed is false (a group's later proofs: stream_ holds it already).
  template <class X>
  cuzk_status section_msm(PointSection s, const uint8_t* scalars, X* out, bool read_streamed, std::string& err) {
    using F = std::conditional_t<std::is_same_v<X, typename C::G2x>, Fq2, Fq>;
    const auto& z = *key_.zkey;
    if (!compact_) {  // in place; C's points belong to the scalars after w[n_public]
      const size_t first = s == formats::kSecC ? (size_t)key_.n_public + 1 : 0;
      *out = msm<C, F>(pool_, z.points(s), scalars + first * 32, z.point_count(s));
      return CUZK_OK;
    }
    const uint8_t* points = resident_[s].data();
    if (plan_.placement[s] == engine::kStreamed) {
      if (read_streamed) CUZK_CPU_TRY(keys_.pack(z, s, 0, plan_.stored[s], stream_.data(), scratch_, err));
      points = stream_.data();
    }
    const engine::PointGroup g = engine::group_of(s);
    const engine::Support& sup = keys_.support[g];
    if (!sup.all) {  // the scalars of the stored points, in their order
      uint8_t* dst = gathered_.reserve((size_t)sup.n * 32);
      if (gathered_group_ != g) {
        pool_.parallel_range(sup.index.size(), [&](size_t lo, size_t hi) {
          for (size_t j = lo; j < hi; j++) std::memcpy(dst + j * 32, scalars + (size_t)sup.index[j] * 32, 32);
        }, 4096);
        gathered_group_ = g;
      }
      scalars = dst;
    }
    *out = msm<C, F>(pool_, points, scalars, plan_.stored[s]);
    return CUZK_OK;
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
  int gathered_group_ = -1;  // the group whose scalars gathered_ holds for the current proof
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
