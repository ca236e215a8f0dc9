// The GPU engine against the CPU engine on a synthetic key of 2^16 constraints (gpu_check.cuh's
// SyntheticKey), both curves: the five sums of a proof must be equal.
#include "cpu/cpu_engine.hpp"
#include "gpu_check.cuh"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

template <class HC>
void engine_check(const char* name, uint32_t log_n) {
  SyntheticKey<HC> key(log_n);
  std::unique_ptr<engine::Engine<HC>> gpu;
  CHECK_OK(cuzk::cuda::make_engine<HC>(g_dev, key.view, cuzk::Progress(), &gpu, err));
  auto cpu = cpu::make_engine<HC>(key.view, default_thread_pool());
  engine::WitnessBatch batch;
  batch.n = 1;
  batch.w.push_back(key.witness.data());
  engine::PhaseTimes t1(nullptr, 1, CUZK_BACKEND_CPU), t2(nullptr, 1, CUZK_BACKEND_CUDA);
  engine::ProofSums<HC> a, b;
  std::string err;
  EXPECT(cpu->compute(batch, t1, &a, err) == CUZK_OK, "cpu engine: %s", err.c_str());
  EXPECT(gpu->compute(batch, t2, &b, err) == CUZK_OK, "gpu engine: %s", err.c_str());
  bool same = a.a.equals(b.a) && a.b1.equals(b.b1) && a.b2.equals(b.b2) && a.c.equals(b.c) && a.h.equals(b.h);
  EXPECT(same, "%s 2^%u: GPU engine sums differ from the CPU engine (a %d b1 %d b2 %d c %d h %d)", name, log_n,
         a.a.equals(b.a), a.b1.equals(b.b1), a.b2.equals(b.b2), a.c.equals(b.c), a.h.equals(b.h));
  std::printf("engine-check %s 2^%u: %s\n", name, log_n, same ? "GPU sums = CPU sums" : "WRONG");
}

}  // namespace

GPU_TEST(engine) {
  return run_on_gpu0("engine-check", [] {
    engine_check<curve::Bls12381>("bls12-381", 16);
    engine_check<curve::Bn254>("bn254", 16);
  });
}
