// MSMs with the batch-affine bucket accumulation (cuda/msm_affine.cuh) against the discrete-log
// reference, in all four groups: n = 2^16+1 and 2^20 (G1), scalar sets random (30 % 0/1, with
// the edge cases: infinities, repeated points, P/-P, scalars 0, 1, r-1), all equal (one run of
// every point per window) and 99 % 0/1; levels 1, 2, 4 and the chooser's; one slot per thread and
// the automatic count; slabs of 100003 pairs (runs across slabs) and the default; windows 8 and
// the chooser's; over 4 precomputed copies; and a remainder capacity forced too small (the
// overflow falls back to the XYZZ walk); knobs out of range are refused by name. Every variant
// where the levels ran is counted, so the test fails if they never do. MSM_CHECK_MAX_LOG below 20
// drops 2^20; MSM_ONLY picks groups.
#include "gpu_check.cuh"

using namespace cuzk;
using namespace cuzk::gpu_check;

namespace {

struct Knobs {
  const char* levels;
  const char* per;
  const char* slab;
  const char* rest;
};

void set_knobs(const Knobs& k) {
  auto put = [](const char* name, const char* v) {
    if (v) setenv(name, v, 1);
    else unsetenv(name);
  };
  put("CUZK_GPU_MSM_AFFINE_LEVELS", k.levels);
  put("CUZK_GPU_MSM_AFFINE_PER", k.per);
  put("CUZK_GPU_MSM_AFFINE_SLAB", k.slab);
  put("CUZK_GPU_MSM_AFFINE_REST", k.rest);
}

template <class HC, int G>
void affine_check(const char* name) {
  using Fr = typename HC::Fr;
  using HA = typename Group<HC, G>::HostAffine;
  const KnownPoints<HC, G> known;
  cuzk::cuda::MsmBases bases;
  const Knobs variants[] = {
      {nullptr, nullptr, nullptr, nullptr}, {"1", nullptr, nullptr, nullptr}, {"2", "1", nullptr, nullptr},
      {"4", nullptr, "100003", nullptr},    {nullptr, "3", "100003", nullptr}, {"2", nullptr, nullptr, "1000"},
  };
  for (size_t n : msm_check_sizes(G == 1 ? std::vector<int>{20} : std::vector<int>{})) {
    if (n < (1u << 16)) continue;  // fewer live pairs than the levels take (kAffineMinLive)
    std::vector<HA> pts;
    std::vector<Fr> ks;
    known.fill(n, pts, ks);
    const MsmScalarSets<HC, G> sets(n, 41 + n, 43 + n, pts, ks);
    DevArray<HA> dp(n);
    dp.upload(pts.data());
    const bool big = n >= (1u << 20);
    int bad = 0, runs = 0, leveled = 0, fell_back = 0;
    const auto saved = g_dev->msm.accumulate;
    g_dev->msm.accumulate = cuzk::cuda::MsmAccumulate::kAffine;
    for (const Knobs& knobs : variants) {
      set_knobs(knobs);
      for (int window : {0, 8}) {
        if (big && window != 0) continue;
        for (bool copies : {false, true}) {
          if (copies && (big || window != 0 || knobs.slab)) continue;
          const int c = window ? window : cuzk::cuda::msm_window_bits(n, Fr::Params::BITS, copies ? 4 : 1);
          if (copies)
            CHECK_OK((cuzk::cuda::msm_bases_build<HC, G>(bases, reinterpret_cast<const typename Group<HC, G>::Affine*>(dp.p),
                                                   (uint32_t)n, 4, c, g_dev->stream, err)));
          for (const auto& set : sets.sets) {
            const uint32_t* sk = set.scalars();
            auto got = copies ? gpu_msm_copies<HC, G>(bases, sk, n, true) : gpu_msm<HC, G>(dp.p, sk, n, true, window);
            runs++;
            const cuzk::cuda::MsmAffineRest& r = g_dev->msm.last_affine;
            leveled += r.used;
            fell_back += knobs.rest && r.levels > 0 && !r.used;
            if (!got.equals(set.expect)) {
              bad++;
              std::printf("  %s n=%zu %s window=%d copies=%d levels=%s per=%s slab=%s rest=%s: wrong (levels %d, "
                          "%u live, %u left)\n",
                          name, n, set.what, c, copies, knobs.levels ? knobs.levels : "auto",
                          knobs.per ? knobs.per : "auto", knobs.slab ? knobs.slab : "auto",
                          knobs.rest ? knobs.rest : "auto", r.levels, r.live, r.count);
            }
          }
        }
      }
    }
    // a knob out of its range, or an unknown accumulation, is refused by name
    for (const auto& [var, value] : {std::pair{"CUZK_GPU_MSM_AFFINE_LEVELS", "9"}, std::pair{"CUZK_GPU_MSM_AFFINE_PER", "x"},
                                     std::pair{"CUZK_GPU_MSM_ACCUMULATE", "afine"}}) {
      setenv(var, value, 1);
      g_dev->msm.accumulate = std::strcmp(var, "CUZK_GPU_MSM_ACCUMULATE") == 0 ? cuzk::cuda::MsmAccumulate::kFromEnv
                                                                               : cuzk::cuda::MsmAccumulate::kAffine;
      std::string e;
      typename Group<HC, G>::HostXyzz out;
      CHECK_OK((cuzk::cuda::msm_plan<typename Fr::Params>(g_dev->plan, sets.sets[0].scalars(), (uint32_t)n, true, 0,
                                                         g_dev->stream, err)));
      const cuzk_status st = cuzk::cuda::msm_execute<HC, G>(
          g_dev->plan, reinterpret_cast<const typename Group<HC, G>::Affine*>(dp.p), g_dev->msm, g_dev->stream, &out, e);
      EXPECT(st == CUZK_ERR_INVALID_ARGUMENT && e.find(var) != std::string::npos, "%s=%s: status %d, '%s'", var, value,
             (int)st, e.c_str());
      unsetenv(var);
    }
    set_knobs({nullptr, nullptr, nullptr, nullptr});
    g_dev->msm.accumulate = saved;
    EXPECT(bad == 0, "%s n=%zu: %d of %d affine MSMs wrong", name, n, bad, runs);
    EXPECT(leveled > runs / 3, "%s n=%zu: the affine levels ran in only %d of %d MSMs", name, n, leveled, runs);
    EXPECT(fell_back > 0, "%s n=%zu: a remainder of 1000 never overflowed into the fallback", name, n);
    std::printf("msm-affine %s n=%zu: %d/%d MSMs right, levels ran in %d, %d overflowed and fell back\n", name, n,
                runs - bad, runs, leveled, fell_back);
  }
}

}  // namespace

GPU_TEST(msm_affine) {
  return run_on_gpu0("msm-affine", [] {
    if (msm_selected("bn254 G1")) affine_check<curve::Bn254, 1>("bn254 G1");
    if (msm_selected("bls12-381 G1")) affine_check<curve::Bls12381, 1>("bls12-381 G1");
    if (msm_selected("bn254 G2")) affine_check<curve::Bn254, 2>("bn254 G2");
    if (msm_selected("bls12-381 G2")) affine_check<curve::Bls12381, 2>("bls12-381 G2");
  });
}
