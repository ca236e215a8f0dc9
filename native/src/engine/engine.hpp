// The seam between the shared prover orchestration and a backend. An engine computes, for every
// witness of a batch, the five multi-scalar sums of a Groth16 proof; everything around them
// (witness checks, randomness, blinding, encoding, self-check) is the same for every backend and
// lives in prover/groth16.hpp. This folder sits below both engines (cpu/, cuda/) and the prover;
// the ABI side, which makes the handles, picks the engine (EngineMaker).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cuzk.h"
#include "curve/curves.hpp"
#include "engine/key_view.hpp"
#include "engine/timings.hpp"

namespace cuzk::engine {

struct WitnessBatch {
  size_t n = 0;
  // Per proof: n_vars values, 32 bytes each, standard form LE, already checked to be < r.
  std::vector<const uint8_t*> w;
  // Per proof, only for cuzk_prove_abc: domain_size values each (standard LE, checked < r).
  // Empty when the engine computes a, b, c from the key's coefficients.
  std::vector<const uint8_t*> a, b, c;
};

// The sums an engine returns, in projective form (the orchestration adds the blinding terms):
//   a  = sum_i A_i w_i          b1 = sum_i B1_i w_i        b2 = sum_i B2_i w_i (G2)
//   c  = sum_{i > n_public} C_i w_i                         h  = sum_j H_j h_j
template <class C>
struct ProofSums {
  typename C::G1x a, b1, c, h;
  typename C::G2x b2;
};

template <class C>
class Engine {
 public:
  virtual ~Engine() = default;
  virtual cuzk_backend kind() const = 0;
  // Fills sums[0..batch.n). Times its phases (ABC, NTT_H, MSM_*, UPLOAD, ...) into `times`.
  virtual cuzk_status compute(const WitnessBatch& batch, PhaseTimes& times, ProofSums<C>* sums,
                              std::string& err) = 0;
};

// Makes the engine that works on a key view, for either curve. The ABI side implements it for a
// context's backend (abi/context.cpp), so that the prover never names cpu/ or cuda/.
class EngineMaker {
 public:
  virtual ~EngineMaker() = default;
  virtual cuzk_status make(const KeyView<curve::Bn254>& key, std::unique_ptr<Engine<curve::Bn254>>* out,
                           std::string& err) const = 0;
  virtual cuzk_status make(const KeyView<curve::Bls12381>& key, std::unique_ptr<Engine<curve::Bls12381>>* out,
                           std::string& err) const = 0;
};

}  // namespace cuzk::engine
