// BLAKE2b-512 (RFC 7693), the hash of every snarkjs ceremony transcript. Besides the plain digest
// it can export its mid-stream state in the 216-byte "partialHash" layout that snarkjs stores in a
// .ptau contribution record (snarkjs misc.js toPartialHash, over @noble/hashes' internal fields).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ptau_dev {

class Blake2b {
 public:
  static constexpr size_t kOutBytes = 64;
  static constexpr size_t kPartialBytes = 216;

  Blake2b();
  void update(const uint8_t* data, size_t n);
  void final(uint8_t out[kOutBytes]);  // the object is spent afterwards

  // 128-byte pending block, then h[0..7] as 64 LE bytes, then u32 (bytes hashed - pending),
  // u32 0, u32 pending, zeros. snarkjs's fromPartialHash reads exactly these fields.
  void export_partial(uint8_t out[kPartialBytes]) const;

 private:
  void compress(bool last);

  uint64_t h_[8];
  uint8_t block_[128];
  size_t pending_ = 0;   // bytes in block_; a full block stays pending until more input arrives
  uint64_t counted_ = 0; // bytes already compressed
};

// One-shot helper.
void blake2b_512(const uint8_t* data, size_t n, uint8_t out[Blake2b::kOutBytes]);

}  // namespace ptau_dev
