// The seam between the library and its CUDA backend: plain C++ (no CUDA types), so the ABI layer
// and the prover compile with any C++ compiler. Implemented by the .cu files in the CUDA build and
// by cuda_absent.cpp in a build without CUDA (every call then reports CUZK_ERR_UNSUPPORTED).
#pragma once

#include <memory>
#include <string>

#include "cuzk.h"
#include "engine/engine.hpp"
#include "util/progress.hpp"

namespace cuzk::cuda {

bool compiled_in();
cuzk_status device_count(int* out, std::string& err);  // 0 devices (CUZK_OK) without a driver
cuzk_status device_info(int index, cuzk_device_info* out, std::string& err);
int runtime_version();  // e.g. 13000; 0 without CUDA
int driver_version();   // 0 without a driver

struct Device;  // one GPU: its streams, pools and resident key points
cuzk_status open_device(int index, Device** out, std::string& err);
void close_device(Device* device);

// progress: the key upload's (cuzk_prover_create): the bytes the engine uploaded, once it has.
// options.memory_budget: device bytes (0: the free memory); a key that does not fit even streamed
// is CUZK_ERR_OUT_OF_MEMORY before anything is allocated.
template <class C>
cuzk_status make_engine(Device* device, const engine::KeyView<C>& key, const engine::EngineOptions& options,
                        const Progress& progress, std::unique_ptr<engine::Engine<C>>* out, std::string& err);
template <class C>
cuzk_status make_engine(Device* device, const engine::KeyView<C>& key, const Progress& progress,
                        std::unique_ptr<engine::Engine<C>>* out, std::string& err) {
  return make_engine<C>(device, key, engine::EngineOptions{}, progress, out, err);
}

cuzk_status msm(Device* device, cuzk_curve curve, cuzk_group group, const uint8_t* points_key_encoding,
                const uint8_t* scalars_std_le, size_t n, uint8_t* out_point_output_encoding, engine::PhaseTimes& times,
                std::string& err);
cuzk_status ntt(Device* device, cuzk_curve curve, uint8_t* values_std_le, uint32_t log_n, uint32_t kind,
                engine::PhaseTimes& times, std::string& err);

// out[i] = scalars[i] * (the G1 or G2 generator) in key encoding (Montgomery LE affine, a zero
// product as all-zero bytes), for n scalars of Fr in Montgomery form (32 bytes each): the key
// points of the insecure development setup (fixed_base.cu).
cuzk_status fixed_base_mul(Device* device, cuzk_curve curve, cuzk_group group, const uint8_t* scalars_mont, size_t n,
                           uint8_t* out_key_encoding, std::string& err);

cuzk_status host_alloc_pinned(size_t bytes, int device, void** out, std::string& err);
cuzk_status host_free_pinned(void* p, std::string& err);
cuzk_status host_register(void* p, size_t bytes, std::string& err);
cuzk_status host_unregister(void* p, std::string& err);
// the library's own page-locked allocations (see cuzk_staging_stats)
void staging_stats(uint64_t* bytes, uint64_t* allocations, uint64_t* ns);

}  // namespace cuzk::cuda
