// The CPU MSM over BN254's G1, compiled once for the library: one instantiation a
// file, as the CUDA MSM's (cuda/msm/<curve>_g<group>.cu), so that the four compile side by side.
// GCC 12 reports its own AVX-512 shift intrinsics (_mm512_undefined_epi32 inside) as maybe
// uninitialised; the warning is silenced for these files only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "cpu/msm_impl.hpp"

namespace cuzk::cpu {
template curve::Xyzz<curve::Bn254::Fq> msm<curve::Bn254, curve::Bn254::Fq>(ThreadPool&, const uint8_t*, const uint8_t*, size_t);
}  // namespace cuzk::cpu
