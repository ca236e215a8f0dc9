// Every size a caller of the C ABI chooses has a bound, checked before anything is started or
// allocated: thread counts (at most the online CPUs; a thread the OS refuses is an error, never a
// hang), GPU indices, batch sizes against their strides, host buffers, kernel sizes.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
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
#include "util/machine.hpp"
#include "util/thread_pool.hpp"

namespace {

using Bytes = std::vector<uint8_t>;

using cuzk_test::read_file;

using cuzk_test::threads_now;

uint64_t vm_bytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t pages = 0;
  f >> pages;
  return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

unsigned limit() { return std::max(1u, std::thread::hardware_concurrency()); }

// In a child whose address space leaves no room for another thread stack: a pool or context of
// `limit()` threads fails with an error and the child exits, within the alarm (a hang is a failure).
void refused_threads() {
  if (limit() < 2) { std::printf("  (one CPU: no worker thread to refuse; skipped)\n"); return; }
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = vm_bytes() + (1u << 20);  // 1 MiB more than now: no 8 MiB stack fits
    setrlimit(RLIMIT_AS, &rl);
    int code = 0;
    std::string why;
    if (cuzk::ThreadPool::create(limit(), why) != nullptr || why.empty()) code |= 1;
    cuzk_context* ctx = nullptr;
    char err[512] = {0};
    cuzk_status st = cuzk_context_create(CUZK_BACKEND_CPU, 0, limit(), 0, &ctx, err, sizeof err);
    if (st != CUZK_ERR_OUT_OF_MEMORY || ctx != nullptr || std::strstr(err, "could not start") == nullptr) code |= 2;
    std::fprintf(stderr, "  child: pool '%s'; context %s '%s'\n", why.c_str(), cuzk_status_name(st), err);
    _exit(code);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));  // not killed by the alarm (a hang) or a signal (a crash)
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::fprintf(stderr, "  child status %d\n", status);
}

void thread_counts() {
  cuzk_library_info info{};
  char err[512];
  CHECK(cuzk_library_info_get(&info, err, sizeof err) == CUZK_OK);
  CHECK(info.cpu_threads == limit());

  const int before = threads_now();
  for (uint32_t n : {limit() + 1, 100000u, UINT32_MAX}) {
    cuzk_context* ctx = nullptr;
    CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, n, 0, &ctx, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
    CHECK(ctx == nullptr);
    CHECK(std::strstr(err, ("exceeds this machine's " + std::to_string(limit()) + " online CPUs").c_str()) != nullptr);
    CHECK(cuzk_setup_insecure_dev("tests/fixtures/bn254/mulchain_4/circuit.r1cs", "/tmp/cuzk_bounds_never.zkey", n, 0,
                                  nullptr, nullptr, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  }
  CHECK(threads_now() == before);  // nothing was started for the refused counts
  cuzk_context* ctx = nullptr;
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, limit(), 0, &ctx, err, sizeof err) == CUZK_OK);
  CHECK(threads_now() == before + (int)limit() - 1);  // the caller's thread is the pool's last
  cuzk_context_destroy(ctx, err, sizeof err);
  CHECK(threads_now() == before);
}

