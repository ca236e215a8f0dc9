// The memory plan as arithmetic (cuzk_plan_memory): no device, no key. The seed's workload (the
// PoRep-profile key at 2^27, BLS12-381, a batch of 10) planned for the GPU budgets its users own;
// many random shapes checked against the plan's invariants (it fits its budget, a budget below
// the minimum is refused naming it, more budget never predicts a slower plan); bad requests.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "check.hpp"
#include "cuda/engine/gpu_costs.hpp"
#include "cuzk.h"
#include "engine/memory_plan.hpp"
#include "plan_check.hpp"
#include "setup/synth.hpp"


namespace {

constexpr uint64_t kGiB = 1ull << 30;
const char* const kSectionNames[CUZK_POINT_SECTIONS] = {"A", "B1", "B2", "C", "H"};

struct Planned {
  cuzk_status st = CUZK_ERR_INTERNAL;
  cuzk_memory_plan plan{};
  char err[1024] = {0};
};

cuzk_plan_request porep(uint32_t curve, uint32_t log_domain, uint64_t batch) {
  cuzk_plan_request r{};
  r.struct_size = sizeof r;
  r.backend = CUZK_BACKEND_CUDA;
  r.curve = curve;
  r.flags = CUZK_PLAN_SYNTH_POREP;
  r.n_public = 4;
  r.n_constraints = (1u << log_domain) - 16;
  r.batch = batch;
  return r;
}

Planned plan(const cuzk_plan_request& r, uint64_t budget, uint64_t host_budget, uint32_t chunk = 0, uint32_t flags = 0,
             int32_t h_copies = CUZK_H_COPIES_AUTO) {
  const cuzk_prover_options o = cuzk_test::prover_options(budget, flags, chunk, host_budget, h_copies);
  Planned p;
  p.st = cuzk_plan_memory(&r, &o, &p.plan, p.err, sizeof p.err);
  return p;
}

const char* where(uint32_t placement) {
  return placement == CUZK_PLACEMENT_RESIDENT ? "resident" : placement == CUZK_PLACEMENT_STREAMED ? "streamed" : "in key";
}

// The invariants of any plan the call returns.
void check_plan(const Planned& p, uint64_t budget) {
  if (p.st == CUZK_OK) {
    CHECK(p.plan.struct_size == sizeof(cuzk_memory_plan));
    CHECK(p.plan.total_bytes <= budget && p.plan.min_budget <= budget);
    CHECK(p.plan.total_bytes == p.plan.fixed_bytes + p.plan.ntt_vectors * p.plan.vector_bytes + p.plan.rows_bytes +
                                    p.plan.msm_workspace_bytes + p.plan.resident_bytes + p.plan.stream_buffer_bytes -
                                    p.plan.shared_bytes + p.plan.overlap_bytes + p.plan.h_copies_bytes);
    // Copies of the H points only on the CUDA engine, of a resident H section in one chunk.
    CHECK((p.plan.h_copies >= 2) == (p.plan.h_copies_bytes > 0) && p.plan.h_copies != 1);
    if (p.plan.h_copies) {
      CHECK(p.plan.backend == CUZK_BACKEND_CUDA && p.plan.placement[4] == CUZK_PLACEMENT_RESIDENT);
      CHECK(p.plan.h_chunk_points >= p.plan.stored[4]);
      CHECK(p.plan.h_copies_bytes == (uint64_t)(p.plan.h_copies - 1) * p.plan.stored_bytes[4]);
    }
    // The MSM's windows in groups only on the CUDA engine, one of the plan's choices.
    CHECK(p.plan.msm_window_groups == 1 || p.plan.msm_window_groups == 2 || p.plan.msm_window_groups == 4 ||
          p.plan.msm_window_groups == 8);
    if (p.plan.backend != CUZK_BACKEND_CUDA) CHECK(p.plan.msm_window_groups == 1);
    // Proofs overlap only on the CUDA engine, with every section resident, the rows whole and the
    // phases not shared, in a second set of the NTT vectors and a witness.
    if (p.plan.overlap_bytes) {
      CHECK(p.plan.backend == CUZK_BACKEND_CUDA && p.plan.streamed_bytes_per_proof == 0);
      CHECK(p.plan.rows_chunk_bytes == 0 && !p.plan.phases_shared);
      CHECK(p.plan.overlap_bytes > p.plan.ntt_vectors * p.plan.vector_bytes);
    }
    // Phases share memory only on the CUDA engine, only when something streams, and then share some.
    CHECK((p.plan.shared_bytes > 0) == (p.plan.phases_shared == 1));
    CHECK(!p.plan.phases_shared || (p.plan.backend == CUZK_BACKEND_CUDA && p.plan.streamed_bytes_per_proof > 0));
    // What is shared is at most the smaller phase: the NTT vectors and the witness, or the stream
    // buffers and the MSM workspace.
    CHECK(p.plan.shared_bytes <= p.plan.stream_buffer_bytes + p.plan.msm_workspace_bytes);
    CHECK(p.plan.ntt_vectors == 3 ||
          (p.plan.backend == CUZK_BACKEND_CUDA && (p.plan.ntt_vectors == 2 || p.plan.ntt_vectors == 4)));
    // A fourth only where a group's H scalars go out to the host beside the next proof: H
    // streamed, the rows whole, the proofs grouped (or the phases shared).
    if (p.plan.ntt_vectors == 4)
      CHECK(p.plan.placement[4] == CUZK_PLACEMENT_STREAMED && p.plan.rows_chunk_bytes == 0 &&
            (p.plan.phases_shared || p.plan.group_size > 1));
    const uint64_t q = p.plan.msm_chunk_points;
    CHECK(q >= CUZK_CHUNK_POINTS_MIN && (q & (q - 1)) == 0);
    // The H MSM's own chunk: the others', or (CUDA) a larger power of two, at most 2^3 times it,
    // its windows in one of the plan's choices of groups; only where H takes more than one chunk.
    const uint64_t hq = p.plan.h_chunk_points;
    CHECK(hq >= q && (hq & (hq - 1)) == 0 && hq <= (q << cuzk::engine::kMaxHChunkSteps));
    CHECK(hq == q || (p.plan.backend == CUZK_BACKEND_CUDA && p.plan.stored[4] > q));
    const uint32_t hg = p.plan.h_window_groups;
    CHECK(hg == 1 || hg == 2 || hg == 4 || hg == 8);
    CHECK(hq != q || hg == p.plan.msm_window_groups);
    CHECK(p.plan.group_size >= 1 && p.plan.group_size <= p.plan.batch);
    uint64_t resident = 0, streamed = 0;
    for (int s = 0; s < CUZK_POINT_SECTIONS; s++) {
      if (p.plan.placement[s] == CUZK_PLACEMENT_RESIDENT) resident += p.plan.stored_bytes[s];
      if (p.plan.placement[s] == CUZK_PLACEMENT_STREAMED) streamed += p.plan.stored_bytes[s];
    }
    CHECK(resident == p.plan.resident_bytes && streamed == p.plan.streamed_bytes_per_proof);
    CHECK(p.plan.host_bytes <= p.plan.host_budget);
    // Only streamed sections are pinned, only on the CUDA engine, and the host holds them.
    uint64_t pinned = 0;
    for (int s = 0; s < CUZK_POINT_SECTIONS; s++)
      if (p.plan.pinned_sections >> s & 1u) {
        CHECK(p.plan.placement[s] == CUZK_PLACEMENT_STREAMED && p.plan.backend == CUZK_BACKEND_CUDA);
        pinned += p.plan.stored_bytes[s];
      }
    CHECK(p.plan.pinned_sections >> CUZK_POINT_SECTIONS == 0);
    CHECK(pinned <= p.plan.host_bytes);
  } else {
    CHECK(p.st == CUZK_ERR_OUT_OF_MEMORY);
    CHECK(p.plan.min_budget > budget);
    const std::string least = "at least " + std::to_string(p.plan.min_budget) + " bytes";
    CHECK(std::strstr(p.err, least.c_str()) != nullptr);
  }
}

void print_plan(const char* label, const Planned& p) {
  const cuzk_memory_plan& m = p.plan;
  if (p.st != CUZK_OK) {
    std::printf("%-8s refused: %s\n", label, p.err);
    return;
  }
  std::printf("%-8s total %6.2f GiB (fixed %.2f, %u vectors %.2f, rows %.2f, MSM %.2f at chunk 2^%d in %u window groups (H 2^%d in %u), resident %.2f, stream buffers %.2f, "
              "shared %.2f, overlap %.2f, %u H copies %.2f); min %.2f GiB; host %.1f GiB; group %" PRIu64 "; %.2f GiB over the link a proof; +%.0f ms predicted;",
              label, m.total_bytes / (double)kGiB, m.fixed_bytes / (double)kGiB, m.ntt_vectors,
              m.ntt_vectors * m.vector_bytes / (double)kGiB, m.rows_bytes / (double)kGiB,
              m.msm_workspace_bytes / (double)kGiB, __builtin_ctzll(m.msm_chunk_points), m.msm_window_groups,
              __builtin_ctzll(m.h_chunk_points), m.h_window_groups, m.resident_bytes / (double)kGiB,
              m.stream_buffer_bytes / (double)kGiB, m.shared_bytes / (double)kGiB, m.overlap_bytes / (double)kGiB, m.h_copies, m.h_copies_bytes / (double)kGiB, m.min_budget / (double)kGiB,
              m.host_bytes / (double)kGiB, m.group_size, m.link_bytes_per_proof / (double)kGiB, m.predicted_extra_ns / 1e6);
  for (int s = 0; s < CUZK_POINT_SECTIONS; s++) std::printf(" %s %s", kSectionNames[s], where(m.placement[s]));
  std::printf("\n");
}

void seed_workload() {
  const cuzk_plan_request r = porep(CUZK_CURVE_BLS12_381, 27, 10);
  uint64_t previous_ns = UINT64_MAX;
  for (uint64_t gib : {8, 12, 16, 24, 48, 80, 141, 1024}) {
    const Planned p = plan(r, gib * kGiB, 256 * kGiB);
    char label[16];
    std::snprintf(label, sizeof label, "%" PRIu64 " GiB", gib);
    print_plan(label, p);
    check_plan(p, gib * kGiB);
    if (p.st == CUZK_OK) {
      CHECK(p.plan.predicted_extra_ns <= previous_ns);  // more budget never predicts a slower plan
      previous_ns = p.plan.predicted_extra_ns;
    }
  }
  // At 16 GiB the proofs' NTT vectors and the streamed sums take turns in the same memory: the
  // plan's chunk is larger than the one the two would get side by side (2^21).
  const Planned card16 = plan(r, 16 * kGiB, 256 * kGiB);
  CHECK(card16.st == CUZK_OK && card16.plan.phases_shared == 1 && card16.plan.msm_chunk_points > (1u << 21));
  // The seed's workload fits an 80 GB H100 (78 GiB usable) and, unlimited, runs unchunked and resident.
  CHECK(plan(r, 78 * kGiB, 256 * kGiB).st == CUZK_OK);
  const Planned free = plan(r, 1024 * kGiB, 256 * kGiB);
  CHECK(free.st == CUZK_OK && free.plan.streamed_bytes_per_proof == 0 && free.plan.msm_chunk_points >= (1u << 27));
  // Proofs overlap only when asked: then, with room to spare, the same plan holds a second proof's buffers.
  CHECK(free.plan.overlap_bytes == 0);
  const Planned overlapped = plan(r, 1024 * kGiB, 256 * kGiB, 0, CUZK_PROVER_OVERLAP);
  CHECK(overlapped.st == CUZK_OK && overlapped.plan.overlap_bytes > 0 &&
        overlapped.plan.total_bytes == free.plan.total_bytes + overlapped.plan.overlap_bytes);
  // With room to spare, copies of the H points too (as many as the chooser takes); none asked:
  // the same plan without them; more forced than the room holds: refused naming them.
  CHECK(free.plan.h_copies >= 2 && free.plan.h_copies <= 16);
  const Planned no_copies = plan(r, 1024 * kGiB, 256 * kGiB, 0, 0, 0);
  CHECK(no_copies.st == CUZK_OK && no_copies.plan.h_copies == 0 &&
        no_copies.plan.total_bytes == free.plan.total_bytes - free.plan.h_copies_bytes);
  const Planned forced = plan(r, 200 * kGiB, 256 * kGiB, 0, 0, CUZK_H_COPIES_MAX);
  CHECK(forced.st == CUZK_ERR_OUT_OF_MEMORY && std::strstr(forced.err, "copies of the H points") != nullptr);
  check_plan(forced, 200 * kGiB);  // the refusal names the budget they would need
  const Planned two = plan(r, 1024 * kGiB, 256 * kGiB, 0, 0, 2);
  CHECK(two.st == CUZK_OK && two.plan.h_copies == 2);
  // Making two takes both copies and 1 GiB of scratch (gpu_costs.cpp) beside the points the plan
  // holds: exactly that room suffices, one byte less is refused.
  const uint64_t making_two = no_copies.plan.total_bytes + 2 * no_copies.plan.stored_bytes[4] + kGiB;
  const Planned two_exact = plan(r, making_two, 256 * kGiB, 0, 0, 2);
  CHECK(two_exact.st == CUZK_OK && two_exact.plan.h_copies == 2);
  const Planned two_short = plan(r, making_two - 1, 256 * kGiB, 0, 0, 2);
  CHECK(two_short.st == CUZK_ERR_OUT_OF_MEMORY && two_short.plan.min_budget == making_two);
  // One byte short of the overlapped total: the same plan, one proof after another.
  const uint64_t overlapped_bare = no_copies.plan.total_bytes + overlapped.plan.overlap_bytes;  // no copies
  const Planned short_of_overlap = plan(r, overlapped_bare - 1, 256 * kGiB, 0, CUZK_PROVER_OVERLAP);
  check_plan(short_of_overlap, overlapped_bare - 1);
  CHECK(short_of_overlap.st == CUZK_OK && short_of_overlap.plan.overlap_bytes == 0 &&
        short_of_overlap.plan.total_bytes == no_copies.plan.total_bytes);
  // A smaller host budget keeps fewer proofs' H scalars: the batch proves in smaller groups.
  const Planned tight_host = plan(r, 24 * kGiB, 24 * kGiB);
  const Planned wide_host = plan(r, 24 * kGiB, 256 * kGiB);
  check_plan(tight_host, 24 * kGiB);
  if (tight_host.st == CUZK_OK && wide_host.st == CUZK_OK)
    CHECK(tight_host.plan.group_max <= wide_host.plan.group_max);
  std::printf("24 GiB with a 24 GiB host budget: groups of %" PRIu64 " (256 GiB host: %" PRIu64 ")\n",
              tight_host.plan.group_max, wide_host.plan.group_max);
  // A forced chunk is taken as given.
  const Planned chunked = plan(r, 1024 * kGiB, 256 * kGiB, 1u << 20);
  CHECK(chunked.st == CUZK_OK && chunked.plan.msm_chunk_points == (1u << 20));
  // Every section streamed on request.
  const Planned all = plan(r, 1024 * kGiB, 256 * kGiB, 0, CUZK_PROVER_STREAM_ALL);
  CHECK(all.st == CUZK_OK && all.plan.resident_bytes == 0 && all.plan.streamed_bytes_per_proof > 0);
}

// The NTT stage's fourth vector: at 2^26 with 12 GiB (the 2^27 workload's 24 GiB halved) a batch
// of 10 keeps its H scalars on the host, and the plan holds a, b, c and the vector the previous
// proof's H scalars go out of, in memory its phases share (the streamed sums' phase the larger).
// Not with the rows in chunks (the H scalars then go out after the proof), nor where H is
// resident, nor on the CPU engine.
void spare_vector() {
  const cuzk_plan_request r = porep(CUZK_CURVE_BLS12_381, 26, 10);
  const Planned p12 = plan(r, 12 * kGiB, 256 * kGiB);
  print_plan("2^26 12 GiB", p12);
  check_plan(p12, 12 * kGiB);
  CHECK(p12.st == CUZK_OK && p12.plan.ntt_vectors == 4 && p12.plan.placement[4] == CUZK_PLACEMENT_STREAMED);
  // Three would be no cheaper in memory: the fourth fits in what the phases share.
  CHECK(p12.plan.shared_bytes >= 4 * p12.plan.vector_bytes);
  const Planned rows = plan(r, 12 * kGiB, 256 * kGiB, 0, CUZK_PROVER_STREAM_ROWS);
  check_plan(rows, 12 * kGiB);
  CHECK(rows.st == CUZK_OK && rows.plan.rows_chunk_bytes > 0 && rows.plan.ntt_vectors <= 3);
  const Planned free = plan(r, 1024 * kGiB, 256 * kGiB);
  CHECK(free.st == CUZK_OK && free.plan.placement[4] == CUZK_PLACEMENT_RESIDENT && free.plan.ntt_vectors == 3);
  cuzk_plan_request cpu = r;
  cpu.backend = CUZK_BACKEND_CPU;
  const Planned on_cpu = plan(cpu, 12 * kGiB, 256 * kGiB);
  check_plan(on_cpu, 12 * kGiB);
  CHECK(on_cpu.st != CUZK_OK || on_cpu.plan.ntt_vectors == 3);
}

// Random shapes of both backends and curves, budgets around each one's minimum.
// The seed's workload at 24 GiB by host budget: the plan pins what the host holds, section by
// section (the rest is packed from the key per group), and a larger host budget never predicts a
// slower plan. At 40 GiB the streamed points (~45 GiB) do not all fit: some are pinned.
void pinned_by_host_budget() {
  const cuzk_plan_request r = porep(CUZK_CURVE_BLS12_381, 27, 10);
  uint64_t previous_ns = UINT64_MAX;
  for (uint64_t gib : {0, 8, 16, 24, 40, 48, 64, 96, 256}) {
    const Planned p = plan(r, 24 * kGiB, gib ? gib * kGiB : 1);  // 0 is automatic: one byte is none
    check_plan(p, 24 * kGiB);
    CHECK(p.st == CUZK_OK);
    if (p.st != CUZK_OK) continue;
    CHECK(p.plan.predicted_extra_ns <= previous_ns);
    previous_ns = p.plan.predicted_extra_ns;
    uint64_t pinned = 0;
    std::string which;
    for (int s = 0; s < CUZK_POINT_SECTIONS; s++)
      if (p.plan.pinned_sections >> s & 1u) {
        pinned += p.plan.stored_bytes[s];
        which += std::string(" ") + kSectionNames[s];
      }
    if (gib == 0) CHECK(p.plan.pinned_sections == 0);
    if (gib == 256) CHECK(pinned == p.plan.streamed_bytes_per_proof);
    std::printf("24 GiB, host %3" PRIu64 " GiB: pinned%s (%.2f of %.2f GiB streamed), groups of up to %" PRIu64
                ", +%.0f ms predicted\n",
                gib, which.empty() ? " none" : which.c_str(), pinned / (double)kGiB,
                p.plan.streamed_bytes_per_proof / (double)kGiB, p.plan.group_max, p.plan.predicted_extra_ns / 1e6);
  }
}

// The same key read at each PointSource's rate (in memory, a file, the development key's
// generator) under host budgets that hold some of its streamed points: the slower the key, the
// fewer bytes a proof packs from it (pinned sections, or larger groups: a group's kept H scalars
// take host memory too). Printed as a table.
void pinned_by_key_rate() {
  namespace engine = cuzk::engine;
  cuzk::setup::SynthParams params;
  params.curve = CUZK_CURVE_BLS12_381;
  params.profile = CUZK_SYNTH_POREP;
  params.n_constraints = (1u << 27) - 16;
  params.n_public = 4;
  cuzk::setup::SynthShape synth;
  std::string err;
  CHECK(cuzk::setup::synth_shape(params, synth, err) == CUZK_OK);
  engine::KeyShape shape = engine::describe_key(params.curve, synth.n_wires, params.n_public, params.n_constraints,
                                                synth.n_terms[0] + synth.n_terms[1]);
  shape.coef_values = 8;
  engine::PlanLimits lim;
  lim.budget = 24 * kGiB;
  lim.batch = 10;
  int partial = 0;
  for (uint64_t host : {40, 64, 80, 96}) {
    lim.host_budget = host * kGiB;
    double from_key_before = 1e300;
    for (double rate : {6e9, 2e9, 0.6e9}) {
      shape.key_read_bytes_per_s = rate;
      engine::MemoryPlan p;
      CHECK(engine::plan_memory(cuzk::cuda::gpu_costs(shape, false), lim, p, err) == CUZK_OK);
      const uint64_t pinned = p.pinned_bytes();
      CHECK(p.host_bytes <= lim.host_budget);
      const double from_key = (double)(p.streamed_bytes() - pinned) / (double)p.group;
      CHECK(from_key <= from_key_before);
      from_key_before = from_key;
      partial += pinned > 0 && pinned < p.streamed_bytes();
      std::string which;
      for (int s = 0; s < CUZK_POINT_SECTIONS; s++)
        if (p.pinned_section((engine::PointSection)s)) which += std::string(" ") + kSectionNames[s];
      std::printf("24 GiB, host %2" PRIu64 " GiB, key at %.1f GB/s: pinned%s (%.2f of %.2f GiB), groups of %" PRIu64
                  ", %.2f GiB a proof from the key, +%.0f ms predicted\n",
                  host, rate / 1e9, which.empty() ? " none" : which.c_str(), pinned / (double)kGiB,
                  p.streamed_bytes() / (double)kGiB, p.group, from_key / (double)kGiB, p.predicted_extra_s * 1e3);
    }
  }
  CHECK(partial > 0);  // some of these budgets pin some sections and not others
}

void random_shapes(int shapes) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  int planned = 0, refused = 0, host_plans = 0;
  for (int i = 0; i < shapes; i++) {
    cuzk_plan_request r{};
    r.struct_size = sizeof r;
    r.backend = next() % 2 ? CUZK_BACKEND_CUDA : CUZK_BACKEND_CPU;
    r.curve = next() % 2 ? CUZK_CURVE_BLS12_381 : CUZK_CURVE_BN254;
    r.flags = r.backend == CUZK_BACKEND_CPU && next() % 2 ? CUZK_PLAN_POINTS_ON_DEMAND : 0;
    r.n_public = (uint32_t)(next() % 64);
    r.n_constraints = 1 + (uint32_t)(next() % ((1u << (7 + next() % 21)) - 64));
    r.n_vars = r.n_public + 1 + (uint32_t)(next() % (2ull * r.n_constraints + 1));
    r.n_coefs = 1 + next() % (4ull * r.n_constraints);
    r.batch = 1 + next() % 16;
    const Planned unlimited = plan(r, 1ull << 50, 1ull << 50);
    CHECK(unlimited.st == CUZK_OK);
    if (unlimited.st != CUZK_OK) { std::fprintf(stderr, "  %s\n", unlimited.err); continue; }
    const uint64_t lo = unlimited.plan.min_budget, hi = unlimited.plan.total_bytes;
    CHECK(lo <= hi);
    uint64_t previous_ns = UINT64_MAX;
    for (int k = 0; k <= 4; k++) {
      const uint64_t budget = lo + (hi - lo) * k / 4;
      const Planned p = plan(r, budget, 1ull << 40);
      check_plan(p, budget);
      CHECK(p.st == CUZK_OK);
      if (p.st == CUZK_OK) {
        CHECK(p.plan.predicted_extra_ns <= previous_ns);
        previous_ns = p.plan.predicted_extra_ns;
        planned++;
      }
    }
    // At the minimum the CUDA plan holds two NTT vectors, or more that fit in what its phases share.
    const Planned least = plan(r, lo, 1ull << 40);
    CHECK(least.st == CUZK_OK);
    if (least.st == CUZK_OK && r.backend == CUZK_BACKEND_CUDA)
      CHECK(least.plan.ntt_vectors == 2 || least.plan.shared_bytes >= least.plan.ntt_vectors * least.plan.vector_bytes);
    // A host budget that grows never predicts a slower plan; one byte (0 is automatic) pins
    // nothing, the widest every streamed section.
    if (r.backend == CUZK_BACKEND_CUDA && least.st == CUZK_OK && least.plan.streamed_bytes_per_proof) {
      const uint64_t streamed = least.plan.streamed_bytes_per_proof;
      uint64_t before_ns = UINT64_MAX;
      for (uint64_t host : {uint64_t{1}, streamed / 3, streamed / 2, streamed - 1, streamed * 2, uint64_t{1} << 40}) {
        const Planned h = plan(r, lo, host);
        check_plan(h, lo);
        if (h.st != CUZK_OK) continue;  // rows in chunks need their host copy
        CHECK(h.plan.predicted_extra_ns <= before_ns);
        before_ns = h.plan.predicted_extra_ns;
        if (host == 1) CHECK(h.plan.pinned_sections == 0);
        if (host == 1ull << 40) {
          uint32_t streamed_mask = 0;
          for (int s = 0; s < CUZK_POINT_SECTIONS; s++)
            if (h.plan.placement[s] == CUZK_PLACEMENT_STREAMED) streamed_mask |= 1u << s;
          CHECK(h.plan.pinned_sections == streamed_mask);
        }
        host_plans++;
      }
    }
    const Planned short_one = plan(r, lo - 1, 1ull << 40);
    check_plan(short_one, lo - 1);
    refused += short_one.st == CUZK_ERR_OUT_OF_MEMORY;
    CHECK(short_one.st == CUZK_ERR_OUT_OF_MEMORY);
  }
  std::printf("random shapes: %d plans within their budgets, %d budgets one byte short refused, %d plans by host budget\n",
              planned, refused, host_plans);
}

