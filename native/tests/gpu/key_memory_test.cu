// The key memory plan on the GPU: the CUDA engine stores only the points that are not infinity,
// keeps each section resident or streams it in chunks, and runs its MSMs in the plan's chunks, as
// the budget allows. For committed fixtures and synthetic PoRep-shaped keys (most B points
// infinity), read whole and on demand (CUZK_KEY_POINTS_ON_DEMAND), the CUDA proofs of the
// resident plan, the all-streamed plan, the smallest chunks, the minimum budget and budgets
// between it and the resident plan's must be byte-identical to the CPU proof of the key read
// whole (same r, s; every GPU proof self-checked); a budget one byte below the minimum is
// CUZK_ERR_OUT_OF_MEMORY naming the minimum, before any device memory is taken. Budgets whose plan
// gives the H MSM larger chunks of its own give the same proofs. Batches that stream read each
// streamed section once per group of proofs (plan_check.hpp's check_grouped_batches).
#include <filesystem>

#include "gpu_check.cuh"
#include "../abc_inputs.hpp"
#include "../plan_check.hpp"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

size_t device_free() {
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  return free_b;
}

// A proof with a prover made with `budget`, its wall time, its B MSMs' time and the device memory
// the prover took (free memory before its creation against after it).
struct Attempt : cuzk_test::PlanAttempt {
  double ms = 0, msm_b_ms = 0;
  size_t device_used = 0;
};

Attempt prove_with(cuzk_context* ctx, cuzk_key* key, uint64_t budget, const std::vector<uint8_t>& wtns,
                   uint32_t flags, uint32_t prover_flags = 0, uint32_t chunk_points = 0, uint64_t host_budget = 0) {
  Attempt a;
  const size_t free_before = device_free();
  const double t0 = now_ms();
  static_cast<cuzk_test::PlanAttempt&>(a) = cuzk_test::prove_with_budget(
      ctx, key, budget, wtns, flags, [&] { a.device_used = free_before - std::min(free_before, device_free()); },
      prover_flags, chunk_points, host_budget);
  a.ms = now_ms() - t0;
  for (int ph : {CUZK_PHASE_MSM_B1, CUZK_PHASE_MSM_B2})
    a.msm_b_ms += (a.timings.phases[ph].end_ns - a.timings.phases[ph].start_ns) / 1e6;
  return a;
}

using cuzk_test::count_placement;

// The plan a prover with `budget` and `prover_flags` is made with (false: none could be made).
bool plan_of(cuzk_context* ctx, cuzk_key* key, uint64_t budget, uint32_t prover_flags, cuzk_memory_plan* out) {
  const cuzk_prover_options opt = cuzk_test::prover_options(budget, prover_flags);
  cuzk_prover* prover = nullptr;
  if (cuzk_prover_create_with(ctx, key, &opt, &prover, nullptr, nullptr, 0) != CUZK_OK) return false;
  const bool ok = cuzk_prover_memory_plan(prover, out, nullptr, 0) == CUZK_OK;
  cuzk_prover_destroy(prover, nullptr, 0);
  return ok;
}

