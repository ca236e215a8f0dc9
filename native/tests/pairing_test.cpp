// Pairing and Groth16 verification: the tower arithmetic against its definitions, the pairing
// against @noble/curves values and bilinearity, and verify_groth16 against proofs made by snarkjs
// (pairing_vectors.inc, written by tools/gen_pairing_vectors.mjs).
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "check.hpp"
#include "curve/ops.hpp"
#include "pairing/pairing.hpp"
#include "pairing/verify.hpp"
#include "pairing_vectors.inc"

using namespace cuzk::field;
using namespace cuzk::curve;
using namespace cuzk::pairing;

namespace {

std::mt19937_64 rng(20240611);

template <class F>
F from_std(const uint64_t* v) { return F::from_raw(v).to_mont(); }

template <class F>
F random_field() {
  uint64_t raw[F::N];
  for (auto& w : raw) w = rng();
  raw[F::N - 1] %= F::Params::MODULUS[F::N - 1];  // top limb below the modulus's: value < p
  return F::from_raw(raw).to_mont();
}

template <class C>
typename C::Fq2 random_fq2() { return {random_field<typename C::Fq>(), random_field<typename C::Fq>()}; }

template <class C>
Fq6<C> random_fq6() { return {random_fq2<C>(), random_fq2<C>(), random_fq2<C>()}; }

template <class C>
Fq12<C> random_fq12() { return {random_fq6<C>(), random_fq6<C>()}; }

template <class C>
typename C::G1 g1_of(const G1Raw& r) {
  using Fq = typename C::Fq;
  return {from_std<Fq>(r.x), from_std<Fq>(r.y)};
}
template <class C>
typename C::G2 g2_of(const G2Raw& r) {
  using Fq = typename C::Fq;
  return {{from_std<Fq>(r.x0), from_std<Fq>(r.x1)}, {from_std<Fq>(r.y0), from_std<Fq>(r.y1)}};
}
template <class C>
Fq12<C> fq12_of(const Fq12Raw& r) {
  using Fq = typename C::Fq;
  typename C::Fq2 c[6];
  for (int i = 0; i < 6; i++) c[i] = {from_std<Fq>(r.c[2 * i]), from_std<Fq>(r.c[2 * i + 1])};
  return {{c[0], c[1], c[2]}, {c[3], c[4], c[5]}};
}

template <class C>
void r_limbs(uint64_t* r) { for (int i = 0; i < 4; i++) r[i] = C::Fr::Params::MODULUS[i]; }

template <class C>
typename C::G1 g1_mul(const typename C::Fr& k) {
  uint64_t l[4];
  k.to_std_limbs(l);
  return scalar_mul(C::g1_generator(), l, 4).to_affine();
}
template <class C>
typename C::G2 g2_mul(const typename C::Fr& k) {
  uint64_t l[4];
  k.to_std_limbs(l);
  return scalar_mul(C::g2_generator(), l, 4).to_affine();
}
template <class C>
Fq12<C> gt_pow(const Fq12<C>& e, const typename C::Fr& k) {
  uint64_t l[4];
  k.to_std_limbs(l);
  return pow_limbs(e, l, 4);
}

// Tower arithmetic against definitions: inverses, squaring, Frobenius = x^p, sparse products.
template <class C>
void check_tower() {
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  using F12 = Fq12<C>;
  for (int it = 0; it < 4; it++) {
    Fq6<C> s = random_fq6<C>(), t = random_fq6<C>();
    CHECK(s * s.inverse() == Fq6<C>::one());
    CHECK(s.sqr() == s * s);
    CHECK((s.mul_by_01(t.c0, t.c1) == s * Fq6<C>{t.c0, t.c1, Fq2::zero()}));
    CHECK((s.mul_by_1(t.c1) == s * Fq6<C>{Fq2::zero(), t.c1, Fq2::zero()}));
    // v^3 = xi
    Fq6<C> v{Fq2::zero(), Fq2::one(), Fq2::zero()};
    CHECK(v * v * v == (Fq6<C>{Fq6<C>::mul_by_xi(Fq2::one()), Fq2::zero(), Fq2::zero()}));

    F12 a = random_fq12<C>(), b = random_fq12<C>();
    CHECK(a * a.inverse() == F12::one());
    CHECK(a.sqr() == a * a);
    CHECK((a * b) * a == a * (b * a));
    // w^2 = v
    F12 w{Fq6<C>::zero(), Fq6<C>::one()};
    CHECK(w * w == (F12{v, Fq6<C>::zero()}));
    // Frobenius against exponentiation by p (and its powers by composition)
    F12 ap = pow_limbs(a, Fq::Params::MODULUS, Fq::N);
    CHECK(a.frobenius(1) == ap);
    CHECK(a.frobenius(2) == ap.frobenius(1));
    CHECK(a.frobenius(3) == a.frobenius(2).frobenius(1));
    CHECK(a.frobenius(3).frobenius(3) == a.conjugate());
    // sparse line product against the full product with the same line laid out in Fq12
    Fq2 lc = random_fq2<C>(), lx = random_fq2<C>(), ly = random_fq2<C>();
    F12 line = F12::zero();
    if constexpr (TowerParams<C>::TWIST == Twist::D) { line.c0.c0 = ly; line.c1.c0 = lx; line.c1.c1 = lc; }
    else { line.c0.c0 = lc; line.c0.c1 = lx; line.c1.c1 = ly; }
    CHECK(a.mul_by_line(lc, lx, ly) == a * line);
    // cyclotomic squaring once in the cyclotomic subgroup (after the easy part)
    F12 c = a.conjugate() * a.inverse();
    c = c.frobenius(2) * c;
    CHECK(c.cyclotomic_sqr() == c.sqr());
    CHECK(c.cyclotomic_pow(1000003) == pow_limbs(c, std::vector<uint64_t>{1000003}.data(), 1));
  }
}

template <class C, size_t K>
void check_noble_vectors(const PairingVector (&vectors)[K], const uint64_t (&multiple)[4]) {
  for (const auto& v : vectors) {
    auto p = g1_of<C>(v.p);
    auto q = g2_of<C>(v.q);
    CHECK((in_subgroup_g1<C>(p)));
    CHECK((in_subgroup_g2<C>(q)));
    Fq12<C> ours = pairing<C>(p, q);
    Fq12<C> noble = fq12_of<C>(v.e);
    // noble's final exponentiation is a fixed power of the exact one (see the generator script).
    CHECK(pow_limbs(ours, multiple, 4) == noble);
  }
}

template <class C>
void check_bilinearity() {
  using Fr = typename C::Fr;
  const auto& P = C::g1_generator();
  const auto& Q = C::g2_generator();
  Fq12<C> e = pairing<C>(P, Q);
  CHECK(!e.is_one());  // non-degenerate
  uint64_t r[4];
  r_limbs<C>(r);
  CHECK(pow_limbs(e, r, 4).is_one());
  for (int it = 0; it < 3; it++) {
    Fr a = random_field<Fr>(), b = random_field<Fr>();
    auto aP = g1_mul<C>(a);
    auto bQ = g2_mul<C>(b);
    Fq12<C> eab = pairing<C>(aP, bQ);
    CHECK(eab == gt_pow(e, a * b));
    CHECK(pairing<C>(aP, Q) == pairing<C>(P, g2_mul<C>(a)));
    // additivity in each argument
    auto P2 = g1_mul<C>(b);
    auto sum = Xyzz<typename C::Fq>::from_affine(aP).add_affine(P2).to_affine();
    CHECK(pairing<C>(sum, bQ) == eab * pairing<C>(P2, bQ));
    // product checks share one final exponentiation
    typename C::G1 ps[3] = {aP, -P, P};
    typename C::G2 qs[3] = {bQ, g2_mul<C>(a * b), Q};
    CHECK((pairing_product_is_one<C>(ps, qs, 2)));
    CHECK(!(pairing_product_is_one<C>(ps, qs, 3)));
    qs[1] = g2_mul<C>(a * b + Fr::one());
    CHECK(!(pairing_product_is_one<C>(ps, qs, 2)));
  }
  // infinity pairs contribute 1
  typename C::G1 pi[2] = {C::G1::infinity(), P};
  typename C::G2 qi[2] = {Q, C::G2::infinity()};
  CHECK((pairing_product_is_one<C>(pi, qi, 2)));
  CHECK((pairing_product_is_one<C>(pi, qi, 0)));
}

template <class C>
void check_subgroups(const G2Raw& g2_outside) {
  CHECK((in_subgroup_g1<C>(C::g1_generator())));
  CHECK((in_subgroup_g2<C>(C::g2_generator())));
  CHECK((in_subgroup_g1<C>(C::G1::infinity())));
  CHECK((in_subgroup_g2<C>(C::G2::infinity())));
  auto q = g2_of<C>(g2_outside);
  CHECK((is_on_curve<C, typename C::Fq2>(q)));
  CHECK(!(in_subgroup_g2<C>(q)));
  auto p_off = C::g1_generator();
  p_off.y = p_off.y + C::Fq::one();
  CHECK(!(in_subgroup_g1<C>(p_off)));
  auto q_off = C::g2_generator();
  q_off.x = q_off.x + C::Fq2::one();
  CHECK(!(in_subgroup_g2<C>(q_off)));
}

template <class C>
struct LoadedProof {
  VerifyingKey<C> vk;
  typename C::G1 a, c;
  typename C::G2 b;
  std::vector<typename C::Fr> pub;
};

template <class C>
LoadedProof<C> load(const Groth16Vector& v) {
  LoadedProof<C> l;
  l.vk.alpha1 = g1_of<C>(v.alpha);
  l.vk.beta2 = g2_of<C>(v.beta);
  l.vk.gamma2 = g2_of<C>(v.gamma);
  l.vk.delta2 = g2_of<C>(v.delta);
  for (size_t i = 0; i < v.n_ic; i++) l.vk.ic.push_back(g1_of<C>(v.ic[i]));
  l.a = g1_of<C>(v.a);
  l.b = g2_of<C>(v.b);
  l.c = g1_of<C>(v.c);
  for (size_t i = 0; i < v.n_pub; i++) l.pub.push_back(from_std<typename C::Fr>(v.pub[i]));
  return l;
}

template <class C>
bool run(const LoadedProof<C>& l) {
  return verify_groth16<C>(l.vk, l.a, l.b, l.c, l.pub.data(), l.pub.size());
}

// Each snarkjs proof verifies; each tampering is rejected.
template <class C, size_t K>
void check_groth16(const Groth16Vector (&vectors)[K], const G2Raw& g2_outside, const G1Raw* g1_outside) {
  for (const auto& v : vectors) {
    const LoadedProof<C> good = load<C>(v);
    bool ok = run(good);
    if (!ok) std::fprintf(stderr, "valid proof rejected: %s\n", v.name);
    CHECK(ok);
    if (!good.pub.empty()) {
      auto t = good;
      t.pub[0] = t.pub[0] + C::Fr::one();
      CHECK(!run(t));
      t = good;
      t.pub.back() = -t.pub.back();
      CHECK(!run(t));
    }
    {  // A and C swapped
      auto t = good;
      std::swap(t.a, t.c);
      CHECK(!run(t));
    }
    {  // A off the curve
      auto t = good;
      t.a.y = t.a.y + C::Fq::one();
      CHECK(!run(t));
    }
    {  // C off the curve
      auto t = good;
      t.c.x = t.c.x + C::Fq::one();
      CHECK(!run(t));
    }
    {  // B on the twist but outside G2
      auto t = good;
      t.b = g2_of<C>(g2_outside);
      CHECK(!run(t));
    }
    if (g1_outside) {  // A on the curve but outside G1
      auto t = good;
      t.a = g1_of<C>(*g1_outside);
      CHECK(!run(t));
    }
    {  // B negated: on the curve, in G2, wrong
      auto t = good;
      t.b = -t.b;
      CHECK(!run(t));
    }
    {  // wrong number of public inputs
      auto t = good;
      t.pub.push_back(C::Fr::one());
      CHECK(!run(t));
    }
  }
}

template <class C>
void time_verify(const Groth16Vector& v) {
  const LoadedProof<C> l = load<C>(v);
  run(l);  // warm the Frobenius tables
  const int reps = 20;
  auto t0 = std::chrono::steady_clock::now();
  bool all = true;
  for (int i = 0; i < reps; i++) all &= run(l);
  auto t1 = std::chrono::steady_clock::now();
  CHECK(all);
  double ms = std::chrono::duration<double, std::milli>(t1 - t0).count() / reps;
  std::printf("%s: verify_groth16 %.2f ms (%s, %zu public)\n", C::name(), ms, v.name, l.pub.size());
  auto p0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; i++) pairing<C>(C::g1_generator(), C::g2_generator());
  auto p1 = std::chrono::steady_clock::now();
  std::printf("%s: one pairing %.2f ms\n", C::name(), std::chrono::duration<double, std::milli>(p1 - p0).count() / reps);
}

}  // namespace

int main() {
  check_tower<Bn254>();
  check_tower<Bls12381>();
  check_noble_vectors<Bn254>(bn254_pairing_vectors, bn254_noble_multiple);
  check_noble_vectors<Bls12381>(bls12_381_pairing_vectors, bls12_381_noble_multiple);
  check_bilinearity<Bn254>();
  check_bilinearity<Bls12381>();
  check_subgroups<Bn254>(bn254_g2_not_in_subgroup);
  check_subgroups<Bls12381>(bls12_381_g2_not_in_subgroup);
  CHECK(!(in_subgroup_g1<Bls12381>(g1_of<Bls12381>(bls12_381_g1_not_in_subgroup))));
  check_groth16<Bn254>(bn254_groth16_vectors, bn254_g2_not_in_subgroup, nullptr);
  check_groth16<Bls12381>(bls12_381_groth16_vectors, bls12_381_g2_not_in_subgroup, &bls12_381_g1_not_in_subgroup);
  time_verify<Bn254>(bn254_groth16_vectors[0]);
  time_verify<Bls12381>(bls12_381_groth16_vectors[0]);
  return cuzk_test::finish("pairing_test");
}
