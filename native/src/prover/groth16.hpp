// The backend-independent half of proving: witness checks, randomness, the engine's sums turned
// into A, B, C with the blinding terms, encoding, and the optional self-check. One instance per
// cuzk_prover; the engine (CPU or CUDA) does the heavy work.
#pragma once

#include <memory>
#include <string>

#include "cuzk.h"
#include "formats/r1cs.hpp"
#include "formats/zkey.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::cuda {
struct Device;
}

namespace cuzk::prover {

struct ProveArgs {
  // cuzk_prove: witnesses in `witness_format`, `witness_stride` bytes each.
  const uint8_t* witnesses = nullptr;
  size_t witness_stride = 0;
  uint32_t witness_format = CUZK_WITNESS_RAW;
  // cuzk_prove_abc: evaluations (domain_size values each) and assignments (n_vars values each).
  const uint8_t *a = nullptr, *b = nullptr, *c = nullptr, *assignment = nullptr;
  size_t n = 0;
  const uint8_t* r = nullptr;  // n * 32 bytes or NULL (CSPRNG)
  const uint8_t* s = nullptr;
  uint32_t flags = 0;
  uint8_t* proofs = nullptr;
  size_t proofs_cap = 0;
  cuzk_timings* timings = nullptr;
};

// Where the engine runs.
struct EngineTarget {
  cuzk_backend backend = CUZK_BACKEND_CPU;
  ThreadPool* pool = nullptr;        // always set: the CPU side of every backend
  cuda::Device* device = nullptr;    // set for CUZK_BACKEND_CUDA
};

class Prover {
 public:
  virtual ~Prover() = default;
  // r1cs: the key's attached circuit, or NULL.
  virtual cuzk_status prove(const ProveArgs& args, const formats::R1cs* r1cs, std::string& err) = 0;
};

// Builds the key view and the engine for the key's curve.
cuzk_status make_prover(const formats::ZkeyGroth16& zkey, const EngineTarget& target, std::unique_ptr<Prover>* out,
                        std::string& err);

// Self-contained verification for cuzk_verify: vk in the cuzk_key_export_vk layout.
cuzk_status verify_proof(cuzk_curve curve, const uint8_t* vk, size_t vk_len, const uint8_t* proof, size_t proof_len,
                         const uint8_t* public_signals, size_t n_public, bool* valid, std::string& err);

// Writes the key's verification key (out may be NULL to ask the size).
cuzk_status export_vk(const formats::ZkeyGroth16& zkey, uint8_t* out, size_t cap, size_t* len, std::string& err);

// Fills 32 bytes with a uniformly random element of Fr (standard LE) from the OS CSPRNG.
cuzk_status random_scalar(cuzk_curve curve, uint8_t* out, std::string& err);

}  // namespace cuzk::prover
