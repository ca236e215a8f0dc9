// a = A.w, b = B.w, c = a*b per constraint row, from the key's coefficients in compressed rows
// (engine/key_view.hpp), as values or as indices into the key's table of distinct values. A coefficient is stored as v*R^2, so its Montgomery product with the
// standard-form witness value is v*w in Montgomery form: the NTTs take the result as it is.
#pragma once

#include "cuda/runtime/runtime.cuh"

namespace cuzk::cuda {

// One matrix on the device: row offsets (32-bit: a key has fewer than 2^32 coefficients), the
// columns, and the coefficients themselves or (coef_index set) a 16-bit index into a table of the
// distinct values (engine::CoefTable).
template <class F>
struct DeviceRows {
  const uint32_t* start;  // rows + 1
  const uint32_t* signal;
  const F* coef;
  const uint16_t* coef_index;
  const F* coef_table;
};

template <class F>
__device__ __forceinline__ F row_dot(const DeviceRows<F>& m, uint32_t r, const F* __restrict__ w) {
  F acc = F::zero();
  const uint32_t e = m.start[r + 1];
  if (m.coef_index) {
    for (uint32_t k = m.start[r]; k < e; k++) acc += load16(m.coef_table + m.coef_index[k]) * load16(w + m.signal[k]);
  } else {
    for (uint32_t k = m.start[r]; k < e; k++) acc += load16(m.coef + k) * load16(w + m.signal[k]);
  }
  return acc;
}

// One thread per row of the domain; rows past the matrices are zero. vc NULL: a and b only (an NTT
// stage of two vectors forms c later, with c_rows).
template <class F>
__global__ void abc_rows(DeviceRows<F> a, DeviceRows<F> b, uint32_t rows, uint32_t domain, const F* __restrict__ w,
                         F* __restrict__ va, F* __restrict__ vb, F* __restrict__ vc) {
  uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= domain) return;
  F x = F::zero(), y = F::zero();
  if (r < rows) {
    x = row_dot(a, r, w);
    y = row_dot(b, r, w);
  }
  store16(va + r, x);
  store16(vb + r, y);
  if (vc) store16(vc + r, x * y);
}

// c alone, in the place the caller gives (the same products as abc_rows).
template <class F>
__global__ void c_rows(DeviceRows<F> a, DeviceRows<F> b, uint32_t rows, uint32_t domain, const F* __restrict__ w,
                       F* __restrict__ vc) {
  uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= domain) return;
  store16(vc + r, r < rows ? row_dot(a, r, w) * row_dot(b, r, w) : F::zero());
}

template <class F>
__global__ void to_mont_kernel(F* __restrict__ v, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) store16(v + i, load16(v + i).to_mont());
}

}  // namespace cuzk::cuda
