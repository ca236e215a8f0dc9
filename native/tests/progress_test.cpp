// Progress and cancellation of long calls (cuzk_progress, CUZK_ERR_CANCELLED) and the batch
// pipeline, on the CPU backend through the C ABI: a batch cancelled between proofs (from another
// thread, and before the call) returns nothing and leaks nothing, and the same prover then proves
// and verifies; a setup cancelled between chunks leaves no file; counters reach their totals on
// success; a bad witness at index k of a batch fails with its own status and message; proof k+1's
// check runs beside proof k's MSMs (the timings show it).
#include <dirent.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "fixture.hpp"
#include "cuzk.h"
#include "prove_call.hpp"
#include "formats/wtns.hpp"

namespace {

constexpr uint32_t kConstraints = 4096, kPublic = 2;

bool file_exists(const std::string& p) { return std::ifstream(p).good(); }

using cuzk_test::read_file;

// Files in dir whose name contains `part` (the setup's temporaries are <zkey>.tmp.<pid>).
int files_containing(const std::string& dir, const std::string& part) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) n += std::string(e->d_name).find(part) != std::string::npos;
    closedir(d);
  }
  return n;
}


struct Leaks {
  uint64_t live = 0, bytes = 0, pinned = 0, staging = 0, staging_allocs = 0;
  int threads = 0;
  static Leaks now() {
    Leaks l;
    cuzk_host_stats(&l.live, &l.bytes, &l.pinned, nullptr);
    cuzk_staging_stats(&l.staging, &l.staging_allocs, nullptr);
    l.threads = cuzk_test::threads_now();
    return l;
  }
  bool operator==(const Leaks& o) const {
    return live == o.live && bytes == o.bytes && pinned == o.pinned && staging == o.staging &&
           staging_allocs == o.staging_allocs && threads == o.threads;
  }
};

cuzk_progress fresh_progress() {
  cuzk_progress p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  return p;
}

uint64_t load(const uint64_t& v) { return __atomic_load_n(&v, __ATOMIC_ACQUIRE); }
void request_cancel(cuzk_progress& p) { __atomic_store_n(&p.cancel, 1u, __ATOMIC_RELEASE); }

// Asks `p`'s call to stop, from another thread, once it reports its first unit done; joined when
// the scope ends (also when the call finished before that).
class CancelAfterFirstUnit {
 public:
  explicit CancelAfterFirstUnit(cuzk_progress& p) : thread_([this, &p] {
    while (!stop_.load() && load(p.done) < 1) std::this_thread::yield();
    request_cancel(p);
  }) {}
  ~CancelAfterFirstUnit() { join(); }
  void join() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A synthetic BN254 circuit with its INSECURE dev key, opened with a CPU prover.
struct Circuit : cuzk_test::CpuProver {
  std::string dir, r1cs, wtns, zkey;
  std::vector<uint8_t> witness;  // the .wtns file
  std::vector<uint8_t> raw;      // its n_vars raw values

  bool make(const std::string& d) {
    dir = d;
    r1cs = dir + "/c.r1cs";
    wtns = dir + "/c.wtns";
    zkey = dir + "/c.zkey";
    if (cuzk_synth_circuit_write(CUZK_CURVE_BN254, CUZK_SYNTH_UNIFORM, kConstraints, kPublic, 5, r1cs.c_str(),
                                 wtns.c_str(), err, sizeof err) != CUZK_OK)
      return false;
    cuzk_progress prog = fresh_progress();
    cuzk_setup_info si;
    if (cuzk_setup_insecure_dev(r1cs.c_str(), zkey.c_str(), 0, CUZK_SETUP_CPU_ONLY, &si, &prog, err, sizeof err) !=
        CUZK_OK)
      return false;
    // Setup counters: every key point (6 in the header, IC, A, B1, B2, C, H).
    const uint64_t points = 6 + (si.n_public + 1) + 3ull * si.n_vars + (si.n_vars - si.n_public - 1) + si.domain_size;
    CHECK(prog.stage == CUZK_STAGE_SETUP);
    CHECK(prog.total == points);
    CHECK(prog.done == prog.total);
    witness = read_file(wtns);
    cuzk::formats::Wtns w;
    std::string e;
    if (cuzk::formats::parse_wtns_layout(witness.data(), witness.size(), w, e) != CUZK_OK) return false;
    raw.assign(w.values, w.values + (size_t)w.n_witness * 32);
    cuzk_progress up = fresh_progress();
    if (!open(zkey, "", &up)) return false;
    // The CPU engine reads the key in place: nothing to upload, and the counters say so.
    CHECK(up.stage == CUZK_STAGE_KEY_UPLOAD && up.done == up.total);
    return true;
  }

