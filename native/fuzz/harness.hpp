// What every fuzz target shares: where the fixtures are, reading one, and the rule every C ABI call
// keeps on hostile input (a documented status with a message; CUZK_ERR_INTERNAL is a bug).
// Targets include only cuzk.h and the readers' headers: this folder sits above the library.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cuzk.h"

namespace cuzk_fuzz {

using Bytes = std::vector<uint8_t>;

// The repository root (CUZK_REPO_ROOT, else the source tree the target was built from).
inline std::string repo_root() {
  const char* env = std::getenv("CUZK_REPO_ROOT");
  return env && *env ? env : CUZK_FUZZ_REPO_ROOT;
}

[[noreturn]] inline void die(const std::string& what) {
  std::fprintf(stderr, "fuzz target: %s\n", what.c_str());
  std::abort();
}

inline Bytes read_repo_file(const std::string& relative) {
  std::string path = repo_root() + "/" + relative;
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read " + path + " (set CUZK_REPO_ROOT to the repository)");
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

// The committed mulchain_4 fixture's `file` for `curve`: the known-good key and witness that the
// targets run against fuzzed input of the same curve.
inline Bytes read_mulchain_4(cuzk_curve curve, const char* file) {
  return read_repo_file(std::string("tests/fixtures/") + (curve == CUZK_CURVE_BN254 ? "bn254" : "bls12_381") +
                        "/mulchain_4/" + file);
}

// State a target keeps per curve across inputs: one slot each, value-initialised, filled on first use.
template <class T>
T& per_curve(cuzk_curve curve) {
  static T slots[2];
  return slots[curve == CUZK_CURVE_BN254 ? 0 : 1];
}

// A refusal must be a documented code other than INTERNAL, with a NUL-terminated, non-empty
// message; anything else aborts, which libFuzzer reports as a crash with this input.
inline void require_clean(cuzk_status st, const char* err, size_t err_cap, const char* call) {
  if (st == CUZK_OK) return;
  bool known = st > CUZK_OK && st < CUZK_ERR_INTERNAL;
  bool terminated = std::memchr(err, 0, err_cap) != nullptr;
  if (!known || !terminated || err[0] == 0)
    die(std::string(call) + " returned status " + std::to_string(st) + " (" + cuzk_status_name(st) +
        "): " + (terminated ? err : "<message not NUL-terminated>"));
}

// A reader's status, held to the same rule: a refusal has a documented status (not INTERNAL) and a
// message `why`, else the target aborts.
inline cuzk_status clean_parse(cuzk_status st, const std::string& why, const char* reader) {
  if (st != CUZK_OK && (st == CUZK_ERR_INTERNAL || why.empty()))
    die(std::string(reader) + ": status " + std::to_string(st) + " with message '" + why + "'");
  return st;
}

inline void require_ok(cuzk_status st, const char* err, const char* call) {
  if (st != CUZK_OK) die(std::string(call) + " failed on a key/witness it accepted: " + err);
}

// One single-threaded CPU context for the whole run: fuzzed keys must not size the thread pool.
inline cuzk_context* cpu_context() {
  static cuzk_context* ctx = [] {
    cuzk_context* c = nullptr;
    char err[256];
    require_ok(cuzk_context_create(CUZK_BACKEND_CPU, 0, 1, 0, &c, err, sizeof err), err, "cuzk_context_create");
    return c;
  }();
  return ctx;
}

// Deterministic r, s for proofs made by the targets (any values < r work).
inline const uint8_t* fixed_blinding() {
  static const uint8_t rs[32] = {7, 1, 2, 3};
  return rs;
}

// One proof of one witness (`len` bytes in `format`) with the fixed blinding, through cuzk_prove.
inline cuzk_status prove_one(cuzk_prover* prover, const uint8_t* witness, size_t len, uint32_t format, Bytes& proof,
                             char* err, size_t err_cap) {
  cuzk_prove_args args{};
  args.struct_size = sizeof args;
  args.input = CUZK_INPUT_WITNESSES;
  args.witness_format = format;
  args.n_proofs = 1;
  args.witness_stride = len;
  args.witnesses = witness;
  args.r = fixed_blinding();
  args.s = fixed_blinding();
  args.proofs = proof.data();
  args.proofs_cap = proof.size();
  return cuzk_prove(prover, &args, err, err_cap);
}

}  // namespace cuzk_fuzz
