// What this machine has, for the bounds on caller-chosen sizes: online CPUs (the most threads a
// caller may ask for) and physical memory (the most bytes one buffer or input file may take), and
// the memory still available (what page-locked allocations may take without inviting the kernel's
// OOM killer: pinned pages cannot be swapped out).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

namespace cuzk {

inline unsigned online_cpus() { return std::max(1u, std::thread::hardware_concurrency()); }

inline uint64_t physical_memory() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
}

// Bytes that can still be taken without pushing other memory out: the kernel's MemAvailable and,
// inside a cgroup with a memory limit (a container), the limit less its use; the smaller.
// UINT64_MAX where neither can be read.
uint64_t available_memory();

// The parts of available_memory, from the text of /proc/meminfo and of the cgroup's memory.max,
// memory.current and memory.stat files (the cgroup's inactive file pages count as room: the
// kernel reclaims them first): UINT64_MAX where the text does not say ("max", absent, malformed).
uint64_t meminfo_available_bytes(std::string_view meminfo);
uint64_t cgroup_room_bytes(std::string_view memory_max, std::string_view memory_current, std::string_view memory_stat);

// Bytes kept free beside a large page-locked allocation: 1/32 of physical memory, at least 1 GiB,
// so that the process's pageable memory and the rest of the machine still have room (a smaller
// allocation keeps its own size free).
inline uint64_t pinning_reserve() { return std::max<uint64_t>(uint64_t(1) << 30, physical_memory() / 32); }

// Bytes of page-locked memory that can be taken now beside the whole reserve (0 when none;
// UINT64_MAX where the available memory cannot be read).
uint64_t pinnable_bytes();

// Why `bytes` more of page-locked memory cannot be taken now (naming what is available and the
// reserve), or "" when they can.
std::string pinning_refusal(uint64_t bytes);
inline bool pinnable(uint64_t bytes) { return pinning_refusal(bytes).empty(); }

}  // namespace cuzk
