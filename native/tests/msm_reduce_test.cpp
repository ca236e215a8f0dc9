// The GPU MSM's bucket reduction, its arithmetic run on the host (cuda/msm/reduce_steps.hpp: the
// functions the kernels run per thread, and the host combination): over a toy group (integers
// mod 2^61 - 1 under addition) the segments, the fold of every block's lanes, the per-window sums
// and msm_combine must give sum_w 2^(c w) sum_b b B_{w,b} plus the ones' sum, for every window c
// the MSM chooses (2..22) and several window counts; and every window's shape must tile its
// buckets with a power-of-two count of segments (the fold's bit arithmetic assumes it).
#include <cstdint>
#include <random>
#include <vector>

#include "check.hpp"
#include "cuda/msm/msm_sizes.hpp"
#include "cuda/msm/reduce_steps.hpp"

namespace {

constexpr uint64_t kP = (1ull << 61) - 1;

// A cyclic group of prime order: enough to check linear bookkeeping.
struct Toy {
  uint64_t v = 0;
  static Toy infinity() { return Toy{}; }
  Toy add(const Toy& o) const {
    uint64_t s = v + o.v;
    return Toy{s >= kP ? s - kP : s};
  }
  Toy dbl() const { return add(*this); }
};

uint64_t mul_mod(uint64_t a, uint64_t b) { return (uint64_t)((unsigned __int128)a * b % kP); }

// What the kernels and the host do for window c over nwin windows of buckets `b` (nwin x nb,
// bucket k at index k - 1) and the ones' sum `ones`.
Toy reduce(int c, int nwin, const std::vector<Toy>& b, Toy ones) {
  using namespace cuzk::cuda;
  const MsmShape sh = MsmShape::of(c, 1);
  std::vector<Toy> seg_t((size_t)nwin * sh.S), seg_r((size_t)nwin * sh.S);
  for (uint32_t g = 0; g < (uint32_t)nwin * sh.S; g++)  // msm_segments: one thread a segment
    segment_sums(b.data() + (size_t)(g / sh.S) * sh.nb + (size_t)(g % sh.S) * sh.L, sh.L, seg_t[g], seg_r[g]);
  const uint32_t n_fold = (uint32_t)nwin * (sh.J + 1), lanes = 64;
  std::vector<Toy> sums(msm_sums_points(c, nwin));
  sums[0] = ones;
  for (uint32_t block = 0; block < n_fold * sh.parts; block++) {  // msm_fold, then msm_sum_groups
    Toy acc;
    for (uint32_t lane = 0; lane < lanes; lane++)
      acc = acc.add(fold_share(seg_t.data(), seg_r.data(), sh.S, sh.J, sh.parts, block, lane, lanes));
    sums[1 + block / sh.parts] = sums[1 + block / sh.parts].add(acc);
  }
  return msm_combine(sums.data(), c, nwin);
}

void windows() {
  std::mt19937_64 rng(5);
  for (int c = 2; c <= 22; c++) {
    const cuzk::cuda::MsmShape sh = cuzk::cuda::MsmShape::of(c, 1);
    CHECK(sh.L * sh.S == sh.nb && (sh.S & (sh.S - 1)) == 0 && (1u << sh.J) == sh.S);
    CHECK(sh.parts >= 1 && sh.parts <= 32 && sh.parts <= sh.S);  // msm_sum_groups: one warp a (w, j)
    for (int nwin : {1, 2, 3}) {
      if (c > 18 && nwin > 1) continue;  // the widest windows once: millions of buckets
      std::vector<Toy> b((size_t)nwin * sh.nb);
      for (Toy& x : b) x.v = rng() % kP;
      if (c >= 16) for (size_t i = 0; i < b.size(); i += 3) b[i].v = 0;  // empty buckets among them
      const Toy ones{rng() % kP};
      uint64_t expect = ones.v;
      for (int w = 0; w < nwin; w++) {
        uint64_t window = 0;
        for (uint32_t k = 1; k <= sh.nb; k++) window = (window + mul_mod(k, b[(size_t)w * sh.nb + k - 1].v)) % kP;
        uint64_t weight = 1;
        for (int i = 0; i < c * w; i++) weight = (weight * 2) % kP;
        expect = (expect + mul_mod(weight, window)) % kP;
      }
      const Toy got = reduce(c, nwin, b, ones);
      if (got.v != expect) std::fprintf(stderr, "c = %d, %d windows: %llu, expected %llu\n", c, nwin,
                                        (unsigned long long)got.v, (unsigned long long)expect);
      CHECK(got.v == expect);
    }
  }
}

}  // namespace

int main() {
  windows();
  return cuzk_test::finish("msm_reduce_test");
}
