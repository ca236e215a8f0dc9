// The key memory plan on the CPU engine. A key opened with
// CUZK_KEY_POINTS_ON_DEMAND leaves its point sections in the file; its CPU prover holds them
// compacted (points at infinity dropped), each section resident or streamed in per proof as its
// budget allows. Every plan must give the same proof bytes as the key read whole (for the same
// r, s): on the 22 committed fixtures, on synthetic PoRep-shaped keys (B mostly infinity), and on
// edge cases made by editing a key's points (every B point infinity, none, C without infinities).
// A budget too small is CUZK_ERR_OUT_OF_MEMORY with the sizes; a key file changed after open is
// CUZK_ERR_IO at the next read; the host memory the key holds is reported (and measured: RSS).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "cuzk.h"
#include "fixture.hpp"
#include "plan_check.hpp"
#include "abc_inputs.hpp"
#include "abi/handles.hpp"
#include "cpu/cpu_engine.hpp"
#include "engine/engine.hpp"
#include "engine/key_view.hpp"
#include "formats/wtns.hpp"
#include "formats/zkey.hpp"

namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;
using cuzk_test::read_file;

constexpr int kSections = CUZK_POINT_SECTIONS;
const char* kSectionNames[kSections] = {"A", "B1", "B2", "C", "H"};

void write_file(const fs::path& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), (std::streamsize)b.size());
}

using cuzk_test::count_placement;
using cuzk_test::largest_section;
using Attempt = cuzk_test::PlanAttempt;

Attempt prove_with(cuzk_context* ctx, cuzk_key* key, uint64_t budget, const Bytes& wtns, uint32_t flags) {
  return cuzk_test::prove_with_budget(ctx, key, budget, wtns, flags, [] {});
}

void print_plan(const std::string& label, const cuzk_memory_plan& p) {
  std::printf("  %s: budget %llu, fixed %llu, resident %llu, stream buffer %llu, streamed/proof %llu, key host %llu, "
              "dropped %llu\n",
              label.c_str(), (unsigned long long)p.budget, (unsigned long long)p.fixed_bytes,
              (unsigned long long)p.resident_bytes, (unsigned long long)p.stream_buffer_bytes,
              (unsigned long long)p.streamed_bytes_per_proof, (unsigned long long)p.key_host_bytes,
              (unsigned long long)p.points_dropped);
  for (int s = 0; s < kSections; s++) {
    const char* where[] = {"?", "in key", "resident", "streamed"};
    std::printf("    %-2s %8llu points, %8llu infinity, %8llu stored (%llu bytes), %s\n", kSectionNames[s],
                (unsigned long long)p.points[s], (unsigned long long)p.infinity[s], (unsigned long long)p.stored[s],
                (unsigned long long)p.stored_bytes[s], where[p.placement[s] < 4 ? p.placement[s] : 0]);
  }
}

