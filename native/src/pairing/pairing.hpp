// Optimal ate pairing e: G1 x G2 -> GT (a subgroup of Fq12*) on BN254 and BLS12-381, and the
// multi-pairing product check that Groth16 verification reduces to.
//
// Miller loop: T runs over the twist E'(Fq2) in homogeneous projective coordinates, so no step
// inverts; each line is evaluated at P and multiplied into f as a sparse Fq12 element. Every
// scale factor dropped on the way lies in a proper subfield (Fq2, Fq4 or Fq6), which the final
// exponentiation sends to 1.
//   BN254:     f_{6x+2,Q}(P) * l_{T,pi(Q)}(P) * l_{T+pi(Q),-pi^2(Q)}(P)
//   BLS12-381: conj(f_{|x|,Q}(P)), since x < 0 and 1/f = conj(f) after the easy part.
// Final exponentiation: the exact exponent (p^12 - 1)/r, so pairing() returns the reduced optimal
// ate pairing itself, not a fixed power of it.
#pragma once

#include <cstdint>
#include <vector>

#include "pairing/tower.hpp"

namespace cuzk::pairing {

template <class C> struct LoopParams;
template <> struct LoopParams<curve::Bn254> {
  static constexpr uint64_t X = 4965661367192848881ULL;  // the BN parameter x (positive)
  static constexpr bool X_NEGATIVE = false;
  static constexpr bool BN = true;
  static constexpr field::u128 ATE = (field::u128)6 * X + 2;  // 65 bits
};
template <> struct LoopParams<curve::Bls12381> {
  static constexpr uint64_t X = 0xd201000000010000ULL;  // |x|; x itself is negative
  static constexpr bool X_NEGATIVE = true;
  static constexpr bool BN = false;
  static constexpr field::u128 ATE = X;
};

// Non-adjacent form of the loop count, most significant digit first (the leading digit is 1):
// 21 addition steps instead of 36 for BN254's 6x+2 (BLS12-381's |x| has 5 either way).
template <class C>
const std::vector<int8_t>& ate_naf() {
  static const std::vector<int8_t> digits = [] {
    std::vector<int8_t> d;  // least significant first
    field::u128 n = LoopParams<C>::ATE;
    while (n) {
      int8_t z = 0;
      if (n & 1) {
        z = (n & 3) == 3 ? -1 : 1;
        n = z > 0 ? n - 1 : n + 1;
      }
      d.push_back(z);
      n >>= 1;
    }
    return std::vector<int8_t>(d.rbegin(), d.rend());
  }();
  return digits;
}

// Point on the twist in homogeneous projective coordinates: x = X/Z, y = Y/Z.
template <class C>
struct G2Proj {
  typename C::Fq2 X, Y, Z;
};

// A line through points of the twist, up to a subfield factor: at P it is c + cx*x_P + cy*y_P,
// each coefficient placed as Fq12::mul_by_line describes.
template <class C>
struct Line {
  typename C::Fq2 c, cx, cy;
};

// T <- 2T and the tangent at T. With B = Y^2, E = 3b'Z^2 (and Y^2 Z = X^3 + b'Z^3):
//   tangent: (3b'Z^2 - Y^2) + 3X^2 x_P - 2YZ y_P   (slope 3X^2/(2YZ), scaled by 2YZ^2/Z)
//   2T = (2XY(B - 3E), (B + 3E)^2 - 12E^2, 8 B YZ)  (the affine doubling, all scaled by 4).
template <class C>
inline Line<C> doubling_step(G2Proj<C>& T) {
  using Fq2 = typename C::Fq2;
  static const Fq2 b3 = mul_small(C::g2_b(), 3);
  Fq2 XY = T.X * T.Y, YZ = T.Y * T.Z, B = T.Y.sqr(), E = b3 * T.Z.sqr();
  Fq2 X2 = T.X.sqr();
  Line<C> l{E - B, X2.dbl() + X2, -YZ.dbl()};
  Fq2 E3 = E.dbl() + E;
  T.X = (XY * (B - E3)).dbl();
  T.Y = (B + E3).sqr() - mul_small(E.sqr(), 12);
  T.Z = (B * YZ).dbl().dbl().dbl();
  return l;
}

// T <- T + Q (Q affine) and the chord through them. theta = Y - y_Q Z, lam = X - x_Q Z (the slope
// is theta/lam):
//   chord: (theta x_Q - lam y_Q) - theta x_P + lam y_P
//   T + Q = (lam G, theta (F - G) - Y lam^3, Z lam^3), F = X lam^2, G = Z theta^2 + lam^3 - 2F.
template <class C>
inline Line<C> addition_step(G2Proj<C>& T, const typename C::G2& Q) {
  using Fq2 = typename C::Fq2;
  Fq2 theta = T.Y - Q.y * T.Z, lam = T.X - Q.x * T.Z;
  Line<C> l{theta * Q.x - lam * Q.y, -theta, lam};
  Fq2 D = lam.sqr(), E = lam * D, F = T.X * D;
  Fq2 G = T.Z * theta.sqr() + E - F.dbl();
  T.Y = theta * (F - G) - T.Y * E;
  T.X = lam * G;
  T.Z = T.Z * E;
  return l;
}

template <class C>
inline Fq12<C> mul_line_at(const Fq12<C>& f, const Line<C>& l, const typename C::G1& p) {
  return f.mul_by_line(l.c, l.cx.mul_base(p.x), l.cy.mul_base(p.y));
}

// Frobenius on the D-type twist, psi^-1 o pi_p o psi with psi(x, y) = (x w^2, y w^3):
// (x, y) -> (conj(x) xi^((p-1)/3), conj(y) xi^((p-1)/2)); k = 2 is the same without conjugation.
template <class C>
inline typename C::G2 twist_frobenius(const typename C::G2& q, int k) {
  const auto& g = FrobeniusCoeffs<C>::get().g[k];
  if (k & 1) return {q.x.conjugate() * g[2], q.y.conjugate() * g[3]};
  return {q.x * g[2], q.y * g[3]};
}

// prod_i f_i(P_i, Q_i) with one shared accumulator (one squaring per bit for all pairs). Pairs
// with a point at infinity contribute 1 and are skipped. Points must be on their curves; inputs
// outside the r-torsion give a value that means nothing, never a crash.
template <class C>
Fq12<C> miller_loop(const typename C::G1* p, const typename C::G2* q, size_t n) {
  using G1 = typename C::G1;
  using G2 = typename C::G2;
  using Fq2 = typename C::Fq2;
  std::vector<G1> ps;
  std::vector<G2> qs;
  for (size_t i = 0; i < n; i++)
    if (!p[i].is_infinity() && !q[i].is_infinity()) { ps.push_back(p[i]); qs.push_back(q[i]); }
  const size_t m = ps.size();
  std::vector<G2Proj<C>> T(m);
  for (size_t j = 0; j < m; j++) T[j] = {qs[j].x, qs[j].y, Fq2::one()};

  Fq12<C> f = Fq12<C>::one();
  const auto& naf = ate_naf<C>();
  for (size_t i = 1; i < naf.size(); i++) {
    if (i > 1) f = f.sqr();
    for (size_t j = 0; j < m; j++) f = mul_line_at(f, doubling_step(T[j]), ps[j]);
    if (naf[i] != 0)
      for (size_t j = 0; j < m; j++)
        f = mul_line_at(f, addition_step(T[j], naf[i] > 0 ? qs[j] : -qs[j]), ps[j]);
  }
  if constexpr (LoopParams<C>::X_NEGATIVE) f = f.conjugate();
  if constexpr (LoopParams<C>::BN) {
    for (size_t j = 0; j < m; j++) {
      G2 q1 = twist_frobenius<C>(qs[j], 1);
      G2 q2 = -twist_frobenius<C>(qs[j], 2);
      f = mul_line_at(f, addition_step(T[j], q1), ps[j]);
      f = mul_line_at(f, addition_step(T[j], q2), ps[j]);
    }
  }
  return f;
}

// f^((p^4 - p^2 + 1)/r) for f in the cyclotomic subgroup, through the base-p digits of the
// exponent written as polynomials in x (with y^(-k) = conj(y^k) there).
template <class C>
Fq12<C> final_exponentiation_hard(const Fq12<C>& f) {
  using F12 = Fq12<C>;
  constexpr uint64_t x = LoopParams<C>::X;
  if constexpr (LoopParams<C>::BN) {
    // (p^4 - p^2 + 1)/r = l0 + l1 p + l2 p^2 + p^3 with
    //   l0 = -36x^3 - 30x^2 - 18x - 2, l1 = -36x^3 - 18x^2 - 12x + 1, l2 = 6x^2 + 1.
    F12 a = f.cyclotomic_pow(x), b = a.cyclotomic_pow(x), c = b.cyclotomic_pow(x);
    F12 u0 = (c.cyclotomic_pow(6) * b.cyclotomic_pow(5) * a.cyclotomic_pow(3)).cyclotomic_pow(6) *
             f.cyclotomic_sqr();
    F12 u1 = (c.cyclotomic_pow(6) * b.cyclotomic_pow(3) * a.cyclotomic_sqr()).cyclotomic_pow(6);
    F12 f0 = u0.conjugate(), f1 = u1.conjugate() * f, f2 = b.cyclotomic_pow(6) * f;
    return f0 * f1.frobenius(1) * f2.frobenius(2) * f.frobenius(3);
  } else {
    // BLS12: 3 (p^4 - p^2 + 1)/r = (x - 1)^2 (x + p)(x^2 + p^2 - 1) + 3, and 3 | (x - 1)^2, so
    // (p^4 - p^2 + 1)/r = ((x - 1)^2 / 3)(x + p)(x^2 + p^2 - 1) + 1. Here x = -|x|.
    constexpr field::u128 e1 = ((field::u128)x + 1) * ((field::u128)x + 1) / 3;
    F12 g = f.cyclotomic_pow(e1);
    F12 h = g.cyclotomic_pow(x).conjugate() * g.frobenius(1);
    F12 k = h.cyclotomic_pow(x).cyclotomic_pow(x) * h.frobenius(2) * h.conjugate();
    return k * f;
  }
}

// f^((p^12 - 1)/r): easy part f^((p^6 - 1)(p^2 + 1)), which lands in the cyclotomic subgroup, then
// the hard part. f = 0 (only from degenerate inputs) maps to 0.
template <class C>
Fq12<C> final_exponentiation(const Fq12<C>& f) {
  Fq12<C> t = f.conjugate() * f.inverse();
  t = t.frobenius(2) * t;
  return final_exponentiation_hard(t);
}

template <class C>
Fq12<C> pairing(const typename C::G1& p, const typename C::G2& q) {
  return final_exponentiation(miller_loop<C>(&p, &q, 1));
}

// e(P, Q) as snarkjs (ffjavascript) and @noble/curves give it, e.g. snarkjs's vk_alphabeta_12.
// Their final exponentiations raise to a fixed multiple m of (p^12 - 1)/r (the hard-part addition
// chains they use), so their value is pairing()^m:
//   BN254:     m = 2x(6x^2 + 3x + 1)  (Fuentes-Castaneda, Knapp, Rodriguez-Henriquez)
//   BLS12-381: m = 3                  (Hayashida, Hayasaka, Teruya)
// m is prime to r: this is a pairing as good as pairing() (bilinear, non-degenerate), only another one.
template <class C>
Fq12<C> pairing_snarkjs(const typename C::G1& p, const typename C::G2& q) {
  Fq12<C> e = pairing<C>(p, q);  // in the cyclotomic subgroup, where cyclotomic_pow applies
  if constexpr (LoopParams<C>::BN) {
    constexpr field::u128 x = LoopParams<C>::X;
    return e.cyclotomic_pow(6 * x * x + 3 * x + 1).cyclotomic_pow(2 * x);  // 6x^2 + 3x + 1 < 2^128
  } else {
    return e.cyclotomic_sqr() * e;
  }
}

// prod_i e(P_i, Q_i) == 1, sharing the Miller loop accumulator and one final exponentiation.
template <class C>
bool pairing_product_is_one(const typename C::G1* p, const typename C::G2* q, size_t n) {
  return final_exponentiation(miller_loop<C>(p, q, n)).is_one();
}

}  // namespace cuzk::pairing
