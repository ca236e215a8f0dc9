// The sets of partial sums an MSM pass keeps per proof and section (msm_dispatch.cuh): one for each
// window size its chunks' plans take. The folded sums of window w weigh 2^(c w) in every plan at
// window c, so a plan of fewer windows adds into the first windows of its size's set, and the set
// is combined at the most windows any plan added into it. Plain C++: the host tests check the
// bookkeeping against the sum it must give.
#pragma once

#include <algorithm>

namespace cuzk::cuda {

struct SumSets {
  static constexpr int kCount = 4;
  int c[kCount] = {};     // each set's window (0: unused yet)
  int nwin[kCount] = {};  // the most windows a plan added into it

  // Set 0 at window c0 over nwin0 windows (a full chunk's, which the workspace was priced at); the
  // others unused.
  void reset(int c0, int nwin0) {
    std::fill(c, c + kCount, 0);
    std::fill(nwin, nwin + kCount, 0);
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
