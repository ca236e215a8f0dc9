// Prime fields in Montgomery form over 64-bit limbs: the host implementation shared by every CPU
// kernel. Device code (native/src/cuda/) has its own 32-bit-limb fields with the same interface, so
// the curve formulas in native/src/curve/ serve both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "field/params.hpp"
#if defined(__x86_64__) && defined(__ADX__) && defined(__BMI2__) && !defined(__CUDACC__)
#include "field/mont_asm.hpp"  // mulx/adcx/adox products for 4 and 6 limbs

namespace cuzk::field::detail {
// The 6-limb asm needs 13-14 free registers. Inlined into a caller that keeps a frame pointer (stack
// realignment for vector spills, e.g. the pairing code) GCC cannot allocate them ("impossible
// constraints"), so these run out of line, in frames of their own: a call costs a few ns against a
// ~30 ns product.
template <class P>
__attribute__((noinline)) void mont_mul6_outlined(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  mont_mul_asm6<P>(r, a, b);
}
template <class P>
__attribute__((noinline)) void mod_add6_outlined(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  mod_add_asm6<P>(r, a, b);
}
template <class P>
__attribute__((noinline)) void mod_sub6_outlined(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  mod_sub_asm6<P>(r, a, b);
}
}  // namespace cuzk::field::detail
#define CUZK_MONT_ASM 1
#endif
// GCC sizes inline asm by its line count and would otherwise call these out of line.
#if defined(__GNUC__)
#define CUZK_FIELD_INLINE inline __attribute__((always_inline))
#else
#define CUZK_FIELD_INLINE inline
#endif

namespace cuzk::field {

using u128 = unsigned __int128;

// a + b + carry -> (sum, carry out)
static inline uint64_t adc(uint64_t a, uint64_t b, uint64_t& carry) {
  u128 t = (u128)a + b + carry;
  carry = (uint64_t)(t >> 64);
  return (uint64_t)t;
}
// a - b - borrow -> (difference, borrow out in {0,1})
static inline uint64_t sbb(uint64_t a, uint64_t b, uint64_t& borrow) {
  u128 t = (u128)a - b - borrow;
  borrow = (uint64_t)(t >> 127);
  return (uint64_t)t;
}

// Element of GF(p) for the parameter set P (see params.hpp), kept as a*R mod p, R = 2^(64*LIMBS).
// Every modulus here leaves its top bit free, which the multiplication below relies on.
template <class P>
struct Fp {
  static constexpr int N = P::LIMBS;
  static constexpr size_t BYTES = 8 * N;
  using Params = P;
  static_assert(P::MODULUS[N - 1] < (~0ULL >> 1) - 1, "top limb must leave room for lazy carries");

  uint64_t l[N];

  static Fp zero() { Fp r; for (int i = 0; i < N; i++) r.l[i] = 0; return r; }
  static Fp one() { Fp r; for (int i = 0; i < N; i++) r.l[i] = P::ONE[i]; return r; }
  static Fp from_raw(const uint64_t* limbs) { Fp r; for (int i = 0; i < N; i++) r.l[i] = limbs[i]; return r; }
  static Fp from_u64(uint64_t v) { Fp r = zero(); r.l[0] = v; return r.to_mont(); }

  bool is_zero() const { uint64_t acc = 0; for (int i = 0; i < N; i++) acc |= l[i]; return acc == 0; }
  bool operator==(const Fp& o) const { uint64_t acc = 0; for (int i = 0; i < N; i++) acc |= l[i] ^ o.l[i]; return acc == 0; }
  bool operator!=(const Fp& o) const { return !(*this == o); }

  // Raw limbs compared with the modulus: true when this (as an integer) is < p.
  bool is_canonical() const {
    for (int i = N - 1; i >= 0; i--) {
      if (l[i] < P::MODULUS[i]) return true;
      if (l[i] > P::MODULUS[i]) return false;
    }
    return false;
  }

  // Subtracts p once when the value is >= p (keeps results in [0, p)).
  void reduce_once() {
    uint64_t t[N], borrow = 0;
    for (int i = 0; i < N; i++) t[i] = sbb(l[i], P::MODULUS[i], borrow);
    if (!borrow) for (int i = 0; i < N; i++) l[i] = t[i];
  }

