// The backend-independent half of proving: witness checks, randomness, the engine's sums turned
// into A, B, C with the blinding terms, encoding, and the optional self-check. One instance per
// cuzk_prover; the engine (made by the ABI side for the context's backend) does the heavy work.
#pragma once

#include <memory>
#include <string>

#include "cuzk.h"
#include "engine/engine.hpp"
#include "formats/r1cs.hpp"
#include "formats/zkey.hpp"
#include "util/progress.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::prover {

struct ProveArgs {
  // CUZK_INPUT_WITNESSES: witnesses in `witness_format`, `witness_stride` bytes each, one after another;
  // CUZK_INPUT_WITNESS_LIST: witness p at witness_list[p] instead (buffers that lie apart: no gathering copy).
  const uint8_t* witnesses = nullptr;
  const uint8_t* const* witness_list = nullptr;
  size_t witness_stride = 0;
  uint32_t witness_format = CUZK_WITNESS_RAW;
  // CUZK_INPUT_ABC: evaluations (domain_size values each) and assignments (n_vars values each).
  const uint8_t *a = nullptr, *b = nullptr, *c = nullptr, *assignment = nullptr;
  size_t n = 0;
  const uint8_t* r = nullptr;  // n * 32 bytes or NULL (CSPRNG)
  const uint8_t* s = nullptr;
  uint32_t flags = 0;
  uint8_t* proofs = nullptr;
  size_t proofs_cap = 0;
  cuzk_timings* timings = nullptr;
  cuzk_progress* progress_record = nullptr;  // the caller's, checked into `progress` by the ABI side
  Progress progress;
};

class Prover {
 public:
  virtual ~Prover() = default;
  // r1cs: the key's attached circuit, or NULL.
  virtual cuzk_status prove(const ProveArgs& args, const formats::R1cs* r1cs, std::string& err) = 0;
};

// Builds the key view for the key's curve and asks `engines` for the engine that works on it.
// pool: the CPU side of every backend (key view, r1cs check).
cuzk_status make_prover(const formats::ZkeyGroth16& zkey, ThreadPool& pool, const engine::EngineMaker& engines,
                        std::unique_ptr<Prover>* out, std::string& err);

}  // namespace cuzk::prover
