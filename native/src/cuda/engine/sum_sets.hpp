// The sets of partial sums an MSM pass keeps per proof and section (msm_dispatch.cuh): one for each
// window size its chunks' plans take. The folded sums of window w weigh 2^(c w) in every plan at
// window c, so a plan of fewer windows adds into the first windows of its size's set, and the set
// is combined at the most windows any plan added into it. Plain C++: the host tests check the
// bookkeeping against the sum it must give.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cuzk::cuda {

struct SumSets {
  static constexpr int kCount = 4;
  int c[kCount] = {};     // each set's window (0: unused yet)
  int nwin[kCount] = {};  // the most windows a plan added into it
  // A chunk of few buckets (a PoRep chunk's bytes: one window of 256 at c = 9) keeps them across
  // the pass instead of reducing them: each set has buckets of its window for up to kKeptBuckets
  // (its first windows), added into by every such chunk and reduced once, at kept_nwin windows,
  // into the set's sums at the pass's end (zeroed bytes: empty buckets). Chunks of more windows at
  // the same size (the public inputs') are reduced into the same sums as before.
  static constexpr int kKeptMaxWindow = 10;
  static constexpr uint32_t kKeptBuckets = 1024;
  int kept_nwin[kCount] = {};  // the most windows a chunk kept (0: none kept in this set)
  static bool keeps(int c, int n, int groups, int copies) {
    return copies == 1 && groups == 1 && c >= 2 && c <= kKeptMaxWindow && ((uint64_t)n << (c - 1)) <= kKeptBuckets;
  }
  void keep(int set, int n) { kept_nwin[set] = std::max(kept_nwin[set], n); }

  // Set 0 at window c0 over nwin0 windows (a full chunk's, which the workspace was priced at); the
  // others unused.
  void reset(int c0, int nwin0) {
    std::fill(c, c + kCount, 0);
    std::fill(nwin, nwin + kCount, 0);
    std::fill(kept_nwin, kept_nwin + kCount, 0);
    c[0] = c0;
    nwin[0] = nwin0;
  }
  // The set a plan of window w and n reduced windows adds into: the one at w, else the next unused
  // one; -1 when every set is taken by another window (plan the chunk again at set 0's).
  int take(int w, int n) {
    for (int s = 0; s < kCount; s++)
      if (c[s] == w) {
        nwin[s] = std::max(nwin[s], n);
        return s;
      }
    for (int s = 1; s < kCount; s++)
      if (c[s] == 0) {
        c[s] = w;
        nwin[s] = n;
        return s;
      }
    return -1;
  }
};

}  // namespace cuzk::cuda
