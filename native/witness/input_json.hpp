// Circuit inputs from JSON text, read as circom_runtime reads them for the WASM generator (and as
// src/witness/inputs.ts does for the library): JSON.parse's grammar, each top-level key a signal
// name hashed with circom's fnv1a-64 over UTF-16 code units (a repeated key keeps its first place
// and its last value), its value flattened (nested arrays in order), each leaf taken as JavaScript's
// BigInt(leaf) reduced into [0, r): numbers as the double JSON.parse makes of them, strings with
// BigInt's own syntax (trimmed; decimal with a sign, 0x/0o/0b; empty is 0), true/false as 1/0.
// Names and value counts are checked against the circuit's input table here, so that errors name
// the signal. Used by the per-circuit witness executable (command.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace cuzk::witness {

// The inputs as cuzk_witness_compute takes them.
struct EncodedInputs {
  std::vector<uint64_t> hashes;  // one per name, in the text's order
  std::vector<uint8_t> values;   // 32 bytes a value (little-endian, standard form, < r), names in order
  size_t value_count = 0;
};

// A malformed text or an input the circuit cannot take: what() says which (and where).
struct InputError {
  std::string message;
};

// circom's hash of a signal name: fnv1a-64 over its UTF-16 code units (as circom_runtime hashes).
uint64_t fnv1a64(const std::u16string& name);

// Nesting deeper than this is an error (circuit inputs nest as deep as a signal has dimensions).
constexpr size_t kMaxInputDepth = 1024;

// Parses `text` for a circuit whose inputs are `sizes` (name hash -> value count), `total` values
// in all, over the prime r (4 little-endian limbs). Throws InputError.
EncodedInputs parse_input_json(const char* text, size_t length, const std::unordered_map<uint64_t, uint64_t>& sizes,
                               uint64_t total);

}  // namespace cuzk::witness
