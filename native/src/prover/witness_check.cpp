#include "prover/witness_check.hpp"

#include "formats/primes.hpp"
#include "formats/wtns.hpp"

namespace cuzk::prover {

namespace {

const char* curve_name(cuzk_curve c) { return c == CUZK_CURVE_BN254 ? "bn254" : "bls12_381"; }

}  // namespace

size_t first_value_not_below_r(const formats::ZkeyGroth16& key, const uint8_t* values, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!formats::less_than_le(values + i * 32, key.r, 32)) return i;
  return n;
}

bool is_constant_one(const uint8_t* value) {
  if (value[0] != 1) return false;
  for (int i = 1; i < 32; i++)
    if (value[i] != 0) return false;
  return true;
}

cuzk_status check_witness(const formats::ZkeyGroth16& key, const uint8_t* witness, size_t witness_len,
                          uint32_t format, const uint8_t** values, std::string& err) {
  const uint8_t* w = nullptr;
  if (format == CUZK_WITNESS_RAW) {
    const size_t raw_bytes = (size_t)key.n_vars * 32;
    if (witness_len != raw_bytes) {
      err = "raw witness is " + std::to_string(witness_len / 32) + " values (" + std::to_string(witness_len) +
            " bytes); the key has " + std::to_string(key.n_vars) + " variables";
      return CUZK_ERR_WITNESS_LENGTH;
    }
    w = witness;
  } else if (format == CUZK_WITNESS_WTNS) {
    formats::Wtns wtns;
    cuzk_status st = formats::parse_wtns_layout(witness, witness_len, wtns, err);
    if (st != CUZK_OK) { err = ".wtns: " + err; return st; }
    if (wtns.curve != key.curve) {
      err = std::string("the witness is for ") + curve_name(wtns.curve) + " but the key is for " + curve_name(key.curve);
      return CUZK_ERR_CURVE_MISMATCH;
    }
    if (wtns.n_witness != key.n_vars) {
      err = "the witness has " + std::to_string(wtns.n_witness) + " values; the key has " + std::to_string(key.n_vars) +
            " variables";
      return CUZK_ERR_WITNESS_LENGTH;
    }
    w = wtns.values;
  } else {
    err = "unknown witness_format " + std::to_string(format);
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  size_t bad = first_value_not_below_r(key, w, key.n_vars);
  if (bad < key.n_vars) {
    err = "witness value " + std::to_string(bad) + " is not < r";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  if (!is_constant_one(w)) {
    err = "witness w[0] must be 1 (the constant wire)";
    return CUZK_ERR_UNSATISFIED;
  }
  *values = w;
  return CUZK_OK;
}

}  // namespace cuzk::prover
