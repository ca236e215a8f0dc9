// The pieces of snarkjs/ffjavascript a .ptau contribution record depends on, reproduced so that
// `snarkjs powersoftau verify` accepts our file:
//  - the "uncompressed" and "compressed" point encodings that its transcript hashes run over
//    (wasmcurves LEMtoU / LEMtoC: big-endian standard-form coordinates; an Fq2 element is the
//    byte reversal of c0||c1 in LE, i.e. c1 then c0; compressed keeps x and flags y's sign);
//  - hashToG2 (snarkjs keypair.js): ffjavascript's ChaCha20-based RNG seeded from a blake2b
//    digest, G2.fromRng (rejection-sampled x, y sign picked by a coin, times the G2 cofactor).
// The verifier recomputes hashToG2 itself and pairs it against our g2_spx = tau * hashToG2, so
// these must agree bit for bit with the JS.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "curve/ops.hpp"

namespace ptau_dev {

using cuzk::curve::Affine;
using cuzk::curve::Xyzz;

// --- Field helpers with ffjavascript's conventions --------------------------------------------

// wasmcurves f1m_isNegative / f1m_sign: negative when the standard value is >= (p+1)/2.
template <class F>
bool fq_is_negative(const F& x) {
  uint64_t s[F::N], half[F::N];
  x.to_std_limbs(s);
  for (int i = 0; i < F::N; i++) half[i] = F::Params::MODULUS[i];  // (p-1)/2, p odd
  for (int i = 0; i < F::N; i++) half[i] = (half[i] >> 1) | (i + 1 < F::N ? half[i + 1] << 63 : 0);
  for (int i = F::N - 1; i >= 0; i--) {
    if (s[i] > half[i]) return true;
    if (s[i] < half[i]) return false;
  }
  return false;
}

// f2m_isNegative / f2m_sign: the sign of c1, or of c0 when c1 is zero.
template <class F>
bool fq_is_negative(const cuzk::field::Fp2<F>& x) {
  return x.c1.is_zero() ? fq_is_negative(x.c0) : fq_is_negative(x.c1);
}

template <class F2>
F2 fp2_pow(const F2& a, const uint64_t* e, int limbs) {
  F2 r = F2::one();
  for (int i = limbs - 1; i >= 0; i--)
    for (int b = 63; b >= 0; b--) {
      r = r.sqr();
      if ((e[i] >> b) & 1) r = r * a;
    }
  return r;
}

// Square root in Fq2 for q = 3 mod 4 (true for BN254 and BLS12-381): the "complex" method with
// a^((q-3)/4). Returns false when a is not a square. Either root may come back; callers fix
// the sign the way ffjavascript does.
template <class F>
bool fp2_sqrt(const cuzk::field::Fp2<F>& a, cuzk::field::Fp2<F>& out) {
  using F2 = cuzk::field::Fp2<F>;
  constexpr int N = F::N;
  if (a.is_zero()) { out = a; return true; }
  uint64_t e34[N], e12[N];  // (q-3)/4 and (q-1)/2
  for (int i = 0; i < N; i++) e34[i] = e12[i] = F::Params::MODULUS[i];
  e34[0] -= 3;  // q = 3 mod 4, so no borrow
  e12[0] -= 1;
  for (int i = 0; i < N; i++) {
    e34[i] = (e34[i] >> 2) | (i + 1 < N ? e34[i + 1] << 62 : 0);
    e12[i] = (e12[i] >> 1) | (i + 1 < N ? e12[i + 1] << 63 : 0);
  }
  F2 a1 = fp2_pow(a, e34, N);
  F2 alpha = a1.sqr() * a;
  F2 a0 = alpha.conjugate() * alpha;
  F2 minus_one = -F2::one();
  if (a0 == minus_one) return false;
  F2 x0 = a1 * a;
  F2 x;
  if (alpha == minus_one) {
    x = F2{-x0.c1, x0.c0};  // u * x0
  } else {
    F2 b = fp2_pow(alpha + F2::one(), e12, N);
    x = b * x0;
  }
  if (x.sqr() != a) return false;
  out = x;
  return true;
}

// --- Encodings ---------------------------------------------------------------------------------

// Big-endian standard form of one coordinate (Fq: n8 bytes; Fq2: c1 then c0).
template <class F>
void coord_be(const F& x, uint8_t* out) {
  uint8_t le[F::BYTES];
  x.to_bytes_std(le);
  std::reverse_copy(le, le + F::BYTES, out);
}
template <class F>
void coord_be(const cuzk::field::Fp2<F>& x, uint8_t* out) {
  coord_be(x.c1, out);
  coord_be(x.c0, out + F::BYTES);
}

// LEMtoU: x || y big-endian; infinity is all zeros.
template <class F>
void encode_uncompressed(const Affine<F>& p, uint8_t* out) {
  if (p.is_infinity()) { std::memset(out, 0, 2 * F::BYTES); return; }
  coord_be(p.x, out);
  coord_be(p.y, out + F::BYTES);
}

// LEMtoC: x big-endian, top bit set when y is "negative"; infinity is 0x40 then zeros.
template <class F>
void encode_compressed(const Affine<F>& p, uint8_t* out) {
  if (p.is_infinity()) { std::memset(out, 0, F::BYTES); out[0] = 0x40; return; }
  coord_be(p.x, out);
  if (fq_is_negative(p.y)) out[0] |= 0x80;
}

// --- ffjavascript's ChaCha RNG (src/chacha.js) ------------------------------------------------

class JsChaCha {
 public:
  explicit JsChaCha(const uint32_t seed[8]) {
    static const uint32_t kConst[4] = {0x61707865, 0x3320646E, 0x79622D32, 0x6B206574};
    for (int i = 0; i < 4; i++) state_[i] = kConst[i];
    for (int i = 0; i < 8; i++) state_[4 + i] = seed[i];
    for (int i = 12; i < 16; i++) state_[i] = 0;
  }
  uint32_t next_u32() {
    if (idx_ == 16) refill();
    return buf_[idx_++];
  }
  uint64_t next_u64() {  // JS: nextU32() * 2^32 + nextU32(), the first draw is the high half
    uint64_t hi = next_u32();
    return (hi << 32) | next_u32();
  }
  bool next_bool() { return (next_u32() & 1) == 1; }

