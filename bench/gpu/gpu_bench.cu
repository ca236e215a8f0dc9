// GPU checks and benchmarks in one executable (bench/gpu/run.sh runs each section as its own
// process, so that a fault in one leaves the others' results).
//
//   gpu_bench field        device field arithmetic against the host Fp (random elements)
//   gpu_bench msm-check    MSMs of 1, 2, 3, 1000, 2^16+1, 2^20, 2^24 points with infinities, repeated
//                          points and scalars 0, 1, r-1, checked against a discrete-log reference
//                          and the CPU MSM; every window path (forced sizes, with/without split)
//   gpu_bench msm [max_log]  benchmarks on GPU-resident inputs (points (k0+i)*G made on the GPU,
//                          random scalars < r; a 99 % 0/1 variant), each result checked against
//                          (sum s_i (k0+i)) * G; medians
//   gpu_bench ntt          NTT checks against cpu::ntt, then benchmarks (2^24, 2^27)
//   gpu_bench ntt-bench [reps]  BLS12-381 NTT benchmarks only (A/B runs); ntt-one [L]: one of each
//                          transform, for a profiler; ntt-check [L]: 2^L against the CPU
//   gpu_bench device D     a proof on GPU D through the ABI; the process must hold a context on D only
//   gpu_bench e2e          proofs of the committed fixtures on the CUDA backend, byte-identical to
//                          the CPU backend's for the same r, s, and verified
// Every section prints "RESULT <name> <value> <unit>" lines; run.sh gathers them into a table.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>
#include <cctype>

#include "cpu/cpu_engine.hpp"
#include "cpu/msm.hpp"
#include "cpu/ntt.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/device.cuh"
#include "cuzk.h"
#include "curve/ops.hpp"
#include "formats/wtns.hpp"
#include "setup/fixed_base.hpp"
#include "util/thread_pool.hpp"

using namespace cuzk;
using namespace cuzk::cuda;

