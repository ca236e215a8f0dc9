// Batch fixed-base multiplication on the GPU (cuda/backend.hpp, fixed_base_mul): out[i] = k_i * G
// for the G1 or G2 generator of either curve, the key points of the insecure development setup
// (setup/dev_setup.cpp). The CPU counterpart is setup/fixed_base.hpp.
//
// Table: 8-bit unsigned windows; row j holds m * 2^(8j) * G for m = 1..255 (32 rows: 8160 affine
// points, 0.5 MiB on BN254 G1, 1.5 MiB on BLS12-381 G2, read through the caches). One thread per
// scalar: 32 mixed XYZZ additions (no doubling), then one inversion to affine. Output in key
// encoding (Montgomery LE x then y; a zero product as all-zero bytes): the device affine type has
// the host's byte layout, which is that encoding, so results are copied back as they are.
#include <vector>

#include "cuda/setup/fixed_base.hpp"
#include "cuda/context/device_context.cuh"
#include "curve/ops.hpp"

namespace cuzk::cuda {
namespace {

constexpr int kWindowBits = 8;
constexpr int kDigits = (1 << kWindowBits) - 1;  // entries per row
constexpr size_t kChunk = size_t(1) << 20;       // scalars per round trip

template <class DFr, class A, class X>
__global__ void __launch_bounds__(128) fixed_base_kernel(const DFr* __restrict__ scalars, const A* __restrict__ table,
                                                         int windows, A* __restrict__ out, size_t n) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const DFr k = scalars[i].from_mont();  // standard form: the digits
  X acc = X::infinity();
  for (int j = 0; j < windows; j++) {
    const uint32_t d = (k.l[j >> 2] >> (8 * (j & 3))) & 0xff;
    if (d) acc = acc.add_affine(table[(size_t)j * kDigits + d - 1]);
  }
  if (acc.is_infinity()) {
    out[i] = A::infinity();
    return;
  }
  const auto zzz_inv = acc.ZZZ.inverse();  // 1/Z^3
  const auto z_inv = acc.ZZ * zzz_inv;       // 1/Z
  out[i] = A{acc.X * z_inv.sqr(), acc.Y * zzz_inv};
}

template <class HC, int G>
cuzk_status fixed_base_on(DeviceContext* d, const uint8_t* scalars, size_t n, uint8_t* out, std::string& err) {
  using Gr = Group<HC, G>;
  using A = typename Gr::Affine;
  using X = typename Gr::Xyzz;
  using HA = typename Gr::HostAffine;
  using HX = typename Gr::HostXyzz;
  using DFr = typename DeviceCurve<HC>::Fr;
  static_assert(sizeof(A) == Gr::AFFINE_BYTES, "device affine = key encoding");
  static_assert(sizeof(HA) == sizeof(A) && sizeof(DFr) == 32, "layouts");
  if (n == 0) return CUZK_OK;
  const int windows = (HC::Fr::Params::BITS + kWindowBits - 1) / kWindowBits;
  const size_t entries = (size_t)windows * kDigits;

  // The table, on the host: row j from 2^(8j) G by repeated addition, then one batch conversion.
  std::vector<HX> xs(entries);
  std::vector<HA> table(entries);
  HX base;
  if constexpr (G == 1) base = HX::from_affine(HC::g1_generator());
  else base = HX::from_affine(HC::g2_generator());
  for (int j = 0; j < windows; j++) {
    const HA step = base.to_affine();
    HX acc = HX::from_affine(step);
    for (int m = 0; m < kDigits; m++) {
      xs[(size_t)j * kDigits + m] = acc;
      acc = acc.add_affine(step);
    }
    for (int b = 0; b < kWindowBits; b++) base = base.dbl();
  }
  curve::to_affine_batch(xs.data(), table.data(), entries);

  DeviceBuffer dtable;
  CUZK_TRY(dtable.ensure(entries * sizeof(A), err));
  CUZK_TRY(d->staging.upload(dtable.as(), table.data(), entries * sizeof(A), d->stream, err));
  const size_t chunk = n < kChunk ? n : kChunk;
  CUZK_TRY(d->io_scalars.ensure(chunk * 32, err));
  CUZK_TRY(d->io_points.ensure(chunk * sizeof(A), err));
  for (size_t off = 0; off < n; off += chunk) {
    const size_t cnt = n - off < chunk ? n - off : chunk;
    // upload returns once the host side may be reused; stream order covers the device side
    CUZK_TRY(d->staging.upload(d->io_scalars.as(), scalars + off * 32, cnt * 32, d->stream, err));
    fixed_base_kernel<DFr, A, X><<<(unsigned)((cnt + 127) / 128), 128, 0, d->stream>>>(
        d->io_scalars.as<DFr>(), dtable.as<A>(), windows, d->io_points.as<A>(), cnt);
    CUZK_CU(cudaGetLastError());
    CUZK_CU(cudaMemcpyAsync(out + off * sizeof(A), d->io_points.as(), cnt * sizeof(A), cudaMemcpyDeviceToHost,
                            d->stream));
    CUZK_CU(cudaStreamSynchronize(d->stream));
  }
  return CUZK_OK;
}

}  // namespace

cuzk_status fixed_base_mul(DeviceContext* d, cuzk_curve curve, cuzk_group group, const uint8_t* scalars_mont, size_t n,
                           uint8_t* out, std::string& err) {
  std::lock_guard<std::mutex> lock(d->mutex);
  CUZK_TRY(d->make_current(err));
  if (curve == CUZK_CURVE_BN254)
    return group == CUZK_G1 ? fixed_base_on<curve::Bn254, 1>(d, scalars_mont, n, out, err)
                            : fixed_base_on<curve::Bn254, 2>(d, scalars_mont, n, out, err);
  if (curve == CUZK_CURVE_BLS12_381)
    return group == CUZK_G1 ? fixed_base_on<curve::Bls12381, 1>(d, scalars_mont, n, out, err)
                            : fixed_base_on<curve::Bls12381, 2>(d, scalars_mont, n, out, err);
  err = "fixed_base_mul: unknown curve";
  return CUZK_ERR_INVALID_ARGUMENT;
}

}  // namespace cuzk::cuda
