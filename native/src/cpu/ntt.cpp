// Radix-2 decimation-in-frequency NTT (natural order in, bit-reversed out) followed by a
// bit-reversal permutation. Large-span stages run as parallel passes over the whole array; once
// a butterfly group fits a cache-sized block, each block finishes all its remaining stages alone.
// The inverse reuses the forward twiddles: INTT(y)_k = n^-1 NTT(y)_(-k mod n).
// With AVX-512 IFMA (cpu/simd.hpp) the stages of half-span >= 8 run 8 butterflies at a time: the
// data stays in its 64-bit Montgomery form (x 2^256) and the twiddles are kept in the vector
// unit's form (w 2^260), so their product comes out as x w 2^256 with no conversion.
// GCC 12 reports its own AVX-512 shift intrinsics as maybe uninitialised (see msm_bn254_g1.cpp).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "cpu/ntt.hpp"

#include "cpu/ifma.hpp"
#include "cpu/simd.hpp"
#include "field/root_of_unity.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace cuzk::cpu {
namespace {

using field::root_of_unity;

// Elements per cache block (32 B each): the stages inside a block run without leaving L2.
constexpr uint32_t kBlockLog = 14;

// One table per field, layered by half-span: tw[h + j] = w_(2h)^j for j < h. A layer depends
// only on h, so the table built for the largest size also serves every smaller one. tw52 holds
// the layers h >= 8 again for the vector path: groups of 8 consecutive j, L limb vectors each.
template <class Fr>
struct Twiddles {
  std::vector<Fr> tw;
  std::vector<uint64_t> tw52;
};

template <class Fr>
void build_tw52(ThreadPool& pool, Twiddles<Fr>& t);

template <class Fr>
std::shared_ptr<const Twiddles<Fr>> twiddles(ThreadPool& pool, uint32_t log_n) {
  static std::mutex mu;
  static std::shared_ptr<const Twiddles<Fr>> table;
  std::lock_guard<std::mutex> lock(mu);
  const size_t n = std::max<size_t>(2, (size_t)1 << log_n);
  if (table && table->tw.size() >= n) return table;
  auto t = std::make_shared<Twiddles<Fr>>();
  t->tw.resize(n);
  Fr* tw = t->tw.data();
  const size_t top = n / 2;  // layer h = n/2 holds w_n^j
  const Fr w = root_of_unity<Fr>(log_n < 1 ? 1 : log_n);
  pool.parallel_range(top, [&](size_t b, size_t e) {
    Fr x = w.pow_u64(b);
    for (size_t j = b; j < e; j++) { tw[top + j] = x; x = x * w; }
  }, 1024);
  for (size_t h = top / 2; h >= 1; h /= 2)
    for (size_t j = 0; j < h; j++) tw[h + j] = tw[2 * h + 2 * j];
  if (simd_available()) build_tw52(pool, *t);
  table = t;
  return table;
}

#ifdef CUZK_HAVE_IFMA
namespace vec {
using namespace ifma;

// 8 consecutive 4-word elements <-> 4 vectors of one word each (lane = element).
CUZK_AVX512_INLINE void load8x4(const uint64_t* p, __m512i* w) {
  __m512i z0 = _mm512_loadu_si512(p), z1 = _mm512_loadu_si512(p + 8), z2 = _mm512_loadu_si512(p + 16),
          z3 = _mm512_loadu_si512(p + 24);
  const __m512i ia = _mm512_set_epi64(13, 9, 5, 1, 12, 8, 4, 0), ib = _mm512_set_epi64(15, 11, 7, 3, 14, 10, 6, 2);
  const __m512i lo = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0), hi = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
  __m512i t0 = _mm512_permutex2var_epi64(z0, ia, z1), t1 = _mm512_permutex2var_epi64(z2, ia, z3);
  __m512i t2 = _mm512_permutex2var_epi64(z0, ib, z1), t3 = _mm512_permutex2var_epi64(z2, ib, z3);
  w[0] = _mm512_permutex2var_epi64(t0, lo, t1);
  w[1] = _mm512_permutex2var_epi64(t0, hi, t1);
  w[2] = _mm512_permutex2var_epi64(t2, lo, t3);
  w[3] = _mm512_permutex2var_epi64(t2, hi, t3);
}
CUZK_AVX512_INLINE void store8x4(uint64_t* p, const __m512i* w) {
  const __m512i i0 = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), i1 = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
  const __m512i j0 = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0), j1 = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
  __m512i u0 = _mm512_permutex2var_epi64(w[0], i0, w[1]), u1 = _mm512_permutex2var_epi64(w[2], i0, w[3]);
  __m512i u2 = _mm512_permutex2var_epi64(w[0], i1, w[1]), u3 = _mm512_permutex2var_epi64(w[2], i1, w[3]);
  _mm512_storeu_si512(p, _mm512_permutex2var_epi64(u0, j0, u1));
  _mm512_storeu_si512(p + 8, _mm512_permutex2var_epi64(u0, j1, u1));
  _mm512_storeu_si512(p + 16, _mm512_permutex2var_epi64(u2, j0, u3));
  _mm512_storeu_si512(p + 24, _mm512_permutex2var_epi64(u2, j1, u3));
}

