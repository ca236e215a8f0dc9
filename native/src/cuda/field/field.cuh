// Device prime fields: Montgomery arithmetic over 32-bit limbs with PTX carry chains. The limbs
// are the host Fp's 64-bit limbs split in two (same R = 2^(64*LIMBS), same bytes in memory), so
// key points, scalars and host results cross the bus without conversion. The interface matches the
// host Fp (zero, one, is_zero, ==, +, -, unary -, *, sqr, dbl), so curve/point.hpp's formulas and
// field/fp2.hpp's Fp2 run on the device unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

#include "field/params.hpp"

// Field code runs on the device and, for checks, on the host (see ptx below). Unrolling is asked
// for in the device pass only (the host compiler does not know the pragma).
#if defined(__CUDA_ARCH__)
#define CUZK_UNROLL _Pragma("unroll")
#else
#define CUZK_UNROLL
#endif
#if defined(__CUDACC__)
#define CUZK_DHD __host__ __device__ __forceinline__
#else
#define CUZK_DHD inline
#endif

namespace cuzk::cuda {

// Compile-time split of the generated 64-bit constants. Device code cannot read the host's static
// constexpr arrays, but a local constexpr copy folds into immediates.
template <int N>
struct Limbs32 {
  uint32_t v[N];
};
template <int N64>
constexpr Limbs32<2 * N64> split64(const uint64_t (&a)[N64]) {
  Limbs32<2 * N64> r{};
  for (int i = 0; i < N64; i++) {
    r.v[2 * i] = (uint32_t)a[i];
    r.v[2 * i + 1] = (uint32_t)(a[i] >> 32);
  }
  return r;
}

// One PTX instruction per helper. Every helper is `asm volatile` so that the compiler keeps their
// order: the carry flag (.cc) is invisible to it and must flow between consecutive statements.
// The host pass gets an emulation with an explicit flag, so the same field code can be checked
// against the host Fp on a machine without a GPU (tests and the bench's self-checks).
namespace ptx {
#ifdef __CUDA_ARCH__
#define CUZK_PTX3(name, op, emul)                                                      \
  __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b, uint32_t c) {      \
    uint32_t r;                                                                        \
    asm volatile(op " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));            \
    return r;                                                                          \
  }
#define CUZK_PTX2(name, op, emul)                                                      \
  __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b) {                  \
    uint32_t r;                                                                        \
    asm volatile(op " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));                        \
    return r;                                                                          \
  }
#else
inline thread_local uint32_t g_cc = 0;  // the emulated carry/borrow flag
#define CUZK_PTX3(name, op, emul)                                                      \
  inline uint32_t name(uint32_t a, uint32_t b, uint32_t c) { emul }
#define CUZK_PTX2(name, op, emul) inline uint32_t name(uint32_t a, uint32_t b) { emul }
#endif
#define CUZK_MAD(part, cin, cout)                                                      \
  uint64_t p = (uint64_t)a * b;                                                        \
  uint64_t s = (uint64_t)(uint32_t)(p >> part) + c + (cin ? g_cc : 0);                 \
  if (cout) g_cc = (uint32_t)(s >> 32);                                                \
  return (uint32_t)s;
CUZK_PTX3(mad_lo_cc, "mad.lo.cc.u32", CUZK_MAD(0, false, true))
CUZK_PTX3(madc_lo_cc, "madc.lo.cc.u32", CUZK_MAD(0, true, true))
CUZK_PTX3(mad_hi_cc, "mad.hi.cc.u32", CUZK_MAD(32, false, true))
CUZK_PTX3(madc_hi_cc, "madc.hi.cc.u32", CUZK_MAD(32, true, true))
CUZK_PTX3(madc_hi, "madc.hi.u32", CUZK_MAD(32, true, false))
CUZK_PTX2(mul_lo, "mul.lo.u32", return (uint32_t)((uint64_t)a * b);)
CUZK_PTX2(mul_hi, "mul.hi.u32", return (uint32_t)(((uint64_t)a * b) >> 32);)
#define CUZK_ADD(cin, cout)                                                            \
  uint64_t s = (uint64_t)a + b + (cin ? g_cc : 0);                                     \
  if (cout) g_cc = (uint32_t)(s >> 32);                                                \
  return (uint32_t)s;
#define CUZK_SUB(cin, cout)                                                            \
  uint64_t s = (uint64_t)a - b - (cin ? g_cc : 0);                                     \
  if (cout) g_cc = (uint32_t)(s >> 63);                                                \
  return (uint32_t)s;
CUZK_PTX2(add_cc, "add.cc.u32", CUZK_ADD(false, true))
CUZK_PTX2(addc_cc, "addc.cc.u32", CUZK_ADD(true, true))
CUZK_PTX2(addc, "addc.u32", CUZK_ADD(true, false))
CUZK_PTX2(sub_cc, "sub.cc.u32", CUZK_SUB(false, true))
CUZK_PTX2(subc_cc, "subc.cc.u32", CUZK_SUB(true, true))
CUZK_PTX2(subc, "subc.u32", CUZK_SUB(true, false))
#undef CUZK_PTX3
#undef CUZK_PTX2
#undef CUZK_MAD
#undef CUZK_ADD
#undef CUZK_SUB
}  // namespace ptx

// t = a * b for K-limb a and b (K even), 2K limbs. Rows of multiply-adds in two chains, even and
// odd limbs of a, so that every lo/hi pair lands on an aligned register pair (see DFp::mul).
template <int K>
CUZK_DHD void limbs_mul_wide(const uint32_t (&a)[K], const uint32_t (&b)[K], uint32_t (&t)[2 * K]) {
  static_assert(K % 2 == 0, "even limb count");
CUZK_UNROLL
  for (int k = 0; k < 2 * K; k++) t[k] = 0;
CUZK_UNROLL
  for (int i = 0; i < K; i++) {
    const uint32_t bi = b[i];
    t[i] = ptx::mad_lo_cc(a[0], bi, t[i]);
    t[i + 1] = ptx::madc_hi_cc(a[0], bi, t[i + 1]);
CUZK_UNROLL
    for (int j = 2; j < K; j += 2) {
      t[i + j] = ptx::madc_lo_cc(a[j], bi, t[i + j]);
      t[i + j + 1] = ptx::madc_hi_cc(a[j], bi, t[i + j + 1]);
    }
    t[i + K] = ptx::addc(t[i + K], 0);
    t[i + 1] = ptx::mad_lo_cc(a[1], bi, t[i + 1]);
CUZK_UNROLL
    for (int j = 1; j < K - 1; j += 2) {
      t[i + j + 1] = ptx::madc_hi_cc(a[j], bi, t[i + j + 1]);
      t[i + j + 2] = ptx::madc_lo_cc(a[j + 2], bi, t[i + j + 2]);
    }
    t[i + K] = ptx::madc_hi(a[K - 1], bi, t[i + K]);
  }
}

// The same product by one level of Karatsuba on halves of H = K/2 limbs: a0 b0, a1 b1 and
// (a0 + a1)(b0 + b1) (the sums' carry bits added as masked halves), 3/4 of the multiply-adds, in
// three carry chains half as long and independent of each other.
template <int K>
CUZK_DHD void limbs_mul_wide_halves(const uint32_t (&a)[K], const uint32_t (&b)[K], uint32_t (&t)[2 * K]) {
  constexpr int H = K / 2;
  static_assert(H % 2 == 0, "halves of an even limb count");
  uint32_t a0[H], a1[H], b0[H], b1[H], sa[H], sb[H];
CUZK_UNROLL
  for (int k = 0; k < H; k++) a0[k] = a[k], a1[k] = a[H + k], b0[k] = b[k], b1[k] = b[H + k];
  sa[0] = ptx::add_cc(a0[0], a1[0]);
CUZK_UNROLL
  for (int k = 1; k < H; k++) sa[k] = ptx::addc_cc(a0[k], a1[k]);
  const uint32_t ca = ptx::addc(0, 0);
  sb[0] = ptx::add_cc(b0[0], b1[0]);
CUZK_UNROLL
  for (int k = 1; k < H; k++) sb[k] = ptx::addc_cc(b0[k], b1[k]);
  const uint32_t cb = ptx::addc(0, 0);
  uint32_t lo[2 * H], hi[2 * H], mid[2 * H];
  limbs_mul_wide<H>(a0, b0, lo);
  limbs_mul_wide<H>(a1, b1, hi);
  limbs_mul_wide<H>(sa, sb, mid);
  // (mid, top) = (sa + ca 2^32H)(sb + cb 2^32H) - lo - hi = a0 b1 + a1 b0 < 2^(64H+1)
  uint32_t top = ca & cb;
  const uint32_t mask_a = 0u - ca, mask_b = 0u - cb;
  mid[H] = ptx::add_cc(mid[H], sb[0] & mask_a);
CUZK_UNROLL
  for (int k = 1; k < H; k++) mid[H + k] = ptx::addc_cc(mid[H + k], sb[k] & mask_a);
  top = ptx::addc(top, 0);
  mid[H] = ptx::add_cc(mid[H], sa[0] & mask_b);
CUZK_UNROLL
  for (int k = 1; k < H; k++) mid[H + k] = ptx::addc_cc(mid[H + k], sa[k] & mask_b);
  top = ptx::addc(top, 0);
  mid[0] = ptx::sub_cc(mid[0], lo[0]);
CUZK_UNROLL
  for (int k = 1; k < 2 * H; k++) mid[k] = ptx::subc_cc(mid[k], lo[k]);
  top = ptx::subc(top, 0);
  mid[0] = ptx::sub_cc(mid[0], hi[0]);
CUZK_UNROLL
  for (int k = 1; k < 2 * H; k++) mid[k] = ptx::subc_cc(mid[k], hi[k]);
  top = ptx::subc(top, 0);
  // t = lo + (mid, top) 2^32H + hi 2^64H (< 2^64K: no carry leaves the top limb)
CUZK_UNROLL
  for (int k = 0; k < 2 * H; k++) t[k] = lo[k], t[2 * H + k] = hi[k];
  t[H] = ptx::add_cc(t[H], mid[0]);
CUZK_UNROLL
  for (int k = 1; k < 2 * H; k++) t[H + k] = ptx::addc_cc(t[H + k], mid[k]);
  t[3 * H] = ptx::addc_cc(t[3 * H], top);
CUZK_UNROLL
  for (int k = 3 * H + 1; k < 4 * H - 1; k++) t[k] = ptx::addc_cc(t[k], 0);
  t[4 * H - 1] = ptx::addc(t[4 * H - 1], 0);
}

// Element of GF(p) for the host parameter set P, as a*R mod p in N = 2*P::LIMBS 32-bit limbs.
// Values are kept fully reduced (< p), like the host's, so == compares representations.
// Calls says which operations are real calls on the device rather than inlined: for the G2
// formulas over Fp2, where inlining every 12-limb product makes kernels of tens of thousands of
// instructions that take nvcc many minutes to compile and spill anyway, and for long loops of
// 12-limb G1 additions, which run faster with their products as calls (curves.cuh's FqWalk).
// HalfProducts: the Fp2 product's wide products by Karatsuba halves (limbs_mul_wide_halves).
enum DFpCalls : int { kInlineProducts = 0, kCalledProducts = 1, kCalledProductsAndSquares = 2 };
template <class P, int Calls = kInlineProducts, bool HalfProducts = false>
struct DFp {
  static constexpr int N = 2 * P::LIMBS;
  static constexpr size_t BYTES = 4 * N;
  using Params = P;
  uint32_t l[N];

  // The CIOS product below keeps N+1 limbs only: it needs p < 2^(32N-1) (true for all four fields).
  static_assert(P::MODULUS[P::LIMBS - 1] >> 63 == 0, "modulus must leave the top bit free");

  static CUZK_DHD DFp zero() {
    DFp r;
CUZK_UNROLL
    for (int i = 0; i < N; i++) r.l[i] = 0;
    return r;
  }
  static CUZK_DHD DFp one() {
    constexpr auto o = split64(P::ONE);
    DFp r;
CUZK_UNROLL
    for (int i = 0; i < N; i++) r.l[i] = o.v[i];
    return r;
  }
  static CUZK_DHD DFp r2() {
    constexpr auto o = split64(P::R2);
    DFp r;
CUZK_UNROLL
    for (int i = 0; i < N; i++) r.l[i] = o.v[i];
    return r;
  }
  static CUZK_DHD DFp modulus() {
    constexpr auto m = split64(P::MODULUS);
    DFp r;
CUZK_UNROLL
    for (int i = 0; i < N; i++) r.l[i] = m.v[i];
    return r;
  }

  CUZK_DHD bool is_zero() const {
    uint32_t acc = 0;
CUZK_UNROLL
    for (int i = 0; i < N; i++) acc |= l[i];
    return acc == 0;
  }
  CUZK_DHD bool operator==(const DFp& o) const {
    uint32_t acc = 0;
CUZK_UNROLL
    for (int i = 0; i < N; i++) acc |= l[i] ^ o.l[i];
    return acc == 0;
  }
  CUZK_DHD bool operator!=(const DFp& o) const { return !(*this == o); }

  // t - p when t >= p, else t (t < 2p, no limb above N).
  static CUZK_DHD DFp reduce_once(const uint32_t (&t)[N]) {
    constexpr auto m = split64(P::MODULUS);
    DFp s;
    s.l[0] = ptx::sub_cc(t[0], m.v[0]);
CUZK_UNROLL
    for (int i = 1; i < N; i++) s.l[i] = ptx::subc_cc(t[i], m.v[i]);
    uint32_t borrow = ptx::subc(0, 0);  // 0xffffffff when t < p
CUZK_UNROLL
    for (int i = 0; i < N; i++) s.l[i] = borrow ? t[i] : s.l[i];
    return s;
  }

  CUZK_DHD DFp operator+(const DFp& o) const {
    uint32_t t[N];
    t[0] = ptx::add_cc(l[0], o.l[0]);
CUZK_UNROLL
    for (int i = 1; i < N; i++) t[i] = ptx::addc_cc(l[i], o.l[i]);
    return reduce_once(t);
  }
  CUZK_DHD DFp operator-(const DFp& o) const {
    constexpr auto m = split64(P::MODULUS);
    DFp r;
    r.l[0] = ptx::sub_cc(l[0], o.l[0]);
CUZK_UNROLL
    for (int i = 1; i < N; i++) r.l[i] = ptx::subc_cc(l[i], o.l[i]);
    uint32_t mask = ptx::subc(0, 0);  // all ones on borrow: add p back
    r.l[0] = ptx::add_cc(r.l[0], m.v[0] & mask);
CUZK_UNROLL
    for (int i = 1; i < N; i++) r.l[i] = ptx::addc_cc(r.l[i], m.v[i] & mask);
    return r;
  }
  CUZK_DHD DFp operator-() const { return zero() - *this; }
  CUZK_DHD DFp dbl() const { return *this + *this; }
  CUZK_DHD DFp& operator+=(const DFp& o) { return *this = *this + o; }
  CUZK_DHD DFp& operator-=(const DFp& o) { return *this = *this - o; }
  CUZK_DHD DFp& operator*=(const DFp& o) { return *this = *this * o; }

  // Montgomery product, CIOS (one row per limb of b: t = (t + a*b_i + m_i*p) / 2^32) over two
  // accumulators, so that every multiply-add pair (lo at limb j, hi at j+1) lands on an aligned
  // register pair: ptxas fuses such a pair into one 64-bit IMAD.WIDE, and an accumulator that
  // shifted by one limb per row would need a move per product to re-pair (they were a quarter of
  // the NTT's instructions; docs/perf-log.md, CUDA #15). In a row, X holds limbs at positions
  // 0..N-1 (even products a_j*b_i, j even, and p_j*m_i) and Y at positions 1..N (odd ones). The
  // division by 2^32 is free: Y becomes the next row's X (positions down by one), and X the next
  // row's Y, read two limbs higher as the odd products are added into it (X's limb 1, the one left
  // over, is added to the new X's limb 0). p < R/2 keeps t < 2p after every row, so no chain
  // carries out of position N.
  CUZK_DHD DFp operator*(const DFp& b) const {
#ifdef __CUDA_ARCH__
    if constexpr (Calls >= kCalledProducts) return mul_call(*this, b);
#endif
    return mul(b);
  }
#ifdef __CUDACC__
  static __device__ __noinline__ DFp mul_call(DFp a, DFp b) { return a.mul(b); }
#endif
  CUZK_DHD DFp mul(const DFp& b) const {
    uint32_t e[N], o[N];
    mul_row<true>(e, o, b.l[0]);
CUZK_UNROLL
    for (int i = 1; i < N; i++) {
      if (i & 1)
        mul_row<false>(o, e, b.l[i]);
      else
        mul_row<false>(e, o, b.l[i]);
    }
    // N is even: the last row's X is o and Y is e; t = Y + (X >> 32)
    uint32_t r[N];
    r[0] = ptx::add_cc(e[0], o[1]);
CUZK_UNROLL
    for (int k = 1; k < N - 1; k++) r[k] = ptx::addc_cc(e[k], o[k + 1]);
    r[N - 1] = ptx::addc(e[N - 1], 0);
    return reduce_once(r);
  }

  // Row i of mul(): X (positions 0..N-1) and Y (positions 1..N) on return; on entry (i > 0) X is
  // the previous row's Y, one position down, and Y the previous row's X, at positions -1..N-2.
  template <bool First>
  CUZK_DHD void mul_row(uint32_t (&x)[N], uint32_t (&y)[N], uint32_t bi) const {
    if (First) {
CUZK_UNROLL
      for (int j = 0; j < N; j += 2) {
        y[j] = ptx::mul_lo(l[j + 1], bi);
        y[j + 1] = ptx::mul_hi(l[j + 1], bi);
        x[j] = ptx::mul_lo(l[j], bi);
        x[j + 1] = ptx::mul_hi(l[j], bi);
      }
    } else {
      // Y's limb at position 0 joins X; the odd products go into Y two limbs up, so Y's pairs stay
      // aligned; the carry of the first add (into position 1) rides the same chain.
      x[0] = ptx::add_cc(x[0], y[1]);
CUZK_UNROLL
      for (int j = 0; j < N - 2; j += 2) {
        y[j] = ptx::madc_lo_cc(l[j + 1], bi, y[j + 2]);
        y[j + 1] = ptx::madc_hi_cc(l[j + 1], bi, y[j + 3]);
      }
      y[N - 2] = ptx::madc_lo_cc(l[N - 1], bi, 0);
      y[N - 1] = ptx::madc_hi(l[N - 1], bi, 0);
      // the even products into X; its carry out of position N-1 into Y's top limb (position N)
      x[0] = ptx::mad_lo_cc(l[0], bi, x[0]);
      x[1] = ptx::madc_hi_cc(l[0], bi, x[1]);
CUZK_UNROLL
      for (int j = 2; j < N; j += 2) {
        x[j] = ptx::madc_lo_cc(l[j], bi, x[j]);
        x[j + 1] = ptx::madc_hi_cc(l[j], bi, x[j + 1]);
      }
      y[N - 1] = ptx::addc(y[N - 1], 0);
    }
    if constexpr (kMontFriendly)
      reduce_row_friendly(x, y);
    else
      reduce_row(x, y);
  }

  // t += m_i * p with m_i = t_0 * -p^-1 mod 2^32, making X's limb 0 zero (it is not read again).
  static CUZK_DHD void reduce_row(uint32_t (&x)[N], uint32_t (&y)[N]) {
    constexpr auto m = split64(P::MODULUS);
    constexpr uint32_t inv = (uint32_t)P::INV;  // -p^-1 mod 2^32 is the low half of -p^-1 mod 2^64
    const uint32_t mi = x[0] * inv;
    y[0] = ptx::mad_lo_cc(m.v[1], mi, y[0]);
    y[1] = ptx::madc_hi_cc(m.v[1], mi, y[1]);
CUZK_UNROLL
    for (int j = 2; j < N - 2; j += 2) {
      y[j] = ptx::madc_lo_cc(m.v[j + 1], mi, y[j]);
      y[j + 1] = ptx::madc_hi_cc(m.v[j + 1], mi, y[j + 1]);
    }
    y[N - 2] = ptx::madc_lo_cc(m.v[N - 1], mi, y[N - 2]);
    y[N - 1] = ptx::madc_hi(m.v[N - 1], mi, y[N - 1]);
    x[0] = ptx::mad_lo_cc(m.v[0], mi, x[0]);
    x[1] = ptx::madc_hi_cc(m.v[0], mi, x[1]);
CUZK_UNROLL
    for (int j = 2; j < N; j += 2) {
      x[j] = ptx::madc_lo_cc(m.v[j], mi, x[j]);
      x[j + 1] = ptx::madc_hi_cc(m.v[j], mi, x[j + 1]);
    }
    y[N - 1] = ptx::addc(y[N - 1], 0);
  }

  // Moduli with p = 1 (mod 2^32) and a second limb of 0xffffffff (BLS12-381's r, two-adicity 32)
  // save four multiplies per row: m_i = -t_0 (as -p^-1 = -1 mod 2^32), m_i * p_0 = m_i (no high
  // half), and the low half of m_i * (2^32 - 1) is -m_i = t_0 (docs/perf-log.md, CUDA #13).
  static constexpr bool kMontFriendly = split64(P::MODULUS).v[0] == 1 &&
                                        split64(P::MODULUS).v[1] == 0xffffffffu && (uint32_t)P::INV == 0xffffffffu;

  static CUZK_DHD void reduce_row_friendly(uint32_t (&x)[N], uint32_t (&y)[N]) {
    constexpr auto m = split64(P::MODULUS);
    const uint32_t t0 = x[0];
    const uint32_t mi = 0u - t0;
    // Y: the high half of m_i * p_1 (position 2), then the odd limbs' products
    y[1] = ptx::mad_hi_cc(m.v[1], mi, y[1]);
CUZK_UNROLL
    for (int j = 2; j < N - 2; j += 2) {
      y[j] = ptx::madc_lo_cc(m.v[j + 1], mi, y[j]);
      y[j + 1] = ptx::madc_hi_cc(m.v[j + 1], mi, y[j + 1]);
    }
    y[N - 2] = ptx::madc_lo_cc(m.v[N - 1], mi, y[N - 2]);
    y[N - 1] = ptx::madc_hi(m.v[N - 1], mi, y[N - 1]);
    // X: position 0 (t_0 + m_i = 0 mod 2^32, carry = t_0 != 0), position 1 (the low half of
    // m_i * p_1, which is t_0), then the even limbs' products
    (void)ptx::add_cc(t0, mi);
    x[1] = ptx::addc_cc(x[1], t0);
CUZK_UNROLL
    for (int j = 2; j < N; j += 2) {
      x[j] = ptx::madc_lo_cc(m.v[j], mi, x[j]);
      x[j + 1] = ptx::madc_hi_cc(m.v[j], mi, x[j + 1]);
    }
    y[N - 1] = ptx::addc(y[N - 1], 0);
  }

  // Square: each cross product a_i*a_j (i < j) once, doubled, plus the diagonal; then the
  // Montgomery reduction of the low half, to which the high half is added: REDC(T) = T_hi +
  // (T_lo + M p) / R < p + p/2, so one final subtraction. ~3N^2 multiply-adds against 4N^2.
  CUZK_DHD DFp sqr() const {
#ifdef __CUDA_ARCH__
    if constexpr (Calls >= kCalledProductsAndSquares) return sqr_call(*this);
#endif
    return sqr_inline();
  }
#ifdef __CUDACC__
  static __device__ __noinline__ DFp sqr_call(DFp a) { return a.sqr_inline(); }
#endif
  CUZK_DHD DFp sqr_inline() const {
    uint32_t t[2 * N];
    CUZK_UNROLL
    for (int k = 0; k < 2 * N; k++) t[k] = 0;
    // Cross products, row i: j > i. The chain that ends at j = N-2 goes first (its carry lands in
    // t[i+N], still zero), then the one that ends at j = N-1 (writes t[i+N]; the partial sum after
    // row i is below 2^(32(i+N+1)), so nothing carries out of it).
    CUZK_UNROLL
    for (int i = 0; i < N - 1; i++) {
      const int y0 = ((N - 2 - (i + 1)) % 2 == 0) ? i + 1 : i + 2;  // first j of the chain ending at N-2
      const int x0 = y0 == i + 1 ? i + 2 : i + 1;                   // first j of the chain ending at N-1
      if (y0 <= N - 2) {
        t[i + y0] = ptx::mad_lo_cc(l[i], l[y0], t[i + y0]);
        t[i + y0 + 1] = ptx::madc_hi_cc(l[i], l[y0], t[i + y0 + 1]);
        CUZK_UNROLL
        for (int j = y0 + 2; j <= N - 2; j += 2) {
          t[i + j] = ptx::madc_lo_cc(l[i], l[j], t[i + j]);
          t[i + j + 1] = ptx::madc_hi_cc(l[i], l[j], t[i + j + 1]);
        }
        t[i + N] = ptx::addc(0, 0);
      }
      t[i + x0] = ptx::mad_lo_cc(l[i], l[x0], t[i + x0]);
      if (x0 == N - 1) {
        t[i + N] = ptx::madc_hi(l[i], l[x0], t[i + N]);
      } else {
        t[i + x0 + 1] = ptx::madc_hi_cc(l[i], l[x0], t[i + x0 + 1]);
        CUZK_UNROLL
        for (int j = x0 + 2; j < N - 1; j += 2) {
          t[i + j] = ptx::madc_lo_cc(l[i], l[j], t[i + j]);
          t[i + j + 1] = ptx::madc_hi_cc(l[i], l[j], t[i + j + 1]);
        }
        t[i + N - 1] = ptx::madc_lo_cc(l[i], l[N - 1], t[i + N - 1]);
        t[i + N] = ptx::madc_hi(l[i], l[N - 1], t[i + N]);
      }
    }
    // Double (the cross sum is below 2^(64N-1)), then add the squares a_i^2.
    CUZK_UNROLL
    for (int k = 2 * N - 1; k > 0; k--) t[k] = (t[k] << 1) | (t[k - 1] >> 31);
    t[0] <<= 1;
    t[0] = ptx::mad_lo_cc(l[0], l[0], t[0]);
    t[1] = ptx::madc_hi_cc(l[0], l[0], t[1]);
    CUZK_UNROLL
    for (int i = 1; i < N - 1; i++) {
      t[2 * i] = ptx::madc_lo_cc(l[i], l[i], t[2 * i]);
      t[2 * i + 1] = ptx::madc_hi_cc(l[i], l[i], t[2 * i + 1]);
    }
    t[2 * N - 2] = ptx::madc_lo_cc(l[N - 1], l[N - 1], t[2 * N - 2]);
    t[2 * N - 1] = ptx::madc_hi(l[N - 1], l[N - 1], t[2 * N - 1]);
    return redc_wide(t);  // T = a^2 < p^2 < pR
  }

  // ---- Lazy-reduction Karatsuba product in Fp2 = Fp[u]/(u^2+1), for the G2 formulas ----
  // Three wide (2N-limb) products a0*b0, a1*b1, (a0+a1)*(b0+b1) and two Montgomery reductions
  // instead of three full products: 10N^2 + 2N multiply-adds against 12N^2 + 3N.
  // Bounds: a0+a1 < 2p < R unreduced; c1 = T2 - T0 - T1 = a0 b1 + a1 b0 < 2p^2 < pR;
  // c0 = T0 - T1 (+ pR when negative) in [0, pR); REDC of T < pR is < 2p, one subtraction.
  static CUZK_DHD void mul_wide(const DFp& a, const DFp& b, uint32_t (&t)[2 * N]) {
    if constexpr (HalfProducts) limbs_mul_wide_halves<N>(a.l, b.l, t);
    else limbs_mul_wide<N>(a.l, b.l, t);
  }
  // T R^-1 mod p for T < pR: (T_lo + M p) / R <= p, plus T_hi < p. Shared by sqr() and the
  // Fp2 Karatsuba product.
  static CUZK_DHD DFp redc_wide(const uint32_t (&t)[2 * N]) {
    constexpr auto m = split64(P::MODULUS);
    constexpr uint32_t inv = (uint32_t)P::INV;
    uint32_t a[N + 1];
CUZK_UNROLL
    for (int k = 0; k < N; k++) a[k] = t[k];
    a[N] = 0;
CUZK_UNROLL
    for (int i = 0; i < N; i++) {
      const uint32_t mi = a[0] * inv;
      a[0] = ptx::mad_lo_cc(m.v[0], mi, a[0]);
      a[1] = ptx::madc_hi_cc(m.v[0], mi, a[1]);
CUZK_UNROLL
      for (int j = 2; j < N; j += 2) {
        a[j] = ptx::madc_lo_cc(m.v[j], mi, a[j]);
        a[j + 1] = ptx::madc_hi_cc(m.v[j], mi, a[j + 1]);
      }
      a[N] = ptx::addc(a[N], 0);
      a[1] = ptx::mad_lo_cc(m.v[1], mi, a[1]);
CUZK_UNROLL
      for (int j = 1; j < N - 1; j += 2) {
        a[j + 1] = ptx::madc_hi_cc(m.v[j], mi, a[j + 1]);
        a[j + 2] = ptx::madc_lo_cc(m.v[j + 2], mi, a[j + 2]);
      }
      a[N] = ptx::madc_hi(m.v[N - 1], mi, a[N]);
CUZK_UNROLL
      for (int j = 0; j < N; j++) a[j] = a[j + 1];
      a[N] = 0;
    }
    uint32_t r[N];
    r[0] = ptx::add_cc(a[0], t[N]);
CUZK_UNROLL
    for (int k = 1; k < N; k++) r[k] = ptx::addc_cc(a[k], t[N + k]);
    return reduce_once(r);
  }
  struct Pair {
    DFp c0, c1;
  };
  static CUZK_DHD Pair fp2_mul_lazy(const DFp& a0, const DFp& a1, const DFp& b0, const DFp& b1) {
    constexpr auto m = split64(P::MODULUS);
    DFp sa, sb;  // a0 + a1, b0 + b1, unreduced
    sa.l[0] = ptx::add_cc(a0.l[0], a1.l[0]);
CUZK_UNROLL
    for (int i = 1; i < N; i++) sa.l[i] = ptx::addc_cc(a0.l[i], a1.l[i]);
    sb.l[0] = ptx::add_cc(b0.l[0], b1.l[0]);
CUZK_UNROLL
    for (int i = 1; i < N; i++) sb.l[i] = ptx::addc_cc(b0.l[i], b1.l[i]);
    uint32_t t0[2 * N], t1[2 * N], t2[2 * N];
    mul_wide(a0, b0, t0);
    mul_wide(a1, b1, t1);
    mul_wide(sa, sb, t2);
    // t2 -= t0 + t1 (never negative)
    t2[0] = ptx::sub_cc(t2[0], t0[0]);
CUZK_UNROLL
    for (int k = 1; k < 2 * N; k++) t2[k] = ptx::subc_cc(t2[k], t0[k]);
    t2[0] = ptx::sub_cc(t2[0], t1[0]);
CUZK_UNROLL
    for (int k = 1; k < 2 * N; k++) t2[k] = ptx::subc_cc(t2[k], t1[k]);
    // t0 -= t1, + p*R on borrow
    t0[0] = ptx::sub_cc(t0[0], t1[0]);
CUZK_UNROLL
    for (int k = 1; k < 2 * N; k++) t0[k] = ptx::subc_cc(t0[k], t1[k]);
    const uint32_t mask = ptx::subc(0, 0);
    t0[N] = ptx::add_cc(t0[N], m.v[0] & mask);
CUZK_UNROLL
    for (int k = 1; k < N; k++) t0[N + k] = ptx::addc_cc(t0[N + k], m.v[k] & mask);
    return Pair{redc_wide(t0), redc_wide(t2)};
  }
#ifdef __CUDACC__
  static __device__ __noinline__ Pair fp2_mul_call(DFp a0, DFp a1, DFp b0, DFp b1) {
    return fp2_mul_lazy(a0, a1, b0, b1);
  }
#endif
  static CUZK_DHD Pair fp2_mul(const DFp& a0, const DFp& a1, const DFp& b0, const DFp& b1) {
#ifdef __CUDA_ARCH__
    if constexpr (Calls >= kCalledProducts) return fp2_mul_call(a0, a1, b0, b1);
#endif
    return fp2_mul_lazy(a0, a1, b0, b1);
  }

  CUZK_DHD DFp to_mont() const { return *this * r2(); }
  CUZK_DHD DFp from_mont() const {
    DFp one_raw = zero();
    one_raw.l[0] = 1;
    return *this * one_raw;
  }

  // this^e, e given as 32-bit limbs (little-endian). Off the hot paths (test data, inversions).
  CUZK_DHD DFp pow(const uint32_t* e, int e_limbs) const {
    DFp r = one();
    for (int i = e_limbs - 1; i >= 0; i--)
      for (int b = 31; b >= 0; b--) {
        r = r.sqr();
        if ((e[i] >> b) & 1) r = r * *this;
      }
    return r;
  }
  // Fermat inverse (a^(p-2)); 0 maps to 0.
  CUZK_DHD DFp inverse() const {
    constexpr auto m = split64(P::MODULUS);
    uint32_t e[N];
CUZK_UNROLL
    for (int i = 0; i < N; i++) e[i] = m.v[i];
    // p - 2 (the low 32-bit limb can be 1, as in BLS12-381's r: propagate the borrow)
    for (int i = 0, borrow = 2; i < N && borrow; i++) {
      uint32_t before = e[i];
      e[i] -= (uint32_t)borrow;
      borrow = e[i] > before ? 1 : 0;
    }
    return pow(e, N);
  }
};

}  // namespace cuzk::cuda
