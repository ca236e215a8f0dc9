// The degree-12 tower the pairing lands in, generic over the curve bundle C:
//   Fq6  = Fq2[v] / (v^3 - xi),   Fq12 = Fq6[w] / (w^2 - v),
// xi = 9 + u on BN254 and 1 + u on BLS12-381 (the same tower as @noble/curves and snarkjs, so
// coefficients compare one to one). Over Fq2, Fq12 has the basis w^0..w^5; Fq12 stores them as
// c0 = (w^0, w^2, w^4) and c1 = (w^1, w^3, w^5).
// Frobenius coefficients are derived from xi at first use, not pasted.
#pragma once

#include <cstdint>

#include "curve/curves.hpp"

namespace cuzk::pairing {

// Sextic twist kind: D-type (E': y^2 = x^3 + b/xi, BN254) or M-type (b*xi, BLS12-381). It decides
// where the three non-zero line coefficients sit in Fq12.
enum class Twist { D, M };

template <class C> struct TowerParams;
template <> struct TowerParams<curve::Bn254> {
  static constexpr uint64_t XI_C0 = 9;  // xi = 9 + u
  static constexpr Twist TWIST = Twist::D;
};
template <> struct TowerParams<curve::Bls12381> {
  static constexpr uint64_t XI_C0 = 1;  // xi = 1 + u
  static constexpr Twist TWIST = Twist::M;
};

// k * a for a small constant k, by doublings and additions (cheaper than a Montgomery product).
template <class F>
inline F mul_small(const F& a, uint64_t k) {
  F acc = F::zero(), base = a;
  while (k) {
    if (k & 1) acc = acc + base;
    k >>= 1;
    if (k) base = base.dbl();
  }
  return acc;
}

// a^e over any field type with one()/sqr()/operator*, e as little-endian 64-bit limbs.
template <class F>
inline F pow_limbs(const F& a, const uint64_t* e, int limbs) {
  F r = F::one();
  for (int i = limbs - 1; i >= 0; i--)
    for (int b = 63; b >= 0; b--) {
      r = r.sqr();
      if ((e[i] >> b) & 1) r = r * a;
    }
  return r;
}

template <class C>
struct Fq6 {
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  Fq2 c0, c1, c2;

  static Fq6 zero() { return {Fq2::zero(), Fq2::zero(), Fq2::zero()}; }
  static Fq6 one() { return {Fq2::one(), Fq2::zero(), Fq2::zero()}; }
  bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  bool operator==(const Fq6& o) const { return c0 == o.c0 && c1 == o.c1 && c2 == o.c2; }
  bool operator!=(const Fq6& o) const { return !(*this == o); }

  // a * xi = (c0 + c1 u)(k + u) = (k c0 - c1) + (c0 + k c1) u
  static Fq2 mul_by_xi(const Fq2& a) {
    constexpr uint64_t k = TowerParams<C>::XI_C0;
    return {mul_small(a.c0, k) - a.c1, a.c0 + mul_small(a.c1, k)};
  }

  Fq6 operator+(const Fq6& o) const { return {c0 + o.c0, c1 + o.c1, c2 + o.c2}; }
  Fq6 operator-(const Fq6& o) const { return {c0 - o.c0, c1 - o.c1, c2 - o.c2}; }
  Fq6 operator-() const { return {-c0, -c1, -c2}; }
  Fq6 dbl() const { return {c0.dbl(), c1.dbl(), c2.dbl()}; }
  Fq6 mul_by_v() const { return {mul_by_xi(c2), c0, c1}; }  // v^3 = xi
  Fq6 mul_fq2(const Fq2& s) const { return {c0 * s, c1 * s, c2 * s}; }

  // Karatsuba over the three coefficients: 6 Fq2 products.
  Fq6 operator*(const Fq6& b) const {
    Fq2 t0 = c0 * b.c0, t1 = c1 * b.c1, t2 = c2 * b.c2;
    Fq2 r0 = t0 + mul_by_xi((c1 + c2) * (b.c1 + b.c2) - t1 - t2);
    Fq2 r1 = (c0 + c1) * (b.c0 + b.c1) - t0 - t1 + mul_by_xi(t2);
    Fq2 r2 = (c0 + c2) * (b.c0 + b.c2) - t0 - t2 + t1;
    return {r0, r1, r2};
  }
  // Chung-Hasan SQR2: 2 multiplications and 3 squarings in Fq2.
  Fq6 sqr() const {
    Fq2 s0 = c0.sqr(), s1 = (c0 * c1).dbl(), s2 = (c0 - c1 + c2).sqr();
    Fq2 s3 = (c1 * c2).dbl(), s4 = c2.sqr();
    return {s0 + mul_by_xi(s3), s1 + mul_by_xi(s4), s1 + s2 + s3 - s0 - s4};
  }
  // this * (b0 + b1 v): the shape of half a line.
  Fq6 mul_by_01(const Fq2& b0, const Fq2& b1) const {
    Fq2 t0 = c0 * b0, t1 = c1 * b1;
    Fq2 r0 = t0 + mul_by_xi(c2 * b1);
    Fq2 r1 = (c0 + c1) * (b0 + b1) - t0 - t1;
    Fq2 r2 = t1 + c2 * b0;
    return {r0, r1, r2};
  }
  // this * (b1 v)
  Fq6 mul_by_1(const Fq2& b1) const { return {mul_by_xi(c2 * b1), c0 * b1, c1 * b1}; }

