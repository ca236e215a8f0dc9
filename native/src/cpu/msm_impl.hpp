// Pippenger's bucket method for cuzk::cpu::msm (see msm.hpp).
//
// Steps: (1) classify scalars in parallel: 0 (or an infinity point) is skipped, 1 goes to a plain
// sum, the rest to the bucket method; (2) split the rest into parts x windows tasks; each task
// sorts its points by signed (Booth) digit into 2^(c-1) buckets, sums every bucket with batched
// affine additions (AffineTree), and folds the buckets with a running sum in XYZZ; (3) combine
// windows by doubling on the calling thread.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
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

// Sums many independent pairs of affine points with one field inversion per batch (Montgomery's
// trick): about 5M + 1S per addition instead of 8M + 2S for a mixed XYZZ addition. `lists` holds
// point lists back to back (len[i] points each); run() halves every list per round (pairs within
// a list, an odd last point is carried) until each holds at most one point. Infinity is (0, 0);
// doublings and cancellations are detected per pair.
template <class F>
struct AffineTree {
  using A = Affine<F>;
  // Pairs per inversion: the batch's denominators and prefix products stay within ~128 KB.
  static constexpr size_t kBatch = std::max<size_t>(512, 65536 / sizeof(F));
  // Two buffers of `cap` points (left uninitialised), swapped each round.
  std::unique_ptr<A[]> buf0, buf1;
  size_t cap = 0;
  A* lists = nullptr;
  A* next = nullptr;
  std::vector<uint32_t> len;
  // one batch of pending pairs
  std::vector<uint32_t> in_pos = std::vector<uint32_t>(kBatch), out_pos = std::vector<uint32_t>(kBatch);
  std::vector<uint8_t> tag = std::vector<uint8_t>(kBatch);
  std::vector<F> den = std::vector<F>(kBatch), pre = std::vector<F>(kBatch);
  size_t pending = 0;

  enum : uint8_t { kAdd, kDbl, kCopyP, kCopyQ, kInf };

  void flush() {
    if (pending == 0) return;
    F acc = F::one();
    for (size_t t = 0; t < pending; t++) {
      const A& P = lists[in_pos[t]];
      const A& Q = lists[in_pos[t] + 1];
      uint8_t k;
      F d;
      if (P.is_infinity()) k = kCopyQ;
      else if (Q.is_infinity()) k = kCopyP;
      else {
        d = Q.x - P.x;
        if (!d.is_zero()) k = kAdd;
        else if (P.y == Q.y) { k = kDbl; d = P.y.dbl(); }
        else k = kInf;
      }
      tag[t] = k;
      pre[t] = acc;
      if (k <= kDbl) { den[t] = d; acc = acc * d; }
    }
    F inv = acc.inverse();
    for (size_t t = pending; t-- > 0;) {
      const A& P = lists[in_pos[t]];
      const A& Q = lists[in_pos[t] + 1];
      A& R = next[out_pos[t]];
      switch (tag[t]) {
        case kCopyP: R = P; break;
        case kCopyQ: R = Q; break;
        case kInf: R = A::infinity(); break;
        default: {
          F d_inv = inv * pre[t];
          inv = inv * den[t];
          F lambda;
          if (tag[t] == kAdd) lambda = (Q.y - P.y) * d_inv;
          else { F xx = P.x.sqr(); lambda = (xx.dbl() + xx) * d_inv; }
          F x3 = lambda.sqr() - P.x - Q.x;
          R.y = lambda * (P.x - x3) - P.y;
          R.x = x3;
        }
      }
    }
    pending = 0;
  }

  // Room for n points in `lists` (contents not kept).
  void reserve(size_t n) {
    if (n > cap) {
      buf0.reset(new A[n]);
      buf1.reset(new A[n]);
      cap = n;
    }
    lists = buf0.get();
    next = buf1.get();
  }

  void run() {
    for (;;) {
      bool more = false;
      for (uint32_t l : len) more |= l > 1;
      if (!more) return;
      size_t ip = 0, op = 0;
      for (uint32_t& l : len) {
        for (uint32_t k = 0; k + 1 < l; k += 2) {
          in_pos[pending] = (uint32_t)(ip + k);
          out_pos[pending] = (uint32_t)(op + k / 2);
          if (++pending == kBatch) flush();
        }
        if (l & 1) next[op + l / 2] = lists[ip + l - 1];
        ip += l;
        op += (l + 1) / 2;
        l = (l + 1) / 2;
      }
      flush();
      std::swap(lists, next);
    }
  }
};

