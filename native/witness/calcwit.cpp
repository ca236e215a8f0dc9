// The per-computation state of circom's generated code (circom/calcwit.hpp): signal values and
// component slots, made fresh for each computation over the circuit's shared tables.
#include "circom/calcwit.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <new>
#include <stdexcept>
#include <system_error>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older C headers lack the name
#endif

namespace {

constexpr size_t kHugePage = size_t(2) << 20;

size_t huge_pages_for(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

// `bytes` (a multiple of kHugePage) of zeroed memory aligned to kHugePage, advised onto huge pages.
void* map_huge(size_t bytes) {
  void* mapped = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = (uintptr_t)mapped, aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(mapped, aligned - start);
  if (const size_t tail = start + bytes + kHugePage - (aligned + bytes)) munmap((void*)(aligned + bytes), tail);
  madvise((void*)aligned, bytes, MADV_HUGEPAGE);  // advice: without it (or without THP) 4 KiB pages
  return (void*)aligned;
}

}  // namespace

CalcWitMemory::CalcWitMemory(size_t n_signals, size_t n_components)
    : n_components_(n_components),
      signal_bytes_(huge_pages_for(n_signals * sizeof(FrElement))),
      component_bytes_(huge_pages_for(n_components * sizeof(Circom_Component))) {
  signals_ = static_cast<FrElement*>(map_huge(signal_bytes_));
  try {
    components_ = static_cast<Circom_Component*>(map_huge(component_bytes_));
  } catch (...) {
    munmap(signals_, signal_bytes_);
    throw;
  }
  for (size_t i = 0; i < n_components; i++) new (&components_[i]) Circom_Component();
}

CalcWitMemory::~CalcWitMemory() {
  for (size_t i = 0; i < n_components_; i++) components_[i].~Circom_Component();
  munmap(components_, component_bytes_);
  munmap(signals_, signal_bytes_);
}

Prefault::Prefault(std::vector<std::pair<void*, size_t>> ranges) {
  constexpr size_t kWorthAThread = size_t(4) << 20;
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  std::vector<std::pair<void*, size_t>> pages;  // whole pages inside each range (madvise's unit)
  size_t total = 0;
  for (const auto& [start, bytes] : ranges) {
    const uintptr_t first = ((uintptr_t)start + page - 1) / page * page, end = ((uintptr_t)start + bytes) / page * page;
    if (start == nullptr || end <= first) continue;
    pages.emplace_back((void*)first, end - first);
    total += end - first;
  }
  if (total < kWorthAThread) return;
  try {
    thread_ = std::thread([pages = std::move(pages)] {
      for (const auto& [start, bytes] : pages) madvise(start, bytes, MADV_POPULATE_WRITE);  // a refusal only costs the faults
    });
  } catch (const std::system_error&) {
    // No thread to spare: the computation faults its pages itself.
  }
}

Prefault::~Prefault() {
  if (thread_.joinable()) thread_.join();
}

Circom_CalcWit::Circom_CalcWit(const Circom_Circuit& circuit, CalcWitMemory& memory, int max_threads)
    : signalValues(memory.signals()),
      componentMemory(memory.components()),
      circuitConstants(circuit.circuitConstants),
      templateInsId2IOSignalInfo(circuit.templateInsId2IOSignalInfo),
      busInsId2FieldInfo(circuit.busInsId2FieldInfo),
      maxThread(max_threads) {
  // circuit.cpp frees each component's arrays when it is done but leaves the pointers: clear them
  // all, so that no array of an earlier computation is freed twice. (A computation stopped by a
  // failed assert leaves those of the components still running allocated: a few bytes each.)
  for (uint i = 0, n = get_number_of_components(); i < n; i++) {
    Circom_Component& c = componentMemory[i];
    c.subcomponents = nullptr;
    c.subcomponentsParallel = nullptr;
    c.outputIsSet = nullptr;
    c.mutexes = nullptr;
    c.cvs = nullptr;
    c.sbct = nullptr;
  }
  // Signal 0 is the constant 1.
  signalValues[0].shortVal = 1;
  signalValues[0].type = Fr_SHORT;
}

std::string Circom_CalcWit::getTrace(u64 id_cmp) {
  std::string trace = componentMemory[id_cmp].componentName;
  for (u64 id = id_cmp; id != 0;) {
    id = componentMemory[id].idFather;
    trace = componentMemory[id].componentName + "." + trace;
  }
  return trace;
}

std::string Circom_CalcWit::generate_position_array(uint* dimensions, uint size_dimensions, uint index) {
  // "[i][j]..." written back to front into one string (one per component created: no temporaries).
  std::string positions(12 * (size_t)size_dimensions, ' ');  // "[4294967295]" at most each
  size_t at = positions.size();
  for (uint i = 0; i < size_dimensions; i++) {
    uint last = index % dimensions[size_dimensions - 1 - i];
    index /= dimensions[size_dimensions - 1 - i];
    positions[--at] = ']';
    do positions[--at] = (char)('0' + last % 10);
    while ((last /= 10) != 0);
    positions[--at] = '[';
  }
  return positions.substr(at);
}

const FrElement* cuzk::witness::constant_image(const FrElement* constants, const u32* index, size_t n) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<FrElement[]>> images;
  std::unique_ptr<FrElement[]> image(new FrElement[n]);
  const uint size = get_size_of_constants();
  for (size_t i = 0; i < n; i++) {
    if (index[i] >= size) throw std::out_of_range("circuit.cpp copies constant " + std::to_string(index[i]) + " of " + std::to_string(size));
    image[i] = constants[index[i]];
  }
  std::lock_guard<std::mutex> lock(mutex);
  images.push_back(std::move(image));
  return images.back().get();
}
