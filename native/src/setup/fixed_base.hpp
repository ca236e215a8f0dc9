// Fixed-base scalar multiplication: k_i * P for millions of scalars k_i and one base P (a group
// generator). Every point of a Groth16 key is a multiple of the G1 or the G2 generator, so one
// table per group serves the whole key.
//
// Table: signed windows of w bits; row j holds m * 2^(w*j) * P for m = 1..2^(w-1). A scalar then
// costs one addition per nonzero digit (about 256/w) and no doubling. The additions run in affine
// coordinates over a chunk of scalars at a time: for each window, the chunk's additions share one
// field inversion (Montgomery's batch trick), so an addition costs ~6 products instead of the ~10
// of a projective mixed addition, and the results come out affine, ready to store, with no final
// conversion. tools/ptau_dev (the .ptau writer) uses these tables too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "curve/ops.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::setup {

template <class F>
class FixedBaseTable {
 public:
  using Affine = curve::Affine<F>;
  using Xyzz = curve::Xyzz<F>;

  // Every lookup is a random read of the table, so a table that outgrows the caches costs more in
  // misses than its wider windows save: at 2^18 scalars on BN254 G1, 11-bit windows (1.5 MiB)
  // took 5.4 s and 17-bit ones (67 MiB) 10.2 s.
  static constexpr size_t kMaxTableBytes = 4u << 20;

  // `expected_muls` picks the window width: a wider table only pays off over many scalars.
  FixedBaseTable(const Affine& base, int scalar_bits, size_t expected_muls, ThreadPool& pool) {
    double best = 0;
    for (int w = 2; w <= 18; w++) {
      const int windows = (scalar_bits + w) / w;  // ceil((bits + 1) / w): room for the last carry
      if (w > 2 && (size_t)windows * ((size_t)1 << (w - 1)) * sizeof(Affine) > kMaxTableBytes) break;
      // A table entry (XYZZ additions, then its share of a batch conversion) costs about four
      // batched affine additions of a scalar.
      const double cost = (double)windows * (4.0 * (double)((size_t)1 << (w - 1)) + (double)expected_muls);
      if (w == 2 || cost < best) { best = cost; w_ = w; }
    }
    windows_ = (scalar_bits + w_) / w_;
    half_ = (size_t)1 << (w_ - 1);
    table_.resize((size_t)windows_ * half_);

    std::vector<Affine> row_base(windows_);
    Xyzz b = Xyzz::from_affine(base);
    for (int j = 0; j < windows_; j++) {
      row_base[j] = b.to_affine();
      for (int i = 0; i < w_; i++) b = b.dbl();
    }
    // Rows in parallel, each row in slices so that a wide table also spreads over the threads.
    const size_t slice = std::min<size_t>(half_, 4096);
    const size_t slices_per_row = half_ / slice;
    pool.parallel_for((size_t)windows_ * slices_per_row, [&](size_t task) {
      const size_t j = task / slices_per_row, first = (task % slices_per_row) * slice;
      std::vector<Xyzz> run(slice);
      const Affine& step = row_base[j];
      Xyzz acc = Xyzz::from_affine(step);
      if (first > 0) {  // (first + 1) * step
        uint64_t k = first + 1;
        acc = curve::scalar_mul(step, &k, 1);
      }
      for (size_t m = 0; m < slice; m++) {
        run[m] = acc;
        acc = acc.add_affine(step);
      }
      curve::to_affine_batch(run.data(), table_.data() + j * half_ + first, slice);
    });
  }

  int window_bits() const { return w_; }

  // One product, k in standard-form limbs (for the few header points).
  Affine mul(const uint64_t* k, int limbs) const {
    std::vector<int32_t> digits(windows_);
    recode(k, limbs, digits.data());
    Xyzz acc = Xyzz::infinity();
    for (int j = 0; j < windows_; j++) {
      const int32_t d = digits[j];
      if (d > 0) acc = acc.add_affine(entry(j, d));
      else if (d < 0) acc = acc.add_affine(-entry(j, -d));
    }
    return acc.to_affine();
  }

  // out[i] = scalars[i] * P in key encoding (Montgomery LE affine; zero scalar = all-zero bytes),
  // for n scalars of Fr in Montgomery form. Parallel over chunks of the scalars.
  template <class Fr>
  void mul_many(const Fr* scalars, size_t n, uint8_t* out, ThreadPool& pool) const {
    constexpr size_t kChunk = 1024;
    const size_t point_bytes = 2 * F::BYTES;
    pool.parallel_for((n + kChunk - 1) / kChunk, [&](size_t c) {
      const size_t begin = c * kChunk, cnt = std::min(kChunk, n - begin);
      std::vector<int32_t> digits(cnt * windows_);
      for (size_t i = 0; i < cnt; i++) {
        uint64_t k[Fr::N];
        scalars[begin + i].to_std_limbs(k);
        recode(k, Fr::N, &digits[i * windows_]);
      }
      std::vector<Affine> acc(cnt, Affine::infinity()), addend(cnt);
      std::vector<F> den(cnt), scratch(cnt);
      std::vector<uint32_t> who(cnt);
      for (int j = 0; j < windows_; j++) {
        size_t m = 0;
        for (size_t i = 0; i < cnt; i++) {
          const int32_t d = digits[i * windows_ + j];
          if (d == 0) continue;
          const Affine q = d > 0 ? entry(j, d) : -entry(j, -d);
          if (acc[i].is_infinity()) { acc[i] = q; continue; }
          const F dx = q.x - acc[i].x;
          if (dx.is_zero()) {  // acc = +-q: a doubling or a cancellation, left to the general formulas
            acc[i] = Xyzz::from_affine(acc[i]).add_affine(q).to_affine();
            continue;
          }
          den[m] = dx;
          addend[m] = q;
          who[m++] = (uint32_t)i;
        }
        field::batch_inverse(den.data(), m, scratch.data());
        for (size_t k = 0; k < m; k++) {
          Affine& a = acc[who[k]];
          const Affine& q = addend[k];
          const F lambda = (q.y - a.y) * den[k];
          const F x3 = lambda.sqr() - a.x - q.x;
          a.y = lambda * (a.x - x3) - a.y;
          a.x = x3;
        }
      }
      for (size_t i = 0; i < cnt; i++) curve::store_key_point(acc[i], out + (begin + i) * point_bytes);
    });
  }

 private:
  const Affine& entry(int window, int32_t digit) const { return table_[(size_t)window * half_ + (size_t)digit - 1]; }

  // Signed base-2^w digits in [-(2^(w-1) - 1), 2^(w-1)], least significant first; the extra window
  // absorbs the last carry.
  void recode(const uint64_t* k, int limbs, int32_t* digits) const {
    const uint64_t mask = ((uint64_t)1 << w_) - 1;
    uint64_t carry = 0;
    for (int j = 0; j < windows_; j++) {
      const int pos = j * w_, limb = pos / 64, off = pos % 64;
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
  std::vector<Affine> table_;  // windows_ rows of half_ entries
};

}  // namespace cuzk::setup
