// What the key memory plan tests share (key_memory_test on the CPU, gpu/key_memory_test on the
// GPU): one proof through a prover made with a given memory budget, and the plan's counts.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <vector>

#include "cuzk.h"

namespace cuzk_test {

// One attempt: a prover made with `budget` (0: automatic) over a key, its plan, its one proof.
struct PlanAttempt {
  cuzk_status create = CUZK_ERR_INTERNAL, prove = CUZK_ERR_INTERNAL;
  cuzk_memory_plan plan{};
  std::vector<uint8_t> proof;
  cuzk_timings timings{};
  char err[1024] = {0};
};

// The proof of `wtns` (a .wtns file) with fixed r, s; the prover is destroyed before this returns.
// between(): called after the prover is made (and after a refused creation), e.g. to measure memory.
template <class Between>
PlanAttempt prove_with_budget(cuzk_context* ctx, cuzk_key* key, uint64_t budget, const std::vector<uint8_t>& wtns,
                              uint32_t flags, Between&& between) {
  PlanAttempt a;
  cuzk_key_info info{};
  cuzk_key_get_info(key, &info, nullptr, 0);
  cuzk_prover_options opt{};
  opt.struct_size = sizeof opt;
  opt.memory_budget = budget;
  cuzk_prover* prover = nullptr;
  a.create = cuzk_prover_create_with(ctx, key, &opt, &prover, nullptr, a.err, sizeof a.err);
  between();
  if (a.create != CUZK_OK) return a;
  cuzk_prover_memory_plan(prover, &a.plan, a.err, sizeof a.err);
  uint8_t r[32] = {7}, s[32] = {11};
  a.proof.assign(info.proof_bytes, 0);
  a.prove = cuzk_prove(prover, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, 1, r, s, flags, a.proof.data(),
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

}  // namespace cuzk_test
