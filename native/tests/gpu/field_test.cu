// Device field arithmetic on the GPU against the host Fp: products, sums, differences and
// negations of 2^16 random elements (zeros and -1 among them) in all four fields.
#include "gpu_check.cuh"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

template <class F>
__global__ void field_ops(const F* a, const F* b, F* out, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i] = a[i] * b[i];
  out[4 * i + 1] = a[i] + b[i];
  out[4 * i + 2] = a[i] - b[i];
  out[4 * i + 3] = -a[i];
}

template <class H, class Dv>
void check_field(const char* name) {
  const size_t n = 1 << 16;
  std::mt19937_64 rng(11);
  std::vector<H> a(n), b(n), out(4 * n);
  for (size_t i = 0; i < n; i++) {
    uint64_t ra[H::N], rb[H::N];
    for (auto& w : ra) w = rng();
    for (auto& w : rb) w = rng();
    ra[H::N - 1] >>= 4;
    rb[H::N - 1] >>= 4;
    a[i] = i % 101 == 0 ? H::zero() : H::from_raw(ra).to_mont();
    b[i] = i % 103 == 0 ? H::zero() - H::one() : H::from_raw(rb).to_mont();
  }
  DevArray<H> da(n), db(n), dout(4 * n);
  da.upload(a.data());
  db.upload(b.data());
  field_ops<Dv><<<cuzk::cuda::ceil_div(n, 256), 256>>>(reinterpret_cast<Dv*>(da.p), reinterpret_cast<Dv*>(db.p),
                                                 reinterpret_cast<Dv*>(dout.p), n);
  CHECK_CUDA(cudaGetLastError());
  dout.download(out.data());
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    bad += !(out[4 * i] == a[i] * b[i]);
    bad += !(out[4 * i + 1] == a[i] + b[i]);
    bad += !(out[4 * i + 2] == a[i] - b[i]);
    bad += !(out[4 * i + 3] == -a[i]);
  }
  EXPECT(bad == 0, "%s: %zu of %zu device field results differ from the host", name, bad, 4 * n);
  std::printf("field %s: %zu mismatches in %zu\n", name, bad, 4 * n);
}

}  // namespace

GPU_TEST(field) {
  return run_on_gpu0("field", [] {
    check_field<curve::Bn254::Fq, DeviceCurve<curve::Bn254>::Fq>("bn254 Fq");
    check_field<curve::Bn254::Fr, DeviceCurve<curve::Bn254>::Fr>("bn254 Fr");
    check_field<curve::Bls12381::Fq, DeviceCurve<curve::Bls12381>::Fq>("bls12-381 Fq");
    check_field<curve::Bls12381::Fr, DeviceCurve<curve::Bls12381>::Fr>("bls12-381 Fr");
  });
}
