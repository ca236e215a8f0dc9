// Whole proofs of the committed fixtures through the C ABI, both curves: a batch of two on the
// CUDA backend (self-checked) must be byte-identical to the CPU backend's for the same r, s.
// `gpu_tests e2e stream` (the gpu_e2e_stream test) streams the key's points in per MSM instead.
#include "gpu_check.cuh"
#include "../prove_call.hpp"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

void prove_fixtures(bool stream) {
  char err[512];
  std::printf("e2e: key points %s\n", stream ? "streamed in per MSM (CUZK_PROVER_STREAM_ALL)" : "resident on the GPU");
  cuzk_context *cpu = nullptr, *gpu = nullptr;
  if (cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &cpu, err, sizeof err) != CUZK_OK ||
      cuzk_context_create(CUZK_BACKEND_CUDA, 0, 0, 0, &gpu, err, sizeof err) != CUZK_OK) {
    EXPECT(false, "contexts: %s", err);
    return;
  }
  const char* names[] = {"single", "mulchain_4", "mulchain_8_over", "zero_public", "many_public", "bits_10",
                         "poseidon_10", "mulchain_10", "mulchain_10_over"};
  for (const char* curve : {"bn254", "bls12_381"})
    for (const char* name : names) {
      const std::string label = std::string(curve) + "/" + name, dir = fixture_dir(curve, name);
      std::vector<uint8_t> wtns = read_file(dir + "/witness.wtns");
      if (wtns.empty()) {
        EXPECT(false, "%s: no witness at %s", label.c_str(), dir.c_str());
        continue;
      }
      cuzk_key* key = nullptr;
      if (cuzk_key_open((dir + "/circuit.zkey").c_str(), 0, &key, err, sizeof err) != CUZK_OK) {
        EXPECT(false, "%s: %s", label.c_str(), err);
        continue;
      }
      cuzk_key_info info{};
      cuzk_key_get_info(key, &info, err, sizeof err);
      cuzk_prover *pc = nullptr, *pg = nullptr;
      bool ok = cuzk_prover_create(cpu, key, 0, &pc, nullptr, err, sizeof err) == CUZK_OK;
      ok = ok && make_prover(gpu, key, stream, &pg, err, sizeof err) == CUZK_OK;
      EXPECT(ok, "%s: prover: %s", label.c_str(), err);
      if (ok) {
        std::vector<uint8_t> r(32 * 2, 0), s(32 * 2, 0);
        r[0] = 7; r[32] = 9; s[0] = 11; s[32] = 13;
        std::vector<uint8_t> batch(wtns.size() * 2);
        std::memcpy(batch.data(), wtns.data(), wtns.size());
        std::memcpy(batch.data() + wtns.size(), wtns.data(), wtns.size());
        std::vector<uint8_t> p1(info.proof_bytes * 2), p2(info.proof_bytes * 2);
        cuzk_timings tg[2];
        cuzk_status a = prove_call(pc, batch.data(), wtns.size(), CUZK_WITNESS_WTNS, 2, r.data(), s.data(), 0,
                                   p1.data(), p1.size(), nullptr, nullptr, err, sizeof err);
        cuzk_status b = prove_call(pg, batch.data(), wtns.size(), CUZK_WITNESS_WTNS, 2, r.data(), s.data(),
                                   CUZK_PROVE_SELF_CHECK, p2.data(), p2.size(), tg, nullptr, err, sizeof err);
        EXPECT(a == CUZK_OK && b == CUZK_OK, "%s: prove cpu %d gpu %d: %s", label.c_str(), a, b, err);
        bool same = p1 == p2;
        EXPECT(same, "%s: GPU proof differs from the CPU proof", label.c_str());
        std::printf("e2e %s (2^%u): %s, gpu %.2f ms/proof (msm_h %.3f ms)\n", label.c_str(), info.log_domain,
                    b == CUZK_OK && same ? "identical to CPU, self-checked" : "WRONG", tg[1].total_ns / 2e6,
                    (tg[1].phases[CUZK_PHASE_MSM_H].end_ns - tg[1].phases[CUZK_PHASE_MSM_H].start_ns) / 1e6);
      }
      cuzk_prover_destroy(pc, nullptr, 0);
      cuzk_prover_destroy(pg, nullptr, 0);
      cuzk_key_close(key, nullptr, 0);
    }
  cuzk_context_destroy(cpu, nullptr, 0);
  cuzk_context_destroy(gpu, nullptr, 0);
}

}  // namespace

GPU_TEST(e2e) {
  const bool stream = stream_arg(argc, argv);
  return run_on_gpu0("e2e", [stream] { prove_fixtures(stream); });
}
