// The field interface that circom's generated C++ (circuit.cpp) calls, with circom's element
// layout, implemented over cuzk's own Montgomery field (../fr.cpp over native/src/field/fp.hpp)
// instead of circom's fr.asm/gmp. One per-circuit library is built for one prime
// (CUZK_WITNESS_CURVE_BN254 or CUZK_WITNESS_CURVE_BLS12_381), both 4 limbs.
#pragma once

#include <cstdint>
#include <string>

#define Fr_N64 4
#define Fr_SHORT 0x00000000
#define Fr_MONTGOMERY 0x40000000
#define Fr_SHORTMONTGOMERY 0x40000000
#define Fr_LONG 0x80000000
#define Fr_LONGMONTGOMERY 0xC0000000

typedef uint64_t FrRawElement[Fr_N64];

// circom's layout (the .dat file stores constants in it): a small integer, or 4 limbs in standard
// or Montgomery form, told apart by `type`.
typedef struct __attribute__((__packed__)) {
  int32_t shortVal;
  uint32_t type;
  FrRawElement longVal;
} FrElement;
static_assert(sizeof(FrElement) == 40, "circom's FrElement is 40 bytes");

typedef FrElement* PFrElement;
typedef unsigned int uint;

extern FrElement Fr_q;

// Inline: circuit.cpp copies values more often than it does anything else with them. In 8-byte
// words, as ../fr.cpp writes results: a wider load of what narrower stores just wrote cannot be
// forwarded from the store buffer and waits for them to reach the cache (a copy follows nearly
// every operation).
inline void Fr_copy(PFrElement r, PFrElement a) {
  const unsigned char* from = reinterpret_cast<const unsigned char*>(a);
  unsigned char* to = reinterpret_cast<unsigned char*>(r);
  uint64_t w0, w1, w2, w3, w4;
  __builtin_memcpy(&w0, from, 8);
  __builtin_memcpy(&w1, from + 8, 8);
  __builtin_memcpy(&w2, from + 16, 8);
  __builtin_memcpy(&w3, from + 24, 8);
  __builtin_memcpy(&w4, from + 32, 8);
  __builtin_memcpy(to, &w0, 8);
  __builtin_memcpy(to + 8, &w1, 8);
  __builtin_memcpy(to + 16, &w2, 8);
  __builtin_memcpy(to + 24, &w3, 8);
  __builtin_memcpy(to + 32, &w4, 8);
}
void Fr_copyn(PFrElement r, PFrElement a, int n);

// The operations circuit.cpp runs most: inline for small integers (loop counters and indices, the
// same for both primes), out of line (../fr.cpp) for every other form.
namespace cuzk::witness::general {
void add(PFrElement r, PFrElement a, PFrElement b);
void sub(PFrElement r, PFrElement a, PFrElement b);
void mul(PFrElement r, PFrElement a, PFrElement b);
void lt(PFrElement r, PFrElement a, PFrElement b);
void eq(PFrElement r, PFrElement a, PFrElement b);
int to_int(PFrElement a);
int is_true(PFrElement a);
}  // namespace cuzk::witness::general

inline bool Fr_isShort(const FrElement* a) { return (a->type & (Fr_LONG | Fr_MONTGOMERY)) == 0; }
// shortVal and type in one 8-byte store (see Fr_copy).
inline void Fr_setShort(PFrElement r, int32_t v) {
  const uint64_t word = (uint64_t)(uint32_t)v | ((uint64_t)Fr_SHORT << 32);
  __builtin_memcpy(r, &word, 8);
}
inline bool Fr_fitsShort(int64_t v) { return v == (int32_t)v; }

inline int Fr_toInt(PFrElement a) { return Fr_isShort(a) ? a->shortVal : cuzk::witness::general::to_int(a); }
inline int Fr_isTrue(PFrElement a) { return Fr_isShort(a) ? a->shortVal != 0 : cuzk::witness::general::is_true(a); }
inline void Fr_add(PFrElement r, PFrElement a, PFrElement b) {
  if (Fr_isShort(a) && Fr_isShort(b) && Fr_fitsShort((int64_t)a->shortVal + b->shortVal)) return Fr_setShort(r, a->shortVal + b->shortVal);
  cuzk::witness::general::add(r, a, b);
}
inline void Fr_sub(PFrElement r, PFrElement a, PFrElement b) {
  if (Fr_isShort(a) && Fr_isShort(b) && Fr_fitsShort((int64_t)a->shortVal - b->shortVal)) return Fr_setShort(r, a->shortVal - b->shortVal);
  cuzk::witness::general::sub(r, a, b);
}
inline void Fr_mul(PFrElement r, PFrElement a, PFrElement b) {
  if (Fr_isShort(a) && Fr_isShort(b) && Fr_fitsShort((int64_t)a->shortVal * b->shortVal)) return Fr_setShort(r, (int32_t)((int64_t)a->shortVal * b->shortVal));
  cuzk::witness::general::mul(r, a, b);
}
inline void Fr_lt(PFrElement r, PFrElement a, PFrElement b) {
  if (Fr_isShort(a) && Fr_isShort(b)) return Fr_setShort(r, a->shortVal < b->shortVal);
  cuzk::witness::general::lt(r, a, b);
}
inline void Fr_eq(PFrElement r, PFrElement a, PFrElement b) {
  if (Fr_isShort(a) && Fr_isShort(b)) return Fr_setShort(r, a->shortVal == b->shortVal);
  cuzk::witness::general::eq(r, a, b);
}

void Fr_str2element(PFrElement pE, char const* s, uint base);
char* Fr_element2str(PFrElement pE);

void Fr_neg(PFrElement r, PFrElement a);
void Fr_square(PFrElement r, PFrElement a);
void Fr_inv(PFrElement r, PFrElement a);
void Fr_div(PFrElement r, PFrElement a, PFrElement b);
void Fr_idiv(PFrElement r, PFrElement a, PFrElement b);
void Fr_mod(PFrElement r, PFrElement a, PFrElement b);
void Fr_pow(PFrElement r, PFrElement a, PFrElement b);

void Fr_shl(PFrElement r, PFrElement a, PFrElement b);
void Fr_shr(PFrElement r, PFrElement a, PFrElement b);
void Fr_band(PFrElement r, PFrElement a, PFrElement b);
void Fr_bor(PFrElement r, PFrElement a, PFrElement b);
void Fr_bxor(PFrElement r, PFrElement a, PFrElement b);
void Fr_bnot(PFrElement r, PFrElement a);

void Fr_neq(PFrElement r, PFrElement a, PFrElement b);
void Fr_gt(PFrElement r, PFrElement a, PFrElement b);
void Fr_leq(PFrElement r, PFrElement a, PFrElement b);
void Fr_geq(PFrElement r, PFrElement a, PFrElement b);

void Fr_land(PFrElement r, PFrElement a, PFrElement b);
void Fr_lor(PFrElement r, PFrElement a, PFrElement b);
void Fr_lnot(PFrElement r, PFrElement a);

void Fr_toNormal(PFrElement r, PFrElement a);
void Fr_toLongNormal(PFrElement r, PFrElement a);
void Fr_toMontgomery(PFrElement r, PFrElement a);