namespace {

int g_failures = 0;
#define EXPECT(cond, ...)                                 \
  do {                                                    \
    if (!(cond)) {                                        \
      g_failures++;                                       \
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
#define CHECK_OK(expr)                                                                        \
  do {                                                                                        \
    std::string err;                                                                          \
    cuzk_status s_ = (expr);                                                                  \
    if (s_ != CUZK_OK) {                                                                      \
      std::printf("FATAL %s:%d: %s: status %d: %s\n", __FILE__, __LINE__, #expr, s_, err.c_str()); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
void result(const std::string& name, double v, const char* unit) {
  std::printf("RESULT %s %.3f %s\n", name.c_str(), v, unit);
  std::fflush(stdout);
}

Device* g_dev = nullptr;

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

// Parallel loop over [0, n) on plain threads (the bench's host references).
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

// ---------------------------------------------------------------------------------------------
// field
// ---------------------------------------------------------------------------------------------
template <class F>
__global__ void field_ops(const F* a, const F* b, F* out, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i] = a[i] * b[i];
  out[4 * i + 1] = a[i] + b[i];
  out[4 * i + 2] = a[i] - b[i];
  out[4 * i + 3] = -a[i];
}

template <class H, class Dv>
void check_field(const char* name) {
  const size_t n = 1 << 16;
  std::mt19937_64 rng(11);
  std::vector<H> a(n), b(n), out(4 * n);
  for (size_t i = 0; i < n; i++) {
    uint64_t ra[H::N], rb[H::N];
    for (auto& w : ra) w = rng();
    for (auto& w : rb) w = rng();
    ra[H::N - 1] >>= 4;
    rb[H::N - 1] >>= 4;
    a[i] = i % 101 == 0 ? H::zero() : H::from_raw(ra).to_mont();
    b[i] = i % 103 == 0 ? H::zero() - H::one() : H::from_raw(rb).to_mont();
  }
  DevArray<H> da(n), db(n), dout(4 * n);
  da.upload(a.data());
  db.upload(b.data());
  field_ops<Dv><<<ceil_div(n, 256), 256>>>(reinterpret_cast<Dv*>(da.p), reinterpret_cast<Dv*>(db.p),
                                           reinterpret_cast<Dv*>(dout.p), n);
  CHECK_CUDA(cudaGetLastError());
  dout.download(out.data());
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    bad += !(out[4 * i] == a[i] * b[i]);
    bad += !(out[4 * i + 1] == a[i] + b[i]);
    bad += !(out[4 * i + 2] == a[i] - b[i]);
    bad += !(out[4 * i + 3] == -a[i]);
  }
  EXPECT(bad == 0, "%s: %zu of %zu device field results differ from the host", name, bad, 4 * n);
  std::printf("field %s: %zu mismatches in %zu\n", name, bad, 4 * n);
}

void section_field() {
  check_field<curve::Bn254::Fq, DeviceCurve<curve::Bn254>::Fq>("bn254 Fq");
  check_field<curve::Bn254::Fr, DeviceCurve<curve::Bn254>::Fr>("bn254 Fr");
  check_field<curve::Bls12381::Fq, DeviceCurve<curve::Bls12381>::Fq>("bls12-381 Fq");
  check_field<curve::Bls12381::Fr, DeviceCurve<curve::Bls12381>::Fr>("bls12-381 Fr");
}

// ---------------------------------------------------------------------------------------------
// MSM helpers
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

// (sum s_i * k_i) * g on the host, k_i = k0 + i (or k[i] when given).
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

template <class HC, int G>
typename Group<HC, G>::HostXyzz gpu_msm(const void* d_points, const uint32_t* d_scalars, size_t n, bool split,
                                        int window) {
  typename Group<HC, G>::HostXyzz out;
  CHECK_OK((msm_plan<typename HC::Fr::Params>(g_dev->plan, d_scalars, (uint32_t)n, split, window, g_dev->stream, err)));
  CHECK_OK((msm_execute<HC, G>(g_dev->plan, static_cast<const typename Group<HC, G>::Affine*>(d_points), g_dev->msm,
                               g_dev->stream, &out, err)));
  return out;
}

// ---------------------------------------------------------------------------------------------
// msm-check: GPU against the CPU MSM and a discrete-log reference, n in {1, 2, 3, 1000,
// 2^16+1, 2^20, 2^24}, with infinities, repeated points, P/-P, scalars 0, 1, r-1 and >= r
// ---------------------------------------------------------------------------------------------
template <class HC, int G>
void msm_check(const char* name) {
  using Fr = typename HC::Fr;
  using HA = typename Group<HC, G>::HostAffine;
  using HF = typename Gen<HC, G>::HostField;
  std::mt19937_64 rng(7 + G);
  // 64 base points with known discrete logs
  const size_t K = 64;
  std::vector<Fr> klog(K);
  std::vector<HA> base(K);
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
  // sizes the issue names; MSM_CHECK_MAX_LOG (default 24) bounds them for quick runs
  const char* max_env = std::getenv("MSM_CHECK_MAX_LOG");
  const int max_log = max_env ? std::atoi(max_env) : 24;
  std::vector<size_t> sizes = {1, 2, 3, 1000, (size_t)(1 << 16) + 1};
  for (int lg : {20, 24})
    if (lg <= max_log) sizes.push_back((size_t)1 << lg);
  for (size_t n : sizes) {
    std::vector<HA> pts(n);
    std::vector<Fr> ks(n);
    par_for(n, [&](size_t i) {
      size_t j = (size_t)((i * 0x9E3779B97F4A7C15ull + (uint64_t)n) >> 58) % K;  // any base, many repeats
      bool inf = n > 3 && i % 37 == 5;
      pts[i] = inf ? HA::infinity() : base[j];
      ks[i] = inf ? Fr::zero() : klog[j];
    });
    if (n >= 3) { pts[2] = pts[0]; ks[2] = ks[0]; }  // a repeated point
    auto sc = random_scalars<Fr>(n, 99 + n, n >= 1000 ? 0.3 : 0.0);
    if (n == 2) {  // P and -P with equal scalars: cancel
      pts[1] = -pts[0];
      ks[1] = -ks[0];
      std::memcpy(&sc[32], &sc[0], 32);
    }
    if (n == 3) {  // scalar r-1 and 1
      uint64_t* w = reinterpret_cast<uint64_t*>(&sc[0]);
      for (int k = 0; k < 4; k++) w[k] = Fr::Params::MODULUS[k];
      w[0] -= 1;
      std::memset(&sc[32], 0, 32);
      sc[32] = 1;
    }
    auto expect = dlog_reference<HC, G>(sc, n, 0, &ks);
    DevArray<HA> dp(n);
    DevArray<uint8_t> ds(n * 32);
    dp.upload(pts.data());
    ds.upload(sc.data());
    auto cpu = cpu::msm<HC, HF>(default_thread_pool(), reinterpret_cast<const uint8_t*>(pts.data()), sc.data(), n);
    EXPECT(cpu.equals(expect), "%s n=%zu: CPU MSM disagrees with the discrete-log reference", name, n);
    int bad = 0, runs = 0;
    const bool big = n >= (1u << 20);  // the window paths are covered by the smaller sizes
    for (bool split : {true, false})
      for (int window : {0, 3, 8, 13}) {
        if (big && window != 0) continue;
        auto got = gpu_msm<HC, G>(dp.p, reinterpret_cast<const uint32_t*>(ds.p), n, split, window);
        runs++;
        if (!got.equals(expect)) {
          bad++;
          std::printf("  %s n=%zu split=%d window=%d: wrong\n", name, n, split, window);
        }
      }
    EXPECT(bad == 0, "%s n=%zu: %d of %d GPU MSM variants wrong", name, n, bad, runs);
    std::printf("msm-check %s n=%zu: %d/%d variants right\n", name, n, runs - bad, runs);
  }
  // scalars >= r are reduced: s + r must give the same sum as s
  {
    size_t n = 257;
    std::vector<HA> pts(n);
    std::vector<Fr> ks(n);
    for (size_t i = 0; i < n; i++) { pts[i] = base[i % K]; ks[i] = klog[i % K]; }
    auto sc = random_scalars<Fr>(n, 5, 0);
    std::vector<uint8_t> big = sc;
    for (size_t i = 0; i < n; i += 2) {  // add r where it fits in 256 bits
      uint64_t* w = reinterpret_cast<uint64_t*>(&big[i * 32]);
      uint64_t carry = 0;
      uint64_t t[4];
      for (int k = 0; k < 4; k++) {
        unsigned __int128 s = (unsigned __int128)w[k] + Fr::Params::MODULUS[k] + carry;
        t[k] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
      }
      if (!carry) std::memcpy(w, t, 32);
    }
    auto expect = dlog_reference<HC, G>(sc, n, 0, &ks);
    DevArray<HA> dp(n);
    DevArray<uint8_t> ds(n * 32);
    dp.upload(pts.data());
    ds.upload(big.data());
    auto got = gpu_msm<HC, G>(dp.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, 0);
    EXPECT(got.equals(expect), "%s: scalars >= r not reduced", name);
  }
}

static bool msm_selected(const char* name);
void section_msm_check() {
  if (msm_selected("bn254 G1")) msm_check<curve::Bn254, 1>("bn254 G1");
  if (msm_selected("bn254 G2")) msm_check<curve::Bn254, 2>("bn254 G2");
  if (msm_selected("bls12-381 G1")) msm_check<curve::Bls12381, 1>("bls12-381 G1");
  if (msm_selected("bls12-381 G2")) msm_check<curve::Bls12381, 2>("bls12-381 G2");
}

// ---------------------------------------------------------------------------------------------
// msm benchmarks
// ---------------------------------------------------------------------------------------------
template <class HC, int G>
void msm_bench(const char* name, const std::vector<int>& logs, int reps_big, bool sweep = false) {
  using A = typename Group<HC, G>::Affine;
  using X = typename Group<HC, G>::Xyzz;
  using Fr = typename HC::Fr;
  const int max_log = *std::max_element(logs.begin(), logs.end());
  const size_t nmax = (size_t)1 << max_log;
  const uint64_t k0 = 0x123456789ull;
  double t0 = now_ms();
  DevArray<A> pts(nmax);
  {
    A g;
    std::memcpy(&g, &Gen<HC, G>::g(), sizeof g);
    gen_points<A, X><<<ceil_div(nmax / 64 + 1, 128), 128>>>(pts.p, nmax, k0, g);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  std::printf("%s: %zu points generated in %.0f ms\n", name, nmax, now_ms() - t0);
  for (double zo : {0.0, 0.99}) {
    auto sc = random_scalars<Fr>(nmax, 17 + (zo > 0), zo);
    DevArray<uint8_t> ds(nmax * 32);
    ds.upload(sc.data());
    for (int lg : logs) {
      if (zo > 0 && lg != 24 && lg != 20) continue;
      size_t n = (size_t)1 << lg;
      auto expect = dlog_reference<HC, G>(sc, n, k0);
      int reps = lg >= 24 ? reps_big : 5;
      std::vector<double> ms;
      bool ok = true;
      for (int r = 0; r < reps + 1; r++) {
        CHECK_CUDA(cudaDeviceSynchronize());
        double a = now_ms();
        auto got = gpu_msm<HC, G>(pts.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, 0);
        double b = now_ms();
        if (r > 0) ms.push_back(b - a);
        ok &= got.equals(expect);
      }
      EXPECT(ok, "%s 2^%d (0/1 %.0f%%): wrong sum", name, lg, zo * 100);
      std::string label = std::string("msm ") + name + " 2^" + std::to_string(lg) + (zo > 0 ? " 99%01" : "");
      std::printf("%s: median %.2f ms (window %d, %u bucket scalars, %u ones) %s\n", label.c_str(), median(ms),
                  g_dev->plan.c, g_dev->plan.n_rest, g_dev->plan.n_ones, ok ? "ok" : "WRONG");
      result(label, median(ms), "ms");
      if (zo == 0 && (lg == 22 || lg == 24) && sweep && std::getenv("GPU_BENCH_SWEEP")) {  // window sizes around the chosen one
        for (int c = 14; c <= 22; c++) {
          std::vector<double> t;
          for (int r = 0; r < 3; r++) {
            CHECK_CUDA(cudaDeviceSynchronize());
            double a = now_ms();
            gpu_msm<HC, G>(pts.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, c);
            if (r) t.push_back(now_ms() - a);
          }
          std::printf("sweep %s 2^%d window %d: %.2f ms\n", name, lg, c, median(t));
        }
      }
      if (lg >= 24) {  // one traced run: where the time goes
        g_kernel_trace = true;
        gpu_msm<HC, G>(pts.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, 0);
        g_kernel_trace = false;
      }
    }
  }
}

// MSM_ONLY="bls12-381 G2" (a substring of the group's name) runs only the matching groups.
static bool msm_selected(const char* name) {
  const char* only = std::getenv("MSM_ONLY");
  return !only || std::strstr(name, only) != nullptr;
}

void section_msm(int max_log) {
  std::vector<int> logs;
  for (int l : {20, 22, 24, 26})
    if (l <= max_log) logs.push_back(l);
  if (msm_selected("bls12-381 G1")) msm_bench<curve::Bls12381, 1>("bls12-381 G1", logs, 3, true);
  if (msm_selected("bn254 G1")) msm_bench<curve::Bn254, 1>("bn254 G1", logs, 3, true);
  std::vector<int> g2;
  for (int l : {20, 24})
    if (l <= max_log) g2.push_back(l);
  if (msm_selected("bls12-381 G2")) msm_bench<curve::Bls12381, 2>("bls12-381 G2", g2, 3, true);
  if (msm_selected("bn254 G2")) msm_bench<curve::Bn254, 2>("bn254 G2", {20}, 3);
}

// ---------------------------------------------------------------------------------------------
// ntt
// ---------------------------------------------------------------------------------------------
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

// The proving path on the GPU (inverse, then coset forward, in place in d) against cpu::ntt's on v.
template <class HC>
bool to_coset_matches(DevArray<typename HC::Fr>& d, const std::vector<typename HC::Fr>& v, uint32_t L) {
  using F = typename DeviceCurve<HC>::Fr;
  std::vector<typename HC::Fr> ref = v, got(v.size());
  cpu::ntt(default_thread_pool(), ref.data(), L, cpu::NttKind::Inverse);
  cpu::ntt(default_thread_pool(), ref.data(), L, cpu::NttKind::CosetForward);
  d.upload(v.data());
  CHECK_OK(g_dev->ntt<HC>().to_coset(reinterpret_cast<F*>(d.p), L, g_dev->stream, err));
  CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
  d.download(got.data());
  return got == ref;
}

template <class HC>
void ntt_check(const char* name) {
  using HF = typename HC::Fr;
  using F = typename DeviceCurve<HC>::Fr;
  auto& ctx = g_dev->ntt<HC>();
  CHECK_OK(ctx.init(err));
  const cpu::NttKind kinds[] = {cpu::NttKind::Forward, cpu::NttKind::Inverse, cpu::NttKind::CosetForward,
                                cpu::NttKind::CosetInverse};
  for (uint32_t L : {1u, 2u, 3u, 5u, 9u, 10u, 11u, 12u, 16u, 18u, 19u, 20u, 21u}) {
    size_t n = (size_t)1 << L;
    const std::vector<HF> v = random_fr<HF>(L, L);
    std::vector<HF> ref, got(n);
    DevArray<HF> d(n);
    int bad = 0;
    for (uint32_t kind = 0; kind < 4; kind++) {
      ref = v;
      cpu::ntt(default_thread_pool(), ref.data(), L, kinds[kind]);
      d.upload(v.data());
      CHECK_OK(ctx.natural(reinterpret_cast<F*>(d.p), L, kind, false, g_dev->stream, err));
      CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
      d.download(got.data());
      if (got != ref) { bad++; std::printf("  ntt %s 2^%u kind %u: wrong\n", name, L, kind); }
      // standard form in and out (the ABI's path): the same transform
      std::vector<HF> vs(n);
      for (size_t i = 0; i < n; i++) vs[i] = v[i].from_mont();  // the standard limbs
      d.upload(vs.data());
      CHECK_OK(ctx.natural(reinterpret_cast<F*>(d.p), L, kind, true, g_dev->stream, err));
      CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
      d.download(got.data());
      size_t wrong = 0;
      for (size_t i = 0; i < n; i++) wrong += !(got[i].to_mont() == ref[i]);
      if (wrong) { bad++; std::printf("  ntt %s 2^%u kind %u std form: wrong\n", name, L, kind); }
    }
    if (!to_coset_matches<HC>(d, v, L)) { bad++; std::printf("  ntt %s 2^%u to_coset: wrong\n", name, L); }
    EXPECT(bad == 0, "ntt %s 2^%u: %d wrong", name, L, bad);
    std::printf("ntt-check %s 2^%u: %s\n", name, L, bad ? "WRONG" : "ok");
  }
}

// Medians of `reps` timed runs (after one warm-up) of the natural-order forward transform, the
// bit-reversed-out DIF alone and the proving path (inverse, then coset forward), per size.
template <class HC>
void ntt_bench(const char* name, std::vector<uint32_t> logs, int reps) {
  using HF = typename HC::Fr;
  using F = typename DeviceCurve<HC>::Fr;
  auto& ctx = g_dev->ntt<HC>();
  CHECK_OK(ctx.init(err));
  for (uint32_t L : logs) {
    size_t n = (size_t)1 << L;
    DevArray<HF> d(n);
    {
      // random elements below r (the top limb cut to 60 bits), a fresh seed per run: the kernels
      // have no data-dependent branches, but the timed inputs should not be a special pattern
      std::vector<HF> v(n);
      uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)std::chrono::steady_clock::now().time_since_epoch().count();
      for (auto& e : v) {
        uint64_t w[4];
        for (auto& y : w) {  // xorshift64*: 2^27 elements in about a second
          x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
          y = x * 0x2545f4914f6cdd1dull;
        }
        w[3] >>= 4;
        e = HF::from_raw(w);
      }
      d.upload(v.data());
      CHECK_CUDA(cudaDeviceSynchronize());
    }
    auto time = [&](auto&& fn) {
      std::vector<double> ms;
      for (int r = 0; r <= reps; r++) {
        CHECK_CUDA(cudaDeviceSynchronize());
        double a = now_ms();
        fn();
        CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
        if (r) ms.push_back(now_ms() - a);
      }
      return median(ms);
    };
    double fwd = time([&] { CHECK_OK(ctx.natural(reinterpret_cast<F*>(d.p), L, CUZK_NTT_FORWARD, false, g_dev->stream, err)); });
    double dif = time([&] { CHECK_OK(ctx.dif(reinterpret_cast<F*>(d.p), L, false, 0, false, g_dev->stream, err)); });
    double pair = time([&] { CHECK_OK(ctx.to_coset(reinterpret_cast<F*>(d.p), L, g_dev->stream, err)); });
    result(std::string("ntt ") + name + " 2^" + std::to_string(L) + " fwd nat", fwd, "ms");
    result(std::string("ntt ") + name + " 2^" + std::to_string(L) + " fwd bitrev-out", dif, "ms");
    result(std::string("ntt ") + name + " 2^" + std::to_string(L) + " inv+coset", pair, "ms");
  }
}


void section_ntt() {
  ntt_check<curve::Bls12381>("bls12-381");
  ntt_check<curve::Bn254>("bn254");
  ntt_bench<curve::Bls12381>("bls12-381", {24, 27}, 5);
  ntt_bench<curve::Bn254>("bn254", {24, 27}, 5);
}

// One large size against the CPU (fwd natural order, and the proving path), random input: the
// checks above stop at 2^21, where the CPU reference is quick.
template <class HC>
void ntt_check_large(const char* name, uint32_t L) {
  using HF = typename HC::Fr;
  using F = typename DeviceCurve<HC>::Fr;
  auto& ctx = g_dev->ntt<HC>();
  CHECK_OK(ctx.init(err));
  const size_t n = (size_t)1 << L;
  const std::vector<HF> v = random_fr<HF>(L, 1000 + L);
  std::vector<HF> ref = v, got(n);
  DevArray<HF> d(n);
  int bad = 0;
  cpu::ntt(default_thread_pool(), ref.data(), L, cpu::NttKind::Forward);
  d.upload(v.data());
  CHECK_OK(ctx.natural(reinterpret_cast<F*>(d.p), L, CUZK_NTT_FORWARD, false, g_dev->stream, err));
  CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
  d.download(got.data());
  if (got != ref) { bad++; std::printf("  ntt %s 2^%u forward: wrong\n", name, L); }
  if (!to_coset_matches<HC>(d, v, L)) { bad++; std::printf("  ntt %s 2^%u to_coset: wrong\n", name, L); }
  EXPECT(bad == 0, "ntt %s 2^%u: %d wrong", name, L, bad);
  std::printf("ntt-check %s 2^%u: %s\n", name, L, bad ? "WRONG" : "ok");
}

// Benchmarks only, more repetitions (A/B runs of NTT changes): BLS12-381 2^24 and 2^27.
void section_ntt_bench(int reps) { ntt_bench<curve::Bls12381>("bls12-381", {24, 27}, reps); }

// One natural-order forward transform and one proving-path pair of 2^L on BLS12-381, after a
// warm-up of each: a short process for a profiler (ncu -k regex:ntt_pass).
void section_ntt_one(uint32_t L) {
  using HC = curve::Bls12381;
  using F = DeviceCurve<HC>::Fr;
  auto& ctx = g_dev->ntt<HC>();
  CHECK_OK(ctx.init(err));
  DevArray<HC::Fr> d((size_t)1 << L);
  CHECK_CUDA(cudaMemset(d.p, 0x11, ((size_t)1 << L) * sizeof(HC::Fr)));
  for (int r = 0; r < 2; r++) {
    CHECK_OK(ctx.natural(reinterpret_cast<F*>(d.p), L, CUZK_NTT_FORWARD, false, g_dev->stream, err));
    CHECK_OK(ctx.to_coset(reinterpret_cast<F*>(d.p), L, g_dev->stream, err));
  }
  CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
  std::printf("ntt-one bls12-381 2^%u: done\n", L);
}


// ---------------------------------------------------------------------------------------------
// engine: a synthetic key of 2^k constraints (points made on the GPU, 2 A terms and 1 B term per
// row, 90 % of the witness 0 or 1): GPU engine against the CPU engine (2^16), then timings with
// the phase breakdown, B2 on the GPU and on the CPU.
// ---------------------------------------------------------------------------------------------
template <class HC>
struct SyntheticKey {
  using Fr = typename HC::Fr;
  formats::ZkeyGroth16 z;
  prover::KeyView<HC> view;
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
      gen_points<A1, typename Group<HC, 1>::Xyzz><<<ceil_div(n / 64 + 1, 128), 128>>>(p1.p, n, 77, g);
      gen_points<A2, typename Group<HC, 2>::Xyzz><<<ceil_div(n / 64 + 1, 128), 128>>>(p2.p, n, 99, h);
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

template <class HC>
void engine_bench(const char* name, uint32_t log_check, const std::vector<uint32_t>& logs) {
  {
    SyntheticKey<HC> key(log_check);
    std::unique_ptr<prover::Engine<HC>> gpu;
    CHECK_OK(make_engine<HC>(g_dev, key.view, &gpu, err));
    auto cpu = cpu::make_engine<HC>(key.view, default_thread_pool());
    prover::WitnessBatch batch;
    batch.n = 1;
    batch.w.push_back(key.witness.data());
    prover::PhaseTimes t1(nullptr, 1, CUZK_BACKEND_CPU), t2(nullptr, 1, CUZK_BACKEND_CUDA);
    prover::ProofSums<HC> a, b;
    std::string err;
    EXPECT(cpu->compute(batch, t1, &a, err) == CUZK_OK, "cpu engine: %s", err.c_str());
    EXPECT(gpu->compute(batch, t2, &b, err) == CUZK_OK, "gpu engine: %s", err.c_str());
    bool same = a.a.equals(b.a) && a.b1.equals(b.b1) && a.b2.equals(b.b2) && a.c.equals(b.c) && a.h.equals(b.h);
    EXPECT(same, "%s 2^%u: GPU engine sums differ from the CPU engine (a %d b1 %d b2 %d c %d h %d)", name, log_check,
           a.a.equals(b.a), a.b1.equals(b.b1), a.b2.equals(b.b2), a.c.equals(b.c), a.h.equals(b.h));
    std::printf("engine-check %s 2^%u: %s\n", name, log_check, same ? "GPU sums = CPU sums" : "WRONG");
  }
  for (uint32_t lg : logs) {
    SyntheticKey<HC> key(lg);
    for (bool b2_cpu : {false, true}) {
      if (b2_cpu && lg > 20) continue;  // the CPU G2 MSM takes seconds beyond this
      setenv("CUZK_GPU_B2", b2_cpu ? "cpu" : "gpu", 1);
      std::unique_ptr<prover::Engine<HC>> gpu;
      double t0 = now_ms();
      CHECK_OK(make_engine<HC>(g_dev, key.view, &gpu, err));
      double setup = now_ms() - t0;
      prover::WitnessBatch batch;
      batch.n = 1;
      batch.w.push_back(key.witness.data());
      std::vector<double> ms;
      cuzk_timings rec{};
      for (int r = 0; r < 4; r++) {
        prover::PhaseTimes t(&rec, 1, CUZK_BACKEND_CUDA);
        prover::ProofSums<HC> out;
        std::string err;
        double a = now_ms();
        EXPECT(gpu->compute(batch, t, &out, err) == CUZK_OK, "engine: %s", err.c_str());
        if (r) ms.push_back(now_ms() - a);
      }
      std::string label = std::string("engine ") + name + " 2^" + std::to_string(lg) + (b2_cpu ? " B2 on CPU" : "");
      std::printf("%s: %.2f ms/proof (engine setup %.0f ms); phases ms:", label.c_str(), median(ms), setup);
      static const char* names[] = {"parse", "wcheck", "abc", "ntt_h", "msm_a", "msm_b1", "msm_b2", "msm_c",
                                    "msm_h", "batch_add", "upload", "download"};
      for (int p = 2; p < 12; p++) {
        const cuzk_interval& iv = rec.phases[p];
        if (iv.end_ns) std::printf(" %s %.2f", names[p], (iv.end_ns - iv.start_ns) / 1e6);
      }
      std::printf("\n");
      result(label, median(ms), "ms");
    }
  }
  unsetenv("CUZK_GPU_B2");
}

void section_engine(int max_log) {
  std::vector<uint32_t> logs;
  for (uint32_t l : {20u, 22u, 24u})
    if ((int)l <= max_log) logs.push_back(l);
  engine_bench<curve::Bls12381>("bls12-381", 16, logs);
  engine_bench<curve::Bn254>("bn254", 16, logs);
}

// ---------------------------------------------------------------------------------------------
// e2e: the committed fixtures through the C ABI, CUDA against CPU
// ---------------------------------------------------------------------------------------------
std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void section_e2e() {
  char err[512];
  const char* stream = std::getenv("CUZK_GPU_STREAM");
  std::printf("e2e: key points %s\n", stream && std::strcmp(stream, "1") == 0 ? "streamed in per MSM (CUZK_GPU_STREAM=1)"
                                                                           : "resident on the GPU");
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
      std::string dir = std::string("tests/fixtures/") + curve + "/" + name;
      std::vector<uint8_t> wtns = read_file(dir + "/witness.wtns");
      if (wtns.empty()) { std::printf("e2e %s: missing\n", dir.c_str()); continue; }
      cuzk_key* key = nullptr;
      if (cuzk_key_open((dir + "/circuit.zkey").c_str(), 0, &key, err, sizeof err) != CUZK_OK) {
        EXPECT(false, "%s: %s", dir.c_str(), err);
        continue;
      }
      cuzk_key_info info{};
      cuzk_key_get_info(key, &info, err, sizeof err);
      cuzk_prover *pc = nullptr, *pg = nullptr;
      bool ok = cuzk_prover_create(cpu, key, 0, &pc, err, sizeof err) == CUZK_OK;
      ok = ok && cuzk_prover_create(gpu, key, 0, &pg, err, sizeof err) == CUZK_OK;
      EXPECT(ok, "%s: prover: %s", dir.c_str(), err);
      if (ok) {
        std::vector<uint8_t> r(32 * 2, 0), s(32 * 2, 0);
        r[0] = 7; r[32] = 9; s[0] = 11; s[32] = 13;
        std::vector<uint8_t> batch(wtns.size() * 2);
        std::memcpy(batch.data(), wtns.data(), wtns.size());
        std::memcpy(batch.data() + wtns.size(), wtns.data(), wtns.size());
        std::vector<uint8_t> p1(info.proof_bytes * 2), p2(info.proof_bytes * 2);
        cuzk_timings tg[2];
        cuzk_status a = cuzk_prove(pc, batch.data(), wtns.size(), CUZK_WITNESS_WTNS, 2, r.data(), s.data(), 0,
                                   p1.data(), p1.size(), nullptr, err, sizeof err);
        cuzk_status b = cuzk_prove(pg, batch.data(), wtns.size(), CUZK_WITNESS_WTNS, 2, r.data(), s.data(),
                                   CUZK_PROVE_SELF_CHECK, p2.data(), p2.size(), tg, err, sizeof err);
        EXPECT(a == CUZK_OK && b == CUZK_OK, "%s: prove cpu %d gpu %d: %s", dir.c_str(), a, b, err);
        bool same = p1 == p2;
        EXPECT(same, "%s: GPU proof differs from the CPU proof", dir.c_str());
        std::printf("e2e %s (2^%u): %s, gpu %.2f ms/proof (msm_h %.3f ms)\n", dir.c_str(), info.log_domain,
                    b == CUZK_OK && same ? "identical to CPU, self-checked" : "WRONG", tg[1].total_ns / 2e6,
                    (tg[1].phases[CUZK_PHASE_MSM_H].end_ns - tg[1].phases[CUZK_PHASE_MSM_H].start_ns) / 1e6);
      }
      cuzk_prover_destroy(pc, nullptr, 0);
      cuzk_prover_destroy(pg, nullptr, 0);
      cuzk_key_close(key, nullptr, 0);
    }
  // A proving loop: 20 proofs on one GPU prover, the witness written into a pinned buffer from
  // cuzk_host_alloc made once. After the first proof nothing may be page-locked again: the
  // library's own staging allocations (cuzk_staging_stats) stay put and no proof has a
  // HOST_REGISTER phase.
  for (const char* curve : {"bn254", "bls12_381"}) {
    std::string dir = std::string("tests/fixtures/") + curve + "/poseidon_10";
    std::vector<uint8_t> wtns = read_file(dir + "/witness.wtns");
    cuzk_key* key = nullptr;
    cuzk_prover* pg = nullptr;
    if (wtns.empty() || cuzk_key_open((dir + "/circuit.zkey").c_str(), 0, &key, err, sizeof err) != CUZK_OK ||
        cuzk_prover_create(gpu, key, 0, &pg, err, sizeof err) != CUZK_OK) {
      EXPECT(false, "loop %s: %s", dir.c_str(), err);
      cuzk_key_close(key, nullptr, 0);
      continue;
    }
    cuzk_key_info info{};
    cuzk_key_get_info(key, &info, err, sizeof err);
    void* pinned = nullptr;
    uint32_t got_flags = 0;
    EXPECT(cuzk_host_alloc(wtns.size(), CUZK_HOST_PINNED, 0, &pinned, &got_flags, err, sizeof err) == CUZK_OK &&
               (got_flags & CUZK_HOST_IS_PINNED),
           "loop: pinned witness buffer: %s", err);
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
      cuzk_status st = cuzk_prove(pg, static_cast<uint8_t*>(pinned), wtns.size(), CUZK_WITNESS_WTNS, 1, nullptr,
                                  nullptr, CUZK_PROVE_SELF_CHECK, proof.data(), proof.size(), &t, err, sizeof err);
      if (st != CUZK_OK) { failed++; std::printf("  loop %s proof %d: %s\n", curve, i, err); }
      const auto& reg = t.phases[CUZK_PHASE_HOST_REGISTER];
      register_ns += reg.end_ns - reg.start_ns;
      ms.push_back(t.total_ns / 1e6);
      if (i == 0) cuzk_staging_stats(&bytes1, &allocs1, &ns1);
    }
    cuzk_staging_stats(&bytes20, &allocs20, &ns20);
    EXPECT(failed == 0, "loop %s: %d of 20 proofs failed", curve, failed);
    EXPECT(allocs20 == allocs1 && ns20 == ns1 && bytes20 == bytes1,
           "loop %s: staging pinned again after the first proof (%llu -> %llu allocations)", curve,
           (unsigned long long)allocs1, (unsigned long long)allocs20);
    EXPECT(register_ns == 0, "loop %s: %llu ns in HOST_REGISTER", curve, (unsigned long long)register_ns);
    std::printf("e2e loop %s poseidon_10: 20 proofs self-checked (%d failed), median %.2f ms/proof; staging: "
                "%llu pinned allocations (%.1f MiB, %.1f ms) in proof 1, %llu in proofs 2-20; HOST_REGISTER "
                "phases %llu ns\n",
                curve, failed, median(ms), (unsigned long long)(allocs1 - allocs0), bytes1 / 1048576.0, ns1 / 1e6,
                (unsigned long long)(allocs20 - allocs1), (unsigned long long)register_ns);
    cuzk_host_free(pinned, nullptr, 0);
    cuzk_prover_destroy(pg, nullptr, 0);
    cuzk_key_close(key, nullptr, 0);
  }
  // the standalone kernels through the ABI: GPU against CPU on a small input
  {
    const size_t n = 3000;
    using HC = curve::Bls12381;
    std::vector<typename HC::G1> pts(n);
    par_for(n, [&](size_t i) {
      uint64_t k[4] = {i * 7919 + 3, 0, 0, 0};
      pts[i] = curve::scalar_mul(HC::g1_generator(), k, 4).to_affine();
    });
    auto sc = random_scalars<typename HC::Fr>(n, 3, 0.5);
    uint8_t o1[96], o2[96];
    cuzk_status a = cuzk_msm(cpu, CUZK_CURVE_BLS12_381, CUZK_G1, reinterpret_cast<uint8_t*>(pts.data()), sc.data(), n,
                             o1, 96, nullptr, err, sizeof err);
    cuzk_status b = cuzk_msm(gpu, CUZK_CURVE_BLS12_381, CUZK_G1, reinterpret_cast<uint8_t*>(pts.data()), sc.data(), n,
                             o2, 96, nullptr, err, sizeof err);
    EXPECT(a == CUZK_OK && b == CUZK_OK && std::memcmp(o1, o2, 96) == 0, "cuzk_msm: GPU differs from CPU (%s)", err);
    std::vector<uint8_t> v1 = random_scalars<typename HC::Fr>(1 << 12, 4, 0), v2 = v1;
    a = cuzk_ntt(cpu, CUZK_CURVE_BLS12_381, v1.data(), 12, CUZK_NTT_COSET_INVERSE, nullptr, err, sizeof err);
    b = cuzk_ntt(gpu, CUZK_CURVE_BLS12_381, v2.data(), 12, CUZK_NTT_COSET_INVERSE, nullptr, err, sizeof err);
    EXPECT(a == CUZK_OK && b == CUZK_OK && v1 == v2, "cuzk_ntt: GPU differs from CPU (%s)", err);
    std::printf("e2e kernels through the ABI: msm %s, ntt %s\n", std::memcmp(o1, o2, 96) ? "WRONG" : "ok",
                v1 == v2 ? "ok" : "WRONG");
  }
  cuzk_context_destroy(cpu, nullptr, 0);
  cuzk_context_destroy(gpu, nullptr, 0);
}

// device D: a whole proof through the ABI on GPU D only, then the driver's list of this process's
// contexts must name that GPU and no other (issue 4: no work ever lands on another device). Run
// in its own process per device (run.sh does), before anything else touches a GPU.
int section_device(int d) {
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
  const std::string dir = "tests/fixtures/bls12_381/poseidon_10";
  std::vector<uint8_t> wtns = read_file(dir + "/witness.wtns");
  bool ok = cuzk_context_create(CUZK_BACKEND_CUDA, d, 0, 0, &ctx, err, sizeof err) == CUZK_OK &&
            cuzk_key_open((dir + "/circuit.zkey").c_str(), 0, &key, err, sizeof err) == CUZK_OK &&
            cuzk_prover_create(ctx, key, 0, &pr, err, sizeof err) == CUZK_OK;
  std::vector<uint8_t> proof(1024);
  ok = ok && cuzk_prove(pr, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, 1, nullptr, nullptr, CUZK_PROVE_SELF_CHECK,
                        proof.data(), proof.size(), nullptr, err, sizeof err) == CUZK_OK;
  EXPECT(ok, "device %d: proof: %s", d, err);
  // the contexts this process holds, by PCI bus id, while the prover is alive
  char cmd[256];
  std::snprintf(cmd, sizeof cmd, "nvidia-smi --query-compute-apps=pid,gpu_bus_id --format=csv,noheader");
  FILE* f = popen(cmd, "r");
  int mine = 0, elsewhere = 0;
  char line[256];
  std::string me = std::to_string(getpid());
  while (f && std::fgets(line, sizeof line, f)) {
    std::string l(line);
    if (l.rfind(me + ",", 0) != 0) continue;
    // bus ids: nvidia-smi prints 00000000:XX:00.0, CUDA XXXX:XX:00.0 (case may differ)
    std::string id = l.substr(l.find(',') + 1);
    auto lower = [](std::string x) {
      for (auto& c : x) c = (char)std::tolower(c);
      return x;
    };
    std::string want = lower(std::string(bus)).substr(std::string(bus).find(':'));
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
  std::printf("SECTION device %d: %s (%d failures)\n", d, g_failures ? "FAILED" : "passed", g_failures);
  return g_failures ? 1 : 0;
}

// fixed-base: the GPU batch k_i * G (the dev setup's key points) against the CPU tables, byte for
// byte in key encoding, on random scalars with 0, 1 and r-1 among them; then GPU time at 2^20.
template <class HC, int G>
void fixed_base_one(const char* name, size_t n_check) {
  using Fr = typename HC::Fr;
  using F = std::conditional_t<G == 1, typename HC::Fq, typename HC::Fq2>;
  const size_t pb = 2 * F::BYTES;
  const size_t n_time = (size_t)1 << 20;
  const size_t n = std::max(n_check, n_time);
  auto raw = random_scalars<Fr>(n, 29 + G, 0.0);
  std::vector<Fr> sc(n);
  par_for(n, [&](size_t i) { sc[i] = Fr::from_raw(reinterpret_cast<const uint64_t*>(&raw[i * 32])).to_mont(); });
  sc[0] = Fr::zero();
  sc[1] = Fr::one();
  sc[2] = Fr::zero() - Fr::one();
  sc[n_check - 1] = Fr::zero() - Fr::one();
  ThreadPool& pool = default_thread_pool();
  double t0 = now_ms();
  const auto& gen = [] { if constexpr (G == 1) return HC::g1_generator(); else return HC::g2_generator(); }();
  setup::FixedBaseTable<F> table(gen, Fr::Params::BITS, n_check, pool);
  std::vector<uint8_t> cpu(n_check * pb), gpu(n * pb, 0xAA);
  table.mul_many(sc.data(), n_check, cpu.data(), pool);
  double t1 = now_ms();
  std::string err;
  CHECK_OK(fixed_base_mul(g_dev, HC::ID, G == 1 ? CUZK_G1 : CUZK_G2, reinterpret_cast<const uint8_t*>(sc.data()),
                          n_check, gpu.data(), err));
  size_t bad = 0;
  for (size_t i = 0; i < n_check; i++) bad += std::memcmp(&cpu[i * pb], &gpu[i * pb], pb) != 0;
  bool zero_ok = true;
  for (size_t b = 0; b < pb; b++) zero_ok &= gpu[b] == 0;
  EXPECT(bad == 0 && zero_ok, "fixed-base %s: %zu of %zu points differ from the CPU tables (zero %s)", name, bad,
         n_check, zero_ok ? "ok" : "WRONG");
  std::vector<double> ms;
  for (int r = 0; r < 3; r++) {
    double a = now_ms();
    CHECK_OK(fixed_base_mul(g_dev, HC::ID, G == 1 ? CUZK_G1 : CUZK_G2, reinterpret_cast<const uint8_t*>(sc.data()),
                            n_time, gpu.data(), err));
    ms.push_back(now_ms() - a);
  }
  std::printf("fixed-base %s: %zu points equal the CPU tables' (%s; CPU %.0f ms for them); GPU 2^20 median %.1f ms "
              "(host to host)\n", name, n_check, bad == 0 && zero_ok ? "ok" : "WRONG", t1 - t0, median(ms));
  result(std::string("fixed-base ") + name + " 2^20", median(ms), "ms");
}

void section_fixed_base() {
  fixed_base_one<curve::Bn254, 1>("bn254 g1", ((size_t)1 << 20) + 77);  // crosses a GPU chunk
  fixed_base_one<curve::Bn254, 2>("bn254 g2", 40000);
  fixed_base_one<curve::Bls12381, 1>("bls12_381 g1", 100000);
  fixed_base_one<curve::Bls12381, 2>("bls12_381 g2", 40000);
}

}  // namespace

int main(int argc, char** argv) {
  std::string section = argc > 1 ? argv[1] : "field";
  if (section == "device") return section_device(argc > 2 ? std::atoi(argv[2]) : 0);
  cudaDeviceProp p{};
  CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, %d SMs, %.0f GiB\n", p.name, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0);
  CHECK_OK(open_device(0, &g_dev, err));
  if (section == "field") section_field();
  else if (section == "msm-check") section_msm_check();
  else if (section == "msm") section_msm(argc > 2 ? std::atoi(argv[2]) : 24);
  else if (section == "ntt") section_ntt();
  else if (section == "ntt-bench") section_ntt_bench(argc > 2 ? std::atoi(argv[2]) : 11);
  else if (section == "ntt-check") {
    const uint32_t L = argc > 2 ? (uint32_t)std::atoi(argv[2]) : 24;
    ntt_check_large<curve::Bls12381>("bls12-381", L);
    ntt_check_large<curve::Bn254>("bn254", L);
  } else if (section == "ntt-one") section_ntt_one(argc > 2 ? (uint32_t)std::atoi(argv[2]) : 27);
  else if (section == "fixed-base") section_fixed_base();
  else if (section == "e2e") section_e2e();
  else if (section == "engine") section_engine(argc > 2 ? std::atoi(argv[2]) : 22);
  else { std::printf("unknown section %s\n", section.c_str()); return 2; }
  close_device(g_dev);
  std::printf("SECTION %s: %s (%d failures)\n", section.c_str(), g_failures ? "FAILED" : "passed", g_failures);
  return g_failures ? 1 : 0;
}