// The key at zkey_path read whole and on demand: the on-demand key's resident, streamed and mixed
// plans give the whole key's proof. flags: the proofs' (NO_SELF_CHECK for edited keys, whose
// proofs are not valid; the whole key's proof is then the reference). Returns the resident plan.
cuzk_memory_plan same_proofs_every_plan(const std::string& label, const std::string& zkey_path, const Bytes& wtns,
                                        uint32_t flags) {
  char err[1024];
  cuzk_context* ctx = nullptr;
  cuzk_key *whole = nullptr, *lazy = nullptr;
  cuzk_memory_plan resident_plan{};
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &ctx, err, sizeof err) == CUZK_OK);
  bool opened = cuzk_key_open(zkey_path.c_str(), 0, &whole, err, sizeof err) == CUZK_OK &&
                cuzk_key_open(zkey_path.c_str(), CUZK_KEY_POINTS_ON_DEMAND, &lazy, err, sizeof err) == CUZK_OK;
  CHECK(opened);
  if (!opened) {
    std::fprintf(stderr, "  %s: %s\n", label.c_str(), err);
    cuzk_key_close(whole, nullptr, 0);
    cuzk_context_destroy(ctx, nullptr, 0);
    return resident_plan;
  }
  Attempt ref = prove_with(ctx, whole, 0, wtns, flags);
  CHECK(ref.create == CUZK_OK && ref.prove == CUZK_OK);
  // Read in place: nothing stored, nothing dropped.
  CHECK(count_placement(ref.plan, CUZK_PLACEMENT_RESIDENT) == 0 && ref.plan.resident_bytes == 0);
  for (int s = 0; s < kSections; s++) CHECK(ref.plan.placement[s] == CUZK_PLACEMENT_IN_KEY);

  Attempt res = prove_with(ctx, lazy, 0, wtns, flags);
  CHECK(res.create == CUZK_OK && res.prove == CUZK_OK);
  CHECK(res.proof == ref.proof);
  resident_plan = res.plan;
  CHECK(count_placement(res.plan, CUZK_PLACEMENT_STREAMED) == 0);
  CHECK(res.plan.key_host_bytes < ref.plan.key_host_bytes);
  CHECK(res.plan.min_budget > 0 && res.plan.min_budget <= res.plan.total_bytes);

  // Every section streamed (one chunk each).
  Attempt streamed = cuzk_test::prove_with_budget(ctx, lazy, 0, wtns, flags, [] {}, CUZK_PROVER_STREAM_ALL);
  CHECK(streamed.create == CUZK_OK && streamed.prove == CUZK_OK);
  CHECK(streamed.proof == ref.proof);
  CHECK(count_placement(streamed.plan, CUZK_PLACEMENT_RESIDENT) == 0);

  // Every section resident, every MSM in chunks of the smallest size.
  Attempt chunked = cuzk_test::prove_with_budget(ctx, lazy, 0, wtns, flags, [] {}, 0, CUZK_CHUNK_POINTS_MIN);
  CHECK(chunked.create == CUZK_OK && chunked.prove == CUZK_OK);
  CHECK(chunked.proof == ref.proof);
  CHECK(chunked.plan.msm_chunk_points == CUZK_CHUNK_POINTS_MIN && count_placement(chunked.plan, CUZK_PLACEMENT_STREAMED) == 0);

  // The smallest budget the plan names fits.
  Attempt least = prove_with(ctx, lazy, res.plan.min_budget, wtns, flags);
  CHECK(least.create == CUZK_OK && least.prove == CUZK_OK);
  CHECK(least.proof == ref.proof);
  CHECK(least.plan.total_bytes <= res.plan.min_budget);

  // Budgets from all resident down to the smallest: each plan fits its budget and gives the same
  // proof; some of them keep some sections resident and stream others.
  bool is_mixed = false, all_same = true;
  Attempt mixed;
  constexpr int kSteps = 6;
  for (int i = 1; i < kSteps; i++) {
    const uint64_t budget = res.plan.min_budget + (res.plan.total_bytes - res.plan.min_budget) * (kSteps - i) / kSteps;
    Attempt a = prove_with(ctx, lazy, budget, wtns, flags);
    CHECK(a.create == CUZK_OK && a.prove == CUZK_OK && a.plan.total_bytes <= budget);
    all_same = all_same && a.proof == ref.proof;
    if (count_placement(a.plan, CUZK_PLACEMENT_RESIDENT) > 0 && count_placement(a.plan, CUZK_PLACEMENT_STREAMED) > 0) {
      is_mixed = true;
      mixed = a;
    }
  }
  CHECK(all_same);
  CHECK(is_mixed);

  // One byte short of the smallest plan: refused before anything is made, naming the minimum.
  Attempt tight = prove_with(ctx, lazy, res.plan.min_budget - 1, wtns, flags);
  CHECK(tight.create == CUZK_ERR_OUT_OF_MEMORY);
  const std::string least_text = "at least " + std::to_string(res.plan.min_budget) + " bytes";
  CHECK(std::strstr(tight.err, "budget") != nullptr && std::strstr(tight.err, least_text.c_str()) != nullptr);

  const bool ok = res.proof == ref.proof && streamed.proof == ref.proof && all_same && is_mixed &&
                  chunked.proof == ref.proof && least.proof == ref.proof;
  std::printf("%s: whole key, resident, streamed, chunked, smallest and 5 budgets between: %s\n", label.c_str(), ok ? "identical proofs" : "DIFFER");
  if (!ok || std::getenv("CUZK_TEST_VERBOSE")) {
    print_plan("resident", res.plan);
    print_plan("mixed", mixed.plan);
  }
  cuzk_key_close(whole, nullptr, 0);
  cuzk_key_close(lazy, nullptr, 0);
  cuzk_context_destroy(ctx, nullptr, 0);
  return resident_plan;
}

