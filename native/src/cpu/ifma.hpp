// Eight field elements at once with AVX-512 IFMA (vpmadd52luq/vpmadd52huq): the arithmetic of
// the MSM's batched affine additions when the CPU has it (a 52x52-bit multiply-add on 8 lanes
// costs about what one 64x64 mulx does, so a product of 8 elements runs ~4-5x faster than 8
// scalar products).
//
// Representation: L limbs of 52 bits in 64-bit lanes, Montgomery form with R52 = 2^(52L) (the
// scalar Fp uses R64 = 2^(64N); conversions multiply by a constant). R52 >= 64p, which lets
// products take inputs up to 8p and return values < 2p without a final subtraction, and lets
// sums and differences skip reduction ("lazy"); values stored back are canonical (< p).
//
// Everything here is compiled for AVX-512 through function attributes, so the rest of the
// library keeps its x86-64-v3 baseline; callers check cpu_has_ifma() first.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define CUZK_HAVE_IFMA 1

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "field/fp.hpp"
#include "field/fp2.hpp"

#define CUZK_AVX512 __attribute__((target("avx512f,avx512ifma,avx512vl,avx512dq,avx512bw")))
// Sanitizer builds (CUZK_INLINE_BY_COST, set by CUZK_SANITIZE) leave inlining to the compiler's cost
// model: clang inlines always_inline callees before it simplifies them, so the MSM's rounds become
// functions of thousands of not yet unrolled loops, and its loop passes then took hours on the
// MSM's file.
#if defined(CUZK_INLINE_BY_COST)
#define CUZK_AVX512_INLINE CUZK_AVX512 inline
#else
#define CUZK_AVX512_INLINE CUZK_AVX512 inline __attribute__((always_inline))
#endif

namespace cuzk::cpu::ifma {

inline bool cpu_has_ifma() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma") &&
                         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                         __builtin_cpu_supports("avx512bw");
  return ok;
}

constexpr uint64_t kMask52 = (1ULL << 52) - 1;

// 64-bit limbs <-> 52-bit limbs of the same integer.
inline void slice52(const uint64_t* in, int n64, uint64_t* out, int n52) {
  for (int i = 0; i < n52; i++) {
    int bit = 52 * i, w = bit >> 6, sh = bit & 63;
    uint64_t v = w < n64 ? in[w] >> sh : 0;
    if (sh > 12 && w + 1 < n64) v |= in[w + 1] << (64 - sh);
    out[i] = v & kMask52;
  }
}
inline void pack64(const uint64_t* in, int n52, uint64_t* out, int n64) {
  #pragma GCC unroll 16
  for (int i = 0; i < n64; i++) out[i] = 0;
  for (int i = 0; i < n52; i++) {
    int bit = 52 * i, w = bit >> 6, sh = bit & 63;
    if (w < n64) out[w] |= in[i] << sh;
    if (sh > 12 && w + 1 < n64) out[w + 1] |= in[i] >> (64 - sh);
  }
}

// Bits of room above p that R52 leaves: 6 (R52 >= 64p) for the curve base fields, whose point
// formulas feed sums of several terms (< 8p) into products; 2 (R52 >= 4p) for the scalar fields,
// whose NTT butterflies only multiply values < 2p by canonical twiddles, which keeps BLS12-381's
// 255-bit Fr at 5 limbs. `inline`: an explicit specialization is an ordinary variable, which clang
// gives external linkage, so without it every TU that includes this header defines it (ODR).
template <class P> inline constexpr int kHeadroom = 6;
template <> inline constexpr int kHeadroom<field::Bn254FrParams> = 2;
template <> inline constexpr int kHeadroom<field::Bls12381FrParams> = 2;

