// cuzk.h: the kernels on their own (MSM, NTT), on the context's backend.
#include <vector>

#include "abi/abi_util.hpp"
#include "abi/handles.hpp"
#include "cpu/msm.hpp"
#include "cpu/ntt.hpp"
#include "cuda/backend.hpp"
#include "curve/ops.hpp"
#include "engine/timings.hpp"

using cuzk::abi::guarded;
using cuzk::engine::PhaseScope;
using cuzk::engine::PhaseTimes;

namespace {

template <class C>
cuzk_status cpu_msm(cuzk_context* ctx, uint32_t group, const uint8_t* points, const uint8_t* scalars, size_t n,
                    uint8_t* out, PhaseTimes& times) {
  using Fr = typename C::Fr;
  // Scalars may be any 256-bit value: reduce them mod r first (the kernel assumes < r).
  std::vector<uint8_t> reduced(n * 32);
  ctx->pool->parallel_range(n, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++) Fr::from_bytes_std(scalars + i * 32).to_bytes_std(&reduced[i * 32]);
  }, 4096);
  if (group == CUZK_G1) {
    PhaseScope t(times, 0, CUZK_PHASE_MSM_A);
    auto sum = cuzk::cpu::msm<C, typename C::Fq>(*ctx->pool, points, reduced.data(), n);
    cuzk::curve::store_output_point(sum.to_affine(), out);
  } else {
    PhaseScope t(times, 0, CUZK_PHASE_MSM_B2);
    auto sum = cuzk::cpu::msm<C, typename C::Fq2>(*ctx->pool, points, reduced.data(), n);
    cuzk::curve::store_output_point(sum.to_affine(), out);
  }
  return CUZK_OK;
}

template <class C>
void cpu_ntt(cuzk_context* ctx, uint8_t* values, uint32_t log_n, uint32_t kind, PhaseTimes& times) {
  using Fr = typename C::Fr;
  PhaseScope t(times, 0, CUZK_PHASE_NTT_H);
  size_t n = size_t(1) << log_n;
  std::vector<Fr> v(n);
  ctx->pool->parallel_range(n, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++) v[i] = Fr::from_bytes_std(values + i * 32);
  }, 4096);
  static const cuzk::cpu::NttKind kinds[] = {cuzk::cpu::NttKind::Forward, cuzk::cpu::NttKind::Inverse,
                                              cuzk::cpu::NttKind::CosetForward, cuzk::cpu::NttKind::CosetInverse};
  cuzk::cpu::ntt(*ctx->pool, v.data(), log_n, kinds[kind]);
  ctx->pool->parallel_range(n, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++) v[i].to_bytes_std(values + i * 32);
  }, 4096);
}

cuzk_status check_curve(uint32_t curve, std::string& msg) {
  if (curve == CUZK_CURVE_BN254 || curve == CUZK_CURVE_BLS12_381) return CUZK_OK;
  msg = "unknown curve " + std::to_string(curve);
  return CUZK_ERR_INVALID_ARGUMENT;
}

}  // namespace

extern "C" {

CUZK_API cuzk_status cuzk_msm(cuzk_context* ctx, uint32_t curve, uint32_t group, const uint8_t* points,
                              const uint8_t* scalars, size_t n, uint8_t* out, size_t out_cap, cuzk_timings* timings,
                              char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!ctx || !out || (n > 0 && (!points || !scalars))) { msg = "ctx, points, scalars and out must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    cuzk_status st = check_curve(curve, msg);
    if (st != CUZK_OK) return st;
    if (group != CUZK_G1 && group != CUZK_G2) { msg = "group must be CUZK_G1 or CUZK_G2"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (n >= (size_t(1) << 31)) { msg = "n = " + std::to_string(n) + ": an MSM takes fewer than 2^31 points"; return CUZK_ERR_INVALID_ARGUMENT; }
    size_t fq = curve == CUZK_CURVE_BN254 ? 32 : 48;
    size_t need = (group == CUZK_G1 ? 2 : 4) * fq;
    if (out_cap < need) { msg = "out holds " + std::to_string(out_cap) + " bytes; " + std::to_string(need) + " needed"; return CUZK_ERR_SHORT_BUFFER; }
    std::lock_guard<std::mutex> lock(ctx->kernel_mutex);
    PhaseTimes times(timings, 1, ctx->backend);
    if (ctx->backend == CUZK_BACKEND_CUDA)
      st = cuzk::cuda::msm(ctx->gpu, (cuzk_curve)curve, (cuzk_group)group, points, scalars, n, out, times, msg);
    else if (curve == CUZK_CURVE_BN254)
      st = cpu_msm<cuzk::curve::Bn254>(ctx, group, points, scalars, n, out, times);
    else
      st = cpu_msm<cuzk::curve::Bls12381>(ctx, group, points, scalars, n, out, times);
    times.finish();
    return st;
  });
}

CUZK_API cuzk_status cuzk_ntt(cuzk_context* ctx, uint32_t curve, uint8_t* values, uint32_t log_n, uint32_t kind,
                              cuzk_timings* timings, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!ctx || !values) { msg = "ctx and values must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    cuzk_status st = check_curve(curve, msg);
    if (st != CUZK_OK) return st;
    if (kind > CUZK_NTT_COSET_INVERSE) { msg = "unknown NTT kind " + std::to_string(kind); return CUZK_ERR_INVALID_ARGUMENT; }
    uint32_t max_log = curve == CUZK_CURVE_BN254 ? 27 : 27;  // +1 for the coset root; memory bounds it anyway
    if (log_n > max_log) { msg = "log_n " + std::to_string(log_n) + " exceeds " + std::to_string(max_log); return CUZK_ERR_INVALID_ARGUMENT; }
    std::lock_guard<std::mutex> lock(ctx->kernel_mutex);
    PhaseTimes times(timings, 1, ctx->backend);
    if (ctx->backend == CUZK_BACKEND_CUDA)
      st = cuzk::cuda::ntt(ctx->gpu, (cuzk_curve)curve, values, log_n, kind, times, msg);
    else if (curve == CUZK_CURVE_BN254)
      cpu_ntt<cuzk::curve::Bn254>(ctx, values, log_n, kind, times);
    else
      cpu_ntt<cuzk::curve::Bls12381>(ctx, values, log_n, kind, times);
    times.finish();
    return st;
  });
}

}  // extern "C"
