// MSMs on the GPU against the CPU MSM and a discrete-log reference, in all four groups: n in
// {1, 2, 3, 1000, 2^16+1, 2^20, 2^24} with infinities, repeated points, P and -P, scalars 0, 1,
// r-1 and scalars >= r; every window path (forced sizes, with and without the 0/1 split) on the
// smaller sizes; the windows sorted and summed in groups (2, 3, the most), each size; small
// scalars (below 2^32) alone and among 0/1 and large ones; in chunks whose buckets are kept across
// them (few buckets and many, in window groups); the walk's chunks as planned, fitted to the
// device's waves and to an odd thread count.
// MSM_CHECK_MAX_LOG (default 24) bounds the large sizes for quick runs; MSM_ONLY picks groups by name.
#include "cpu/msm.hpp"
#include "gpu_check.cuh"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

template <class HC, int G>
void msm_check(const char* name) {
  using Fr = typename HC::Fr;
  using HA = typename Group<HC, G>::HostAffine;
  using HF = typename Gen<HC, G>::HostField;
  const KnownPoints<HC, G> known;
  const size_t K = known.K;
  const std::vector<Fr>& klog = known.klog;
  const std::vector<HA>& base = known.base;
  for (size_t n : msm_check_sizes({20, 24})) {  // the sizes the issue names
    std::vector<HA> pts;
    std::vector<Fr> ks;
    known.fill(n, pts, ks);
    auto sc = random_scalars<Fr>(n, 99 + n, n >= 1000 ? 0.3 : 0.0);
    known.edge_cases(pts, ks, sc);
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
    // The windows in groups: a few at a time, the last group smaller, one window a group.
    for (int groups : {2, 3, cuzk::cuda::kMsmMaxWindowGroups})
      for (int window : {0, 13}) {
        if (big && window != 0) continue;
        auto got = gpu_msm<HC, G>(dp.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, window, groups);
        runs++;
        if (!got.equals(expect)) {
          bad++;
          std::printf("  %s n=%zu window=%d in %d window groups: wrong\n", name, n, window, groups);
        }
      }
    // The walk's chunks as planned, fitted to the device's waves (the library's) and to an odd
    // count of threads at once (chunk lengths that are no power of two): the same sum.
    {
      using cuzk::cuda::MsmShape;
      CHECK_OK((cuzk::cuda::msm_plan<typename Fr::Params>(g_dev->plan, reinterpret_cast<const uint32_t*>(ds.p),
                                                          (uint32_t)n, true, 0, g_dev->stream, err)));
      cuzk::cuda::DeviceBuffer buckets, sums;
      const MsmShape shapes[] = {MsmShape::of(g_dev->plan.c, g_dev->plan.total), walk_in_waves<HC, G>(),
                                 walk_in_waves<HC, G>(97 * 32)};
      for (const MsmShape& walk : shapes) {
        runs++;
        if (!gpu_msm_walked<HC, G>(dp.p, walk, buckets, sums).equals(expect)) {
          bad++;
          std::printf("  %s n=%zu walk in %u chunks of %u: wrong\n", name, n, walk.chunks, walk.K);
        }
      }
    }
    // Small scalars (below 2^32) take only their own windows: bytes among 0s and 1s (a PoRep
    // witness), small ones of up to 32 bits alone, and among large ones; automatic and forced
    // windows, in window groups.
    if (n >= 1000) {
      const struct { const char* what; double zero_one, large; int bits; } mixes[] = {
          {"bytes among 0/1", 0.8, 0.0, 8}, {"small", 0.0, 0.0, 32}, {"small and large", 0.3, 0.2, 32}};
      for (const auto& mix : mixes) {
        auto small = small_scalars<Fr>(n, 41 + n, mix.zero_one, mix.large, mix.bits);
        auto want = dlog_reference<HC, G>(small, n, 0, &ks);
        ds.upload(small.data());
        for (int window : {0, 9, 13})
          for (int groups : {1, 3}) {
            if (big && (window != 0 || groups != 1)) continue;
            auto got = gpu_msm<HC, G>(dp.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, window, groups);
            runs++;
            if (!got.equals(want)) {
              bad++;
              std::printf("  %s n=%zu %s window=%d in %d window groups: wrong\n", name, n, mix.what, window, groups);
            }
          }
      }
    }
    // In chunks whose buckets are kept across them, reduced once: few buckets (added in place)
    // and many (summed fresh, then added), in window groups; the last chunk shorter.
    if (n >= 1000 && !big) {
      ds.upload(sc.data());
      MsmChunkBuffers io;
      for (int window : {4, 13})
        for (int groups : {1, 3}) {
          MsmChunking how;
          how.window = window;
          how.window_groups = groups;
          how.keep = true;
          auto got = gpu_msm_chunks<HC, G>(dp.p, nullptr, ds.p, n, n / 3 + 1, how, io);
          runs++;
          if (!got.equals(expect)) {
            bad++;
            std::printf("  %s n=%zu in chunks, buckets kept, window=%d in %d window groups: wrong\n", name, n, window, groups);
          }
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

}  // namespace

GPU_TEST(msm) {
  return run_on_gpu0("msm-check", [] {
    if (msm_selected("bn254 G1")) msm_check<curve::Bn254, 1>("bn254 G1");
    if (msm_selected("bn254 G2")) msm_check<curve::Bn254, 2>("bn254 G2");
    if (msm_selected("bls12-381 G1")) msm_check<curve::Bls12381, 1>("bls12-381 G1");
    if (msm_selected("bls12-381 G2")) msm_check<curve::Bls12381, 2>("bls12-381 G2");
  });
}
