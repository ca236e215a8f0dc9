// Device counterparts of curve/curves.hpp: the same point templates over the device fields. Each
// device type has the byte layout of its host twin (checked below), so buffers are copied as-is.
#pragma once

#include "cuda/field/field.cuh"
#include "curve/curves.hpp"
#include "curve/point.hpp"
#include "field/fp2.hpp"

// The device G2 field (products as calls) multiplies by lazy-reduction Karatsuba (DFp::fp2_mul):
// two Montgomery reductions instead of three, its three wide products each by Karatsuba halves
// (HalfProducts; docs/perf-log.md #62). Declared before any use, as an explicit specialization of
// field::Fp2's product for BLS12-381's device Fq2 only.
namespace cuzk::field {
using DeviceBls12381FqCalled = cuda::DFp<curve::Bls12381::Fq::Params, cuda::kCalledProducts, true>;
template <>
CUZK_HD Fp2<DeviceBls12381FqCalled> Fp2<DeviceBls12381FqCalled>::operator*(const Fp2& o) const {
  auto r = Base::fp2_mul(c0, c1, o.c0, o.c1);
  return {r.c0, r.c1};
}
}  // namespace cuzk::field

namespace cuzk::cuda {

template <class HC>
struct DeviceCurve {
  using Host = HC;
  using Fq = DFp<typename HC::Fq::Params>;
  using Fr = DFp<typename HC::Fr::Params>;
  // products as calls (see field.cuh); the wide products by halves where the Fp2 product is the
  // lazy one (BLS12-381's, above)
  using Fq2 = field::Fp2<DFp<typename HC::Fq::Params, kCalledProducts, true>>;
  using G1 = curve::Affine<Fq>;
  using G2 = curve::Affine<Fq2>;
  using G1x = curve::Xyzz<Fq>;
  using G2x = curve::Xyzz<Fq2>;
  // The G1 field of the MSM's long loops of additions (the bucket walk, the segment sums): for
  // 12-limb coordinates (BLS12-381) the twin whose products are calls, which runs them faster
  // (most likely the instruction cache: the inlined walk is ~130 KB of code); BN254's shorter
  // 8-limb products are faster inlined (docs/perf-log.md, #55). Same bytes as Fq.
  using FqWalk = DFp<typename HC::Fq::Params, (HC::Fq::Params::LIMBS >= 6 ? kCalledProducts : kInlineProducts)>;
  static_assert(sizeof(Fq) == sizeof(typename HC::Fq), "device Fq layout");
  static_assert(sizeof(Fr) == sizeof(typename HC::Fr), "device Fr layout");
  static_assert(sizeof(G1) == sizeof(typename HC::G1) && sizeof(G2) == sizeof(typename HC::G2), "affine layout");
  static_assert(sizeof(G1x) == sizeof(typename HC::G1x) && sizeof(G2x) == sizeof(typename HC::G2x), "xyzz layout");
  static_assert(sizeof(FqWalk) == sizeof(Fq), "the walk's field twin shares the layout");
};

// One group of one curve: the types an MSM needs, host and device side by side.
template <class HC, int G>
struct Group;
template <class HC>
struct Group<HC, 1> {
  using D = DeviceCurve<HC>;
  using Affine = typename D::G1;
  using Xyzz = typename D::G1x;
  using HostAffine = typename HC::G1;
  using HostXyzz = typename HC::G1x;
  using WalkAffine = curve::Affine<typename D::FqWalk>;  // the bucket walk's twins of Affine and Xyzz
  using WalkXyzz = curve::Xyzz<typename D::FqWalk>;
  static constexpr size_t AFFINE_BYTES = HC::G1_BYTES;
};
template <class HC>
struct Group<HC, 2> {
  using D = DeviceCurve<HC>;
  using Affine = typename D::G2;
  using Xyzz = typename D::G2x;
  using HostAffine = typename HC::G2;
  using HostXyzz = typename HC::G2x;
  using WalkAffine = Affine;  // G2's products are calls already
  using WalkXyzz = Xyzz;
  static constexpr size_t AFFINE_BYTES = HC::G2_BYTES;
};

}  // namespace cuzk::cuda