  // Through the norm to Fq2: one Fq2 inversion.
  Fq6 inverse() const {
    Fq2 A = c0.sqr() - mul_by_xi(c1 * c2);
    Fq2 B = mul_by_xi(c2.sqr()) - c0 * c1;
    Fq2 Cc = c1.sqr() - c0 * c2;
    Fq2 norm = c0 * A + mul_by_xi(c2 * B + c1 * Cc);
    Fq2 inv = norm.inverse();
    return {A * inv, B * inv, Cc * inv};
  }
};

// xi^(i (p^k - 1) / 6) for k = 0..3, i = 0..5: x^(p^k) multiplies the w^i coefficient by these
// (after conjugating it when k is odd), and they also give the Frobenius on twist points.
template <class C>
struct FrobeniusCoeffs {
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  Fq2 g[4][6];

  static const FrobeniusCoeffs& get() {
    static const FrobeniusCoeffs table = make();
    return table;
  }

 private:
  static FrobeniusCoeffs make() {
    constexpr int N = Fq::N;
    // e = (p - 1) / 6 by schoolbook division from the top limb (p = 1 mod 6 on both curves).
    uint64_t e[N];
    uint64_t rem = 0;
    for (int i = N - 1; i >= 0; i--) {
      uint64_t limb = Fq::Params::MODULUS[i] - (i == 0 ? 1 : 0);  // p is odd: no borrow
      field::u128 cur = ((field::u128)rem << 64) | limb;
      e[i] = (uint64_t)(cur / 6);
      rem = (uint64_t)(cur % 6);
    }
    FrobeniusCoeffs t;
    Fq2 xi{Fq::from_u64(TowerParams<C>::XI_C0), Fq::one()};
    Fq2 g1 = pow_limbs(xi, e, N);
    for (int i = 0; i < 6; i++) t.g[0][i] = Fq2::one();
    Fq2 acc = Fq2::one();
    for (int i = 0; i < 6; i++) { t.g[1][i] = acc; acc = acc * g1; }
    // (p^k - 1) = (p^(k-1) - 1) p + (p - 1), and y^p = conj(y) on Fq2.
    for (int k = 2; k < 4; k++)
      for (int i = 0; i < 6; i++) t.g[k][i] = t.g[k - 1][i].conjugate() * t.g[1][i];
    return t;
  }
};

template <class C>
struct Fq12 {
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  using F6 = Fq6<C>;
  F6 c0, c1;

  static Fq12 zero() { return {F6::zero(), F6::zero()}; }
  static Fq12 one() { return {F6::one(), F6::zero()}; }
  bool is_one() const { return *this == one(); }
  bool operator==(const Fq12& o) const { return c0 == o.c0 && c1 == o.c1; }
  bool operator!=(const Fq12& o) const { return !(*this == o); }

  Fq12 operator+(const Fq12& o) const { return {c0 + o.c0, c1 + o.c1}; }
  Fq12 operator-(const Fq12& o) const { return {c0 - o.c0, c1 - o.c1}; }
  Fq12 operator*(const Fq12& b) const {
    F6 t0 = c0 * b.c0, t1 = c1 * b.c1;
    return {t0 + t1.mul_by_v(), (c0 + c1) * (b.c0 + b.c1) - t0 - t1};
  }
  Fq12& operator*=(const Fq12& b) { return *this = *this * b; }
  // (a + b w)^2 = (a + b)(a + b v) - ab - ab v  +  2ab w: 2 Fq6 products.
  Fq12 sqr() const {
    F6 ab = c0 * c1;
    F6 r0 = (c0 + c1) * (c0 + c1.mul_by_v()) - ab - ab.mul_by_v();
    return {r0, ab.dbl()};
  }
  // x^(p^6): w^(p^6) = -w. Equals the inverse on the cyclotomic subgroup.
  Fq12 conjugate() const { return {c0, -c1}; }
  Fq12 inverse() const {
    F6 t = (c0.sqr() - c1.sqr().mul_by_v()).inverse();
    return {c0 * t, -(c1 * t)};
  }

