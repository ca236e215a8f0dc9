// Fixed-base scalar multiplication k_i * P for many scalars and one base P (a generator): every
// point of a .ptau is a multiple of G1 or G2, so one precomputed table per group serves the whole
// file. Signed windows of w bits: table row j holds k * 2^(w j) * P for k = 1..2^(w-1), so a
// scalar costs ceil((bits+1)/w) mixed additions and no doublings (generic scalar_mul: ~bits
// doublings plus ~bits additions).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "curve/ops.hpp"
#include "util/thread_pool.hpp"

namespace ptau_dev {

using cuzk::curve::Affine;
using cuzk::curve::Xyzz;

template <class F>
class FixedBase {
 public:
  // `expected_muls` picks the window: bigger tables pay off only over many scalars.
  FixedBase(const Affine<F>& base, int scalar_bits, size_t expected_muls, cuzk::ThreadPool& pool) {
    double best = 0;
    for (int w = 2; w <= 16; w++) {
      int windows = (scalar_bits + w) / w;  // ceil((bits+1)/w): room for the last carry
      // A table entry (XYZZ addition, then its share of a batch conversion) costs ~3 times a
      // scalar's batched affine addition; 4 measured slightly better (smaller tables, less memory).
      double cost = (double)windows * (4.0 * (double)(1u << (w - 1)) + (double)expected_muls);
      if (w == 2 || cost < best) { best = cost; w_ = w; }
    }
    windows_ = (scalar_bits + w_) / w_;
    half_ = (size_t)1 << (w_ - 1);
    table_.resize((size_t)windows_ * half_);

    std::vector<Affine<F>> row_base(windows_);
    Xyzz<F> b = Xyzz<F>::from_affine(base);
    for (int j = 0; j < windows_; j++) {
      row_base[j] = b.to_affine();
      for (int i = 0; i < w_; i++) b = b.dbl();
    }
    pool.parallel_for(windows_, [&](size_t j) {
      std::vector<Xyzz<F>> row(half_);
      Xyzz<F> acc = Xyzz<F>::infinity();
      for (size_t k = 0; k < half_; k++) {
        acc = acc.add_affine(row_base[j]);
        row[k] = acc;
      }
      cuzk::curve::to_affine_batch(row.data(), table_.data() + j * half_, half_);
    });
  }

  int window_bits() const { return w_; }

  // out[i] = scalars[i] * P in key encoding (Montgomery LE affine), for Fr scalars in Montgomery
  // form. Each task takes a chunk of scalars through the windows together, in affine
  // coordinates: the chunk's additions of one window share a single inversion (Montgomery's
  // trick), so an addition costs about 6 multiplications instead of XYZZ's 10, and the results
  // come out affine with no final conversion.
  template <class Fr>
  void mul_many(const Fr* scalars, size_t n, uint8_t* out, cuzk::ThreadPool& pool) const {
    constexpr size_t kChunk = 1024;
    const size_t point_bytes = 2 * F::BYTES;
    const size_t chunks = (n + kChunk - 1) / kChunk;
    pool.parallel_for(chunks, [&](size_t c) {
      const size_t begin = c * kChunk, cnt = std::min(kChunk, n - begin);
      std::vector<int32_t> digits(cnt * windows_);
      for (size_t i = 0; i < cnt; i++) {
        uint64_t k[Fr::N];
        scalars[begin + i].to_std_limbs(k);
        recode(k, Fr::N, &digits[i * windows_]);
      }
      std::vector<Affine<F>> acc(cnt, Affine<F>::infinity()), addend(cnt);
      std::vector<F> den(cnt), scratch(cnt);
      std::vector<uint32_t> who(cnt);
      for (int j = 0; j < windows_; j++) {
        size_t m = 0;
        for (size_t i = 0; i < cnt; i++) {
          int32_t d = digits[i * windows_ + j];
          if (d == 0) continue;
          const Affine<F>& t = table_[j * half_ + (size_t)(d > 0 ? d : -d) - 1];
          Affine<F> q = d > 0 ? t : -t;
          if (acc[i].is_infinity()) { acc[i] = q; continue; }
          F dx = q.x - acc[i].x;
          if (dx.is_zero()) {  // acc = +-q: doubling or cancellation, left to the general formulas
            acc[i] = Xyzz<F>::from_affine(acc[i]).add_affine(q).to_affine();
            continue;
          }
          den[m] = dx;
          addend[m] = q;
          who[m++] = (uint32_t)i;
        }
        cuzk::field::batch_inverse(den.data(), m, scratch.data());
        for (size_t k = 0; k < m; k++) {
          Affine<F>& a = acc[who[k]];
          const Affine<F>& q = addend[k];
          F lambda = (q.y - a.y) * den[k];
          F x3 = lambda.sqr() - a.x - q.x;
          a.y = lambda * (a.x - x3) - a.y;
          a.x = x3;
        }
      }
      for (size_t i = 0; i < cnt; i++) cuzk::curve::store_key_point(acc[i], out + (begin + i) * point_bytes);
    });
  }

  // One product, for a scalar in standard-form little-endian limbs below 2^scalar_bits.
  Xyzz<F> mul(const uint64_t* k, int limbs) const {
    std::vector<int32_t> digits(windows_);
    recode(k, limbs, digits.data());
    Xyzz<F> acc = Xyzz<F>::infinity();
    for (int j = 0; j < windows_; j++) {
      int32_t d = digits[j];
      if (d > 0) acc = acc.add_affine(table_[j * half_ + (size_t)d - 1]);
      else if (d < 0) acc = acc.add_affine(-table_[j * half_ + (size_t)(-d) - 1]);
    }
    return acc;
  }

 private:
  // Signed base-2^w digits in [-(2^(w-1)-1), 2^(w-1)], least significant first. The extra
  // window (ceil((bits+1)/w)) absorbs the final carry.
  void recode(const uint64_t* k, int limbs, int32_t* digits) const {
    const uint64_t mask = ((uint64_t)1 << w_) - 1;
    uint64_t carry = 0;
    for (int j = 0; j < windows_; j++) {
      int pos = j * w_, limb = pos / 64, off = pos % 64;
      uint64_t bits = 0;
      if (limb < limbs) {
        bits = k[limb] >> off;
        if (off + w_ > 64 && limb + 1 < limbs) bits |= k[limb + 1] << (64 - off);
      }
      int64_t d = (int64_t)((bits & mask) + carry);
      carry = 0;
      if (d > (int64_t)half_) { d -= (int64_t)1 << w_; carry = 1; }
      digits[j] = (int32_t)d;
    }
  }

  int w_ = 2;
  int windows_ = 0;
  size_t half_ = 0;
  std::vector<Affine<F>> table_;  // windows_ rows of half_ entries
};

}  // namespace ptau_dev