// stride: every stride-th fixture of each curve (the sanitizer build takes every other one).
void committed_fixtures(int stride) {
  int n = 0;
  for (const char* curve : {"bn254", "bls12_381"}) {
    const fs::path root = fs::path("tests/fixtures") / curve;
    std::vector<fs::path> dirs;
    for (const auto& d : fs::directory_iterator(root))
      if (fs::exists(d.path() / "circuit.zkey") && fs::exists(d.path() / "witness.wtns")) dirs.push_back(d.path());
    std::sort(dirs.begin(), dirs.end());
    n += (int)dirs.size();
    for (size_t i = 0; i < dirs.size(); i += stride) {
      const fs::path& d = dirs[i];
      same_proofs_every_plan(d.string(), (d / "circuit.zkey").string(), read_file((d / "witness.wtns").string()), 0);
    }
  }
  CHECK(n == 22);
}

// A synthetic PoRep-shaped circuit and its INSECURE dev key in `dir`.
bool make_porep(const std::string& dir, uint32_t curve, uint32_t n_constraints, std::string& zkey, Bytes& wtns) {
  char err[512];
  const std::string r1cs = dir + "/p.r1cs", w = dir + "/p.wtns";
  zkey = dir + "/p.zkey";
  if (cuzk_synth_circuit_write(curve, CUZK_SYNTH_POREP, n_constraints, 2, 3, r1cs.c_str(), w.c_str(), err,
                               sizeof err) != CUZK_OK ||
      cuzk_setup_insecure_dev(r1cs.c_str(), zkey.c_str(), 0, CUZK_SETUP_CPU_ONLY, nullptr, nullptr, err,
                              sizeof err) != CUZK_OK) {
    std::fprintf(stderr, "  porep key: %s\n", err);
    return false;
  }
  wtns = read_file(w);
  return true;
}

// Where the key's point sections lie in its file.
bool layout(const Bytes& file, cuzk::formats::ZkeyGroth16& z) {
  std::string e;
  return cuzk::formats::parse_zkey(file.data(), file.size(), z, e) == CUZK_OK;
}

bool is_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return false;
  return true;
}

// Every point of section s set to infinity, or every infinity replaced by one of its finite points.
void edit_section(Bytes& file, const cuzk::formats::ZkeyGroth16& z, cuzk::formats::PointSection s, bool to_infinity) {
  const uint64_t pb = z.point_bytes(s), n = z.point_count(s);
  uint8_t* base = file.data() + z.points_offset[s];
  const uint8_t* finite = nullptr;
  for (uint64_t i = 0; i < n && !finite; i++)
    if (!is_zero(base + i * pb, pb)) finite = base + i * pb;
  Bytes copy(finite, finite + pb);
  for (uint64_t i = 0; i < n; i++) {
    uint8_t* p = base + i * pb;
    if (to_infinity) std::memset(p, 0, pb);
    else if (is_zero(p, pb)) std::memcpy(p, copy.data(), pb);
  }
}