// Constants of one field P (computed once, with the scalar field code).
template <class P>
struct Consts {
  using F = field::Fp<P>;
  static constexpr int N = P::LIMBS;
  static constexpr int L = (P::BITS + kHeadroom<P> + 51) / 52;
  uint64_t p[L], p2[L], p4[L];
  uint64_t one[L];    // R52 mod p
  uint64_t c_in[L];   // R52^2 / R64 mod p: key bytes (x R64) -> x R52
  uint64_t c_out[L];  // R64 mod p: x R52 -> x R64
  uint64_t pinv;      // -p^-1 mod 2^52
  F pow52;            // the value 2^(52L), for scalar conversions
  F to_scalar;        // the value R64 / R52

  static const Consts& get() {
    static const Consts c;
    return c;
  }

 private:
  Consts() {
    uint64_t t[N + 1], t2[N + 1];  // one spare word: 4p may need it
    for (int i = 0; i < N; i++) t[i] = P::MODULUS[i];
    t[N] = 0;
    slice52(t, N + 1, p, L);
    uint64_t carry = 0;
    for (int i = 0; i <= N; i++) { t2[i] = (t[i] << 1) | carry; carry = t[i] >> 63; }
    slice52(t2, N + 1, p2, L);
    carry = 0;
    for (int i = 0; i <= N; i++) { t[i] = (t2[i] << 1) | carry; carry = t2[i] >> 63; }
    slice52(t, N + 1, p4, L);
    F two = F::from_u64(2);
    auto std52 = [&](const F& v, uint64_t* out) {
      uint64_t s[N];
      v.to_std_limbs(s);
      slice52(s, N, out, L);
    };
    pow52 = two.pow_u64(52 * L);
    std52(pow52, one);
    std52(two.pow_u64(104 * L - 64 * N), c_in);
    F pow64 = two.pow_u64(64 * N);
    std52(pow64, c_out);
    to_scalar = pow64 * pow52.inverse();
    pinv = P::INV & kMask52;
  }
};

// ---- scalar side: one element <-> its canonical 52-bit-limb Montgomery words ----------------

template <class P>
inline void to_words(const field::Fp<P>& x, uint64_t* w) {
  const auto& k = Consts<P>::get();
  uint64_t s[P::LIMBS];
  (x * k.pow52).to_std_limbs(s);
  slice52(s, P::LIMBS, w, Consts<P>::L);
}
template <class P>
inline field::Fp<P> from_words(const uint64_t* w, field::Fp<P>*) {
  const auto& k = Consts<P>::get();
  uint64_t s[P::LIMBS];
  pack64(w, Consts<P>::L, s, P::LIMBS);
  return field::Fp<P>::from_raw(s) * k.to_scalar;
}
template <class P>
inline void to_words(const field::Fp2<field::Fp<P>>& x, uint64_t* w) {
  to_words(x.c0, w);
  to_words(x.c1, w + Consts<P>::L);
}
template <class P>
inline field::Fp2<field::Fp<P>> from_words(const uint64_t* w, field::Fp2<field::Fp<P>>*) {
  return {from_words(w, (field::Fp<P>*)nullptr), from_words(w + Consts<P>::L, (field::Fp<P>*)nullptr)};
}

// ---- vectors of 8 elements ------------------------------------------------------------------

template <class P>
struct V1 {
  static constexpr int L = Consts<P>::L;
  static constexpr int W = L;             // 52-bit limbs per element
  static constexpr int WP = P::LIMBS;     // 64-bit words per element when packed in memory
  __m512i l[L];
};
template <class P>
struct V2 {
  static constexpr int L = Consts<P>::L;
  static constexpr int W = 2 * L;
  static constexpr int WP = 2 * P::LIMBS;
  V1<P> c0, c1;
};

template <class P>
CUZK_AVX512_INLINE V1<P> vconst(const uint64_t* c, V1<P>*) {
  V1<P> r;
  #pragma GCC unroll 16
  for (int i = 0; i < V1<P>::L; i++) r.l[i] = _mm512_set1_epi64((long long)c[i]);
  return r;
}