  CUZK_FIELD_INLINE Fp operator+(const Fp& o) const {
#ifdef CUZK_MONT_ASM
    if constexpr (N == 4 || N == 6) {
      Fp r;
      if constexpr (N == 4) detail::mod_add_asm4<P>(r.l, l, o.l);
      else detail::mod_add6_outlined<P>(r.l, l, o.l);
      return r;
    }
#endif
    return add_portable(o);
  }
  Fp add_portable(const Fp& o) const {
    Fp r; uint64_t carry = 0;
    for (int i = 0; i < N; i++) r.l[i] = adc(l[i], o.l[i], carry);
    r.reduce_once();  // no carry out of the top limb: p < 2^(64N-1)
    return r;
  }
  CUZK_FIELD_INLINE Fp operator-(const Fp& o) const {
#ifdef CUZK_MONT_ASM
    if constexpr (N == 4 || N == 6) {
      Fp r;
      if constexpr (N == 4) detail::mod_sub_asm4<P>(r.l, l, o.l);
      else detail::mod_sub6_outlined<P>(r.l, l, o.l);
      return r;
    }
#endif
    return sub_portable(o);
  }
  Fp sub_portable(const Fp& o) const {
    Fp r; uint64_t borrow = 0;
    for (int i = 0; i < N; i++) r.l[i] = sbb(l[i], o.l[i], borrow);
    if (borrow) {
      uint64_t carry = 0;
      for (int i = 0; i < N; i++) r.l[i] = adc(r.l[i], P::MODULUS[i], carry);
    }
    return r;
  }
  Fp operator-() const { return is_zero() ? *this : from_raw(P::MODULUS) - *this; }
  Fp dbl() const { return *this + *this; }
  Fp& operator+=(const Fp& o) { return *this = *this + o; }
  Fp& operator-=(const Fp& o) { return *this = *this - o; }
  Fp& operator*=(const Fp& o) { return *this = *this * o; }

  // Montgomery product (CIOS, with the "spare top bit" shortcut: no extra carry word is needed).
  CUZK_FIELD_INLINE Fp operator*(const Fp& b) const {
#ifdef CUZK_MONT_ASM
    if constexpr (N == 4 || N == 6) {
      Fp r;
      if constexpr (N == 4) detail::mont_mul_asm4<P>(r.l, l, b.l);
      else detail::mont_mul6_outlined<P>(r.l, l, b.l);
      return r;
    }
#endif
    return mul_portable(b);
  }
  Fp mul_portable(const Fp& b) const {
    uint64_t t[N];
    for (int i = 0; i < N; i++) t[i] = 0;
    for (int i = 0; i < N; i++) {
      u128 acc = (u128)l[0] * b.l[i] + t[0];
      uint64_t A = (uint64_t)(acc >> 64);
      uint64_t t0 = (uint64_t)acc;
      uint64_t m = t0 * P::INV;
      u128 red = (u128)m * P::MODULUS[0] + t0;
      uint64_t C = (uint64_t)(red >> 64);
      for (int j = 1; j < N; j++) {
        acc = (u128)l[j] * b.l[i] + t[j] + A;
        A = (uint64_t)(acc >> 64);
        red = (u128)m * P::MODULUS[j] + (uint64_t)acc + C;
        C = (uint64_t)(red >> 64);
        t[j - 1] = (uint64_t)red;
      }
      t[N - 1] = C + A;
    }
    Fp r;
    for (int i = 0; i < N; i++) r.l[i] = t[i];
    r.reduce_once();
    return r;
  }
  Fp sqr() const { return *this * *this; }

  Fp to_mont() const { return *this * from_raw(P::R2); }
  Fp from_mont() const { Fp one_raw = zero(); one_raw.l[0] = 1; return *this * one_raw; }

  // this^e for an exponent given as little-endian 64-bit limbs.
  Fp pow(const uint64_t* e, int e_limbs) const {
    Fp r = one();
    for (int i = e_limbs - 1; i >= 0; i--)
      for (int b = 63; b >= 0; b--) {
        r = r.sqr();
        if ((e[i] >> b) & 1) r = r * *this;
      }
    return r;
  }
  Fp pow_u64(uint64_t e) const { return pow(&e, 1); }