 private:
  static uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }
  static void quarter(uint32_t* s, int a, int b, int c, int d) {
    s[a] += s[b]; s[d] = rotl(s[d] ^ s[a], 16);
    s[c] += s[d]; s[b] = rotl(s[b] ^ s[c], 12);
    s[a] += s[b]; s[d] = rotl(s[d] ^ s[a], 8);
    s[c] += s[d]; s[b] = rotl(s[b] ^ s[c], 7);
  }
  void refill() {
    for (int i = 0; i < 16; i++) buf_[i] = state_[i];
    for (int r = 0; r < 10; r++) {
      quarter(buf_, 0, 4, 8, 12); quarter(buf_, 1, 5, 9, 13);
      quarter(buf_, 2, 6, 10, 14); quarter(buf_, 3, 7, 11, 15);
      quarter(buf_, 0, 5, 10, 15); quarter(buf_, 1, 6, 11, 12);
      quarter(buf_, 2, 7, 8, 13); quarter(buf_, 3, 4, 9, 14);
    }
    for (int i = 0; i < 16; i++) buf_[i] += state_[i];
    idx_ = 0;
    for (int i = 12; i < 16; i++)
      if (++state_[i] != 0) break;
  }
  uint32_t state_[16];
  uint32_t buf_[16];
  int idx_ = 16;
};

// ffjavascript F1.fromRng: n64 draws of u64 (little limb first), masked to the bit length of q,
// rejected when >= q. The integer is then used as the *internal* (Montgomery) word string.
template <class F>
F fq_from_rng(JsChaCha& rng) {
  constexpr int N = F::N;
  const int top_bits = F::Params::BITS - 64 * (N - 1);
  for (;;) {
    uint64_t v[N];
    for (int i = 0; i < N; i++) v[i] = rng.next_u64();
    if (top_bits < 64) v[N - 1] &= ((uint64_t)1 << top_bits) - 1;
    F f = F::from_raw(v);
    if (f.is_canonical()) return f;
  }
}

// G2 cofactors as ffjavascript has them (bn128.js, bls12381.js cofactorG2), LE limbs.
template <class C> struct G2Cofactor;
template <> struct G2Cofactor<cuzk::curve::Bn254> {
  static constexpr int LIMBS = 4;
  static constexpr uint64_t LIMB[4] = {0x345f2299c0f9fa8dULL, 0x06ceecda572a2489ULL, 0xb85045b68181585eULL,
                                       0x30644e72e131a029ULL};
};
template <> struct G2Cofactor<cuzk::curve::Bls12381> {
  static constexpr int LIMBS = 8;
  static constexpr uint64_t LIMB[8] = {0xcf1c38e31c7238e5ULL, 0x1616ec6e786f0c70ULL, 0x21537e293a6691aeULL,
                                       0xa628f1cb4d9e82efULL, 0xa68a205b2e5a7ddfULL, 0xcd91de4547085abaULL,
                                       0x091d50792876a202ULL, 0x05d543a95414e7f1ULL};
};

// snarkjs keypair.js hashToG2: seed = the digest's first 32 bytes as big-endian u32 words.
template <class C>
typename C::G2 hash_to_g2(const uint8_t digest[64]) {
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  uint32_t seed[8];
  for (int i = 0; i < 8; i++)
    seed[i] = (uint32_t)digest[4 * i] << 24 | (uint32_t)digest[4 * i + 1] << 16 |
              (uint32_t)digest[4 * i + 2] << 8 | digest[4 * i + 3];
  JsChaCha rng(seed);
  Fq2 x, y;
  bool greatest;
  for (;;) {
    x.c0 = fq_from_rng<Fq>(rng);
    x.c1 = fq_from_rng<Fq>(rng);
    greatest = rng.next_bool();
    Fq2 rhs = x.sqr() * x + C::g2_b();
    if (fp2_sqrt(rhs, y)) break;
  }
  if (greatest != fq_is_negative(y)) y = -y;
  typename C::G2 p{x, y};
  return cuzk::curve::scalar_mul(p, G2Cofactor<C>::LIMB, G2Cofactor<C>::LIMBS).to_affine();
}

}  // namespace ptau_dev
