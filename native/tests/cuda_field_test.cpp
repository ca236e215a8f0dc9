// The device field and curve code (native/src/cuda/field/field.cuh, curve/curves.cuh) run through its host
// emulation of the PTX carry chains, against the host Fp: the same limb logic the GPU executes,
// checked on any machine (no GPU needed).
#include <cstring>
#include <random>

#include "check.hpp"
#include "cuda/curve/curves.cuh"
#include "curve/ops.hpp"

using namespace cuzk;

namespace {

std::mt19937_64 rng(1);

template <class H>
H random_element() {
  uint64_t r[H::N];
  for (auto& w : r) w = rng();
  r[H::N - 1] >>= 3;
  return H::from_raw(r).to_mont();
}
using cuzk_test::same_bytes;

template <class H, class D>
void check_field() {
  int bad = 0;
  for (int it = 0; it < 5000; it++) {
    H a = random_element<H>(), b = random_element<H>();
    if (it % 97 == 0) a = H::zero();
    if (it % 89 == 0) b = H::zero() - H::one();
    D da = same_bytes<D>(a), db = same_bytes<D>(b);
    bad += !(same_bytes<H>(da * db) == a * b);
    bad += !(same_bytes<H>(da + db) == a + b);
    bad += !(same_bytes<H>(da - db) == a - b);
    bad += !(same_bytes<H>(-da) == -a);
    bad += !(same_bytes<H>(da.sqr()) == a.sqr());
  }
  CHECK(bad == 0);
  // Representations with zero 32-bit halves: rows of the product whose low limb is zero, the
  // m_i = 0 case of the reduction (BLS12-381 r's friendly reduction row treats it apart).
  for (int it = 0; it < 20000; it++) {
    H x[2];
    for (H& h : x) {
      uint64_t r[H::N];
      for (auto& w : r) {
        w = rng();
        const uint64_t pick = rng() % 4;
        if (pick == 1) w &= 0xffffffff00000000ull;
        if (pick == 2) w &= 0x00000000ffffffffull;
        if (pick == 3) w = 0;
      }
      r[H::N - 1] >>= 3;
      h = H::from_raw(r);  // taken as Montgomery limbs: any value below p is one
    }
    bad += !(same_bytes<H>(same_bytes<D>(x[0]) * same_bytes<D>(x[1])) == x[0] * x[1]);
  }
  CHECK(bad == 0);
  H a = random_element<H>();
  CHECK(same_bytes<H>(same_bytes<D>(a).inverse()) == a.inverse());  // p - 2 borrows on BLS12-381 r
  CHECK(same_bytes<H>(D::one()) == H::one());
  H raw = H::zero();
  raw.l[0] = 12345;
  CHECK(same_bytes<H>(same_bytes<D>(raw).to_mont()) == H::from_u64(12345));
  CHECK(same_bytes<H>(same_bytes<D>(H::from_u64(12345)).from_mont()) == raw);
}

// Mixed additions through every special case (infinity, doubling, cancellation), doubling and
// full addition, on the device point types.
template <class GA, class GX, class DA, class DX>
void check_curve(const GA& g) {
  int bad = 0;
  GX acc = GX::infinity();
  DX dacc = same_bytes<DX>(acc);
  for (int it = 0; it < 60; it++) {
    uint64_t k[4];
    for (auto& w : k) w = rng();
    GA p = curve::scalar_mul(g, k, 4).to_affine();
    if (it % 17 == 0) p = GA::infinity();
    if (it % 13 == 0) p = same_bytes<GX>(dacc).to_affine();
    if (it % 19 == 0) p = -same_bytes<GX>(dacc).to_affine();
    acc = acc.add_affine(p);
    dacc = dacc.add_affine(same_bytes<DA>(p));
    bad += !same_bytes<GX>(dacc).equals(acc);
    DX d2 = dacc.dbl();
    bad += !same_bytes<GX>(d2).equals(acc.dbl());
    bad += !same_bytes<GX>(d2.add(dacc)).equals(acc.dbl().add(acc));
  }
  CHECK(bad == 0);
}

// The wide product by Karatsuba halves against the schoolbook one, on random limbs and on the
// extremes (all bits set: the halves' sums carry), then inside the lazy Fp2 product of a field that
// uses it (as the device G2 field does), against the host's Fp2.
template <int K>
void check_halves() {
  int bad = 0;
  for (int it = 0; it < 20000; it++) {
    uint32_t a[K], b[K], t0[2 * K], t1[2 * K];
    for (int k = 0; k < K; k++) {
      const uint64_t r = rng();
      const int pick = (int)((r >> 40) % 8);
      a[k] = pick == 0 ? 0xffffffffu : pick == 1 ? 0 : (uint32_t)r;
      b[k] = pick == 2 ? 0xffffffffu : pick == 3 ? 0 : (uint32_t)(r >> 20);
    }
    if (it == 0)
      for (int k = 0; k < K; k++) a[k] = b[k] = 0xffffffffu;
    cuda::limbs_mul_wide<K>(a, b, t0);
    cuda::limbs_mul_wide_halves<K>(a, b, t1);
    bad += std::memcmp(t0, t1, sizeof t0) != 0;
  }
  CHECK(bad == 0);
}

template <class HF2>
void check_halves_fp2() {
  using H = typename HF2::Base;
  using D = cuda::DFp<typename H::Params, cuda::kCalledProducts, true>;
  int bad = 0;
  for (int it = 0; it < 3000; it++) {
    HF2 a{random_element<H>(), random_element<H>()}, b{random_element<H>(), random_element<H>()};
    if (it % 7 == 0) a.c0 = H::zero() - H::one();
    if (it % 11 == 0) b = HF2{H::zero() - H::one(), H::zero() - H::one()};
    if (it % 13 == 0) a.c1 = H::zero();
    const auto r = D::fp2_mul_lazy(same_bytes<D>(a.c0), same_bytes<D>(a.c1), same_bytes<D>(b.c0), same_bytes<D>(b.c1));
    const HF2 want = a * b;
    bad += !(same_bytes<H>(r.c0) == want.c0) + !(same_bytes<H>(r.c1) == want.c1);
  }
  CHECK(bad == 0);
}

}  // namespace

