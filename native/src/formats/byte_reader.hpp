// Bounds-checked little-endian reads over untrusted bytes. Files are read where they lie, so
// fields may be unaligned: every read goes through bytes, never through a cast pointer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuzk::formats {

inline uint32_t load_u32_le(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

inline uint64_t load_u64_le(const uint8_t* p) {
  return static_cast<uint64_t>(load_u32_le(p)) | static_cast<uint64_t>(load_u32_le(p + 4)) << 32;
}

// A cursor over [data, data + size). A failed read leaves the position unchanged and returns
// false, so callers can report what they were reading.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}

  uint64_t position() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }

  bool read_u32(uint32_t& out) {
    if (remaining() < 4) return false;
    out = load_u32_le(data_ + pos_);
    pos_ += 4;
    return true;
  }

  bool read_u64(uint64_t& out) {
    if (remaining() < 8) return false;
    out = load_u64_le(data_ + pos_);
    pos_ += 8;
    return true;
  }

  // Points `out` at the next n bytes and steps over them.
  bool take(uint64_t n, const uint8_t*& out) {
    if (remaining() < n) return false;
    out = data_ + pos_;
    pos_ += n;
    return true;
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

}  // namespace cuzk::formats