  // x^(p^k) for k = 1..3 (conjugate() is k = 6).
  Fq12 frobenius(int k) const {
    const auto& g = FrobeniusCoeffs<C>::get().g[k];
    auto f = [k](const Fq2& a) { return (k & 1) ? a.conjugate() : a; };
    return {{f(c0.c0), f(c0.c1) * g[2], f(c0.c2) * g[4]},
            {f(c1.c0) * g[1], f(c1.c1) * g[3], f(c1.c2) * g[5]}};
  }

  // Squaring in the cyclotomic subgroup (x^(p^4 - p^2 + 1) = 1: what the easy part of the final
  // exponentiation leaves), Granger-Scott: view Fq12 = Fq4[w]/(w^3 - t), Fq4 =
  // Fq2[t]/(t^2 - xi), x = A + B w + C w^2 with A = (w^0, w^3), B = (w^1, w^4), C = (w^2, w^5); then
  // x^2 = (3A^2 - 2 conj A) + (3 t C^2 + 2 conj B) w + (3B^2 - 2 conj C) w^2. 9 Fq2 squarings.
  Fq12 cyclotomic_sqr() const {
    Fq2 a0, a1, b0, b1, cc0, cc1;
    fq4_sqr(c0.c0, c1.c1, a0, a1);   // A^2
    fq4_sqr(c1.c0, c0.c2, b0, b1);   // B^2
    fq4_sqr(c0.c1, c1.c2, cc0, cc1);  // C^2
    Fq2 tc0 = F6::mul_by_xi(cc1), tc1 = cc0;  // t * C^2
    auto three_minus_two = [](const Fq2& s, const Fq2& x) { return (s - x).dbl() + s; };  // 3s - 2x
    auto three_plus_two = [](const Fq2& s, const Fq2& x) { return (s + x).dbl() + s; };   // 3s + 2x
    Fq12 r;
    r.c0.c0 = three_minus_two(a0, c0.c0);
    r.c1.c1 = three_plus_two(a1, c1.c1);
    r.c1.c0 = three_plus_two(tc0, c1.c0);
    r.c0.c2 = three_minus_two(tc1, c0.c2);
    r.c0.c1 = three_minus_two(b0, c0.c1);
    r.c1.c2 = three_plus_two(b1, c1.c2);
    return r;
  }

  // x^e on the cyclotomic subgroup, e given as a 128-bit unsigned integer.
  Fq12 cyclotomic_pow(field::u128 e) const {
    Fq12 r = one();
    bool started = false;
    for (int b = 127; b >= 0; b--) {
      if (started) r = r.cyclotomic_sqr();
      if ((e >> b) & 1) { r = started ? r * *this : *this; started = true; }
    }
    return r;
  }

  // this * line, with the line's three non-zero Fq2 coefficients: `c` (constant), `cx` (the x_P
  // term), `cy` (the y_P term). D-type twist: cy at w^0, cx at w^1, c at w^3. M-type (the line
  // multiplied by w^3, a factor the final exponentiation removes): c at w^0, cx at w^2, cy at w^3.
  Fq12 mul_by_line(const Fq2& c, const Fq2& cx, const Fq2& cy) const {
    if constexpr (TowerParams<C>::TWIST == Twist::D) {
      // l = l0 + l1 w with l0 = (cy, 0, 0), l1 = (cx, c, 0)
      F6 t0 = c0.mul_fq2(cy);
      F6 t1 = c1.mul_by_01(cx, c);
      F6 s = (c0 + c1).mul_by_01(cy + cx, c);
      return {t0 + t1.mul_by_v(), s - t0 - t1};
    } else {
      // l0 = (c, cx, 0), l1 = (0, cy, 0)
      F6 t0 = c0.mul_by_01(c, cx);
      F6 t1 = c1.mul_by_1(cy);
      F6 s = (c0 + c1).mul_by_01(c, cx + cy);
      return {t0 + t1.mul_by_v(), s - t0 - t1};
    }
  }

 private:
  // (x + y t)^2 in Fq4 = Fq2[t]/(t^2 - xi): (x^2 + xi y^2) + 2xy t, as (x+y)^2 - x^2 - y^2.
  static void fq4_sqr(const Fq2& x, const Fq2& y, Fq2& r0, Fq2& r1) {
    Fq2 x2 = x.sqr(), y2 = y.sqr();
    r0 = x2 + F6::mul_by_xi(y2);
    r1 = (x + y).sqr() - x2 - y2;
  }
};

}  // namespace cuzk::pairing