// Carries of limbs that may be negative or above 52 bits, moved up (arithmetic shifts).
template <class P>
CUZK_AVX512_INLINE void normalize(V1<P>& a) {
  const __m512i mask = _mm512_set1_epi64((long long)kMask52);
  for (int i = 0; i + 1 < V1<P>::L; i++) {
    a.l[i + 1] = _mm512_add_epi64(a.l[i + 1], _mm512_srai_epi64(a.l[i], 52));
    a.l[i] = _mm512_and_si512(a.l[i], mask);
  }
}

// K independent Montgomery products r[k] = a[k] b[k], row by row in lockstep: one product is a
// long dependency chain (each row waits for the previous row's reduction), so interleaving
// independent ones is what keeps the multipliers busy. Inputs normalized and < 8p, outputs
// normalized and < 2p.
template <class P, int K>
CUZK_AVX512_INLINE void vmul_k(V1<P>* r, const V1<P>* a, const V1<P>* b) {
  constexpr int L = V1<P>::L;
  const auto& k = Consts<P>::get();
  const __m512i zero = _mm512_setzero_si512();
  const __m512i pinv = _mm512_set1_epi64((long long)k.pinv);
  __m512i t[K][L + 1];
#pragma GCC unroll 16
  for (int q = 0; q < K; q++)
#pragma GCC unroll 16
    for (int j = 0; j <= L; j++) t[q][j] = zero;
#pragma GCC unroll 16
  for (int i = 0; i < L; i++) {
#pragma GCC unroll 16
    for (int q = 0; q < K; q++) {
#pragma GCC unroll 16
      for (int j = 0; j < L; j++) t[q][j] = _mm512_madd52lo_epu64(t[q][j], a[q].l[j], b[q].l[i]);
#pragma GCC unroll 16
      for (int j = 0; j < L; j++) t[q][j + 1] = _mm512_madd52hi_epu64(t[q][j + 1], a[q].l[j], b[q].l[i]);
    }
    __m512i m[K];
#pragma GCC unroll 16
    for (int q = 0; q < K; q++) m[q] = _mm512_madd52lo_epu64(zero, t[q][0], pinv);
#pragma GCC unroll 16
    for (int q = 0; q < K; q++) {
#pragma GCC unroll 16
      for (int j = 0; j < L; j++) t[q][j] = _mm512_madd52lo_epu64(t[q][j], m[q], _mm512_set1_epi64((long long)k.p[j]));
#pragma GCC unroll 16
      for (int j = 0; j < L; j++) t[q][j + 1] = _mm512_madd52hi_epu64(t[q][j + 1], m[q], _mm512_set1_epi64((long long)k.p[j]));
      t[q][1] = _mm512_add_epi64(t[q][1], _mm512_srli_epi64(t[q][0], 52));
#pragma GCC unroll 16
      for (int j = 0; j < L; j++) t[q][j] = t[q][j + 1];
      t[q][L] = zero;
    }
  }
  const __m512i mask = _mm512_set1_epi64((long long)kMask52);
#pragma GCC unroll 16
  for (int j = 0; j + 1 < L; j++)
#pragma GCC unroll 16
    for (int q = 0; q < K; q++) {
      t[q][j + 1] = _mm512_add_epi64(t[q][j + 1], _mm512_srli_epi64(t[q][j], 52));
      r[q].l[j] = _mm512_and_si512(t[q][j], mask);
    }
#pragma GCC unroll 16
  for (int q = 0; q < K; q++) r[q].l[L - 1] = t[q][L - 1];
}

template <class P>
CUZK_AVX512_INLINE V1<P> vmul(const V1<P>& a, const V1<P>& b) {
  V1<P> r;
  vmul_k<P, 1>(&r, &a, &b);
  return r;
}
// How many products vmul_k can interleave before its accumulators and operands (2L+1 registers
// each) spill out of the 32 vector registers.
template <class P>
constexpr int kInterleave = 30 / (2 * V1<P>::L + 1) > 0 ? 30 / (2 * V1<P>::L + 1) : 1;

