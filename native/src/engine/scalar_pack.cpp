#include "engine/scalar_pack.hpp"

#include <algorithm>

namespace cuzk::engine {

namespace {

// 0: zero, 1: one, 2: below 2^32, 3: anything else.
uint32_t class_of(const uint8_t* s) {
  uint32_t low, rest = 0;
  std::memcpy(&low, s, 4);
  for (int k = 4; k < 32; k++) rest |= s[k];
  if (rest) return 3;
  return low == 0 ? 0 : low == 1 ? 1 : 2;
}

uint64_t align16(uint64_t b) { return (b + 15) & ~uint64_t(15); }

}  // namespace

void PackedScalars::clear() {
  n_ = 0;
  classes_.clear();
  counts_.clear();
  small_.clear();
  full_.clear();
}

bool PackedScalars::pack(const uint8_t* scalars, uint64_t n, ThreadPool& pool, uint64_t max_bytes) {
  clear();
  const uint64_t blocks = (n + kPackBlock - 1) / kPackBlock;
  std::vector<uint8_t> classes(blocks * (kPackBlock / 4), 0);
  std::vector<uint32_t> counts(2 * (blocks + 1), 0);
  // Pass 1: the classes and each block's counts.
  pool.parallel_range(blocks, [&](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; b++) {
      uint32_t small = 0, full = 0;
      const uint64_t end = std::min<uint64_t>((b + 1) * kPackBlock, n);
      for (uint64_t i = b * kPackBlock; i < end; i++) {
        const uint32_t c = class_of(scalars + i * 32);
        classes[i / 4] |= (uint8_t)(c << (2 * (i % 4)));
        small += c == 2;
        full += c == 3;
      }
      counts[2 * (b + 1)] = small;
      counts[2 * (b + 1) + 1] = full;
    }
  }, 64);
  // Counts before each block; give up once the packed form outgrows the limit.
  uint64_t small_total = 0, full_total = 0;
  for (uint64_t b = 0; b <= blocks; b++) {
    small_total += counts[2 * b];
    full_total += counts[2 * b + 1];
    counts[2 * b] = (uint32_t)small_total;
    counts[2 * b + 1] = (uint32_t)full_total;
  }
  const uint64_t bytes = classes.size() + counts.size() * 4 + small_total * 4 + full_total * 32;
  if (bytes > max_bytes || small_total >= (1ull << 32) || full_total >= (1ull << 32)) return false;
  small_.resize(small_total);
  full_.resize(full_total * 32);
  // Pass 2: the values, each block at its counts.
  pool.parallel_range(blocks, [&](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; b++) {
      uint64_t s = counts[2 * b], f = counts[2 * b + 1];
      const uint64_t end = std::min<uint64_t>((b + 1) * kPackBlock, n);
      for (uint64_t i = b * kPackBlock; i < end; i++) {
        const uint32_t c = (classes[i / 4] >> (2 * (i % 4))) & 3u;
        if (c == 2) std::memcpy(&small_[s++], scalars + i * 32, 4);
        else if (c == 3) std::memcpy(&full_[32 * f++], scalars + i * 32, 32);
      }
    }
  }, 64);
  n_ = n;
  classes_ = std::move(classes);
  counts_ = std::move(counts);
  return true;
}

PackedRange PackedScalars::range(uint64_t lo, uint64_t hi) const {
  PackedRange r;
  r.first_block = lo / kPackBlock;
  r.blocks = hi / kPackBlock - r.first_block + 1;
  const uint64_t b0 = r.first_block, b1 = b0 + r.blocks;
  r.small_count = counts_[2 * b1] - counts_[2 * b0];
  r.full_count = counts_[2 * b1 + 1] - counts_[2 * b0 + 1];
  r.classes = 0;
  r.counts = align16(r.blocks * (kPackBlock / 4));
  r.small = r.counts + align16((r.blocks + 1) * 8);
  r.full = r.small + align16(r.small_count * 4);
  r.bytes = r.full + r.full_count * 32;
  return r;
}

void PackedScalars::write(const PackedRange& r, uint8_t* out) const {
  const uint64_t b0 = r.first_block;
  std::memcpy(out + r.classes, classes_.data() + b0 * (kPackBlock / 4), r.blocks * (kPackBlock / 4));
  std::memcpy(out + r.counts, counts_.data() + 2 * b0, (r.blocks + 1) * 8);
  if (r.small_count) std::memcpy(out + r.small, small_.data() + counts_[2 * b0], r.small_count * 4);
  if (r.full_count) std::memcpy(out + r.full, full_.data() + 32ull * counts_[2 * b0 + 1], r.full_count * 32);
}

}  // namespace cuzk::engine