// The CPU proof of the key read whole against the CUDA proofs of three plans, for the key read
// whole and on demand. Returns false when a plan could not be made (the failures are recorded).
// *mixed_seen: set when a budget between gave a plan with resident and streamed sections (a
// small key may have none: its sections are not much larger than a stream buffer).
bool same_proofs(const std::string& label, const std::string& zkey, const std::string& r1cs,
                 const std::vector<uint8_t>& wtns, cuzk_context* cpu, cuzk_context* gpu, bool* mixed_seen_any,
                 bool* h_own_seen_any) {
  char err[1024];
  cuzk_key* whole = nullptr;
  if (cuzk_key_open(zkey.c_str(), 0, &whole, err, sizeof err) != CUZK_OK) {
    EXPECT(false, "%s: %s", label.c_str(), err);
    return false;
  }
  Attempt ref = prove_with(cpu, whole, 0, wtns, 0);
  EXPECT(ref.create == CUZK_OK && ref.prove == CUZK_OK, "%s: CPU proof: %s", label.c_str(), ref.err);
  for (uint32_t key_flags : {0u, CUZK_KEY_POINTS_ON_DEMAND}) {
    const std::string where = label + (key_flags ? " (key on demand)" : " (key in memory)");
    cuzk_key* key = whole;
    if (key_flags && cuzk_key_open(zkey.c_str(), key_flags, &key, err, sizeof err) != CUZK_OK) {
      EXPECT(false, "%s: %s", where.c_str(), err);
      continue;
    }
    Attempt res = prove_with(gpu, key, 0, wtns, CUZK_PROVE_SELF_CHECK);
    EXPECT(res.create == CUZK_OK && res.prove == CUZK_OK, "%s: resident: %s", where.c_str(), res.err);
    EXPECT(res.proof == ref.proof, "%s: resident GPU proof differs from the CPU proof", where.c_str());
    EXPECT(count_placement(res.plan, CUZK_PLACEMENT_STREAMED) == 0, "%s: not all resident", where.c_str());
    const uint64_t fixed = res.plan.fixed_bytes;
    // The same key with every point stored (infinities too, one plan for A, B1, B2, C as before).
    Attempt full = prove_with(gpu, key, 0, wtns, CUZK_PROVE_SELF_CHECK, CUZK_PROVER_KEEP_INFINITY);
    EXPECT(full.create == CUZK_OK && full.prove == CUZK_OK && full.proof == ref.proof,
           "%s: all points stored (CUZK_PROVER_KEEP_INFINITY): %s", where.c_str(), full.err);
    EXPECT(full.plan.stored[1] == full.plan.points[1], "%s: CUZK_PROVER_KEEP_INFINITY still dropped B1 points",
           where.c_str());

    Attempt streamed = prove_with(gpu, key, 0, wtns, CUZK_PROVE_SELF_CHECK, CUZK_PROVER_STREAM_ALL);
    EXPECT(streamed.create == CUZK_OK && streamed.prove == CUZK_OK, "%s: streamed: %s", where.c_str(), streamed.err);
    EXPECT(streamed.proof == ref.proof, "%s: streamed GPU proof differs from the CPU proof", where.c_str());
    EXPECT(count_placement(streamed.plan, CUZK_PLACEMENT_RESIDENT) == 0, "%s: not all streamed", where.c_str());

    Attempt chunked = prove_with(gpu, key, 0, wtns, CUZK_PROVE_SELF_CHECK, 0, CUZK_CHUNK_POINTS_MIN);
    EXPECT(chunked.create == CUZK_OK && chunked.prove == CUZK_OK && chunked.proof == ref.proof,
           "%s: resident in chunks of %u points: %s", where.c_str(), CUZK_CHUNK_POINTS_MIN, chunked.err);
    Attempt chunked_streamed = prove_with(gpu, key, 0, wtns, CUZK_PROVE_SELF_CHECK, CUZK_PROVER_STREAM_ALL,
                                          CUZK_CHUNK_POINTS_MIN);
    EXPECT(chunked_streamed.create == CUZK_OK && chunked_streamed.prove == CUZK_OK &&
               chunked_streamed.proof == ref.proof,
           "%s: streamed in chunks of %u points: %s", where.c_str(), CUZK_CHUNK_POINTS_MIN, chunked_streamed.err);

    // A host budget of half the streamed points: some sections pinned on the host, the others
    // packed from the key chunk by chunk (a group's sections come up together either way).
    {
      const uint64_t half = streamed.plan.streamed_bytes_per_proof / 2;
      Attempt some = prove_with(gpu, key, 0, wtns, CUZK_PROVE_SELF_CHECK, CUZK_PROVER_STREAM_ALL, CUZK_CHUNK_POINTS_MIN,
                                half);
      uint32_t all = 0;
      for (int s = 0; s < CUZK_POINT_SECTIONS; s++)
        if (some.plan.stored_bytes[s] && some.plan.placement[s] == CUZK_PLACEMENT_STREAMED) all |= 1u << s;
      EXPECT(some.create == CUZK_OK && some.prove == CUZK_OK && some.proof == ref.proof,
             "%s: streamed with half the points pinned: %s", where.c_str(), some.err);
      EXPECT(some.create != CUZK_OK || (some.plan.pinned_sections != 0 && some.plan.pinned_sections != all),
             "%s: a host budget of half the streamed points pinned sections %#x of %#x", where.c_str(),
             some.plan.pinned_sections, all);
      // One byte of host memory (0 is automatic): nothing pinned, every chunk packed from the key.
      Attempt none = prove_with(gpu, key, 0, wtns, CUZK_PROVE_SELF_CHECK, CUZK_PROVER_STREAM_ALL, CUZK_CHUNK_POINTS_MIN, 1);
      EXPECT(none.create == CUZK_OK && none.prove == CUZK_OK && none.proof == ref.proof && none.plan.pinned_sections == 0,
             "%s: streamed with nothing pinned (sections %#x): %s", where.c_str(), none.plan.pinned_sections, none.err);
    }

    // The A/B rows read in chunks per proof (the smallest chunk the plan allows: many per proof).
    Attempt rows_chunked = prove_with(gpu, key, 0, wtns, CUZK_PROVE_SELF_CHECK,
                                      CUZK_PROVER_STREAM_ROWS | CUZK_PROVER_STREAM_ALL, CUZK_CHUNK_POINTS_MIN);
    EXPECT(rows_chunked.create == CUZK_OK && rows_chunked.prove == CUZK_OK && rows_chunked.proof == ref.proof &&
               rows_chunked.plan.rows_chunk_bytes > 0,
           "%s: rows in chunks of %llu bytes, streamed in chunks of %u points: %s", where.c_str(),
           (unsigned long long)rows_chunked.plan.rows_chunk_bytes, CUZK_CHUNK_POINTS_MIN, rows_chunked.err);

    // The minimum and budgets between it and the resident plan's total: each fits, each gives the
    // CPU proof, some keep sections resident and stream others.
    const uint64_t lo = res.plan.min_budget, hi = res.plan.total_bytes;
    Attempt least = prove_with(gpu, key, lo, wtns, CUZK_PROVE_SELF_CHECK);
    EXPECT(least.create == CUZK_OK && least.prove == CUZK_OK && least.proof == ref.proof &&
               least.plan.total_bytes <= lo,
           "%s: the minimum budget: %s", where.c_str(), least.err);
    // At the minimum a proof's work and the streamed sums take turns in the same memory (the
    // witness, NTT vectors and row chunks given back around the sums): a proof alone is a group
    // of one, its H scalars to the host and back.
    EXPECT(least.plan.phases_shared == 1 && least.plan.shared_bytes > 0,
           "%s: the minimum plan does not share its phases' memory", where.c_str());
    // The minimum holds two NTT vectors (c formed again in b's place, from the rows or, for
    // evaluations the caller gives, CUZK_INPUT_ABC, from the caller's c), or more where they fit
    // in what the two phases share (the streamed sums' phase the larger: they cost nothing).
    EXPECT(least.plan.ntt_vectors == 2 || least.plan.shared_bytes >= least.plan.ntt_vectors * least.plan.vector_bytes,
           "%s: the minimum plan holds %u NTT vectors, %llu bytes shared", where.c_str(), least.plan.ntt_vectors,
           (unsigned long long)least.plan.shared_bytes);
    EXPECT(least.plan.rows_chunk_bytes > 0 || res.plan.rows_bytes <= (64u << 10),
           "%s: the minimum plan holds %llu bytes of rows whole", where.c_str(), (unsigned long long)least.plan.rows_bytes);
    {
      cuzk_key_info info{};
      cuzk_key_get_info(key, &info, nullptr, 0);
      const std::vector<uint8_t> raw = cuzk_test::raw_witness(wtns);
      std::vector<uint8_t> a, b, c;
      if (info.curve == CUZK_CURVE_BN254)
        cuzk_test::abc_from_r1cs<curve::Bn254>(r1cs, raw.data(), info.domain_size, a, b, c, info.n_public);
      else
        cuzk_test::abc_from_r1cs<curve::Bls12381>(r1cs, raw.data(), info.domain_size, a, b, c, info.n_public);
      cuzk_prover_options opt{};
      opt.struct_size = sizeof opt;
      opt.memory_budget = lo;
      cuzk_prover* prover = nullptr;
      std::vector<uint8_t> proof(ref.proof.size());
      uint8_t r[32] = {7}, sv[32] = {11};
      cuzk_status st = cuzk_prover_create_with(gpu, key, &opt, &prover, nullptr, err, sizeof err);
      if (st == CUZK_OK)
        st = prove_call_abc(prover, a.data(), b.data(), c.data(), raw.data(), 1, r, sv, CUZK_PROVE_SELF_CHECK,
                            proof.data(), proof.size(), nullptr, nullptr, err, sizeof err);
      if (prover) cuzk_prover_destroy(prover, nullptr, 0);
      EXPECT(st == CUZK_OK && proof == ref.proof, "%s: a, b, c given, two NTT vectors: %s", where.c_str(),
             st == CUZK_OK ? "another proof" : err);
    }
    bool mixed_seen = false, all_same = least.proof == ref.proof;
    Attempt mixed;
    for (int i = 1; i < 6; i++) {
      Attempt a = prove_with(gpu, key, lo + (hi - lo) * i / 6, wtns, CUZK_PROVE_SELF_CHECK);
      EXPECT(a.create == CUZK_OK && a.prove == CUZK_OK, "%s: budget %d/6: %s", where.c_str(), i, a.err);
      all_same = all_same && a.proof == ref.proof;
      if (count_placement(a.plan, CUZK_PLACEMENT_RESIDENT) > 0 && count_placement(a.plan, CUZK_PLACEMENT_STREAMED) > 0) {
        mixed_seen = true;
        mixed = a;
      }
    }
    EXPECT(all_same, "%s: a plan between the minimum and all resident gave another proof", where.c_str());
    *mixed_seen_any |= mixed_seen;
    // The H MSM in chunks of its own, larger than the other MSMs' in the same workspace: budgets
    // between the minimum and the resident plan's where the plan takes them (resident, and every
    // section streamed) give the CPU proof.
    for (uint32_t prover_flags : {0u, (uint32_t)CUZK_PROVER_STREAM_ALL}) {
      int proved = 0;
      for (int i = 0; i < 24 && proved < 2; i++) {
        const uint64_t budget = lo + (hi - lo) * i / 24;
        cuzk_memory_plan p{};
        if (!plan_of(gpu, key, budget, prover_flags, &p) || p.h_chunk_points <= p.msm_chunk_points) continue;
        Attempt a = prove_with(gpu, key, budget, wtns, CUZK_PROVE_SELF_CHECK, prover_flags);
        EXPECT(a.create == CUZK_OK && a.prove == CUZK_OK && a.proof == ref.proof,
               "%s: H in chunks of 2^%d (the others 2^%d), %s: %s", where.c_str(), __builtin_ctzll(p.h_chunk_points),
               __builtin_ctzll(p.msm_chunk_points), prover_flags ? "all streamed" : "the chooser's placements",
               a.prove == CUZK_OK && a.proof != ref.proof ? "another proof" : a.err);
        proved++;
      }
      *h_own_seen_any |= proved > 0;
    }

    Attempt tight = prove_with(gpu, key, lo - 1, wtns, CUZK_PROVE_SELF_CHECK);
    const std::string least_text = "at least " + std::to_string(lo) + " bytes";
    EXPECT(tight.create == CUZK_ERR_OUT_OF_MEMORY && std::strstr(tight.err, "device memory budget") != nullptr &&
               std::strstr(tight.err, least_text.c_str()) != nullptr,
           "%s: budget one byte short: status %d, %s", where.c_str(), tight.create, tight.err);
    // Refused before anything was allocated (the context's own buffers grow lazily: allow 64 MiB).
    EXPECT(tight.device_used < (64u << 20), "%s: the refused prover took %zu bytes of device memory", where.c_str(),
           tight.device_used);

    std::printf("%s: resident %.2f ms (B MSMs %.2f ms; all points stored: %.2f ms, B MSMs %.2f ms), streamed %.2f ms, "
                "chunks of 2^10 %.2f ms (streamed %.2f ms, rows in chunks too %.2f ms), minimum budget %.2f ms: %s\n",
                where.c_str(), res.ms, res.msm_b_ms, full.ms, full.msm_b_ms, streamed.ms, chunked.ms,
                chunked_streamed.ms, rows_chunked.ms, least.ms,
                res.proof == ref.proof && streamed.proof == ref.proof && all_same && chunked.proof == ref.proof &&
                        rows_chunked.proof == ref.proof
                    ? "identical to the CPU proof"
                    : "WRONG");
    std::printf("  plan: fixed %.1f MiB, resident %.1f MiB (device used %.1f MiB), streamed/proof %.1f MiB in the "
                "all-streamed plan, minimum %.1f MiB (took %.1f MiB), %llu points dropped; B1 %llu of %llu stored\n",
                fixed / 1048576.0, res.plan.resident_bytes / 1048576.0, res.device_used / 1048576.0,
                streamed.plan.streamed_bytes_per_proof / 1048576.0, lo / 1048576.0, least.device_used / 1048576.0,
                (unsigned long long)res.plan.points_dropped, (unsigned long long)res.plan.stored[1],
                (unsigned long long)res.plan.points[1]);
    if (key_flags) cuzk_key_close(key, nullptr, 0);
  }
  cuzk_key_close(whole, nullptr, 0);
  return true;
}

