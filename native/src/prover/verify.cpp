#include "prover/verify.hpp"

#include <cstring>
#include <vector>

#include "curve/ops.hpp"
#include "pairing/verify.hpp"
#include "prover/vk.hpp"

namespace cuzk::prover {

namespace {

template <class C>
cuzk_status verify_for(const uint8_t* vk_bytes_in, size_t vk_len, const uint8_t* proof, size_t proof_len,
                       const uint8_t* public_signals, size_t n_public, bool* valid, std::string& err) {
  using Fr = typename C::Fr;
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  pairing::VerifyingKey<C> vk;
  cuzk_status st = vk_read<C>(vk_bytes_in, vk_len, n_public, vk, err);
  if (st != CUZK_OK) return st;
  if (proof_len != C::PROOF_BYTES) {
    err = "proof is " + std::to_string(proof_len) + " bytes; " + std::to_string(C::PROOF_BYTES) + " expected on " +
          C::name();
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  *valid = false;
  // Coordinates must be canonical and points on their curves; anything else is simply invalid.
  for (size_t i = 0; i < C::PROOF_BYTES / Fq::BYTES; i++) {
    Fq v;
    std::memcpy(v.l, proof + i * Fq::BYTES, Fq::BYTES);
    if (!v.is_canonical()) return CUZK_OK;
  }
  auto a = curve::load_output_point<Fq>(proof);
  auto b = curve::load_output_point<Fq2>(proof + C::G1_BYTES);
  auto c = curve::load_output_point<Fq>(proof + C::G1_BYTES + C::G2_BYTES);
  if (!curve::is_on_curve<C, Fq>(a) || !curve::is_on_curve<C, Fq2>(b) || !curve::is_on_curve<C, Fq>(c)) return CUZK_OK;
  std::vector<Fr> pub(n_public);
  for (size_t i = 0; i < n_public; i++) {
    Fr v;
    std::memcpy(v.l, public_signals + i * 32, 32);
    if (!v.is_canonical()) return CUZK_OK;  // snarkjs rejects public inputs >= r as well
    pub[i] = v.to_mont();
  }
  *valid = pairing::verify_groth16<C>(vk, a, b, c, pub.data(), n_public);
  return CUZK_OK;
}

}  // namespace

cuzk_status verify_proof(cuzk_curve curve_id, const uint8_t* vk, size_t vk_len, const uint8_t* proof, size_t proof_len,
                         const uint8_t* public_signals, size_t n_public, bool* valid, std::string& err) {
  if (curve_id == CUZK_CURVE_BN254)
    return verify_for<curve::Bn254>(vk, vk_len, proof, proof_len, public_signals, n_public, valid, err);
  if (curve_id == CUZK_CURVE_BLS12_381)
    return verify_for<curve::Bls12381>(vk, vk_len, proof, proof_len, public_signals, n_public, valid, err);
  err = "unknown curve " + std::to_string((int)curve_id);
  return CUZK_ERR_INVALID_ARGUMENT;
}

}  // namespace cuzk::prover
