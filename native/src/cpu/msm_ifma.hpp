// The MSM's batched affine additions on 8 lanes of AVX-512 IFMA (see ifma.hpp): the same rounds
// as AffineTree in msm_impl.hpp, on points kept as canonical 52-bit-limb words (IfmaPoint), so
// that every round gathers 8 pairs, runs the affine formulas on all lanes at once and scatters
// the sums. Lanes whose pair is not a plain addition or doubling (an infinity, or P = -Q) are
// settled afterwards by copying, without any arithmetic.
#pragma once

#include "cpu/ifma.hpp"

#ifdef CUZK_HAVE_IFMA

#include <algorithm>
#include <memory>
#include <vector>

#include "curve/point.hpp"
#include "field/fp.hpp"

namespace cuzk::cpu::ifma {

template <class F>
struct IfmaPoint {
  static constexpr int W = VecOf<F>::type::W;
  uint64_t x[W], y[W];  // canonical words; all zero = infinity
};

// y -> p - y on canonical words (0 stays 0), per Fp component.
template <class F>
inline void negate_y(IfmaPoint<F>& pt) {
  using P = typename VecOf<F>::Params;
  constexpr int L = Consts<P>::L;
  const auto& k = Consts<P>::get();
  for (int c = 0; c < IfmaPoint<F>::W; c += L) {
    uint64_t* y = pt.y + c;
    uint64_t acc = 0;
    for (int i = 0; i < L; i++) acc |= y[i];
    if (acc == 0) continue;
    int64_t carry = 0;
    for (int i = 0; i < L; i++) {
      int64_t v = (int64_t)k.p[i] - (int64_t)y[i] + carry;
      y[i] = (uint64_t)v & kMask52;
      carry = v >> 52;
    }
  }
}

// Key-encoded points (Montgomery, 64-bit limbs, R64) -> IfmaPoint, 8 at a time: slice into
// 52-bit words, multiply by R52^2/R64 on the vector unit, reduce to canonical.
template <class F>
CUZK_AVX512 void convert_points(const uint8_t* points, const uint32_t* idx, size_t count, IfmaPoint<F>* out) {
  using P = typename VecOf<F>::Params;
  using V = V1<P>;
  constexpr int L = Consts<P>::L, N = P::LIMBS, W = IfmaPoint<F>::W;
  constexpr int comps = 2 * W / L;  // Fp components per point
  constexpr size_t PB = 2 * F::BYTES;
  const auto& k = Consts<P>::get();
  const V c_in = vconst(k.c_in, (V*)nullptr);
  alignas(64) uint64_t lanes[2 * W][8];
  for (size_t g = 0; g < count; g += 8) {
    size_t nl = std::min<size_t>(8, count - g);
    for (size_t ln = 0; ln < 8; ln++) {
      uint64_t limbs[N], words[L];
      for (int c = 0; c < comps; c++) {
        if (ln < nl) std::memcpy(limbs, points + PB * (size_t)idx[g + ln] + c * 8 * N, 8 * N);
        else std::memset(limbs, 0, sizeof limbs);
        slice52(limbs, N, words, L);
        for (int i = 0; i < L; i++) lanes[c * L + i][ln] = words[i];
      }
    }
    for (int c = 0; c < comps; c++) {
      V v;
      vload_lanes(v, lanes, c * L);
      vstore_lanes(vcanon2(vmul(v, c_in)), lanes, c * L);
    }
    for (size_t ln = 0; ln < nl; ln++) {
      IfmaPoint<F>& o = out[g + ln];
      for (int w = 0; w < W; w++) { o.x[w] = lanes[w][ln]; o.y[w] = lanes[W + w][ln]; }
    }
  }
}

// IfmaPoint -> scalar affine (x R52 times R64 on the vector unit = x R64).
template <class F>
CUZK_AVX512 void to_affine_points(const IfmaPoint<F>* in, curve::Affine<F>* out, size_t count) {
  using P = typename VecOf<F>::Params;
  using V = V1<P>;
  using Fp = field::Fp<P>;
  constexpr int L = Consts<P>::L, N = P::LIMBS, W = IfmaPoint<F>::W;
  constexpr int comps = 2 * W / L;
  const auto& k = Consts<P>::get();
  const V c_out = vconst(k.c_out, (V*)nullptr);
  alignas(64) uint64_t lanes[2 * W][8];
  for (size_t g = 0; g < count; g += 8) {
    size_t nl = std::min<size_t>(8, count - g);
    for (size_t ln = 0; ln < 8; ln++)
      for (int w = 0; w < W; w++) {
        lanes[w][ln] = ln < nl ? in[g + ln].x[w] : 0;
        lanes[W + w][ln] = ln < nl ? in[g + ln].y[w] : 0;
      }
    for (int c = 0; c < comps; c++) {
      V v;
      vload_lanes(v, lanes, c * L);
      vstore_lanes(vcanon2(vmul(v, c_out)), lanes, c * L);
    }
    for (size_t ln = 0; ln < nl; ln++) {
      Fp comp[4];
      for (int c = 0; c < comps; c++) {
        uint64_t words[L], limbs[N];
        for (int i = 0; i < L; i++) words[i] = lanes[c * L + i][ln];
        pack64(words, L, limbs, N);
        comp[c] = Fp::from_raw(limbs);
      }
      if constexpr (comps == 2) out[g + ln] = {comp[0], comp[1]};
      else out[g + ln] = {{comp[0], comp[1]}, {comp[2], comp[3]}};
    }
  }
}

// Pair references: an index into the round's source array, bit 31 set when the point enters
// negated (first round only: a negative digit).
constexpr uint32_t kNegBit = 1u << 31;

template <class F>
struct IfmaTree {
  using V = typename VecOf<F>::type;
  using P = typename VecOf<F>::Params;
  using Pt = IfmaPoint<F>;
  static constexpr int W = V::W;
  // 8-pair groups per inversion: staged coordinates, prefixes and denominators stay ~400 KB.
  static constexpr size_t kGroups = std::max(32, 1024 / W);
  static constexpr size_t kBatch = 8 * kGroups;