void run_all() {
  char err[512];
  cuzk_context *cpu = nullptr, *gpu = nullptr;
  if (!open_cpu_and_gpu(&cpu, &gpu)) return;
  bool mixed[2] = {false, false};  // per curve: some key gave a mixed plan between its budgets
  bool h_own[2] = {false, false};  // and some budget an H chunk of its own
  bool four[2] = {false, false};   // and some batch a plan of four NTT vectors
  for (const char* curve : {"bn254", "bls12_381"})
    for (const char* name : {"mulchain_4", "many_public", "poseidon_10"}) {
      const std::string dir = fixture_dir(curve, name);
      same_proofs(std::string(curve) + "/" + name, dir + "/circuit.zkey", dir + "/circuit.r1cs",
                  read_file(dir + "/witness.wtns"), cpu, gpu, &mixed[std::string(curve) == "bls12_381"],
                  &h_own[std::string(curve) == "bls12_381"]);
    }
  // Synthetic PoRep-shaped keys (INSECURE dev setup, made here): most B points are infinity.
  char tmpl[] = "/tmp/cuzk_gpu_key_memory_XXXXXX";
  const char* dir = mkdtemp(tmpl);
  EXPECT(dir != nullptr, "mkdtemp");
  for (uint32_t log : {12u, 16u})
    for (uint32_t curve : {CUZK_CURVE_BN254, CUZK_CURVE_BLS12_381}) {
      if (!dir) break;
      const std::string base = std::string(dir) + "/p" + std::to_string(log) + "_" + std::to_string(curve);
      const std::string r1cs = base + ".r1cs", wtns = base + ".wtns", zkey = base + ".zkey";
      const uint32_t n = (1u << log) - 16;
      if (cuzk_synth_circuit_write(curve, CUZK_SYNTH_POREP, n, 2, 3, r1cs.c_str(), wtns.c_str(), err, sizeof err) !=
              CUZK_OK ||
          cuzk_setup_insecure_dev(r1cs.c_str(), zkey.c_str(), 0, 0, nullptr, nullptr, err, sizeof err) != CUZK_OK) {
        EXPECT(false, "porep 2^%u key: %s", log, err);
        continue;
      }
      const std::string label = "porep 2^" + std::to_string(log) + (curve == CUZK_CURVE_BN254 ? " bn254" : " bls12_381");
      same_proofs(label, zkey, r1cs, read_file(wtns), cpu, gpu, &mixed[curve == CUZK_CURVE_BLS12_381],
                  &h_own[curve == CUZK_CURVE_BLS12_381]);
      // Batches of 5 witnesses with streamed sections read once per group (CPU proofs as reference).
      EXPECT(cuzk_test::check_grouped_batches(label + " batch", zkey, curve, n, cpu, gpu, true,
                                              &four[curve == CUZK_CURVE_BLS12_381]) == 0,
             "%s: grouped streaming batches", label.c_str());
    }
  EXPECT(mixed[0] && mixed[1], "no key of one curve gave a mixed plan (bn254 %d, bls12_381 %d)", mixed[0], mixed[1]);
  EXPECT(h_own[0] && h_own[1], "no budget of one curve gave the H MSM a chunk of its own (bn254 %d, bls12_381 %d)",
         h_own[0], h_own[1]);
  EXPECT(four[0] && four[1], "no batch of one curve had a plan of four NTT vectors (bn254 %d, bls12_381 %d)", four[0],
         four[1]);
  // Host memory while a GPU prover holds the key resident: the key read whole keeps its file in
  // host memory; on demand it keeps the headers, IC and coefficients only.
  if (dir) {
    const std::string base = std::string(dir) + "/rss", zkey = base + ".zkey", wtns = base + ".wtns";
    if (cuzk_synth_circuit_write(CUZK_CURVE_BLS12_381, CUZK_SYNTH_POREP, (1u << 20) - 16, 2, 3, (base + ".r1cs").c_str(),
                                 wtns.c_str(), err, sizeof err) != CUZK_OK ||
        cuzk_setup_insecure_dev((base + ".r1cs").c_str(), zkey.c_str(), 0, 0, nullptr, nullptr, err, sizeof err) !=
            CUZK_OK) {
      EXPECT(false, "porep 2^20 key: %s", err);
    } else {
      const std::vector<uint8_t> w = read_file(wtns);
      uint64_t held[2] = {0, 0};
      for (uint32_t flags : {0u, CUZK_KEY_POINTS_ON_DEMAND}) {
        const uint64_t before = cuzk_test::rss_bytes();
        cuzk_key* key = nullptr;
        cuzk_prover* prover = nullptr;
        if (cuzk_key_open(zkey.c_str(), flags | CUZK_KEY_SKIP_POINT_CHECKS, &key, err, sizeof err) != CUZK_OK ||
            cuzk_prover_create(gpu, key, 0, &prover, nullptr, err, sizeof err) != CUZK_OK) {
          EXPECT(false, "porep 2^20 prover: %s", err);
          cuzk_key_close(key, nullptr, 0);
          continue;
        }
        const uint64_t with_prover = cuzk_test::rss_bytes();
        std::vector<uint8_t> proof(CUZK_PROOF_BYTES_BLS12_381);
        const double t0 = now_ms();
        cuzk_status st = prove_call(prover, w.data(), w.size(), CUZK_WITNESS_WTNS, 1, nullptr, nullptr, 0, proof.data(),
                                    proof.size(), nullptr, nullptr, err, sizeof err);
        EXPECT(st == CUZK_OK, "porep 2^20 proof: %s", err);
        cuzk_memory_plan plan{};
        cuzk_prover_memory_plan(prover, &plan, err, sizeof err);
        held[flags ? 1 : 0] = with_prover - std::min(with_prover, before);
        std::printf("porep 2^20 bls12_381 key (%.1f MiB file) %s, GPU prover: host RSS +%.1f MiB (key holds %.1f MiB), "
                    "device resident %.1f MiB, proof %.1f ms (self-checked)\n",
                    std::filesystem::file_size(zkey) / 1048576.0, flags ? "on demand" : "read whole",
                    held[flags ? 1 : 0] / 1048576.0, plan.key_host_bytes / 1048576.0, plan.resident_bytes / 1048576.0,
                    now_ms() - t0);
        cuzk_prover_destroy(prover, nullptr, 0);
        cuzk_key_close(key, nullptr, 0);
      }
      EXPECT(held[1] + std::filesystem::file_size(zkey) / 2 < held[0] + (64u << 20),
             "on demand the host should hold far less: %llu vs %llu bytes", (unsigned long long)held[1],
             (unsigned long long)held[0]);
    }
  }
  if (dir) std::filesystem::remove_all(dir);
  cuzk_context_destroy(cpu, nullptr, 0);
  cuzk_context_destroy(gpu, nullptr, 0);
}

}  // namespace

GPU_TEST(key_memory) { return run_on_gpu0("key_memory", run_all); }
