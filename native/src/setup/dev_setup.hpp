// The insecure development setup: a Groth16 proving key for an R1CS from toxic waste drawn from the
// OS CSPRNG in this one call (cuzk.h, cuzk_setup_insecure_dev). INSECURE BY CONSTRUCTION: the
// process knows tau, alpha, beta, gamma and delta while it runs; anyone who learnt them could forge
// proofs. For tests and benchmarks only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cuzk.h"
#include "formats/file_bytes.hpp"
#include "formats/r1cs.hpp"
#include "formats/zkey.hpp"
#include "formats/status.hpp"
#include "util/progress.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::setup {

// Writes the .zkey for `r1cs` to `zkey_path` (whole or not at all) and fills `info` (struct_size
// included), reporting the key points made to `progress` and stopping with CUZK_ERR_CANCELLED
// (no file left) when it is cancelled between chunks. The key points go to GPU 0 when there is one, unless flags has CUZK_SETUP_CPU_ONLY (any
// GPU failure falls back to the CPU tables). Status codes as documented for cuzk_setup_insecure_dev; may throw IoError (the caller
// maps it to CUZK_ERR_IO) and std::bad_alloc.
formats::Status setup_insecure_dev(const formats::R1cs& r1cs, const std::string& zkey_path, ThreadPool& pool, uint32_t flags,
                                   const Progress& progress, cuzk_setup_info& info, std::string& err);

// The same key made in memory (cuzk_setup_insecure_dev_key): `bytes` receives the .zkey with the
// payloads of its point sections left out (never written: they cost no memory), `points` the
// generator that makes any range of those points from the setup's scalars when a prover reads
// them (on GPU 0 unless CUZK_SETUP_CPU_ONLY, else CPU tables on the library's shared pool). The
// progress counts only the header and IC points made here. Codes as setup_insecure_dev, without IO.
formats::Status setup_insecure_dev_in_memory(const formats::R1cs& r1cs, ThreadPool& pool, uint32_t flags,
                                             const Progress& progress, cuzk_setup_info& info, formats::FileBytes& bytes,
                                             std::unique_ptr<formats::PointSource>& points, std::string& err);

// Seams for the native tests, never set by the library.
struct test_hooks {
  // Points a generated key section makes per call (1..2^20; 0: the production window, 2^20):
  // small windows make a small key cross many of them.
  static size_t generated_points_window;
};

}  // namespace cuzk::setup
