// Helpers every C entry point uses: copying a message into the caller's buffer, and a guard that
// turns C++ exceptions into status codes so that nothing ever unwinds across the C boundary.
#pragma once

#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "cuzk.h"
#include "util/machine.hpp"
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

}  // namespace cuzk::abi
