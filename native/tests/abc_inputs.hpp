// Inputs for CUZK_INPUT_ABC in tests: a, b, c computed from the .r1cs (independently of the key's
// coefficient section), and a .wtns file's values as a raw witness.
#pragma once
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "curve/curves.hpp"
#include "formats/r1cs.hpp"
#include "formats/wtns.hpp"

namespace cuzk_test {

// a, b, c rows for CUZK_INPUT_ABC, computed here from the .r1cs (independently of the key's
// coefficient section): the constraint rows, then snarkjs's input rows a = w[i].
template <class C>
void abc_from_r1cs(const std::string& r1cs_path, const uint8_t* w, size_t domain, std::vector<uint8_t>& a,
                   std::vector<uint8_t>& b, std::vector<uint8_t>& c, uint32_t n_public) {
  using Fr = typename C::Fr;
  std::ifstream file(r1cs_path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  cuzk::formats::R1cs r1cs;
  std::string e;
  cuzk::formats::parse_r1cs(bytes.data(), bytes.size(), r1cs, e);
  a.assign(domain * 32, 0);
  b.assign(domain * 32, 0);
  c.assign(domain * 32, 0);
  std::vector<uint8_t>* out[3] = {&a, &b, &c};
  for (uint32_t i = 0; i < r1cs.n_constraints; i++)
    for (uint32_t m = 0; m < 3; m++) {
      Fr acc = Fr::zero();
      for (auto t : r1cs.lc(i, m)) acc += Fr::from_bytes_std(t.value) * Fr::from_bytes_std(w + (size_t)t.wire * 32);
      acc.to_bytes_std(&(*out[m])[(size_t)i * 32]);
    }
  for (uint32_t s = 0; s <= n_public; s++) std::memcpy(&a[((size_t)r1cs.n_constraints + s) * 32], w + (size_t)s * 32, 32);
}

// The values of a .wtns file (n_witness x 32 bytes).
inline std::vector<uint8_t> raw_witness(const std::vector<uint8_t>& wtns) {
  cuzk::formats::Wtns w;
  std::string e;
  if (cuzk::formats::parse_wtns(wtns.data(), wtns.size(), w, e) != CUZK_OK) return {};
  return std::vector<uint8_t>(w.values, w.values + (size_t)w.n_witness * 32);
}

}  // namespace cuzk_test
