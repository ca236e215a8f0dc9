// Two sources of randomness, kept apart on purpose:
//  - SeededRng: a fast deterministic generator (xoshiro256** seeded through splitmix64) for
//    synthetic circuits, so that a (profile, size, seed) triple always names the same circuit;
//  - random_nonzero: the OS CSPRNG (util/os_random.hpp), the only source of toxic waste.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "field/random.hpp"

namespace cuzk::setup {

class SeededRng {
 public:
  explicit SeededRng(uint64_t seed) {
    for (auto& w : s_) {  // splitmix64: spreads any seed (0 included) over the whole state
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n), n > 0 (Lemire's multiply-shift; the bias is below 2^-32 for n < 2^32).
  uint32_t below(uint32_t n) { return (uint32_t)(((next() >> 32) * (uint64_t)n) >> 32); }
  // A uniform element of Fr (Montgomery form), by rejection below r.
  template <class Fr>
  Fr field() {
    for (;;) {
      uint64_t v[Fr::N];
      for (auto& limb : v) limb = next();
      cuzk::field::mask_to_bits<Fr>(v);
      Fr raw = Fr::from_raw(v);
      if (raw.is_canonical()) return raw.to_mont();
    }
  }
  template <class Fr>
  Fr nonzero_field() {
    for (;;) {
      Fr x = field<Fr>();
      if (!x.is_zero()) return x;
    }
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// A uniform nonzero element of Fr (Montgomery form) from the OS CSPRNG.
template <class Fr>
Fr random_nonzero() {
  for (;;) {
    Fr raw;
    std::string err;
    if (!cuzk::field::os_random_element(raw, err)) throw std::runtime_error(err);
    if (!raw.is_zero()) return raw.to_mont();
  }
}

}  // namespace cuzk::setup
