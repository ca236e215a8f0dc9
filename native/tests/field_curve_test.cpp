// Field and curve arithmetic checked against values computed by @noble/curves (vectors.inc), plus
// algebraic identities on random elements.
#include <random>

#include "check.hpp"
#include "curve/ops.hpp"
#include "vectors.inc"

using namespace cuzk::field;
using namespace cuzk::curve;

template <class F>
F from_std_limbs(const uint64_t* v) { return F::from_raw(v).to_mont(); }

template <class F, size_t K>
void check_field(const FieldVector (&vectors)[K]) {
  for (const auto& v : vectors) {
    F a = from_std_limbs<F>(v.a), b = from_std_limbs<F>(v.b);
    CHECK(a + b == from_std_limbs<F>(v.sum));
    CHECK(a - b == from_std_limbs<F>(v.diff));
    CHECK(a * b == from_std_limbs<F>(v.prod));
    CHECK(a.inverse() == from_std_limbs<F>(v.inv_a));
    uint64_t back[6] = {0};
    a.to_std_limbs(back);
    bool same = true;
    for (int i = 0; i < F::N; i++) same &= back[i] == v.a[i];
    CHECK(same);
    F s;
    if ((a.sqr()).sqrt(s)) CHECK(s == a || s == -a);
    else CHECK(false);
  }
  // batch inversion agrees with single inversions, zeros stay zero
  std::mt19937_64 rng(7);
  std::vector<F> xs(37), scratch(37), ref(37);
  for (size_t i = 0; i < xs.size(); i++) {
    uint64_t raw[F::N];
    for (auto& w : raw) w = rng();
    raw[F::N - 1] >>= 4;
    xs[i] = (i % 9 == 0) ? F::zero() : F::from_raw(raw).to_mont();
    ref[i] = xs[i].inverse();
  }
  batch_inverse(xs.data(), xs.size(), scratch.data());
  bool all = true;
  for (size_t i = 0; i < xs.size(); i++) all &= xs[i] == ref[i];
  CHECK(all);
}

template <class C, size_t K1, size_t K2>
void check_curve(const G1Vector (&g1v)[K1], const G2Vector (&g2v)[K2]) {
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  const auto& g1 = C::g1_generator();
  const auto& g2 = C::g2_generator();
  CHECK((is_on_curve<C, Fq>(g1)));
  CHECK((is_on_curve<C, Fq2>(g2)));
  for (const auto& v : g1v) {
    auto p = scalar_mul(g1, v.k, 4).to_affine();
    CHECK(p.x == from_std_limbs<Fq>(v.x) && p.y == from_std_limbs<Fq>(v.y));
    CHECK((is_on_curve<C, Fq>(p)));
  }
  for (const auto& v : g2v) {
    auto p = scalar_mul(g2, v.k, 4).to_affine();
    Fq2 x{from_std_limbs<Fq>(v.x0), from_std_limbs<Fq>(v.x1)};
    Fq2 y{from_std_limbs<Fq>(v.y0), from_std_limbs<Fq>(v.y1)};
    CHECK(p.x == x && p.y == y);
  }
  // r * G = infinity, (r-1) G = -G, and the special cases of the addition formulas
  uint64_t r[4];
  for (int i = 0; i < 4; i++) r[i] = C::Fr::Params::MODULUS[i];
  CHECK(scalar_mul(g1, r, 4).is_infinity());
  CHECK(scalar_mul(g2, r, 4).is_infinity());
  auto x = Xyzz<Fq>::from_affine(g1);
  CHECK(x.add_affine(g1).equals(x.dbl()));
  CHECK(x.add_affine(-g1).is_infinity());
  CHECK(x.add(x).equals(x.dbl()));
  CHECK(x.add(-x).is_infinity());
  CHECK(Xyzz<Fq>::infinity().add_affine(g1).equals(x));
  CHECK(x.add_affine(Affine<Fq>::infinity()).equals(x));
  uint64_t three[4] = {3, 0, 0, 0};
  CHECK(x.dbl().add(x).equals(scalar_mul(g1, three, 4)));
  std::vector<Xyzz<Fq>> pts{x, x.dbl(), Xyzz<Fq>::infinity(), x.dbl().add(x)};
  std::vector<Affine<Fq>> aff(pts.size());
  to_affine_batch(pts.data(), aff.data(), pts.size());
  bool same = true;
  for (size_t i = 0; i < pts.size(); i++) same &= aff[i] == pts[i].to_affine();
  CHECK(same);
}

int main() {
  check_field<Bn254Fq>(bn254_fq_vectors);
  check_field<Bn254Fr>(bn254_fr_vectors);
  check_field<Bls12381Fq>(bls12_381_fq_vectors);
  check_field<Bls12381Fr>(bls12_381_fr_vectors);
  check_curve<Bn254>(bn254_g1_vectors, bn254_g2_vectors);
  check_curve<Bls12381>(bls12_381_g1_vectors, bls12_381_g2_vectors);
  return cuzk_test::finish("field_curve_test");
}
