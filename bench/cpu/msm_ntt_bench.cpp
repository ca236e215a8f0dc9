// Benchmark of the CPU kernels (not a test): median wall time of MSM G1/G2 at 2^12..2^18 with
// random full-width and 0/1-heavy scalars, and of the NTT at 2^14..2^20, for both curves.
// Build (the MSM's files with the flag the library's CMakeLists.txt gives them):
//   F="-std=c++17 -O3 -march=x86-64-v3 -madx -Inative/include -Inative/src"
//   for g in native/src/cpu/msm_*.cpp; do g++ $F -fno-tree-vectorize -c $g -o /tmp/$(basename $g .cpp).o; done
//   g++ $F native/src/util/thread_pool.cpp native/src/cpu/ntt.cpp native/src/cpu/simd.cpp /tmp/msm_*.o
//          bench/cpu/msm_ntt_bench.cpp -o /tmp/msm_ntt_bench -lpthread
// Run:   /tmp/msm_ntt_bench [msm] [ntt] [g1] [g2] [bn254] [bls] [max=LOG] [min=LOG] [runs=R] [threads=T]
//          [min] [scalar]
// (no filter words = everything; "min": fastest run instead of the median; "scalar": MSM without
// AVX-512 IFMA). Each cell is "wall (cpu)": median wall-clock ms and median
// process CPU ms; on a shared, loaded machine the CPU figure is the steadier one.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "cpu/msm.hpp"
#include "cpu/ntt.hpp"
#include "curve/ops.hpp"

using namespace cuzk;
using namespace cuzk::curve;

