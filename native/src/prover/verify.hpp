// Self-contained verification for cuzk_verify: a proof checked against a verification key in the
// cuzk_key_export_vk layout (prover/vk.hpp), with no proving key at hand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuzk.h"

namespace cuzk::prover {

// *valid: whether the pairing check holds. A proof or public signal that is not canonical, or a
// point off its curve, is simply invalid (CUZK_OK, *valid = false); a malformed vk is an error.
cuzk_status verify_proof(cuzk_curve curve, const uint8_t* vk, size_t vk_len, const uint8_t* proof, size_t proof_len,
                         const uint8_t* public_signals, size_t n_public, bool* valid, std::string& err);

}  // namespace cuzk::prover