  std::unique_ptr<Pt[]> buf0, buf1;
  size_t cap = 0;
  Pt* lists = nullptr;
  Pt* next = nullptr;
  std::vector<uint32_t> len;

  std::vector<uint32_t> pin = std::vector<uint32_t>(kBatch), qin = std::vector<uint32_t>(kBatch);
  std::vector<uint32_t> out_pos = std::vector<uint32_t>(kBatch);
  size_t pending = 0;
  // per group: staged Px, Py, Qx, Qy (4W words x 8 lanes), prefix, denominator, lane masks
  std::unique_ptr<uint64_t[][8]> stage{new uint64_t[kGroups * 4 * W][8]};
  std::unique_ptr<uint64_t[][8]> pre{new uint64_t[kGroups * W][8]};
  std::unique_ptr<uint64_t[][8]> den{new uint64_t[kGroups * W][8]};
  std::vector<uint8_t> special = std::vector<uint8_t>(kGroups), dbl = std::vector<uint8_t>(kGroups);
  std::vector<uint8_t> infp = std::vector<uint8_t>(kGroups), infq = std::vector<uint8_t>(kGroups);

  void reserve(size_t n) {
    if (n > cap) {
      buf0.reset(new Pt[n]);
      buf1.reset(new Pt[n]);
      cap = n;
    }
    lists = buf0.get();
    next = buf1.get();
  }