// N independent products, interleaved kInterleave at a time.
template <class P, int N>
CUZK_AVX512_INLINE void vmul_n(V1<P>* r, const V1<P>* a, const V1<P>* b) {
  constexpr int K = kInterleave<P> < N ? kInterleave<P> : N;
  vmul_k<P, K>(r, a, b);
  if constexpr (N > K) vmul_n<P, N - K>(r + K, a + K, b + K);
}

// Two independent products at once.
template <class P>
CUZK_AVX512_INLINE void vmul2(V1<P>& r0, V1<P>& r1, const V1<P>& a0, const V1<P>& b0, const V1<P>& a1, const V1<P>& b1) {
  V1<P> a[2] = {a0, a1}, b[2] = {b0, b1}, r[2];
  vmul_n<P, 2>(r, a, b);
  r0 = r[0];
  r1 = r[1];
}

template <class P>
CUZK_AVX512_INLINE V1<P> vadd(const V1<P>& a, const V1<P>& b) {
  V1<P> r;
  #pragma GCC unroll 16
  for (int i = 0; i < V1<P>::L; i++) r.l[i] = _mm512_add_epi64(a.l[i], b.l[i]);
  normalize(r);
  return r;
}
// a + kp - b for a constant kp (p, 2p or 4p words) with b <= kp: never negative.
template <class P>
CUZK_AVX512_INLINE V1<P> vsub(const V1<P>& a, const V1<P>& b, const uint64_t* kp) {
  V1<P> r;
  for (int i = 0; i < V1<P>::L; i++)
    r.l[i] = _mm512_sub_epi64(_mm512_add_epi64(a.l[i], _mm512_set1_epi64((long long)kp[i])), b.l[i]);
  normalize(r);
  return r;
}
// a - kp when that is not negative.
template <class P>
CUZK_AVX512_INLINE V1<P> vcond_sub(const V1<P>& a, const uint64_t* kp) {
  constexpr int L = V1<P>::L;
  V1<P> t;
  #pragma GCC unroll 16
  for (int i = 0; i < L; i++) t.l[i] = _mm512_sub_epi64(a.l[i], _mm512_set1_epi64((long long)kp[i]));
  normalize(t);
  __mmask8 neg = _mm512_cmplt_epi64_mask(t.l[L - 1], _mm512_setzero_si512());
  V1<P> r;
  #pragma GCC unroll 16
  for (int i = 0; i < L; i++) r.l[i] = _mm512_mask_blend_epi64(neg, t.l[i], a.l[i]);
  return r;
}
// From < 4p to canonical.
template <class P>
CUZK_AVX512_INLINE V1<P> vcanon4(const V1<P>& a) {
  const auto& k = Consts<P>::get();
  return vcond_sub(vcond_sub(a, k.p2), k.p);
}
// From < 2p to canonical.
template <class P>
CUZK_AVX512_INLINE V1<P> vcanon2(const V1<P>& a) { return vcond_sub(a, Consts<P>::get().p); }
template <class P>
CUZK_AVX512_INLINE __mmask8 veq(const V1<P>& a, const V1<P>& b) {
  __mmask8 m = 0xff;
  #pragma GCC unroll 16
  for (int i = 0; i < V1<P>::L; i++) m &= _mm512_cmpeq_epi64_mask(a.l[i], b.l[i]);
  return m;
}
template <class P>
CUZK_AVX512_INLINE __mmask8 vis_zero(const V1<P>& a) {
  __m512i acc = a.l[0];
  #pragma GCC unroll 16
  for (int i = 1; i < V1<P>::L; i++) acc = _mm512_or_si512(acc, a.l[i]);
  return _mm512_cmpeq_epi64_mask(acc, _mm512_setzero_si512());
}
template <class P>
CUZK_AVX512_INLINE V1<P> vblend(__mmask8 m, const V1<P>& a, const V1<P>& b) {  // lanes of b where m
  V1<P> r;
  #pragma GCC unroll 16
  for (int i = 0; i < V1<P>::L; i++) r.l[i] = _mm512_mask_blend_epi64(m, a.l[i], b.l[i]);
  return r;
}
// Element words at base + offs[lane] (bytes), from word w0 on.
template <class P>
CUZK_AVX512_INLINE void vgather(V1<P>& r, const uint64_t* base, __m512i offs, int w0) {
  #pragma GCC unroll 16
  for (int i = 0; i < V1<P>::L; i++) r.l[i] = _mm512_i64gather_epi64(offs, (const void*)(base + w0 + i), 1);
}
template <class P>
CUZK_AVX512_INLINE void vscatter(const V1<P>& a, uint64_t* base, __m512i offs, int w0, __mmask8 m) {
  #pragma GCC unroll 16
  for (int i = 0; i < V1<P>::L; i++) _mm512_mask_i64scatter_epi64((void*)(base + w0 + i), m, offs, a.l[i], 1);
}
template <class P>
CUZK_AVX512_INLINE void vstore_lanes(const V1<P>& a, uint64_t (*out)[8], int w0) {  // out[w][lane]
  #pragma GCC unroll 16
  for (int i = 0; i < V1<P>::L; i++) _mm512_storeu_si512((void*)out[w0 + i], a.l[i]);
}
template <class P>
CUZK_AVX512_INLINE void vload_lanes(V1<P>& a, const uint64_t (*in)[8], int w0) {
  #pragma GCC unroll 16
  for (int i = 0; i < V1<P>::L; i++) a.l[i] = _mm512_loadu_si512((const void*)in[w0 + i]);
}

