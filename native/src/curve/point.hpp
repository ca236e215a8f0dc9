// Short Weierstrass points y^2 = x^3 + b (a = 0 on every curve here), generic over the coordinate
// field (Fp or Fp2, host or device), so one set of formulas serves G1 and G2 of both curves.
//
// Affine: (x, y), with (0, 0) standing for infinity (never on the curve since b != 0); this is
//   also what a snarkjs key stores for infinity (all-zero bytes).
// XYZZ: (X, Y, ZZ, ZZZ) with x = X/ZZ, y = Y/ZZZ; infinity has ZZ = 0. Its mixed addition costs
//   8M + 2S and needs no inversion, which is why MSM buckets accumulate in it.
#pragma once

#include "util/hd.hpp"

namespace cuzk::curve {

template <class F>
struct Affine {
  using Field = F;
  F x, y;

  static CUZK_HD Affine infinity() { return {F::zero(), F::zero()}; }
  CUZK_HD bool is_infinity() const { return x.is_zero() && y.is_zero(); }
  CUZK_HD Affine operator-() const { return is_infinity() ? *this : Affine{x, -y}; }
  CUZK_HD bool operator==(const Affine& o) const { return x == o.x && y == o.y; }
  CUZK_HD bool operator!=(const Affine& o) const { return !(*this == o); }
};

template <class F>
struct Xyzz {
  using Field = F;
  F X, Y, ZZ, ZZZ;

  static CUZK_HD Xyzz infinity() { return {F::one(), F::one(), F::zero(), F::zero()}; }
  static CUZK_HD Xyzz from_affine(const Affine<F>& p) {
    if (p.is_infinity()) return infinity();
    return {p.x, p.y, F::one(), F::one()};
  }
  CUZK_HD bool is_infinity() const { return ZZ.is_zero(); }
  CUZK_HD Xyzz operator-() const { return {X, -Y, ZZ, ZZZ}; }

  // dbl-2008-s-1 with a = 0.
  CUZK_HD Xyzz dbl() const {
    if (is_infinity()) return *this;
    F U = Y.dbl();
    F V = U.sqr();
    F W = U * V;
    F S = X * V;
    F X2 = X.sqr();
    F M = X2.dbl() + X2;
    F X3 = M.sqr() - S.dbl();
    F Y3 = M * (S - X3) - W * Y;
    return {X3, Y3, V * ZZ, W * ZZZ};
  }

  // this + affine q (madd-2008-s), handling every special case (infinity, equal, opposite).
  CUZK_HD Xyzz add_affine(const Affine<F>& q) const {
    if (q.is_infinity()) return *this;
    if (is_infinity()) return from_affine(q);
    F U2 = q.x * ZZ;
    F S2 = q.y * ZZZ;
    F P = U2 - X;
    F R = S2 - Y;
    if (P.is_zero()) {
      if (R.is_zero()) return dbl_affine(q);
      return infinity();
    }
    F PP = P.sqr();
    F PPP = P * PP;
    F Q = X * PP;
    F X3 = R.sqr() - PPP - Q.dbl();
    F Y3 = R * (Q - X3) - Y * PPP;
    return {X3, Y3, ZZ * PP, ZZZ * PPP};
  }

  // this + q, both XYZZ (add-2008-s).
  CUZK_HD Xyzz add(const Xyzz& q) const {
    if (q.is_infinity()) return *this;
    if (is_infinity()) return q;
    F U1 = X * q.ZZ;
    F S1 = Y * q.ZZZ;
    F U2 = q.X * ZZ;
    F S2 = q.Y * ZZZ;
    F P = U2 - U1;
    F R = S2 - S1;
    if (P.is_zero()) {
      if (R.is_zero()) return dbl();
      return infinity();
    }
    F PP = P.sqr();
    F PPP = P * PP;
    F Q = U1 * PP;
    F X3 = R.sqr() - PPP - Q.dbl();
    F Y3 = R * (Q - X3) - S1 * PPP;
    return {X3, Y3, ZZ * q.ZZ * PP, ZZZ * q.ZZZ * PPP};
  }

  // 2q for an affine q (mdbl-2008-s-1).
  static CUZK_HD Xyzz dbl_affine(const Affine<F>& q) {
    if (q.is_infinity()) return infinity();
    F U = q.y.dbl();
    F V = U.sqr();
    F W = U * V;
    F S = q.x * V;
    F X2 = q.x.sqr();
    F M = X2.dbl() + X2;
    F X3 = M.sqr() - S.dbl();
    F Y3 = M * (S - X3) - W * q.y;
    return {X3, Y3, V, W};
  }

  // Single conversion (one inversion). Batches use to_affine_batch in curve/ops.hpp.
  Affine<F> to_affine() const {
    if (is_infinity()) return Affine<F>::infinity();
    F zzz_inv = ZZZ.inverse();
    F z_inv = ZZ * zzz_inv;  // ZZ/ZZZ = 1/Z
    return {X * z_inv.sqr(), Y * zzz_inv};
  }

  // Projective equality without inversions.
  bool equals(const Xyzz& q) const {
    if (is_infinity() || q.is_infinity()) return is_infinity() == q.is_infinity();
    return X * q.ZZ == q.X * ZZ && Y * q.ZZZ == q.Y * ZZZ;
  }
};

}  // namespace cuzk::curve
