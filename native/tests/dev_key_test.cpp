// The workload at sizes whose files would not fit a disk, at small sizes here:
//  - the porep profile's fast generator gives the generic solver's bytes (r1cs, .wtns, raw values,
//    other witness seeds), both curves, many shapes;
//  - cuzk_synth_witnesses: seed 0 is cuzk_synth_circuit's witness, other seeds other witnesses that
//    satisfy the same .r1cs; its refusals;
//  - cuzk_setup_insecure_dev_key: a key made in memory whose points are made when a prover reads
//    them; its proofs self-check and verify with its exported vk under every memory plan, its
//    infinities are those of the file key of the same circuit, a cancel leaves no key, and bad
//    arguments are refused.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixture.hpp"
#include "cuzk.h"
#include "prove_call.hpp"
#include "curve/curves.hpp"
#include "formats/r1cs.hpp"
#include "prover/r1cs_check.hpp"
#include "formats/file_bytes.hpp"
#include "formats/zkey.hpp"
#include "setup/dev_setup.hpp"
#include "setup/output_file.hpp"
#include "setup/random.hpp"
#include "setup/synth.hpp"
#include "util/progress.hpp"
#include "util/thread_pool.hpp"

namespace {

using Bytes = std::vector<uint8_t>;
namespace setup = cuzk::setup;

// A sink that keeps what it is given.
struct VectorSink final : setup::ByteSink {
  Bytes bytes;
  void write(const void* data, size_t n) override {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    bytes.insert(bytes.end(), p, p + n);
  }
};

void fast_equals_reference() {
  struct Shape {
    uint32_t curve, n, n_public;
    uint64_t seed;
  };
  const Shape shapes[] = {{CUZK_CURVE_BN254, 1, 0, 1},      {CUZK_CURVE_BN254, 1, 1, 2},
                          {CUZK_CURVE_BLS12_381, 5, 0, 3},  {CUZK_CURVE_BN254, 77, 77, 4},
                          {CUZK_CURVE_BLS12_381, 1000, 3, 0}, {CUZK_CURVE_BN254, 4099, 16, 99},
                          {CUZK_CURVE_BLS12_381, 65531, 4, 12345}};
  int same = 0, cases = 0;
  for (const Shape& sh : shapes) {
    setup::SynthParams p{sh.curve, CUZK_SYNTH_POREP, sh.n, sh.n_public, sh.seed};
    for (uint64_t wseed : {0ull, 1ull, 0xdeadbeefull}) {
      for (bool raw : {false, true}) {
        VectorSink fr, fw, rr, rw;
        setup::synth_generate(p, &fr, fw, {wseed, raw});
        setup::synth_generate_reference(p, &rr, rw, {wseed, raw});
        VectorSink only_w;
        setup::synth_generate(p, nullptr, only_w, {wseed, raw});
        cases++;
        const bool ok = fr.bytes == rr.bytes && fw.bytes == rw.bytes && only_w.bytes == fw.bytes && !fr.bytes.empty();
        same += ok;
        CHECK(ok);
        if (!ok) std::fprintf(stderr, "  differ: n %u public %u seed %llu witness seed %llu raw %d\n", sh.n,
                              sh.n_public, (unsigned long long)sh.seed, (unsigned long long)wseed, raw);
      }
    }
  }
  std::printf("fast porep generator = reference: %d of %d cases\n", same, cases);
}

// Witnesses of other seeds satisfy the circuit; seed 0 is the circuit's own.
void other_witnesses(uint32_t curve, uint32_t profile) {
  char err[512];
  const uint32_t n = 3000, n_public = 3;
  size_t r1cs_len = 0, wtns_len = 0;
  cuzk_synth_circuit(curve, profile, n, n_public, 5, nullptr, 0, &r1cs_len, nullptr, 0, &wtns_len, err, sizeof err);
  Bytes r1cs_bytes(r1cs_len), wtns(wtns_len);
  CHECK(cuzk_synth_circuit(curve, profile, n, n_public, 5, r1cs_bytes.data(), r1cs_len, &r1cs_len, wtns.data(),
                           wtns_len, &wtns_len, err, sizeof err) == CUZK_OK);
  const size_t values_len = wtns_len - 76;  // the .wtns header: 12 + (12 + 40) + 12 bytes
  const uint64_t seeds[3] = {0, 1, 2};
  std::vector<Bytes> values(3, Bytes(values_len + 5, 0xee));
  uint8_t* dst[3] = {values[0].data(), values[1].data(), values[2].data()};
  cuzk_status st = cuzk_synth_witnesses(curve, profile, n, n_public, 5, seeds, dst, 3, values_len, err, sizeof err);
  CHECK(st == CUZK_OK);
  if (st != CUZK_OK) { std::fprintf(stderr, "  %s\n", err); return; }
  CHECK(std::memcmp(values[0].data(), wtns.data() + 76, values_len) == 0);
  CHECK(values[1][values_len] == 0xee);  // nothing past the values
  cuzk::formats::R1cs r1cs;
  std::string e;
  CHECK(cuzk::formats::parse_r1cs(r1cs_bytes.data(), r1cs_bytes.size(), r1cs, e) == CUZK_OK);
  cuzk::ThreadPool pool(2);
  for (int i = 1; i < 3; i++) {
    CHECK(std::memcmp(values[i].data(), values[0].data(), values_len) != 0);
    cuzk_status sat = curve == CUZK_CURVE_BN254
                          ? cuzk::prover::check_r1cs_witness<cuzk::curve::Bn254>(r1cs, values[i].data(), pool, e)
                          : cuzk::prover::check_r1cs_witness<cuzk::curve::Bls12381>(r1cs, values[i].data(), pool, e);
    CHECK(sat == CUZK_OK);
    if (sat != CUZK_OK) std::fprintf(stderr, "  witness seed %d: %s\n", i, e.c_str());
  }
  // Refusals.
  CHECK(cuzk_synth_witnesses(curve, profile, n, n_public, 5, seeds, dst, 3, values_len - 1, err, sizeof err) ==
        CUZK_ERR_SHORT_BUFFER);
  CHECK(std::strstr(err, std::to_string(values_len).c_str()) != nullptr);
  CHECK(cuzk_synth_witnesses(curve, profile, n, n_public, 5, seeds, dst, 0, values_len, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_synth_witnesses(curve, profile, n, n_public, 5, seeds, dst, 1025, values_len, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_synth_witnesses(curve, profile, n, n_public, 5, nullptr, dst, 3, values_len, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  uint8_t* with_null[2] = {values[0].data(), nullptr};
  CHECK(cuzk_synth_witnesses(curve, profile, n, n_public, 5, seeds, with_null, 2, values_len, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_synth_witnesses(curve, 9, n, n_public, 5, seeds, dst, 3, values_len, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
}

struct Prepared {
  std::string r1cs;
  uint32_t n_vars = 0;
  std::vector<Bytes> witnesses;  // raw values, witness seeds 0, 1, 2
};

Prepared prepare(const std::string& dir, uint32_t curve, uint32_t n, uint32_t n_public) {
  Prepared p;
  char err[512];
  p.r1cs = dir + "/c.r1cs";
  const std::string w = dir + "/c.wtns";
  CHECK(cuzk_synth_circuit_write(curve, CUZK_SYNTH_POREP, n, n_public, 3, p.r1cs.c_str(), w.c_str(), err, sizeof err) ==
        CUZK_OK);
  const size_t values_len = cuzk_test::read_file(w).size() - 76;
  p.n_vars = (uint32_t)(values_len / 32);
  const uint64_t seeds[3] = {0, 1, 2};
  p.witnesses.assign(3, Bytes(values_len));
  uint8_t* dst[3] = {p.witnesses[0].data(), p.witnesses[1].data(), p.witnesses[2].data()};
  CHECK(cuzk_synth_witnesses(curve, CUZK_SYNTH_POREP, n, n_public, 3, seeds, dst, 3, values_len, err, sizeof err) ==
        CUZK_OK);
  return p;
}

// Every witness proved with a prover made under `budget`; each proof self-checked in the call and
// verified here with the key's vk. Returns the plan.
cuzk_memory_plan prove_all(cuzk_context* ctx, cuzk_key* key, const Prepared& p, uint64_t budget, const char* label) {
  char err[1024];
  cuzk_key_info info{};
  cuzk_key_get_info(key, &info, nullptr, 0);
  cuzk_prover_options opt{};
  opt.struct_size = sizeof opt;
  opt.memory_budget = budget;
  cuzk_prover* prover = nullptr;
  cuzk_memory_plan plan{};
  cuzk_status st = cuzk_prover_create_with(ctx, key, &opt, &prover, nullptr, err, sizeof err);
  CHECK(st == CUZK_OK);
  if (st != CUZK_OK) { std::fprintf(stderr, "  %s: %s\n", label, err); return plan; }
  CHECK(cuzk_prover_memory_plan(prover, &plan, err, sizeof err) == CUZK_OK);
  size_t vk_len = 0;
  cuzk_key_export_vk(key, nullptr, 0, &vk_len, err, sizeof err);
  Bytes vk(vk_len);
  CHECK(cuzk_key_export_vk(key, vk.data(), vk.size(), &vk_len, err, sizeof err) == CUZK_OK);
  int verified = 0;
  for (const Bytes& w : p.witnesses) {
    Bytes proof(info.proof_bytes);
    st = prove_call(prover, w.data(), w.size(), CUZK_WITNESS_RAW, 1, nullptr, nullptr, 0, proof.data(), proof.size(),
                    nullptr, nullptr, err, sizeof err);
    CHECK(st == CUZK_OK);
    if (st != CUZK_OK) { std::fprintf(stderr, "  %s: %s\n", label, err); continue; }
    int32_t valid = 0;
    CHECK(cuzk_verify(info.curve, vk.data(), vk.size(), proof.data(), proof.size(), w.data() + 32, info.n_public,
                      &valid, err, sizeof err) == CUZK_OK);
    CHECK(valid == 1);
    verified += valid == 1;
    // The same proof against another witness's public signals does not verify.
    if (info.n_public > 0) {
      const Bytes& other = &w == &p.witnesses[0] ? p.witnesses[1] : p.witnesses[0];
      int32_t wrong = 1;
      cuzk_verify(info.curve, vk.data(), vk.size(), proof.data(), proof.size(), other.data() + 32, info.n_public,
                  &wrong, err, sizeof err);
      CHECK(wrong == 0);
    }
  }
  std::printf("%s: %d of 3 proofs verified (resident %llu B, streamed %llu B per proof, dropped %llu)\n", label,
              verified, (unsigned long long)plan.resident_bytes, (unsigned long long)plan.streamed_bytes_per_proof,
              (unsigned long long)plan.points_dropped);
  CHECK(cuzk_prover_destroy(prover, err, sizeof err) == CUZK_OK);
  return plan;
}

void key_in_memory(const std::string& dir, uint32_t curve) {
  char err[1024];
  const Prepared p = prepare(dir, curve, 1000, 2);
  cuzk_context* ctx = nullptr;
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 2, 0, &ctx, err, sizeof err) == CUZK_OK);

  cuzk_key* key = nullptr;
  cuzk_setup_info info{};
  cuzk_status st = cuzk_setup_insecure_dev_key(p.r1cs.c_str(), 0, CUZK_SETUP_CPU_ONLY, &key, &info, nullptr, err,
                                               sizeof err);
  CHECK(st == CUZK_OK && key != nullptr);
  if (st != CUZK_OK) { std::fprintf(stderr, "  dev key: %s\n", err); cuzk_context_destroy(ctx, nullptr, 0); return; }
  CHECK(info.struct_size == sizeof info && info.curve == curve && info.n_vars == p.n_vars && info.gpu == 0);

  // The file key of the same circuit: its point counts and infinities are the circuit's, not the waste's.
  const std::string zkey = dir + "/c.zkey";
  cuzk_setup_info file_info{};
  CHECK(cuzk_setup_insecure_dev(p.r1cs.c_str(), zkey.c_str(), 0, CUZK_SETUP_CPU_ONLY, &file_info, nullptr, err,
                                sizeof err) == CUZK_OK);
  CHECK(info.zkey_bytes < file_info.zkey_bytes);  // the points are not held
  cuzk_key* file_key = nullptr;
  CHECK(cuzk_key_open(zkey.c_str(), CUZK_KEY_POINTS_ON_DEMAND, &file_key, err, sizeof err) == CUZK_OK);

  const cuzk_memory_plan whole = prove_all(ctx, key, p, 0, "key in memory, automatic plan");
  const cuzk_memory_plan from_file = prove_all(ctx, file_key, p, 0, "file key on demand, automatic plan");
  bool same_counts = whole.points_dropped == from_file.points_dropped && whole.points_dropped > 0;
  for (int s = 0; s < CUZK_POINT_SECTIONS; s++)
    same_counts = same_counts && whole.points[s] == from_file.points[s] && whole.infinity[s] == from_file.infinity[s] &&
                  whole.stored[s] == from_file.stored[s];
  CHECK(same_counts);
  CHECK(whole.key_host_bytes == info.zkey_bytes);
  // Every section streamed (made again for every proof), and a budget that cannot fit.
  const uint64_t tight = whole.min_budget;
  const cuzk_memory_plan streamed = prove_all(ctx, key, p, tight, "key in memory, tight budget");
  CHECK(streamed.streamed_bytes_per_proof > 0);
  cuzk_prover_options opt{};
  opt.struct_size = sizeof opt;
  opt.memory_budget = whole.fixed_bytes / 2;
  cuzk_prover* refused = nullptr;
  CHECK(cuzk_prover_create_with(ctx, key, &opt, &refused, nullptr, err, sizeof err) == CUZK_ERR_OUT_OF_MEMORY);
  CHECK(refused == nullptr);

  // The vk of a key made in memory has the verification key's layout of the file key.
  size_t vk_a = 0, vk_b = 0;
  cuzk_key_export_vk(key, nullptr, 0, &vk_a, err, sizeof err);
  cuzk_key_export_vk(file_key, nullptr, 0, &vk_b, err, sizeof err);
  CHECK(vk_a == vk_b && vk_a > 0);

  CHECK(cuzk_key_close(file_key, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_key_close(key, err, sizeof err) == CUZK_OK);

  // The default flags (GPU 0 when there is one; here the CPU tables) make a key that proves too.
  st = cuzk_setup_insecure_dev_key(p.r1cs.c_str(), 1, 0, &key, &info, nullptr, err, sizeof err);
  CHECK(st == CUZK_OK);
  if (st == CUZK_OK) {
    prove_all(ctx, key, p, 0, "key in memory, default flags");
    CHECK(cuzk_key_close(key, err, sizeof err) == CUZK_OK);
  }
  CHECK(cuzk_context_destroy(ctx, err, sizeof err) == CUZK_OK);
}

// The generator's reads: any range, in any order, in pieces that cross its windows or not, gives
// the bytes of one read of the whole section; the marks say which points are infinity.
void generator_reads(const std::string& dir, uint32_t curve) {
  const Prepared p = prepare(dir, curve, 900, 1);
  cuzk::formats::FileBytes file;
  std::string e;
  CHECK(cuzk::formats::FileBytes::read(p.r1cs, cuzk::formats::kR1csContainer, file, e) == CUZK_OK);
  cuzk::formats::R1cs r1cs;
  CHECK(cuzk::formats::parse_r1cs(file.data(), file.size(), r1cs, e) == CUZK_OK);
  cuzk::setup::test_hooks::generated_points_window = 37;  // many windows: 1000-odd points per section
  cuzk::formats::FileBytes bytes;
  std::unique_ptr<cuzk::formats::PointSource> points;
  cuzk_setup_info info{};
  cuzk::Progress progress;
  cuzk::ThreadPool pool(2);
  CHECK(cuzk::setup::setup_insecure_dev_in_memory(r1cs, pool, CUZK_SETUP_CPU_ONLY, progress, info, bytes, points, e) ==
        CUZK_OK);
  cuzk::setup::test_hooks::generated_points_window = 0;
  if (!points) { std::fprintf(stderr, "  %s\n", e.c_str()); return; }
  cuzk::formats::ZkeyGroth16 z;
  CHECK(cuzk::formats::parse_zkey(bytes.data(), bytes.size(), z, e) == CUZK_OK);
  CHECK(bytes.bytes_in_memory() == info.zkey_bytes && info.zkey_bytes < bytes.size());
  cuzk::setup::SeededRng rng(17);
  int equal = 0, sections = 0;
  for (int si = 0; si < cuzk::formats::kPointSections; si++) {
    const auto s = (cuzk::formats::PointSection)si;
    const uint64_t count = z.point_count(s), pb = z.point_bytes(s);
    Bytes whole(count * pb), pieces(count * pb, 0xaa);
    CHECK(points->read(s, 0, count, whole.data(), e) == CUZK_OK);
    // Pieces of 1..80 points, in a shuffled order.
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (uint64_t at = 0; at < count;) {
      const uint64_t n = std::min<uint64_t>(count - at, 1 + rng.below(80));
      ranges.push_back({at, n});
      at += n;
    }
    for (size_t i = ranges.size(); i > 1; i--) std::swap(ranges[i - 1], ranges[rng.below((uint32_t)i)]);
    for (auto [at, n] : ranges) CHECK(points->read(s, at, n, pieces.data() + at * pb, e) == CUZK_OK);
    sections++;
    equal += whole == pieces;
    CHECK(whole == pieces);
    // Marks against the points made: zero bytes exactly where the mark is 0.
    Bytes marks(count);
    CHECK(points->finite_marks(s, 0, count, marks.data()));
    uint64_t wrong = 0, infinities = 0;
    for (uint64_t k = 0; k < count; k++) {
      bool zero = true;
      for (uint64_t b = 0; b < pb; b++) zero = zero && whole[k * pb + b] == 0;
      wrong += zero == (marks[k] != 0);
      infinities += zero;
    }
    CHECK(wrong == 0);
    if (s == cuzk::formats::kSecB1) CHECK(infinities > 0);  // the porep profile's B is sparse
  }
  std::printf("generator reads (%s): %d of %d sections equal in pieces across windows of 37 points\n",
              curve == CUZK_CURVE_BN254 ? "bn254" : "bls12_381", equal, sections);
}

// Making a prover from a key in memory makes its points (seconds at large sizes): the upload
// reports its bytes as it goes and stops at a cancel between chunks, leaving no prover; a prover
// made afterwards proves.
void upload_progress_and_cancel(const std::string& dir) {
  char err[1024];
  const Prepared p = prepare(dir, CUZK_CURVE_BLS12_381, 1u << 15, 1);
  cuzk_key* key = nullptr;
  CHECK(cuzk_setup_insecure_dev_key(p.r1cs.c_str(), 0, CUZK_SETUP_CPU_ONLY, &key, nullptr, nullptr, err, sizeof err) ==
        CUZK_OK);
  cuzk_context* ctx = nullptr;
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 2, 0, &ctx, err, sizeof err) == CUZK_OK);
  if (!key || !ctx) return;

  cuzk_progress progress{};
  progress.struct_size = sizeof progress;
  std::atomic<bool> stop{false};
  uint64_t seen_done = 0, seen_total = 0;
  uint32_t seen_stage = 0;
  std::thread canceller([&] {  // as a caller's timer would: cancel once the upload has begun
    while (!stop.load()) {
      const uint64_t done = __atomic_load_n(&progress.done, __ATOMIC_ACQUIRE);
      if (done > 0) {
        seen_done = done;
        seen_total = __atomic_load_n(&progress.total, __ATOMIC_ACQUIRE);
        seen_stage = __atomic_load_n(&progress.stage, __ATOMIC_ACQUIRE);
        __atomic_store_n(&progress.cancel, 1u, __ATOMIC_RELEASE);
        return;
      }
    }
  });
  cuzk_prover* prover = nullptr;
  const cuzk_status st = cuzk_prover_create(ctx, key, 0, &prover, &progress, err, sizeof err);
  stop = true;
  canceller.join();
  CHECK(st == CUZK_ERR_CANCELLED && prover == nullptr);
  CHECK(std::strstr(err, "during the key upload") != nullptr);
  CHECK(seen_stage == CUZK_STAGE_KEY_UPLOAD && seen_done > 0 && seen_done < seen_total);
  CHECK(progress.done < progress.total);  // stopped between chunks, before the end
  std::printf("key upload cancelled after %llu of %llu bytes: %s\n", (unsigned long long)progress.done,
              (unsigned long long)progress.total, err);

  // Again without a cancel: the whole upload counted, and the prover proves.
  cuzk_progress again{};
  again.struct_size = sizeof again;
  CHECK(cuzk_prover_create(ctx, key, 0, &prover, &again, err, sizeof err) == CUZK_OK);
  CHECK(again.total > 0 && again.done == again.total);
  if (prover) {
    cuzk_key_info info{};
    cuzk_key_get_info(key, &info, nullptr, 0);
    Bytes proof(info.proof_bytes);
    CHECK(prove_call(prover, p.witnesses[1].data(), p.witnesses[1].size(), CUZK_WITNESS_RAW, 1, nullptr, nullptr, 0,
                     proof.data(), proof.size(), nullptr, nullptr, err, sizeof err) == CUZK_OK);
    CHECK(cuzk_prover_destroy(prover, err, sizeof err) == CUZK_OK);
  }
  CHECK(cuzk_key_close(key, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_context_destroy(ctx, err, sizeof err) == CUZK_OK);
}

void refusals(const std::string& dir) {
  char err[512];
  cuzk_key* key = reinterpret_cast<cuzk_key*>(1);
  CHECK(cuzk_setup_insecure_dev_key(nullptr, 0, 0, &key, nullptr, nullptr, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_setup_insecure_dev_key((dir + "/c.r1cs").c_str(), 0, 0, nullptr, nullptr, nullptr, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_setup_insecure_dev_key((dir + "/missing.r1cs").c_str(), 0, 0, &key, nullptr, nullptr, err, sizeof err) ==
        CUZK_ERR_IO);
  CHECK(key == nullptr);
  CHECK(cuzk_setup_insecure_dev_key((dir + "/c.r1cs").c_str(), 0, 0x80, &key, nullptr, nullptr, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  const std::string junk = dir + "/junk.r1cs";
  {
    std::FILE* f = std::fopen(junk.c_str(), "wb");
    std::fputs("r1cs but not really", f);
    std::fclose(f);
  }
  CHECK(cuzk_setup_insecure_dev_key(junk.c_str(), 0, 0, &key, nullptr, nullptr, err, sizeof err) == CUZK_ERR_FORMAT);
  CHECK(key == nullptr);
  // A cancel before the work: no key.
  cuzk_progress progress{};
  progress.struct_size = sizeof progress;
  progress.cancel = 1;
  CHECK(cuzk_setup_insecure_dev_key((dir + "/c.r1cs").c_str(), 0, CUZK_SETUP_CPU_ONLY, &key, nullptr, &progress, err,
                                    sizeof err) == CUZK_ERR_CANCELLED);
  CHECK(key == nullptr);
}

}  // namespace

int main() {
  fast_equals_reference();
  for (uint32_t curve : {CUZK_CURVE_BN254, CUZK_CURVE_BLS12_381}) {
    other_witnesses(curve, CUZK_SYNTH_POREP);
    other_witnesses(curve, CUZK_SYNTH_UNIFORM);
  }
  cuzk_test::ScratchDir dir("cuzk_dev_key_");
  for (uint32_t curve : {CUZK_CURVE_BN254, CUZK_CURVE_BLS12_381}) {
    key_in_memory(dir.path(), curve);
    generator_reads(dir.path(), curve);
  }
  upload_progress_and_cancel(dir.path());
  refusals(dir.path());
  return cuzk_test::finish("dev_key_test");
}