void porep_keys(const std::string& dir) {
  for (uint32_t curve : {CUZK_CURVE_BN254, CUZK_CURVE_BLS12_381}) {
    std::string zkey;
    Bytes wtns;
    const std::string label = std::string("porep 2^10 ") + (curve == CUZK_CURVE_BN254 ? "bn254" : "bls12_381");
    if (!make_porep(dir, curve, 1000, zkey, wtns)) { CHECK(false); continue; }
    cuzk_memory_plan p = same_proofs_every_plan(label, zkey, wtns, 0);
    // Most B points are infinity (b_aux density 25 %) and not stored; B1 and B2 share them.
    CHECK(p.infinity[1] > p.points[1] / 2 && p.infinity[1] == p.infinity[2]);
    CHECK(p.stored[1] == p.points[1] - p.infinity[1] && p.stored[2] == p.stored[1]);
    CHECK(p.points_dropped >= p.infinity[1] + p.infinity[2]);
    std::printf("  %s: B1 %llu of %llu points stored, %llu points dropped in all\n", label.c_str(),
                (unsigned long long)p.stored[1], (unsigned long long)p.points[1],
                (unsigned long long)p.points_dropped);

    // Edge cases on this key's points (their proofs are compared, not valid: NO_SELF_CHECK).
    const Bytes original = read_file(zkey);
    cuzk::formats::ZkeyGroth16 z;
    CHECK(layout(original, z));
    struct Edit {
      const char* name;
      bool b_infinity, b_finite, c_finite;
    } edits[] = {{"every B point infinity", true, false, false},
                 {"no B point infinity", false, true, false},
                 {"C without infinities (only the GPU's leading ones)", false, false, true}};
    for (const Edit& e : edits) {
      Bytes file = original;
      for (auto s : {cuzk::formats::kSecB1, cuzk::formats::kSecB2}) {
        if (e.b_infinity) edit_section(file, z, s, true);
        if (e.b_finite) edit_section(file, z, s, false);
      }
      if (e.c_finite) edit_section(file, z, cuzk::formats::kSecC, false);
      const std::string edited = dir + "/edited.zkey";
      write_file(edited, file);
      cuzk_memory_plan q = same_proofs_every_plan(label + ", " + e.name, edited, wtns, CUZK_PROVE_NO_SELF_CHECK);
      if (e.b_infinity) CHECK(q.stored[1] == 0 && q.stored[2] == 0 && q.infinity[1] == q.points[1]);
      if (e.b_finite) CHECK(q.stored[1] == q.points[1] && q.infinity[1] == 0);
      if (e.c_finite) CHECK(q.infinity[3] == 0 && q.stored[3] == q.points[3] + z.n_public + 1);
    }
  }
}

// A batch with streamed sections reads each once per group of proofs (plan_check.hpp's
// check_grouped_batches): on the CPU engine the group keeps each proof's H scalars.
void batches_stream_once_per_group(const std::string& dir) {
  for (uint32_t curve : {CUZK_CURVE_BN254, CUZK_CURVE_BLS12_381}) {
    std::string zkey;
    Bytes wtns;
    if (!make_porep(dir, curve, 1000, zkey, wtns)) { CHECK(false); continue; }
    cuzk_context* ctx = nullptr;
    char err[512];
    CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &ctx, err, sizeof err) == CUZK_OK);
    const std::string label = std::string("porep 2^10 batch ") + (curve == CUZK_CURVE_BN254 ? "bn254" : "bls12_381");
    CHECK(cuzk_test::check_grouped_batches(label, zkey, curve, 1000, ctx, ctx, false) == 0);
    cuzk_context_destroy(ctx, nullptr, 0);
  }
}

