#include "formats/r1cs.hpp"

#include "formats/binfile.hpp"
#include "formats/primes.hpp"

namespace cuzk::formats {
namespace {

enum R1csSection : uint32_t {
  kHeader = 1,
  kConstraints = 2,
  kWireLabels = 3,
  kCustomGatesList = 4,
  kCustomGatesUses = 5,
};

constexpr uint32_t kSupportedN8 = 32;  // both supported scalar fields
constexpr const char* kMatrixNames[3] = {"A", "B", "C"};

std::string str(uint64_t v) { return std::to_string(v); }

Status parse_header(const BinFile& bin, R1cs& r1cs, std::string& err) {
  auto header = bin.section(kHeader);
  if (!header) return fail(err, CUZK_ERR_FORMAT, "r1cs: section 1 (header) is missing");
  ByteReader reader(header->data, header->size);
  if (!reader.read_u32(r1cs.n8)) return fail(err, CUZK_ERR_FORMAT, "r1cs: section 1 (header) is truncated");
  if (r1cs.n8 != kSupportedN8) {
    const bool plausible = r1cs.n8 != 0 && r1cs.n8 % 8 == 0 && r1cs.n8 <= 64;
    return fail(err, plausible ? CUZK_ERR_CURVE_MISMATCH : CUZK_ERR_FORMAT,
                "r1cs: field elements of " + str(r1cs.n8) +
                    " bytes; only the 32-byte scalar fields of BN254 and BLS12-381 are supported "
                    "(circom --prime bn128 or bls12381)");
  }
  // n8, prime, nWires, nPubOut, nPubIn, nPrvIn, nLabels (u64), nConstraints
  const uint64_t expected = 4ull + r1cs.n8 + 16 + 8 + 4;
  if (header->size != expected) {
    return fail(err, CUZK_ERR_FORMAT,
                "r1cs: section 1 (header) has " + str(header->size) + " bytes, expected " + str(expected));
  }
  reader.take(r1cs.n8, r1cs.prime);
  reader.read_u32(r1cs.n_wires);
  reader.read_u32(r1cs.n_pub_out);
  reader.read_u32(r1cs.n_pub_in);
  reader.read_u32(r1cs.n_prv_in);
  reader.read_u64(r1cs.n_labels);
  reader.read_u32(r1cs.n_constraints);

  const CurvePrimes* curve = curve_by_scalar_prime(r1cs.prime, r1cs.n8);
  if (curve == nullptr) {
    return fail(err, CUZK_ERR_CURVE_MISMATCH,
                "r1cs: the circuit is over a " + str(bit_length_le(r1cs.prime, r1cs.n8)) +
                    "-bit prime that is not the scalar field of BN254 or BLS12-381 (circom --prime bn128 or "
                    "bls12381)");
  }
  r1cs.curve = curve->curve;

  const uint64_t named_wires = 1ull + r1cs.n_pub_out + r1cs.n_pub_in + r1cs.n_prv_in;
  if (named_wires > r1cs.n_wires) {
    return fail(err, CUZK_ERR_FORMAT,
                "r1cs: 1 + " + str(r1cs.n_pub_out) + " outputs + " + str(r1cs.n_pub_in) + " public inputs + " +
                    str(r1cs.n_prv_in) + " private inputs exceed the " + str(r1cs.n_wires) + " wires");
  }
  return CUZK_OK;
}

// Walks every constraint once: three linear combinations of {u32 n, n * {u32 wire, n8 value}}.
Status walk_constraints(const BinFile& bin, R1cs& r1cs, std::string& err) {
  auto section = bin.section(kConstraints);
  if (!section) return fail(err, CUZK_ERR_FORMAT, "r1cs: section 2 (constraints) is missing");
  // Each constraint takes at least its three counts: check before trusting the count to reserve.
  if (static_cast<uint64_t>(r1cs.n_constraints) * 12 > section->size) {
    return fail(err, CUZK_ERR_FORMAT,
                "r1cs: " + str(r1cs.n_constraints) + " constraints cannot fit in " + str(section->size) +
                    " bytes (each needs at least 12)");
  }
  r1cs.constraints = section->data;
  r1cs.constraints_size = section->size;
  r1cs.constraint_offsets.clear();
  r1cs.constraint_offsets.reserve(r1cs.n_constraints);

  const uint64_t term_bytes = 4ull + r1cs.n8;
  ByteReader reader(section->data, section->size);
  for (uint32_t c = 0; c < r1cs.n_constraints; ++c) {
    r1cs.constraint_offsets.push_back(reader.position());
    for (uint32_t m = 0; m < 3; ++m) {
      // Built only on failure: this loop runs for every term of circuits with millions of constraints.
      auto where = [&] { return "r1cs: constraint #" + str(c) + ", matrix " + kMatrixNames[m]; };
      uint32_t n_terms = 0;
      const uint8_t* terms = nullptr;
      if (!reader.read_u32(n_terms) || !reader.take(n_terms * term_bytes, terms)) {
        return fail(err, CUZK_ERR_FORMAT,
                    where() + ": runs past the end of the constraints section (" + str(section->size) + " bytes)");
      }
      for (uint32_t t = 0; t < n_terms; ++t) {
        const uint8_t* term = terms + t * term_bytes;
        const uint32_t wire = load_u32_le(term);
        if (wire >= r1cs.n_wires) {
          return fail(err, CUZK_ERR_FORMAT,
                      where() + ", term #" + str(t) + ": wire " + str(wire) + " but there are " + str(r1cs.n_wires));
        }
        if (!less_than_le(term + 4, r1cs.prime, r1cs.n8)) {
          return fail(err, CUZK_ERR_FORMAT, where() + ", term #" + str(t) + ": coefficient is not below the prime");
        }
      }
      r1cs.n_terms[m] += n_terms;
    }
  }
  if (reader.remaining() != 0) {
    return fail(err, CUZK_ERR_FORMAT,
                "r1cs: " + str(reader.remaining()) + " bytes of the constraints section follow its " +
                    str(r1cs.n_constraints) + " constraints");
  }
  return CUZK_OK;
}

// Section 3 is not needed to prove, but when present it must agree with the header.
Status check_wire_labels(const BinFile& bin, R1cs& r1cs, std::string& err) {
  auto section = bin.section(kWireLabels);
  if (!section) return CUZK_OK;
  const uint64_t expected = 8ull * r1cs.n_wires;
  if (section->size != expected) {
    return fail(err, CUZK_ERR_FORMAT,
                "r1cs: section 3 (wire labels) has " + str(section->size) + " bytes, expected " + str(expected) +
                    " for " + str(r1cs.n_wires) + " wires");
  }
  for (uint64_t w = 0; w < r1cs.n_wires; ++w) {
    const uint64_t label = load_u64_le(section->data + 8 * w);
    if (label >= r1cs.n_labels) {
      return fail(err, CUZK_ERR_FORMAT,
                  "r1cs: wire " + str(w) + " maps to label " + str(label) + " but there are " + str(r1cs.n_labels));
    }
  }
  r1cs.wire_labels = section->data;
  return CUZK_OK;
}

}  // namespace

Status parse_r1cs(const uint8_t* data, size_t size, R1cs& out, std::string& err) {
  out = R1cs{};
  BinFile bin;
  if (Status s = parse_binfile(data, size, kR1csContainer, bin, err); s != CUZK_OK) return s;
  if (bin.section(kCustomGatesList) || bin.section(kCustomGatesUses)) {
    return fail(err, CUZK_ERR_UNSUPPORTED,
                "r1cs: the circuit uses custom gates (sections 4/5), which only PLONK can prove");
  }
  R1cs r1cs;
  if (Status s = parse_header(bin, r1cs, err); s != CUZK_OK) return s;
  if (Status s = walk_constraints(bin, r1cs, err); s != CUZK_OK) return s;
  if (Status s = check_wire_labels(bin, r1cs, err); s != CUZK_OK) return s;
  out = std::move(r1cs);
  return CUZK_OK;
}

}  // namespace cuzk::formats
