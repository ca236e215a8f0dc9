// cuda/backend.hpp in the CUDA build: devices, pinned host memory, and the standalone kernels
// (cuzk_msm, cuzk_ntt). The prover engine is in engine.cu.
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "cuda/backend.hpp"
#include "util/machine.hpp"
#include "cuda/context/device_context.cuh"
#include "curve/ops.hpp"

namespace cuzk::cuda {

namespace {
// CUDA loads kernels lazily by default (CUDA_MODULE_LOADING=LAZY): the first launch of each one
// loads it, which put 40-50 ms of a one-shot CLI proof into its first MSM on the H200 (msm_a 41-53
// ms, 1.3-2.9 ms with EAGER; the whole process took as long either way: docs/perf-log.md). Ask for
// eager loading before the driver starts, unless the caller chose: the cost then lands when the
// device is first used, outside every proof, and a long-lived prover pays it once.
void prefer_eager_module_loading() {
  static std::once_flag once;
  std::call_once(once, [] { setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0); });
}
}  // namespace

bool compiled_in() { return true; }

cuzk_status device_count(int* out, std::string& err) {
  prefer_eager_module_loading();
  *out = 0;
  cudaError_t e = cudaGetDeviceCount(out);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {  // no driver or no GPU: zero devices
    (void)cudaGetLastError();
    *out = 0;
    return CUZK_OK;
  }
  if (e != cudaSuccess) return fail(e, "cudaGetDeviceCount", err);
  return CUZK_OK;
}

cuzk_status device_info(int index, cuzk_device_info* out, std::string& err) {
  int count = 0;
  CUZK_TRY(device_count(&count, err));
  if (index < 0 || index >= count) {
    err = "no CUDA device " + std::to_string(index) + " (" + std::to_string(count) + " present)";
    return CUZK_ERR_NO_DEVICE;
  }
  cudaDeviceProp p{};
  CUZK_CU(cudaGetDeviceProperties(&p, index));
  std::memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  out->index = index;
  out->cc_major = (uint32_t)p.major;
  out->cc_minor = (uint32_t)p.minor;
  out->sm_count = (uint32_t)p.multiProcessorCount;
  out->total_memory = p.totalGlobalMem;
  std::strncpy(out->name, p.name, sizeof out->name - 1);
  int prev = 0;
  CUZK_CU(cudaGetDevice(&prev));
  CUZK_CU(cudaSetDevice(index));
  size_t free_b = 0, total_b = 0;
  cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
  cudaSetDevice(prev);
  if (e != cudaSuccess) return fail(e, "cudaMemGetInfo", err);
  out->free_memory = free_b;
  return CUZK_OK;
}

int runtime_version() {
  prefer_eager_module_loading();
  int v = 0;
  return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : 0;
}
int driver_version() {
  prefer_eager_module_loading();
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return v;
}

