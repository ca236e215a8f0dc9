// What this machine has, for the bounds on caller-chosen sizes: online CPUs (the most threads a
// caller may ask for) and physical memory (the most bytes one buffer or input file may take).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <thread>

namespace cuzk {

inline unsigned online_cpus() { return std::max(1u, std::thread::hardware_concurrency()); }

inline uint64_t physical_memory() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
}

}  // namespace cuzk