namespace {

std::mt19937_64 rng(42);
unsigned g_runs = 5;
bool g_min = false;  // report the fastest run instead of the median (A/B tests on a loaded machine)

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

struct Timing { double wall, cpu; };

template <class Fn>
Timing median_ms(Fn&& fn, unsigned runs) {
  std::vector<double> t, c;
  fn();  // warm-up (twiddle tables, page faults)
  for (unsigned i = 0; i < runs; i++) {
    double s = now_ms(), sc = cpu_ms();
    fn();
    t.push_back(now_ms() - s);
    c.push_back(cpu_ms() - sc);
  }
  std::sort(t.begin(), t.end());
  std::sort(c.begin(), c.end());
  if (g_min) return {t[0], c[0]};
  return {t[t.size() / 2], c[c.size() / 2]};
}

std::string cell(Timing t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%8.2f (%8.2f)", t.wall, t.cpu);
  return buf;
}

template <class Fr>
void random_scalars(uint8_t* out, size_t n, bool zero_one_heavy) {
  for (size_t i = 0; i < n; i++) {
    uint8_t* s = out + 32 * i;
    unsigned roll = (unsigned)(rng() % 100);
    std::memset(s, 0, 32);
    if (zero_one_heavy && roll < 45) continue;
    if (zero_one_heavy && roll < 90) { s[0] = 1; continue; }
    for (;;) {
      uint64_t l[4];
      for (auto& w : l) w = rng();
      l[3] &= (~0ULL) >> (256 - Fr::Params::BITS);
      if (Fr::from_raw(l).is_canonical()) { std::memcpy(s, l, 32); break; }
    }
  }
}

// n distinct points B + iA in key encoding
template <class F>
std::vector<uint8_t> make_points(const Affine<F>& g, size_t n) {
  uint64_t ka[4] = {rng(), rng(), rng(), rng() >> 8}, kb[4] = {rng(), rng(), rng(), rng() >> 8};
  Xyzz<F> A = scalar_mul(g, ka, 4), cur = scalar_mul(g, kb, 4);
  std::vector<Xyzz<F>> proj(n);
  for (size_t i = 0; i < n; i++) { proj[i] = cur; cur = cur.add(A); }
  std::vector<Affine<F>> aff(n);
  to_affine_batch(proj.data(), aff.data(), n);
  std::vector<uint8_t> out(n * 2 * F::BYTES);
  for (size_t i = 0; i < n; i++) store_key_point(aff[i], out.data() + i * 2 * F::BYTES);
  return out;
}

template <class C, class F>
void bench_msm(ThreadPool& pool, const char* label, const Affine<F>& g, unsigned min_log, unsigned max_log) {
  const size_t n_max = (size_t)1 << max_log;
  auto points = make_points(g, n_max);
  std::vector<uint8_t> sc_rand(32 * n_max), sc_01(32 * n_max);
  random_scalars<typename C::Fr>(sc_rand.data(), n_max, false);
  random_scalars<typename C::Fr>(sc_01.data(), n_max, true);
  for (unsigned lg = min_log; lg <= max_log; lg += 2) {
    size_t n = (size_t)1 << lg;
    unsigned runs = lg >= 18 ? std::max(3u, g_runs / 2) : g_runs;
    Timing t_rand = median_ms([&] { cpu::msm<C, F>(pool, points.data(), sc_rand.data(), n); }, runs);
    Timing t_01 = median_ms([&] { cpu::msm<C, F>(pool, points.data(), sc_01.data(), n); }, runs);
    std::printf("| MSM %-14s | 2^%-2u | %s | %s |\n", label, lg, cell(t_rand).c_str(), cell(t_01).c_str());
    std::fflush(stdout);
  }
}

template <class Fr>
void bench_ntt(ThreadPool& pool, const char* label, unsigned min_log, unsigned max_log) {
  for (unsigned lg = min_log; lg <= max_log; lg++) {
    size_t n = (size_t)1 << lg;
    std::vector<Fr> a(n);
    for (auto& x : a) x = Fr::from_u64(rng());
    Timing t_f = median_ms([&] { cpu::ntt(pool, a.data(), lg, cpu::NttKind::Forward); }, g_runs);
    Timing t_c = median_ms([&] { cpu::ntt(pool, a.data(), lg, cpu::NttKind::CosetInverse); }, g_runs);
    std::printf("| NTT %-14s | 2^%-2u | %s | %s |\n", label, lg, cell(t_f).c_str(), cell(t_c).c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool want_msm = false, want_ntt = false, want_g1 = false, want_g2 = false, want_bn = false, want_bls = false;
  unsigned max_msm = 18, min_msm = 12, max_ntt = 20, min_ntt = 14, threads = 0;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "msm") want_msm = true;
    else if (a == "ntt") want_ntt = true;
    else if (a == "g1") want_g1 = true;
    else if (a == "g2") want_g2 = true;
    else if (a == "bn254") want_bn = true;
    else if (a == "bls") want_bls = true;
    else if (a.rfind("max=", 0) == 0) max_msm = max_ntt = (unsigned)std::stoul(a.substr(4));
    else if (a.rfind("min=", 0) == 0) min_msm = min_ntt = (unsigned)std::stoul(a.substr(4));
    else if (a.rfind("runs=", 0) == 0) g_runs = (unsigned)std::stoul(a.substr(5));
    else if (a.rfind("threads=", 0) == 0) threads = (unsigned)std::stoul(a.substr(8));
    else if (a == "min") g_min = true;
    else if (a == "scalar") cpu::set_simd(false);
  }
  if (!want_msm && !want_ntt) want_msm = want_ntt = true;
  if (!want_g1 && !want_g2) want_g1 = want_g2 = true;
  if (!want_bn && !want_bls) want_bn = want_bls = true;
  ThreadPool pool(threads);
  std::printf("threads: %u, runs: %u (%s), kernels %s\n", pool.size(), g_runs, g_min ? "min" : "median",
              cpu::simd_active() ? "AVX-512 IFMA" : "scalar");
  if (want_msm) {
    std::printf("| kernel             | n    | random: wall (cpu) ms | 0/1-heavy: wall (cpu) ms |\n|---|---|---|---|\n");
    if (want_bn && want_g1) bench_msm<Bn254, Bn254::Fq>(pool, "BN254 G1", Bn254::g1_generator(), min_msm, max_msm);
    if (want_bn && want_g2) bench_msm<Bn254, Bn254::Fq2>(pool, "BN254 G2", Bn254::g2_generator(), min_msm, max_msm);
    if (want_bls && want_g1) bench_msm<Bls12381, Bls12381::Fq>(pool, "BLS12-381 G1", Bls12381::g1_generator(), min_msm, max_msm);
    if (want_bls && want_g2) bench_msm<Bls12381, Bls12381::Fq2>(pool, "BLS12-381 G2", Bls12381::g2_generator(), min_msm, max_msm);
  }
  if (want_ntt) {
    std::printf("| kernel             | n    | forward: wall (cpu) ms | coset-inverse: wall (cpu) ms |\n|---|---|---|---|\n");
    if (want_bn) bench_ntt<Bn254::Fr>(pool, "BN254 Fr", min_ntt, max_ntt);
    if (want_bls) bench_ntt<Bls12381::Fr>(pool, "BLS12-381 Fr", min_ntt, max_ntt);
  }
  return 0;
}