// A budget too small for a key read in place too; bad options; the flag on memory keys.
void refusals(const std::string& dir) {
  char err[1024];
  const std::string zkey = "tests/fixtures/bn254/mulchain_4/circuit.zkey";
  cuzk_context* ctx = nullptr;
  cuzk_key* key = nullptr;
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &ctx, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_key_open(zkey.c_str(), 0, &key, err, sizeof err) == CUZK_OK);
  const Bytes wtns = read_file("tests/fixtures/bn254/mulchain_4/witness.wtns");
  Attempt a = prove_with(ctx, key, 1, wtns, 0);
  CHECK(a.create == CUZK_ERR_OUT_OF_MEMORY && std::strstr(a.err, "host memory budget of 1 bytes") != nullptr &&
        std::strstr(a.err, "buffers every plan needs") != nullptr);
  std::printf("budget of 1 byte: %s\n", a.err);
  // The options' bounds: each bad value refused by name, no prover made.
  cuzk_prover* prover = nullptr;
  auto refused = [&](cuzk_prover_options opt, const char* named) {
    prover = nullptr;
    const bool ok = cuzk_prover_create_with(ctx, key, &opt, &prover, nullptr, err, sizeof err) ==
                        CUZK_ERR_INVALID_ARGUMENT &&
                    prover == nullptr && std::strstr(err, named) != nullptr;
    if (!ok) std::printf("  expected a refusal naming %s, got: %s\n", named, err);
    return ok;
  };
  cuzk_prover_options opt{};
  opt.struct_size = sizeof opt;
  opt.h_copies = CUZK_H_COPIES_AUTO;
  for (uint32_t size : {0u, 8u, 20u}) {
    cuzk_prover_options o = opt;
    o.struct_size = size;
    CHECK(refused(o, "struct_size"));
  }
  {
    cuzk_prover_options o = opt;
    o.flags = 0x20;  // the first bit no flag has
    CHECK(refused(o, "unknown option flags"));
  }
  for (int32_t t : {-2, CUZK_H_COPIES_MAX + 1, INT32_MIN}) {
    cuzk_prover_options o = opt;
    o.h_copies = t;
    CHECK(refused(o, "h_copies"));
  }
  {
    cuzk_prover_options o = opt;
    o.reserved = 1;
    CHECK(refused(o, "reserved"));
  }
  // In bounds: every flag, and each end of h_copies (the CPU engine ignores the copies).
  for (uint32_t flags : {0u, (uint32_t)CUZK_PROVER_STREAM_ALL, (uint32_t)CUZK_PROVER_STREAM_PER_PROOF,
                         (uint32_t)CUZK_PROVER_KEEP_INFINITY, (uint32_t)CUZK_PROVER_STREAM_ROWS, 0xfu})
    for (int32_t t : {CUZK_H_COPIES_AUTO, 0, CUZK_H_COPIES_MAX}) {
      cuzk_prover_options o = opt;
      o.flags = flags;
      o.h_copies = t;
      CHECK(cuzk_prover_create_with(ctx, key, &o, &prover, nullptr, err, sizeof err) == CUZK_OK);
      cuzk_prover_destroy(prover, nullptr, 0);
    }
  {  // the 16-byte layout of before h_copies: its defaults
    cuzk_prover_options o{};
    o.struct_size = 16;
    CHECK(cuzk_prover_create_with(ctx, key, &o, &prover, nullptr, err, sizeof err) == CUZK_OK);
    cuzk_prover_destroy(prover, nullptr, 0);
  }
  // Context flags: G2 on the CPU is taken (a CPU context has nothing to move); others refused.
  cuzk_context* other = nullptr;
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, CUZK_CONTEXT_G2_ON_CPU, &other, err, sizeof err) == CUZK_OK);
  cuzk_context_destroy(other, nullptr, 0);
  other = nullptr;
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0x2, &other, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT &&
        other == nullptr);
  prover = nullptr;
  // NULL options: as cuzk_prover_create.
  CHECK(cuzk_prover_create_with(ctx, key, nullptr, &prover, nullptr, err, sizeof err) == CUZK_OK);
  cuzk_memory_plan plan{};
  CHECK(cuzk_prover_memory_plan(prover, &plan, err, sizeof err) == CUZK_OK && plan.struct_size == sizeof plan);
  CHECK(plan.backend == CUZK_BACKEND_CPU && plan.key_host_bytes == fs::file_size(zkey));
  CHECK(cuzk_prover_memory_plan(nullptr, &plan, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  cuzk_prover_destroy(prover, nullptr, 0);
  cuzk_key_close(key, nullptr, 0);
  const Bytes bytes = read_file(zkey);
  key = nullptr;
  CHECK(cuzk_key_open_memory(bytes.data(), bytes.size(), CUZK_KEY_POINTS_ON_DEMAND, &key, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  CHECK(key == nullptr);
  // A point off its curve is found at open, in its section, as for a key read whole.
  cuzk::formats::ZkeyGroth16 z;
  CHECK(layout(bytes, z));
  Bytes bad = bytes;
  bad[z.points_offset[cuzk::formats::kSecH] + 2 * z.g1_bytes() + 5] ^= 1;
  const std::string bad_path = dir + "/bad.zkey";
  write_file(bad_path, bad);
  char err_whole[1024];
  CHECK(cuzk_key_open(bad_path.c_str(), 0, &key, err_whole, sizeof err_whole) == CUZK_ERR_FORMAT);
  CHECK(cuzk_key_open(bad_path.c_str(), CUZK_KEY_POINTS_ON_DEMAND, &key, err, sizeof err) == CUZK_ERR_FORMAT);
  CHECK(std::strcmp(err, err_whole) == 0 && std::strstr(err, "point 2 of H (section 9)") != nullptr);
  cuzk_context_destroy(ctx, nullptr, 0);
}

// A key on demand whose file changes after open: CUZK_ERR_IO at the next read, never a fault;
// a prover holding every section resident goes on proving.
void file_changed_after_open(const std::string& dir) {
  char err[1024];
  const std::string src = "tests/fixtures/bls12_381/poseidon_10";
  const std::string zkey = dir + "/changing.zkey";
  const Bytes original = read_file(src + "/circuit.zkey"), wtns = read_file(src + "/witness.wtns");
  write_file(zkey, original);
  cuzk_context* ctx = nullptr;
  cuzk_key* key = nullptr;
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &ctx, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_key_open(zkey.c_str(), CUZK_KEY_POINTS_ON_DEMAND, &key, err, sizeof err) == CUZK_OK);
  Attempt first = prove_with(ctx, key, 0, wtns, 0);
  CHECK(first.create == CUZK_OK && first.prove == CUZK_OK);
  // Provers made before the change: one resident (all in its memory), one streaming.
  cuzk_prover *resident = nullptr, *streaming = nullptr;
  cuzk_prover_options opt{};
  opt.struct_size = sizeof opt;
  opt.flags = CUZK_PROVER_STREAM_ALL;
  CHECK(cuzk_prover_create(ctx, key, 0, &resident, nullptr, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_prover_create_with(ctx, key, &opt, &streaming, nullptr, err, sizeof err) == CUZK_OK);

  fs::resize_file(zkey, original.size() / 2);  // truncated in place
  uint8_t r[32] = {7}, s[32] = {11};
  Bytes proof(first.proof.size());
  CHECK(prove_call(resident, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, 1, r, s, 0, proof.data(), proof.size(),
                   nullptr, nullptr, err, sizeof err) == CUZK_OK);
  CHECK(proof == first.proof);
  cuzk_status st = prove_call(streaming, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, 1, r, s, 0, proof.data(),
                              proof.size(), nullptr, nullptr, err, sizeof err);
  CHECK(st == CUZK_ERR_IO && std::strstr(err, "changed since the key was opened") != nullptr);
  std::printf("truncated after open, streaming prover: %s\n", err);
  Attempt after = prove_with(ctx, key, 0, wtns, 0);
  CHECK(after.create == CUZK_ERR_IO);

  // Rewritten with the same size (new modification time): refused as well.
  write_file(zkey, original);
  Attempt rewritten = prove_with(ctx, key, 0, wtns, 0);
  CHECK(rewritten.create == CUZK_ERR_IO && std::strstr(rewritten.err, "changed since") != nullptr);
  cuzk_prover_destroy(resident, nullptr, 0);
  cuzk_prover_destroy(streaming, nullptr, 0);
  cuzk_key_close(key, nullptr, 0);
  cuzk_context_destroy(ctx, nullptr, 0);
}

// Host memory: the key read whole holds its file; on demand it holds the headers, IC and
// coefficients, and its CPU prover the compacted points (resident) or one stream buffer.
void host_memory(const std::string& dir) {
  std::string zkey;
  Bytes wtns;
  if (!make_porep(dir, CUZK_CURVE_BLS12_381, 16000, zkey, wtns)) { CHECK(false); return; }
  const uint64_t file = fs::file_size(zkey);
  char err[1024];
  cuzk_context* ctx = nullptr;
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &ctx, err, sizeof err) == CUZK_OK);
  for (uint32_t flags : {0u, CUZK_KEY_POINTS_ON_DEMAND}) {
    const uint64_t before = cuzk_test::rss_bytes();
    cuzk_key* key = nullptr;
    CHECK(cuzk_key_open(zkey.c_str(), flags | CUZK_KEY_SKIP_POINT_CHECKS, &key, err, sizeof err) == CUZK_OK);
    const uint64_t opened = cuzk_test::rss_bytes();
    Attempt a = prove_with(ctx, key, 0, wtns, 0);
    CHECK(a.create == CUZK_OK && a.prove == CUZK_OK);
    if (flags) {
      CHECK(a.plan.key_host_bytes < file / 4);
      CHECK(opened - before < file / 2);  // the point sections were never read into memory
    } else {
      CHECK(a.plan.key_host_bytes == file);
      CHECK(opened - before > file / 2);
    }
    std::printf("porep 2^14 bls12_381 key (%llu bytes) %s: host RSS +%.1f MiB at open (key holds %.1f MiB); "
                "prover: %.1f MiB of points resident, %llu of %llu B1 points stored\n",
                (unsigned long long)file, flags ? "on demand" : "read whole", (opened - before) / 1048576.0,
                a.plan.key_host_bytes / 1048576.0, a.plan.resident_bytes / 1048576.0,
                (unsigned long long)a.plan.stored[1], (unsigned long long)a.plan.points[1]);
    cuzk_key_close(key, nullptr, 0);
  }
  cuzk_context_destroy(ctx, nullptr, 0);
}

}  // namespace

