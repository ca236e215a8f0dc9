// The native witness executable's input reader (native/witness/input_json.hpp) on any bytes, over
// BN254's r, for a circuit whose inputs are the committed fixtures' names (the seeds are their
// input.json files). A refusal must be an InputError with a message; an accepted text must give
// one name hash per member, values below r that add up to the table's total, and read back as
// the same bytes when written again as hex strings (another of the forms it takes).
#include <cstring>
#include <iostream>
#include <string>
#include <unordered_map>

#include "circom/circom.hpp"
#include "harness.hpp"
#include "input_json.hpp"

using namespace cuzk_fuzz;

// fr.cpp's calls out (entry.cpp's in a witness library): no input reaches them here.
void cuzk::witness::assert_failed(const char* condition) { throw AssertFailed{condition}; }
std::ostream& cuzk::witness::log() { return std::cerr; }

namespace {

// The hash input_json gives an ASCII name.
uint64_t hash_of(const char* name) { return cuzk::witness::fnv1a64(std::u16string(name, name + std::strlen(name))); }

const std::unordered_map<uint64_t, uint64_t>& sizes() {
  static const std::unordered_map<uint64_t, uint64_t> table = {
      {hash_of("x"), 1}, {hash_of("w"), 1}, {hash_of("a"), 1}, {hash_of("b"), 1}, {hash_of("v"), 15}, {hash_of("y"), 1},
  };
  return table;
}
constexpr uint64_t kTotal = 1 + 1 + 1 + 1 + 15 + 1;

// r of BN254, little-endian limbs.
constexpr uint64_t kR[4] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL};

bool below_r(const uint8_t* v) {
  uint64_t l[4];
  std::memcpy(l, v, 32);
  for (int i = 3; i >= 0; i--)
    if (l[i] != kR[i]) return l[i] < kR[i];
  return false;
}

std::string hex(const uint8_t* v) {
  static const char digits[] = "0123456789abcdef";
  std::string s = "\"0x";
  for (int i = 31; i >= 0; i--) {
    s += digits[v[i] >> 4];
    s += digits[v[i] & 15];
  }
  return s + "\"";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuzk::witness::EncodedInputs got;
  try {
    got = cuzk::witness::parse_input_json(reinterpret_cast<const char*>(data), size, sizes(), kTotal);
  } catch (const cuzk::witness::InputError& e) {
    if (e.message.empty()) die("parse_input_json refused an input without a message");
    return 0;
  }
  if (got.value_count != kTotal || got.values.size() != 32 * kTotal) die("accepted inputs do not add up to the table's total");
  for (size_t i = 0; i < got.value_count; i++)
    if (!below_r(got.values.data() + 32 * i)) die("an accepted value is not below r");
  // The same values again, written as hex strings under names with the same hashes (the table's).
  static const char* names[] = {"x", "w", "a", "b", "v", "y"};
  std::unordered_map<uint64_t, const char*> name_of;
  for (const char* n : names) name_of[hash_of(n)] = n;
  std::string text = "{";
  size_t at = 0;
  for (size_t m = 0; m < got.hashes.size(); m++) {
    const uint64_t count = sizes().at(got.hashes[m]);
    text += std::string(m ? "," : "") + "\"" + name_of.at(got.hashes[m]) + "\":[";
    for (uint64_t j = 0; j < count; j++, at++) text += (j ? "," : "") + hex(got.values.data() + 32 * at);
    text += "]";
  }
  text += "}";
  cuzk::witness::EncodedInputs again;
  try {
    again = cuzk::witness::parse_input_json(text.data(), text.size(), sizes(), kTotal);
  } catch (const cuzk::witness::InputError& e) {
    die("the accepted values written as hex were refused: " + e.message);
  }
  if (again.hashes != got.hashes || again.values != got.values) die("the accepted values written as hex read back differently");
  return 0;
}
