// The door between the library and its CUDA backend: plain C++ (no CUDA types), so the ABI layer
// and the prover compile with any C++ compiler. Implemented by backend.cu and the rooms below it
// (engine/, setup/) in the CUDA build, and by absent.cpp in a build without CUDA (every call then
// reports CUZK_ERR_UNSUPPORTED).
#pragma once

#include <memory>
#include <string>

#include "cuda/engine/gpu_costs.hpp"
#include "cuda/engine/make_engine.hpp"
#include "cuda/setup/fixed_base.hpp"
#include "cuzk.h"
#include "engine/engine.hpp"

namespace cuzk::cuda {

bool compiled_in();
cuzk_status device_count(int* out, std::string& err);  // 0 devices (CUZK_OK) without a driver
cuzk_status device_info(int index, cuzk_device_info* out, std::string& err);
int runtime_version();  // e.g. 13000; 0 without CUDA
int driver_version();   // 0 without a driver

// A DeviceContext is one GPU (context/device_context.cuh): its runtime Device and the kernels'
// workspaces on it.
cuzk_status open_device(int index, DeviceContext** out, std::string& err);
void close_device(DeviceContext* device);

cuzk_status msm(DeviceContext* device, cuzk_curve curve, cuzk_group group, const uint8_t* points_key_encoding,
                const uint8_t* scalars_std_le, size_t n, uint8_t* out_point_output_encoding, engine::PhaseTimes& times,
                std::string& err);
cuzk_status ntt(DeviceContext* device, cuzk_curve curve, uint8_t* values_std_le, uint32_t log_n, uint32_t kind,
                engine::PhaseTimes& times, std::string& err);


cuzk_status host_alloc_pinned(size_t bytes, int device, void** out, std::string& err);
cuzk_status host_free_pinned(void* p, std::string& err);
cuzk_status host_register(void* p, size_t bytes, std::string& err);
cuzk_status host_unregister(void* p, std::string& err);
// the library's own page-locked allocations (see cuzk_staging_stats)
void staging_stats(uint64_t* bytes, uint64_t* allocations, uint64_t* ns);

}  // namespace cuzk::cuda
