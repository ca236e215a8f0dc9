// Pippenger's bucket method for cuzk::cpu::msm (see msm.hpp).
//
// Steps: (1) classify scalars in parallel: 0 (or an infinity point) is skipped, 1 goes to a plain
// sum, the rest to the bucket method; (2) split the rest into parts x window-groups tasks; each
// task sorts its points by signed (Booth) digit into 2^(c-1) buckets per window, sums every
// bucket with batched affine additions, and folds the buckets with a running sum in XYZZ;
// (3) combine windows by doubling on the calling thread.
// Two backends do the additions: ScalarBackend (AffineTree below, 64-bit asm field) everywhere,
// IfmaBackend (msm_ifma.hpp, 8 lanes of AVX-512 IFMA) where the CPU has it.
// Not built (estimated only): GLV. With batched affine additions the per-point work dominates,
// and GLV keeps it (half the windows, twice the points); it would only halve the bucket folds
// (~7 % of the time) and add a converted copy of every point.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cpu/msm.hpp"
#include "cpu/msm_ifma.hpp"
#include "curve/ops.hpp"
#include "util/scratch.hpp"

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

// A grow-only buffer per thread and per use: the MSM's transient arrays (several MB) are kept
// between calls, because first-touch page faults cost ~10 us each on the VMs this runs on and
// re-allocating them per call dominated small MSMs.
template <class T, int Slot>
T* thread_buffer(size_t n) {
  thread_local ScratchArray<T> buf;
  return buf.reserve(n);
}

