// A proving loop, both curves: 20 self-checked proofs on one GPU prover, the witness written into a
// pinned buffer from cuzk_host_alloc made once. After the first proof nothing may be page-locked
// again: the library's own staging allocations (cuzk_staging_stats) stay put and no proof has a
// HOST_REGISTER phase. `gpu_tests proving_loop stream` (the gpu_proving_loop_stream test) streams
// the key's points in per MSM instead.
#include "gpu_check.cuh"
#include "../prove_call.hpp"
#include "util/machine.hpp"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

void proving_loop(cuzk_context* gpu, const char* curve, bool stream) {
  char err[512];
  const std::string dir = fixture_dir(curve, "poseidon_10");
  std::vector<uint8_t> wtns = read_file(dir + "/witness.wtns");
  cuzk_key* key = nullptr;
  cuzk_prover* pg = nullptr;
  if (wtns.empty() || cuzk_key_open((dir + "/circuit.zkey").c_str(), 0, &key, err, sizeof err) != CUZK_OK ||
      make_prover(gpu, key, stream, &pg, err, sizeof err) != CUZK_OK) {
    EXPECT(false, "loop %s: %s", dir.c_str(), wtns.empty() ? "no witness" : err);
    cuzk_key_close(key, nullptr, 0);
    return;
  }
  cuzk_key_info info{};
  cuzk_key_get_info(key, &info, err, sizeof err);
  void* pinned = nullptr;
  uint32_t got_flags = 0;
  EXPECT(cuzk_host_alloc(wtns.size(), CUZK_HOST_PINNED, 0, &pinned, &got_flags, err, sizeof err) == CUZK_OK &&
             (got_flags & CUZK_HOST_IS_PINNED),
         "loop: pinned witness buffer: %s", err);
  // More page-locked memory than the host has available (less the reserve) is refused, named,
  // before the driver locks anything: the kernel's OOM killer would end the process instead.
  if (const uint64_t room = pinnable_bytes(); room != UINT64_MAX) {
    void* too_much = nullptr;
    uint64_t live_before = 0, live_after = 0;
    cuzk_host_stats(&live_before, nullptr, nullptr, nullptr);
    const cuzk_status refused =
        cuzk_host_alloc((size_t)(room + (1ull << 30)), CUZK_HOST_PINNED, 0, &too_much, nullptr, err, sizeof err);
    cuzk_host_stats(&live_after, nullptr, nullptr, nullptr);
    EXPECT(refused == CUZK_ERR_OUT_OF_MEMORY && too_much == nullptr && std::strstr(err, "available") != nullptr &&
               live_after == live_before,
           "loop: a pinned buffer beyond the available memory: status %d, %s", (int)refused, err);
  }
  uint64_t bytes1 = 0, allocs0 = 0, allocs1 = 0, ns1 = 0, allocs20 = 0, ns20 = 0, bytes20 = 0;
  cuzk_staging_stats(nullptr, &allocs0, nullptr);
  std::vector<uint8_t> proof(info.proof_bytes);
  std::vector<double> ms;
  uint64_t register_ns = 0;
  int failed = 0;
  for (int i = 0; i < 20 && pinned; i++) {
    std::memcpy(pinned, wtns.data(), wtns.size());  // the producer writes into the pinned buffer
    cuzk_timings t{};
    t.struct_size = sizeof t;
    cuzk_status st = prove_call(pg, static_cast<uint8_t*>(pinned), wtns.size(), CUZK_WITNESS_WTNS, 1, nullptr,
                                nullptr, CUZK_PROVE_SELF_CHECK, proof.data(), proof.size(), &t, nullptr, err, sizeof err);
    if (st != CUZK_OK) { failed++; std::printf("  loop %s proof %d: %s\n", curve, i, err); }
    const auto& reg = t.phases[CUZK_PHASE_HOST_REGISTER];
    register_ns += reg.end_ns - reg.start_ns;
    ms.push_back(t.total_ns / 1e6);
    if (i == 0) cuzk_staging_stats(&bytes1, &allocs1, &ns1);
  }
  cuzk_staging_stats(&bytes20, &allocs20, &ns20);
  EXPECT(pinned != nullptr && failed == 0, "loop %s: %d of 20 proofs failed", curve, pinned ? failed : 20);
  EXPECT(allocs20 == allocs1 && ns20 == ns1 && bytes20 == bytes1,
         "loop %s: staging pinned again after the first proof (%llu -> %llu allocations)", curve,
         (unsigned long long)allocs1, (unsigned long long)allocs20);
  EXPECT(register_ns == 0, "loop %s: %llu ns in HOST_REGISTER", curve, (unsigned long long)register_ns);
  if (!ms.empty())
    std::printf("e2e loop %s poseidon_10: 20 proofs self-checked (%d failed), median %.2f ms/proof; staging: "
                "%llu pinned allocations (%.1f MiB, %.1f ms) in proof 1, %llu in proofs 2-20; HOST_REGISTER "
                "phases %llu ns\n",
                curve, failed, median(ms), (unsigned long long)(allocs1 - allocs0), bytes1 / 1048576.0, ns1 / 1e6,
                (unsigned long long)(allocs20 - allocs1), (unsigned long long)register_ns);
  cuzk_host_free(pinned, nullptr, 0);
  cuzk_prover_destroy(pg, nullptr, 0);
  cuzk_key_close(key, nullptr, 0);
}

}  // namespace

GPU_TEST(proving_loop) {
  const bool stream = stream_arg(argc, argv);
  return run_on_gpu0("e2e-loop", [stream] {
    char err[512];
    cuzk_context* gpu = nullptr;
    if (cuzk_context_create(CUZK_BACKEND_CUDA, 0, 0, 0, &gpu, err, sizeof err) != CUZK_OK) {
      EXPECT(false, "context: %s", err);
      return;
    }
    for (const char* curve : {"bn254", "bls12_381"}) proving_loop(gpu, curve, stream);
    cuzk_context_destroy(gpu, nullptr, 0);
  });
}
