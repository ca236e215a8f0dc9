// gpu_bench ntt-forms [reps]: the NTT passes (ntt_pass) in BLS12-381's scalar field as the library
// builds them (inlined products) and in the field's twin whose products are calls (the form that
// sped up the G1 bucket walk). The same proving-path pair (inverse, then coset forward) and the
// natural-order forward transform at 2^24 and 2^27 in each form: outputs compared word for word
// first, then timed alternately (CUDA events), medians of reps.
#include "cuda/ntt/ntt_impl.cuh"
#include "gpu_check.cuh"

using namespace cuzk;
using namespace cuzk::cuda;
using namespace cuzk::gpu_check;

namespace cuzk::cuda {
template class NttContext<curve::Bls12381::Fr, DFp<curve::Bls12381::Fr::Params, kCalledProducts>>;
}

namespace {

__global__ void words_differ(const uint32_t* a, const uint32_t* b, size_t n, unsigned long long* out) {
  unsigned long long d = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    d += a[i] != b[i];
  if (d) atomicAdd(out, d);
}

}  // namespace

void section_ntt_forms(int reps) {
  using HC = curve::Bls12381;
  using F = DeviceCurve<HC>::Fr;
  using FC = DFp<HC::Fr::Params, kCalledProducts>;
  static_assert(sizeof(F) == sizeof(FC), "twins share the layout");
  auto& lib = g_dev->ntt<HC>();
  CHECK_OK(lib.init(err));
  NttContext<HC::Fr, FC> calls;
  CHECK_OK(calls.init(err));
  const cudaStream_t s = g_dev->stream;
  for (uint32_t L : {24u, 27u}) {
    const size_t n = (size_t)1 << L;
    const auto input = random_fr<HC::Fr>(L, 41 + L);
    DevArray<HC::Fr> x(n), y(n);
    // kind 0: the proving pair (inverse natural, then coset forward); kind 1: natural forward
    auto run = [&](int form, int kind, HC::Fr* d) {
      if (form == 0) {
        F* v = reinterpret_cast<F*>(d);
        if (kind == 0) {
          CHECK_OK(lib.natural(v, L, CUZK_NTT_INVERSE, false, s, err));
          CHECK_OK(lib.to_coset(v, L, s, err));
        } else {
          CHECK_OK(lib.natural(v, L, CUZK_NTT_FORWARD, false, s, err));
        }
      } else {
        FC* v = reinterpret_cast<FC*>(d);
        if (kind == 0) {
          CHECK_OK(calls.natural(v, L, CUZK_NTT_INVERSE, false, s, err));
          CHECK_OK(calls.to_coset(v, L, s, err));
        } else {
          CHECK_OK(calls.natural(v, L, CUZK_NTT_FORWARD, false, s, err));
        }
      }
    };
    const char* kinds[] = {"inverse + coset pair", "natural forward"};
    for (int kind = 0; kind < 2; kind++) {
      x.upload(input.data());
      y.upload(input.data());
      run(0, kind, x.p);
      run(1, kind, y.p);
      DevArray<unsigned long long> d(1);
      CHECK_CUDA(cudaMemsetAsync(d.p, 0, 8, s));
      words_differ<<<1024, 256, 0, s>>>(reinterpret_cast<const uint32_t*>(x.p), reinterpret_cast<const uint32_t*>(y.p),
                                        n * sizeof(HC::Fr) / 4, d.p);
      CHECK_CUDA(cudaStreamSynchronize(s));
      unsigned long long diff = 0;
      d.download(&diff);
      EXPECT(diff == 0, "ntt-forms 2^%u %s: %llu words differ", L, kinds[kind], diff);
      cudaEvent_t a, b;
      CHECK_CUDA(cudaEventCreate(&a));
      CHECK_CUDA(cudaEventCreate(&b));
      std::vector<double> ms[2];
      for (int r = 0; r <= reps; r++)
        for (int form = 0; form < 2; form++) {
          CHECK_CUDA(cudaEventRecord(a, s));
          run(form, kind, form == 0 ? x.p : y.p);
          CHECK_CUDA(cudaEventRecord(b, s));
          CHECK_CUDA(cudaEventSynchronize(b));
          float t = 0;
          CHECK_CUDA(cudaEventElapsedTime(&t, a, b));
          if (r) ms[form].push_back(t);
        }
      CHECK_CUDA(cudaEventDestroy(a));
      CHECK_CUDA(cudaEventDestroy(b));
      for (int form = 0; form < 2; form++) {
        const char* name = form == 0 ? "inline" : "calls";
        std::printf("ntt-forms bls12-381 2^%u %s %-7s %8.3f ms %6.3f %s\n", L, kinds[kind], name, median(ms[form]),
                    median(ms[form]) / median(ms[0]), diff == 0 ? "same words" : "DIFFERS");
        if (diff == 0) std::printf("RESULT ntt-forms bls12-381 2^%u %s %s %.3f ms\n", L, kinds[kind], name, median(ms[form]));
      }
    }
  }
  std::fflush(stdout);
}