// The calling thread's tree (its buffers are kept between calls, like thread_buffer's).
template <class Tree>
Tree& thread_tree() {
  thread_local Tree tree;
  return tree;
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
  // Two buffers of n points (left uninitialised), swapped each round.
  ScratchArray<A> buf0, buf1;
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
    lists = buf0.reserve(n);
    next = buf1.reserve(n);
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

// Where the bucket method takes its points from and what it sums them with. ScalarBackend reads
// the key bytes directly and adds with AffineTree; IfmaBackend first converts the points once
// into 52-bit-limb form (IfmaPoint) and adds 8 pairs at a time.
template <class F>
struct ScalarBackend {
  using Pt = Affine<F>;
  using Tree = AffineTree<F>;
  static constexpr bool kRefs = false;  // buckets hold copies of the points
  const uint8_t* points;
  const uint32_t* idx;  // point index of each input
  ScalarBackend(const uint8_t* p, const uint32_t* i) : points(p), idx(i) {}
  void prepare(ThreadPool&, size_t) {}
  Pt get(size_t i) const { return load_point<F>(points + 2 * F::BYTES * (size_t)idx[i]); }
  static void negate(Pt& p) { p.y = -p.y; }
  static bool is_inf(const Pt& p) { return p.is_infinity(); }
  static void to_affine(const Pt* in, Affine<F>* out, size_t n) { std::copy(in, in + n, out); }
};

#ifdef CUZK_HAVE_IFMA
template <class F>
struct IfmaBackend {
  using Pt = ifma::IfmaPoint<F>;
  using Tree = ifma::IfmaTree<F>;
  static constexpr bool kRefs = true;  // buckets hold references into `converted`
  const uint8_t* points;
  const uint32_t* idx;
  Pt* converted = nullptr;  // a buffer of the thread that calls prepare()
  IfmaBackend(const uint8_t* p, const uint32_t* i) : points(p), idx(i) {}
  void prepare(ThreadPool& pool, size_t m) {
    Pt* out = converted = thread_buffer<Pt, 0>(m);
    pool.parallel_range(m, [&](size_t b, size_t e) { ifma::convert_points<F>(points, idx + b, e - b, out + b); }, 1024);
  }
  const Pt& get(size_t i) const { return converted[i]; }
  static void negate(Pt& p) { ifma::negate_y<F>(p); }
  static bool is_inf(const Pt& p) { return ifma::is_infinity_words(p.xy, 2 * Pt::WP); }
  static void to_affine(const Pt* in, Affine<F>* out, size_t n) { ifma::to_affine_points<F>(in, out, n); }
};
#endif

// Sum of the backend's first `count` points (the scalar-1 list) as one affine point.
template <class F, class Backend>
Affine<F> list_sum(Backend& be, size_t count) {
  auto& tree = thread_tree<typename Backend::Tree>();
  if constexpr (Backend::kRefs) {
    std::vector<uint32_t> refs(count);
    for (size_t i = 0; i < count; i++) refs[i] = (uint32_t)i;
    uint32_t cnt = (uint32_t)count;
    tree.run_from(be.converted, refs.data(), &cnt, 1, nullptr, nullptr);
    typename Backend::Pt s;
    tree.resolve(tree.cur[0], s);
    Affine<F> a;
    Backend::to_affine(&s, &a, 1);
    return a;
  } else {
    tree.reserve(count);
    for (size_t i = 0; i < count; i++) tree.lists[i] = be.get(i);
    tree.len.assign(1, (uint32_t)count);
    tree.run();
    Affine<F> a;
    Backend::to_affine(tree.lists, &a, 1);
    return a;
  }
}

// Windows [j0, j1) of one part: sort by digit into buckets (one set of buckets per window), sum
// all the buckets of these windows in one tree (batches shared between windows: fewer
// inversions), fold each window's buckets. out[j - j0] = the window's sum.
template <class F, class Backend>
void window_sums(const Backend& be, const uint8_t* scalars, const uint32_t* idx, size_t b, size_t e, unsigned j0,
                 unsigned j1, unsigned c, Xyzz<F>* out) {
  using Pt = typename Backend::Pt;
  const size_t n_buckets = (size_t)1 << (c - 1);
  const unsigned k = j1 - j0;
  const size_t n_lists = k * n_buckets;
  // Points are taken in slices so that memory stays bounded; bucket sums carry over between
  // slices (as the first entry of their bucket, or as a carried point).
  const size_t slice = std::max<size_t>(4 * n_buckets, Backend::kRefs ? (1 << 18) / k : 1 << 15);
  // all kept per thread between calls (see thread_buffer)
  auto& tree = thread_tree<typename Backend::Tree>();
  thread_local std::vector<Pt> bucket;
  thread_local std::vector<uint8_t> has;
  thread_local std::vector<int32_t> digit;
  thread_local std::vector<uint32_t> start, cnt, refs;
  bucket.resize(n_lists);
  has.assign(n_lists, 0);
  start.resize(n_lists);
  cnt.resize(n_lists);
  for (size_t sb = b; sb < e; sb += slice) {
    size_t se = std::min(e, sb + slice);
    digit.resize((se - sb) * k);
    for (size_t li = 0; li < n_lists; li++) cnt[li] = Backend::kRefs ? 0 : has[li];
    for (size_t i = sb; i < se; i++) {
      uint64_t sc[4];
      load_scalar(scalars + 32 * (size_t)idx[i], sc);
      for (unsigned w = 0; w < k; w++) {
        int32_t d = booth_digit(sc, j0 + w, c);
        digit[(i - sb) * k + w] = d;
        if (d != 0) cnt[w * n_buckets + (d < 0 ? -d : d) - 1]++;
      }
    }
    uint32_t total = 0;
    for (size_t li = 0; li < n_lists; li++) { start[li] = total; total += cnt[li]; }
    if constexpr (Backend::kRefs) {
      refs.resize(total);
      for (size_t i = sb; i < se; i++)
        for (unsigned w = 0; w < k; w++) {
          int32_t d = digit[(i - sb) * k + w];
          if (d == 0) continue;
          refs[start[w * n_buckets + (d < 0 ? -d : d) - 1]++] = (uint32_t)i | (d < 0 ? ifma::kNegBit : 0);
        }
      tree.run_from(be.converted, refs.data(), cnt.data(), n_lists, bucket.data(), has.data());
    } else {
      tree.reserve(total);
      for (size_t li = 0; li < n_lists; li++)
        if (has[li]) tree.lists[start[li]++] = bucket[li];
      for (size_t i = sb; i < se; i++)
        for (unsigned w = 0; w < k; w++) {
          int32_t d = digit[(i - sb) * k + w];
          if (d == 0) continue;
          Pt& slot = tree.lists[start[w * n_buckets + (d < 0 ? -d : d) - 1]++];
          slot = be.get(i);
          if (d < 0) Backend::negate(slot);
        }
      tree.len.assign(cnt.begin(), cnt.end());
      tree.run();
    }
    size_t pos = 0;
    for (size_t li = 0; li < n_lists; li++) {
      has[li] = 0;
      if (tree.len[li]) {
        if constexpr (Backend::kRefs) tree.resolve(tree.cur[pos++], bucket[li]);
        else bucket[li] = tree.lists[pos++];
        has[li] = !Backend::is_inf(bucket[li]);
      }
    }
  }
  thread_local std::vector<Affine<F>> aff;
  for (unsigned w = 0; w < k; w++) {
    const Pt* bw = bucket.data() + w * n_buckets;
    const uint8_t* hw = has.data() + w * n_buckets;
#ifdef CUZK_HAVE_IFMA
    if constexpr (Backend::kRefs)
      if (n_buckets >= 8) {
        out[w] = ifma::bucket_fold<F>(bw, hw, n_buckets);
        continue;
      }
#endif
    aff.resize(n_buckets);
    Backend::to_affine(bw, aff.data(), n_buckets);
    Xyzz<F> running = Xyzz<F>::infinity(), sum = Xyzz<F>::infinity();
    for (size_t bi = n_buckets; bi-- > 0;) {
      if (hw[bi]) running = running.add_affine(aff[bi]);
      sum = sum.add(running);
    }
    out[w] = sum;
  }
}

// Everything after the classification, for one backend.
template <class C, class F, class Backend>
Xyzz<F> msm_with(ThreadPool& pool, const uint8_t* points, const uint8_t* scalars, const std::vector<uint32_t>& ones,
                 const std::vector<uint32_t>& rest) {
  using P = Xyzz<F>;
  constexpr unsigned BITS = C::Fr::Params::BITS;
  const unsigned threads = pool.size();
  P result = P::infinity();

  // scalar 1: a plain sum, by the same batched additions as a bucket, split over the threads
  if (!ones.empty()) {
    const size_t parts = std::min<size_t>(threads, (ones.size() + 1023) / 1024);
    const size_t len = (ones.size() + parts - 1) / parts;
    std::vector<P> sums(parts, P::infinity());
    pool.parallel_for(parts, [&](size_t t) {
      size_t b = t * len, e = std::min(ones.size(), b + len);
      if (b >= e) return;
      Backend be(points, ones.data() + b);
      be.prepare(pool, e - b);
      sums[t] = P::from_affine(list_sum<F>(be, e - b));
    });
    for (auto& s : sums) result = result.add(s);
  }

  const size_t m = rest.size();
  if (m == 0) return result;
  Backend be(points, rest.data());
  be.prepare(pool, m);

  // buckets: tasks = parts x windows, enough tasks to keep every thread busy
  const unsigned c = choose_window(m, BITS);
  const unsigned nw = window_count(BITS, c);
  size_t parts = 1;
  while (parts * nw < 2 * (size_t)threads && m / (parts * 2) >= 256) parts *= 2;
  const size_t part_len = (m + parts - 1) / parts;
  // Windows per task: the vector path shares its inversion batches between the windows of a
  // task, so it takes several, while leaving about two tasks per thread for balance.
  unsigned wpt = 1;
  if (Backend::kRefs) {
    // ... but no more than fits the caches: beyond ~32k references per task it got slower
    wpt = std::max<unsigned>(1, (unsigned)(parts * nw / (2 * threads)));
    while (wpt > 1 && (size_t)wpt * part_len > (1u << 15)) wpt--;
  }
  const unsigned groups = (nw + wpt - 1) / wpt;
  std::vector<P> sums(parts * nw, P::infinity());
  pool.parallel_for(parts * groups, [&](size_t task) {
    size_t part = task / groups;
    unsigned j0 = (unsigned)(task % groups) * wpt, j1 = std::min(nw, j0 + wpt);
    size_t b = part * part_len, e = std::min(m, b + part_len);
    if (b < e) window_sums<F>(be, scalars, rest.data(), b, e, j0, j1, c, sums.data() + part * nw + j0);
  });

  // combine windows (top down) and parts
  for (size_t part = 0; part < parts; part++) {
    P acc = P::infinity();
    for (unsigned j = nw; j-- > 0;) {
      for (unsigned s = 0; s < c; s++) acc = acc.dbl();
      acc = acc.add(sums[part * nw + j]);
    }
    result = result.add(acc);
  }
  return result;
}

}  // namespace msm_detail

