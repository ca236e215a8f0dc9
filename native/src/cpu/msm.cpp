// The four MSM instantiations (G1 and G2 of BN254 and BLS12-381), compiled once for the library.
// GCC 12 reports its own AVX-512 shift intrinsics (_mm512_undefined_epi32 inside) as maybe
// uninitialised; the warning is silenced for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "cpu/msm_impl.hpp"

namespace cuzk::cpu {

using curve::Bls12381;
using curve::Bn254;
template curve::Xyzz<Bn254::Fq> msm<Bn254, Bn254::Fq>(ThreadPool&, const uint8_t*, const uint8_t*, size_t);
template curve::Xyzz<Bn254::Fq2> msm<Bn254, Bn254::Fq2>(ThreadPool&, const uint8_t*, const uint8_t*, size_t);
template curve::Xyzz<Bls12381::Fq> msm<Bls12381, Bls12381::Fq>(ThreadPool&, const uint8_t*, const uint8_t*, size_t);
template curve::Xyzz<Bls12381::Fq2> msm<Bls12381, Bls12381::Fq2>(ThreadPool&, const uint8_t*, const uint8_t*, size_t);
}  // namespace cuzk::cpu
