// The MSM's batched affine additions on 8 lanes of AVX-512 IFMA (see ifma.hpp): the same rounds
// as AffineTree in msm_impl.hpp, on points kept as canonical 52-bit-limb words (IfmaPoint), so
// that every round gathers 8 pairs, runs the affine formulas on all lanes at once and scatters
// the sums. Lanes whose pair is not a plain addition or doubling (an infinity, or P = -Q) are
// settled afterwards by copying, without any arithmetic.
#pragma once

#include "cpu/ifma.hpp"

#ifdef CUZK_HAVE_IFMA

#include <algorithm>
#include <utility>
#include <memory>
#include <vector>

#include "curve/point.hpp"
#include "field/fp.hpp"
#include "util/scratch.hpp"

namespace cuzk::cpu::ifma {

// A point between rounds: x and y as canonical Montgomery values for R52 (x R52 mod p), packed
// in 64-bit words (WP per coordinate: 64 B per BN254 G1 point, one cache line); all zero =
// infinity. Unpacked to 52-bit limbs in registers.
template <class F>
struct alignas((2 * 8 * VecOf<F>::type::WP) % 64 == 0 ? 64 : 32) IfmaPoint {
  static constexpr int WP = VecOf<F>::type::WP;
  uint64_t xy[2 * WP];  // x, then y at xy + WP: one array, because the code walks both in one loop
};

// y -> p - y (0 stays 0), per Fp component, on packed words.
template <class F>
inline void negate_y(IfmaPoint<F>& pt) {
  using P = typename VecOf<F>::Params;
  constexpr int N = P::LIMBS;
  for (int c = 0; c < IfmaPoint<F>::WP; c += N) {
    uint64_t* y = pt.xy + IfmaPoint<F>::WP + c;
    uint64_t acc = 0;
    for (int i = 0; i < N; i++) acc |= y[i];
    if (acc == 0) continue;
    uint64_t borrow = 0;
    for (int i = 0; i < N; i++) y[i] = field::sbb(P::MODULUS[i], y[i], borrow);
  }
}

// Key-encoded points (Montgomery, 64-bit limbs, R64) -> IfmaPoint, 8 at a time: slice into
// 52-bit limbs, multiply by R52^2/R64 on the vector unit, reduce to canonical, pack.
template <class F>
CUZK_AVX512 void convert_points(const uint8_t* points, const uint32_t* idx, size_t count, IfmaPoint<F>* out) {
  using P = typename VecOf<F>::Params;
  using V = V1<P>;
  constexpr int L = Consts<P>::L, N = P::LIMBS, WP = IfmaPoint<F>::WP;
  constexpr int comps = 2 * WP / N;  // Fp components per point
  constexpr size_t PB = 2 * F::BYTES;
  const auto& k = Consts<P>::get();
  const V c_in = vconst(k.c_in, (V*)nullptr);
  alignas(64) uint64_t lanes[comps * L][8];
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
      uint64_t* o = out[g + ln].xy;
      for (int c = 0; c < comps; c++) {
        uint64_t words[L];
        for (int i = 0; i < L; i++) words[i] = lanes[c * L + i][ln];
        pack64(words, L, o + c * N, N);
      }
    }
  }
}

