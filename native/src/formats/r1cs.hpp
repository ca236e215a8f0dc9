// A circuit's constraint system (.r1cs, circom; formats.md 3), checked and used in place. The
// constraints section is walked once at parse time: every term is checked and the offset of every
// constraint recorded, so that witnesses can later be checked constraint by constraint in parallel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cuzk.h"
#include "formats/byte_reader.hpp"
#include "formats/status.hpp"

namespace cuzk::formats {

struct R1csTerm {
  uint32_t wire;
  const uint8_t* value;  // n8 bytes LE, standard form, < prime
};

// One linear combination as stored: n_terms records of {u32 wire, n8-byte value}. Only valid over
// bytes parse_r1cs has checked.
class LinearCombination {
 public:
  class Iterator {
   public:
    Iterator(const uint8_t* p, uint32_t n8) : p_(p), n8_(n8) {}
    R1csTerm operator*() const { return R1csTerm{load_u32_le(p_), p_ + 4}; }
    Iterator& operator++() {
      p_ += 4 + static_cast<uint64_t>(n8_);
      return *this;
    }
    bool operator!=(const Iterator& other) const { return p_ != other.p_; }

   private:
    const uint8_t* p_;
    uint32_t n8_;
  };

  LinearCombination(const uint8_t* terms, uint32_t n_terms, uint32_t n8) : terms_(terms), n_terms_(n_terms), n8_(n8) {}

  uint32_t size() const { return n_terms_; }
  const uint8_t* data() const { return terms_; }  // the first term, just after the u32 count
  uint64_t term_bytes() const { return 4ull + n8_; }
  R1csTerm term(uint32_t i) const {
    const uint8_t* p = terms_ + i * term_bytes();
    return R1csTerm{load_u32_le(p), p + 4};
  }
  Iterator begin() const { return Iterator(terms_, n8_); }
  Iterator end() const { return Iterator(terms_ + n_terms_ * term_bytes(), n8_); }

 private:
  const uint8_t* terms_;
  uint32_t n_terms_;
  uint32_t n8_;
};

enum R1csMatrix : uint32_t { kMatrixA = 0, kMatrixB = 1, kMatrixC = 2 };

struct R1cs {
  cuzk_curve curve = CUZK_CURVE_BN254;  // identified from the prime
  uint32_t n8 = 0;                      // 32
  const uint8_t* prime = nullptr;       // the scalar field r, n8 bytes LE
  uint32_t n_wires = 0;                 // = the zkey's n_vars, wire 0 = 1 included
  uint32_t n_pub_out = 0;
  uint32_t n_pub_in = 0;
  uint32_t n_prv_in = 0;
  uint64_t n_labels = 0;
  uint32_t n_constraints = 0;

  const uint8_t* constraints = nullptr;  // the constraints section
  uint64_t constraints_size = 0;
  std::vector<uint64_t> constraint_offsets;  // n_constraints entries, from `constraints`
  uint64_t n_terms[3] = {0, 0, 0};           // terms in A, B and C over all constraints
  const uint8_t* wire_labels = nullptr;      // section 3: n_wires u64 LE label ids, or nullptr if absent

  uint32_t n_public() const { return n_pub_out + n_pub_in; }

  // The terms of constraint i (< n_constraints) in matrix m (kMatrixA/B/C).
  LinearCombination lc(uint32_t constraint, uint32_t matrix) const {
    const uint8_t* p = constraints + constraint_offsets[constraint];
    for (uint32_t m = 0; m < matrix; ++m) p += 4 + load_u32_le(p) * (4ull + n8);
    return LinearCombination(p + 4, load_u32_le(p), n8);
  }
};

// Checks a whole .r1cs. CUZK_ERR_UNSUPPORTED for custom gates (sections 4/5, PLONK only);
// CUZK_ERR_CURVE_MISMATCH for a prime other than the BN254 or BLS12-381 scalar field;
// CUZK_ERR_FORMAT for anything malformed (bounds, a wire >= n_wires, a value >= prime, a
// constraints section that is not consumed exactly).
Status parse_r1cs(const uint8_t* data, size_t size, R1cs& out, std::string& err);

}  // namespace cuzk::formats
