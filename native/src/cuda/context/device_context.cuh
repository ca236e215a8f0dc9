// The CUDA backend's handle on one GPU, what a cuzk_context holds: the runtime's Device and the
// workspaces of the kernel families on it (the MSM plan and scratch, the NTT tables of each curve,
// the standalone kernels' inputs), which every MSM and NTT on this GPU reuses. Calls on one GPU
// are serialised by the Device's mutex.
#pragma once

#include "cuda/msm/msm.cuh"
#include "cuda/ntt/ntt.cuh"
#include "cuda/runtime/device.cuh"

namespace cuzk::cuda {

struct DeviceContext : Device {
  MsmPlan plan;
  MsmScratch msm;
  NttContext<curve::Bn254::Fr, DeviceCurve<curve::Bn254>::Fr> ntt_bn254;
  NttContext<curve::Bls12381::Fr, DeviceCurve<curve::Bls12381>::Fr> ntt_bls12_381;
  DeviceBuffer io_points, io_scalars;  // the standalone kernels' inputs

  template <class HC>
  auto& ntt() {
    if constexpr (HC::ID == CUZK_CURVE_BN254) return ntt_bn254;
    else return ntt_bls12_381;
  }
};

}  // namespace cuzk::cuda
