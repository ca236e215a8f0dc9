#include "formats/zkey.hpp"

#include <vector>

#include "formats/binfile.hpp"
#include "formats/primes.hpp"

namespace cuzk::formats {
namespace {

constexpr uint32_t kProtocolGroth16 = 1;

// Section ids of a Groth16 zkey (snarkjs zkey_new.js).
enum ZkeySection : uint32_t {
  kHeader = 1,
  kGroth16Header = 2,
  kIc = 3,
  kCoefs = 4,
  kPointsA = 5,
  kPointsB1 = 6,
  kPointsB2 = 7,
  kPointsC = 8,
  kPointsH = 9,
};
static_assert(kPointsA == kFirstPointSectionId + kSecA && kPointsB1 == kFirstPointSectionId + kSecB1 &&
              kPointsB2 == kFirstPointSectionId + kSecB2 && kPointsC == kFirstPointSectionId + kSecC &&
              kPointsH == kFirstPointSectionId + kSecH);

std::string protocol_name(uint32_t protocol) {
  switch (protocol) {
    case 1: return "groth16";
    case 2: return "plonk";
    case 10: return "fflonk";
    default: return "unknown";
  }
}

std::string str(uint64_t v) { return std::to_string(v); }

// A plausible field element size: snarkjs writes 8-byte limbs; 64 covers any curve in use.
bool plausible_field_bytes(uint32_t n8) { return n8 != 0 && n8 % 8 == 0 && n8 <= 64; }

Status require_section(const BinFile& bin, uint32_t id, const char* name, SectionView& out, std::string& err) {
  auto section = bin.section(id);
  if (!section) return fail(err, CUZK_ERR_FORMAT, "zkey: section " + str(id) + " (" + name + ") is missing");
  out = *section;
  return CUZK_OK;
}

// A point section must hold exactly `count` points of `point_bytes` each.
Status require_point_section(const BinFile& bin, uint32_t id, const char* name, uint64_t count,
                             uint64_t point_bytes, const char* count_meaning, const uint8_t*& out,
                             std::string& err) {
  SectionView section{};
  if (Status s = require_section(bin, id, name, section, err); s != CUZK_OK) return s;
  const uint64_t expected = count * point_bytes;  // count < 2^32, point_bytes <= 256: no overflow
  if (section.size != expected) {
    return fail(err, CUZK_ERR_FORMAT,
                "zkey: section " + str(id) + " (" + name + ") has " + str(section.size) + " bytes, expected " +
                    str(expected) + " (" + str(count) + " points for " + count_meaning + ", " +
                    str(point_bytes) + " bytes each)");
  }
  out = section.data;
  return CUZK_OK;
}

// Every coordinate of a point in key encoding must be a reduced field element (< q).
Status check_point_coordinates(const uint8_t* point, uint32_t n_coordinates, const ZkeyGroth16& key,
                               const std::string& name, std::string& err) {
  for (uint32_t i = 0; i < n_coordinates; ++i) {
    if (!less_than_le(point + static_cast<uint64_t>(i) * key.n8q, key.q, key.n8q)) {
      return fail(err, CUZK_ERR_FORMAT, "zkey: " + name + " coordinate " + str(i) + " is not below q");
    }
  }
  return CUZK_OK;
}

Status parse_groth16_header(const BinFile& bin, ZkeyGroth16& key, uint32_t& two_adicity, std::string& err) {
  SectionView section{};
  if (Status s = require_section(bin, kGroth16Header, "Groth16 header", section, err); s != CUZK_OK) return s;
  ByteReader reader(section.data, section.size);
  const std::string truncated = "zkey: section 2 (Groth16 header) is truncated (" + str(section.size) + " bytes)";

  if (!reader.read_u32(key.n8q)) return fail(err, CUZK_ERR_FORMAT, truncated);
  if (!plausible_field_bytes(key.n8q)) {
    return fail(err, CUZK_ERR_FORMAT, "zkey: the base field's element size (n8q, section 2) is " + str(key.n8q) +
                                          " bytes, which no field has: the key is damaged or not a snarkjs Groth16 key");
  }
  if (!reader.take(key.n8q, key.q) || !reader.read_u32(key.n8r)) return fail(err, CUZK_ERR_FORMAT, truncated);
  if (!plausible_field_bytes(key.n8r)) {
    return fail(err, CUZK_ERR_FORMAT, "zkey: the scalar field's element size (n8r, section 2) is " + str(key.n8r) +
                                          " bytes, which no field has: the key is damaged or not a snarkjs Groth16 key");
  }
  // n8q, q, n8r, r, nVars, nPublic, domainSize, then 3 G1 (2 coordinates) and 3 G2 (4 coordinates).
  const uint64_t expected = 4 + key.n8q + 4 + key.n8r + 12 + 18ull * key.n8q;
  if (section.size != expected) {
    return fail(err, CUZK_ERR_FORMAT,
                "zkey: section 2 (Groth16 header) has " + str(section.size) + " bytes, expected " + str(expected) +
                    " for n8q = " + str(key.n8q) + ", n8r = " + str(key.n8r));
  }
  reader.take(key.n8r, key.r);
  reader.read_u32(key.n_vars);
  reader.read_u32(key.n_public);
  reader.read_u32(key.domain_size);

  const CurvePrimes* curve = curve_by_primes(key.q, key.n8q, key.r, key.n8r);
  if (curve == nullptr) {
    return fail(err, CUZK_ERR_CURVE_MISMATCH,
                "zkey: unsupported curve: q is a " + str(bit_length_le(key.q, key.n8q)) + "-bit prime (" +
                    str(key.n8q) + " bytes) and r a " + str(bit_length_le(key.r, key.n8r)) + "-bit prime (" +
                    str(key.n8r) + " bytes); supported are BN254 and BLS12-381");
  }
  key.curve = curve->curve;
  two_adicity = curve->two_adicity;

  const uint64_t g1 = key.g1_bytes();
  const uint64_t g2 = key.g2_bytes();
  reader.take(g1, key.alpha1);
  reader.take(g1, key.beta1);
  reader.take(g2, key.beta2);
  reader.take(g2, key.gamma2);
  reader.take(g1, key.delta1);
  reader.take(g2, key.delta2);
  return CUZK_OK;
}

Status check_counts(ZkeyGroth16& key, uint32_t two_adicity, std::string& err) {
  if (key.domain_size == 0 || (key.domain_size & (key.domain_size - 1)) != 0) {
    return fail(err, CUZK_ERR_FORMAT, "zkey: domain size " + str(key.domain_size) + " is not a power of two");
  }
  key.log_domain = 0;
  while ((1ull << key.log_domain) < key.domain_size) ++key.log_domain;
  if (key.log_domain > two_adicity) {
    return fail(err, CUZK_ERR_FORMAT,
                "zkey: domain 2^" + str(key.log_domain) + " exceeds the largest NTT domain of the scalar field (2^" +
                    str(two_adicity) + ")");
  }
  if (key.n_public >= key.n_vars) {
    return fail(err, CUZK_ERR_FORMAT,
                "zkey: n_public = " + str(key.n_public) + " leaves no room for w[0] among n_vars = " +
                    str(key.n_vars));
  }
  return CUZK_OK;
}

Status check_header_points(const ZkeyGroth16& key, std::string& err) {
  const struct {
    const uint8_t* point;
    uint32_t coordinates;
    const char* name;
  } points[] = {{key.alpha1, 2, "alpha1"}, {key.beta1, 2, "beta1"},  {key.beta2, 4, "beta2"},
                {key.gamma2, 4, "gamma2"}, {key.delta1, 2, "delta1"}, {key.delta2, 4, "delta2"}};
  for (const auto& p : points) {
    if (Status s = check_point_coordinates(p.point, p.coordinates, key, p.name, err); s != CUZK_OK) return s;
  }
  for (uint64_t i = 0; i <= key.n_public; ++i) {
    Status s = check_point_coordinates(key.ic + i * key.g1_bytes(), 2, key, "IC[" + str(i) + "]", err);
    if (s != CUZK_OK) return s;
  }
  return CUZK_OK;
}

Status parse_coefficient_section(const BinFile& bin, ZkeyGroth16& key, std::string& err) {
  SectionView section{};
  if (Status s = require_section(bin, kCoefs, "coefficients", section, err); s != CUZK_OK) return s;
  if (section.size < 4) {
    return fail(err, CUZK_ERR_FORMAT, "zkey: section 4 (coefficients) has " + str(section.size) + " bytes, no count");
  }
  key.n_coefs = load_u32_le(section.data);
  const uint64_t expected = 4 + key.n_coefs * key.coef_record_bytes();  // < 2^32 * 76: no overflow
  if (section.size != expected) {
    return fail(err, CUZK_ERR_FORMAT,
                "zkey: section 4 (coefficients) has " + str(section.size) + " bytes, expected " + str(expected) +
                    " for " + str(key.n_coefs) + " records of " + str(key.coef_record_bytes()) + " bytes");
  }
  key.coefs = section.data + 4;
  return CUZK_OK;
}

// Every record in range; returns the largest A row, which is the last input row (see below).
Status check_coefficient_records(const ZkeyGroth16& key, bool& has_a, uint32_t& max_a_row, std::string& err) {
  has_a = false;
  max_a_row = 0;
  for (uint32_t i = 0; i < key.n_coefs; ++i) {
    const ZkeyCoef c = key.coef(i);
    // Built only on failure: keys hold tens of millions of records.
    auto where = [i] { return "zkey: coefficient #" + str(i); };
    if (c.matrix > 1) {
      return fail(err, CUZK_ERR_FORMAT, where() + " names matrix " + str(c.matrix) + " (only 0 = A and 1 = B exist)");
    }
    if (c.constraint >= key.domain_size) {
      return fail(err, CUZK_ERR_FORMAT,
                  where() + " is in row " + str(c.constraint) + ", outside the domain of " + str(key.domain_size));
    }
    if (c.signal >= key.n_vars) {
      return fail(err, CUZK_ERR_FORMAT,
                  where() + " names signal " + str(c.signal) + " but there are " + str(key.n_vars));
    }
    if (!less_than_le(c.value, key.r, key.n8r)) {
      return fail(err, CUZK_ERR_FORMAT, where() + " has a value that is not below r");
    }
    if (c.matrix == 0) {
      has_a = true;
      if (c.constraint > max_a_row) max_a_row = c.constraint;
    }
  }
  return CUZK_OK;
}

// snarkjs appends, for s = 0..n_public, the A entry {row n_constraints + s, signal s, value 1}
// (formats.md 1, "Extra A rows"). Those are the highest A rows, so the largest A row is
// n_constraints + n_public; every entry at or past n_constraints must be exactly one of them.
Status derive_constraint_count(ZkeyGroth16& key, const uint8_t* one, std::string& err) {
  bool has_a = false;
  uint32_t max_a_row = 0;
  if (Status s = check_coefficient_records(key, has_a, max_a_row, err); s != CUZK_OK) return s;
  if (!has_a || max_a_row < key.n_public) {
    return fail(err, CUZK_ERR_FORMAT,
                "zkey: the " + str(key.n_public + 1ull) + " input rows of matrix A that snarkjs adds are missing");
  }
  key.n_constraints = max_a_row - key.n_public;
  if (static_cast<uint64_t>(key.n_constraints) + key.n_public + 1 > key.domain_size) {
    return fail(err, CUZK_ERR_FORMAT,
                "zkey: " + str(key.n_constraints) + " constraints and " + str(key.n_public + 1ull) +
                    " input rows do not fit the domain of " + str(key.domain_size));
  }

  std::vector<uint8_t> input_row_seen(key.n_public + 1ull, 0);  // n_public is bounded by the IC section
  for (uint32_t i = 0; i < key.n_coefs; ++i) {
    const ZkeyCoef c = key.coef(i);
    if (c.constraint < key.n_constraints) continue;
    const uint32_t input = c.constraint - key.n_constraints;
    auto where = [&] {
      return "zkey: coefficient #" + str(i) + " (row " + str(c.constraint) + ", input row " + str(input) + " of " +
             str(key.n_constraints) + " constraints)";
    };
    if (c.matrix != 0) return fail(err, CUZK_ERR_FORMAT, where() + " is in matrix B; input rows only hold A entries");
    if (c.signal != input || !equal_bytes(c.value, one, key.n8r)) {
      return fail(err, CUZK_ERR_FORMAT,
                  where() + " must be {signal " + str(input) + ", coefficient 1}, found signal " + str(c.signal));
    }
    if (input_row_seen[input]) return fail(err, CUZK_ERR_FORMAT, where() + " appears twice");
    input_row_seen[input] = 1;
  }
  for (uint64_t s = 0; s <= key.n_public; ++s) {
    if (!input_row_seen[s]) {
      return fail(err, CUZK_ERR_FORMAT,
                  "zkey: input row " + str(s) + " (A entry {row " + str(key.n_constraints + s) + ", signal " +
                      str(s) + "}) is missing");
    }
  }
  return CUZK_OK;
}

}  // namespace

Status parse_zkey(const uint8_t* data, size_t size, ZkeyGroth16& out, std::string& err) {
  out = ZkeyGroth16{};
  BinFile bin;
  if (Status s = parse_binfile(data, size, kZkeyContainer, bin, err); s != CUZK_OK) return s;

  SectionView header{};
  if (Status s = require_section(bin, kHeader, "header", header, err); s != CUZK_OK) return s;
  if (header.size != 4) {
    return fail(err, CUZK_ERR_FORMAT, "zkey: section 1 (header) has " + str(header.size) + " bytes, expected 4");
  }
  const uint32_t protocol = load_u32_le(header.data);
  if (protocol != kProtocolGroth16) {
    return fail(err, CUZK_ERR_UNSUPPORTED,
                "zkey: protocol " + str(protocol) + " (" + protocol_name(protocol) +
                    ") is not supported; cuzk proves Groth16 keys (protocol 1) only");
  }

  ZkeyGroth16 key;
  uint32_t two_adicity = 0;
  if (Status s = parse_groth16_header(bin, key, two_adicity, err); s != CUZK_OK) return s;
  if (Status s = check_counts(key, two_adicity, err); s != CUZK_OK) return s;

  const uint64_t g1 = key.g1_bytes();
  const uint64_t g2 = key.g2_bytes();
  const uint64_t n_public_1 = key.n_public + 1ull;
  const struct {
    uint32_t id;
    const char* name;
    uint64_t count;
    uint64_t point_bytes;
    const char* count_meaning;
    const uint8_t** out;
  } point_sections[] = {
      {kIc, "IC", n_public_1, g1, "n_public + 1", &key.ic},
      {kPointsA, "A points", key.n_vars, g1, "n_vars", &key.points_a},
      {kPointsB1, "B1 points", key.n_vars, g1, "n_vars", &key.points_b1},
      {kPointsB2, "B2 points", key.n_vars, g2, "n_vars", &key.points_b2},
      {kPointsC, "C points", key.n_vars - n_public_1, g1, "n_vars - n_public - 1", &key.points_c},
      {kPointsH, "H points", key.domain_size, g1, "domain_size", &key.points_h},
  };
  for (const auto& p : point_sections) {
    Status s = require_point_section(bin, p.id, p.name, p.count, p.point_bytes, p.count_meaning, *p.out, err);
    if (s != CUZK_OK) return s;
  }
  for (int s = 0; s < kPointSections; ++s) key.points_offset[s] = (uint64_t)(key.points((PointSection)s) - data);
  if (Status s = check_header_points(key, err); s != CUZK_OK) return s;

  if (Status s = parse_coefficient_section(bin, key, err); s != CUZK_OK) return s;
  const uint8_t* one = nullptr;
  for (const CurvePrimes& c : kSupportedCurves) {
    if (c.curve == key.curve) one = c.r_squared_mod_r;
  }
  if (Status s = derive_constraint_count(key, one, err); s != CUZK_OK) return s;

  out = key;
  return CUZK_OK;
}

}  // namespace cuzk::formats
