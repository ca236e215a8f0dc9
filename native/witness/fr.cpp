// circom's Fr_* operations (circom/fr.hpp) over cuzk's Montgomery field (field/fp.hpp). Values keep
// circom's three forms (small integer, standard limbs, Montgomery limbs); results of field
// arithmetic are Montgomery, small integers stay small while they fit in 32 bits (loop counters,
// indices). The non-field operators follow circom's semantics, on the canonical representative x
// in [0, q), read as a signed value val(x) = x - q when x > (q-1)/2:
//   < > <= >=   compare val(a), val(b)
//   & | ^ ~     on x, the result masked to the prime's bit length, then reduced once
//   << >>       by val(b) (a negative shift goes the other way), 0 from a shift of >= nbits
//   \ %         integer quotient / remainder of the representatives; a zero divisor is an error
//   / and inv   the field's (the inverse of 0 is 0, as gmp's mpz_invert leaves it)
#include <cstring>
#include <cstdio>

#include "circom/circom.hpp"
#include "circom/fr.hpp"
#include "field/fp.hpp"
#include "field/params.hpp"

namespace {

#if defined(CUZK_WITNESS_CURVE_BN254)
using Params = cuzk::field::Bn254FrParams;
#elif defined(CUZK_WITNESS_CURVE_BLS12_381)
using Params = cuzk::field::Bls12381FrParams;
#else
#error "define CUZK_WITNESS_CURVE_BN254 or CUZK_WITNESS_CURVE_BLS12_381"
#endif
using F = cuzk::field::Fp<Params>;
static_assert(F::N == Fr_N64, "circom's elements have 4 limbs");

constexpr int kBits = Params::BITS;
// The top limb's mask for bitwise results (circom's lboMask): kBits bits in all.
constexpr uint64_t kTopMask = (kBits - 192 == 64) ? ~0ULL : ((1ULL << (kBits - 192)) - 1);

// An integer below 2^256, little-endian limbs: the canonical representative of a value.
struct Int {
  uint64_t l[4];
};

constexpr Int kModulus = {{Params::MODULUS[0], Params::MODULUS[1], Params::MODULUS[2], Params::MODULUS[3]}};

int compare(const Int& a, const Int& b) {
  for (int i = 3; i >= 0; i--) {
    if (a.l[i] != b.l[i]) return a.l[i] < b.l[i] ? -1 : 1;
  }
  return 0;
}

Int subtract(const Int& a, const Int& b) {  // a >= b
  Int r;
  uint64_t borrow = 0;
  for (int i = 0; i < 4; i++) r.l[i] = cuzk::field::sbb(a.l[i], b.l[i], borrow);
  return r;
}

bool is_zero(const Int& a) { return (a.l[0] | a.l[1] | a.l[2] | a.l[3]) == 0; }

void reduce_fully(Int& a) {
  while (compare(a, kModulus) >= 0) a = subtract(a, kModulus);
}

// (q - 1) / 2: representatives above it are negative values.
const Int kHalf = [] {
  Int h = subtract(kModulus, Int{{1, 0, 0, 0}});
  for (int i = 0; i < 4; i++) h.l[i] = (h.l[i] >> 1) | (i < 3 ? h.l[i + 1] << 63 : 0);
  return h;
}();

bool is_montgomery(const FrElement* a) { return (a->type & Fr_MONTGOMERY) != 0; }
bool is_long(const FrElement* a) { return (a->type & Fr_LONG) != 0; }
bool is_short(const FrElement* a) { return (a->type & (Fr_LONG | Fr_MONTGOMERY)) == 0; }

F field_of_int64(int64_t v) {
  if (v == 0) return F::zero();  // a sum's start (circomlib's Mix: lc = 0), without a product
  const F magnitude = F::from_u64(v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
  return v < 0 ? -magnitude : magnitude;
}

// The limbs of a (packed, so possibly unaligned) element.
F limbs_of(const FrElement* a) {
  F v;
  std::memcpy(v.l, a->longVal, sizeof v.l);
  return v;
}

// The element as a field value in Montgomery form.
F montgomery(const FrElement* a) {
  if (is_montgomery(a)) return limbs_of(a);
  if (is_long(a)) {
    Int v;
    std::memcpy(v.l, a->longVal, sizeof v.l);
    reduce_fully(v);
    return F::from_raw(v.l).to_mont();
  }
  return field_of_int64(a->shortVal);
}

// The element's canonical representative in [0, q).
Int canonical(const FrElement* a) {
  Int v;
  if (is_long(a) || is_montgomery(a)) {
    if (is_montgomery(a)) {
      const F s = limbs_of(a).from_mont();
      std::memcpy(v.l, s.l, sizeof v.l);
    } else {
      std::memcpy(v.l, a->longVal, sizeof v.l);
    }
    reduce_fully(v);
    return v;
  }
  const F s = field_of_int64(a->shortVal).from_mont();
  std::memcpy(v.l, s.l, sizeof v.l);
  return v;
}

void set_short(PFrElement r, int32_t v) { Fr_setShort(r, v); }

void set_montgomery(PFrElement r, const F& v) {
  r->shortVal = 0;
  r->type = Fr_LONGMONTGOMERY;
  std::memcpy(r->longVal, v.l, sizeof r->longVal);
}

void set_normal(PFrElement r, const Int& v) {
  r->shortVal = 0;
  r->type = Fr_LONG;
  std::memcpy(r->longVal, v.l, sizeof r->longVal);
}

// A 64-bit result of two small integers: small again when it fits, else a field value.
void set_int64(PFrElement r, int64_t v) {
  if (v >= INT32_MIN && v <= INT32_MAX) set_short(r, (int32_t)v);
  else set_montgomery(r, field_of_int64(v));
}

bool is_negative(const Int& x) { return compare(x, kHalf) > 0; }

// The common case of circuit arithmetic: both operands long and in Montgomery form. Done on the
// elements' limbs where they are, the result written as 8-byte words (see Fr_copy in
// circom/fr.hpp), instead of through Fp values on the stack.
bool both_long_montgomery(const FrElement* a, const FrElement* b) { return (a->type & b->type) == Fr_LONGMONTGOMERY; }

uint64_t* limbs(FrElement* e) { return reinterpret_cast<uint64_t*>(reinterpret_cast<unsigned char*>(e) + 8); }

void set_long_montgomery_header(PFrElement r) {
  const uint64_t header = (uint64_t)Fr_LONGMONTGOMERY << 32;  // shortVal 0, type: one store
  std::memcpy(r, &header, 8);
}

enum class LimbOp { add, sub, mul };

template <LimbOp op>
void long_montgomery(PFrElement r, PFrElement a, PFrElement b) {
#ifdef CUZK_MONT_ASM
  if constexpr (op == LimbOp::add) cuzk::field::detail::mod_add_asm4<Params>(limbs(r), limbs(a), limbs(b));
  if constexpr (op == LimbOp::sub) cuzk::field::detail::mod_sub_asm4<Params>(limbs(r), limbs(a), limbs(b));
  if constexpr (op == LimbOp::mul) cuzk::field::detail::mont_mul_asm4<Params>(limbs(r), limbs(a), limbs(b));
#else
  const F x = limbs_of(a), y = limbs_of(b);
  const F v = op == LimbOp::add ? x + y : op == LimbOp::sub ? x - y : x * y;
  std::memcpy(limbs(r), v.l, sizeof v.l);
#endif
  set_long_montgomery_header(r);
}

// -1, 0, 1 as val(a) compares with val(b).
int compare_signed(const FrElement* a, const FrElement* b) {
  if (is_short(a) && is_short(b)) return a->shortVal < b->shortVal ? -1 : a->shortVal > b->shortVal ? 1 : 0;
  const Int x = canonical(a), y = canonical(b);
  const bool nx = is_negative(x), ny = is_negative(y);
  if (nx != ny) return nx ? -1 : 1;
  return compare(x, y);  // same sign: the representatives order like the values
}

bool values_equal(const FrElement* a, const FrElement* b) {
  if (is_short(a) && is_short(b)) return a->shortVal == b->shortVal;
  return montgomery(a) == montgomery(b);
}

// A bitwise result: masked to the prime's bit length, reduced once (it is then < q).
void set_bitwise(PFrElement r, Int v) {
  v.l[3] &= kTopMask;
  if (compare(v, kModulus) >= 0) v = subtract(v, kModulus);
  set_normal(r, v);
}

Int shift_left(const Int& a, unsigned k) {  // k < 256
  Int r{{0, 0, 0, 0}};
  const unsigned words = k / 64, bits = k % 64;
  for (int i = 3; i >= (int)words; i--) {
    r.l[i] = a.l[i - words] << bits;
    if (bits && i - (int)words - 1 >= 0) r.l[i] |= a.l[i - words - 1] >> (64 - bits);
  }
  return r;
}

Int shift_right(const Int& a, unsigned k) {  // k < 256
  Int r{{0, 0, 0, 0}};
  const unsigned words = k / 64, bits = k % 64;
  for (unsigned i = 0; i + words < 4; i++) {
    r.l[i] = a.l[i + words] >> bits;
    if (bits && i + words + 1 < 4) r.l[i] |= a.l[i + words + 1] << (64 - bits);
  }
  return r;
}

// a << k (left) or a >> k, k = val(b); circom's shl/shr.
void shift(PFrElement r, PFrElement a, PFrElement b, bool left) {
  uint64_t k;
  if (is_short(b)) {
    const int64_t s = b->shortVal;
    if (s < 0) left = !left;
    k = s < 0 ? (uint64_t)(-s) : (uint64_t)s;
  } else {
    const Int c = canonical(b);
    if (c.l[1] == 0 && c.l[2] == 0 && c.l[3] == 0 && c.l[0] < (uint64_t)kBits) {
      k = c.l[0];
    } else {  // read as a negative shift: q - c
      const Int d = subtract(kModulus, c);
      if (d.l[1] != 0 || d.l[2] != 0 || d.l[3] != 0 || d.l[0] >= (uint64_t)kBits) return set_short(r, 0);
      k = d.l[0];
      left = !left;
    }
  }
  if (k >= (uint64_t)kBits) return set_short(r, 0);
  if (is_short(a) && a->shortVal >= 0) {  // circom keeps small non-negative results small
    const int64_t v = a->shortVal;
    if (!left) return set_short(r, k >= 31 ? 0 : (int32_t)(v >> k));
    if (k < 31 && (v << k) <= INT32_MAX) return set_short(r, (int32_t)(v << k));
  }
  const Int x = canonical(a);
  if (left) set_bitwise(r, shift_left(x, (unsigned)k));
  else set_normal(r, shift_right(x, (unsigned)k));
}

// Quotient and remainder of a / b (b != 0), by shift and subtract: rare in circuits.
void divide(const Int& a, const Int& b, Int& quotient, Int& remainder) {
  quotient = Int{{0, 0, 0, 0}};
  remainder = Int{{0, 0, 0, 0}};
  for (int bit = 255; bit >= 0; bit--) {
    const bool top = remainder.l[3] >> 63;
    remainder = shift_left(remainder, 1);
    remainder.l[0] |= (a.l[bit / 64] >> (bit % 64)) & 1;
    if (top || compare(remainder, b) >= 0) {
      remainder = subtract(remainder, b);
      quotient.l[bit / 64] |= 1ULL << (bit % 64);
    }
  }
}

Int nonzero_divisor(PFrElement b, const char* op) {
  const Int d = canonical(b);
  if (is_zero(d)) {
    CUZK_WITNESS_LOG << "division by zero in the circuit's " << op << " operator\n";
    cuzk::witness::assert_failed("divisor != 0");
  }
  return d;
}

}  // namespace

FrElement Fr_q = {0, Fr_LONG, {Params::MODULUS[0], Params::MODULUS[1], Params::MODULUS[2], Params::MODULUS[3]}};

void cuzk::witness::make_short_when_small(FrElement& e) {
  if (is_short(&e)) return;
  const Int x = canonical(&e);
  if (!is_negative(x)) {
    if (x.l[1] == 0 && x.l[2] == 0 && x.l[3] == 0 && x.l[0] <= (uint64_t)INT32_MAX) set_short(&e, (int32_t)x.l[0]);
    return;
  }
  const Int m = subtract(kModulus, x);
  if (m.l[1] == 0 && m.l[2] == 0 && m.l[3] == 0 && m.l[0] <= (uint64_t)INT32_MAX) set_short(&e, (int32_t)(0 - (int64_t)m.l[0]));
}

void cuzk::witness::store_standard(FrElement* e, uint8_t* out) {
  if (e->type == Fr_LONGMONTGOMERY) {  // nearly every witness value: one reduction, no copies
#ifdef CUZK_MONT_ASM
    static const uint64_t kOne[4] = {1, 0, 0, 0};
    cuzk::field::detail::mont_mul_asm4<Params>(reinterpret_cast<uint64_t*>(out), limbs(e), kOne);  // < q for any limbs
#else
    const F v = limbs_of(e).from_mont();
    std::memcpy(out, v.l, sizeof v.l);
#endif
    return;
  }
  const Int x = canonical(e);
  std::memcpy(out, x.l, sizeof x.l);
}

void Fr_copyn(PFrElement r, PFrElement a, int n) { std::memmove(r, a, (size_t)n * sizeof(FrElement)); }

int cuzk::witness::general::is_true(PFrElement a) {
  if (is_short(a)) return a->shortVal != 0;
  return !montgomery(a).is_zero();
}

int cuzk::witness::general::to_int(PFrElement a) {
  if (is_short(a)) return a->shortVal;
  const Int x = canonical(a);
  if (!is_negative(x)) {
    if (x.l[1] == 0 && x.l[2] == 0 && x.l[3] == 0 && x.l[0] <= (uint64_t)INT32_MAX) return (int)x.l[0];
  } else {
    const Int m = subtract(kModulus, x);  // |val(x)|
    if (m.l[1] == 0 && m.l[2] == 0 && m.l[3] == 0 && m.l[0] <= (uint64_t)INT32_MAX + 1) return (int)(0 - m.l[0]);
  }
  CUZK_WITNESS_LOG << "a value used as an index or size does not fit in 32 bits\n";
  cuzk::witness::assert_failed("value fits in 32 bits");
}

void cuzk::witness::general::add(PFrElement r, PFrElement a, PFrElement b) {
  if (both_long_montgomery(a, b)) return long_montgomery<LimbOp::add>(r, a, b);
  if (is_short(a) && is_short(b)) return set_int64(r, (int64_t)a->shortVal + b->shortVal);
  set_montgomery(r, montgomery(a) + montgomery(b));
}

void cuzk::witness::general::sub(PFrElement r, PFrElement a, PFrElement b) {
  if (both_long_montgomery(a, b)) return long_montgomery<LimbOp::sub>(r, a, b);
  if (is_short(a) && is_short(b)) return set_int64(r, (int64_t)a->shortVal - b->shortVal);
  set_montgomery(r, montgomery(a) - montgomery(b));
}

void Fr_neg(PFrElement r, PFrElement a) {
  if (is_short(a)) return set_int64(r, -(int64_t)a->shortVal);
  set_montgomery(r, -montgomery(a));
}

void cuzk::witness::general::mul(PFrElement r, PFrElement a, PFrElement b) {
  if (both_long_montgomery(a, b)) return long_montgomery<LimbOp::mul>(r, a, b);
  if (is_short(a) && is_short(b)) return set_int64(r, (int64_t)a->shortVal * b->shortVal);
  set_montgomery(r, montgomery(a) * montgomery(b));
}

void Fr_square(PFrElement r, PFrElement a) { Fr_mul(r, a, a); }

void Fr_inv(PFrElement r, PFrElement a) { set_montgomery(r, montgomery(a).inverse()); }

void Fr_div(PFrElement r, PFrElement a, PFrElement b) { set_montgomery(r, montgomery(a) * montgomery(b).inverse()); }

void Fr_idiv(PFrElement r, PFrElement a, PFrElement b) {
  const Int d = nonzero_divisor(b, "\\");
  Int q, m;
  divide(canonical(a), d, q, m);
  set_normal(r, q);
}

void Fr_mod(PFrElement r, PFrElement a, PFrElement b) {
  const Int d = nonzero_divisor(b, "%");
  Int q, m;
  divide(canonical(a), d, q, m);
  set_normal(r, m);
}

void Fr_pow(PFrElement r, PFrElement a, PFrElement b) {
  const Int e = canonical(b);
  set_montgomery(r, montgomery(a).pow(e.l, 4));
}

void Fr_shl(PFrElement r, PFrElement a, PFrElement b) { shift(r, a, b, true); }
void Fr_shr(PFrElement r, PFrElement a, PFrElement b) { shift(r, a, b, false); }

void Fr_band(PFrElement r, PFrElement a, PFrElement b) {
  if (is_short(a) && is_short(b) && a->shortVal >= 0 && b->shortVal >= 0) return set_short(r, a->shortVal & b->shortVal);
  Int x = canonical(a);
  const Int y = canonical(b);
  for (int i = 0; i < 4; i++) x.l[i] &= y.l[i];
  set_bitwise(r, x);
}

void Fr_bor(PFrElement r, PFrElement a, PFrElement b) {
  if (is_short(a) && is_short(b) && a->shortVal >= 0 && b->shortVal >= 0) return set_short(r, a->shortVal | b->shortVal);
  Int x = canonical(a);
  const Int y = canonical(b);
  for (int i = 0; i < 4; i++) x.l[i] |= y.l[i];
  set_bitwise(r, x);
}

void Fr_bxor(PFrElement r, PFrElement a, PFrElement b) {
  if (is_short(a) && is_short(b) && a->shortVal >= 0 && b->shortVal >= 0) return set_short(r, a->shortVal ^ b->shortVal);
  Int x = canonical(a);
  const Int y = canonical(b);
  for (int i = 0; i < 4; i++) x.l[i] ^= y.l[i];
  set_bitwise(r, x);
}

void Fr_bnot(PFrElement r, PFrElement a) {
  Int x = canonical(a);
  for (int i = 0; i < 4; i++) x.l[i] = ~x.l[i];
  set_bitwise(r, x);
}

void cuzk::witness::general::eq(PFrElement r, PFrElement a, PFrElement b) { set_short(r, values_equal(a, b)); }
void Fr_neq(PFrElement r, PFrElement a, PFrElement b) { set_short(r, !values_equal(a, b)); }
void cuzk::witness::general::lt(PFrElement r, PFrElement a, PFrElement b) { set_short(r, compare_signed(a, b) < 0); }
void Fr_gt(PFrElement r, PFrElement a, PFrElement b) { set_short(r, compare_signed(a, b) > 0); }
void Fr_leq(PFrElement r, PFrElement a, PFrElement b) { set_short(r, compare_signed(a, b) <= 0); }
void Fr_geq(PFrElement r, PFrElement a, PFrElement b) { set_short(r, compare_signed(a, b) >= 0); }

void Fr_land(PFrElement r, PFrElement a, PFrElement b) { set_short(r, Fr_isTrue(a) && Fr_isTrue(b)); }
void Fr_lor(PFrElement r, PFrElement a, PFrElement b) { set_short(r, Fr_isTrue(a) || Fr_isTrue(b)); }
void Fr_lnot(PFrElement r, PFrElement a) { set_short(r, !Fr_isTrue(a)); }

void Fr_toNormal(PFrElement r, PFrElement a) {
  if (is_montgomery(a)) return set_normal(r, canonical(a));
  *r = *a;
}

void Fr_toLongNormal(PFrElement r, PFrElement a) { set_normal(r, canonical(a)); }

void Fr_toMontgomery(PFrElement r, PFrElement a) { set_montgomery(r, montgomery(a)); }

void Fr_str2element(PFrElement r, char const* s, uint base) {
  // Decimal or hexadecimal digits, reduced mod q (circom's calcwit uses it for "1").
  F value = F::zero();
  const F radix = F::from_u64(base);
  for (; *s; s++) {
    const char c = *s;
    const unsigned digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
    if (digit >= base) break;
    value = value * radix + F::from_u64(digit);
  }
  set_montgomery(r, value);
}

char* Fr_element2str(PFrElement a) {
  // The canonical representative in decimal (circom's log output).
  Int x = canonical(a);
  char digits[80];
  int n = 0;
  const Int ten = {{10, 0, 0, 0}};
  do {
    Int q, m;
    divide(x, ten, q, m);
    digits[n++] = (char)('0' + m.l[0]);
    x = q;
  } while (!is_zero(x));
  char* out = new char[n + 1];
  for (int i = 0; i < n; i++) out[i] = digits[n - 1 - i];
  out[n] = 0;
  return out;
}