template <class C, class F>
curve::Xyzz<F> msm(ThreadPool& pool, const uint8_t* points, const uint8_t* scalars, size_t n) {
  using namespace msm_detail;
  constexpr size_t PB = 2 * F::BYTES;
  if (n == 0) return Xyzz<F>::infinity();

  // classify: 0 (or an infinity point) is skipped, 1 goes to a plain sum, the rest to buckets
  const unsigned threads = pool.size();
  const size_t n_chunks = std::min<size_t>(n, (size_t)threads * 8);
  const size_t chunk = (n + n_chunks - 1) / n_chunks;
  std::vector<std::vector<uint32_t>> rest_parts(n_chunks), ones_parts(n_chunks);
  pool.parallel_for(n_chunks, [&](size_t t) {
    size_t b = t * chunk, e = std::min(n, b + chunk);
    for (size_t i = b; i < e; i++) {
      uint64_t k[4];
      load_scalar(scalars + 32 * i, k);
      if ((k[0] | k[1] | k[2] | k[3]) == 0) continue;
      if (point_bytes_zero<F>(points + PB * i)) continue;
      if ((k[0] == 1) & ((k[1] | k[2] | k[3]) == 0)) ones_parts[t].push_back((uint32_t)i);
      else rest_parts[t].push_back((uint32_t)i);
    }
  });
  auto concat = [](std::vector<std::vector<uint32_t>>& parts) {
    std::vector<uint32_t> all;
    size_t total = 0;
    for (auto& r : parts) total += r.size();
    all.reserve(total);
    for (auto& r : parts) all.insert(all.end(), r.begin(), r.end());
    return all;
  };
  std::vector<uint32_t> ones = concat(ones_parts), rest = concat(rest_parts);
#ifdef CUZK_HAVE_IFMA
  if (simd_active()) return msm_with<C, F, IfmaBackend<F>>(pool, points, scalars, ones, rest);
#endif
  return msm_with<C, F, ScalarBackend<F>>(pool, points, scalars, ones, rest);
}

}  // namespace cuzk::cpu
