// What the opaque handles of cuzk.h hold. Only the abi/ files see these definitions.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "cuzk.h"
#include "formats/file_bytes.hpp"
#include "formats/r1cs.hpp"
#include "formats/zkey.hpp"
#include "prover/groth16.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::cuda {
struct DeviceContext;  // cuda/backend.hpp
}

struct cuzk_key {
  cuzk::formats::FileBytes file;  // owned: the key stays valid whatever happens to its source
  cuzk::formats::ZkeyGroth16 zkey;
  // Where the point sections come from when they are not in `file` (zkey.source points here): the
  // file itself (CUZK_KEY_POINTS_ON_DEMAND) or the generator of a key made in memory.
  std::unique_ptr<cuzk::formats::PointSource> points;
  cuzk::formats::FileBytes r1cs_file;
  std::unique_ptr<cuzk::formats::R1cs> r1cs;  // set by cuzk_key_attach_r1cs
  uint64_t open_ns = 0;
  std::atomic<int> provers{0};  // live provers made from this key: close refused while > 0
};

struct cuzk_context {
  cuzk_backend backend = CUZK_BACKEND_CPU;
  int32_t device = -1;
  bool g2_on_cpu = false;  // CUZK_CONTEXT_G2_ON_CPU: copied into every prover's engine options
  std::unique_ptr<cuzk::ThreadPool> own_pool;  // when the caller asked for a thread count
  cuzk::ThreadPool* pool = nullptr;
  cuzk::cuda::DeviceContext* gpu = nullptr;
  std::mutex kernel_mutex;      // standalone kernels (cuzk_msm/cuzk_ntt) one at a time
  std::atomic<int> provers{0};  // destroy refused while > 0
};

struct cuzk_prover {
  cuzk_context* ctx = nullptr;
  cuzk_key* key = nullptr;
  std::unique_ptr<cuzk::prover::Prover> impl;
  cuzk::engine::MemoryPlan plan;  // the engine's, fixed once made (cuzk_prover_memory_plan)
  std::atomic<int> calls{0};  // destroy refused while a call runs
};

namespace cuzk::abi {

// Parses key->file into key->zkey and hands the key out (*out). A key whose point sections are
// not in its bytes reads them through key->points: the file's (CUZK_KEY_POINTS_ON_DEMAND, made
// here) or one the caller set (a key made in memory). The point checks run unless flags has
// CUZK_KEY_SKIP_POINT_CHECKS. Codes as cuzk_key_open.
cuzk_status finish_key_open(std::unique_ptr<cuzk_key> key, uint32_t flags, uint64_t start, cuzk_key** out,
                            std::string& msg);

}  // namespace cuzk::abi
