// The standalone kernels through the C ABI, CUDA against CPU on small inputs: cuzk_msm (BLS12-381
// G1, 3000 points, half the scalars 0 or 1) and cuzk_ntt (2^12, coset inverse).
#include "gpu_check.cuh"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

void abi_kernels() {
  char err[512];
  cuzk_context *cpu = nullptr, *gpu = nullptr;
  if (!open_cpu_and_gpu(&cpu, &gpu)) return;
  const size_t n = 3000;
  using HC = curve::Bls12381;
  std::vector<typename HC::G1> pts(n);
  par_for(n, [&](size_t i) {
    uint64_t k[4] = {i * 7919 + 3, 0, 0, 0};
    pts[i] = curve::scalar_mul(HC::g1_generator(), k, 4).to_affine();
  });
  auto sc = random_scalars<typename HC::Fr>(n, 3, 0.5);
  uint8_t o1[96], o2[96];
  cuzk_status a = cuzk_msm(cpu, CUZK_CURVE_BLS12_381, CUZK_G1, reinterpret_cast<uint8_t*>(pts.data()), sc.data(), n,
                           o1, 96, nullptr, err, sizeof err);
  cuzk_status b = cuzk_msm(gpu, CUZK_CURVE_BLS12_381, CUZK_G1, reinterpret_cast<uint8_t*>(pts.data()), sc.data(), n,
                           o2, 96, nullptr, err, sizeof err);
  EXPECT(a == CUZK_OK && b == CUZK_OK && std::memcmp(o1, o2, 96) == 0, "cuzk_msm: GPU differs from CPU (%s)", err);
  std::vector<uint8_t> v1 = random_scalars<typename HC::Fr>(1 << 12, 4, 0), v2 = v1;
  a = cuzk_ntt(cpu, CUZK_CURVE_BLS12_381, v1.data(), 12, CUZK_NTT_COSET_INVERSE, nullptr, err, sizeof err);
  b = cuzk_ntt(gpu, CUZK_CURVE_BLS12_381, v2.data(), 12, CUZK_NTT_COSET_INVERSE, nullptr, err, sizeof err);
  EXPECT(a == CUZK_OK && b == CUZK_OK && v1 == v2, "cuzk_ntt: GPU differs from CPU (%s)", err);
  std::printf("e2e kernels through the ABI: msm %s, ntt %s\n", std::memcmp(o1, o2, 96) ? "WRONG" : "ok",
              v1 == v2 ? "ok" : "WRONG");
  cuzk_context_destroy(cpu, nullptr, 0);
  cuzk_context_destroy(gpu, nullptr, 0);
}

}  // namespace

GPU_TEST(abi_kernels) { return run_on_gpu0("abi-kernels", abi_kernels); }
