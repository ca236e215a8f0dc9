// cuzk.h: synthetic circuits and the insecure development setup (native/src/setup/).
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>

#include "abi/abi_util.hpp"
#include "abi/handles.hpp"
#include "formats/file_bytes.hpp"
#include "formats/r1cs.hpp"
#include "setup/dev_setup.hpp"
#include "setup/output_file.hpp"
#include "setup/synth.hpp"
#include "util/clock.hpp"
#include "util/thread_pool.hpp"

using cuzk::abi::guarded;
namespace setup = cuzk::setup;

static_assert(sizeof(cuzk_setup_info) == 80 && offsetof(cuzk_setup_info, zkey_bytes) == 40, "cuzk_setup_info layout");

namespace {

// IoError is the one exception of the writers that is the caller's doing (a path, a full disk).
template <class Body>
cuzk_status with_io_errors(std::string& msg, Body&& body) {
  try {
    return body();
  } catch (const setup::IoError& e) {
    msg = e.what();
    return CUZK_ERR_IO;
  }
}

}  // namespace

extern "C" {

CUZK_API cuzk_status cuzk_synth_circuit(uint32_t curve, uint32_t profile, uint32_t n_constraints, uint32_t n_public,
                                        uint64_t seed, uint8_t* r1cs, size_t r1cs_cap, size_t* r1cs_len, uint8_t* wtns,
                                        size_t wtns_cap, size_t* wtns_len, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!r1cs_len || !wtns_len) { msg = "r1cs_len and wtns_len must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    setup::SynthParams params{curve, profile, n_constraints, n_public, seed};
    setup::SynthShape shape;
    cuzk_status st = setup::synth_shape(params, shape, msg);
    if (st != CUZK_OK) return st;
    *r1cs_len = (size_t)shape.r1cs_bytes;
    *wtns_len = (size_t)shape.wtns_bytes;
    if (!r1cs || !wtns || r1cs_cap < shape.r1cs_bytes || wtns_cap < shape.wtns_bytes) {
      msg = "the circuit needs " + std::to_string(shape.r1cs_bytes) + " bytes of .r1cs and " +
            std::to_string(shape.wtns_bytes) + " bytes of .wtns";
      return CUZK_ERR_SHORT_BUFFER;
    }
    setup::MemorySink r1cs_sink(r1cs, r1cs_cap), wtns_sink(wtns, wtns_cap);
    setup::synth_generate(params, &r1cs_sink, wtns_sink);
    return CUZK_OK;
  });
}

CUZK_API cuzk_status cuzk_synth_circuit_write(uint32_t curve, uint32_t profile, uint32_t n_constraints,
                                              uint32_t n_public, uint64_t seed, const char* r1cs_path,
                                              const char* wtns_path, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!r1cs_path || !wtns_path) { msg = "r1cs_path and wtns_path must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (setup::same_file(r1cs_path, wtns_path)) {
      msg = std::string("the .r1cs and the .wtns would both be written to ") + r1cs_path + ": give two different paths";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    setup::SynthParams params{curve, profile, n_constraints, n_public, seed};
    setup::SynthShape shape;
    cuzk_status st = setup::synth_shape(params, shape, msg);
    if (st != CUZK_OK) return st;
    return with_io_errors(msg, [&] {
      setup::OutputFile r1cs_file(r1cs_path), wtns_file(wtns_path);
      setup::synth_generate(params, &r1cs_file, wtns_file);
      setup::OutputFile::commit_together({&r1cs_file, &wtns_file});
      return CUZK_OK;
    });
  });
}

CUZK_API cuzk_status cuzk_synth_witnesses(uint32_t curve, uint32_t profile, uint32_t n_constraints, uint32_t n_public,
                                          uint64_t seed, const uint64_t* witness_seeds, uint8_t* const* values,
                                          size_t n_witnesses, size_t values_cap, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    constexpr size_t kMaxWitnesses = 1024;
    if (!witness_seeds || !values) { msg = "witness_seeds and values must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (n_witnesses == 0 || n_witnesses > kMaxWitnesses) {
      msg = "n_witnesses must be in 1..1024, not " + std::to_string(n_witnesses);
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < n_witnesses; i++) {
      if (!values[i]) { msg = "values[" + std::to_string(i) + "] is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    }
    setup::SynthParams params{curve, profile, n_constraints, n_public, seed};
    setup::SynthShape shape;
    cuzk_status st = setup::synth_shape(params, shape, msg);
    if (st != CUZK_OK) return st;
    const uint64_t need = 32ull * shape.n_wires;
    if (values_cap < need) {
      msg = "each witness needs " + std::to_string(need) + " bytes (" + std::to_string(shape.n_wires) +
            " values of 32 bytes), values_cap is " + std::to_string(values_cap);
      return CUZK_ERR_SHORT_BUFFER;
    }
    // One witness per task; the first failure is reported after the others finish: out of memory
    // as such, anything else (a broken invariant of the generator) as INTERNAL.
    std::mutex failure_mutex;
    std::string failure;
    cuzk_status failed = CUZK_OK;
    auto record = [&](size_t i, cuzk_status st, const char* what) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (failed != CUZK_OK) return;
      failed = st;
      failure = "witness " + std::to_string(i) + ": " + what;
    };
    cuzk::default_thread_pool().parallel_for(n_witnesses, [&](size_t i) {
      try {
        setup::MemorySink sink(values[i], (size_t)need);
        setup::synth_generate(params, nullptr, sink, setup::SynthWitness{witness_seeds[i], true});
      } catch (const std::bad_alloc&) {
        record(i, CUZK_ERR_OUT_OF_MEMORY, "out of host memory");
      } catch (const std::exception& e) {
        record(i, CUZK_ERR_INTERNAL, e.what());
      }
    });
    if (failed != CUZK_OK) msg = failure;
    return failed;
  });
}

}  // extern "C"

