// The precomputed copies of msm/bases.cuh: copy j from copy j-1 by shift = c*V doublings per
// point, in XYZZ, then to affine with one inversion per thread (Montgomery's batch trick over
// the ~16 points a thread takes), in chunks of the copy so that the XYZZ scratch stays bounded.
#include "cuda/msm/bases.cuh"

namespace cuzk::cuda {
namespace {

constexpr uint32_t kPointsPerThread = 16;
constexpr uint32_t kChunk = 1u << 22;  // points per launch: the scratch is kChunk XYZZ + Fq

// dst[i] = 2^shift src[i], i < count. Thread t takes i = t, t + T, ... (T threads, coalesced),
// keeping the running product of its points' ZZZ in `prefix` for the backward pass.
template <class A, class X>
__global__ void __launch_bounds__(128) msm_bases_double(const A* __restrict__ src, A* __restrict__ dst, uint32_t count,
                                                        int shift, X* __restrict__ scratch,
                                                        typename A::Field* __restrict__ prefix) {
  using F = typename A::Field;
  const uint32_t T = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= count) return;
  F acc = F::one();
  uint32_t last = t;
  for (uint32_t i = t; i < count; i += T) {
    X q = X::dbl_affine(load16(src + i));
    for (int b = 1; b < shift; b++) q = q.dbl();
    store16(scratch + i, q);
    if (!q.is_infinity()) acc = acc * q.ZZZ;  // points at infinity stay there and take no part
    store16(prefix + i, acc);
    last = i;
  }
  F inv = acc.inverse();  // 1 / (product of this thread's ZZZ)
  for (uint32_t i = last;; i -= T) {
    const X q = load16(scratch + i);
    if (q.is_infinity()) {
      store16(dst + i, A::infinity());
    } else {
      const F zzz_inv = i >= t + T ? inv * load16(prefix + i - T) : inv;
      inv = inv * q.ZZZ;
      const F z_inv = q.ZZ * zzz_inv;  // 1/Z, as ZZ = Z^2 and ZZZ = Z^3
      store16(dst + i, A{q.X * z_inv.sqr(), q.Y * zzz_inv});
    }
    if (i < t + T) break;
  }
}

}  // namespace

template <class HC, int G>
cuzk_status msm_bases_build(MsmBases& out, const typename Group<HC, G>::Affine* d_points, uint32_t n, int copies,
                            int c, cudaStream_t s, std::string& err) {
  using A = typename Group<HC, G>::Affine;
  using X = typename Group<HC, G>::Xyzz;
  using F = typename A::Field;
  constexpr int bits = HC::Fr::Params::BITS;
  if (copies < 1 || c < 2 || c > kMsmMaxWindowWithCopies) {
    err = "MSM copies: window " + std::to_string(c) + " or copy count " + std::to_string(copies) + " out of range";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  const int used = msm_copies_used(bits, c, copies);
  if ((uint64_t)used * n >= (1ull << 31)) {
    err = "MSM copies: copies * points exceeds 2^31 point indices";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  out.n = n;
  out.c = c;
  out.copies = used;
  out.point_bytes = sizeof(A);
  CUZK_TRY(out.points.ensure(std::max<size_t>(out.bytes(), sizeof(A)), err));
  A* dst = out.points.as<A>();
  if (n == 0) return CUZK_OK;
  CUZK_CU(cudaMemcpyAsync(dst, d_points, (size_t)n * sizeof(A), cudaMemcpyDeviceToDevice, s));
  DeviceBuffer scratch, prefix;  // freed after the synchronisation below
  if (used > 1) {
    const int shift = c * msm_windows_per_copy(bits, c, copies);
    const uint32_t chunk = n < kChunk ? n : kChunk;
    CUZK_TRY(scratch.ensure((size_t)chunk * sizeof(X), err));
    CUZK_TRY(prefix.ensure((size_t)chunk * sizeof(F), err));
    for (int j = 1; j < used; j++)
      for (uint32_t off = 0; off < n; off += chunk) {
        const uint32_t count = std::min(chunk, n - off);
        const uint32_t threads = ceil_div(count, kPointsPerThread);
        msm_bases_double<A, X><<<ceil_div(threads, 128), 128, 0, s>>>(dst + (size_t)(j - 1) * n + off,
                                                                      dst + (size_t)j * n + off, count, shift,
                                                                      scratch.as<X>(), prefix.as<F>());
        CUZK_LAUNCHED("msm_bases_double");
      }
  }
  CUZK_CU(cudaStreamSynchronize(s));
  return CUZK_OK;
}

#define CUZK_MSM_BASES(HC, G)                                                                                      \
  template cuzk_status msm_bases_build<HC, G>(MsmBases&, const Group<HC, G>::Affine*, uint32_t, int, int, cudaStream_t, \
                                              std::string&);
CUZK_MSM_BASES(curve::Bn254, 1)
CUZK_MSM_BASES(curve::Bls12381, 1)
CUZK_MSM_BASES(curve::Bn254, 2)
CUZK_MSM_BASES(curve::Bls12381, 2)

}  // namespace cuzk::cuda
