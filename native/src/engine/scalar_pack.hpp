// Scalars in a compact form for the link: a witness is mostly 0s, 1s and small values (bits and
// bytes of hash gadgets), so a GPU engine that reads a proof's scalars again per chunk (a group
// of proofs sharing a streamed read) sends this instead of 32 bytes a scalar. Per scalar a 2-bit
// class (0: zero, 1: one, 2: a value below 2^32, 3: anything else); the class-2 values as 32-bit
// words and the class-3 scalars' 32 bytes as they are, each in index order; per block of kBlock
// scalars the counts of class-2 and class-3 scalars before it. Decoding gives the same 32 bytes
// (standard form, little-endian) as the scalars packed, whatever they are.
//
// A range of scalars [lo, hi] travels as one buffer (PackedRange: the classes of its blocks,
// their counts, its class-2 and class-3 values); decode_packed reads scalar i from it, on the host
// (tests) and on the device alike.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "util/hd.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::engine {

constexpr uint32_t kPackBlock = 128;  // scalars a block: 32 bytes of classes, two counts

// Where the pieces of a range lie in its buffer (byte offsets; each piece 16-byte aligned).
struct PackedRange {
  uint64_t first_block = 0, blocks = 0;  // the blocks covering [lo, hi]
  uint64_t classes = 0;                  // blocks * kPackBlock / 4 bytes
  uint64_t counts = 0;                   // blocks + 1 pairs (class-2, class-3 before each block), u32
  uint64_t small = 0, small_count = 0;   // class-2 values, u32
  uint64_t full = 0, full_count = 0;     // class-3 scalars, 32 bytes each
  uint64_t bytes = 0;
};

class PackedScalars {
 public:
  // Packs n 32-byte scalars on the pool. Returns false (and holds nothing) when the packed form
  // would take more than max_bytes.
  bool pack(const uint8_t* scalars, uint64_t n, ThreadPool& pool, uint64_t max_bytes);
  void clear();
  uint64_t size() const { return n_; }
  uint64_t bytes() const {
    return classes_.size() + counts_.size() * 4 + small_.size() * 4 + full_.size();
  }
  // The layout of scalars [lo, hi] (lo <= hi < size()) as one buffer, and that buffer written.
  PackedRange range(uint64_t lo, uint64_t hi) const;
  void write(const PackedRange& r, uint8_t* out) const;

 private:
  uint64_t n_ = 0;
  std::vector<uint8_t> classes_;   // whole blocks
  std::vector<uint32_t> counts_;   // (class 2, class 3) before each block, and past the last
  std::vector<uint32_t> small_;
  std::vector<uint8_t> full_;
};

// Scalar i (absolute index, within the range) of a range buffer `buf` laid out as r, written as
// 32 bytes (eight little-endian words) to out.
CUZK_HD void decode_packed(const uint8_t* buf, const PackedRange& r, uint64_t i, uint32_t out[8]) {
  const uint64_t local = i - r.first_block * kPackBlock;
  const uint64_t block = local / kPackBlock, within = local % kPackBlock;
  const uint32_t* words = reinterpret_cast<const uint32_t*>(buf + r.classes) + block * (kPackBlock / 16);
  const uint32_t cls = (words[within / 16] >> (2 * (within % 16))) & 3u;
  for (int k = 0; k < 8; k++) out[k] = 0;
  if (cls == 0) return;
  if (cls == 1) {
    out[0] = 1;
    return;
  }
  // Its rank among the scalars of its class in the block: 2-bit fields before it, counted by
  // masks (low bit of each field: 0x5555...).
  uint32_t rank = 0;
  for (uint64_t w = 0; w <= within / 16; w++) {
    uint32_t x = words[w];
    const uint32_t lo = x & 0x55555555u, hi = (x >> 1) & 0x55555555u;
    uint32_t match = cls == 3 ? (lo & hi) : (hi & ~lo);
    if (w == within / 16) match &= (uint32_t)((1ull << (2 * (within % 16))) - 1);
#if defined(__CUDA_ARCH__)
    rank += __popc(match);
#else
    rank += (uint32_t)__builtin_popcount(match);
#endif
  }
  const uint32_t* counts = reinterpret_cast<const uint32_t*>(buf + r.counts);
  if (cls == 2) {
    const uint32_t at = counts[2 * block] - counts[0] + rank;
    out[0] = reinterpret_cast<const uint32_t*>(buf + r.small)[at];
  } else {
    const uint32_t at = counts[2 * block + 1] - counts[1] + rank;
    const uint32_t* v = reinterpret_cast<const uint32_t*>(buf + r.full) + 8ull * at;
    for (int k = 0; k < 8; k++) out[k] = v[k];
  }
}

}  // namespace cuzk::engine
