// Device isolation (no work ever lands on another GPU): for each GPU D, a child process
// proves through the ABI on D only, then the driver's list of that process's contexts
// (nvidia-smi) must name D and no other. One process per device, so that each starts with no
// context anywhere; the parent only counts the devices, which opens none.
#include <spawn.h>
#include <sys/wait.h>

#include <cctype>

#include "gpu_check.cuh"
#include "../prove_call.hpp"

extern char** environ;

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

int prove_on_device_only(int d) {
  char err[512];
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  if (d >= count) {
    std::printf("device %d: only %d GPU(s)\n", d, count);
    return 1;
  }
  char bus[64] = {0};
  CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
  cuzk_context* ctx = nullptr;
  cuzk_key* key = nullptr;
  cuzk_prover* pr = nullptr;
  const std::string dir = fixture_dir("bls12_381", "poseidon_10");
  std::vector<uint8_t> wtns = read_file(dir + "/witness.wtns");
  bool ok = !wtns.empty() && cuzk_context_create(CUZK_BACKEND_CUDA, d, 0, 0, &ctx, err, sizeof err) == CUZK_OK &&
            cuzk_key_open((dir + "/circuit.zkey").c_str(), 0, &key, err, sizeof err) == CUZK_OK &&
            cuzk_prover_create(ctx, key, 0, &pr, nullptr, err, sizeof err) == CUZK_OK;
  std::vector<uint8_t> proof(1024);
  ok = ok && prove_call(pr, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, 1, nullptr, nullptr, CUZK_PROVE_SELF_CHECK,
                        proof.data(), proof.size(), nullptr, nullptr, err, sizeof err) == CUZK_OK;
  EXPECT(ok, "device %d: proof: %s", d, wtns.empty() ? "no witness" : err);
  // the contexts this process holds, by PCI bus id, while the prover is alive
  FILE* f = popen("nvidia-smi --query-compute-apps=pid,gpu_bus_id --format=csv,noheader", "r");
  int mine = 0, elsewhere = 0;
  char line[256];
  std::string me = std::to_string(getpid());
  auto lower = [](std::string x) {
    for (auto& c : x) c = (char)std::tolower(c);
    return x;
  };
  // bus ids: nvidia-smi prints 00000000:XX:00.0, CUDA XXXX:XX:00.0 (case may differ)
  const std::string want = lower(std::string(bus)).substr(std::string(bus).find(':'));
  while (f && std::fgets(line, sizeof line, f)) {
    std::string l(line);
    if (l.rfind(me + ",", 0) != 0) continue;
    std::string id = l.substr(l.find(',') + 1);
    if (lower(id).find(want) != std::string::npos) mine++;
    else elsewhere++;
  }
  if (f) pclose(f);
  EXPECT(mine == 1 && elsewhere == 0, "device %d (%s): contexts on it %d, on other GPUs %d", d, bus, mine, elsewhere);
  std::printf("device %d (%s): self-checked proof, contexts of this process: %d on it, %d on other GPUs\n", d, bus,
              mine, elsewhere);
  cuzk_prover_destroy(pr, nullptr, 0);
  cuzk_key_close(key, nullptr, 0);
  cuzk_context_destroy(ctx, nullptr, 0);
  return finish(("device " + std::to_string(d)).c_str());
}

}  // namespace

// `gpu_tests device`: one child per GPU; `gpu_tests device D`: the check on GPU D in this process.
GPU_TEST(device) {
  if (argc > 1) return prove_on_device_only(std::atoi(argv[1]));
  if (int code = exit_code_without_gpu("device"); code >= 0) return code;
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  int failed = 0;
  for (int d = 0; d < count; d++) {
    std::fflush(stdout);
    std::string arg = std::to_string(d);
    char* child_argv[] = {const_cast<char*>("gpu_tests"), const_cast<char*>("device"), arg.data(), nullptr};
    pid_t pid = 0;
    int status = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, child_argv, environ) != 0 ||
        waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failed++;
      std::printf("FAIL device %d: the child process failed (status %d)\n", d, status);
    }
  }
  std::printf("SECTION device: %s (%d of %d GPUs failed)\n", failed ? "FAILED" : "passed", failed, count);
  return failed ? 1 : 0;
}