namespace {

// What both setups do before their own work: check the arguments, read and parse the .r1cs, pick
// the pool; then run(r1cs, pool, progress, info) and copy info out on success.
template <class Run>
cuzk_status with_setup_inputs(const char* r1cs_path, uint32_t cpu_threads, uint32_t flags, cuzk_setup_info* info,
                              cuzk_progress* progress, std::string& msg, Run&& run) {
  if (!r1cs_path) { msg = "r1cs_path must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
  if (flags & ~CUZK_SETUP_CPU_ONLY) { msg = "unknown flags"; return CUZK_ERR_INVALID_ARGUMENT; }
  cuzk::Progress prog;
  cuzk_status checked = cuzk::abi::checked_progress(progress, &prog, msg);
  if (checked != CUZK_OK) return checked;
  prog.begin(CUZK_STAGE_SETUP, 0);
  std::unique_ptr<cuzk::ThreadPool> own_pool;
  if (cpu_threads > 0) {
    cuzk_status st = cuzk::abi::make_thread_pool(cpu_threads, &own_pool, msg);
    if (st != CUZK_OK) return st;
  }
  cuzk::formats::FileBytes file;
  cuzk_status st = cuzk::formats::FileBytes::read(r1cs_path, cuzk::formats::kR1csContainer, file, msg);
  if (st != CUZK_OK) return st;
  cuzk::formats::R1cs r1cs;
  st = cuzk::formats::parse_r1cs(file.data(), file.size(), r1cs, msg);
  if (st != CUZK_OK) { msg = std::string(r1cs_path) + ": " + msg; return st; }
  cuzk::ThreadPool& pool = own_pool ? *own_pool : cuzk::default_thread_pool();
  cuzk_setup_info local{};
  st = run(r1cs, pool, prog, local);
  if (st == CUZK_OK && info) *info = local;
  return st;
}

}  // namespace

extern "C" {

CUZK_API cuzk_status cuzk_setup_insecure_dev(const char* r1cs_path, const char* zkey_path, uint32_t cpu_threads,
                                             uint32_t flags, cuzk_setup_info* info, cuzk_progress* progress,
                                             char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!zkey_path) { msg = "r1cs_path and zkey_path must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    // Refused before the .r1cs is read and the work done (the writer checks again when it opens).
    if (std::string problem = setup::output_path_problem(zkey_path); !problem.empty()) {
      msg = problem;
      return CUZK_ERR_IO;
    }
    if (r1cs_path && setup::same_file(r1cs_path, zkey_path)) {
      msg = std::string("the key would be written over its own circuit ") + r1cs_path + ": give another path for the .zkey";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    return with_setup_inputs(r1cs_path, cpu_threads, flags, info, progress, msg,
                             [&](const cuzk::formats::R1cs& r1cs, cuzk::ThreadPool& pool, cuzk::Progress& prog,
                                 cuzk_setup_info& local) {
                               return with_io_errors(msg, [&] {
                                 return setup::setup_insecure_dev(r1cs, zkey_path, pool, flags, prog, local, msg);
                               });
                             });
  });
}

CUZK_API cuzk_status cuzk_setup_insecure_dev_key(const char* r1cs_path, uint32_t cpu_threads, uint32_t flags,
                                                 cuzk_key** out, cuzk_setup_info* info, cuzk_progress* progress,
                                                 char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!out) { msg = "out must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    *out = nullptr;
    const uint64_t start = cuzk::now_ns();
    return with_setup_inputs(r1cs_path, cpu_threads, flags, info, progress, msg,
                             [&](const cuzk::formats::R1cs& r1cs, cuzk::ThreadPool& pool, cuzk::Progress& prog,
                                 cuzk_setup_info& local) {
                               auto key = std::make_unique<cuzk_key>();
                               cuzk_status st = setup::setup_insecure_dev_in_memory(r1cs, pool, flags, prog, local,
                                                                                    key->file, key->points, msg);
                               if (st != CUZK_OK) return st;
                               // The points are made from the scalars, not read: nothing to check.
                               return cuzk::abi::finish_key_open(std::move(key), CUZK_KEY_SKIP_POINT_CHECKS, start,
                                                                 out, msg);
                             });
  });
}

}  // extern "C"
