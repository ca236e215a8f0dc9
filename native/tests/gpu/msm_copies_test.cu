// MSMs over precomputed copies of the points (cuda/msm/bases.cuh) against the discrete-log
// reference, in all four groups: copy counts 2, 3, 4 and the most the window can use (one window
// per copy), windows 3, 8, 13, 20 and the chooser's; n in {1, 2, 3, 1000, 2^16+1, 2^20 (G1)} with
// points at infinity, repeated points, P and -P, scalars 0, 1 and r-1; scalar sets random (30 %
// 0/1 from n = 1000), all equal, and 99 % 0/1; with and without the 0/1 split. Also: a copies
// plan without its window, and copies for a window out of range, are refused.
// MSM_CHECK_MAX_LOG (default 24) below 20 drops 2^20; MSM_ONLY picks groups by name.
#include "gpu_check.cuh"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

template <class HC, int G>
void copies_check(const char* name) {
  using Fr = typename HC::Fr;
  using HA = typename Group<HC, G>::HostAffine;
  constexpr int bits = Fr::Params::BITS;
  const KnownPoints<HC, G> known;
  cuzk::cuda::MsmBases bases;
  for (size_t n : msm_check_sizes(G == 1 ? std::vector<int>{20} : std::vector<int>{})) {
    std::vector<HA> pts;
    std::vector<Fr> ks;
    known.fill(n, pts, ks);
    const MsmScalarSets<HC, G> sets(n, 99 + n, 7 + n, pts, ks);
    DevArray<HA> dp(n);
    dp.upload(pts.data());
    const bool big = n >= (1u << 20);
    int bad = 0, runs = 0;
    for (int window : {0, 3, 8, 13, 20}) {
      if (big && window != 0 && window != 20) continue;
      for (int t : {2, 3, 4, 0}) {  // 0: one window per copy
        const int c = window ? window : cuzk::cuda::msm_window_bits(n, bits, t ? t : 64);
        const int copies = t ? t : cuzk::cuda::msm_windows(bits, c);
        CHECK_OK((cuzk::cuda::msm_bases_build<HC, G>(bases, reinterpret_cast<const typename Group<HC, G>::Affine*>(dp.p),
                                               (uint32_t)n, copies, c, g_dev->stream, err)));
        for (const auto& set : sets.sets)
          for (bool split : {true, false}) {
            if (big && !split) continue;
            auto got = gpu_msm_copies<HC, G>(bases, set.scalars(), n, split);
            runs++;
            if (!got.equals(set.expect)) {
              bad++;
              std::printf("  %s n=%zu %s window=%d copies=%d split=%d: wrong\n", name, n, set.what, c,
                          bases.copies, split);
            }
          }
      }
    }
    EXPECT(bad == 0, "%s n=%zu: %d of %d MSMs over copies wrong", name, n, bad, runs);
    std::printf("msm-copies %s n=%zu: %d/%d MSMs over copies right\n", name, n, runs - bad, runs);
  }
  // refused: copies without their window; a window the copies do not take
  {
    DevArray<uint8_t> ds(32 * 4);
    CHECK_CUDA(cudaMemset(ds.p, 0, 32 * 4));
    std::string err;
    EXPECT(cuzk::cuda::msm_plan<typename Fr::Params>(g_dev->plan, reinterpret_cast<const uint32_t*>(ds.p), 4, true, 0,
                                               g_dev->stream, err, 3) == CUZK_ERR_INVALID_ARGUMENT,
           "%s: a copies plan without its window was accepted", name);
    DevArray<HA> dp(4);
    EXPECT((cuzk::cuda::msm_bases_build<HC, G>(bases, reinterpret_cast<const typename Group<HC, G>::Affine*>(dp.p), 4, 2,
                                         cuzk::cuda::kMsmMaxWindowWithCopies + 1, g_dev->stream, err)) ==
               CUZK_ERR_INVALID_ARGUMENT,
           "%s: copies for window %d were made", name, cuzk::cuda::kMsmMaxWindowWithCopies + 1);
  }
}

}  // namespace

GPU_TEST(msm_copies) {
  return run_on_gpu0("msm-copies", [] {
    if (msm_selected("bn254 G1")) copies_check<curve::Bn254, 1>("bn254 G1");
    if (msm_selected("bls12-381 G1")) copies_check<curve::Bls12381, 1>("bls12-381 G1");
    if (msm_selected("bn254 G2")) copies_check<curve::Bn254, 2>("bn254 G2");
    if (msm_selected("bls12-381 G2")) copies_check<curve::Bls12381, 2>("bls12-381 G2");
  });
}
