// Monotonic nanoseconds: the clock every phase timing is taken with.
#pragma once
#include <chrono>
#include <cstdint>

namespace cuzk {
inline uint64_t now_ns() {
  return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace cuzk