// Fp2 = Fp[u]/(u^2+1), component-wise on top of V1; products reduced back below 2p.
template <class P>
CUZK_AVX512_INLINE V2<P> vconst(const uint64_t* c, V2<P>*) {
  static const uint64_t zero[V1<P>::L] = {};
  return {vconst(c, (V1<P>*)nullptr), vconst(zero, (V1<P>*)nullptr)};
}
template <class P>
CUZK_AVX512_INLINE V2<P> vmul(const V2<P>& a, const V2<P>& b) {
  const auto& k = Consts<P>::get();
  V1<P> x[3] = {a.c0, a.c1, vadd(a.c0, a.c1)}, y[3] = {b.c0, b.c1, vadd(b.c0, b.c1)}, z[3];
  vmul_n<P, 3>(z, x, y);
  const V1<P>& v0 = z[0];
  const V1<P>& v1 = z[1];
  const V1<P>& m = z[2];
  V1<P> c0 = vcond_sub(vsub(v0, v1, k.p2), k.p2);                  // < 4p -> < 2p
  V1<P> c1 = vcond_sub(vcond_sub(vsub(m, vadd(v0, v1), k.p4), k.p4), k.p2);  // < 6p -> < 2p
  return {c0, c1};
}
template <class P>
CUZK_AVX512_INLINE void vmul2(V2<P>& r0, V2<P>& r1, const V2<P>& a0, const V2<P>& b0, const V2<P>& a1, const V2<P>& b1) {
  r0 = vmul(a0, b0);  // already three interleaved products each
  r1 = vmul(a1, b1);
}
template <class P>
CUZK_AVX512_INLINE V2<P> vadd(const V2<P>& a, const V2<P>& b) { return {vadd(a.c0, b.c0), vadd(a.c1, b.c1)}; }
template <class P>
CUZK_AVX512_INLINE V2<P> vsub(const V2<P>& a, const V2<P>& b, const uint64_t* kp) {
  return {vsub(a.c0, b.c0, kp), vsub(a.c1, b.c1, kp)};
}
template <class P>
CUZK_AVX512_INLINE V2<P> vcanon4(const V2<P>& a) { return {vcanon4(a.c0), vcanon4(a.c1)}; }
template <class P>
CUZK_AVX512_INLINE V2<P> vcanon2(const V2<P>& a) { return {vcanon2(a.c0), vcanon2(a.c1)}; }
template <class P>
CUZK_AVX512_INLINE __mmask8 veq(const V2<P>& a, const V2<P>& b) { return veq(a.c0, b.c0) & veq(a.c1, b.c1); }
template <class P>
CUZK_AVX512_INLINE __mmask8 vis_zero(const V2<P>& a) { return vis_zero(a.c0) & vis_zero(a.c1); }
template <class P>
CUZK_AVX512_INLINE V2<P> vblend(__mmask8 m, const V2<P>& a, const V2<P>& b) {
  return {vblend(m, a.c0, b.c0), vblend(m, a.c1, b.c1)};
}
template <class P>
CUZK_AVX512_INLINE void vgather(V2<P>& r, const uint64_t* base, __m512i offs, int w0) {
  vgather(r.c0, base, offs, w0);
  vgather(r.c1, base, offs, w0 + V1<P>::L);
}
template <class P>
CUZK_AVX512_INLINE void vscatter(const V2<P>& a, uint64_t* base, __m512i offs, int w0, __mmask8 m) {
  vscatter(a.c0, base, offs, w0, m);
  vscatter(a.c1, base, offs, w0 + V1<P>::L, m);
}
template <class P>
CUZK_AVX512_INLINE void vstore_lanes(const V2<P>& a, uint64_t (*out)[8], int w0) {
  vstore_lanes(a.c0, out, w0);
  vstore_lanes(a.c1, out, w0 + V1<P>::L);
}
template <class P>
CUZK_AVX512_INLINE void vload_lanes(V2<P>& a, const uint64_t (*in)[8], int w0) {
  vload_lanes(a.c0, in, w0);
  vload_lanes(a.c1, in, w0 + V1<P>::L);
}