void device_indices() {
  char err[512];
  for (uint32_t backend : {CUZK_BACKEND_CPU, CUZK_BACKEND_AUTO, CUZK_BACKEND_CUDA}) {
    for (int32_t device : {-1, INT32_MIN}) {
      cuzk_context* ctx = nullptr;
      CHECK(cuzk_context_create(backend, device, 0, 0, &ctx, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
      CHECK(ctx == nullptr && std::strstr(err, "negative") != nullptr);
    }
  }
  cuzk_context* ctx = nullptr;
  cuzk_status st = cuzk_context_create(CUZK_BACKEND_CUDA, INT32_MAX, 0, 0, &ctx, err, sizeof err);
  CHECK(st == CUZK_ERR_NO_DEVICE || st == CUZK_ERR_UNSUPPORTED);  // UNSUPPORTED: a build without CUDA
  CHECK(ctx == nullptr);
  CHECK(cuzk_context_create(CUZK_BACKEND_AUTO, INT32_MAX, 0, 0, &ctx, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_context_backend(ctx) == CUZK_BACKEND_CPU);  // AUTO without that GPU: the CPU
  cuzk_context_destroy(ctx, err, sizeof err);
  cuzk_device_info dev{};
  CHECK(cuzk_device_info_get(-1, &dev, err, sizeof err) == CUZK_ERR_NO_DEVICE);
  CHECK(cuzk_device_info_get(INT32_MAX, &dev, err, sizeof err) == CUZK_ERR_NO_DEVICE);
}

void batch_sizes() {
  char err[512];
  cuzk_key* key = nullptr;
  cuzk_context* ctx = nullptr;
  cuzk_prover* prover = nullptr;
  CHECK(cuzk_key_open("tests/fixtures/bn254/mulchain_10/circuit.zkey", 0, &key, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &ctx, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_prover_create(ctx, key, 0, &prover, nullptr, err, sizeof err) == CUZK_OK);
  if (!prover) return;
  const Bytes wtns = read_file("tests/fixtures/bn254/mulchain_10/witness.wtns");
  uint8_t proofs[3 * CUZK_PROOF_BYTES_BN254];
  // Three records of SIZE_MAX / 2 bytes: their total does not fit in size_t. Refused before any read.
  CHECK(prove_call(prover, wtns.data(), SIZE_MAX / 2, CUZK_WITNESS_WTNS, 3, nullptr, nullptr, 0, proofs, sizeof proofs,
                   nullptr, nullptr, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strstr(err, "exceed the address space") != nullptr);
  // A batch larger than its proofs buffer.
  CHECK(prove_call(prover, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, SIZE_MAX, nullptr, nullptr, 0, proofs,
                   sizeof proofs, nullptr, nullptr, err, sizeof err) == CUZK_ERR_SHORT_BUFFER);
  // a, b, c of domain_size values per proof: a batch whose proofs fit a (claimed) buffer but whose inputs overflow.
  cuzk_key_info info{};
  cuzk_key_get_info(key, &info, err, sizeof err);
  const size_t record = (size_t)info.domain_size * 32, n = SIZE_MAX / record + 1;
  CHECK(n <= SIZE_MAX / CUZK_PROOF_BYTES_BN254);  // so that the proofs buffer is not what refuses it
  CHECK(prove_call_abc(prover, wtns.data(), wtns.data(), wtns.data(), wtns.data(), n, nullptr, nullptr, 0, proofs,
                       SIZE_MAX, nullptr, nullptr, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strstr(err, "exceed the address space") != nullptr);
  // Sanity: one proof of the same witness works.
  CHECK(prove_call(prover, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, 1, nullptr, nullptr, 0, proofs, sizeof proofs,
                   nullptr, nullptr, err, sizeof err) == CUZK_OK);

  // Kernels: MSM sizes and NTT lengths.
  uint8_t out[256];
  CHECK(cuzk_msm(ctx, CUZK_CURVE_BN254, CUZK_G1, wtns.data(), wtns.data(), size_t(1) << 31, out, sizeof out, nullptr,
                 err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_msm(ctx, CUZK_CURVE_BN254, CUZK_G1, wtns.data(), wtns.data(), SIZE_MAX, out, sizeof out, nullptr, err,
                 sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  uint8_t values[32] = {0};
  CHECK(cuzk_ntt(ctx, CUZK_CURVE_BN254, values, 28, CUZK_NTT_FORWARD, nullptr, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  cuzk_prover_destroy(prover, err, sizeof err);
  cuzk_context_destroy(ctx, err, sizeof err);
  cuzk_key_close(key, err, sizeof err);
}

void host_memory() {
  char err[512];
  void* p = nullptr;
  uint32_t flags = 0;
  const uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
  uint64_t live_before = 0;
  cuzk_host_stats(&live_before, nullptr, nullptr, nullptr);
  CHECK(cuzk_host_alloc((size_t)phys + 1, 0, 0, &p, &flags, err, sizeof err) == CUZK_ERR_OUT_OF_MEMORY);
  CHECK(p == nullptr && std::strstr(err, "more than this machine's memory") != nullptr);
  CHECK(cuzk_host_alloc(SIZE_MAX, CUZK_HOST_PINNED, 0, &p, &flags, err, sizeof err) == CUZK_ERR_OUT_OF_MEMORY);
  CHECK(cuzk_host_alloc(4096, 0, -1, &p, &flags, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  uint64_t live_after = 0;
  cuzk_host_stats(&live_after, nullptr, nullptr, nullptr);
  CHECK(live_after == live_before);
  CHECK(cuzk_host_alloc(4096, 0, 0, &p, &flags, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_host_free(p, err, sizeof err) == CUZK_OK);
  uint8_t buf[64];
  CHECK(cuzk_host_register(buf, SIZE_MAX, nullptr, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
}

// The memory page-locked allocations may take: read from the kernel's and the cgroup's files, the
// reserve kept free, and a refusal that names both.
void pinnable_memory() {
  CHECK(cuzk::meminfo_available_bytes("MemTotal:       131072000 kB\nMemFree:         1000 kB\nMemAvailable:   "
                                      "  2048 kB\nBuffers: 1 kB\n") == 2048ull * 1024);
  CHECK(cuzk::meminfo_available_bytes("MemTotal: 1 kB\nMemFree: 1 kB\n") == UINT64_MAX);
  CHECK(cuzk::meminfo_available_bytes("MemAvailable: lots\n") == UINT64_MAX);
  CHECK(cuzk::meminfo_available_bytes("MemAvailable: 99999999999999999999999 kB\n") == UINT64_MAX);
  CHECK(cuzk::meminfo_available_bytes("") == UINT64_MAX);
  CHECK(cuzk::cgroup_room_bytes("max\n", "1000\n", "") == UINT64_MAX);
  CHECK(cuzk::cgroup_room_bytes("", "", "") == UINT64_MAX);
  CHECK(cuzk::cgroup_room_bytes("10000\n", "4000\n", "") == 6000);
  CHECK(cuzk::cgroup_room_bytes("10000\n", "4000\n", "anon 1\nactive_file 9\ninactive_file 1500\n") == 7500);
  CHECK(cuzk::cgroup_room_bytes("10000\n", "12000\n", "inactive_file 1000\n") == 0);
  CHECK(cuzk::cgroup_room_bytes("10000\n", "4000\n", "inactive_file 9000\n") == 10000);
  // This machine: something is available and less than physical memory; all of it is never pinnable.
  const uint64_t available = cuzk::available_memory();
  CHECK(available > 0 && (available == UINT64_MAX || available <= cuzk::physical_memory()));
  CHECK(cuzk::pinning_reserve() >= (1ull << 30) && cuzk::pinning_reserve() >= cuzk::physical_memory() / 32);
  const uint64_t pinnable = cuzk::pinnable_bytes();
  if (available != UINT64_MAX) {
    CHECK(pinnable < available);
    CHECK(!cuzk::pinnable(pinnable + (1ull << 30)));
    const std::string refusal = cuzk::pinning_refusal(pinnable + (1ull << 30));
    CHECK(refusal.find("of the ") != std::string::npos && refusal.find("available") != std::string::npos &&
          refusal.find("reserve") != std::string::npos);
    if (pinnable > 0) CHECK(cuzk::pinnable(pinnable / 2) && cuzk::pinning_refusal(pinnable / 2).empty());
    // A small allocation keeps only its own size free: a staging buffer is pinned below the reserve.
    if (available > (192ull << 20)) CHECK(cuzk::pinnable(64ull << 20));
  }
}

void setup_sizes() {
  char err[512];
  size_t r1cs_len = 0, wtns_len = 0;
  CHECK(cuzk_synth_circuit(CUZK_CURVE_BN254, CUZK_SYNTH_UNIFORM, (1u << 30) + 1, 0, 1, nullptr, 0, &r1cs_len, nullptr, 0,
                           &wtns_len, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_synth_circuit(CUZK_CURVE_BN254, CUZK_SYNTH_UNIFORM, 0, 0, 1, nullptr, 0, &r1cs_len, nullptr, 0, &wtns_len,
                           err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_synth_circuit(CUZK_CURVE_BN254, CUZK_SYNTH_UNIFORM, 10, 11, 1, nullptr, 0, &r1cs_len, nullptr, 0,
                           &wtns_len, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
}

}  // namespace

int main() {
  refused_threads();  // first: the child must not inherit pools of this process
  thread_counts();
  device_indices();
  batch_sizes();
  host_memory();
  pinnable_memory();
  setup_sizes();
  return cuzk_test::finish("bounds_test");
}