  // Inverse by Fermat (a^(p-2)); 0 maps to 0. Hot paths batch their inversions (batch_inverse).
  Fp inverse() const {
    uint64_t e[N], borrow = 0;
    for (int i = 0; i < N; i++) e[i] = sbb(P::MODULUS[i], i == 0 ? 2 : 0, borrow);
    return pow(e, N);
  }

  // Bytes: little-endian, standard form (witness values, proof output).
  static Fp from_bytes_std(const uint8_t* in) { Fp r; std::memcpy(r.l, in, BYTES); return r.to_mont(); }
  void to_bytes_std(uint8_t* out) const { Fp s = from_mont(); std::memcpy(out, s.l, BYTES); }
  // Bytes: little-endian, Montgomery form (snarkjs key points, coefficients).
  static Fp from_bytes_mont(const uint8_t* in) { Fp r; std::memcpy(r.l, in, BYTES); return r; }
  void to_bytes_mont(uint8_t* out) const { std::memcpy(out, l, BYTES); }
  // Standard-form limbs (for scalars fed to an MSM).
  void to_std_limbs(uint64_t* out) const { Fp s = from_mont(); for (int i = 0; i < N; i++) out[i] = s.l[i]; }

  // Square root, when one exists (Tonelli-Shanks; only used off hot paths).
  bool sqrt(Fp& out) const;
  bool is_square() const;
};

// In-place batch inversion (Montgomery's trick): one inverse and 3(n-1) products for n elements.
// Zeros stay zero. `scratch` must hold n elements.
template <class F>
void batch_inverse(F* v, size_t n, F* scratch) {
  if (n == 0) return;
  F acc = F::one();
  for (size_t i = 0; i < n; i++) {
    scratch[i] = acc;
    if (!v[i].is_zero()) acc = acc * v[i];
  }
  F inv = acc.inverse();
  for (size_t i = n; i-- > 0;) {
    if (v[i].is_zero()) continue;
    F t = inv * scratch[i];
    inv = inv * v[i];
    v[i] = t;
  }
}

template <class P>
bool Fp<P>::is_square() const {
  if (is_zero()) return true;
  uint64_t e[N], borrow = 0;  // (p-1)/2
  for (int i = 0; i < N; i++) e[i] = sbb(P::MODULUS[i], i == 0 ? 1 : 0, borrow);
  for (int i = 0; i < N; i++) e[i] = (e[i] >> 1) | (i + 1 < N ? e[i + 1] << 63 : 0);
  return pow(e, N) == one();
}

template <class P>
bool Fp<P>::sqrt(Fp& out) const {
  if (is_zero()) { out = *this; return true; }
  if (!is_square()) return false;
  // p - 1 = q * 2^s with q odd
  uint64_t q[N], borrow = 0;
  for (int i = 0; i < N; i++) q[i] = sbb(P::MODULUS[i], i == 0 ? 1 : 0, borrow);
  int s = 0;
  while ((q[0] & 1) == 0) {
    for (int i = 0; i < N; i++) q[i] = (q[i] >> 1) | (i + 1 < N ? q[i + 1] << 63 : 0);
    s++;
  }
  Fp z = from_u64(2);
  while (z.is_square()) z = z + one();
  Fp c = z.pow(q, N);
  uint64_t q1[N];  // (q+1)/2
  for (int i = 0; i < N; i++) q1[i] = q[i];
  uint64_t carry = 1;
  for (int i = 0; i < N; i++) q1[i] = adc(q1[i], 0, carry);
  for (int i = 0; i < N; i++) q1[i] = (q1[i] >> 1) | (i + 1 < N ? q1[i + 1] << 63 : 0);
  Fp x = pow(q1, N), t = pow(q, N);
  int m = s;
  while (t != one()) {
    int i = 0;
    Fp t2 = t;
    while (t2 != one()) { t2 = t2.sqr(); i++; }
    Fp b = c;
    for (int j = 0; j < m - i - 1; j++) b = b.sqr();
    x = x * b; c = b.sqr(); t = t * c; m = i;
  }
  out = x;
  return true;
}

using Bn254Fq = Fp<Bn254FqParams>;
using Bn254Fr = Fp<Bn254FrParams>;
using Bls12381Fq = Fp<Bls12381FqParams>;
using Bls12381Fr = Fp<Bls12381FrParams>;

}  // namespace cuzk::field
