#include "util/machine.hpp"

#include <cctype>
#include <cstdio>
#include <string>

namespace cuzk {
namespace {

// A decimal number at the start of `text` (after spaces), or UINT64_MAX.
uint64_t leading_number(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) i++;
  if (i == text.size() || !std::isdigit((unsigned char)text[i])) return UINT64_MAX;
  uint64_t value = 0;
  for (; i < text.size() && std::isdigit((unsigned char)text[i]); i++) {
    const uint64_t digit = uint64_t(text[i] - '0');
    if (value > (UINT64_MAX - digit) / 10) return UINT64_MAX;
    value = value * 10 + digit;
  }
  return value;
}

std::string read_small_file(const char* path) {
  std::string text;
  if (FILE* f = std::fopen(path, "r")) {
    char buf[4096];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() < (1u << 20)) text.append(buf, got);
    std::fclose(f);
  }
  return text;
}

// The number after `key` on the line of `text` that starts with it, or UINT64_MAX.
uint64_t keyed_number(std::string_view text, std::string_view key) {
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    if (line.substr(0, key.size()) == key) return leading_number(line.substr(key.size()));
    at = end + 1;
  }
  return UINT64_MAX;
}

}  // namespace

uint64_t meminfo_available_bytes(std::string_view meminfo) {
  const uint64_t kib = keyed_number(meminfo, "MemAvailable:");
  return kib == UINT64_MAX || kib > UINT64_MAX / 1024 ? UINT64_MAX : kib * 1024;
}

uint64_t cgroup_room_bytes(std::string_view memory_max, std::string_view memory_current, std::string_view memory_stat) {
  const uint64_t limit = leading_number(memory_max), used = leading_number(memory_current);
  if (limit == UINT64_MAX || used == UINT64_MAX) return UINT64_MAX;
  const uint64_t cache = keyed_number(memory_stat, "inactive_file ");
  const uint64_t held = cache == UINT64_MAX ? used : used - std::min(used, cache);
  return limit > held ? limit - held : 0;
}

uint64_t available_memory() {
  const uint64_t kernel = meminfo_available_bytes(read_small_file("/proc/meminfo"));
  const uint64_t cgroup = cgroup_room_bytes(read_small_file("/sys/fs/cgroup/memory.max"),
                                            read_small_file("/sys/fs/cgroup/memory.current"),
                                            read_small_file("/sys/fs/cgroup/memory.stat"));
  return std::min(kernel, cgroup);
}

uint64_t pinnable_bytes() {
  const uint64_t available = available_memory(), reserve = pinning_reserve();
  if (available == UINT64_MAX) return UINT64_MAX;
  return available > reserve ? available - reserve : 0;
}

std::string pinning_refusal(uint64_t bytes) {
  // A small allocation keeps as much again free, a large one the whole reserve: a machine short of
  // memory still pins a staging buffer.
  const uint64_t available = available_memory(), reserve = std::min(pinning_reserve(), bytes);
  if (available == UINT64_MAX || (available > reserve && bytes <= available - reserve)) return "";
  const auto gib = [](uint64_t b) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", double(b) / double(uint64_t(1) << 30));
    return std::string(text);
  };
  return "page-locking " + gib(bytes) + " of host memory would leave less than the reserve of " + gib(reserve) +
         " (the allocation's size, at most the larger of 1 GiB and 1/32 of physical memory) of the " + gib(available) + " available";
}

}  // namespace cuzk
