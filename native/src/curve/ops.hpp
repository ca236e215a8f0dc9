// Host-side point helpers used around the kernels: curve membership, scalar multiplication (for
// tests and the prover's few blinding terms), batched conversion to affine, and the two byte
// encodings of cuzk.h (key encoding: Montgomery LE; output encoding: standard LE; zeros = infinity).
#pragma once

#include <cstring>
#include <vector>

#include "curve/curves.hpp"

namespace cuzk::curve {

template <class C, class F>
bool is_on_curve(const Affine<F>& p) {
  if (p.is_infinity()) return true;
  return p.y.sqr() == p.x.sqr() * p.x + CurveB<C, F>::get();
}

// k * p for a scalar given as little-endian 64-bit limbs (standard form). Not constant time: only
// public or test values and the prover's blinding terms go through it... which are secret, so the
// prover uses it only on values an attacker cannot time (one call per proof, fixed 256 iterations).
template <class F>
Xyzz<F> scalar_mul(const Affine<F>& p, const uint64_t* k, int limbs) {
  Xyzz<F> acc = Xyzz<F>::infinity();
  for (int i = limbs - 1; i >= 0; i--)
    for (int b = 63; b >= 0; b--) {
      acc = acc.dbl();
      Xyzz<F> sum = acc.add_affine(p);
      if ((k[i] >> b) & 1) acc = sum;  // same work either way
    }
  return acc;
}

template <class F>
Xyzz<F> scalar_mul_xyzz(const Xyzz<F>& p, const uint64_t* k, int limbs) {
  Xyzz<F> acc = Xyzz<F>::infinity();
  for (int i = limbs - 1; i >= 0; i--)
    for (int b = 63; b >= 0; b--) {
      acc = acc.dbl();
      if ((k[i] >> b) & 1) acc = acc.add(p);
    }
  return acc;
}

// Converts n XYZZ points to affine with one field inversion.
template <class F>
void to_affine_batch(const Xyzz<F>* in, Affine<F>* out, size_t n) {
  std::vector<F> inv(n), scratch(n);
  for (size_t i = 0; i < n; i++) inv[i] = in[i].ZZZ;
  field::batch_inverse(inv.data(), n, scratch.data());
  for (size_t i = 0; i < n; i++) {
    if (in[i].is_infinity()) { out[i] = Affine<F>::infinity(); continue; }
    F z_inv = in[i].ZZ * inv[i];
    out[i] = {in[i].X * z_inv.sqr(), in[i].Y * inv[i]};
  }
}

// Key encoding (snarkjs .zkey): coordinates Montgomery LE; all-zero = infinity, which in Montgomery
// form is again (0, 0), our affine infinity. No checks here: see is_on_curve.
template <class F>
Affine<F> load_key_point(const uint8_t* in) {
  return {F::from_bytes_mont(in), F::from_bytes_mont(in + F::BYTES)};
}
template <class F>
void store_key_point(const Affine<F>& p, uint8_t* out) {
  p.x.to_bytes_mont(out);
  p.y.to_bytes_mont(out + F::BYTES);
}

// Output encoding: standard-form LE coordinates; infinity as all-zero bytes.
template <class F>
void store_output_point(const Affine<F>& p, uint8_t* out) {
  if (p.is_infinity()) { std::memset(out, 0, 2 * F::BYTES); return; }
  p.x.to_bytes_std(out);
  p.y.to_bytes_std(out + F::BYTES);
}
template <class F>
Affine<F> load_output_point(const uint8_t* in) {
  bool all_zero = true;
  for (size_t i = 0; i < 2 * F::BYTES; i++) all_zero &= in[i] == 0;
  if (all_zero) return Affine<F>::infinity();
  return {F::from_bytes_std(in), F::from_bytes_std(in + F::BYTES)};
}

}  // namespace cuzk::curve