template <class Fr>
CUZK_AVX512_INLINE V1<typename Fr::Params> load8(const Fr* a) {
  __m512i w[4];
  load8x4(a->l, w);
  V1<typename Fr::Params> v;
  unpack52(w, v);
  return v;
}
template <class Fr>
CUZK_AVX512_INLINE void store8(Fr* a, const V1<typename Fr::Params>& v) {
  __m512i w[4];
  pack64v(v, w);
  store8x4(a->l, w);
}

// Layer h (h >= 8) of tw52: h/8 groups of L x 8 words, after the layers below it.
template <class Fr>
inline size_t tw52_offset(size_t h) { return (size_t)Consts<typename Fr::Params>::L * (h - 8); }

template <class Fr>
CUZK_AVX512 void convert_twiddles(const Fr* tw, uint64_t* out, size_t groups) {
  using P = typename Fr::Params;
  using V = V1<P>;
  const V c_in = vconst(Consts<P>::get().c_in, (V*)nullptr);
  for (size_t g = 0; g < groups; g++) {
    V v = vcanon2(vmul(load8(tw + 8 * g), c_in));  // w 2^256 -> w 2^260
    vstore_lanes(v, reinterpret_cast<uint64_t(*)[8]>(out + g * 8 * V::L), 0);
  }
}

// Butterflies t in [t0, t1) of the stage with half-span h (h >= 8, t0 and t1 multiples of 8):
// u, v -> u + v, (u - v) w, two groups of 8 in flight.
template <class Fr>
CUZK_AVX512 void dif_pass(Fr* a, size_t h, const uint64_t* layer, size_t t0, size_t t1) {
  using P = typename Fr::Params;
  using V = V1<P>;
  const auto& k = Consts<P>::get();
  size_t t = t0;
  for (; t + 16 <= t1; t += 16) {
    V u[2], v[2], w[2], d[2], m[2];
    size_t base[2];
    for (int q = 0; q < 2; q++) {
      size_t tq = t + 8 * q, j = tq & (h - 1);
      base[q] = (tq - j) * 2 + j;
      u[q] = load8(a + base[q]);
      v[q] = load8(a + base[q] + h);
      vload_lanes(w[q], reinterpret_cast<const uint64_t(*)[8]>(layer + (j / 8) * 8 * V::L), 0);
      d[q] = vsub(u[q], v[q], k.p);  // (0, 2p)
    }
    vmul_n<P, 2>(m, d, w);
    for (int q = 0; q < 2; q++) {
      store8(a + base[q], vcanon2(vadd(u[q], v[q])));
      store8(a + base[q] + h, vcanon2(m[q]));
    }
  }
  if (t < t1) {  // one group of 8 left
    size_t j = t & (h - 1), base = (t - j) * 2 + j;
    V u = load8(a + base), v = load8(a + base + h), w;
    vload_lanes(w, reinterpret_cast<const uint64_t(*)[8]>(layer + (j / 8) * 8 * V::L), 0);
    store8(a + base, vcanon2(vadd(u, v)));
    store8(a + base + h, vcanon2(vmul(vsub(u, v, k.p), w)));
  }
}

}  // namespace vec

template <class Fr>
void build_tw52(ThreadPool& pool, Twiddles<Fr>& t) {
  const size_t n = t.tw.size();
  if (n < 16) return;
  t.tw52.resize(vec::tw52_offset<Fr>(n));
  for (size_t h = 8; h <= n / 2; h *= 2) {
    const Fr* src = t.tw.data() + h;
    uint64_t* dst = t.tw52.data() + vec::tw52_offset<Fr>(h);
    const size_t L8 = 8 * (size_t)ifma::Consts<typename Fr::Params>::L;
    pool.parallel_range(h / 8, [&](size_t b, size_t e) { vec::convert_twiddles(src + 8 * b, dst + L8 * b, e - b); }, 64);
  }
}
#else
template <class Fr>
void build_tw52(ThreadPool&, Twiddles<Fr>&) {}
#endif

template <class Fr>
inline void butterfly(Fr* a, size_t i, size_t h, const Fr& w) {
  Fr u = a[i], v = a[i + h];
  a[i] = u + v;
  a[i + h] = (u - v) * w;
}

// All stages with half-span < block_len/2... down to 1 on one block of block_len elements.
template <class Fr>
void dif_block(Fr* a, size_t block_len, const Twiddles<Fr>& t, bool simd) {
  const Fr* tw = t.tw.data();
  for (size_t h = block_len / 2; h >= 1; h /= 2) {
#ifdef CUZK_HAVE_IFMA
    if (simd && h >= 8) {
      vec::dif_pass(a, h, t.tw52.data() + vec::tw52_offset<Fr>(h), 0, block_len / 2);
      continue;
    }
#endif
    for (size_t g = 0; g < block_len; g += 2 * h)
      for (size_t j = 0; j < h; j++) butterfly(a, g + j, h, tw[h + j]);
  }
}

