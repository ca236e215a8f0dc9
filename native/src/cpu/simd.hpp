// The CPU kernels' one switch for their AVX-512 IFMA paths (MSM bucket additions, NTT
// butterflies): on when the CPU has AVX-512 IFMA (both paths give the same bytes).
// set_simd is for tests and benchmarks that compare the vector and the portable paths.
#pragma once

namespace cuzk::cpu {

bool simd_available();  // the CPU (and OS) support AVX-512 IFMA
bool simd_active();     // the kernels use it now
void set_simd(bool on); // on only takes effect where available

}  // namespace cuzk::cpu