cuzk_status open_device(int index, DeviceContext** out, std::string& err) {
  int count = 0;
  CUZK_TRY(device_count(&count, err));
  if (index < 0 || index >= count) {
    err = "no CUDA device " + std::to_string(index) + " (" + std::to_string(count) + " present)";
    return CUZK_ERR_NO_DEVICE;
  }
  auto d = std::make_unique<DeviceContext>();
  d->index = index;
  CUZK_CU(cudaSetDevice(index));
  CUZK_CU(cudaGetDeviceProperties(&d->prop, index));
  CUZK_CU(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
  *out = d.release();
  return CUZK_OK;
}

void close_device(DeviceContext* d) {
  if (!d) return;
  cudaSetDevice(d->index);
  if (d->stream) {
    cudaStreamSynchronize(d->stream);
    cudaStreamDestroy(d->stream);
  }
  delete d;  // buffers free themselves on this device
  (void)cudaGetLastError();
}

namespace {

template <class HC, int G>
cuzk_status msm_on(DeviceContext* d, const uint8_t* points, const uint8_t* scalars, size_t n, uint8_t* out,
                   engine::PhaseTimes& times, std::string& err) {
  using A = typename Group<HC, G>::Affine;
  using HX = typename Group<HC, G>::HostXyzz;
  if (n >= (1ull << 31)) { err = "MSM of 2^31 points or more"; return CUZK_ERR_INVALID_ARGUMENT; }
  const size_t pb = n * sizeof(A), sb = n * 32;
  uint64_t t0 = now_ns();
  CUZK_TRY(d->io_points.ensure(pb ? pb : 16, err));
  CUZK_TRY(d->io_scalars.ensure(sb ? sb : 16, err));
  CUZK_TRY(d->staging.upload(d->io_points.as(), points, pb, d->stream, err));
  CUZK_TRY(d->staging.upload(d->io_scalars.as(), scalars, sb, d->stream, err));
  CUZK_CU(cudaStreamSynchronize(d->stream));
  uint64_t t1 = now_ns();
  times.record(0, CUZK_PHASE_UPLOAD, t0, t1);
  HX sum;
  CUZK_TRY(msm_plan<typename HC::Fr::Params>(d->plan, d->io_scalars.as<uint32_t>(), (uint32_t)n, true, 0, d->stream, err));
  CUZK_TRY((msm_execute<HC, G>(d->plan, d->io_points.as<A>(), d->msm, d->stream, &sum, err)));
  uint64_t t2 = now_ns();
  times.record(0, G == 1 ? CUZK_PHASE_MSM_A : CUZK_PHASE_MSM_B2, t1, t2);
  curve::store_output_point(sum.to_affine(), out);
  return CUZK_OK;
}

template <class HC>
cuzk_status ntt_on(DeviceContext* d, uint8_t* values, uint32_t log_n, uint32_t kind, engine::PhaseTimes& times,
                   std::string& err) {
  using F = typename DeviceCurve<HC>::Fr;
  auto& ctx = d->ntt<HC>();
  CUZK_TRY(ctx.init(err));
  const size_t bytes = ((size_t)1 << log_n) * 32;
  uint64_t t0 = now_ns();
  CUZK_TRY(d->io_scalars.ensure(bytes, err));
  CUZK_TRY(d->staging.upload(d->io_scalars.as(), values, bytes, d->stream, err));
  CUZK_CU(cudaStreamSynchronize(d->stream));
  uint64_t t1 = now_ns();
  times.record(0, CUZK_PHASE_UPLOAD, t0, t1);
  CUZK_TRY(ctx.natural(d->io_scalars.as<F>(), log_n, kind, true, d->stream, err));
  CUZK_CU(cudaStreamSynchronize(d->stream));
  uint64_t t2 = now_ns();
  times.record(0, CUZK_PHASE_NTT_H, t1, t2);
  CUZK_CU(cudaMemcpy(values, d->io_scalars.as(), bytes, cudaMemcpyDeviceToHost));
  times.record(0, CUZK_PHASE_DOWNLOAD, t2, now_ns());
  return CUZK_OK;
}

}  // namespace

cuzk_status msm(DeviceContext* d, cuzk_curve curve, cuzk_group group, const uint8_t* points, const uint8_t* scalars, size_t n,
                uint8_t* out, engine::PhaseTimes& times, std::string& err) {
  std::lock_guard<std::mutex> lock(d->mutex);
  CUZK_TRY(d->make_current(err));
  if (curve == CUZK_CURVE_BN254)
    return group == CUZK_G1 ? msm_on<curve::Bn254, 1>(d, points, scalars, n, out, times, err)
                            : msm_on<curve::Bn254, 2>(d, points, scalars, n, out, times, err);
  return group == CUZK_G1 ? msm_on<curve::Bls12381, 1>(d, points, scalars, n, out, times, err)
                          : msm_on<curve::Bls12381, 2>(d, points, scalars, n, out, times, err);
}

cuzk_status ntt(DeviceContext* d, cuzk_curve curve, uint8_t* values, uint32_t log_n, uint32_t kind, engine::PhaseTimes& times,
                std::string& err) {
  std::lock_guard<std::mutex> lock(d->mutex);
  CUZK_TRY(d->make_current(err));
  const bool coset = kind == CUZK_NTT_COSET_FORWARD || kind == CUZK_NTT_COSET_INVERSE;
  if (log_n > kNttMaxLog || (coset && log_n + 1 > kNttMaxLog)) {
    err = "log_n " + std::to_string(log_n) + " is beyond the GPU tables (2^" + std::to_string(kNttMaxLog) + ")";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  if (curve == CUZK_CURVE_BN254) return ntt_on<curve::Bn254>(d, values, log_n, kind, times, err);
  return ntt_on<curve::Bls12381>(d, values, log_n, kind, times, err);
}

cuzk_status host_alloc_pinned(size_t bytes, int device, void** out, std::string& err) {
  prefer_eager_module_loading();
  if (std::string refusal = pinning_refusal(bytes); !refusal.empty()) {
    err = refusal;
    return CUZK_ERR_OUT_OF_MEMORY;
  }
  int prev = 0;
  CUZK_CU(cudaGetDevice(&prev));
  CUZK_CU(cudaSetDevice(device));
  // Portable: usable by every device; the pages are locked once, here, off the proving path.
  cudaError_t e = cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocPortable);
  cudaSetDevice(prev);
  if (e != cudaSuccess) return fail(e, "cudaHostAlloc", err);
  return CUZK_OK;
}
cuzk_status host_free_pinned(void* p, std::string& err) {
  CUZK_CU(cudaFreeHost(p));
  return CUZK_OK;
}
cuzk_status host_register(void* p, size_t bytes, std::string& err) {
  prefer_eager_module_loading();
  CUZK_CU(cudaHostRegister(p, bytes, cudaHostRegisterPortable));
  return CUZK_OK;
}
cuzk_status host_unregister(void* p, std::string& err) {
  CUZK_CU(cudaHostUnregister(p));
  return CUZK_OK;
}
void staging_stats(uint64_t* bytes, uint64_t* allocations, uint64_t* ns) {
  const PinnedLedger& l = pinned_ledger();
  *bytes = l.bytes.load();
  *allocations = l.allocations.load();
  *ns = l.ns.load();
}

}  // namespace cuzk::cuda