inline uint64_t bit_reverse(uint64_t x, uint32_t bits) {
  x = ((x >> 1) & 0x5555555555555555ULL) | ((x & 0x5555555555555555ULL) << 1);
  x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
  x = ((x >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((x & 0x0F0F0F0F0F0F0F0FULL) << 4);
  x = __builtin_bswap64(x);
  return bits == 0 ? 0 : x >> (64 - bits);
}

template <class Fr>
void forward_natural(ThreadPool& pool, Fr* a, uint32_t log_n) {
  const size_t n = (size_t)1 << log_n;
  if (n == 1) return;
  auto table = twiddles<Fr>(pool, log_n);
  const Twiddles<Fr>& t = *table;
  const Fr* tw = t.tw.data();
  const bool simd = simd_active() && !t.tw52.empty();
  // Blocks small enough that every thread gets one (a 2^14 transform in one block ran
  // on one core), but not below 2^10 elements.
  size_t block = std::min<size_t>(n, (size_t)1 << kBlockLog);
  while (block > 1024 && n / block < (size_t)pool.size()) block /= 2;
  for (size_t h = n / 2; h >= block; h /= 2) {
    pool.parallel_range(n / 2, [&](size_t b, size_t e) {
#ifdef CUZK_HAVE_IFMA
      if (simd) {  // chunk ends rounded to groups of 8 (n/2 is a multiple of 8 here)
        vec::dif_pass(a, h, t.tw52.data() + vec::tw52_offset<Fr>(h), b & ~(size_t)7, e & ~(size_t)7);
        return;
      }
#endif
      for (size_t i = b; i < e; i++) {
        size_t j = i & (h - 1), g = (i - j) * 2;
        butterfly(a, g + j, h, tw[h + j]);
      }
    }, 1024);
  }
  pool.parallel_for(n / block, [&](size_t blk) { dif_block(a + blk * block, block, t, simd); });
  pool.parallel_range(n, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; i++) {
      size_t r = bit_reverse(i, log_n);
      if (i < r) std::swap(a[i], a[r]);
    }
  }, 4096);
}

// a_i *= start * step^i, in parallel chunks (each chunk seeds its power with one exponentiation).
template <class Fr>
void scale_geometric(ThreadPool& pool, Fr* a, size_t n, const Fr& start, const Fr& step) {
  pool.parallel_range(n, [&](size_t b, size_t e) {
    Fr x = start * step.pow_u64(b);
    for (size_t i = b; i < e; i++) { a[i] = a[i] * x; x = x * step; }
  }, 4096);
}

// a_k <- a_(-k mod n) * start * step^k: the index reversal that turns a forward transform into an
// inverse one, with the 1/n (and, for the coset inverse, g^-k) folded in. step_inv = step^-1
// walks the factor of the partner index n-k downwards.
template <class Fr>
void reverse_and_scale(ThreadPool& pool, Fr* a, size_t n, const Fr& start, const Fr& step, const Fr& step_inv) {
  pool.parallel_range(n / 2 + 1, [&](size_t b, size_t e) {
    Fr x = start * step.pow_u64(b);      // factor of index k
    Fr y = start * step.pow_u64(n - b);  // factor of index n-k
    for (size_t k = b; k < e; k++) {
      if (k == 0 || 2 * k == n) {
        a[k] = a[k] * x;
      } else {
        Fr lo = a[k], hi = a[n - k];
        a[k] = hi * x;
        a[n - k] = lo * y;
      }
      x = x * step;
      y = y * step_inv;
    }
  }, 4096);
}

}  // namespace

template <class Fr>
void ntt(ThreadPool& pool, Fr* data, uint32_t log_n, NttKind kind) {
  const uint32_t s = (uint32_t)Fr::Params::TWO_ADICITY;
  const bool coset = kind == NttKind::CosetForward || kind == NttKind::CosetInverse;
  if (log_n > s || (coset && log_n + 1 > s) || log_n >= 63) throw std::invalid_argument("ntt: log_n out of range");
  const size_t n = (size_t)1 << log_n;
  switch (kind) {
    case NttKind::Forward:
      forward_natural(pool, data, log_n);
      break;
    case NttKind::CosetForward:
      scale_geometric(pool, data, n, Fr::one(), root_of_unity<Fr>(log_n + 1));
      forward_natural(pool, data, log_n);
      break;
    case NttKind::Inverse:
    case NttKind::CosetInverse: {
      forward_natural(pool, data, log_n);
      Fr n_inv = Fr::from_u64(n).inverse();
      Fr g = coset ? root_of_unity<Fr>(log_n + 1) : Fr::one();
      reverse_and_scale(pool, data, n, n_inv, g.inverse(), g);
      break;
    }
  }
}

template void ntt<field::Bn254Fr>(ThreadPool&, field::Bn254Fr*, uint32_t, NttKind);
template void ntt<field::Bls12381Fr>(ThreadPool&, field::Bls12381Fr*, uint32_t, NttKind);

}  // namespace cuzk::cpu
