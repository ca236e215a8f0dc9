// The readers report with the public ABI's status codes, so the C ABI layer passes them through
// unchanged; the message goes to a caller-owned string.
#pragma once

#include <string>
#include <utility>

#include "cuzk.h"

namespace cuzk::formats {

using Status = cuzk_status;

// Sets `err` and returns `status`: keeps every failure path a one-liner.
inline Status fail(std::string& err, Status status, std::string message) {
  err = std::move(message);
  return status;
}

}  // namespace cuzk::formats
