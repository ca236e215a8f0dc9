// The GPU NTTs against cpu::ntt, both curves: every kind (forward, inverse, coset forward, coset
// inverse) in Montgomery and in standard form, and the proving path (inverse, then coset forward),
// at 2^1 to 2^21; then one large size, 2^NTT_CHECK_LOG (default 24; 0 skips it), forward and the
// proving path, on random input.
#include "cpu/ntt.hpp"
#include "gpu_check.cuh"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

// The proving path on the GPU (inverse, then coset forward, in place in d) against cpu::ntt's on v.
template <class HC>
bool to_coset_matches(DevArray<typename HC::Fr>& d, const std::vector<typename HC::Fr>& v, uint32_t L) {
  using F = typename DeviceCurve<HC>::Fr;
  std::vector<typename HC::Fr> ref = v, got(v.size());
  cpu::ntt(default_thread_pool(), ref.data(), L, cpu::NttKind::Inverse);
  cpu::ntt(default_thread_pool(), ref.data(), L, cpu::NttKind::CosetForward);
  d.upload(v.data());
  CHECK_OK(g_dev->ntt<HC>().to_coset(reinterpret_cast<F*>(d.p), L, g_dev->stream, err));
  CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
  d.download(got.data());
  return got == ref;
}

template <class HC>
void ntt_check(const char* name) {
  using HF = typename HC::Fr;
  using F = typename DeviceCurve<HC>::Fr;
  auto& ctx = g_dev->ntt<HC>();
  CHECK_OK(ctx.init(err));
  const cpu::NttKind kinds[] = {cpu::NttKind::Forward, cpu::NttKind::Inverse, cpu::NttKind::CosetForward,
                                cpu::NttKind::CosetInverse};
  for (uint32_t L : {1u, 2u, 3u, 5u, 9u, 10u, 11u, 12u, 16u, 18u, 19u, 20u, 21u}) {
    size_t n = (size_t)1 << L;
    const std::vector<HF> v = random_fr<HF>(L, L);
    std::vector<HF> ref, got(n);
    DevArray<HF> d(n);
    int bad = 0;
    for (uint32_t kind = 0; kind < 4; kind++) {
      ref = v;
      cpu::ntt(default_thread_pool(), ref.data(), L, kinds[kind]);
      d.upload(v.data());
      CHECK_OK(ctx.natural(reinterpret_cast<F*>(d.p), L, kind, false, g_dev->stream, err));
      CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
      d.download(got.data());
      if (got != ref) { bad++; std::printf("  ntt %s 2^%u kind %u: wrong\n", name, L, kind); }
      // standard form in and out (the ABI's path): the same transform
      std::vector<HF> vs(n);
      for (size_t i = 0; i < n; i++) vs[i] = v[i].from_mont();  // the standard limbs
      d.upload(vs.data());
      CHECK_OK(ctx.natural(reinterpret_cast<F*>(d.p), L, kind, true, g_dev->stream, err));
      CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
      d.download(got.data());
      size_t wrong = 0;
      for (size_t i = 0; i < n; i++) wrong += !(got[i].to_mont() == ref[i]);
      if (wrong) { bad++; std::printf("  ntt %s 2^%u kind %u std form: wrong\n", name, L, kind); }
    }
    if (!to_coset_matches<HC>(d, v, L)) { bad++; std::printf("  ntt %s 2^%u to_coset: wrong\n", name, L); }
    EXPECT(bad == 0, "ntt %s 2^%u: %d wrong", name, L, bad);
    std::printf("ntt-check %s 2^%u: %s\n", name, L, bad ? "WRONG" : "ok");
  }
}

// One large size against the CPU (fwd natural order, and the proving path), random input: the
// checks above stop at 2^21, where the CPU reference is quick.
template <class HC>
void ntt_check_large(const char* name, uint32_t L) {
  using HF = typename HC::Fr;
  using F = typename DeviceCurve<HC>::Fr;
  auto& ctx = g_dev->ntt<HC>();
  CHECK_OK(ctx.init(err));
  const size_t n = (size_t)1 << L;
  const std::vector<HF> v = random_fr<HF>(L, 1000 + L);
  std::vector<HF> ref = v, got(n);
  DevArray<HF> d(n);
  int bad = 0;
  cpu::ntt(default_thread_pool(), ref.data(), L, cpu::NttKind::Forward);
  d.upload(v.data());
  CHECK_OK(ctx.natural(reinterpret_cast<F*>(d.p), L, CUZK_NTT_FORWARD, false, g_dev->stream, err));
  CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
  d.download(got.data());
  if (got != ref) { bad++; std::printf("  ntt %s 2^%u forward: wrong\n", name, L); }
  if (!to_coset_matches<HC>(d, v, L)) { bad++; std::printf("  ntt %s 2^%u to_coset: wrong\n", name, L); }
  EXPECT(bad == 0, "ntt %s 2^%u: %d wrong", name, L, bad);
  std::printf("ntt-check %s 2^%u: %s\n", name, L, bad ? "WRONG" : "ok");
}

}  // namespace

GPU_TEST(ntt) {
  const char* log_env = std::getenv("NTT_CHECK_LOG");
  const uint32_t large = log_env ? (uint32_t)std::atoi(log_env) : 24;
  return run_on_gpu0("ntt-check", [&] {
    ntt_check<curve::Bls12381>("bls12-381");
    ntt_check<curve::Bn254>("bn254");
    if (large == 0) return;
    ntt_check_large<curve::Bls12381>("bls12-381", large);
    ntt_check_large<curve::Bn254>("bn254", large);
  });
}
