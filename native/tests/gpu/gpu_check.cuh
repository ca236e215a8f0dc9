// What the GPU tests (native/tests/gpu/*_test.cu) and the GPU benchmarks (bench/gpu/gpu_bench.cu)
// share: a harness that skips cleanly on a machine without a GPU, device arrays, inputs with known
// answers (points k*G, scalars with 0, 1 and r-1 among them, a synthetic key) and the host
// references the GPU results are checked against.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>

#include "cuda/backend.hpp"
#include "cuda/context/device_context.cuh"
#include "cuda/msm/bases.cuh"
#include "cuzk.h"
#include "curve/ops.hpp"
#include "engine/engine.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::gpu_check {

using cuda::DeviceContext;
using cuda::DeviceCurve;
using cuda::Group;

// ctest's SKIP_RETURN_CODE for these tests (native/tests/CMakeLists.txt).
constexpr int kSkipped = 77;

inline int g_failures = 0;
inline DeviceContext* g_dev = nullptr;  // GPU 0, opened by run_on_gpu0

#define EXPECT(cond, ...)                                 \
  do {                                                    \
    if (!(cond)) {                                        \
      ::cuzk::gpu_check::g_failures++;                    \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__);    \
      std::printf(__VA_ARGS__);                           \
      std::printf("\n");                                  \
    }                                                     \
  } while (0)