// One witness whose caller asks to stop once the engine has checked `allow` times: the CPU engine
// checks between the chunks of an MSM and stops there, whatever the section and the placement.
struct StopAfter final : cuzk::engine::WitnessSource {
  const uint8_t* w;
  int allow;
  mutable int checks = 0;
  StopAfter(const uint8_t* witness, int allowed) : w(witness), allow(allowed) {}
  size_t size() const override { return 1; }
  cuzk_status inputs(size_t, cuzk::engine::ProofInputs* out, std::string&) override {
    out->w = w;
    return CUZK_OK;
  }
  bool cancelled() const override { return ++checks > allow; }
};

// A key on demand in chunks of 2^10 points, resident and streamed: a stop asked between chunks
// ends the proof there with CUZK_ERR_CANCELLED; asked never, the same engine proves.
void cancel_between_chunks(const std::string& dir) {
  using C = cuzk::curve::Bn254;
  std::string zkey;
  Bytes wtns;
  if (!make_porep(dir, CUZK_CURVE_BN254, 4000, zkey, wtns)) { CHECK(false); return; }
  char err[512];
  cuzk_key* key = nullptr;
  CHECK(cuzk_key_open(zkey.c_str(), CUZK_KEY_POINTS_ON_DEMAND, &key, err, sizeof err) == CUZK_OK);
  if (!key) return;
  const cuzk::formats::ZkeyGroth16& z = key->zkey;  // its point sections read from the file
  std::string e;
  cuzk::ThreadPool pool(2);
  cuzk::engine::KeyView<C> view;
  CHECK(view.build(z, pool, e) == CUZK_OK);
  const Bytes raw = cuzk_test::raw_witness(wtns);
  for (bool stream : {false, true}) {
    cuzk::engine::EngineOptions options;
    options.chunk_points = 1024;
    options.stream_all = stream;
    std::unique_ptr<cuzk::engine::Engine<C>> engine;
    CHECK(cuzk::cpu::make_engine<C>(view, pool, options, cuzk::Progress(), &engine, e) == CUZK_OK);
    if (!engine) continue;
    const cuzk::engine::MemoryPlan plan = engine->memory_plan();
    CHECK(plan.msm_chunk == 1024 && cuzk::engine::streams_any(plan) == stream && plan.stored[0] > 2048);
    int stopped = 0;
    for (int allow : {0, 1, 3, 7}) {
      StopAfter batch(raw.data(), allow);
      cuzk::engine::PhaseTimes times(nullptr, 1, CUZK_BACKEND_CPU);
      cuzk::engine::ProofSums<C> sums;
      std::string why;
      const cuzk_status st = engine->compute(batch, times, &sums, why);
      const bool ok = st == CUZK_ERR_CANCELLED && why.find("between chunks") != std::string::npos;
      CHECK(ok);
      stopped += ok;
    }
    StopAfter never(raw.data(), INT_MAX);
    cuzk::engine::PhaseTimes times(nullptr, 1, CUZK_BACKEND_CPU);
    cuzk::engine::ProofSums<C> sums;
    std::string why;
    CHECK(engine->compute(never, times, &sums, why) == CUZK_OK);
    std::printf("chunks of 2^10, %s: %d of 4 stops asked between chunks ended the proof there; asked never, it proves\n",
                stream ? "every section streamed" : "every section resident", stopped);
  }
  cuzk_key_close(key, nullptr, 0);
}

// --fixture-stride N: every N-th committed fixture of each curve through every plan (default 1).
int main(int argc, char** argv) {
  const int stride = (int)cuzk_test::int_option(argc, argv, "--fixture-stride", 1, 1, 22);
  char tmpl[] = "/tmp/cuzk_key_memory_XXXXXX";
  const char* dir = mkdtemp(tmpl);
  CHECK(dir != nullptr);
  if (!dir) return cuzk_test::finish("key_memory_test");
  committed_fixtures(stride);
  porep_keys(dir);
  batches_stream_once_per_group(dir);
  refusals(dir);
  file_changed_after_open(dir);
  host_memory(dir);
  cancel_between_chunks(dir);
  fs::remove_all(dir);
  return cuzk_test::finish("key_memory_test");
}
