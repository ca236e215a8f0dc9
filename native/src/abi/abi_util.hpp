// Helpers every C entry point uses: copying a message into the caller's buffer, and a guard that
// turns C++ exceptions into status codes so that nothing ever unwinds across the C boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "cuzk.h"
#include "util/machine.hpp"
#include "util/progress.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::abi {

inline void copy_message(char* err, size_t cap, const std::string& msg) {
  if (!err || cap == 0) return;
  size_t n = msg.size() < cap - 1 ? msg.size() : cap - 1;
  std::memcpy(err, msg.data(), n);
  err[n] = '\0';
}

// Runs body(std::string& msg) -> cuzk_status; reports its message (or the exception's) to err.
template <class Body>
cuzk_status guarded(char* err, size_t cap, Body&& body) {
  std::string msg;
  cuzk_status st;
  try {
    st = body(msg);
  } catch (const std::bad_alloc&) {
    st = CUZK_ERR_OUT_OF_MEMORY;
    msg = "out of host memory";
  } catch (const std::exception& e) {
    st = CUZK_ERR_INTERNAL;
    msg = std::string("internal error: ") + e.what();
  } catch (...) {
    st = CUZK_ERR_INTERNAL;
    msg = "internal error (unknown exception)";
  }
  if (st == CUZK_OK) copy_message(err, cap, "");
  else copy_message(err, cap, msg.empty() ? std::string(cuzk_status_name(st)) : msg);
  return st;
}

// A thread pool of the size a caller chose (cpu_threads > 0): at most the machine's online CPUs
// (cuzk_library_info.cpu_threads), and every thread really started.
// A key or context may be released only once no prover made from it remains: says which, and how many.
inline bool still_used(size_t provers, const char* what, std::string& msg) {
  if (provers == 0) return false;
  msg = std::string("the ") + what + " is still used by " + std::to_string(provers) + " prover(s): destroy them first";
  return true;
}

inline cuzk_status make_thread_pool(uint32_t cpu_threads, std::unique_ptr<ThreadPool>* out, std::string& msg) {
  if (cpu_threads > online_cpus()) {
    msg = "cpu_threads " + std::to_string(cpu_threads) + " exceeds this machine's " + std::to_string(online_cpus()) +
          " online CPUs (the limit; 0 uses them all)";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  std::string refused;
  *out = ThreadPool::create(cpu_threads, refused);
  if (!*out) {
    msg = "could not start " + std::to_string(cpu_threads) + " CPU threads: " + refused;
    return CUZK_ERR_OUT_OF_MEMORY;
  }
  return CUZK_OK;
}

// The caller's cuzk_progress, checked: NULL, or struct_size >= 32 and 8-byte aligned (its 64-bit
// counters are updated atomically).
inline cuzk_status checked_progress(cuzk_progress* p, Progress* out, std::string& msg) {
  static_assert(sizeof(cuzk_progress) == 32 && offsetof(cuzk_progress, done) == 16, "cuzk_progress layout");
  if (p && (reinterpret_cast<uintptr_t>(p) % 8 != 0 || p->struct_size < sizeof(cuzk_progress))) {
    msg = "progress must be 8-byte aligned with struct_size >= " + std::to_string(sizeof(cuzk_progress)) +
          " (sizeof(cuzk_progress))";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  *out = Progress(p);
  return CUZK_OK;
}

}  // namespace cuzk::abi
