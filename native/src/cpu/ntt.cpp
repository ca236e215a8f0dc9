// Radix-2 decimation-in-frequency NTT (natural order in, bit-reversed out) followed by a
// bit-reversal permutation. Large-span stages run as parallel passes over the whole array; once
// a butterfly group fits a cache-sized block, each block finishes all its remaining stages alone.
// The inverse reuses the forward twiddles: INTT(y)_k = n^-1 NTT(y)_(-k mod n).
#include "cpu/ntt.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace cuzk::cpu {
namespace {

// Elements per cache block (32 B each): the stages inside a block run without leaving L2.
constexpr uint32_t kBlockLog = 12;

template <class Fr>
Fr root_of_unity(uint32_t log_n) {
  Fr r = Fr::from_raw(Fr::Params::ROOT_OF_UNITY);
  for (uint32_t i = log_n; i < (uint32_t)Fr::Params::TWO_ADICITY; i++) r = r.sqr();
  return r;
}

// One table per field, layered by half-span: tw[h + j] = w_(2h)^j for j < h. A layer depends
// only on h, so the table built for the largest size also serves every smaller one.
template <class Fr>
std::shared_ptr<const std::vector<Fr>> twiddles(ThreadPool& pool, uint32_t log_n) {
  static std::mutex mu;
  static std::shared_ptr<const std::vector<Fr>> table;
  std::lock_guard<std::mutex> lock(mu);
  const size_t n = std::max<size_t>(2, (size_t)1 << log_n);
  if (table && table->size() >= n) return table;
  auto t = std::make_shared<std::vector<Fr>>(n);
  Fr* tw = t->data();
  const size_t top = n / 2;  // layer h = n/2 holds w_n^j
  const Fr w = root_of_unity<Fr>(log_n < 1 ? 1 : log_n);
  pool.parallel_range(top, [&](size_t b, size_t e) {
    Fr x = w.pow_u64(b);
    for (size_t j = b; j < e; j++) { tw[top + j] = x; x = x * w; }
  }, 1024);
  for (size_t h = top / 2; h >= 1; h /= 2)
    for (size_t j = 0; j < h; j++) tw[h + j] = tw[2 * h + 2 * j];
  table = t;
  return table;
}

template <class Fr>
inline void butterfly(Fr* a, size_t i, size_t h, const Fr& w) {
  Fr u = a[i], v = a[i + h];
  a[i] = u + v;
  a[i + h] = (u - v) * w;
}

// All stages with half-span < block_len/2... down to 1 on one block of block_len elements.
template <class Fr>
void dif_block(Fr* a, size_t block_len, const Fr* tw) {
  for (size_t h = block_len / 2; h >= 1; h /= 2)
    for (size_t g = 0; g < block_len; g += 2 * h)
      for (size_t j = 0; j < h; j++) butterfly(a, g + j, h, tw[h + j]);
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
  const Fr* tw = table->data();
  const size_t block = std::min<size_t>(n, (size_t)1 << kBlockLog);
  for (size_t h = n / 2; h >= block; h /= 2) {
    pool.parallel_range(n / 2, [&](size_t b, size_t e) {
      for (size_t t = b; t < e; t++) {
        size_t j = t & (h - 1), g = (t - j) * 2;
        butterfly(a, g + j, h, tw[h + j]);
      }
    }, 1024);
  }
  pool.parallel_for(n / block, [&](size_t blk) { dif_block(a + blk * block, block, tw); });
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
