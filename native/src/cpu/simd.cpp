#include "cpu/simd.hpp"

#include <atomic>

#include "cpu/ifma.hpp"

namespace cuzk::cpu {

namespace {
std::atomic<int> g_simd{-1};  // -1: not decided yet
}

bool simd_available() {
#ifdef CUZK_HAVE_IFMA
  return ifma::cpu_has_ifma();
#else
  return false;
#endif
}

void set_simd(bool on) { g_simd.store(on && simd_available() ? 1 : 0); }

bool simd_active() {
  int v = g_simd.load(std::memory_order_relaxed);
  if (v < 0) {
    v = simd_available() ? 1 : 0;
    g_simd.store(v);
  }
  return v == 1;
}

}  // namespace cuzk::cpu