  // A proof of this circuit's witness (its public signals are raw's w[1..n_public]).
  bool verify(const uint8_t* proof) { return CpuProver::verify(proof, raw.data() + 32); }

  // n copies of the raw witness.
  std::vector<uint8_t> batch(size_t n) const {
    std::vector<uint8_t> b;
    for (size_t i = 0; i < n; i++) b.insert(b.end(), raw.begin(), raw.end());
    return b;
  }
};

bool all_zero(const std::vector<uint8_t>& v) {
  for (uint8_t x : v)
    if (x) return false;
  return true;
}

void test_batch_progress_and_overlap(Circuit& c) {
  const size_t n = 3;
  std::vector<uint8_t> w = c.batch(n), proofs(n * c.info.proof_bytes, 0xee);
  std::vector<cuzk_timings> t(n);
  cuzk_progress prog = fresh_progress();
  // The phases a watcher sees while the batch runs: the work's (never the checks that run ahead).
  std::atomic<bool> running{true};
  std::atomic<uint32_t> seen_mask{0};
  std::thread watcher([&] {
    while (running.load()) {
      const uint32_t ph = __atomic_load_n(&prog.phase, __ATOMIC_ACQUIRE);
      if (ph > 0 && ph <= 32) seen_mask |= 1u << (ph - 1);
    }
  });
  cuzk_status st = prove_call(c.prover, w.data(), c.raw.size(), CUZK_WITNESS_RAW, n, nullptr, nullptr, 0,
                              proofs.data(), proofs.size(), t.data(), &prog, c.err, sizeof c.err);
  running = false;
  watcher.join();
  CHECK(st == CUZK_OK);
  if (st != CUZK_OK) std::fprintf(stderr, "  prove: %s\n", c.err);
  CHECK(prog.stage == CUZK_STAGE_PROVE && prog.total == n && prog.done == n && prog.cancel == 0);
  CHECK(prog.phase == CUZK_PHASE_SELF_CHECK + 1);  // the last step of a self-checked batch
  CHECK((seen_mask & ((1u << CUZK_PHASE_PARSE) | (1u << CUZK_PHASE_WITNESS_CHECK))) == 0);
  CHECK((seen_mask & ~((1u << CUZK_PHASE_PARSE) | (1u << CUZK_PHASE_WITNESS_CHECK))) != 0);
  std::printf("  batch of %zu: phases seen by a watcher: mask 0x%x\n", n, seen_mask.load());
  for (size_t p = 0; p < n; p++) CHECK(c.verify(proofs.data() + p * c.info.proof_bytes));
  // Each proof's check is timed on its own, and proof p+1's starts before proof p's last MSM ends:
  // it ran beside it (the helper thread), not before the batch.
  for (size_t p = 0; p + 1 < n; p++) {
    const cuzk_interval parse_next = t[p + 1].phases[CUZK_PHASE_PARSE], msm_h = t[p].phases[CUZK_PHASE_MSM_H];
    CHECK(parse_next.start_ns > 0 && parse_next.start_ns < msm_h.end_ns);
    CHECK(t[p + 1].phases[CUZK_PHASE_PARSE].start_ns > t[p].phases[CUZK_PHASE_PARSE].start_ns);
  }
  std::printf("  batch of %zu: PARSE[1] starts at %.2f ms, MSM_H[0] ends at %.2f ms\n", n,
              t[1].phases[CUZK_PHASE_PARSE].start_ns / 1e6, t[0].phases[CUZK_PHASE_MSM_H].end_ns / 1e6);

  // CUZK_INPUT_ABC counts its proofs the same way.
  const size_t d = c.info.domain_size;
  std::vector<uint8_t> zeros(2 * d * 32, 0), abc_proofs(2 * c.info.proof_bytes);
  std::vector<uint8_t> assignment = c.batch(2);
  prog = fresh_progress();
  st = prove_call_abc(c.prover, zeros.data(), zeros.data(), zeros.data(), assignment.data(), 2, nullptr, nullptr,
                      CUZK_PROVE_NO_SELF_CHECK, abc_proofs.data(), abc_proofs.size(), nullptr, &prog, c.err,
                      sizeof c.err);
  CHECK(st == CUZK_OK && prog.stage == CUZK_STAGE_PROVE && prog.total == 2 && prog.done == 2);
  CHECK(prog.phase == CUZK_PHASE_FINALIZE + 1);  // no self-check: finalizing was the last step
}

void test_cancel_batch(Circuit& c) {
  const size_t n = 24;
  std::vector<uint8_t> w = c.batch(n), proofs(n * c.info.proof_bytes, 0xee);
  const Leaks before = Leaks::now();

  // From another thread, once the first proof is done.
  cuzk_progress prog = fresh_progress();
  CancelAfterFirstUnit watcher(prog);
  cuzk_status st = prove_call(c.prover, w.data(), c.raw.size(), CUZK_WITNESS_RAW, n, nullptr, nullptr, 0,
                              proofs.data(), proofs.size(), nullptr, &prog, c.err, sizeof c.err);
  watcher.join();
  CHECK(st == CUZK_ERR_CANCELLED);
  std::printf("  cancelled batch: %s (done %llu of %llu)\n", c.err, (unsigned long long)prog.done,
              (unsigned long long)prog.total);
  CHECK(std::strstr(c.err, "cancelled after") != nullptr);
  CHECK(prog.done >= 1 && prog.done < n && prog.total == n);
  CHECK(all_zero(proofs));
  CHECK(Leaks::now() == before);

  // Before the call: nothing runs, total is still reported.
  prog = fresh_progress();
  prog.cancel = 1;
  std::fill(proofs.begin(), proofs.end(), 0xee);
  st = prove_call(c.prover, w.data(), c.raw.size(), CUZK_WITNESS_RAW, 4, nullptr, nullptr, 0, proofs.data(),
                  proofs.size(), nullptr, &prog, c.err, sizeof c.err);
  CHECK(st == CUZK_ERR_CANCELLED && prog.done == 0 && prog.total == 4);
  CHECK(std::strcmp(cuzk_status_name(st), "CANCELLED") == 0);
  CHECK(Leaks::now() == before);

  // The same prover works afterwards.
  std::vector<uint8_t> two(2 * c.info.proof_bytes);
  st = prove_call(c.prover, w.data(), c.raw.size(), CUZK_WITNESS_RAW, 2, nullptr, nullptr, 0, two.data(), two.size(),
                  nullptr, nullptr, c.err, sizeof c.err);
  CHECK(st == CUZK_OK);
  CHECK(c.verify(two.data()) && c.verify(two.data() + c.info.proof_bytes));
}

void test_bad_witness_in_batch(Circuit& c) {
  const size_t n = 4, k = 2;
  std::vector<uint8_t> proofs(n * c.info.proof_bytes, 0xee);
  const Leaks before = Leaks::now();
  {  // w[0] != 1 at proof k: its status and message, the proofs before it were computed
    std::vector<uint8_t> w = c.batch(n);
    w[k * c.raw.size()] = 2;
    cuzk_progress prog = fresh_progress();
    cuzk_status st = prove_call(c.prover, w.data(), c.raw.size(), CUZK_WITNESS_RAW, n, nullptr, nullptr, 0,
                                proofs.data(), proofs.size(), nullptr, &prog, c.err, sizeof c.err);
    CHECK(st == CUZK_ERR_UNSATISFIED);
    CHECK(std::strcmp(c.err, "proof 2: witness w[0] must be 1 (the constant wire)") == 0);
    CHECK(prog.done == k);
    CHECK(all_zero(proofs));
  }
  {  // a value not < r at proof k, value 7
    std::vector<uint8_t> w = c.batch(n);
    std::memset(&w[k * c.raw.size() + 7 * 32], 0xff, 32);
    std::fill(proofs.begin(), proofs.end(), 0xee);
    cuzk_status st = prove_call(c.prover, w.data(), c.raw.size(), CUZK_WITNESS_RAW, n, nullptr, nullptr, 0,
                                proofs.data(), proofs.size(), nullptr, nullptr, c.err, sizeof c.err);
    CHECK(st == CUZK_ERR_INVALID_ARGUMENT);
    CHECK(std::strcmp(c.err, "proof 2: witness value 7 is not < r") == 0);
    CHECK(all_zero(proofs));
  }
  {  // a malformed .wtns record at proof k (the header's magic)
    std::vector<uint8_t> w;
    for (size_t i = 0; i < n; i++) w.insert(w.end(), c.witness.begin(), c.witness.end());
    w[k * c.witness.size()] = 'x';
    cuzk_status st = prove_call(c.prover, w.data(), c.witness.size(), CUZK_WITNESS_WTNS, n, nullptr, nullptr, 0,
                                proofs.data(), proofs.size(), nullptr, nullptr, c.err, sizeof c.err);
    CHECK(st == CUZK_ERR_FORMAT);
    CHECK(std::strncmp(c.err, "proof 2: .wtns", 14) == 0);
  }
  CHECK(Leaks::now() == before);
}

void test_progress_arguments(Circuit& c) {
  std::vector<uint8_t> proof(c.info.proof_bytes);
  alignas(8) uint8_t storage[64] = {};
  const uint32_t size = sizeof(cuzk_progress);
  std::memcpy(storage + 4, &size, sizeof size);  // no member access: the pointer is misaligned on purpose
  cuzk_progress* misaligned = reinterpret_cast<cuzk_progress*>(storage + 4);
  CHECK(prove_call(c.prover, c.raw.data(), c.raw.size(), CUZK_WITNESS_RAW, 1, nullptr, nullptr, 0, proof.data(),
                   proof.size(), nullptr, misaligned, c.err, sizeof c.err) == CUZK_ERR_INVALID_ARGUMENT);
  cuzk_progress small = fresh_progress();
  small.struct_size = 16;
  CHECK(prove_call(c.prover, c.raw.data(), c.raw.size(), CUZK_WITNESS_RAW, 1, nullptr, nullptr, 0, proof.data(),
                   proof.size(), nullptr, &small, c.err, sizeof c.err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strstr(c.err, "struct_size") != nullptr);
  cuzk_prover* p = nullptr;
  CHECK(cuzk_prover_create(c.ctx, c.key, 0, &p, &small, c.err, sizeof c.err) == CUZK_ERR_INVALID_ARGUMENT && !p);
  CHECK(cuzk_setup_insecure_dev(c.r1cs.c_str(), (c.dir + "/never.zkey").c_str(), 0, CUZK_SETUP_CPU_ONLY, nullptr,
                                &small, c.err, sizeof c.err) == CUZK_ERR_INVALID_ARGUMENT);

  // A prover creation cancelled before it starts: no prover, nothing held.
  const Leaks before = Leaks::now();
  cuzk_progress prog = fresh_progress();
  prog.cancel = 1;
  CHECK(cuzk_prover_create(c.ctx, c.key, 0, &p, &prog, c.err, sizeof c.err) == CUZK_ERR_CANCELLED && !p);
  CHECK(Leaks::now() == before);
  // The key and context are not left marked busy by it.
  cuzk_prover* again = nullptr;
  CHECK(cuzk_prover_create(c.ctx, c.key, 0, &again, nullptr, c.err, sizeof c.err) == CUZK_OK);
  CHECK(cuzk_prover_destroy(again, c.err, sizeof c.err) == CUZK_OK);
}

void test_cancel_setup(Circuit& c) {
  const std::string zkey = c.dir + "/cancelled.zkey";
  const Leaks before = Leaks::now();
  // From another thread, once the first points are made: stops at the next chunk.
  cuzk_progress prog = fresh_progress();
  CancelAfterFirstUnit watcher(prog);
  cuzk_status st = cuzk_setup_insecure_dev(c.r1cs.c_str(), zkey.c_str(), 0, CUZK_SETUP_CPU_ONLY, nullptr, &prog,
                                           c.err, sizeof c.err);
  watcher.join();
  CHECK(st == CUZK_ERR_CANCELLED);
  std::printf("  cancelled setup: %s\n", c.err);
  CHECK(prog.stage == CUZK_STAGE_SETUP && prog.done >= 1 && prog.done < prog.total);
  CHECK(!file_exists(zkey));
  CHECK(files_containing(c.dir, ".tmp.") == 0);
  CHECK(Leaks::now() == before);

  // Before the call: nothing written either.
  prog = fresh_progress();
  prog.cancel = 1;
  st = cuzk_setup_insecure_dev(c.r1cs.c_str(), zkey.c_str(), 0, CUZK_SETUP_CPU_ONLY, nullptr, &prog, c.err,
                               sizeof c.err);
  CHECK(st == CUZK_ERR_CANCELLED && prog.done == 0);
  CHECK(!file_exists(zkey) && files_containing(c.dir, ".tmp.") == 0);

  // The same call without cancel then makes a key that proves.
  prog = fresh_progress();
  st = cuzk_setup_insecure_dev(c.r1cs.c_str(), zkey.c_str(), 0, CUZK_SETUP_CPU_ONLY, nullptr, &prog, c.err,
                               sizeof c.err);
  CHECK(st == CUZK_OK && prog.done == prog.total && file_exists(zkey));
  std::remove(zkey.c_str());
}

}  // namespace

int main() {
  const cuzk_test::ScratchDir dir("cuzk_progress_");
  {
    Circuit c;
    const bool made = c.make(dir.path());
    CHECK(made);
    if (!made) {
      std::fprintf(stderr, "  circuit: %s\n", c.err);
    } else {
      test_batch_progress_and_overlap(c);
      test_cancel_batch(c);
      test_bad_witness_in_batch(c);
      test_progress_arguments(c);
      test_cancel_setup(c);
    }
  }
  return cuzk_test::finish("progress_test");
}
