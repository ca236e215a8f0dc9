// The batch-affine levels of the GPU MSM (native/src/cuda/msm_affine_steps.cuh) through field.cuh's
// host emulation: the same per-thread steps the kernels run (count, forward, the block's one
// inversion, backward), driven here as msm_affine.cuh's driver drives them (exclusive scan of the
// counts, blocks of threads of `per` slots, the first level over a point table with signs, the
// later ones over the lists the levels write), on all four groups. Sorted lists with runs of
// every length (1, 2, 3, random, one of 1000), points repeated (doublings, at every level),
// negated (cancellations), at infinity; each key's sum of what the levels leave must equal the
// host's XYZZ sum of its points, the output stay sorted, and shrink as a level should.
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "check.hpp"
#include "cuda/curves.cuh"
#include "cuda/msm_affine_steps.cuh"
#include "curve/ops.hpp"

using namespace cuzk;
using namespace cuzk::cuda;

namespace {

std::mt19937_64 rng(17);

using cuzk_test::same_bytes;

// One level as msm_affine.cuh runs it; returns the output length.
template <class DA, class Src>
uint32_t run_level(const Src& src, uint32_t n, uint32_t per, uint32_t block, const PointList<DA>& out) {
  using F = typename DA::Field;
  const uint32_t slots = affine_slots(n);
  std::vector<uint32_t> count(slots + 1, 0), pos(slots + 1, 0);
  for (uint32_t j = 0; j < slots; j++) count[j] = affine_count(src, n, j);
  for (uint32_t j = 0; j < slots; j++) pos[j + 1] = pos[j] + count[j];
  std::vector<F> prefix(slots + 1), totals(block), scratch(block);
  const uint32_t threads = (slots + per - 1) / per, blocks = (threads + block - 1) / block;
  for (uint32_t b = 0; b < blocks; b++) {
    auto range = [&](uint32_t t, uint32_t& j0, uint32_t& j1) {
      const uint64_t first = ((uint64_t)b * block + t) * per;
      j0 = (uint32_t)std::min<uint64_t>(first, slots);
      j1 = (uint32_t)std::min<uint64_t>(first + per, slots);
    };
    for (uint32_t t = 0; t < block; t++) {
      uint32_t j0, j1;
      range(t, j0, j1);
      totals[t] = affine_forward<DA>(src, n, j0, j1, prefix.data());
    }
    affine_invert_all(totals.data(), scratch.data(), block);
    for (uint32_t t = 0; t < block; t++) {
      uint32_t j0, j1;
      range(t, j0, j1);
      affine_backward<DA>(src, n, j0, j1, prefix.data(), totals[t], pos.data(), out);
    }
  }
  return pos[slots];
}

struct Shape {
  int levels;
  uint32_t per, block;
};

template <class HC, int G>
void check_group(const char* name, size_t runs_wanted) {
  using HA = std::conditional_t<G == 1, typename HC::G1, typename HC::G2>;
  using HX = std::conditional_t<G == 1, typename HC::G1x, typename HC::G2x>;
  using DA = std::conditional_t<G == 1, typename DeviceCurve<HC>::G1, typename DeviceCurve<HC>::G2>;
  const HA g = G == 1 ? (const HA&)HC::g1_generator() : (const HA&)HC::g2_generator();

  // A table of points: random multiples of the generator, one at infinity, one negated twin.
  std::vector<HA> table;
  for (int i = 0; i < 48; i++) {
    uint64_t k[4];
    for (auto& w : k) w = rng();
    table.push_back(curve::scalar_mul(g, k, 4).to_affine());
  }
  table.push_back(HA::infinity());
  table.push_back(-table[0]);
  const uint32_t inf_index = 48;

  // The sorted list: keys ascending with runs of many lengths; values index | sign << 31.
  std::vector<uint32_t> keys, vals;
  uint32_t key = 0;
  for (size_t r = 0; r < runs_wanted; r++) {
    key += 1 + (uint32_t)(rng() % 3);
    const uint64_t pick = rng() % 10;
    const uint32_t len = r == runs_wanted / 2 ? 1000
                         : pick < 2          ? 1
                         : pick < 4          ? 2
                         : pick < 5          ? 3
                                             : 1 + (uint32_t)(rng() % 40);
    for (uint32_t e = 0; e < len; e++) {
      uint32_t v = (uint32_t)(rng() % 48) | (uint32_t)(rng() % 2) << 31;
      const uint64_t edge = rng() % 16;
      if (e > 0 && edge == 0) v = vals.back();                // the same point: a doubling
      if (e > 0 && edge == 1) v = vals.back() ^ (1u << 31);   // its negation: a cancellation
      if (edge == 2) v = inf_index;                           // infinity
      if (edge == 3) v = 49;                                  // -table[0], beside table[0] elsewhere
      if (r % 7 == 3) v = 5;                                  // a run of one point: doublings at every level
      keys.push_back(key);
      vals.push_back(v);
    }
  }
  const uint32_t n = (uint32_t)keys.size();
  const uint32_t runs = (uint32_t)runs_wanted;

  // Expected: each key's sum on the host.
  auto host_point = [&](uint32_t v) { return (v >> 31) ? -table[v & 0x7fffffffu] : table[v & 0x7fffffffu]; };
  std::vector<std::pair<uint32_t, HX>> expect;
  for (uint32_t i = 0; i < n; i++) {
    if (expect.empty() || expect.back().first != keys[i]) expect.push_back({keys[i], HX::infinity()});
    expect.back().second = expect.back().second.add_affine(host_point(vals[i]));
  }

  std::vector<DA> dtable;
  for (const HA& p : table) dtable.push_back(same_bytes<DA>(p));
  const IndexedPoints<DA> first{keys.data(), vals.data(), dtable.data()};

  for (const Shape& shape : {Shape{1, 1, 1}, Shape{2, 3, 4}, Shape{3, 32, 128}, Shape{5, 7, 3}, Shape{6, 256, 128}}) {
    std::vector<uint32_t> kbuf[2] = {std::vector<uint32_t>(n), std::vector<uint32_t>(n)};
    std::vector<DA> pbuf[2] = {std::vector<DA>(n), std::vector<DA>(n)};
    uint32_t len = n;
    int cur = -1;
    bool shrank = true;
    for (int l = 0; l < shape.levels; l++) {
      const int nxt = cur == 0 ? 1 : 0;
      const PointList<DA> out{kbuf[nxt].data(), pbuf[nxt].data(), n};
      const uint32_t before = len;
      if (cur < 0) len = run_level<DA>(first, len, shape.per, shape.block, out);
      else len = run_level<DA>(PointList<DA>{kbuf[cur].data(), pbuf[cur].data(), n}, len, shape.per, shape.block, out);
      // a run of r leaves at most ceil(r/2) + 1 (its first point may sit alone in a slot)
      shrank = shrank && len <= before / 2 + 3 * runs / 2 + 2 && len <= before;
      cur = nxt;
    }
    CHECK_MSG(shrank, "%s levels=%d: a level did not shrink the list as it should (%u of %u left)", name, shape.levels,
           len, n);
    CHECK_MSG(len <= (n >> shape.levels) + 3 * runs, "%s levels=%d: %u left of %u (bound %u)", name, shape.levels, len, n,
           (n >> shape.levels) + 3 * runs);
    // What is left, summed per key on the host, against the expected sums.
    int bad = 0;
    size_t e = 0;
    for (uint32_t i = 0; i < len;) {
      const uint32_t k = kbuf[cur][i];
      HX sum = HX::infinity();
      for (; i < len && kbuf[cur][i] == k; i++) sum = sum.add_affine(same_bytes<HA>(pbuf[cur][i]));
      while (e < expect.size() && expect[e].first < k) e++;  // keys must come out in order
      if (e >= expect.size() || expect[e].first != k || !sum.equals(expect[e].second)) bad++;
      else e++;
    }
    if (e != expect.size()) bad++;
    CHECK_MSG(bad == 0, "%s levels=%d per=%u block=%u: %d of %zu keys wrong", name, shape.levels, shape.per,
           shape.block, bad, expect.size());
    std::printf("msm-affine %s: %u points in %u runs, %d levels (per %u, block %u): %u left, %d of %zu key sums wrong\n",
                name, n, runs, shape.levels, shape.per, shape.block, len, bad, expect.size());
  }

  // A write past the list's capacity is dropped (the driver then falls back to the XYZZ walk).
  std::vector<uint32_t> k1(2, 7);
  std::vector<DA> p1(2, same_bytes<DA>(table[1]));
  const PointList<DA> small{k1.data(), p1.data(), 1};
  small.put(1, 99, same_bytes<DA>(table[2]));
  small.put(0, 3, same_bytes<DA>(table[3]));
  CHECK_MSG(k1[0] == 3 && k1[1] == 7 && same_bytes<HA>(p1[1]) == table[1], "%s: a write past the capacity landed", name);
}

}  // namespace

int main() {
  check_group<curve::Bn254, 1>("bn254 G1", 400);
  check_group<curve::Bls12381, 1>("bls12-381 G1", 400);
  check_group<curve::Bn254, 2>("bn254 G2", 120);
  check_group<curve::Bls12381, 2>("bls12-381 G2", 120);
  return cuzk_test::finish("msm_affine_test");
}
