// Uniform field elements by rejection: draw the field's bit width at random until the value is
// below the modulus (a few draws at most: every supported modulus exceeds half its bit range).
#pragma once

#include <cstdint>
#include <string>

#include "util/os_random.hpp"

namespace cuzk::field {

// Clears the bits of v (Fr::N limbs) above the modulus's bit length.
template <class Fr>
void mask_to_bits(uint64_t* v) {
  const int top_bits = Fr::Params::BITS - 64 * (Fr::N - 1);
  if (top_bits < 64) v[Fr::N - 1] &= ((uint64_t)1 << top_bits) - 1;
}

// A uniform element of Fr from the OS CSPRNG, in standard (non-Montgomery) form.
template <class Fr>
bool os_random_element(Fr& out, std::string& err) {
  for (int attempt = 0; attempt < 1000; attempt++) {
    uint64_t v[Fr::N];
    if (!os_random(v, sizeof v, err)) return false;
    mask_to_bits<Fr>(v);
    Fr raw = Fr::from_raw(v);
    if (raw.is_canonical()) {
      out = raw;
      return true;
    }
  }
  err = "could not draw a random field element";
  return false;
}

}  // namespace cuzk::field