// Estimated cost of one window in field multiplications: batch-affine additions for the points
// that land in an occupied bucket, and about two XYZZ additions per bucket in the running sum.
// G2 (Fp2) operations cost about 3x, uniformly, so the same model serves both groups.
inline unsigned choose_window(size_t n, unsigned bits) {
  unsigned best_c = 1;
  double best = 1e300;
  for (unsigned c = 2; c <= 20; c++) {
    double buckets = (double)(1u << (c - 1));
    double occupied = buckets * (1.0 - std::exp(-(double)n / buckets));
    double cost = (double)window_count(bits, c) * (((double)n - occupied) * 7.0 + buckets * 24.0);
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
    std::vector<uint32_t> ones;
    for (size_t i = b; i < e; i++) {
      uint64_t k[4];
      load_scalar(scalars + 32 * i, k);
      if ((k[0] | k[1] | k[2] | k[3]) == 0) continue;
      if (point_bytes_zero<F>(points + PB * i)) continue;
      if ((k[0] == 1) & ((k[1] | k[2] | k[3]) == 0)) ones.push_back((uint32_t)i);
      else rest.push_back((uint32_t)i);
    }
    // scalar 1: a plain sum, by the same batched affine additions as a bucket
    if (!ones.empty()) {
      AffineTree<F> tree;
      tree.reserve(ones.size());
      for (size_t k = 0; k < ones.size(); k++) tree.lists[k] = load_point<F>(points + PB * (size_t)ones[k]);
      tree.len.assign(1, (uint32_t)ones.size());
      tree.run();
      ones_sum[t] = P::from_affine(tree.lists[0]);
    }
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
    size_t part = task / nw;
    unsigned j = (unsigned)(task % nw);
    size_t b = part * part_len, e = std::min(m, b + part_len);
    // Points are taken in slices so that memory stays bounded; bucket sums carry over between
    // slices as the first entry of their bucket.
    const size_t slice = std::max<size_t>(4 * n_buckets, 1 << 15);
    AffineTree<F> tree;
    std::vector<Affine<F>> bucket(n_buckets);
    std::vector<uint8_t> has(n_buckets, 0);
    std::vector<int32_t> digit;
    std::vector<uint32_t> start(n_buckets);
    tree.len.resize(n_buckets);
    for (size_t sb = b; sb < e; sb += slice) {
      size_t se = std::min(e, sb + slice);
      digit.resize(se - sb);
      for (size_t bi = 0; bi < n_buckets; bi++) tree.len[bi] = has[bi];
      for (size_t i = sb; i < se; i++) {
        uint64_t k[4];
        load_scalar(scalars + 32 * (size_t)rest[i], k);
        int32_t d = booth_digit(k, j, c);
        digit[i - sb] = d;
        if (d != 0) tree.len[(d < 0 ? -d : d) - 1]++;
      }
      uint32_t total = 0;
      for (size_t bi = 0; bi < n_buckets; bi++) { start[bi] = total; total += tree.len[bi]; }
      tree.reserve(total);
      for (size_t bi = 0; bi < n_buckets; bi++)
        if (has[bi]) tree.lists[start[bi]++] = bucket[bi];
      for (size_t i = sb; i < se; i++) {
        int32_t d = digit[i - sb];
        if (d == 0) continue;
        Affine<F> pt = load_point<F>(points + PB * (size_t)rest[i]);
        if (d < 0) pt.y = -pt.y;
        tree.lists[start[(d < 0 ? -d : d) - 1]++] = pt;
      }
      tree.run();
      size_t pos = 0;
      for (size_t bi = 0; bi < n_buckets; bi++) {
        has[bi] = 0;
        if (tree.len[bi]) {
          bucket[bi] = tree.lists[pos++];
          has[bi] = !bucket[bi].is_infinity();
        }
      }
    }
    P running = P::infinity(), sum = P::infinity();
    for (size_t bi = n_buckets; bi-- > 0;) {
      if (has[bi]) running = running.add_affine(bucket[bi]);
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