// IfmaPoint -> scalar affine (x R52 times R64 on the vector unit = x R64).
template <class F>
CUZK_AVX512 void to_affine_points(const IfmaPoint<F>* in, curve::Affine<F>* out, size_t count) {
  using P = typename VecOf<F>::Params;
  using V = V1<P>;
  using Fp = field::Fp<P>;
  constexpr int L = Consts<P>::L, N = P::LIMBS, WP = IfmaPoint<F>::WP;
  constexpr int comps = 2 * WP / N;
  const auto& k = Consts<P>::get();
  const V c_out = vconst(k.c_out, (V*)nullptr);
  alignas(64) uint64_t lanes[comps * L][8];
  for (size_t g = 0; g < count; g += 8) {
    size_t nl = std::min<size_t>(8, count - g);
    for (size_t ln = 0; ln < 8; ln++)
      for (int c = 0; c < comps; c++) {
        uint64_t words[L];
        if (ln < nl) slice52(in[g + ln].xy + c * N, N, words, L);
        else std::memset(words, 0, sizeof words);
        for (int i = 0; i < L; i++) lanes[c * L + i][ln] = words[i];
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

// Bit 31 of a first-round reference: the point enters negated (a negative digit).
constexpr uint32_t kNegBit = 1u << 31;

// Sums lists of points, halving every list per round (pairs within a list) until each holds at
// most one point. Lists hold references, not points: the address of a point (IfmaPoint is at
// least 32-byte aligned) with bit 0 set when it is to be negated, so an odd last point or a
// carried bucket sum moves on to the next round without being copied. Sums go to an arena.
template <class F>
struct IfmaTree {
  using V = typename VecOf<F>::type;
  using P = typename VecOf<F>::Params;
  using Pt = IfmaPoint<F>;
  static constexpr int W = V::W;
  // 8-pair groups per inversion: prefixes and denominators take ~512 KB; more pairs per batch
  // means fewer scalar inversions (each costs ~380 products).
  static constexpr size_t kGroups = std::max(32, 4096 / W);
  static constexpr size_t kBatch = 8 * kGroups;

  // references, list after list: cur is read in a round, nxt written; both point into refs_a/b
  ScratchArray<uintptr_t> refs_a, refs_b;
  uintptr_t* cur = nullptr;
  uintptr_t* nxt = nullptr;
  std::vector<uint32_t> len;  // per list
  ScratchArray<Pt> arena;     // sums of every round (huge pages: see util/scratch.hpp)
  size_t arena_used = 0;

  std::vector<uintptr_t> pin = std::vector<uintptr_t>(kBatch + 8), qin = std::vector<uintptr_t>(kBatch + 8);
  std::vector<Pt*> out = std::vector<Pt*>(kBatch + 8);
  size_t pending = 0;
  // per group: prefix, denominator (W words x 8 lanes), lane masks; one spare group: the neutral
  // partner of an odd last group
  std::unique_ptr<uint64_t[][8]> pre{new uint64_t[(kGroups + 1) * W][8]};
  std::unique_ptr<uint64_t[][8]> den{new uint64_t[(kGroups + 1) * W][8]};
  std::vector<uint8_t> special = std::vector<uint8_t>(kGroups + 1), dbl = std::vector<uint8_t>(kGroups + 1);
  std::vector<uint8_t> infp = std::vector<uint8_t>(kGroups + 1), infq = std::vector<uint8_t>(kGroups + 1);

  static const Pt* addr(uintptr_t r) { return reinterpret_cast<const Pt*>(r & ~(uintptr_t)1); }
  static uintptr_t ref(const Pt* p, bool neg) { return reinterpret_cast<uintptr_t>(p) | (neg ? 1 : 0); }

  // The point a reference stands for.
  static void resolve(uintptr_t r, Pt& outp) {
    outp = *addr(r);
    if (r & 1) negate_y<F>(outp);
  }

  // Loads 8 references' points into x, y, negating flagged ones.
  CUZK_AVX512_INLINE void load_refs(const uintptr_t* refs, V& x, V& y) {
    const auto& k = Consts<P>::get();
    const uint64_t* ptr[8];
    unsigned neg = 0;
    for (int i = 0; i < 8; i++) {
      ptr[i] = addr(refs[i])->xy;
      neg |= (unsigned)(refs[i] & 1) << i;
    }
    load_points8(ptr, x, y);
    if (neg) {
      V zero;
      std::memset((void*)&zero, 0, sizeof zero);
      y = vblend((__mmask8)neg, y, vsub(zero, y, k.p));  // p - y; y != 0 for a point off infinity
    }
  }

  // Forward step for group g: loads its pairs, classifies the lanes and returns the
  // denominators (x2 - x1, or 2y for a doubling, 1 for a lane settled by copying).
  CUZK_AVX512_INLINE V prepare_group(size_t g) {
    const auto& k = Consts<P>::get();
    const V one = vconst(k.one, (V*)nullptr);
    V px, py, qx, qy;
    load_refs(&pin[8 * g], px, py);
    load_refs(&qin[8 * g], qx, qy);
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
    vstore_lanes(dn, &den[g * W], 0);
    special[g] = sp;
    dbl[g] = d;
    infp[g] = ip;
    infq[g] = iq;
    return dn;
  }

  // Lanes that are not plain additions: copies (one side infinite) or infinity (P = -Q).
  void settle_special(size_t g) {
    __mmask8 sp = special[g];
    size_t valid_n = g * 8 < pending ? std::min<size_t>(8, pending - 8 * g) : 0;
    for (size_t ln = 0; ln < valid_n; ln++) {
      if (!((sp >> ln) & 1)) continue;
      size_t t = 8 * g + ln;
      if (((infp[g] | infq[g]) >> ln) & 1) resolve((infp[g] >> ln) & 1 ? qin[t] : pin[t], *out[t]);
      else *out[t] = Pt{};  // P = -Q (or a doubling of a 2-torsion point)
    }
  }

  // Sums the pending pairs (pin[t] + qin[t] -> *out[t]). Groups of 8 pairs alternate between two
  // prefix-product chains (even and odd groups) so that two independent products are in flight.
  CUZK_AVX512 void flush() {
    if (pending == 0) return;
    const auto& k = Consts<P>::get();
    const V one = vconst(k.one, (V*)nullptr);
    const size_t ng = (pending + 7) / 8;
    const size_t ng2 = (ng + 1) & ~(size_t)1;
    for (size_t t = pending; t < ng2 * 8; t++) { pin[t] = pin[0]; qin[t] = qin[0]; out[t] = out[0]; }
    if (ng2 > ng) {  // an odd count: a neutral last group (denominator 1, nothing written)
      vstore_lanes(one, &den[ng * W], 0);
      special[ng] = 0xff;
      dbl[ng] = infp[ng] = infq[ng] = 0;
    }
    V acc0 = one, acc1 = one;
    for (size_t g = 0; g < ng2; g += 2) {
      V d0 = prepare_group(g);
      V d1 = g + 1 < ng ? prepare_group(g + 1) : one;
      vstore_lanes(acc0, &pre[g * W], 0);
      vstore_lanes(acc1, &pre[(g + 1) * W], 0);
      vmul2(acc0, acc1, acc0, d0, acc1, d1);
    }
    // the 16 lane products, inverted together on the scalar side
    V inv0, inv1;
    {
      alignas(64) uint64_t lanes[2 * W][8];
      vstore_lanes(vcanon2(acc0), lanes, 0);
      vstore_lanes(vcanon2(acc1), lanes, W);
      F vals[16], scratch[16];
      for (int c = 0; c < 2; c++)
        for (int ln = 0; ln < 8; ln++) {
          uint64_t words[W];
          for (int w = 0; w < W; w++) words[w] = lanes[c * W + w][ln];
          vals[c * 8 + ln] = from_words(words, (F*)nullptr);
        }
      field::batch_inverse(vals, 16, scratch);
      for (int c = 0; c < 2; c++)
        for (int ln = 0; ln < 8; ln++) {
          uint64_t words[W];
          to_words(vals[c * 8 + ln], words);
          for (int w = 0; w < W; w++) lanes[c * W + w][ln] = words[w];
        }
      vload_lanes(inv0, lanes, 0);
      vload_lanes(inv1, lanes, W);
    }
    for (size_t g = ng2; g > 0;) {
      g -= 2;
      const size_t h = g + 1;
      V pxa, pya, qxa, qya, pra, dna, pxb, pyb, qxb, qyb, prb, dnb;
      load_refs(&pin[8 * g], pxa, pya);
      load_refs(&qin[8 * g], qxa, qya);
      load_refs(&pin[8 * h], pxb, pyb);
      load_refs(&qin[8 * h], qxb, qyb);
      vload_lanes(pra, &pre[g * W], 0);
      vload_lanes(dna, &den[g * W], 0);
      vload_lanes(prb, &pre[h * W], 0);
      vload_lanes(dnb, &den[h * W], 0);
      V dia, dib;
      vmul2(dia, dib, inv0, pra, inv1, prb);
      vmul2(inv0, inv1, inv0, dna, inv1, dnb);
      V numa = vsub(qya, pya, k.p), numb = vsub(qyb, pyb, k.p);  // (0, 2p)
      if (dbl[g] | dbl[h]) {
        V xxa, xxb;
        vmul2(xxa, xxb, pxa, pxa, pxb, pxb);
        numa = vblend(dbl[g], numa, vadd(vadd(xxa, xxa), xxa));  // 3x^2 < 6p
        numb = vblend(dbl[h], numb, vadd(vadd(xxb, xxb), xxb));
      }
      V la, lb, l2a, l2b, ta, tb;
      vmul2(la, lb, numa, dia, numb, dib);
      vmul2(l2a, l2b, la, la, lb, lb);
      V x3a = vsub(l2a, vadd(pxa, qxa), k.p2), x3b = vsub(l2b, vadd(pxb, qxb), k.p2);  // (0, 4p)
      vmul2(ta, tb, la, vsub(pxa, x3a, k.p4), lb, vsub(pxb, x3b, k.p4));
      V y3a = vsub(ta, pya, k.p), y3b = vsub(tb, pyb, k.p);  // (0, 3p)
      __mmask8 wa = (__mmask8)~special[g], wb = (__mmask8)~special[h];
      uint64_t* ptr[8];
      if (wa) {
        for (int i = 0; i < 8; i++) ptr[i] = out[8 * g + i]->xy;
        store_points8(ptr, wa, vcanon4(x3a), vcanon4(y3a));
      }
      if (wb) {
        for (int i = 0; i < 8; i++) ptr[i] = out[8 * h + i]->xy;
        store_points8(ptr, wb, vcanon4(x3b), vcanon4(y3b));
      }
      if (special[g]) settle_special(g);
      if (h < ng && special[h]) settle_special(h);
    }
    pending = 0;
  }

  // Lists in cur/len on entry; on exit every list has at most one reference (in cur).
  void run() {
    for (;;) {
      bool more = false;
      for (uint32_t l : len) more |= l > 1;
      if (!more) return;
      size_t ip = 0, op = 0;
      for (uint32_t& l : len) {
        for (uint32_t k = 0; k + 1 < l; k += 2) {
          Pt* slot = &arena[arena_used++];
          pin[pending] = cur[ip + k];
          qin[pending] = cur[ip + k + 1];
          out[pending] = slot;
          nxt[op + k / 2] = ref(slot, false);
          if (++pending == kBatch) flush();
        }
        if (l & 1) nxt[op + l / 2] = cur[ip + l - 1];  // moves on unsummed
        ip += l;
        op += (l + 1) / 2;
        l = (l + 1) / 2;
      }
      flush();
      std::swap(cur, nxt);
    }
  }

  // List i: cnt[i] references (index into src, kNegBit = negated), then carry[i] when
  // carry_has[i]. Leaves each list's sum (or nothing) in cur/len.
  void run_from(const Pt* src, const uint32_t* refs, const uint32_t* cnt, size_t n_lists, const Pt* carry,
                const uint8_t* carry_has) {
    size_t total = 0;
    for (size_t i = 0; i < n_lists; i++) total += cnt[i] + (carry_has ? carry_has[i] : 0);
    arena.reserve(total);
    arena_used = 0;
    cur = refs_a.reserve(total);
    nxt = refs_b.reserve(total);
    len.resize(n_lists);
    size_t ep = 0, op = 0;
    for (size_t i = 0; i < n_lists; i++) {
      for (uint32_t k = 0; k < cnt[i]; k++) {
        uint32_t r = refs[ep + k];
        cur[op++] = ref(src + (r & (kNegBit - 1)), (r & kNegBit) != 0);
      }
      ep += cnt[i];
      len[i] = cnt[i];
      if (carry_has && carry_has[i]) {
        cur[op++] = ref(carry + i, false);
        len[i]++;
      }
    }
    run();
  }
};

// 8 XYZZ points on the vector unit (coordinates < 2p), with their infinity lanes as a mask.
template <class V>
struct VXyzz {
  V X, Y, ZZ, ZZZ;
  __mmask8 inf;
};

template <class V>
CUZK_AVX512_INLINE VXyzz<V> vblend_pt(__mmask8 m, const VXyzz<V>& a, const VXyzz<V>& b) {
  return {vblend(m, a.X, b.X), vblend(m, a.Y, b.Y), vblend(m, a.ZZ, b.ZZ), vblend(m, a.ZZZ, b.ZZZ),
          (__mmask8)((a.inf & ~m) | (b.inf & m))};
}

// dbl-2008-s-1 (a = 0), all lanes.
template <class V>
CUZK_AVX512_INLINE VXyzz<V> vdbl(const VXyzz<V>& p) {
  V u = radd(p.Y, p.Y);
  V v = vmul(u, u);
  V w = vmul(u, v);
  V s = vmul(p.X, v);
  V xx = vmul(p.X, p.X);
  V m = radd(radd(xx, xx), xx);
  V x3 = rsub(vmul(m, m), radd(s, s));
  V y3 = rsub(vmul(m, rsub(s, x3)), vmul(w, p.Y));
  return {x3, y3, vmul(v, p.ZZ), vmul(w, p.ZZZ), p.inf};
}

// p + (bx, by) on the lanes of `active` (madd-2008-s with every special case).
template <class V>
CUZK_AVX512_INLINE VXyzz<V> vadd_affine(const VXyzz<V>& p, const V& bx, const V& by, __mmask8 active, const V& one) {
  V u2 = vmul(bx, p.ZZ), s2 = vmul(by, p.ZZZ);
  V pd = rsub(u2, p.X), rd = rsub(s2, p.Y);
  __mmask8 pz = vzero_mod(pd), rz = vzero_mod(rd);
  V pp = vmul(pd, pd);
  V ppp = vmul(pd, pp);
  V q = vmul(p.X, pp);
  V x3 = rsub(rsub(vmul(rd, rd), ppp), radd(q, q));
  V y3 = rsub(vmul(rd, rsub(q, x3)), vmul(p.Y, ppp));
  VXyzz<V> r{x3, y3, vmul(p.ZZ, pp), vmul(p.ZZZ, ppp), 0};
  __mmask8 fin = active & ~p.inf;
  if (fin & pz & rz) r = vblend_pt(fin & pz & rz, r, vdbl(p));
  r.inf = fin & pz & ~rz;
  r = vblend_pt(active & p.inf, r, VXyzz<V>{bx, by, one, one, 0});
  return vblend_pt((__mmask8)~active, r, p);
}

// p + q (add-2008-s with every special case).
template <class V>
CUZK_AVX512_INLINE VXyzz<V> vadd_xyzz(const VXyzz<V>& p, const VXyzz<V>& q) {
  V u1 = vmul(p.X, q.ZZ), s1 = vmul(p.Y, q.ZZZ);
  V u2 = vmul(q.X, p.ZZ), s2 = vmul(q.Y, p.ZZZ);
  V pd = rsub(u2, u1), rd = rsub(s2, s1);
  __mmask8 pz = vzero_mod(pd), rz = vzero_mod(rd);
  V pp = vmul(pd, pd);
  V ppp = vmul(pd, pp);
  V q1 = vmul(u1, pp);
  V x3 = rsub(rsub(vmul(rd, rd), ppp), radd(q1, q1));
  V y3 = rsub(vmul(rd, rsub(q1, x3)), vmul(s1, ppp));
  VXyzz<V> r{x3, y3, vmul(vmul(p.ZZ, q.ZZ), pp), vmul(vmul(p.ZZZ, q.ZZZ), ppp), 0};
  __mmask8 fin = (__mmask8)(~p.inf & ~q.inf);
  if (fin & pz & rz) r = vblend_pt(fin & pz & rz, r, vdbl(p));
  r.inf = fin & pz & ~rz;
  r = vblend_pt(p.inf, r, q);
  return vblend_pt(q.inf, r, p);
}

// sum_i (i+1) bucket[i] for n (a multiple of 8) buckets: lane l folds buckets [l S, (l+1) S)
// with a running sum, S = n/8, and the lanes are joined with their offsets l S on the scalar side.
template <class F>
CUZK_AVX512 curve::Xyzz<F> bucket_fold(const IfmaPoint<F>* bucket, const uint8_t* has, size_t n) {
  using V = typename VecOf<F>::type;
  using P = typename VecOf<F>::Params;
  using X = curve::Xyzz<F>;
  constexpr int W = V::W;
  const size_t S = n / 8;
  const V one = vconst(Consts<P>::get().one, (V*)nullptr);
  VXyzz<V> run{one, one, one, one, 0xff}, sum{one, one, one, one, 0xff};
  for (size_t s = S; s-- > 0;) {
    __mmask8 active = 0;
    const uint64_t* ptr[8];
    for (int l = 0; l < 8; l++) {
      active |= (__mmask8)((has[l * S + s] ? 1u : 0u) << l);
      ptr[l] = bucket[l * S + s].xy;
    }
    if (active) {
      V bx, by;
      load_points8(ptr, bx, by);
      run = vadd_affine(run, bx, by, active, one);
    }
    sum = vadd_xyzz(sum, run);
  }
  // lanes back to scalar XYZZ
  X sums[8], totals[8];
  {
    alignas(64) uint64_t lanes[8 * W][8];
    const VXyzz<V>* src[2] = {&sum, &run};
    X* dst[2] = {sums, totals};
    for (int which = 0; which < 2; which++) {
      const VXyzz<V>& v = *src[which];
      vstore_lanes(vcanon2(v.X), lanes, 0);
      vstore_lanes(vcanon2(v.Y), lanes, W);
      vstore_lanes(vcanon2(v.ZZ), lanes, 2 * W);
      vstore_lanes(vcanon2(v.ZZZ), lanes, 3 * W);
      for (int l = 0; l < 8; l++) {
        if ((v.inf >> l) & 1) { dst[which][l] = X::infinity(); continue; }
        F c[4];
        for (int k = 0; k < 4; k++) {
          uint64_t words[W];
          for (int w = 0; w < W; w++) words[w] = lanes[k * W + w][l];
          c[k] = from_words(words, (F*)nullptr);
        }
        dst[which][l] = X{c[0], c[1], c[2], c[3]};
      }
    }
  }
  // sum_l (sums[l] + l S totals[l]); sum_l l totals[l] by a running sum, then times S
  X acc = X::infinity(), r = X::infinity(), out = X::infinity();
  for (int l = 7; l >= 1; l--) {
    r = r.add(totals[l]);
    acc = acc.add(r);
  }
  for (size_t t = S; t > 1; t >>= 1) acc = acc.dbl();
  for (int l = 0; l < 8; l++) out = out.add(sums[l]);
  return out.add(acc);
}

inline bool is_infinity_words(const uint64_t* w, int n) {  // n packed words
  uint64_t acc = 0;
  for (int i = 0; i < n; i++) acc |= w[i];
  return acc == 0;
}

}  // namespace cuzk::cpu::ifma

#endif