// The H MSM in chunks of its own. The workspace is priced buffer by buffer: an H chunk of the
// others' size takes no buffer larger than theirs (G1 against the widest point), so the sum of the
// larger of each is the others' workspace; a forced chunk is every group's; and at the 2^26
// budgets where the chunks are small the H MSM takes larger ones (fewer bucket reductions).
void h_chunks() {
  namespace engine = cuzk::engine;
  for (uint32_t curve : {CUZK_CURVE_BLS12_381, CUZK_CURVE_BN254}) {
    const engine::KeyShape shape = engine::describe_key(curve, (1u << 24) + 5, 4, (1u << 24) - 16, 3u << 24);
    const engine::EngineCosts c = cuzk::cuda::gpu_costs(shape, false);
    CHECK(c.h_own_chunk);
    for (int g = 0; g < engine::kWindowGroupChoices; g++)
      for (int k = engine::kMinChunkLog; k <= 26; k++) {
        uint64_t others = 0, larger = 0;
        for (int i = 0; i < engine::EngineCosts::kWorkspaceParts; i++) {
          others += c.msm_parts[g][k][i];
          larger += std::max(c.msm_parts[g][k][i], c.h_msm_parts[g][k][i]);
        }
        CHECK(others == c.msm_workspace[g][k] && larger == others);
        // A chunk twice as large takes more of some buffer.
        if (k < 24) {
          uint64_t twice = 0;
          for (int i = 0; i < engine::EngineCosts::kWorkspaceParts; i++)
            twice += std::max(c.msm_parts[g][k][i], c.h_msm_parts[g][k + 1][i]);
          CHECK(twice > others);
        }
      }
  }
  int own = 0;
  for (uint32_t curve : {CUZK_CURVE_BLS12_381, CUZK_CURVE_BN254})
    for (uint64_t gib : {8, 12, 16, 24}) {
      const cuzk_plan_request r = porep(curve, 26, 10);
      const Planned p = plan(r, gib * kGiB, 256 * kGiB);
      check_plan(p, gib * kGiB);
      char label[32];
      std::snprintf(label, sizeof label, "2^26 %s %" PRIu64 " GiB", curve == CUZK_CURVE_BN254 ? "bn254" : "bls", gib);
      print_plan(label, p);
      own += p.st == CUZK_OK && p.plan.h_chunk_points > p.plan.msm_chunk_points;
      const Planned forced = plan(r, gib * kGiB, 256 * kGiB, 1u << 20);
      check_plan(forced, gib * kGiB);
      if (forced.st == CUZK_OK) CHECK(forced.plan.h_chunk_points == (1u << 20));
    }
  CHECK(own > 0);
  std::printf("2^26 budgets with the H MSM in chunks of its own: %d of 8\n", own);
}

