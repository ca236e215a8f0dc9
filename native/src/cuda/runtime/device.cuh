// One GPU as the runtime sees it: its index and properties, the stream the backend's work on it
// is ordered on, the mutex that serialises calls on it, the phase timeline, and pinned staging for
// uploads from pageable memory. It knows no kernel family: their workspaces live beside it in the
// backend's DeviceContext (context/device_context.cuh). Each call first makes the device current.
#pragma once

#include <mutex>

#include "cuda/runtime/runtime.cuh"

namespace cuzk::cuda {

// Pinned chunks through which pageable host memory is uploaded: the host copy into one chunk
// overlaps the DMA out of the other.
class Staging {
 public:
  static constexpr size_t kChunk = 32u << 20;
  ~Staging() {
    for (int i = 0; i < 2; i++) {
      pinned_free(buf_[i], kChunk);
      if (ev_[i]) cudaEventDestroy(ev_[i]);
    }
  }
  // dst (device) <- src (host, pinned or not), on stream s. Returns once src may be reused.
  cuzk_status upload(void* dst, const void* src, size_t bytes, cudaStream_t s, std::string& err);

 private:
  void* buf_[2] = {nullptr, nullptr};
  cudaEvent_t ev_[2] = {nullptr, nullptr};
};

struct Device {
  int index = 0;
  cudaDeviceProp prop{};
  cudaStream_t stream = nullptr;
  std::mutex mutex;
  Staging staging;
  GpuTimeline timeline;

  cuzk_status make_current(std::string& err) {
    CUZK_CU(cudaSetDevice(index));
    return CUZK_OK;
  }
};

// True when p lies in page-locked memory the driver knows (cudaHostAlloc or cudaHostRegister).
inline bool is_pinned(const void* p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

}  // namespace cuzk::cuda
