// The development setup's fixed-base batch on a GPU: plain C++ (no CUDA types), declared for the
// door (backend.hpp) and implemented by fixed_base.cu (absent.cpp without CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuzk.h"

namespace cuzk::cuda {

struct DeviceContext;

// out[i] = scalars[i] * (the G1 or G2 generator) in key encoding (Montgomery LE affine, a zero
// product as all-zero bytes), for n scalars of Fr in Montgomery form (32 bytes each): the key
// points of the insecure development setup.
cuzk_status fixed_base_mul(DeviceContext* device, cuzk_curve curve, cuzk_group group, const uint8_t* scalars_mont,
                           size_t n, uint8_t* out_key_encoding, std::string& err);

}  // namespace cuzk::cuda
