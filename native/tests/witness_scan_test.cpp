// The witness value scan (values < r) in chunks on a thread pool gives the serial scan's answer:
// the first value not below r, wherever the bad values lie (in one chunk, in several, at the
// edges of chunks, none), on pools of 1, 2 and 4 threads.
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.hpp"
#include "field/params.hpp"
#include "formats/zkey.hpp"
#include "prover/witness_check.hpp"
#include "util/thread_pool.hpp"

int main() {
  using cuzk::prover::first_value_not_below_r;
  // BLS12-381's r, little-endian bytes.
  static const uint8_t r[32] = {0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x5b, 0xfe,
                                0xff, 0x02, 0xa4, 0xbd, 0x53, 0x05, 0xd8, 0xa1, 0x09, 0x08, 0xd8,
                                0x39, 0x33, 0x48, 0x7d, 0x9d, 0x29, 0x53, 0xa7, 0xed, 0x73};
  const size_t n = (size_t)1 << 18, chunk = (size_t)1 << 16;
  cuzk::formats::ZkeyGroth16 key;
  key.r = r;
  key.n_vars = (uint32_t)n;
  std::vector<uint8_t> good(n * 32);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; i++) {
    for (int j = 0; j < 31; j++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      good[i * 32 + j] = (uint8_t)x;
    }
    good[i * 32 + 31] = (uint8_t)(x % 0x73);  // below r's top byte: every value < r
  }
  std::vector<std::vector<size_t>> cases = {
      {}, {0}, {n - 1}, {chunk - 1}, {chunk}, {3 * chunk + 5, chunk + 9}, {n - 1, 2 * chunk, 77}, {5, 6, 7}};
  cuzk::ThreadPool one(1), two(2), four(4);
  for (const auto& bad : cases) {
    std::vector<uint8_t> v = good;
    size_t expect = n;
    for (size_t i : bad) {
      std::memcpy(&v[i * 32], r, 32);  // r itself is not < r
      expect = std::min(expect, i);
    }
    CHECK(first_value_not_below_r(key, v.data(), n, nullptr) == expect);
    for (cuzk::ThreadPool* pool : {&one, &two, &four}) CHECK(first_value_not_below_r(key, v.data(), n, pool) == expect);
  }
  // A value just below r passes; r - 1 + 2^255 (top bit set) does not.
  std::vector<uint8_t> v = good;
  std::memcpy(&v[100 * 32], r, 32);
  v[100 * 32] = 0x00;  // r - 1
  v[chunk * 32 + 31] = 0xff;
  CHECK(first_value_not_below_r(key, v.data(), n, &two) == chunk);
  return cuzk_test::finish("witness_scan_test");
}
