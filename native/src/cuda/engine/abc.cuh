// a = A.w, b = B.w, c = a*b per constraint row, from the key's coefficients in compressed rows
// (engine/key_view.hpp), as values or as indices into the key's table of distinct values. A
// coefficient is stored as v*R^2, so its Montgomery product with the standard-form witness value
// is v*w in Montgomery form: the NTTs take the result as it is.
#pragma once

#include "cuda/engine/row_chunks.hpp"
#include "cuda/runtime/runtime.cuh"

namespace cuzk::cuda {

// One matrix on the device, whole or a chunk of its rows (cuda/engine/row_chunks.hpp): row
// offsets (32-bit: a key has fewer than 2^32 coefficients; a chunk's are its rows' and the next
// one's, still counted from the matrix's first coefficient), the columns, and the coefficients
// themselves, a 16-bit index (coef_index) into a table of the distinct values (engine::CoefTable),
// or that index packed above the column (EntryPacking), from coefficient `first` of
// the matrix on.
template <class F>
struct DeviceRows {
  const uint32_t* start;  // rows + 1
  const uint32_t* signal;
  const F* coef;
  const uint16_t* coef_index;
  const F* coef_table;
  uint32_t first;
  EntryPacking packing;  // not packed: signal holds the columns alone
};

// Row r of the rows held (0: the first one held).
template <class F>
__device__ __forceinline__ F row_dot(const DeviceRows<F>& m, uint32_t r, const F* __restrict__ w) {
  F acc = F::zero();
  const uint32_t b = m.start[r] - m.first, e = m.start[r + 1] - m.first;
  if (m.packing.packed()) {
    for (uint32_t k = b; k < e; k++) {
      const uint32_t entry = m.signal[k];
      acc += load16(m.coef_table + m.packing.index(entry)) * load16(w + m.packing.column(entry));
    }
  } else if (m.coef_index) {
    for (uint32_t k = b; k < e; k++) acc += load16(m.coef_table + m.coef_index[k]) * load16(w + m.signal[k]);
  } else {
    for (uint32_t k = b; k < e; k++) acc += load16(m.coef + k) * load16(w + m.signal[k]);
  }
  return acc;
}

// One thread per row r in [r0, r_end) of the domain, its matrices' rows held from r0 on; rows
// from `rows` on (past the matrices) are zero. vc NULL: a and b only (an NTT stage of two vectors
// forms c later, with c_rows).
template <class F>
__global__ void abc_rows(DeviceRows<F> a, DeviceRows<F> b, uint32_t r0, uint32_t r_end, uint32_t rows,
                         const F* __restrict__ w, F* __restrict__ va, F* __restrict__ vb, F* __restrict__ vc) {
  uint32_t r = r0 + blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= r_end) return;
  F x = F::zero(), y = F::zero();
  if (r < rows) {
    x = row_dot(a, r - r0, w);
    y = row_dot(b, r - r0, w);
  }
  store16(va + r, x);
  store16(vb + r, y);
  if (vc) store16(vc + r, x * y);
}

// c alone, in the place the caller gives (the same products as abc_rows).
template <class F>
__global__ void c_rows(DeviceRows<F> a, DeviceRows<F> b, uint32_t r0, uint32_t r_end, uint32_t rows,
                       const F* __restrict__ w, F* __restrict__ vc) {
  uint32_t r = r0 + blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= r_end) return;
  store16(vc + r, r < rows ? row_dot(a, r - r0, w) * row_dot(b, r - r0, w) : F::zero());
}

// One matrix's dot products alone (a or b), zero past the matrices: for an NTT stage that forms
// b before a.
template <class F>
__global__ void dot_rows(DeviceRows<F> m, uint32_t r0, uint32_t r_end, uint32_t rows, const F* __restrict__ w,
                         F* __restrict__ out) {
  uint32_t r = r0 + blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= r_end) return;
  store16(out + r, r < rows ? row_dot(m, r - r0, w) : F::zero());
}

template <class F>
__global__ void to_mont_kernel(F* __restrict__ v, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) store16(v + i, load16(v + i).to_mont());
}

}  // namespace cuzk::cuda