// Reduced sum and difference: inputs < 2p, outputs < 2p.
template <class P>
CUZK_AVX512_INLINE V1<P> radd(const V1<P>& a, const V1<P>& b) { return vcond_sub(vadd(a, b), Consts<P>::get().p2); }
template <class P>
CUZK_AVX512_INLINE V1<P> rsub(const V1<P>& a, const V1<P>& b) {
  const auto& k = Consts<P>::get();
  return vcond_sub(vsub(a, b, k.p2), k.p2);
}
template <class P>
CUZK_AVX512_INLINE V2<P> radd(const V2<P>& a, const V2<P>& b) { return {radd(a.c0, b.c0), radd(a.c1, b.c1)}; }
template <class P>
CUZK_AVX512_INLINE V2<P> rsub(const V2<P>& a, const V2<P>& b) { return {rsub(a.c0, b.c0), rsub(a.c1, b.c1)}; }
// Lanes equal to 0 mod p, for a value < 2p.
template <class P>
CUZK_AVX512_INLINE __mmask8 vzero_mod(const V1<P>& a) { return vis_zero(vcanon2(a)); }
template <class P>
CUZK_AVX512_INLINE __mmask8 vzero_mod(const V2<P>& a) { return vzero_mod(a.c0) & vzero_mod(a.c1); }

