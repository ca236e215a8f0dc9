// Groth16 verification and subgroup checks, instantiated for both curves so that callers do not
// compile the pairing templates.
#include "pairing/verify.hpp"

#include "curve/ops.hpp"
#include "pairing/pairing.hpp"

namespace cuzk::pairing {

namespace {

template <class C, class F>
bool in_subgroup(const curve::Affine<F>& p) {
  if (!curve::is_on_curve<C, F>(p)) return false;
  uint64_t r[4];
  for (int i = 0; i < 4; i++) r[i] = C::Fr::Params::MODULUS[i];
  return curve::scalar_mul_xyzz(curve::Xyzz<F>::from_affine(p), r, 4).is_infinity();
}

}  // namespace

template <class C>
bool in_subgroup_g1(const typename C::G1& p) { return in_subgroup<C, typename C::Fq>(p); }
template <class C>
bool in_subgroup_g2(const typename C::G2& q) { return in_subgroup<C, typename C::Fq2>(q); }

template <class C>
bool verify_groth16(const VerifyingKey<C>& vk, const typename C::G1& a, const typename C::G2& b,
                    const typename C::G1& c, const typename C::Fr* public_inputs, size_t n_public) {
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  using G1 = typename C::G1;
  using G2 = typename C::G2;
  if (vk.ic.size() != n_public + 1) return false;
  if (!in_subgroup_g1<C>(a) || !in_subgroup_g2<C>(b) || !in_subgroup_g1<C>(c)) return false;
  bool key_ok = curve::is_on_curve<C, Fq>(vk.alpha1) && curve::is_on_curve<C, Fq2>(vk.beta2) &&
                curve::is_on_curve<C, Fq2>(vk.gamma2) && curve::is_on_curve<C, Fq2>(vk.delta2);
  for (const auto& p : vk.ic) key_ok = key_ok && curve::is_on_curve<C, Fq>(p);
  if (!key_ok) return false;

  curve::Xyzz<Fq> acc = curve::Xyzz<Fq>::from_affine(vk.ic[0]);
  for (size_t i = 0; i < n_public; i++) {
    if (!public_inputs[i].is_canonical()) return false;
    uint64_t k[C::Fr::N];
    public_inputs[i].to_std_limbs(k);
    acc = acc.add(curve::scalar_mul_xyzz(curve::Xyzz<Fq>::from_affine(vk.ic[i + 1]), k, C::Fr::N));
  }
  const G1 ps[4] = {-a, vk.alpha1, acc.to_affine(), c};
  const G2 qs[4] = {b, vk.beta2, vk.gamma2, vk.delta2};
  return pairing_product_is_one<C>(ps, qs, 4);
}

#define CUZK_PAIRING_INSTANTIATE(C)                                                             \
  template bool in_subgroup_g1<C>(const C::G1&);                                                \
  template bool in_subgroup_g2<C>(const C::G2&);                                                \
  template bool verify_groth16<C>(const VerifyingKey<C>&, const C::G1&, const C::G2&,           \
                                  const C::G1&, const C::Fr*, size_t);
CUZK_PAIRING_INSTANTIATE(curve::Bn254)
CUZK_PAIRING_INSTANTIATE(curve::Bls12381)
#undef CUZK_PAIRING_INSTANTIATE

}  // namespace cuzk::pairing
