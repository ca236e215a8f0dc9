// What the key memory plan tests share (key_memory_test on the CPU, gpu/key_memory_test on the
// GPU): one proof through a prover made with a given memory budget, the plan's counts, and the
// batches that read streamed sections once per group of proofs.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cuzk.h"
#include "prove_call.hpp"

namespace cuzk_test {

// One attempt: a prover made with `budget` (0: automatic) over a key, its plan, its one proof.
struct PlanAttempt {
  cuzk_status create = CUZK_ERR_INTERNAL, prove = CUZK_ERR_INTERNAL;
  cuzk_memory_plan plan{};
  std::vector<uint8_t> proof;
  cuzk_timings timings{};
  char err[1024] = {0};
};

// The options of a prover made with `budget` (0: automatic) and `prover_flags` (CUZK_PROVER_*).
inline cuzk_prover_options prover_options(uint64_t budget, uint32_t prover_flags, uint32_t chunk_points = 0,
                                          uint64_t host_budget = 0, int32_t h_copies = CUZK_H_COPIES_AUTO) {
  cuzk_prover_options opt{};
  opt.struct_size = sizeof opt;
  opt.flags = prover_flags;
  opt.memory_budget = budget;
  opt.h_copies = h_copies;
  opt.chunk_points = chunk_points;
  opt.host_memory_budget = host_budget;
  return opt;
}

// The proof of `wtns` (a .wtns file) with fixed r, s; the prover is destroyed before this returns.
// between(): called after the prover is made (and after a refused creation), e.g. to measure memory.
template <class Between>
PlanAttempt prove_with_budget(cuzk_context* ctx, cuzk_key* key, uint64_t budget, const std::vector<uint8_t>& wtns,
                              uint32_t flags, Between&& between, uint32_t prover_flags = 0,
                              uint32_t chunk_points = 0, uint64_t host_budget = 0) {
  PlanAttempt a;
  cuzk_key_info info{};
  cuzk_key_get_info(key, &info, nullptr, 0);
  const cuzk_prover_options opt = prover_options(budget, prover_flags, chunk_points, host_budget);
  cuzk_prover* prover = nullptr;
  a.create = cuzk_prover_create_with(ctx, key, &opt, &prover, nullptr, a.err, sizeof a.err);
  between();
  if (a.create != CUZK_OK) return a;
  cuzk_prover_memory_plan(prover, &a.plan, a.err, sizeof a.err);
  uint8_t r[32] = {7}, s[32] = {11};
  a.proof.assign(info.proof_bytes, 0);
  a.prove = prove_call(prover, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, 1, r, s, flags, a.proof.data(),
                       a.proof.size(), &a.timings, nullptr, a.err, sizeof a.err);
  cuzk_prover_destroy(prover, nullptr, 0);
  return a;
}

// This process's resident set (/proc/self/statm), for the host memory a key holds.
inline uint64_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * (uint64_t)::sysconf(_SC_PAGESIZE);
}

// Sections the engine holds (stored bytes > 0) with this placement.
inline int count_placement(const cuzk_memory_plan& p, uint32_t placement) {
  int n = 0;
  for (int s = 0; s < CUZK_POINT_SECTIONS; s++) n += p.stored_bytes[s] && p.placement[s] == placement;
  return n;
}

// The largest section held: the stream buffer of a plan that streams everything.
inline uint64_t largest_section(const cuzk_memory_plan& p) {
  uint64_t m = 0;
  for (int s = 0; s < CUZK_POINT_SECTIONS; s++) m = std::max(m, p.stored_bytes[s]);
  return m;
}

// The largest of A, B1, B2 and C: with H resident, the stream buffer of the mixed plan the tests ask for.
inline uint64_t largest_but_h(const cuzk_memory_plan& p) {
  uint64_t m = 0;
  for (int s = 0; s < CUZK_POINT_SECTIONS - 1; s++) m = std::max(m, p.stored_bytes[s]);
  return m;
}

