// A witness (.wtns, circom/snarkjs; formats.md 2), checked and used in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuzk.h"
#include "formats/status.hpp"

namespace cuzk::formats {

struct Wtns {
  cuzk_curve curve = CUZK_CURVE_BN254;  // identified from the prime
  uint32_t n8 = 0;                      // bytes per value: 32
  const uint8_t* prime = nullptr;       // the scalar field r, n8 bytes LE
  uint32_t n_witness = 0;               // w[0] = 1 included
  const uint8_t* values = nullptr;      // n_witness values of n8 bytes, LE standard form, each < prime
};

// Versions 1 and 2 share this layout. CUZK_ERR_CURVE_MISMATCH for a prime other than the BN254 or
// BLS12-381 scalar field; CUZK_ERR_FORMAT for anything malformed, including a value >= prime.
// w[0] = 1 is a property of the circuit, not of the file, and is left to the prover's checks.
Status parse_wtns(const uint8_t* data, size_t size, Wtns& out, std::string& err);

// The same checks but the range of the values: for the witness check against a key
// (prover/witness_check.hpp), which reports a value >= r as the caller's argument error.
Status parse_wtns_layout(const uint8_t* data, size_t size, Wtns& out, std::string& err);

}  // namespace cuzk::formats
