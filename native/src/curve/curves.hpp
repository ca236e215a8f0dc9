// The two pairing-friendly curves as bundles of types and constants: the unit every kernel and the
// prover are templated on (`template <class C>` with C = Bn254 or Bls12381).
#pragma once

#include <cstdint>

#include "cuzk.h"
#include "curve/point.hpp"
#include "field/fp.hpp"
#include "field/fp2.hpp"

namespace cuzk::curve {

using namespace cuzk::field;

// G1: y^2 = x^3 + b over Fq. G2: y'^2 = x'^3 + b' over Fq2 (the sextic twist).
template <class Fq_, class Fr_, cuzk_curve Id, const char* Name>
struct CurveBase {
  using Fq = Fq_;
  using Fr = Fr_;
  using Fq2 = field::Fp2<Fq>;
  using G1 = Affine<Fq>;
  using G2 = Affine<Fq2>;
  using G1x = Xyzz<Fq>;
  using G2x = Xyzz<Fq2>;
  static constexpr cuzk_curve ID = Id;
  static constexpr size_t FQ_BYTES = Fq::BYTES;
  static constexpr size_t G1_BYTES = 2 * Fq::BYTES;
  static constexpr size_t G2_BYTES = 4 * Fq::BYTES;
  static constexpr size_t PROOF_BYTES = 2 * G1_BYTES + G2_BYTES;
  static const char* name() { return Name; }
};

inline constexpr char kBn254Name[] = "bn254";
inline constexpr char kBls12381Name[] = "bls12_381";

struct Bn254 : CurveBase<Bn254Fq, Bn254Fr, CUZK_CURVE_BN254, kBn254Name> {
  static const Fq& g1_b() { static const Fq b = Fq::from_u64(3); return b; }
  static const Fq2& g2_b() {  // 3 / (9 + u)
    static const Fq2 b = Fq2{Fq::from_u64(9), Fq::one()}.inverse().mul_base(Fq::from_u64(3));
    return b;
  }
  static const G1& g1_generator() {
    static const G1 g{Fq::from_u64(1), Fq::from_u64(2)};
    return g;
  }
  static const G2& g2_generator() {
    static const uint64_t x0[4] = {0x46debd5cd992f6edULL, 0x674322d4f75edaddULL, 0x426a00665e5c4479ULL, 0x1800deef121f1e76ULL};
    static const uint64_t x1[4] = {0x97e485b7aef312c2ULL, 0xf1aa493335a9e712ULL, 0x7260bfb731fb5d25ULL, 0x198e9393920d483aULL};
    static const uint64_t y0[4] = {0x4ce6cc0166fa7daaULL, 0xe3d1e7690c43d37bULL, 0x4aab71808dcb408fULL, 0x12c85ea5db8c6debULL};
    static const uint64_t y1[4] = {0x55acdadcd122975bULL, 0xbc4b313370b38ef3ULL, 0xec9e99ad690c3395ULL, 0x090689d0585ff075ULL};
    static const G2 g{{Fq::from_raw(x0).to_mont(), Fq::from_raw(x1).to_mont()},
                      {Fq::from_raw(y0).to_mont(), Fq::from_raw(y1).to_mont()}};
    return g;
  }
};

struct Bls12381 : CurveBase<Bls12381Fq, Bls12381Fr, CUZK_CURVE_BLS12_381, kBls12381Name> {
  static const Fq& g1_b() { static const Fq b = Fq::from_u64(4); return b; }
  static const Fq2& g2_b() {  // 4 (1 + u)
    static const Fq2 b{Fq::from_u64(4), Fq::from_u64(4)};
    return b;
  }
  static const G1& g1_generator() {
    static const uint64_t x[6] = {0xfb3af00adb22c6bbULL, 0x6c55e83ff97a1aefULL, 0xa14e3a3f171bac58ULL, 0xc3688c4f9774b905ULL, 0x2695638c4fa9ac0fULL, 0x17f1d3a73197d794ULL};
    static const uint64_t y[6] = {0x0caa232946c5e7e1ULL, 0xd03cc744a2888ae4ULL, 0x00db18cb2c04b3edULL, 0xfcf5e095d5d00af6ULL, 0xa09e30ed741d8ae4ULL, 0x08b3f481e3aaa0f1ULL};
    static const G1 g{Fq::from_raw(x).to_mont(), Fq::from_raw(y).to_mont()};
    return g;
  }
  static const G2& g2_generator() {
    static const uint64_t x0[6] = {0xd48056c8c121bdb8ULL, 0x0bac0326a805bbefULL, 0xb4510b647ae3d177ULL, 0xc6e47ad4fa403b02ULL, 0x260805272dc51051ULL, 0x024aa2b2f08f0a91ULL};
    static const uint64_t x1[6] = {0xe5ac7d055d042b7eULL, 0x334cf11213945d57ULL, 0xb5da61bbdc7f5049ULL, 0x596bd0d09920b61aULL, 0x7dacd3a088274f65ULL, 0x13e02b6052719f60ULL};
    static const uint64_t y0[6] = {0xe193548608b82801ULL, 0x923ac9cc3baca289ULL, 0x6d429a695160d12cULL, 0xadfd9baa8cbdd3a7ULL, 0x8cc9cdc6da2e351aULL, 0x0ce5d527727d6e11ULL};
    static const uint64_t y1[6] = {0xaaa9075ff05f79beULL, 0x3f370d275cec1da1ULL, 0x267492ab572e99abULL, 0xcb3e287e85a763afULL, 0x32acd2b02bc28b99ULL, 0x0606c4a02ea734ccULL};
    static const G2 g{{Fq::from_raw(x0).to_mont(), Fq::from_raw(x1).to_mont()},
                      {Fq::from_raw(y0).to_mont(), Fq::from_raw(y1).to_mont()}};
    return g;
  }
};

// The b of the curve a point type lives on (G1 over Fq, G2 over Fq2).
template <class C, class F> struct CurveB;
template <class C> struct CurveB<C, typename C::Fq> { static const typename C::Fq& get() { return C::g1_b(); } };
template <class C> struct CurveB<C, typename C::Fq2> { static const typename C::Fq2& get() { return C::g2_b(); } };

}  // namespace cuzk::curve
