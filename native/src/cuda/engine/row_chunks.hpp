// The A/B rows of a GPU engine, whole or read in chunks (the memory plan's rows_chunk): a chunk is
// a range of rows whose offsets, columns and coefficients (values, or indices into the key's table
// of distinct values) lie in one device buffer of rows_chunk bytes, each array 16-byte aligned.
// Plain C++: the memory plan (gpu_costs.cpp) sizes the rows and the smallest chunk, one row, with
// the same layout the key store fills.
#pragma once

#include <cstdint>
#include <vector>

#include "util/hd.hpp"

namespace cuzk::cuda {

// A coefficient as one 32-bit word when the key's columns and its table of distinct values leave
// room for both: the column in the low column_bits, the value's index in the table above them,
// and no coefficient array (4 bytes a coefficient instead of 4 + 2). A PoRep key (2^27 columns, 8
// values) takes 30 bits.
struct EntryPacking {
  uint32_t column_bits = 0;  // 0: not packed (the columns alone, the coefficients apart)

  // n_vars columns; values: the table's size (0: no table).
  static EntryPacking of(uint64_t n_vars, uint64_t values) {
    EntryPacking p;
    if (values == 0 || n_vars == 0) return p;
    const uint32_t columns = bits_for(n_vars - 1), indices = bits_for(values - 1);
    if (columns + indices <= 32 && columns < 32) p.column_bits = columns;
    return p;
  }
  CUZK_HD bool packed() const { return column_bits != 0; }
  CUZK_HD uint32_t pack(uint32_t column, uint32_t index) const { return column | (index << column_bits); }
  CUZK_HD uint32_t column(uint32_t entry) const { return entry & ((1u << column_bits) - 1); }
  CUZK_HD uint32_t index(uint32_t entry) const { return entry >> column_bits; }
  // The bytes of a coefficient besides its column: none packed, a 16-bit index with a table, else
  // the value (field_bytes).
  uint64_t coef_bytes(uint64_t values, uint64_t field_bytes) const { return packed() ? 0 : values ? 2 : field_bytes; }

 private:
  // Bits to write x (at least 1).
  static uint32_t bits_for(uint64_t x) {
    uint32_t b = 1;
    while (b < 64 && (x >> b) != 0) b++;
    return b;
  }
};

struct RowChunkLayout {
  // Byte offsets of each array in the chunk buffer, and the bytes the chunk takes.
  uint64_t start_a = 0, start_b = 0, signal_a = 0, signal_b = 0, coef_a = 0, coef_b = 0, bytes = 0;

  // rows rows (rows + 1 offsets per matrix) holding coefs_a and coefs_b coefficients of
  // coef_bytes each besides their columns (EntryPacking::coef_bytes).
  static RowChunkLayout of(uint64_t rows, uint64_t coefs_a, uint64_t coefs_b, uint64_t coef_bytes) {
    auto up = [](uint64_t b) { return (b + 15) & ~uint64_t(15); };
    RowChunkLayout l;
    l.start_a = 0;
    l.start_b = l.start_a + up((rows + 1) * 4);
    l.signal_a = l.start_b + up((rows + 1) * 4);
    l.signal_b = l.signal_a + up(coefs_a * 4);
    l.coef_a = l.signal_b + up(coefs_b * 4);
    l.coef_b = l.coef_a + up(coefs_a * coef_bytes);
    l.bytes = l.coef_b + up(coefs_b * coef_bytes);
    return l;
  }
};

// One chunk: rows [first, end) of both matrices, from coefficient first_a of A and first_b of B.
struct RowChunk {
  uint32_t first = 0, end = 0;
  uint64_t first_a = 0, end_a = 0, first_b = 0, end_b = 0;
};

// Cuts rows [0, rows) into chunks that each fit `capacity` bytes in RowChunkLayout (row_start_*:
// the rows + 1 offsets of each matrix). Empty when one row alone does not fit.
template <class Offsets>
std::vector<RowChunk> cut_row_chunks(const Offsets& row_start_a, const Offsets& row_start_b, uint64_t rows,
                                     uint64_t coef_bytes, uint64_t capacity) {
  std::vector<RowChunk> out;
  uint64_t r0 = 0;
  while (r0 < rows) {
    // The longest run of rows from r0 that fits: a binary search over the run's length.
    uint64_t lo = 0, hi = rows - r0;
    while (lo < hi) {
      const uint64_t mid = (lo + hi + 1) / 2, r1 = r0 + mid;
      const RowChunkLayout l = RowChunkLayout::of(mid, row_start_a[r1] - row_start_a[r0],
                                                  row_start_b[r1] - row_start_b[r0], coef_bytes);
      if (l.bytes <= capacity) lo = mid;
      else hi = mid - 1;
    }
    if (lo == 0) return {};
    const uint64_t r1 = r0 + lo;
    out.push_back(RowChunk{(uint32_t)r0, (uint32_t)r1, (uint64_t)row_start_a[r0], (uint64_t)row_start_a[r1],
                           (uint64_t)row_start_b[r0], (uint64_t)row_start_b[r1]});
    r0 = r1;
  }
  return out;
}

}  // namespace cuzk::cuda
