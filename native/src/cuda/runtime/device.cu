// Staging::upload (device.cuh).
#include <cstring>

#include "cuda/runtime/device.cuh"

namespace cuzk::cuda {

cuzk_status Staging::upload(void* dst, const void* src, size_t bytes, cudaStream_t s, std::string& err) {
  if (bytes == 0) return CUZK_OK;
  if (is_pinned(src)) {
    CUZK_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    return CUZK_OK;
  }
  for (int i = 0; i < 2; i++) {
    if (!buf_[i]) CUZK_CU(pinned_alloc(&buf_[i], kChunk));
    if (!ev_[i]) CUZK_CU(cudaEventCreateWithFlags(&ev_[i], cudaEventDisableTiming));
  }
  const uint8_t* in = static_cast<const uint8_t*>(src);
  uint8_t* o = static_cast<uint8_t*>(dst);
  for (size_t off = 0, i = 0; off < bytes; off += kChunk, i ^= 1) {
    size_t len = bytes - off < kChunk ? bytes - off : kChunk;
    CUZK_CU(cudaEventSynchronize(ev_[i]));  // the DMA out of this chunk two rounds ago is done
    std::memcpy(buf_[i], in + off, len);
    CUZK_CU(cudaMemcpyAsync(o + off, buf_[i], len, cudaMemcpyHostToDevice, s));
    CUZK_CU(cudaEventRecord(ev_[i], s));
  }
  CUZK_CU(cudaStreamSynchronize(s));
  return CUZK_OK;
}

}  // namespace cuzk::cuda
