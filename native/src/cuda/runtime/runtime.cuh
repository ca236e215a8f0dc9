// CUDA runtime plumbing shared by the backend: status mapping of CUDA errors, grow-only device
// buffers, and timing of GPU phases with events. Every CUDA call goes through CUZK_CU so that a
// failure turns into a cuzk_status with the CUDA error text, never an abort.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "cuzk.h"
#include "engine/timings.hpp"
#include "util/clock.hpp"
#include "util/machine.hpp"

namespace cuzk::cuda {

inline cuzk_status status_of(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return CUZK_OK;
    case cudaErrorMemoryAllocation: return CUZK_ERR_OUT_OF_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable: return CUZK_ERR_NO_DEVICE;
    default: return CUZK_ERR_DEVICE;
  }
}

// Page-locked memory the library allocates for itself (upload staging, MSM download areas), so
// that "no pinning after the first proof" can be shown (cuzk_staging_stats): every such
// allocation goes through pinned_alloc / pinned_free.
struct PinnedLedger {
  std::atomic<uint64_t> bytes{0}, allocations{0}, ns{0};
};
inline PinnedLedger& pinned_ledger() {
  static PinnedLedger ledger;
  return ledger;
}
// An allocation the host's available memory cannot take beside the reserve (util/machine.hpp) is
// refused as out of memory: page-locking memory the machine does not have would have the kernel's
// OOM killer end the process instead of this call failing.
inline cudaError_t pinned_alloc(void** p, size_t bytes) {
  uint64_t t0 = now_ns();
  if (!pinnable(bytes)) {
    *p = nullptr;
    return cudaErrorMemoryAllocation;
  }
  cudaError_t e = cudaMallocHost(p, bytes);
  if (e == cudaSuccess) {
    PinnedLedger& l = pinned_ledger();
    l.bytes += bytes;
    l.allocations++;
    l.ns += now_ns() - t0;
  }
  return e;
}
inline void pinned_free(void* p, size_t bytes) {
  if (!p) return;
  cudaFreeHost(p);
  pinned_ledger().bytes -= bytes;
}

// Records the failure and clears the runtime's last error, so that a non-sticky failure (an
// allocation, a bad argument) does not leak into the next call.
inline cuzk_status fail(cudaError_t e, const char* what, std::string& err) {
  (void)cudaGetLastError();
  err = std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return status_of(e);
}

