// gpu_tests <name> [args]: runs the GPU test registered as <name> (GPU_TEST, gpu_check.cuh).
#include <cstdlib>

#include "cuda/runtime/runtime.cuh"
#include "gpu_check.cuh"

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "";
  // The harness, not the library, reads the environment: per-kernel TRACE lines for tuning runs.
  cuzk::cuda::g_kernel_trace = std::getenv("CUZK_KERNEL_TRACE") != nullptr;
  for (const auto& test : cuzk::gpu_check::registered_tests())
    if (name == test.name) return test.main(argc - 1, argv + 1);
  std::printf("usage: gpu_tests <test> [args]; tests:");
  for (const auto& test : cuzk::gpu_check::registered_tests()) std::printf(" %s", test.name);
  std::printf("\n");
  return 2;
}
