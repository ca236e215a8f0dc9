// Helpers every C entry point uses: copying a message into the caller's buffer, and a guard that
// turns C++ exceptions into status codes so that nothing ever unwinds across the C boundary.
#pragma once

#include <cstring>
#include <new>
#include <string>

#include "cuzk.h"

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

}  // namespace cuzk::abi