// Per-lane inverse by Fermat (a^(p-2)) with 4-bit windows; 0 maps to 0. Input < 2p.
template <class P>
CUZK_AVX512 V1<P> vinv(const V1<P>& a) {
  const auto& k = Consts<P>::get();
  V1<P> table[16];
  table[0] = vconst(k.one, (V1<P>*)nullptr);
  table[1] = a;
  for (int i = 2; i < 16; i++) table[i] = vmul(table[i - 1], a);
  uint64_t e[P::LIMBS], borrow = 0;
  for (int i = 0; i < P::LIMBS; i++) e[i] = field::sbb(P::MODULUS[i], i == 0 ? 2 : 0, borrow);
  V1<P> r = table[0];
  bool started = false;
  for (int nib = 16 * P::LIMBS - 1; nib >= 0; nib--) {
    unsigned d = (unsigned)(e[nib / 16] >> (4 * (nib % 16))) & 15;
    if (started) {
      r = vmul(r, r);
      r = vmul(r, r);
      r = vmul(r, r);
      r = vmul(r, r);
      if (d) r = vmul(r, table[d]);
    } else if (d) {
      r = table[d];
      started = true;
    }
  }
  return r;
}
// 1/(a + bu) = (a - bu) / (a^2 + b^2)
template <class P>
CUZK_AVX512 V2<P> vinv(const V2<P>& a) {
  const auto& k = Consts<P>::get();
  V1<P> n = radd(vmul(a.c0, a.c0), vmul(a.c1, a.c1));
  V1<P> ni = vinv(n);
  V1<P> zero;
  std::memset((void*)&zero, 0, sizeof zero);
  return {vmul(a.c0, ni), vcond_sub(vsub(zero, vmul(a.c1, ni), k.p2), k.p2)};
}

// 8x8 transpose of 64-bit words: r[i] = row i in, r[j] = column j out (rows = elements, columns
// = words). Loading 8 elements row by row and transposing costs far less than gathers on the
// AMD cores this runs on (a zmm gather or scatter takes tens of cycles).
CUZK_AVX512_INLINE void transpose8(__m512i* r) {
  __m512i t[8];
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm512_unpacklo_epi64(r[2 * i], r[2 * i + 1]);      // a0 b0 a2 b2 a4 b4 a6 b6
    t[2 * i + 1] = _mm512_unpackhi_epi64(r[2 * i], r[2 * i + 1]);  // a1 b1 a3 b3 ...
  }
  const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  __m512i u[8];
#pragma GCC unroll 2
  for (int h = 0; h < 2; h++) {  // rows a-d (h = 0) and e-h (h = 1)
    u[4 * h + 0] = _mm512_permutex2var_epi64(t[4 * h + 0], lo, t[4 * h + 2]);  // a0 b0 c0 d0 a4 b4 c4 d4
    u[4 * h + 2] = _mm512_permutex2var_epi64(t[4 * h + 0], hi, t[4 * h + 2]);  // a2 b2 c2 d2 a6 ..
    u[4 * h + 1] = _mm512_permutex2var_epi64(t[4 * h + 1], lo, t[4 * h + 3]);  // a1 .. a5 ..
    u[4 * h + 3] = _mm512_permutex2var_epi64(t[4 * h + 1], hi, t[4 * h + 3]);  // a3 .. a7 ..
  }
  const __m512i lo4 = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0), hi4 = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
#pragma GCC unroll 4
  for (int j = 0; j < 4; j++) {
    r[j] = _mm512_permutex2var_epi64(u[j], lo4, u[4 + j]);
    r[j + 4] = _mm512_permutex2var_epi64(u[j], hi4, u[4 + j]);
  }
}

template <class P>
CUZK_AVX512_INLINE __m512i& vword(V1<P>& v, int w) { return v.l[w]; }
template <class P>
CUZK_AVX512_INLINE __m512i& vword(V2<P>& v, int w) { return w < V1<P>::L ? v.c0.l[w] : v.c1.l[w - V1<P>::L]; }
template <class P>
CUZK_AVX512_INLINE const __m512i& vword(const V1<P>& v, int w) { return v.l[w]; }
template <class P>
CUZK_AVX512_INLINE const __m512i& vword(const V2<P>& v, int w) { return w < V1<P>::L ? v.c0.l[w] : v.c1.l[w - V1<P>::L]; }