void bad_requests() {
  char err[512];
  cuzk_memory_plan out{};
  const cuzk_plan_request good = porep(CUZK_CURVE_BN254, 16, 1);
  cuzk_prover_options o{};
  o.struct_size = sizeof o;
  o.memory_budget = 8 * kGiB;
  CHECK(cuzk_plan_memory(&good, &o, &out, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_plan_memory(nullptr, &o, &out, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_plan_memory(&good, &o, nullptr, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  auto refused = [&](cuzk_plan_request r, cuzk_prover_options opt, const char* words) {
    const cuzk_status st = cuzk_plan_memory(&r, &opt, &out, err, sizeof err);
    const bool ok = st == CUZK_ERR_INVALID_ARGUMENT && std::strstr(err, words) != nullptr;
    if (!ok) std::fprintf(stderr, "  expected a refusal naming '%s', got %d: %s\n", words, st, err);
    return ok;
  };
  cuzk_plan_request r = good;
  r.struct_size = 40;
  CHECK(refused(r, o, "struct_size"));
  r = good, r.backend = 7;
  CHECK(refused(r, o, "backend"));
  r = good, r.curve = 9;
  CHECK(refused(r, o, "curve"));
  r = good, r.flags = 0x80;
  CHECK(refused(r, o, "flags"));
  r = good, r.reserved = 1;
  CHECK(refused(r, o, "reserved"));
  r = good, r.n_constraints = 0;
  CHECK(refused(r, o, "n_constraints"));
  r = good, r.n_constraints = 1u << 28;
  CHECK(refused(r, o, "n_constraints"));
  r = good, r.batch = 0;
  CHECK(refused(r, o, "batch"));
  r = good, r.batch = (1u << 20) + 1;
  CHECK(refused(r, o, "batch"));
  r = good, r.n_vars = 5;
  CHECK(refused(r, o, "derived"));
  r = good, r.flags = 0, r.n_vars = 2, r.n_public = 4, r.n_coefs = 10;
  CHECK(refused(r, o, "n_vars"));
  cuzk_prover_options bad = o;
  bad.chunk_points = 1000;
  CHECK(refused(good, bad, "chunk_points"));
  bad.chunk_points = CUZK_CHUNK_POINTS_MIN / 2;
  CHECK(refused(good, bad, "chunk_points"));
  bad = o, bad.struct_size = 32;
  CHECK(refused(good, bad, "struct_size"));
  bad = o, bad.reserved2 = 3;
  CHECK(refused(good, bad, "reserved2"));
  bad = o, bad.flags = 0x100;
  CHECK(refused(good, bad, "flags"));
  // CUDA with an automatic budget needs a GPU to measure; without one the message says what to give.
  cuzk_device_info device{};
  const bool devices = cuzk_device_info_get(0, &device, nullptr, 0) == CUZK_OK;
  bad = o, bad.memory_budget = 0;
  const cuzk_status st = cuzk_plan_memory(&good, &bad, &out, err, sizeof err);
  CHECK(devices ? st == CUZK_OK : st == CUZK_ERR_NO_DEVICE && std::strstr(err, "device memory budget") != nullptr);
}

}  // namespace

// A group cut to the host's room for its kept H scalars: never more than asked, never below one.
void group_within_room() {
  using cuzk::engine::group_within_room;
  const uint64_t h = 4ull << 30;  // a 2^27 proof's H scalars
  CHECK(group_within_room(10, h, UINT64_MAX) == 10);
  CHECK(group_within_room(10, h, 10 * h) == 10);
  CHECK(group_within_room(10, h, 10 * h - 1) == 9);
  CHECK(group_within_room(10, h, 3 * h + h / 2) == 3);
  CHECK(group_within_room(10, h, h - 1) == 1);
  CHECK(group_within_room(10, h, 0) == 1);
  CHECK(group_within_room(1, h, 0) == 1);
  CHECK(group_within_room(0, h, 5 * h) == 1);
  CHECK(group_within_room(7, 0, 0) == 7);
  for (uint64_t g = 1; g <= 40; g++)
    for (uint64_t room = 0; room <= 50 * h; room += h / 3) {
      const uint64_t got = group_within_room(g, h, room);
      CHECK(got >= 1 && got <= g && (got == 1 || got * h <= room) && (got == g || (got + 1) * h > room));
    }
}

// --shapes N: how many random shapes (default 400). The sanitizer build runs a sample: it looks
// for memory errors, which the search meets in the first shapes as in the last.
int main(int argc, char** argv) {
  const int shapes = (int)cuzk_test::int_option(argc, argv, "--shapes", 400, 1, 100000);
  group_within_room();
  seed_workload();
  pinned_by_host_budget();
  pinned_by_key_rate();
  h_chunks();
  spare_vector();
  random_shapes(shapes);
  bad_requests();
  return cuzk_test::finish("memory_plan_test");
}
