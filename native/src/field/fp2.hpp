// Quadratic extension Fp2 = Fp[u] / (u^2 + 1): the field of G2 coordinates on both BN254 and
// BLS12-381 (both choose -1 as the non-residue). Generic over the base field type, host or device.
#pragma once

#include "util/hd.hpp"

namespace cuzk::field {

template <class F>
struct Fp2 {
  using Base = F;
  static constexpr size_t BYTES = 2 * F::BYTES;
  F c0, c1;

  static CUZK_HD Fp2 zero() { return {F::zero(), F::zero()}; }
  static CUZK_HD Fp2 one() { return {F::one(), F::zero()}; }
  CUZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  CUZK_HD bool operator==(const Fp2& o) const { return c0 == o.c0 && c1 == o.c1; }
  CUZK_HD bool operator!=(const Fp2& o) const { return !(*this == o); }

  CUZK_HD Fp2 operator+(const Fp2& o) const { return {c0 + o.c0, c1 + o.c1}; }
  CUZK_HD Fp2 operator-(const Fp2& o) const { return {c0 - o.c0, c1 - o.c1}; }
  CUZK_HD Fp2 operator-() const { return {-c0, -c1}; }
  CUZK_HD Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  CUZK_HD Fp2& operator+=(const Fp2& o) { return *this = *this + o; }
  CUZK_HD Fp2& operator-=(const Fp2& o) { return *this = *this - o; }
  CUZK_HD Fp2& operator*=(const Fp2& o) { return *this = *this * o; }

  // Karatsuba: 3 base multiplications.
  CUZK_HD Fp2 operator*(const Fp2& o) const {
    F v0 = c0 * o.c0, v1 = c1 * o.c1;
    F m = (c0 + c1) * (o.c0 + o.c1);
    return {v0 - v1, m - v0 - v1};
  }
  // (a + bu)^2 = (a+b)(a-b) + 2ab u: 2 base multiplications.
  CUZK_HD Fp2 sqr() const {
    F ab = c0 * c1;
    return {(c0 + c1) * (c0 - c1), ab.dbl()};
  }
  CUZK_HD Fp2 mul_base(const F& k) const { return {c0 * k, c1 * k}; }
  CUZK_HD Fp2 conjugate() const { return {c0, -c1}; }
  // 1/(a + bu) = (a - bu) / (a^2 + b^2)
  CUZK_HD Fp2 inverse() const {
    F norm = c0.sqr() + c1.sqr();
    F inv = norm.inverse();
    return {c0 * inv, -(c1 * inv)};
  }

  static Fp2 from_bytes_mont(const uint8_t* in) { return {F::from_bytes_mont(in), F::from_bytes_mont(in + F::BYTES)}; }
  void to_bytes_mont(uint8_t* out) const { c0.to_bytes_mont(out); c1.to_bytes_mont(out + F::BYTES); }
  static Fp2 from_bytes_std(const uint8_t* in) { return {F::from_bytes_std(in), F::from_bytes_std(in + F::BYTES)}; }
  void to_bytes_std(uint8_t* out) const { c0.to_bytes_std(out); c1.to_bytes_std(out + F::BYTES); }
  bool is_canonical() const { return c0.is_canonical() && c1.is_canonical(); }
};

}  // namespace cuzk::field
