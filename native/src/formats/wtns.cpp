#include "formats/wtns.hpp"

#include "formats/binfile.hpp"
#include "formats/byte_reader.hpp"
#include "formats/primes.hpp"

namespace cuzk::formats {
namespace {

constexpr uint32_t kHeaderSection = 1;
constexpr uint32_t kValuesSection = 2;
constexpr uint32_t kSupportedN8 = 32;  // both supported scalar fields

std::string str(uint64_t v) { return std::to_string(v); }

}  // namespace

Status parse_wtns_layout(const uint8_t* data, size_t size, Wtns& out, std::string& err) {
  out = Wtns{};
  BinFile bin;
  if (Status s = parse_binfile(data, size, kWtnsContainer, bin, err); s != CUZK_OK) return s;

  auto header = bin.section(kHeaderSection);
  if (!header) return fail(err, CUZK_ERR_FORMAT, "wtns: section 1 (header) is missing");
  Wtns w;
  ByteReader reader(header->data, header->size);
  if (!reader.read_u32(w.n8)) return fail(err, CUZK_ERR_FORMAT, "wtns: section 1 (header) is truncated");
  if (w.n8 != kSupportedN8) {
    // Other circom primes (goldilocks: 8 bytes) have other sizes; a 0 or odd size is damage.
    const bool plausible = w.n8 != 0 && w.n8 % 8 == 0 && w.n8 <= 64;
    return fail(err, plausible ? CUZK_ERR_CURVE_MISMATCH : CUZK_ERR_FORMAT,
                "wtns: values of " + str(w.n8) + " bytes; only the 32-byte scalar fields of BN254 and BLS12-381 " +
                    "are supported");
  }
  if (header->size != 4ull + w.n8 + 4) {
    return fail(err, CUZK_ERR_FORMAT,
                "wtns: section 1 (header) has " + str(header->size) + " bytes, expected " + str(4ull + w.n8 + 4));
  }
  reader.take(w.n8, w.prime);
  reader.read_u32(w.n_witness);

  const CurvePrimes* curve = curve_by_scalar_prime(w.prime, w.n8);
  if (curve == nullptr) {
    return fail(err, CUZK_ERR_CURVE_MISMATCH,
                "wtns: the witness is over a " + str(bit_length_le(w.prime, w.n8)) +
                    "-bit prime that is not the scalar field of BN254 or BLS12-381");
  }
  w.curve = curve->curve;

  auto values = bin.section(kValuesSection);
  if (!values) return fail(err, CUZK_ERR_FORMAT, "wtns: section 2 (values) is missing");
  const uint64_t expected = static_cast<uint64_t>(w.n_witness) * w.n8;
  if (values->size != expected) {
    return fail(err, CUZK_ERR_FORMAT,
                "wtns: section 2 (values) has " + str(values->size) + " bytes, expected " + str(expected) + " for " +
                    str(w.n_witness) + " values of " + str(w.n8) + " bytes");
  }
  w.values = values->data;
  out = w;
  return CUZK_OK;
}

Status parse_wtns(const uint8_t* data, size_t size, Wtns& out, std::string& err) {
  Wtns w;
  if (Status s = parse_wtns_layout(data, size, w, err); s != CUZK_OK) return s;
  for (uint64_t i = 0; i < w.n_witness; ++i) {
    if (!less_than_le(w.values + i * w.n8, w.prime, w.n8)) {
      return fail(err, CUZK_ERR_FORMAT, "wtns: value w[" + str(i) + "] is not below the prime");
    }
  }
  out = w;
  return CUZK_OK;
}

}  // namespace cuzk::formats
