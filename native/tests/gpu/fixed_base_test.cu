// The GPU's fixed-base batch k_i * G (the development setup's key points, cuzk::cuda::fixed_base_mul)
// against the CPU tables (setup::FixedBaseTable), byte for byte in key encoding, on random scalars
// with 0, 1 and r-1 among them, in all four groups; BN254 G1 crosses a 2^20-point GPU chunk.
#include "gpu_check.cuh"
#include "setup/fixed_base.hpp"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

template <class HC, int G>
void fixed_base_check(const char* name, size_t n) {
  using Fr = typename HC::Fr;
  using F = std::conditional_t<G == 1, typename HC::Fq, typename HC::Fq2>;
  const size_t pb = 2 * F::BYTES;
  auto raw = random_scalars<Fr>(n, 29 + G, 0.0);
  std::vector<Fr> sc(n);
  par_for(n, [&](size_t i) { sc[i] = Fr::from_raw(reinterpret_cast<const uint64_t*>(&raw[i * 32])).to_mont(); });
  sc[0] = Fr::zero();
  sc[1] = Fr::one();
  sc[2] = Fr::zero() - Fr::one();
  sc[n - 1] = Fr::zero() - Fr::one();
  ThreadPool& pool = default_thread_pool();
  double t0 = now_ms();
  const auto& gen = [] { if constexpr (G == 1) return HC::g1_generator(); else return HC::g2_generator(); }();
  setup::FixedBaseTable<F> table(gen, Fr::Params::BITS, n, pool);
  std::vector<uint8_t> cpu(n * pb), gpu(n * pb, 0xAA);
  table.mul_many(sc.data(), n, cpu.data(), pool);
  double t1 = now_ms();
  CHECK_OK(cuzk::cuda::fixed_base_mul(g_dev, HC::ID, G == 1 ? CUZK_G1 : CUZK_G2,
                                      reinterpret_cast<const uint8_t*>(sc.data()), n, gpu.data(), err));
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += std::memcmp(&cpu[i * pb], &gpu[i * pb], pb) != 0;
  bool zero_ok = true;
  for (size_t b = 0; b < pb; b++) zero_ok &= gpu[b] == 0;
  EXPECT(bad == 0 && zero_ok, "fixed-base %s: %zu of %zu points differ from the CPU tables (zero %s)", name, bad, n,
         zero_ok ? "ok" : "WRONG");
  std::printf("fixed-base %s: %zu points equal the CPU tables' (%s; CPU %.0f ms for them)\n", name, n,
              bad == 0 && zero_ok ? "ok" : "WRONG", t1 - t0);
}

}  // namespace

GPU_TEST(fixed_base) {
  return run_on_gpu0("fixed-base", [] {
    fixed_base_check<curve::Bn254, 1>("bn254 g1", ((size_t)1 << 20) + 77);  // crosses a GPU chunk
    fixed_base_check<curve::Bn254, 2>("bn254 g2", 40000);
    fixed_base_check<curve::Bls12381, 1>("bls12_381 g1", 100000);
    fixed_base_check<curve::Bls12381, 2>("bls12_381 g2", 40000);
  });
}
