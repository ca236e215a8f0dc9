// Pippenger's bucket method for cuzk::cpu::msm (see msm.hpp).
//
// Steps: (1) classify scalars in parallel: 0 (or an infinity point) is skipped, 1 goes to a plain
// sum, the rest to the bucket method; (2) split the rest into parts x windows tasks; each task
// accumulates its window's signed (Booth) digits into 2^(c-1) buckets and folds them with a
// running sum; (3) combine windows by doubling on the calling thread.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/msm.hpp"
#include "curve/ops.hpp"

namespace cuzk::cpu {
namespace msm_detail {

using curve::Affine;
using curve::Xyzz;

inline void load_scalar(const uint8_t* p, uint64_t* k) { std::memcpy(k, p, 32); }

// Booth digit of window j (c bits wide) of k, in [-2^(c-1), 2^(c-1)]: read bits jc-1 .. jc+c-1
// (bit -1 = 0); the sum over windows of d_j 2^(jc) telescopes back to k as long as the bit just
// below the top window's end is zero, which the window count guarantees.
inline int32_t booth_digit(const uint64_t* k, unsigned j, unsigned c) {
  int lo = (int)(j * c) - 1;
  uint64_t t;
  if (lo < 0) {
    t = k[0] << 1;
  } else {
    unsigned limb = (unsigned)lo >> 6, sh = (unsigned)lo & 63;
    t = limb < 4 ? k[limb] >> sh : 0;
    if (sh + c + 1 > 64 && limb + 1 < 4) t |= k[limb + 1] << (64 - sh);
  }
  t &= (1ULL << (c + 1)) - 1;
  return (int32_t)((t >> 1) + (t & 1)) - (int32_t)((t >> c) << c);
}

// Number of windows of width c that cover a `bits`-bit scalar with Booth digits.
inline unsigned window_count(unsigned bits, unsigned c) { return bits / c + 1; }

template <class F>
inline Affine<F> load_point(const uint8_t* p) { return curve::load_key_point<F>(p); }

template <class F>
inline bool point_bytes_zero(const uint8_t* p) {
  uint64_t acc = 0;
  for (size_t i = 0; i < 2 * F::BYTES; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc |= w;
  }
  return acc == 0;
}

// Window width minimising windows * (points + reduction work of 2^(c-1) buckets); a bucket costs
// about two additions in the running sum.
inline unsigned choose_window(size_t n, unsigned bits) {
  unsigned best_c = 1;
  double best = 1e300;
  for (unsigned c = 2; c <= 20; c++) {
    double cost = (double)window_count(bits, c) * ((double)n + 2.0 * (double)(1u << (c - 1)));
    if (cost < best) { best = cost; best_c = c; }
  }
  return best_c;
}

}  // namespace msm_detail

template <class C, class F>
curve::Xyzz<F> msm(ThreadPool& pool, const uint8_t* points, const uint8_t* scalars, size_t n) {
  using namespace msm_detail;
  using P = Xyzz<F>;
  constexpr size_t PB = 2 * F::BYTES;
  constexpr unsigned BITS = C::Fr::Params::BITS;
  if (n == 0) return P::infinity();

  // (1) classify
  const unsigned threads = pool.size();
  const size_t n_chunks = std::min<size_t>(n, (size_t)threads * 8);
  const size_t chunk = (n + n_chunks - 1) / n_chunks;
  std::vector<std::vector<uint32_t>> rest_parts(n_chunks);
  std::vector<P> ones_sum(n_chunks, P::infinity());
  pool.parallel_for(n_chunks, [&](size_t t) {
    size_t b = t * chunk, e = std::min(n, b + chunk);
    auto& rest = rest_parts[t];
    P acc = P::infinity();
    for (size_t i = b; i < e; i++) {
      uint64_t k[4];
      load_scalar(scalars + 32 * i, k);
      if ((k[0] | k[1] | k[2] | k[3]) == 0) continue;
      const uint8_t* pp = points + PB * i;
      if (point_bytes_zero<F>(pp)) continue;
      if ((k[0] == 1) & ((k[1] | k[2] | k[3]) == 0)) {
        acc = acc.add_affine(load_point<F>(pp));
      } else {
        rest.push_back((uint32_t)i);
      }
    }
    ones_sum[t] = acc;
  });
  P result = P::infinity();
  for (auto& s : ones_sum) result = result.add(s);

  std::vector<uint32_t> rest;
  {
    size_t total = 0;
    for (auto& r : rest_parts) total += r.size();
    rest.reserve(total);
    for (auto& r : rest_parts) rest.insert(rest.end(), r.begin(), r.end());
  }
  const size_t m = rest.size();
  if (m == 0) return result;

  // (2) buckets: tasks = parts x windows, enough tasks to keep every thread busy.
  const unsigned c = choose_window(m, BITS);
  const unsigned nw = window_count(BITS, c);
  size_t parts = 1;
  while (parts * nw < 2 * (size_t)threads && m / (parts * 2) >= 256) parts *= 2;
  const size_t part_len = (m + parts - 1) / parts;
  const size_t n_buckets = (size_t)1 << (c - 1);
  std::vector<P> window_sums(parts * nw, P::infinity());
  pool.parallel_for(parts * nw, [&](size_t task) {
    // Largest windows first would not help: every window costs the same except the top one.
    size_t part = task / nw;
    unsigned j = (unsigned)(task % nw);
    size_t b = part * part_len, e = std::min(m, b + part_len);
    std::vector<P> buckets(n_buckets, P::infinity());
    for (size_t i = b; i < e; i++) {
      uint32_t idx = rest[i];
      uint64_t k[4];
      load_scalar(scalars + 32 * (size_t)idx, k);
      int32_t d = booth_digit(k, j, c);
      if (d == 0) continue;
      Affine<F> pt = load_point<F>(points + PB * (size_t)idx);
      if (d > 0) buckets[d - 1] = buckets[d - 1].add_affine(pt);
      else buckets[-d - 1] = buckets[-d - 1].add_affine(-pt);
    }
    P running = P::infinity(), sum = P::infinity();
    for (size_t bi = n_buckets; bi-- > 0;) {
      running = running.add(buckets[bi]);
      sum = sum.add(running);
    }
    window_sums[task] = sum;
  });

  // (3) combine windows (top down) and parts
  for (size_t part = 0; part < parts; part++) {
    P acc = P::infinity();
    for (unsigned j = nw; j-- > 0;) {
      for (unsigned s = 0; s < c; s++) acc = acc.dbl();
      acc = acc.add(window_sums[part * nw + j]);
    }
    result = result.add(acc);
  }
  return result;
}

}  // namespace cuzk::cpu
