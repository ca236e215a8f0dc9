// Grow-only scratch arrays for the large transient buffers of the CPU kernels (MSM bucket trees,
// converted points, a/b/c evaluations), backed by transparent huge pages where the kernel offers
// them.
//
// Why: a one-shot prover process (the CLI) touches every scratch page for the first time during
// its only proof. On the VMs this runs on a 4 KiB first-touch fault costs ~5-10 us; a 2^14 BN254
// proof faulted ~11,500 pages (~45 MB) and its first proof took 280 ms against 120 ms warm
// (docs/perf-log.md). One 2 MiB huge-page fault replaces 512 of them. The buffers are kept for
// the next call (grow-only), as the kernels' callers expect.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

namespace cuzk {

// Memory for n trivially constructible T, left uninitialised; contents are not kept when it grows.
template <class T>
class ScratchArray {
  static_assert(std::is_trivially_destructible_v<T>, "scratch holds plain data only");

 public:
  ScratchArray() = default;
  ScratchArray(const ScratchArray&) = delete;
  ScratchArray& operator=(const ScratchArray&) = delete;
  ~ScratchArray() { release(); }

  // Room for at least n elements; returns the start.
  T* reserve(size_t n) {
    if (n > cap_) {
      release();
      size_t bytes = round_up(n * sizeof(T));
      map(bytes);
      cap_ = bytes / sizeof(T);
    }
    return data_;
  }

  T* data() const { return data_; }
  size_t capacity() const { return cap_; }
  T& operator[](size_t i) const { return data_[i]; }

 private:
  static constexpr size_t kHuge = size_t(2) << 20;
  // below this, huge pages would waste more than they save
  static constexpr size_t kHugeFrom = size_t(1) << 20;

  static size_t round_up(size_t bytes) {
    size_t unit = bytes >= kHugeFrom ? kHuge : 4096;
    return (bytes + unit - 1) / unit * unit;
  }

  void map(size_t bytes) {
    if (bytes < kHugeFrom) {
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      base_ = p;
      base_len_ = bytes;
      data_ = static_cast<T*>(p);
      return;
    }
    // Over-map by one huge page and trim, so the array starts on a 2 MiB boundary (a huge page
    // can only back an aligned 2 MiB range).
    size_t len = bytes + kHuge;
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    uintptr_t start = reinterpret_cast<uintptr_t>(p);
    uintptr_t aligned = (start + kHuge - 1) & ~(uintptr_t)(kHuge - 1);
    if (aligned > start) munmap(p, aligned - start);
    size_t tail = (start + len) - (aligned + bytes);
    if (tail) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
    base_ = reinterpret_cast<void*>(aligned);
    base_len_ = bytes;
#ifdef MADV_HUGEPAGE
    madvise(base_, bytes, MADV_HUGEPAGE);  // advisory: without THP this is plain memory
#endif
    data_ = reinterpret_cast<T*>(aligned);
  }

  void release() {
    if (base_) munmap(base_, base_len_);
    base_ = nullptr;
    base_len_ = 0;
    data_ = nullptr;
    cap_ = 0;
  }

  void* base_ = nullptr;
  size_t base_len_ = 0;
  T* data_ = nullptr;
  size_t cap_ = 0;
};

}  // namespace cuzk
