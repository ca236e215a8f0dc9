#include "cpu/cpu_engine.hpp"

#include <cstring>
#include <vector>

#include "cpu/msm.hpp"
#include "cpu/ntt.hpp"
#include "util/scratch.hpp"

namespace cuzk::cpu {

namespace {

using engine::PhaseScope;

template <class C>
class CpuEngine final : public engine::Engine<C> {
  using Fr = typename C::Fr;
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;

 public:
  CpuEngine(const engine::KeyView<C>& key, ThreadPool& pool) : key_(key), pool_(pool) {}

  cuzk_backend kind() const override { return CUZK_BACKEND_CPU; }

  cuzk_status compute(engine::WitnessSource& batch, engine::PhaseTimes& times, engine::ProofSums<C>* sums,
                      std::string& err) override {
    const size_t n = key_.domain_size;
    // Workspace kept between calls: a proving loop allocates nothing after its first proof.
    Fr* a = a_.reserve(n);
    Fr* b = b_.reserve(n);
    Fr* c = c_.reserve(n);
    uint8_t* h = h_.reserve(n * 32);
    const auto& z = *key_.zkey;
    for (size_t p = 0; p < batch.size(); p++) {
      engine::ProofInputs in;
      cuzk_status st = batch.inputs(p, &in, err);  // waits for its check; fails the batch with it
      if (st != CUZK_OK) return st;
      const uint8_t* w = in.w;
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
      engine::ProofSums<C>& s = sums[p];
      {
        PhaseScope t(times, p, CUZK_PHASE_MSM_A);
        s.a = msm<C, Fq>(pool_, z.points_a, w, key_.n_vars);
      }
      {
        PhaseScope t(times, p, CUZK_PHASE_MSM_B1);
        s.b1 = msm<C, Fq>(pool_, z.points_b1, w, key_.n_vars);
      }
      {
        PhaseScope t(times, p, CUZK_PHASE_MSM_B2);
        s.b2 = msm<C, Fq2>(pool_, z.points_b2, w, key_.n_vars);
      }
      {
        PhaseScope t(times, p, CUZK_PHASE_MSM_C);
        size_t first = (size_t)key_.n_public + 1;
        s.c = msm<C, Fq>(pool_, z.points_c, w + first * 32, key_.n_vars - first);
      }
      {
        PhaseScope t(times, p, CUZK_PHASE_MSM_H);
        s.h = msm<C, Fq>(pool_, z.points_h, h, n);
      }
      batch.computed(p);
    }
    return CUZK_OK;
  }

 private:
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
};

}  // namespace

template <class C>
std::unique_ptr<engine::Engine<C>> make_engine(const engine::KeyView<C>& key, ThreadPool& pool) {
  return std::make_unique<CpuEngine<C>>(key, pool);
}

template std::unique_ptr<engine::Engine<curve::Bn254>> make_engine(const engine::KeyView<curve::Bn254>&, ThreadPool&);
template std::unique_ptr<engine::Engine<curve::Bls12381>> make_engine(const engine::KeyView<curve::Bls12381>&,
                                                                       ThreadPool&);

}  // namespace cuzk::cpu
