// cuzk.h: host buffers. Every allocation is recorded so that callers (and the leak tests) can see
// the live count, and so that a pointer the library did not hand out is refused instead of freed.
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <unistd.h>

#include "abi/abi_util.hpp"
#include "cuda/backend.hpp"
#include "util/clock.hpp"
#include "util/machine.hpp"

using cuzk::abi::guarded;

namespace {

struct Allocation {
  size_t bytes;
  bool pinned;
};

struct Registry {
  std::mutex mutex;
  std::unordered_map<void*, Allocation> live;
  uint64_t live_bytes = 0, pinned_bytes = 0, total_pin_ns = 0;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

extern "C" {

CUZK_API cuzk_status cuzk_host_alloc(size_t bytes, uint32_t flags, int32_t device, void** out_ptr, uint32_t* out_flags,
                                     char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!out_ptr) { msg = "out_ptr is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    *out_ptr = nullptr;
    if (out_flags) *out_flags = 0;
    if (bytes == 0) { msg = "bytes is 0"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (flags & ~CUZK_HOST_PINNED) { msg = "unknown flags"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (device < 0) { msg = "device " + std::to_string(device) + " is negative (a GPU index is >= 0)"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (bytes > cuzk::physical_memory()) {
      msg = std::to_string(bytes) + " bytes is more than this machine's memory (" +
            std::to_string(cuzk::physical_memory()) + " bytes)";
      return CUZK_ERR_OUT_OF_MEMORY;
    }
    void* p = nullptr;
    bool pinned = false;
    uint64_t start = cuzk::now_ns();
    if ((flags & CUZK_HOST_PINNED) && cuzk::cuda::compiled_in()) {
      std::string cuda_msg;
      int count = 0;
      if (cuzk::cuda::device_count(&count, cuda_msg) == CUZK_OK && count > 0) {
        cuzk_status st = cuzk::cuda::host_alloc_pinned(bytes, device, &p, msg);
        if (st != CUZK_OK) return st;
        pinned = true;
      }
    }
    if (!p) {  // pageable, page-aligned: the documented fallback without a driver
      long page = sysconf(_SC_PAGESIZE);
      if (posix_memalign(&p, page > 0 ? (size_t)page : 4096, bytes) != 0) {
        msg = "could not allocate " + std::to_string(bytes) + " bytes of host memory";
        return CUZK_ERR_OUT_OF_MEMORY;
      }
    }
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    reg.live[p] = Allocation{bytes, pinned};
    reg.live_bytes += bytes;
    if (pinned) {
      reg.pinned_bytes += bytes;
      reg.total_pin_ns += cuzk::now_ns() - start;
    }
    *out_ptr = p;
    if (out_flags) *out_flags = pinned ? CUZK_HOST_IS_PINNED : 0;
    return CUZK_OK;
  });
}

CUZK_API cuzk_status cuzk_host_free(void* ptr, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!ptr) return CUZK_OK;
    Allocation a;
    {
      Registry& reg = registry();
      std::lock_guard<std::mutex> lock(reg.mutex);
      auto it = reg.live.find(ptr);
      if (it == reg.live.end()) { msg = "pointer was not allocated by cuzk_host_alloc (or was already freed)"; return CUZK_ERR_INVALID_ARGUMENT; }
      a = it->second;
      reg.live.erase(it);
      reg.live_bytes -= a.bytes;
      if (a.pinned) reg.pinned_bytes -= a.bytes;
    }
    if (a.pinned) return cuzk::cuda::host_free_pinned(ptr, msg);
    std::free(ptr);
    return CUZK_OK;
  });
}

CUZK_API cuzk_status cuzk_host_register(void* ptr, size_t bytes, uint64_t* out_ns, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (out_ns) *out_ns = 0;
    if (!ptr || bytes == 0) { msg = "ptr is NULL or bytes is 0"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (bytes > cuzk::physical_memory()) {
      msg = std::to_string(bytes) + " bytes is more than this machine's memory (" +
            std::to_string(cuzk::physical_memory()) + " bytes)";
      return CUZK_ERR_INVALID_ARGUMENT;  // no such buffer can exist
    }
    int count = 0;
    if (!cuzk::cuda::compiled_in() || cuzk::cuda::device_count(&count, msg) != CUZK_OK || count == 0) {
      msg = "page-locking needs a CUDA driver and device; none is usable here";
      return CUZK_ERR_NO_DEVICE;
    }
    uint64_t start = cuzk::now_ns();
    cuzk_status st = cuzk::cuda::host_register(ptr, bytes, msg);
    uint64_t took = cuzk::now_ns() - start;
    if (out_ns) *out_ns = took;
    if (st == CUZK_OK) {
      Registry& reg = registry();
      std::lock_guard<std::mutex> lock(reg.mutex);
      reg.total_pin_ns += took;
    }
    return st;
  });
}

CUZK_API cuzk_status cuzk_host_unregister(void* ptr, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!ptr) { msg = "ptr is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    return cuzk::cuda::host_unregister(ptr, msg);
  });
}

CUZK_API cuzk_status cuzk_host_stats(uint64_t* live_buffers, uint64_t* live_bytes, uint64_t* pinned_bytes,
                                     uint64_t* total_pin_ns) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (live_buffers) *live_buffers = reg.live.size();
  if (live_bytes) *live_bytes = reg.live_bytes;
  if (pinned_bytes) *pinned_bytes = reg.pinned_bytes;
  if (total_pin_ns) *total_pin_ns = reg.total_pin_ns;
  return CUZK_OK;
}

CUZK_API cuzk_status cuzk_staging_stats(uint64_t* pinned_bytes, uint64_t* allocations, uint64_t* alloc_ns) {
  uint64_t b = 0, a = 0, ns = 0;
  cuzk::cuda::staging_stats(&b, &a, &ns);
  if (pinned_bytes) *pinned_bytes = b;
  if (allocations) *allocations = a;
  if (alloc_ns) *alloc_ns = ns;
  return CUZK_OK;
}

}  // extern "C"