#define CHECK_CUDA(expr)                                                                                  \
  do {                                                                                                    \
    cudaError_t e_ = (expr);                                                                              \
    if (e_ != cudaSuccess) {                                                                              \
      std::printf("FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_));           \
      std::exit(2);                                                                                       \
    }                                                                                                     \
  } while (0)
// `expr` may name `err`, the std::string the call writes its message into.
#define CHECK_OK(expr)                                                                        \
  do {                                                                                        \
    std::string err;                                                                          \
    cuzk_status s_ = (expr);                                                                  \
    if (s_ != CUZK_OK) {                                                                      \
      std::printf("FATAL %s:%d: %s: status %d: %s\n", __FILE__, __LINE__, #expr, s_, err.c_str()); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

// The GPU tests link into one runner, gpu_tests (main.cu): each would carry the library's whole
// device code, so one binary instead of one per test keeps a build folder small enough to carry
// to a GPU host. ctest runs `gpu_tests <name> [args]` once per test, each in its own process.
// A prover whose key points are resident (the default) or, with `stream` (the gpu_<name>_stream
// tests pass "stream" as the test's argument), every section streamed in per MSM.
inline cuzk_status make_prover(cuzk_context* ctx, cuzk_key* key, bool stream, cuzk_prover** out, char* err,
                               size_t err_cap) {
  cuzk_prover_options opt{};
  opt.struct_size = sizeof opt;
  opt.flags = stream ? CUZK_PROVER_STREAM_ALL : 0;
  opt.h_copies = CUZK_H_COPIES_AUTO;
  return cuzk_prover_create_with(ctx, key, &opt, out, nullptr, err, err_cap);
}
inline bool stream_arg(int argc, char** argv) { return argc > 1 && std::string(argv[1]) == "stream"; }

// GPU_TEST(name) { ... } defines and registers one; argv[0] is its name.
using TestMain = int (*)(int argc, char** argv);
struct RegisteredTest {
  const char* name;
  TestMain main;
};
inline std::vector<RegisteredTest>& registered_tests() {
  static std::vector<RegisteredTest> tests;
  return tests;
}
struct TestRegistration {
  TestRegistration(const char* name, TestMain main) { registered_tests().push_back({name, main}); }
};
#define GPU_TEST(name)                                                                                   \
  static int gpu_test_##name(int argc, char** argv);                                                     \
  static const ::cuzk::gpu_check::TestRegistration gpu_test_registration_##name(#name, gpu_test_##name); \
  static int gpu_test_##name([[maybe_unused]] int argc, [[maybe_unused]] char** argv)

// -1 when a CUDA device is present; otherwise the exit code: kSkipped, or 1 where the caller
// requires a GPU (CUZK_GPU_REQUIRED=1, as bench/gpu/run.sh sets), so that a GPU host whose driver
// fails does not pass as "skipped".
inline int exit_code_without_gpu(const char* name) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaSuccess && count > 0) return -1;
  const std::string why =
      e == cudaSuccess ? "no CUDA device" : std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
  const char* required = std::getenv("CUZK_GPU_REQUIRED");
  if (required && std::strcmp(required, "1") == 0) {
    std::printf("FAIL %s: CUZK_GPU_REQUIRED=1 but %s\n", name, why.c_str());
    return 1;
  }
  std::printf("SKIP %s: %s; it needs a GPU (`ctest -L gpu` on a GPU host)\n", name, why.c_str());
  return kSkipped;
}

// The closing line run.sh's table gathers, and the exit status.
inline int finish(const char* name) {
  std::printf("SECTION %s: %s (%d failures)\n", name, g_failures ? "FAILED" : "passed", g_failures);
  return g_failures ? 1 : 0;
}

// A CPU and a CUDA context through the C ABI, for the tests that compare the two backends; false
// (and one failure recorded) when either is refused.
inline bool open_cpu_and_gpu(cuzk_context** cpu, cuzk_context** gpu) {
  char err[512];
  if (cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, cpu, err, sizeof err) != CUZK_OK ||
      cuzk_context_create(CUZK_BACKEND_CUDA, 0, 0, 0, gpu, err, sizeof err) != CUZK_OK) {
    EXPECT(false, "contexts: %s", err);
    return false;
  }
  return true;
}

// Skips without a GPU; otherwise opens GPU 0 as g_dev, runs body, closes it and reports.
template <class Body>
int run_on_gpu0(const char* name, Body&& body) {
  if (int code = exit_code_without_gpu(name); code >= 0) return code;
  cudaDeviceProp p{};
  CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, %d SMs, %.0f GiB\n", p.name, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0);
  CHECK_OK(cuda::open_device(0, &g_dev, err));
  body();
  cuda::close_device(g_dev);
  g_dev = nullptr;
  return finish(name);
}

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The committed fixtures live in <repo>/tests/fixtures. ctest runs these tests in their build
// folder, which may have been carried to another machine under another path: look upward from
// there first, then in the source tree this build was configured from.
inline std::string fixture_dir(const std::string& curve, const std::string& name) {
  const std::string rel = "tests/fixtures/" + curve + "/" + name;
  std::string up;
  for (int depth = 0; depth < 8; depth++, up += "../")
    if (std::ifstream(up + rel + "/circuit.zkey").good()) return up + rel;
#ifdef CUZK_SOURCE_DIR
  return std::string(CUZK_SOURCE_DIR) + "/" + rel;
#else
  return rel;
#endif
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

template <class T>
struct DevArray {
  T* p = nullptr;
  size_t n = 0;
  explicit DevArray(size_t count) : n(count) { CHECK_CUDA(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T))); }
  ~DevArray() { cudaFree(p); }
  DevArray(const DevArray&) = delete;
  // cudaMemcpy from pageable memory may return before the DMA lands, and the library's kernels
  // run on a non-blocking stream that does not wait for it: synchronise before anyone reads p.
  void upload(const T* h) {
    CHECK_CUDA(cudaMemcpy(p, h, n * sizeof(T), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  void download(T* h) const { CHECK_CUDA(cudaMemcpy(h, p, n * sizeof(T), cudaMemcpyDeviceToHost)); }
};

// Parallel loop over [0, n) on plain threads (the host references).
template <class Fn>
void par_for(size_t n, Fn fn) {
  unsigned t = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (unsigned k = 0; k < t; k++)
    th.emplace_back([&, k] {
      for (size_t i = n * k / t; i < n * (k + 1) / t; i++) fn(i);
    });
  for (auto& x : th) x.join();
}

// MSM_ONLY="bls12-381 G2" (a substring of the group's name) runs only the matching groups.
inline bool msm_selected(const char* name) {
  const char* only = std::getenv("MSM_ONLY");
  return !only || std::strstr(name, only) != nullptr;
}

// ---------------------------------------------------------------------------------------------
// inputs with known answers
// ---------------------------------------------------------------------------------------------
template <class HC, int G>
struct Gen;
template <class HC>
struct Gen<HC, 1> {
  static const typename HC::G1& g() { return HC::g1_generator(); }
  using HostField = typename HC::Fq;
};
template <class HC>
struct Gen<HC, 2> {
  static const typename HC::G2& g() { return HC::g2_generator(); }
  using HostField = typename HC::Fq2;
};

// out[i] = (k0 + i) * g: a chain of additions per thread, one inversion per point.
template <class A, class X>
__global__ void gen_points(A* out, size_t n, uint64_t k0, A g) {
  size_t first = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 64;
  if (first >= n) return;
  uint64_t k = k0 + first;
  X q = X::infinity();
  for (int b = 63; b >= 0; b--) {
    q = q.dbl();
    if ((k >> b) & 1) q = q.add_affine(g);
  }
  for (size_t j = 0; j < 64 && first + j < n; j++) {
    auto zzz_inv = q.ZZZ.inverse();
    auto z_inv = q.ZZ * zzz_inv;
    out[first + j] = A{q.X * z_inv.sqr(), q.Y * zzz_inv};
    q = q.add_affine(g);
  }
}

// pts[i] = (k0 + i) * G for i < n, made on the GPU.
template <class HC, int G>
void make_points_on_gpu(DevArray<typename Group<HC, G>::Affine>& pts, size_t n, uint64_t k0) {
  using A = typename Group<HC, G>::Affine;
  A g;
  std::memcpy(&g, &Gen<HC, G>::g(), sizeof g);
  gen_points<A, typename Group<HC, G>::Xyzz><<<cuda::ceil_div(n / 64 + 1, 128), 128>>>(pts.p, n, k0, g);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
}

// n scalars below r, 32 bytes standard LE each; zero_one_fraction of them 0 or 1; r-1, 0 and 1 at
// indices 3, 5 and 7 when n > 10.
template <class Fr>
std::vector<uint8_t> random_scalars(size_t n, uint64_t seed, double zero_one_fraction) {
  std::vector<uint8_t> s(n * 32);
  const unsigned T = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (unsigned t = 0; t < T; t++)
    th.emplace_back([&, t] {
      std::mt19937_64 rng(seed * 1000 + t);
      std::uniform_real_distribution<double> u(0, 1);
      for (size_t i = n * t / T; i < n * (t + 1) / T; i++) {
        uint64_t* w = reinterpret_cast<uint64_t*>(&s[i * 32]);
        if (zero_one_fraction > 0 && u(rng) < zero_one_fraction) {
          w[0] = rng() & 1;
          w[1] = w[2] = w[3] = 0;
          continue;
        }
        do {  // uniform below r: mask to r's bit length, reject the rest
          for (int k = 0; k < 4; k++) w[k] = rng();
          w[3] &= (1ull << (Fr::Params::BITS - 192)) - 1;
        } while (!Fr::from_raw(w).is_canonical());
      }
    });
  for (auto& x : th) x.join();
  // a few special values wherever they land
  if (n > 10) {
    uint64_t* w = reinterpret_cast<uint64_t*>(&s[3 * 32]);
    for (int k = 0; k < 4; k++) w[k] = Fr::Params::MODULUS[k];
    w[0] -= 1;  // r - 1
    std::memset(&s[5 * 32], 0, 32);
    std::memset(&s[7 * 32], 0, 32);
    s[7 * 32] = 1;
  }
  return s;
}

// 2^L random elements below r, Montgomery form, from an mt19937_64 seeded with `seed`.
template <class HF>
std::vector<HF> random_fr(uint32_t L, uint64_t seed) {
  std::vector<HF> v((size_t)1 << L);
  std::mt19937_64 rng(seed);
  for (auto& x : v) {
    uint64_t w[4];
    for (auto& y : w) y = rng();
    w[3] >>= 4;
    x = HF::from_raw(w).to_mont();
  }
  return v;
}

// (sum s_i * k_i) * g on the host, k_i = k0 + i (or ks[i] when given).
template <class HC, int G>
typename Group<HC, G>::HostXyzz dlog_reference(const std::vector<uint8_t>& scalars, size_t n, uint64_t k0,
                                                 const std::vector<typename HC::Fr>* ks = nullptr) {
  using Fr = typename HC::Fr;
  const unsigned T = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Fr> part(T, Fr::zero());
  std::vector<std::thread> th;
  for (unsigned t = 0; t < T; t++)
    th.emplace_back([&, t] {
      Fr acc = Fr::zero();
      for (size_t i = n * t / T; i < n * (t + 1) / T; i++) {
        Fr k = ks ? (*ks)[i] : Fr::from_u64(k0 + i);
        acc += Fr::from_bytes_std(&scalars[i * 32]) * k;
      }
      part[t] = acc;
    });
  for (auto& x : th) x.join();
  Fr e = Fr::zero();
  for (auto& p : part) e += p;
  uint64_t lim[4];
  e.to_std_limbs(lim);
  return curve::scalar_mul(Gen<HC, G>::g(), lim, 4);
}

// One MSM on g_dev of GPU-resident points and scalars; window 0 lets the planner choose; its
// windows sorted and summed in window_groups groups.
template <class HC, int G>
typename Group<HC, G>::HostXyzz gpu_msm(const void* d_points, const uint32_t* d_scalars, size_t n, bool split,
                                        int window, int window_groups = 1) {
  typename Group<HC, G>::HostXyzz out;
  CHECK_OK((cuda::msm_plan<typename HC::Fr::Params>(g_dev->plan, d_scalars, (uint32_t)n, split, window, g_dev->stream,
                                                    err, 1, 0, window_groups)));
  CHECK_OK((cuda::msm_execute<HC, G>(g_dev->plan, static_cast<const typename Group<HC, G>::Affine*>(d_points),
                                     g_dev->msm, g_dev->stream, &out, err)));
  return out;
}

// The MSM of g_dev's plan (its scalars planned, one window group) and these points with the walk
// cut into the given chunks (cuda::MsmShape: the plan's, or one with longer chunks), reduced, its
// ones added and combined as msm_execute does. buckets and sums: scratch of the caller's, reused.
template <class HC, int G>
typename Group<HC, G>::HostXyzz gpu_msm_walked(const void* d_points, const cuda::MsmShape& walk,
                                              cuda::DeviceBuffer& buckets, cuda::DeviceBuffer& sums) {
  using A = typename Group<HC, G>::Affine;
  using X = typename Group<HC, G>::Xyzz;
  using HX = typename Group<HC, G>::HostXyzz;
  cuda::MsmPlan& plan = g_dev->plan;
  const cudaStream_t s = g_dev->stream;
  EXPECT(plan.groups() == 1, "gpu_msm_walked: one window group");
  const size_t bucket_bytes = cuda::msm_bucket_bytes(plan.c, plan.group_nwin, sizeof(X));
  const size_t sums_bytes = (size_t)cuda::msm_sums_points(plan.c, plan.nwin) * sizeof(X);
  CHECK_OK(buckets.ensure(bucket_bytes, err));
  CHECK_OK(sums.ensure(sums_bytes, err));
  CHECK_CUDA(cudaMemsetAsync(buckets.as(), 0, bucket_bytes, s));
  CHECK_CUDA(cudaMemsetAsync(sums.as(), 0, sums_bytes, s));
  const A* pts = static_cast<const A*>(d_points);
  if (plan.total) {
    CHECK_OK((cuda::msm_accumulate_into<HC, G>(plan, pts, g_dev->msm, s, buckets.as<X>(), false, err, &walk)));
    CHECK_OK((cuda::msm_reduce_into<HC, G>(plan.c, plan.group_nwin, buckets.as<X>(), g_dev->msm, s, sums.as<X>(),
                                           err)));
  }
  CHECK_OK((cuda::msm_add_ones<HC, G>(plan, pts, g_dev->msm, s, sums.as<X>(), err)));
  std::vector<HX> host(cuda::msm_sums_points(plan.c, plan.nwin));
  CHECK_CUDA(cudaMemcpyAsync(host.data(), sums.as(), sums_bytes, cudaMemcpyDeviceToHost, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  return cuda::msm_combine(host.data(), plan.c, plan.nwin);
}

// The walk's chunks for g_dev's plan fitted to `resident` threads at once (0: the device's, the
// library's own fit).
template <class HC, int G>
cuda::MsmShape walk_in_waves(uint64_t resident = 0) {
  const cuda::MsmPlan& plan = g_dev->plan;
  cuda::MsmShape walk{};
  if (resident) walk = cuda::MsmShape::of(plan.c, plan.total).in_waves(plan.total, resident);
  else CHECK_OK((cuda::msm_walk_in_waves<HC, G>(plan, false, walk, err)));
  return walk;
}

// How gpu_msm_chunks sums an MSM in chunks.
struct MsmChunking {
  int window = 0;         // 0: the chooser's for a full chunk
  int copies = 1;         // > 1: the points are msm/bases.cuh's copies of the n points, made for `window`
  int window_groups = 1;  // the windows sorted and summed in this many groups
  bool keep = false;      // buckets kept across the chunks (msm_execute_into's kept), reduced once
};

// What gpu_msm_chunks reuses from call to call: the partial sums, the kept buckets, and for points
// in host memory two chunk slots with the stream they are copied on.
struct MsmChunkBuffers {
  cuda::DeviceBuffer sums, kept, slot[2];
  cudaStream_t copy = nullptr;
  cudaEvent_t loaded[2] = {nullptr, nullptr}, used[2] = {nullptr, nullptr};
  MsmChunkBuffers() {
    CHECK_CUDA(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    for (int i = 0; i < 2; i++) {
      CHECK_CUDA(cudaEventCreateWithFlags(&loaded[i], cudaEventDisableTiming));
      CHECK_CUDA(cudaEventCreateWithFlags(&used[i], cudaEventDisableTiming));
    }
  }
  MsmChunkBuffers(const MsmChunkBuffers&) = delete;
  ~MsmChunkBuffers() {
    cudaStreamSynchronize(copy);
    cudaStreamDestroy(copy);
    for (int i = 0; i < 2; i++) cudaEventDestroy(loaded[i]), cudaEventDestroy(used[i]);
  }
};

// One MSM on g_dev in chunks of q points, as a pass runs them: each chunk's plan over its slice of
// the scalars (on the GPU), its sums added into one set of partial sums (or its buckets into kept
// ones), combined once on the host. Points on the GPU (d_points; with copies a chunk is its points
// at an offset into them) or in pinned host memory (h_points: each chunk copied into one of two
// slots on io.copy while the chunk before it is summed).
template <class HC, int G>
typename Group<HC, G>::HostXyzz gpu_msm_chunks(const void* d_points, const void* h_points, const uint8_t* d_scalars,
                                               size_t n, size_t q, const MsmChunking& how, MsmChunkBuffers& io) {
  using X = typename Group<HC, G>::Xyzz;
  using A = typename Group<HC, G>::Affine;
  using HX = typename Group<HC, G>::HostXyzz;
  constexpr int bits = HC::Fr::Params::BITS;
  cudaStream_t s = g_dev->stream;
  EXPECT(!(h_points && how.copies > 1), "gpu_msm_chunks: copies are on the GPU only");
  const int c = how.window > 0 ? how.window : cuda::msm_window_bits(std::min(q, n), bits);
  const int nwin = how.copies > 1 ? cuda::msm_windows_per_copy(bits, c, how.copies) : cuda::msm_windows(bits, c);
  const size_t sums_bytes = (size_t)cuda::msm_sums_points(c, nwin) * sizeof(X);
  CHECK_OK(io.sums.ensure(sums_bytes, err));
  CHECK_CUDA(cudaMemsetAsync(io.sums.as(), 0, sums_bytes, s));
  if (how.keep) {
    const size_t kept_bytes = cuda::msm_bucket_bytes(c, nwin, sizeof(X));
    CHECK_OK(io.kept.ensure(kept_bytes, err));
    CHECK_CUDA(cudaMemsetAsync(io.kept.as(), 0, kept_bytes, s));
  }
  const size_t chunks = (n + q - 1) / q;
  auto load = [&](size_t i) {  // chunk i into slot i & 1, once the chunk before it there is summed
    const size_t j0 = i * q, m = std::min(q, n - j0);
    CHECK_OK(io.slot[i & 1].ensure(q * sizeof(A), err));
    CHECK_CUDA(cudaStreamWaitEvent(io.copy, io.used[i & 1], 0));
    CHECK_CUDA(cudaMemcpyAsync(io.slot[i & 1].as(), static_cast<const A*>(h_points) + j0, m * sizeof(A),
                               cudaMemcpyHostToDevice, io.copy));
    CHECK_CUDA(cudaEventRecord(io.loaded[i & 1], io.copy));
  };
  if (h_points) {
    for (int i = 0; i < 2; i++) CHECK_CUDA(cudaEventRecord(io.used[i], s));
    load(0);
  }
  for (size_t i = 0; i < chunks; i++) {
    const size_t j0 = i * q, m = std::min(q, n - j0);
    const A* pts = static_cast<const A*>(d_points) + j0;
    if (h_points) {
      if (i + 1 < chunks) load(i + 1);
      CHECK_CUDA(cudaStreamWaitEvent(s, io.loaded[i & 1], 0));
      pts = io.slot[i & 1].as<A>();
    }
    CHECK_OK((cuda::msm_plan<typename HC::Fr::Params>(g_dev->plan, reinterpret_cast<const uint32_t*>(d_scalars + j0 * 32),
                                                      (uint32_t)m, true, c, s, err, how.copies,
                                                      how.copies > 1 ? (uint32_t)n : 0, how.window_groups)));
    CHECK_OK((cuda::msm_execute_into<HC, G>(g_dev->plan, pts, g_dev->msm, s, io.sums.as<X>(), err, nullptr,
                                            how.keep ? io.kept.as<X>() : nullptr)));
    if (h_points) CHECK_CUDA(cudaEventRecord(io.used[i & 1], s));
  }
  if (how.keep) CHECK_OK((cuda::msm_reduce_into<HC, G>(c, nwin, io.kept.as<X>(), g_dev->msm, s, io.sums.as<X>(), err)));
  std::vector<HX> host(cuda::msm_sums_points(c, nwin));
  CHECK_CUDA(cudaMemcpyAsync(host.data(), io.sums.as(), sums_bytes, cudaMemcpyDeviceToHost, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  return cuda::msm_combine(host.data(), c, nwin);
}

// One MSM on g_dev over precomputed copies of the points (the window and copy count theirs).
template <class HC, int G>
typename Group<HC, G>::HostXyzz gpu_msm_copies(const cuda::MsmBases& bases, const uint32_t* d_scalars, size_t n,
                                               bool split) {
  typename Group<HC, G>::HostXyzz out;
  CHECK_OK((cuda::msm_plan<typename HC::Fr::Params>(g_dev->plan, d_scalars, (uint32_t)n, split, bases.c, g_dev->stream,
                                                    err, bases.copies)));
  EXPECT(bases.serves(g_dev->plan), "copies made for window %d x %d, plan window %d x %d", bases.c, bases.copies,
         g_dev->plan.c, g_dev->plan.copies);
  CHECK_OK((cuda::msm_execute<HC, G>(g_dev->plan, bases.as<typename Group<HC, G>::Affine>(), g_dev->msm, g_dev->stream,
                                     &out, err)));
  return out;
}

// The MSM checks' sizes: 1, 2, 3, 1000, 2^16+1 and 2^lg for the large logs up to
// MSM_CHECK_MAX_LOG (default 24; lower for quick runs).
inline std::vector<size_t> msm_check_sizes(const std::vector<int>& large_logs) {
  const char* max_env = std::getenv("MSM_CHECK_MAX_LOG");
  const int max_log = max_env ? std::atoi(max_env) : 24;
  std::vector<size_t> sizes = {1, 2, 3, 1000, (size_t)(1 << 16) + 1};
  for (int lg : large_logs)
    if (lg <= max_log) sizes.push_back((size_t)1 << lg);
  return sizes;
}

// 64 base points with known discrete logs, and point sets over them: the i-th point one of the 64
// (many repeats), at infinity where i % 37 == 5 (n > 3), point 2 equal to point 0.
template <class HC, int G>
struct KnownPoints {
  using Fr = typename HC::Fr;
  using HA = typename Group<HC, G>::HostAffine;
  static constexpr size_t K = 64;
  std::vector<Fr> klog = std::vector<Fr>(K);
  std::vector<HA> base = std::vector<HA>(K);
  KnownPoints() {
    par_for(K, [&](size_t j) {
      std::mt19937_64 r2(1000 + j);
      uint64_t w[4];
      for (auto& x : w) x = r2();
      w[3] >>= 3;
      klog[j] = Fr::from_raw(w).to_mont();
      uint64_t lim[4];
      klog[j].to_std_limbs(lim);
      base[j] = curve::scalar_mul(Gen<HC, G>::g(), lim, 4).to_affine();
    });
  }
  // n points and their discrete logs (0 at infinity).
  void fill(size_t n, std::vector<HA>& pts, std::vector<Fr>& ks) const {
    pts.resize(n);
    ks.resize(n);
    par_for(n, [&](size_t i) {
      size_t j = (size_t)((i * 0x9E3779B97F4A7C15ull + (uint64_t)n) >> 58) % K;  // any base, many repeats
      bool inf = n > 3 && i % 37 == 5;
      pts[i] = inf ? HA::infinity() : base[j];
      ks[i] = inf ? Fr::zero() : klog[j];
    });
    if (n >= 3) { pts[2] = pts[0]; ks[2] = ks[0]; }  // a repeated point
  }
  // On 2 points: P and -P with equal scalars (they cancel); on 3: scalars r-1 and 1 first.
  static void edge_cases(std::vector<HA>& pts, std::vector<Fr>& ks, std::vector<uint8_t>& sc) {
    if (pts.size() == 2) {
      pts[1] = -pts[0];
      ks[1] = -ks[0];
      std::memcpy(&sc[32], &sc[0], 32);
    }
    if (pts.size() == 3) {
      uint64_t* w = reinterpret_cast<uint64_t*>(&sc[0]);
      for (int k = 0; k < 4; k++) w[k] = Fr::Params::MODULUS[k];
      w[0] -= 1;
      std::memset(&sc[32], 0, 32);
      sc[32] = 1;
    }
  }
};

// Scalars the MSM plan calls small (below 2^32, other than 0 and 1) among others: a fraction
// zero_one of 0s and 1s, `large` of uniform ones below r, the rest small, each below 2^b for b
// drawn from 2..max_bits, with 2^max_bits - 1 and 2^(max_bits - 1) among them.
template <class Fr>
std::vector<uint8_t> small_scalars(size_t n, uint64_t seed, double zero_one, double large, int max_bits) {
  std::vector<uint8_t> s = random_scalars<Fr>(n, seed, 0.0);  // the large ones
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t i = 0; i < n; i++) {
    uint64_t* w = reinterpret_cast<uint64_t*>(&s[i * 32]);
    const double x = u(rng);
    if (x >= zero_one + large || x < zero_one) {
      const int b = 2 + (int)(rng() % (uint64_t)(max_bits - 1));
      w[0] = x < zero_one ? (rng() & 1) : 2 + rng() % ((1ull << b) - 2);
      w[1] = w[2] = w[3] = 0;
    }
  }
  if (n >= 2) {
    reinterpret_cast<uint64_t*>(&s[0])[0] = (1ull << max_bits) - 1;
    reinterpret_cast<uint64_t*>(&s[32])[0] = 1ull << (max_bits - 1);
    for (size_t k : {size_t(0), size_t(1)})
      for (int j = 1; j < 4; j++) reinterpret_cast<uint64_t*>(&s[k * 32])[j] = 0;
  }
  return s;
}

// The scalar sets of the MSM checks over n points from KnownPoints::fill: random (30 % 0/1 from
// n = 1000, KnownPoints::edge_cases applied to it and to the points), and from n = 1000 all equal,
// 99 % 0/1, bytes among 0s and 1s, and small scalars (below 2^32) among large ones; each with its expected sum (the discrete-log reference) and its device copy.
template <class HC, int G>
struct MsmScalarSets {
  using Fr = typename HC::Fr;
  struct Set {
    const char* what;
    std::vector<uint8_t> sc;
    typename Group<HC, G>::HostXyzz expect;
    std::unique_ptr<DevArray<uint8_t>> dev;
    const uint32_t* scalars() const { return reinterpret_cast<const uint32_t*>(dev->p); }
  };
  std::vector<Set> sets;
  MsmScalarSets(size_t n, uint64_t random_seed, uint64_t zero_one_seed, std::vector<typename Group<HC, G>::HostAffine>& pts,
                std::vector<Fr>& ks) {
    sets.push_back({"random", random_scalars<Fr>(n, random_seed, n >= 1000 ? 0.3 : 0.0), {}, nullptr});
    KnownPoints<HC, G>::edge_cases(pts, ks, sets[0].sc);
    if (n >= 1000) {
      std::vector<uint8_t> equal(n * 32);
      const uint64_t value[4] = {0x0123456789abcdefull, 0xfedcba9876543210ull, 0x0f1e2d3c4b5a6978ull, 0x0badc0ffeeull};
      for (size_t i = 0; i < n; i++) std::memcpy(&equal[i * 32], value, 32);
      sets.push_back({"all equal", std::move(equal), {}, nullptr});
      sets.push_back({"99% 0/1", random_scalars<Fr>(n, zero_one_seed, 0.99), {}, nullptr});
      sets.push_back({"bytes among 0/1", small_scalars<Fr>(n, zero_one_seed + 1, 0.8, 0.0, 8), {}, nullptr});
      sets.push_back({"small and large", small_scalars<Fr>(n, zero_one_seed + 2, 0.3, 0.2, 32), {}, nullptr});
    }
    for (Set& set : sets) {
      set.expect = dlog_reference<HC, G>(set.sc, n, 0, &ks);
      set.dev = std::make_unique<DevArray<uint8_t>>(n * 32);
      set.dev->upload(set.sc.data());
    }
  }
};

// A synthetic key of 2^log_n constraints for the engines: points (77+i)*G1 and (99+i)*G2 made on
// the GPU, 2 A terms and 1 B term per row, 90 % of the witness 0 or 1.
template <class HC>
struct SyntheticKey {
  using Fr = typename HC::Fr;
  formats::ZkeyGroth16 z;
  engine::KeyView<HC> view;
  std::vector<uint8_t> g1, g2;  // one set of points each, shared by A, B1, C, H
  std::vector<uint8_t> witness;

  explicit SyntheticKey(uint32_t log_n) {
    const uint32_t n = 1u << log_n, n_public = 3;
    const uint32_t n_constraints = n - n_public - 1 - 3;
    const uint32_t n_vars = n - 7;
    using A1 = typename Group<HC, 1>::Affine;
    using A2 = typename Group<HC, 2>::Affine;
    {
      DevArray<A1> p1(n);
      DevArray<A2> p2(n);
      A1 g;
      A2 h;
      std::memcpy(&g, &HC::g1_generator(), sizeof g);
      std::memcpy(&h, &HC::g2_generator(), sizeof h);
      gen_points<A1, typename Group<HC, 1>::Xyzz><<<cuda::ceil_div(n / 64 + 1, 128), 128>>>(p1.p, n, 77, g);
      gen_points<A2, typename Group<HC, 2>::Xyzz><<<cuda::ceil_div(n / 64 + 1, 128), 128>>>(p2.p, n, 99, h);
      CHECK_CUDA(cudaGetLastError());
      g1.resize((size_t)n * sizeof(A1));
      g2.resize((size_t)n * sizeof(A2));
      CHECK_CUDA(cudaMemcpy(g1.data(), p1.p, g1.size(), cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(g2.data(), p2.p, g2.size(), cudaMemcpyDeviceToHost));
    }
    z.curve = HC::ID;
    z.n8q = HC::FQ_BYTES;
    z.n8r = 32;
    z.n_vars = n_vars;
    z.n_public = n_public;
    z.domain_size = n;
    z.log_domain = log_n;
    z.n_constraints = n_constraints;
    z.points_a = z.points_b1 = z.points_c = z.points_h = g1.data();
    z.points_b2 = g2.data();
    view.zkey = &z;
    view.n_vars = n_vars;
    view.n_public = n_public;
    view.n_constraints = n_constraints;
    view.domain_size = n;
    view.log_domain = log_n;
    const uint32_t rows = n_constraints + n_public + 1;
    std::mt19937_64 rng(log_n);
    auto coef = [&] {
      uint64_t w[4];
      for (auto& x : w) x = rng();
      w[3] >>= 4;
      return Fr::from_raw(w);
    };
    for (auto* m : {&view.a, &view.b}) {
      const bool is_a = m == &view.a;
      m->row_start.assign(rows + 1, 0);
      for (uint32_t r = 0; r < rows; r++) {
        uint32_t terms = r >= n_constraints ? (is_a ? 1 : 0) : (is_a ? 2 : 1);
        for (uint32_t t = 0; t < terms; t++) {
          m->signal.push_back(r >= n_constraints ? r - n_constraints : (uint32_t)(rng() % n_vars));
          m->coef.push_back(r >= n_constraints ? Fr::from_raw(Fr::Params::R2) : coef());
        }
        m->row_start[r + 1] = m->signal.size();
      }
    }
    witness = random_scalars<Fr>(n_vars, log_n, 0.9);
    std::memset(witness.data(), 0, 32);
    witness[0] = 1;
  }
};

}  // namespace cuzk::gpu_check