// Bytes in cuzk_host_alloc memory (pinned where a driver is), a copy of `from`; data() is null
// when the allocation failed.
class HostRecords {
 public:
  explicit HostRecords(const std::vector<uint8_t>& from) {
    if (cuzk_host_alloc(from.size(), CUZK_HOST_PINNED, 0, &p_, nullptr, nullptr, 0) == CUZK_OK)
      std::memcpy(p_, from.data(), from.size());
    else
      p_ = nullptr;
  }
  ~HostRecords() { cuzk_host_free(p_, nullptr, 0); }
  HostRecords(const HostRecords&) = delete;
  HostRecords& operator=(const HostRecords&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(p_); }

 private:
  void* p_ = nullptr;
};

// A batch with streamed sections reads each once per group of proofs (engine::stream_group_size):
// as many proofs as the budget's room left after the plan keeps scalars for (the CPU engine keeps
// a proof's H scalars, domain_size x 32 bytes; the GPU engine also its witness, n_vars x 32, when
// a witness section streams: gpu_keeps_witness). The key (made from the synthetic PoRep circuit
// of `curve`, n_constraints, 2 public, seed 3, whose witnesses cuzk_synth_witnesses makes) is
// proven in batches of 5 different witnesses with fixed r, s: once read in place by `ref` (the
// reference proofs, self-checked), then on demand by `ctx` with every section streamed
// (CUZK_PROVER_STREAM_ALL) and budgets that give groups of 1, 2, 3 and the whole batch, with
// CUZK_PROVER_STREAM_PER_PROOF, and with the plan the chooser makes of a larger budget. Each batch's
// proofs must equal the reference's, and the order of the phases must show the grouping: a
// group's streamed MSMs start after its last proof's NTT; alone, a proof's streamed MSMs end
// before the next proof starts. The key read whole with the default budget (everything resident)
// proves the same batch with proofs overlapped (kept_on_host: the CUDA engine, whose plan must
// then hold a second proof's buffers when asked with CUZK_PROVER_OVERLAP) and without. A bad witness
// inside a group, and in an overlapped batch, fails the batch naming it, with no proof returned,
// and the prover proves the next batch. Prints a line per case; returns the number of failed cases.
inline int check_grouped_batches(const std::string& label, const std::string& zkey, uint32_t curve,
                                 uint32_t n_constraints, cuzk_context* ref_ctx, cuzk_context* ctx,
                                 bool kept_on_host, bool* four_vectors_seen = nullptr) {
  constexpr size_t kBatch = 5;
  char err[1024];
  int failures = 0;
  cuzk_key *whole = nullptr, *lazy = nullptr;
  if (cuzk_key_open(zkey.c_str(), 0, &whole, err, sizeof err) != CUZK_OK ||
      cuzk_key_open(zkey.c_str(), CUZK_KEY_POINTS_ON_DEMAND, &lazy, err, sizeof err) != CUZK_OK) {
    std::fprintf(stderr, "  %s: %s\n", label.c_str(), err);
    cuzk_key_close(whole, nullptr, 0);
    return 1;
  }
  cuzk_key_info info{};
  info.struct_size = sizeof info;
  cuzk_key_get_info(whole, &info, nullptr, 0);
  const size_t record = (size_t)info.n_vars * 32;  // raw values
  std::vector<uint8_t> witnesses(kBatch * record);
  uint8_t* values[kBatch];
  const uint64_t seeds[kBatch] = {0, 21, 22, 23, 24};
  for (size_t i = 0; i < kBatch; i++) values[i] = witnesses.data() + i * record;
  if (cuzk_synth_witnesses(curve, CUZK_SYNTH_POREP, n_constraints, 2, 3, seeds, values, kBatch, record, err,
                           sizeof err) != CUZK_OK ||
      std::memcmp(values[0], values[1], record) == 0) {
    std::fprintf(stderr, "  %s: witnesses: %s\n", label.c_str(), err);
    failures++;
  }
  // The same records in cuzk_host_alloc memory, pinned where a driver is (the CUDA engine uploads a
  // pinned witness ahead, while the proof before it computes); one case reads the pageable copy.
  HostRecords pinned(witnesses), bad_pinned(witnesses);
  std::memset(bad_pinned.data() + 3 * record + 5 * 32, 0xff, 32);  // w[5] of proof 3 >= r
  if (!pinned.data() || !bad_pinned.data()) {
    std::fprintf(stderr, "  %s: cuzk_host_alloc failed\n", label.c_str());
    failures++;
    return failures;
  }
  uint8_t r[kBatch * 32] = {}, s[kBatch * 32] = {};
  for (size_t i = 0; i < kBatch; i++) r[i * 32] = (uint8_t)(7 + i), s[i * 32] = (uint8_t)(11 + i);
  auto prove_batch = [&](cuzk_context* c, cuzk_key* key, uint64_t budget, uint32_t flags, cuzk_memory_plan* plan,
                         cuzk_timings* timings, const uint8_t* values_in = nullptr,
                         int32_t h_copies = CUZK_H_COPIES_AUTO) {
    const cuzk_prover_options opt = prover_options(budget, flags, 0, 0, h_copies);
    cuzk_prover* prover = nullptr;
    std::vector<uint8_t> proofs(kBatch * info.proof_bytes, 0);
    cuzk_status st = cuzk_prover_create_with(c, key, &opt, &prover, nullptr, err, sizeof err);
    if (st == CUZK_OK) {
      if (plan) cuzk_prover_memory_plan(prover, plan, nullptr, 0);
      st = prove_call(prover, values_in ? values_in : pinned.data(), record, CUZK_WITNESS_RAW, kBatch, r, s, 0, proofs.data(),
                      proofs.size(), timings, nullptr, err, sizeof err);
      cuzk_prover_destroy(prover, nullptr, 0);
    }
    if (st != CUZK_OK) {
      std::fprintf(stderr, "  %s: %s\n", label.c_str(), err);
      failures++;
    }
    return proofs;
  };
  const std::vector<uint8_t> ref = prove_batch(ref_ctx, whole, 0, 0, nullptr, nullptr);
  cuzk_memory_plan all{};
  prove_batch(ctx, lazy, 0, CUZK_PROVER_STREAM_ALL, &all, nullptr);
  // The kept H scalars of a proof: in the budget's room (CPU) or in host memory (CUDA, whose
  // default host budget holds the whole batch's).
  const uint64_t per_proof = (uint64_t)info.domain_size * 32;
  const uint64_t base = all.total_bytes;
  struct Case {
    const char* name;
    uint64_t room;
    bool all_streamed, per_proof_only, pageable;
  } cases[] = {{"all streamed, no room", 0, true, false, false},
               {"all streamed, room for 2", 2 * per_proof, true, false, false},
               {"all streamed, room for 3", 3 * per_proof + per_proof / 2, true, false, false},
               {"all streamed, room for all", kBatch * per_proof, true, false, false},
               {"all streamed, room for all, pageable witnesses", kBatch * per_proof, true, false, true},
               {"all streamed, room for all, CUZK_PROVER_STREAM_PER_PROOF", kBatch * per_proof, true, true, false},
               {"the chooser's plan of a budget with room for 4", 4 * per_proof, false, false, false}};
  for (const Case& c : cases) {
    const uint32_t flags = (c.all_streamed ? CUZK_PROVER_STREAM_ALL : 0) | (c.per_proof_only ? CUZK_PROVER_STREAM_PER_PROOF : 0);
    cuzk_memory_plan plan{};
    cuzk_timings t[kBatch];
    const std::vector<uint8_t> proofs =
        prove_batch(ctx, lazy, base + c.room, flags, &plan, t, c.pageable ? witnesses.data() : nullptr);
    // The group the plan's room allows, and the phases' order it implies.
    const uint64_t room = plan.budget > plan.total_bytes ? plan.budget - plan.total_bytes : 0;
    const bool h_streams = plan.stored_bytes[4] && plan.placement[4] == CUZK_PLACEMENT_STREAMED;
    size_t group = kept_on_host || !h_streams ? kBatch : (size_t)std::min<uint64_t>(room / per_proof, kBatch);
    if (group < 2 || c.per_proof_only) group = 1;
    if (!c.per_proof_only && count_placement(plan, CUZK_PLACEMENT_STREAMED) > 0 &&
        std::min<uint64_t>(plan.group_max, kBatch) != (group < 2 ? 1 : group)) {
      std::printf("%s, %s: the plan says groups of %llu, expected %zu\n", label.c_str(), c.name,
                  (unsigned long long)plan.group_max, group);
      failures++;
    }
    int streamed = -1;  // the first streamed section's MSM phase (the MSM phases are in section order)
    for (int sec = CUZK_POINT_SECTIONS - 1; sec >= 0; sec--)
      if (plan.stored_bytes[sec] && plan.placement[sec] == CUZK_PLACEMENT_STREAMED) streamed = CUZK_PHASE_MSM_A + sec;
    // A plan of the chooser's may keep everything resident (nothing streamed: no order to show).
    bool order_ok = c.all_streamed ? streamed >= 0 && count_placement(plan, CUZK_PLACEMENT_RESIDENT) == 0 : true;
    for (size_t p = 0; streamed >= 0 && p + 1 < kBatch && order_ok; p++) {
      const bool same_group = group > 1 && p / group == (p + 1) / group;
      const cuzk_interval msm = t[p].phases[streamed];
      order_ok = same_group ? msm.start_ns >= t[p + 1].phases[CUZK_PHASE_NTT_H].end_ns
                            : msm.end_ns <= t[p + 1].phases[CUZK_PHASE_ABC].start_ns;
    }
    const bool ok = proofs == ref && order_ok;
    failures += !ok;
    std::printf("%s, %s: plan streams %d sections (%.1f KiB a read), groups of %zu: %s\n", label.c_str(), c.name,
                count_placement(plan, CUZK_PLACEMENT_STREAMED), plan.streamed_bytes_per_proof / 1024.0, group,
                ok ? "proofs identical, phases in group order" : proofs == ref ? "WRONG ORDER" : "WRONG PROOFS");
  }
  // Every section streamed, budgets from the minimum up: the first plan of each count of NTT
  // vectors the chooser takes proves the batch. Four (CUDA: the group's H scalars go out of the
  // fourth beside the next proof, a, b and c each in its own) rotate over the five proofs. The
  // CPU engine holds three whatever the budget: nothing to scan.
  if (kept_on_host) {
    bool vectors_seen[5] = {};
    const uint64_t lo = all.min_budget, hi = base + kBatch * per_proof;
    for (int i = 0; i <= 64 && lo && hi > lo; i++) {
      const uint64_t budget = lo + (hi - lo) * i / 64;
      cuzk_memory_plan plan{};
      const cuzk_prover_options opt = prover_options(budget, CUZK_PROVER_STREAM_ALL);
      cuzk_prover* prover = nullptr;
      if (cuzk_prover_create_with(ctx, lazy, &opt, &prover, nullptr, err, sizeof err) != CUZK_OK) continue;
      cuzk_prover_memory_plan(prover, &plan, nullptr, 0);
      cuzk_prover_destroy(prover, nullptr, 0);
      if (plan.ntt_vectors > 4 || vectors_seen[plan.ntt_vectors]) continue;
      vectors_seen[plan.ntt_vectors] = true;
      const std::vector<uint8_t> proofs = prove_batch(ctx, lazy, budget, CUZK_PROVER_STREAM_ALL, &plan, nullptr);
      const bool ok = proofs == ref;
      failures += !ok;
      std::printf("%s, all streamed, %u NTT vectors (budget %.1f KiB, phases %s): %s\n", label.c_str(),
                  plan.ntt_vectors, budget / 1024.0, plan.phases_shared ? "shared" : "apart",
                  ok ? "proofs identical" : "WRONG PROOFS");
    }
    // The CUDA engine's chooser takes a fourth only where the phases share memory and room is
    // left, a band of budgets a small key may not have: the caller counts the keys that had it.
    if (four_vectors_seen) *four_vectors_seen |= vectors_seen[4];
  }
  // A bad witness in proof 3 of 5 (key, flags, budget): the batch fails naming it, returns no
  // proof, and the same prover then proves the good batch.
  auto refuses_bad_witness = [&](cuzk_key* key, uint32_t flags, uint64_t budget, const char* what) {
    const cuzk_prover_options opt = prover_options(budget, flags);
    cuzk_prover* prover = nullptr;
    cuzk_status made = cuzk_prover_create_with(ctx, key, &opt, &prover, nullptr, err, sizeof err);
    std::vector<uint8_t> proofs(kBatch * info.proof_bytes, 0xAA);
    cuzk_status refused = made == CUZK_OK ? prove_call(prover, bad_pinned.data(), record, CUZK_WITNESS_RAW, kBatch, r, s, 0,
                                                       proofs.data(), proofs.size(), nullptr, nullptr, err, sizeof err)
                                          : made;
    const bool named = refused == CUZK_ERR_INVALID_ARGUMENT && std::strstr(err, "proof 3") != nullptr;
    bool zeroed = true;
    for (uint8_t b : proofs) zeroed &= b == 0;
    std::vector<uint8_t> again(kBatch * info.proof_bytes, 0);
    const cuzk_status after = made == CUZK_OK ? prove_call(prover, pinned.data(), record, CUZK_WITNESS_RAW, kBatch,
                                                           r, s, 0, again.data(), again.size(), nullptr, nullptr,
                                                           nullptr, 0)
                                              : made;
    if (prover) cuzk_prover_destroy(prover, nullptr, 0);
    const bool ok = named && zeroed && after == CUZK_OK && again == ref;
    failures += !ok;
    std::printf("%s, %s, a bad witness in proof 3: %s (%s)\n", label.c_str(), what,
                ok ? "refused naming it, no proof returned, the prover proves the next batch" : "WRONG", err);
  };
  // Inside a group: every section streamed, room for all.
  refuses_bad_witness(lazy, CUZK_PROVER_STREAM_ALL, base + kBatch * per_proof, "inside a group");
  // Proofs overlapped (CUDA, with an unlimited budget: every section resident, room for a second
  // proof's buffers, asked with CUZK_PROVER_OVERLAP) and the same batch one after another: the same proofs.
  for (const uint32_t flags : {(uint32_t)CUZK_PROVER_OVERLAP, 0u}) {
    cuzk_memory_plan plan{};
    const std::vector<uint8_t> proofs = prove_batch(ctx, whole, 0, flags, &plan, nullptr);
    const bool overlap_expected = kept_on_host && flags != 0;  // the CUDA engine's plan, room to spare
    const bool ok = proofs == ref && (plan.overlap_bytes > 0) == overlap_expected;
    failures += !ok;
    std::printf("%s, resident%s: overlap %.1f KiB: %s\n", label.c_str(), flags ? ", CUZK_PROVER_OVERLAP" : "",
                plan.overlap_bytes / 1024.0, ok ? "proofs identical" : proofs == ref ? "WRONG OVERLAP" : "WRONG PROOFS");
  }
  // Overlapped: proof 3's check fails as its front is about to be queued beside proof 2's MSMs.
  refuses_bad_witness(whole, CUZK_PROVER_OVERLAP, 0, "resident, CUZK_PROVER_OVERLAP");
  // One after another with no room for a second witness buffer (the resident plan's total without
  // H copies, and half a witness more): the next witness comes up into the same buffer once the
  // A, B and C sums are done, beside the H MSM (CUDA). The same proofs; a bad witness in proof 3
  // is still refused naming it.
  {
    cuzk_memory_plan roomy{}, tight{};
    prove_batch(ctx, whole, 0, 0, &roomy, nullptr, nullptr, 0);
    const uint64_t budget = roomy.total_bytes + record / 2;
    const std::vector<uint8_t> proofs = prove_batch(ctx, whole, budget, 0, &tight, nullptr, nullptr, 0);
    const bool no_second = tight.budget >= tight.total_bytes && tight.budget - tight.total_bytes < record;
    const bool ok = proofs == ref && count_placement(tight, CUZK_PLACEMENT_STREAMED) == 0 && no_second;
    failures += !ok;
    std::printf("%s, resident, room for half a witness: %s\n", label.c_str(),
                ok ? "proofs identical" : proofs == ref ? "WRONG PLAN (streams, or room for a second witness)" : "WRONG PROOFS");
    refuses_bad_witness(whole, 0, budget, "resident, room for half a witness");
  }
  cuzk_key_close(whole, nullptr, 0);
  cuzk_key_close(lazy, nullptr, 0);
  return failures;
}

}  // namespace cuzk_test
