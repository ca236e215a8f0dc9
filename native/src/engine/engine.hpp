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
#include "engine/key_memory.hpp"
#include "engine/key_view.hpp"
#include "engine/timings.hpp"

namespace cuzk::engine {

// One proof's inputs, already checked: n_vars witness values (32 bytes each, standard form LE,
// < r) and, only for CUZK_INPUT_ABC, its a, b, c evaluations (domain_size values each, standard
// LE, < r); a, b, c are NULL when the engine computes them from the key's coefficients.
struct ProofInputs {
  const uint8_t* w = nullptr;
  const uint8_t *a = nullptr, *b = nullptr, *c = nullptr;
};

// The proofs of a batch as an engine consumes them, in order 0..size()-1. inputs(p) may wait: the
// orchestration checks proof p+1 while the engine computes proof p. When it fails (the check's
// status, its message naming the proof, or CUZK_ERR_CANCELLED between proofs) the engine returns
// that status and message at once.
class WitnessSource {
 public:
  virtual ~WitnessSource() = default;
  virtual size_t size() const = 0;
  virtual cuzk_status inputs(size_t p, ProofInputs* out, std::string& err) = 0;
  // The engine has proof p's sums (the batch's progress counts it).
  virtual void computed(size_t p) { (void)p; }
  // The caller asked to stop: an engine checks between the chunks of a long proof and returns
  // CUZK_ERR_CANCELLED (inputs() checks between proofs).
  virtual bool cancelled() const { return false; }
};

// A batch whose inputs are all checked already (engine tests and benchmarks).
struct WitnessBatch final : WitnessSource {
  size_t n = 0;
  std::vector<const uint8_t*> w;
  std::vector<const uint8_t*> a, b, c;  // empty, or n each (CUZK_INPUT_ABC)
  size_t size() const override { return n; }
  cuzk_status inputs(size_t p, ProofInputs* out, std::string&) override {
    out->w = w[p];
    if (!a.empty()) {
      out->a = a[p];
      out->b = b[p];
      out->c = c[p];
    }
    return CUZK_OK;
  }
};

// The sums an engine returns, in projective form (the orchestration adds the blinding terms):
//   a  = sum_i A_i w_i          b1 = sum_i B1_i w_i        b2 = sum_i B2_i w_i (G2)
//   c  = sum_{i > n_public} C_i w_i                         h  = sum_j H_j h_j
template <class C>
struct ProofSums {
  typename C::G1x a, b1, c, h;
  typename C::G2x b2;

  // The G1 sum of section s (A, B1, C or H; B2's is the G2 sum b2).
  typename C::G1x& g1(formats::PointSection s) {
    return s == formats::kSecA ? a : s == formats::kSecB1 ? b1 : s == formats::kSecC ? c : h;
  }
};

template <class C>
class Engine {
 public:
  virtual ~Engine() = default;
  virtual cuzk_backend kind() const = 0;
  // Fills sums[0..batch.size()), one proof after another, taking each proof's inputs from
  // batch.inputs(p) and reporting batch.computed(p). Times its phases (ABC, NTT_H, MSM_*, UPLOAD,
  // ...) into `times`.
  virtual cuzk_status compute(WitnessSource& batch, PhaseTimes& times, ProofSums<C>* sums, std::string& err) = 0;
  // The engine's memory plan (fixed once it is made).
  virtual MemoryPlan memory_plan() const = 0;
  // Whether it reads the key view's A/B rows while proving; an engine with a copy of its own (the
  // GPU's, on the device) says no, and the prover frees the host's.
  virtual bool reads_host_rows() const { return true; }
};

// What a prover's creator chooses about its engine (cuzk_prover_options).
// A prover's settings (cuzk_prover_options and the context's flags), checked at the ABI: every
// engine reads them from here, never from the process environment.
struct EngineOptions {
  uint64_t memory_budget = 0;     // bytes; 0 = automatic
  uint64_t host_budget = 0;       // host bytes the plan may take beyond the key; 0 = automatic
  uint64_t chunk_points = 0;      // the MSM and stream chunk (a power of two); 0 = the plan's choice
  bool stream_rows = false;       // the A/B rows read in chunks per proof (an engine that can)
  bool stream_all = false;        // every held point section streamed, none resident
  bool stream_per_proof = false;  // a streamed section read once per proof even in a batch
  bool overlap = false;           // CUDA: a batch's proofs overlapped where the plan has the room
  int h_copies = -1;              // CUDA: copies of the H points; -1 automatic, 0 or 1 none, else that many
  bool keep_infinity = false;     // CUDA: store points at infinity too (no compaction)
  bool g2_on_cpu = false;         // CUDA: the B2 MSM on the CPU beside the GPU work (a key in memory)
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