int main() {
  using B = cuda::DeviceCurve<curve::Bn254>;
  using L = cuda::DeviceCurve<curve::Bls12381>;
  check_field<curve::Bn254::Fq, B::Fq>();
  check_field<curve::Bn254::Fr, B::Fr>();
  check_field<curve::Bls12381::Fq, L::Fq>();
  check_field<curve::Bls12381::Fr, L::Fr>();
  check_curve<curve::Bn254::G1, curve::Bn254::G1x, B::G1, B::G1x>(curve::Bn254::g1_generator());
  check_curve<curve::Bn254::G2, curve::Bn254::G2x, B::G2, B::G2x>(curve::Bn254::g2_generator());
  check_curve<curve::Bls12381::G1, curve::Bls12381::G1x, L::G1, L::G1x>(curve::Bls12381::g1_generator());
  check_curve<curve::Bls12381::G2, curve::Bls12381::G2x, L::G2, L::G2x>(curve::Bls12381::g2_generator());
  // the bucket walk's field twins (BLS12-381's products are calls on the device, in pairs)
  check_curve<curve::Bn254::G1, curve::Bn254::G1x, curve::Affine<B::FqWalk>, curve::Xyzz<B::FqWalk>>(
      curve::Bn254::g1_generator());
  check_curve<curve::Bls12381::G1, curve::Bls12381::G1x, curve::Affine<L::FqWalk>, curve::Xyzz<L::FqWalk>>(
      curve::Bls12381::g1_generator());
  check_halves<12>();
  check_halves<8>();
  check_halves_fp2<curve::Bn254::Fq2>();
  check_halves_fp2<curve::Bls12381::Fq2>();
  return cuzk_test::finish("cuda_field_test");
}
