// What a cuda::Device holds: one GPU's stream, the scratch every MSM and NTT on it reuses, its
// root tables, and pinned staging for uploads from pageable memory. Calls on one Device are
// serialised by its mutex; each one first makes the device current (cudaSetDevice).
#pragma once

#include <mutex>

#include "cuda/msm.cuh"
#include "cuda/ntt.cuh"

namespace cuzk::cuda {

using BnFr = DeviceCurve<curve::Bn254>::Fr;
using BlsFr = DeviceCurve<curve::Bls12381>::Fr;

// The kernels are compiled once per curve (msm_<curve>.cu, ntt.cu); other files only call them.
#define CUZK_MSM_EXTERN(HC)                                                                                       \
  extern template cuzk_status msm_plan<HC::Fr::Params>(MsmPlan&, const uint32_t*, uint32_t, bool, int, cudaStream_t, \
                                                        std::string&, int);                                        \
  extern template cuzk_status msm_execute<HC, 1>(const MsmPlan&, const Group<HC, 1>::Affine*, MsmScratch&,         \
                                                  cudaStream_t, Group<HC, 1>::HostXyzz*, std::string&, MsmMarks*); \
  extern template cuzk_status msm_execute<HC, 2>(const MsmPlan&, const Group<HC, 2>::Affine*, MsmScratch&,         \
                                                  cudaStream_t, Group<HC, 2>::HostXyzz*, std::string&, MsmMarks*);
CUZK_MSM_EXTERN(curve::Bn254)
CUZK_MSM_EXTERN(curve::Bls12381)
extern template class NttContext<curve::Bn254::Fr, BnFr>;
extern template class NttContext<curve::Bls12381::Fr, BlsFr>;

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
  MsmPlan plan;
  MsmScratch msm;
  NttContext<curve::Bn254::Fr, BnFr> ntt_bn254;
  NttContext<curve::Bls12381::Fr, BlsFr> ntt_bls12_381;
  DeviceBuffer io_points, io_scalars;  // the standalone kernels' inputs
  Staging staging;
  GpuTimeline timeline;

  template <class HC>
  auto& ntt() {
    if constexpr (HC::ID == CUZK_CURVE_BN254) return ntt_bn254;
    else return ntt_bls12_381;
  }
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