  // Loads 8 references' points from src into v (x at word 0, y at word W), negating flagged ones.
  CUZK_AVX512_INLINE void load_refs(const Pt* src, const uint32_t* refs, V& x, V& y) {
    const auto& k = Consts<P>::get();
    __m512i r = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i*)refs));
    __mmask8 neg = _mm512_test_epi64_mask(r, _mm512_set1_epi64(kNegBit));
    __m512i offs = _mm512_mullo_epi64(_mm512_and_si512(r, _mm512_set1_epi64(kNegBit - 1)),
                                      _mm512_set1_epi64((long long)sizeof(Pt)));
    const uint64_t* base = reinterpret_cast<const uint64_t*>(src);
    vgather(x, base, offs, 0);
    vgather(y, base, offs, W);
    if (neg) {
      V zero;
      std::memset((void*)&zero, 0, sizeof zero);
      y = vblend(neg, y, vsub(zero, y, k.p));  // p - y; y != 0 for a point off infinity
    }
  }

  // Sums the pending pairs of src (points pin[t], qin[t]) into next[out_pos[t]].
  CUZK_AVX512 void flush(const Pt* src) {
    if (pending == 0) return;
    const auto& k = Consts<P>::get();
    const size_t ng = (pending + 7) / 8;
    for (size_t t = pending; t < ng * 8; t++) { pin[t] = pin[0]; qin[t] = qin[0]; out_pos[t] = out_pos[0]; }
    const __m512i stride = _mm512_set1_epi64((long long)sizeof(Pt));
    uint64_t* nbase = reinterpret_cast<uint64_t*>(next);
    const V one = vconst(k.one, (V*)nullptr);
    V acc = one;
    for (size_t g = 0; g < ng; g++) {
      V px, py, qx, qy;
      load_refs(src, &pin[8 * g], px, py);
      load_refs(src, &qin[8 * g], qx, qy);
      uint64_t(*st)[8] = &stage[g * 4 * W];
      vstore_lanes(px, st, 0);
      vstore_lanes(py, st, W);
      vstore_lanes(qx, st, 2 * W);
      vstore_lanes(qy, st, 3 * W);
      size_t valid_n = std::min<size_t>(8, pending - 8 * g);
      __mmask8 valid = (__mmask8)((1u << valid_n) - 1);
      __mmask8 ip = vis_zero(px) & vis_zero(py), iq = vis_zero(qx) & vis_zero(qy);
      __mmask8 ex = veq(px, qx), ey = veq(py, qy);
      __mmask8 d = ex & ey & ~ip & ~iq;
      __mmask8 sp = (__mmask8)(~valid | ip | iq | (ex & ~ey) | (d & vis_zero(py)));
      d &= ~sp;
      V dn = vsub(qx, px, k.p);  // (0, 2p)
      if (d) dn = vblend(d, dn, vadd(py, py));
      dn = vblend(sp, dn, one);
      vstore_lanes(acc, &pre[g * W], 0);
      vstore_lanes(dn, &den[g * W], 0);
      acc = vmul(acc, dn);
      special[g] = sp;
      dbl[g] = d;
      infp[g] = ip;
      infq[g] = iq;
    }
    // the 8 lane products, inverted on the scalar side
    V inv;
    {
      alignas(64) uint64_t lanes[W][8];
      vstore_lanes(vcanon2(acc), lanes, 0);
      F vals[8], scratch[8];
      for (int ln = 0; ln < 8; ln++) {
        uint64_t words[W];
        for (int w = 0; w < W; w++) words[w] = lanes[w][ln];
        vals[ln] = from_words(words, (F*)nullptr);
      }
      field::batch_inverse(vals, 8, scratch);
      for (int ln = 0; ln < 8; ln++) {
        uint64_t words[W];
        to_words(vals[ln], words);
        for (int w = 0; w < W; w++) lanes[w][ln] = words[w];
      }
      vload_lanes(inv, lanes, 0);
    }
    for (size_t g = ng; g-- > 0;) {
      const uint64_t(*st)[8] = &stage[g * 4 * W];
      V px, py, qx, qy, pr, dn;
      vload_lanes(px, st, 0);
      vload_lanes(py, st, W);
      vload_lanes(qx, st, 2 * W);
      vload_lanes(qy, st, 3 * W);
      vload_lanes(pr, &pre[g * W], 0);
      vload_lanes(dn, &den[g * W], 0);
      V d_inv = vmul(inv, pr);
      inv = vmul(inv, dn);
      V num = vsub(qy, py, k.p);  // (0, 2p)
      if (dbl[g]) {
        V xx = vmul(px, px);
        num = vblend(dbl[g], num, vadd(vadd(xx, xx), xx));  // 3x^2 < 6p
      }
      V lambda = vmul(num, d_inv);
      V x3 = vsub(vmul(lambda, lambda), vadd(px, qx), k.p2);           // (0, 4p)
      V y3 = vsub(vmul(lambda, vsub(px, x3, k.p4)), py, k.p);          // (0, 3p)
      __mmask8 wm = (__mmask8)~special[g];
      __m512i offo = _mm512_mullo_epi64(_mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i*)&out_pos[8 * g])), stride);
      if (wm) {
        vscatter(vcanon4(x3), nbase, offo, 0, wm);
        vscatter(vcanon4(y3), nbase, offo, W, wm);
      }
      __mmask8 sp = special[g];
      if (sp) {
        size_t valid_n = std::min<size_t>(8, pending - 8 * g);
        for (size_t ln = 0; ln < valid_n; ln++) {
          if (!((sp >> ln) & 1)) continue;
          Pt& r = next[out_pos[8 * g + ln]];
          int from = (infp[g] >> ln) & 1 ? 2 * W : 0;  // P infinite: Q; Q infinite: P
          if (((infp[g] | infq[g]) >> ln) & 1) {
            for (int w = 0; w < W; w++) { r.x[w] = st[from + w][ln]; r.y[w] = st[from + W + w][ln]; }
          } else {
            r = Pt{};  // P = -Q (or a doubling of a 2-torsion point)
          }
        }
      }
    }
    pending = 0;
  }

  void queue(const Pt* src, uint32_t p, uint32_t q, uint32_t out) {
    pin[pending] = p;
    qin[pending] = q;
    out_pos[pending] = out;
    if (++pending == kBatch) flush(src);
  }

  // Halves every list per round until each holds at most one point (lists/len on entry).
  void run() {
    for (;;) {
      bool more = false;
      for (uint32_t l : len) more |= l > 1;
      if (!more) return;
      size_t ip = 0, op = 0;
      for (uint32_t& l : len) {
        for (uint32_t k = 0; k + 1 < l; k += 2) queue(lists, (uint32_t)(ip + k), (uint32_t)(ip + k + 1), (uint32_t)(op + k / 2));
        if (l & 1) next[op + l / 2] = lists[ip + l - 1];
        ip += l;
        op += (l + 1) / 2;
        l = (l + 1) / 2;
      }
      flush(lists);
      std::swap(lists, next);
    }
  }

  // First round straight from references into src (no copy of the inputs): list i has cnt[i]
  // references, then, when carry_has[i], the point carry[i] joins it. Then the usual rounds.
  void run_from(const Pt* src, const uint32_t* refs, const uint32_t* cnt, size_t n_lists, const Pt* carry,
                const uint8_t* carry_has) {
    size_t total = 0;
    for (size_t i = 0; i < n_lists; i++) total += (cnt[i] + 1) / 2 + (carry_has ? carry_has[i] : 0);
    reserve(total);
    len.resize(n_lists);
    // round 1 writes into `next`; swap so that it becomes `lists`
    size_t ep = 0, op = 0;
    for (size_t i = 0; i < n_lists; i++) {
      uint32_t c = cnt[i];
      for (uint32_t k = 0; k + 1 < c; k += 2) queue(src, refs[ep + k], refs[ep + k + 1], (uint32_t)(op + k / 2));
      uint32_t l = c / 2;
      if (c & 1) {
        uint32_t r = refs[ep + c - 1];
        Pt& o = next[op + l++];
        o = src[r & (kNegBit - 1)];
        if (r & kNegBit) negate_y<F>(o);
      }
      if (carry_has && carry_has[i]) next[op + l++] = carry[i];
      len[i] = l;
      ep += c;
      op += l;
    }
    flush(src);
    std::swap(lists, next);
    run();
  }
};

inline bool is_infinity_words(const uint64_t* w, int n) {
  uint64_t acc = 0;
  for (int i = 0; i < n; i++) acc |= w[i];
  return acc == 0;
}

}  // namespace cuzk::cpu::ifma

#endif
