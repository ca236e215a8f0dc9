// gpu_bench ntt-forms [reps]: the proving path's transform pair (inverse, then coset forward:
// NttContext::to_coset) over the library's Fr against the same transforms over a twin of Fr whose
// product is a wide product by Karatsuba halves and one reduction (field.cuh's HalfMul), both
// curves, 2^24 and 2^27. The twin's output is compared word for word with the library's on the
// same random input before either is timed; then the two run alternately, `reps` rounds after a
// warm-up, medians of CUDA events.
#include "cuda/ntt/ntt_context.cuh"
#include "gpu_check.cuh"

using namespace cuzk;
using namespace cuzk::cuda;
using namespace cuzk::gpu_check;

namespace {

__global__ void count_word_differences(const uint32_t* a, const uint32_t* b, size_t n, unsigned long long* out) {
  unsigned long long d = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    d += a[i] != b[i];
  if (d) atomicAdd(out, d);
}

template <class HC>
void pair_forms(const char* name, uint32_t L, int reps) {
  using HF = typename HC::Fr;
  using F = typename DeviceCurve<HC>::Fr;
  using FH = DFp<typename HF::Params, kInlineProducts, false, true>;
  static_assert(sizeof(FH) == sizeof(F), "the twin shares the layout");
  auto& lib = g_dev->ntt<HC>();
  CHECK_OK(lib.init(err));
  static NttContext<HF, FH> twin;  // its tables live as long as the process: one per field
  CHECK_OK(twin.init(err));
  const size_t n = (size_t)1 << L;
  DevArray<HF> src(n), a(n), b(n);
  {
    std::vector<HF> v(n);
    uint64_t x = 0x9e3779b97f4a7c15ull ^ ((uint64_t)L << 32) ^ (uint64_t)HF::Params::LIMBS;
    for (auto& e : v) {
      uint64_t w[HF::N];
      for (auto& y : w) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        y = x * 0x2545f4914f6cdd1dull;
      }
      w[HF::N - 1] >>= 4;  // below r: a Montgomery representation
      e = HF::from_raw(w);
    }
    src.upload(v.data());
  }
  const cudaStream_t s = g_dev->stream;
  auto run = [&](int form, DevArray<HF>& d) {
    CHECK_CUDA(cudaMemcpyAsync(d.p, src.p, n * sizeof(HF), cudaMemcpyDeviceToDevice, s));
    if (form == 0) CHECK_OK(lib.to_coset(reinterpret_cast<F*>(d.p), L, s, err));
    else CHECK_OK(twin.to_coset(reinterpret_cast<FH*>(d.p), L, s, err));
  };
  run(0, a);
  run(1, b);
  CHECK_CUDA(cudaStreamSynchronize(s));
  DevArray<unsigned long long> diff(1);
  CHECK_CUDA(cudaMemset(diff.p, 0, 8));
  count_word_differences<<<1024, 256>>>(reinterpret_cast<const uint32_t*>(a.p), reinterpret_cast<const uint32_t*>(b.p),
                                        n * sizeof(HF) / 4, diff.p);
  CHECK_CUDA(cudaDeviceSynchronize());
  unsigned long long words = 0;
  diff.download(&words);
  std::printf("ntt-forms %s 2^%u: halves' pair %s the library's (%llu words differ)\n", name, L,
              words ? "DIFFERS from" : "same words as", words);
  EXPECT(words == 0, "ntt-forms %s 2^%u: the halves' pair differs", name, L);
  if (words) return;

  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  std::vector<double> ms[2];
  for (int r = 0; r <= reps; r++)
    for (int form = 0; form < 2; form++) {
      CHECK_CUDA(cudaMemcpyAsync(a.p, src.p, n * sizeof(HF), cudaMemcpyDeviceToDevice, s));
      CHECK_CUDA(cudaEventRecord(e0, s));
      if (form == 0) CHECK_OK(lib.to_coset(reinterpret_cast<F*>(a.p), L, s, err));
      else CHECK_OK(twin.to_coset(reinterpret_cast<FH*>(a.p), L, s, err));
      CHECK_CUDA(cudaEventRecord(e1, s));
      CHECK_CUDA(cudaEventSynchronize(e1));
      float t = 0;
      CHECK_CUDA(cudaEventElapsedTime(&t, e0, e1));
      if (r) ms[form].push_back(t);
    }
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  const double m0 = median(ms[0]), m1 = median(ms[1]);
  std::printf("RESULT ntt-forms %s 2^%u inv+coset library %.3f ms\n", name, L, m0);
  std::printf("RESULT ntt-forms %s 2^%u inv+coset halves %.3f ms\n", name, L, m1);
  std::printf("ntt-forms %s 2^%u: halves / library = %.3f\n", name, L, m1 / m0);
  std::fflush(stdout);
}

}  // namespace

void section_ntt_forms(int reps) {
  for (uint32_t L : {24u, 27u}) {
    pair_forms<curve::Bls12381>("bls12-381", L, reps);
    pair_forms<curve::Bn254>("bn254", L, reps);
  }
}