// Packed 64-bit words (the same integer) <-> 52-bit limbs, on 8 lanes.
template <class P>
CUZK_AVX512_INLINE void unpack52(const __m512i* w, V1<P>& v) {
  constexpr int L = V1<P>::L, N = P::LIMBS;
  const __m512i mask = _mm512_set1_epi64((long long)kMask52);
#pragma GCC unroll 16
  for (int i = 0; i < L; i++) {
    const int bit = 52 * i, k = bit >> 6, sh = bit & 63;
    if (k >= N) {  // limbs above the packed width (more limbs than 64-bit words hold)
      v.l[i] = _mm512_setzero_si512();
      continue;
    }
    __m512i x = _mm512_srli_epi64(w[k], sh);
    if (sh > 12 && k + 1 < N) x = _mm512_or_si512(x, _mm512_slli_epi64(w[k + 1], 64 - sh));
    v.l[i] = _mm512_and_si512(x, mask);
  }
}
template <class P>
CUZK_AVX512_INLINE void pack64v(const V1<P>& v, __m512i* w) {
  constexpr int L = V1<P>::L, N = P::LIMBS;
#pragma GCC unroll 16
  for (int k = 0; k < N; k++) w[k] = _mm512_setzero_si512();
#pragma GCC unroll 16
  for (int i = 0; i < L; i++) {
    const int bit = 52 * i, k = bit >> 6, sh = bit & 63;
    if (k < N) w[k] = _mm512_or_si512(w[k], _mm512_slli_epi64(v.l[i], sh));
    if (sh > 12 && k + 1 < N) w[k + 1] = _mm512_or_si512(w[k + 1], _mm512_srli_epi64(v.l[i], 64 - sh));
  }
}
template <class P>
CUZK_AVX512_INLINE void unpack52(const __m512i* w, V2<P>& v) {
  unpack52(w, v.c0);
  unpack52(w + P::LIMBS, v.c1);
}
template <class P>
CUZK_AVX512_INLINE void pack64v(const V2<P>& v, __m512i* w) {
  pack64v(v.c0, w);
  pack64v(v.c1, w + P::LIMBS);
}

// Points stored packed (x then y, WP words each) at 8 addresses -> x, y on 8 lanes.
template <class V>
CUZK_AVX512_INLINE void load_points8(const uint64_t* const* ptr, V& x, V& y) {
  constexpr int WP = V::WP, NW = 2 * WP, NC = (NW + 7) / 8;
  __m512i words[8 * NC];
#pragma GCC unroll 8
  for (int c = 0; c < NC; c++) {
    const int nw = NW - 8 * c < 8 ? NW - 8 * c : 8;
    const __mmask8 m = (__mmask8)((1u << nw) - 1);
    __m512i* r = words + 8 * c;
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) r[i] = _mm512_maskz_loadu_epi64(m, ptr[i] + 8 * c);
    transpose8(r);
  }
  unpack52(words, x);
  unpack52(words + WP, y);
}
// x, y (canonical) of the lanes in `lanes` -> packed points at 8 addresses.
template <class V>
CUZK_AVX512_INLINE void store_points8(uint64_t* const* ptr, __mmask8 lanes, const V& x, const V& y) {
  constexpr int WP = V::WP, NW = 2 * WP, NC = (NW + 7) / 8;
  __m512i words[8 * NC];
  pack64v(x, words);
  pack64v(y, words + WP);
#pragma GCC unroll 8
  for (int j = NW; j < 8 * NC; j++) words[j] = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int c = 0; c < NC; c++) {
    const int nw = NW - 8 * c < 8 ? NW - 8 * c : 8;
    const __mmask8 m = (__mmask8)((1u << nw) - 1);
    __m512i* r = words + 8 * c;
    transpose8(r);
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
      if ((lanes >> i) & 1) _mm512_mask_storeu_epi64(ptr[i] + 8 * c, m, r[i]);
  }
}

// The vector type for a scalar coordinate field F (Fp<P> or Fp2<Fp<P>>).
template <class F> struct VecOf;
template <class P> struct VecOf<field::Fp<P>> { using type = V1<P>; using Params = P; };
template <class P> struct VecOf<field::Fp2<field::Fp<P>>> { using type = V2<P>; using Params = P; };

}  // namespace cuzk::cpu::ifma

#endif