#define CUZK_CU(expr)                                                          \
  do {                                                                         \
    cudaError_t cuzk_e_ = (expr);                                              \
    if (cuzk_e_ != cudaSuccess) return ::cuzk::cuda::fail(cuzk_e_, #expr, err); \
  } while (0)
#define CUZK_TRY(expr)                      \
  do {                                      \
    cuzk_status cuzk_s_ = (expr);           \
    if (cuzk_s_ != CUZK_OK) return cuzk_s_; \
  } while (0)
// After a kernel launch: launch-configuration errors show up here.
inline cuzk_status check_launch(const char* kernel, std::string& err) {
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? CUZK_OK : fail(e, kernel, err);
}
#define CUZK_LAUNCHED(kernel) CUZK_TRY(::cuzk::cuda::check_launch(kernel, err))

// An allocation that only grows, reused across calls so that steady-state proving allocates
// nothing (cudaMalloc synchronises the device; pinning costs far more). Space: where it lives.
template <class Space>
class GrowBuffer {
 public:
  GrowBuffer() = default;
  GrowBuffer(const GrowBuffer&) = delete;
  GrowBuffer& operator=(const GrowBuffer&) = delete;
  GrowBuffer(GrowBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  ~GrowBuffer() { release(); }

  cuzk_status ensure(size_t bytes, std::string& err) {
    if (bytes <= bytes_) return CUZK_OK;
    release();
    void* p = nullptr;
    if (cudaError_t e = Space::alloc(&p, bytes); e != cudaSuccess) {
      return fail(e, (std::string(Space::kCall) + "(" + std::to_string(bytes >> 20) + " MiB)").c_str(), err);
    }
    p_ = p;
    bytes_ = bytes;
    return CUZK_OK;
  }
  void release() {
    if (p_) Space::free(p_, bytes_);
    p_ = nullptr;
    bytes_ = 0;
  }
  template <class T = void>
  T* as() const { return static_cast<T*>(p_); }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

struct DeviceSpace {
  static constexpr const char* kCall = "cudaMalloc";
  static cudaError_t alloc(void** p, size_t bytes) { return cudaMalloc(p, bytes); }
  static void free(void* p, size_t) { cudaFree(p); }
};
// Pinned host memory (pinned_alloc): where results come down and staged data goes up.
struct PinnedSpace {
  static constexpr const char* kCall = "cudaMallocHost";
  static cudaError_t alloc(void** p, size_t bytes) { return pinned_alloc(p, bytes); }
  static void free(void* p, size_t bytes) { pinned_free(p, bytes); }
};
using DeviceBuffer = GrowBuffer<DeviceSpace>;
using PinnedBuffer = GrowBuffer<PinnedSpace>;

// Phase timing on the GPU: events recorded around each phase on the stream, converted to the
// host's monotonic clock against a base event taken while the stream was idle.
class GpuTimeline {
 public:
  static constexpr int kMax = 64;
  cuzk_status begin(cudaStream_t s, std::string& err) {
    stream_ = s;
    used_ = 0;
    if (!created_) {
      for (int i = 0; i < kMax + 1; i++) CUZK_CU(cudaEventCreate(&ev_[i]));
      created_ = true;
    }
    CUZK_CU(cudaStreamSynchronize(s));
    base_ns_ = now_ns();
    CUZK_CU(cudaEventRecord(ev_[kMax], s));
    return CUZK_OK;
  }
  // Returns a slot id for mark(); -1 when out of slots (that phase then goes untimed).
  int mark(std::string& err) {
    if (used_ >= kMax) return -1;
    if (cudaEventRecord(ev_[used_], stream_) != cudaSuccess) { (void)cudaGetLastError(); return -1; }
    return used_++;
  }
  // Marks (and spans) left before the timeline must be flushed and begun again.
  int free_marks() const { return std::min(kMax - used_, kMax - n_spans_); }
  struct Span { int from, to; cuzk_phase phase; size_t proof; };
  void span(int from, int to, cuzk_phase phase, size_t proof) {
    if (from >= 0 && to >= 0 && n_spans_ < kMax) spans_[n_spans_++] = {from, to, phase, proof};
  }
  // After the stream has been synchronised: writes every span into `times`.
  void flush(engine::PhaseTimes& times) {
    for (int i = 0; i < n_spans_; i++) {
      float a = 0, b = 0;
      if (cudaEventElapsedTime(&a, ev_[kMax], ev_[spans_[i].from]) != cudaSuccess ||
          cudaEventElapsedTime(&b, ev_[kMax], ev_[spans_[i].to]) != cudaSuccess) {
        (void)cudaGetLastError();
        continue;
      }
      uint64_t s = base_ns_ + (uint64_t)(a * 1e6), e = base_ns_ + (uint64_t)(b * 1e6);
      if (spans_[i].proof == engine::PhaseScope::kAll) times.record_all(spans_[i].phase, s, e);
      else times.record(spans_[i].proof, spans_[i].phase, s, e);
    }
    n_spans_ = 0;
  }
  ~GpuTimeline() {
    if (created_)
      for (int i = 0; i < kMax + 1; i++) cudaEventDestroy(ev_[i]);
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev_[kMax + 1] = {};
  bool created_ = false;
  int used_ = 0;
  uint64_t base_ns_ = 0;
  Span spans_[kMax];
  int n_spans_ = 0;
};

// Per-kernel timing for tuning, switched on by a benchmark or test harness (never by the library
// itself): events between the steps of one call, printed as one "TRACE" line when the object
// goes out of scope.
inline bool g_kernel_trace = false;
class KernelTrace {
 public:
  KernelTrace(const char* label, cudaStream_t s) : label_(label), s_(s), on_(g_kernel_trace) { mark("start"); }
  void mark(const char* name) {
    if (!on_ || n_ >= kMax) return;
    if (cudaEventCreate(&ev_[n_]) != cudaSuccess || cudaEventRecord(ev_[n_], s_) != cudaSuccess) {
      (void)cudaGetLastError();
      on_ = false;
      return;
    }
    names_[n_++] = name;
  }
  // Whether this call is traced (a caller builds its note only then).
  bool on() const { return on_; }
  // Words printed after the times (the sizes the call worked on).
  void note(const std::string& words) {
    if (on_) note_ += " " + words;
  }
  ~KernelTrace() {
    if (!on_ || n_ < 2) return;
    cudaEventSynchronize(ev_[n_ - 1]);
    std::string line = std::string("TRACE ") + label_;
    for (int i = 1; i < n_; i++) {
      float ms = 0;
      cudaEventElapsedTime(&ms, ev_[i - 1], ev_[i]);
      line += std::string(" ") + names_[i] + "=" + std::to_string(ms);
    }
    line += note_;
    std::fprintf(stderr, "%s\n", line.c_str());
    for (int i = 0; i < n_; i++) cudaEventDestroy(ev_[i]);
    (void)cudaGetLastError();
  }

 private:
  static constexpr int kMax = 16;
  const char* label_;
  cudaStream_t s_;
  bool on_;
  int n_ = 0;
  cudaEvent_t ev_[kMax];
  const char* names_[kMax];
  std::string note_;
};

inline uint32_t ceil_div(size_t a, size_t b) { return (uint32_t)((a + b - 1) / b); }

// 16-byte loads and stores of a field element or point (every such size here is a multiple of
// 16 bytes and every buffer comes from cudaMalloc): 4x fewer memory instructions than the
// 4-byte accesses the compiler emits for a struct of uint32_t.
template <class T>
__device__ __forceinline__ T load16(const T* p) {
  static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
  const uint4* q = reinterpret_cast<const uint4*>(p);
  T r;
  uint32_t* w = reinterpret_cast<uint32_t*>(&r);
#pragma unroll
  for (int k = 0; k < (int)(sizeof(T) / 16); k++) {
    uint4 v = q[k];
    w[4 * k] = v.x; w[4 * k + 1] = v.y; w[4 * k + 2] = v.z; w[4 * k + 3] = v.w;
  }
  return r;
}
template <class T>
__device__ __forceinline__ void store16(T* p, const T& v) {
  static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
  uint4* q = reinterpret_cast<uint4*>(p);
  const uint32_t* w = reinterpret_cast<const uint32_t*>(&v);
#pragma unroll
  for (int k = 0; k < (int)(sizeof(T) / 16); k++) q[k] = make_uint4(w[4 * k], w[4 * k + 1], w[4 * k + 2], w[4 * k + 3]);
}

}  // namespace cuzk::cuda
