// cuzk.h: library and device queries, status names, and the layout checks of the public structs.
#include <cstddef>
#include <cstring>
#include <thread>

#include "abi/abi_util.hpp"
#include "cuda/backend.hpp"
#include "util/machine.hpp"

#ifndef CUZK_VERSION_STRING
#define CUZK_VERSION_STRING "0.0.0"
#endif

// The TypeScript struct tables mirror these offsets; the TS tests check them against the header.
static_assert(sizeof(cuzk_interval) == 16, "cuzk_interval layout");
static_assert(sizeof(cuzk_timings) == 408, "cuzk_timings layout");
static_assert(offsetof(cuzk_timings, total_ns) == 16 && offsetof(cuzk_timings, phases) == 24, "cuzk_timings layout");
static_assert(sizeof(cuzk_library_info) == 64 && offsetof(cuzk_library_info, version) == 32, "cuzk_library_info layout");
static_assert(sizeof(cuzk_device_info) == 296 && offsetof(cuzk_device_info, total_memory) == 24 &&
                  offsetof(cuzk_device_info, name) == 40, "cuzk_device_info layout");
static_assert(sizeof(cuzk_key_info) == 64 && offsetof(cuzk_key_info, file_bytes) == 48, "cuzk_key_info layout");
static_assert(CUZK_PHASE_COUNT <= CUZK_PHASE_SLOTS, "phase slots");

using cuzk::abi::guarded;

extern "C" {

CUZK_API uint32_t cuzk_abi_version(void) { return CUZK_ABI_VERSION; }

CUZK_API const char* cuzk_status_name(int32_t status) {
  switch (status) {
    case CUZK_OK: return "OK";
    case CUZK_ERR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case CUZK_ERR_IO: return "IO";
    case CUZK_ERR_FORMAT: return "FORMAT";
    case CUZK_ERR_CURVE_MISMATCH: return "CURVE_MISMATCH";
    case CUZK_ERR_WITNESS_LENGTH: return "WITNESS_LENGTH";
    case CUZK_ERR_UNSATISFIED: return "UNSATISFIED";
    case CUZK_ERR_SHORT_BUFFER: return "SHORT_BUFFER";
    case CUZK_ERR_UNSUPPORTED: return "UNSUPPORTED";
    case CUZK_ERR_NO_DEVICE: return "NO_DEVICE";
    case CUZK_ERR_DEVICE: return "DEVICE";
    case CUZK_ERR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case CUZK_ERR_BUSY: return "BUSY";
    case CUZK_ERR_SELF_CHECK: return "SELF_CHECK";
    case CUZK_ERR_INTERNAL: return "INTERNAL";
    case CUZK_ERR_CANCELLED: return "CANCELLED";
    default: return "UNKNOWN_STATUS";
  }
}

CUZK_API cuzk_status cuzk_library_info_get(cuzk_library_info* out, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!out) { msg = "out is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    std::memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->abi_version = CUZK_ABI_VERSION;
    out->backends = CUZK_HAS_CPU | (cuzk::cuda::compiled_in() ? CUZK_HAS_CUDA : 0);
    out->curves = CUZK_HAS_BN254 | CUZK_HAS_BLS12_381;
    out->cpu_threads = cuzk::online_cpus();  // the limit on cpu_threads, and the shared pool's size
    int devices = 0;
    std::string ignored;
    if (cuzk::cuda::compiled_in() && cuzk::cuda::device_count(&devices, ignored) == CUZK_OK)
      out->cuda_device_count = (uint32_t)devices;
    out->cuda_runtime_version = (uint32_t)cuzk::cuda::runtime_version();
    out->cuda_driver_version = (uint32_t)cuzk::cuda::driver_version();
    std::strncpy(out->version, CUZK_VERSION_STRING, sizeof out->version - 1);
    return CUZK_OK;
  });
}

CUZK_API cuzk_status cuzk_device_info_get(int32_t index, cuzk_device_info* out, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!out) { msg = "out is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    std::memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->index = index;
    return cuzk::cuda::device_info(index, out, msg);
  });
}

}  // extern "C"
