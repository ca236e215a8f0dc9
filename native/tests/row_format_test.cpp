// The GPU engine's A/B row format, on the host (cuda/engine/row_chunks.hpp): when a coefficient's
// column and its value's index share one 32-bit word (EntryPacking), every (column, index) a key
// can hold comes back as it went in, and no pair that does not fit is packed; a row of packed
// entries evaluates to the same dot product as the columns and values apart (the arithmetic
// abc.cuh's row_dot does per entry, over integers mod a prime); the chunks cut from packed rows
// cover every row once within their capacity; and the memory plan prices the rows with the same
// bytes a coefficient (gpu_costs.cpp).
#include <cstdint>
#include <random>
#include <vector>

#include "check.hpp"
#include "cuda/engine/gpu_costs.hpp"
#include "cuda/engine/row_chunks.hpp"

namespace {

using cuzk::cuda::EntryPacking;
using cuzk::cuda::RowChunkLayout;

constexpr uint64_t kP = (1ull << 61) - 1;
uint64_t mul_mod(uint64_t a, uint64_t b) { return (uint64_t)((unsigned __int128)a * b % kP); }

uint32_t bits_for(uint64_t x) {
  uint32_t b = 1;
  while (b < 64 && (x >> b) != 0) b++;
  return b;
}

void packing_bounds() {
  // A PoRep key: 2^27 columns, 8 values: 27 + 3 bits.
  EntryPacking porep = EntryPacking::of(1ull << 27, 8);
  CHECK(porep.packed() && porep.column_bits == 27);
  CHECK(porep.coef_bytes(8, 32) == 0);
  // Exactly 32 bits fit; one more does not.
  CHECK(EntryPacking::of(1ull << 20, 4096).column_bits == 20);
  CHECK(!EntryPacking::of(1ull << 20, 4097).packed());
  CHECK(EntryPacking::of(1ull << 20, 4097).coef_bytes(4097, 32) == 2);
  // No table (too many values): the values themselves.
  CHECK(!EntryPacking::of(1000, 0).packed());
  CHECK(EntryPacking::of(1000, 0).coef_bytes(0, 32) == 32);
  // Columns past 2^31 leave no bit for an index.
  CHECK(!EntryPacking::of((1ull << 31) + 1, 1).packed());
  CHECK(!EntryPacking::of(1ull << 32, 2).packed());
  CHECK(EntryPacking::of(1, 1).packed());  // one column, one value
  CHECK(!EntryPacking::of(0, 8).packed());
  // Random shapes: packed exactly when both widths fit in 32 bits, and every pair comes back.
  std::mt19937_64 rng(7);
  int packed_shapes = 0;
  for (int t = 0; t < 4000; t++) {
    const uint64_t n_vars = 1 + (rng() >> (rng() % 5 == 0 ? rng() % 64 : 32 + rng() % 32));
    const uint64_t values = (rng() % 5 == 0) ? 0 : 1 + (rng() >> (40 + rng() % 24));
    const EntryPacking p = EntryPacking::of(n_vars, values);
    const bool fits = values && n_vars && bits_for(n_vars - 1) + bits_for(values - 1) <= 32 && bits_for(n_vars - 1) < 32;
    CHECK(p.packed() == fits);
    if (!p.packed()) continue;
    packed_shapes++;
    for (int k = 0; k < 64; k++) {
      const uint32_t column = (uint32_t)(k == 0 ? n_vars - 1 : rng() % n_vars);
      const uint32_t index = (uint32_t)(k == 1 ? values - 1 : rng() % values);
      const uint32_t e = p.pack(column, index);
      if (p.column(e) != column || p.index(e) != index) {
        CHECK(!"a packed entry comes back as it went in");
        return;
      }
    }
  }
  CHECK(packed_shapes > 1000);
}

// Rows of random length over a random table: the dot products from packed entries equal those
// from columns and values apart.
void packed_rows_dot() {
  std::mt19937_64 rng(11);
  for (int t = 0; t < 50; t++) {
    const uint64_t n_vars = 1 + rng() % 5000, values = 1 + rng() % 300, rows = 1 + rng() % 200;
    const EntryPacking p = EntryPacking::of(n_vars, values);
    CHECK(p.packed());
    std::vector<uint64_t> table(values), w(n_vars);
    for (auto& v : table) v = rng() % kP;
    for (auto& v : w) v = rng() % kP;
    for (uint64_t r = 0; r < rows; r++) {
      const uint64_t len = rng() % 12;
      uint64_t plain = 0, packed = 0;
      for (uint64_t k = 0; k < len; k++) {
        const uint32_t column = (uint32_t)(rng() % n_vars), index = (uint32_t)(rng() % values);
        plain = (plain + mul_mod(table[index], w[column])) % kP;
        const uint32_t e = p.pack(column, index);
        packed = (packed + mul_mod(table[p.index(e)], w[p.column(e)])) % kP;
      }
      CHECK(plain == packed);
    }
  }
}

// Chunks of packed rows (no coefficient arrays): every row in one chunk, in order, each within
// the capacity, the arrays inside the chunk.
void packed_chunks() {
  std::mt19937_64 rng(13);
  for (int t = 0; t < 100; t++) {
    const uint64_t rows = 1 + rng() % 3000;
    std::vector<uint64_t> start_a(rows + 1, 0), start_b(rows + 1, 0);
    uint64_t longest = 0;
    for (uint64_t r = 0; r < rows; r++) {
      const uint64_t la = rng() % 9, lb = rng() % 5;
      start_a[r + 1] = start_a[r] + la;
      start_b[r + 1] = start_b[r] + lb;
      longest = std::max(longest, la + lb);
    }
    const uint64_t one_row = RowChunkLayout::of(1, 8, 4, 0).bytes;
    const uint64_t capacity = one_row + rng() % 20000;
    const auto chunks = cuzk::cuda::cut_row_chunks(start_a, start_b, rows, 0, capacity);
    CHECK(!chunks.empty());
    uint64_t next = 0;
    for (const auto& ch : chunks) {
      CHECK(ch.first == next && ch.end > ch.first);
      const RowChunkLayout l =
          RowChunkLayout::of(ch.end - ch.first, ch.end_a - ch.first_a, ch.end_b - ch.first_b, 0);
      CHECK(l.bytes <= capacity);
      CHECK(l.coef_a == l.coef_b && l.coef_b == l.bytes);  // no coefficient arrays
      CHECK(l.signal_b >= l.signal_a + (ch.end_a - ch.first_a) * 4);
      next = ch.end;
    }
    CHECK(next == rows);
  }
}

// The plan prices a coefficient at 4 bytes packed, 4 + 2 with a table, 4 + 32 without.
void priced_rows() {
  for (uint64_t values : {8ull, 70000ull, 0ull}) {
    cuzk::engine::KeyShape k = cuzk::engine::describe_key(CUZK_CURVE_BLS12_381, 1u << 20, 2, (1u << 20) - 8, 3u << 20);
    k.coef_values = values == 70000 ? 0 : values;  // a table holds at most 2^16 values
    k.row_max_coefs = 6;
    const cuzk::engine::EngineCosts c = cuzk::cuda::gpu_costs(k, false);
    const uint64_t per_coef = values == 8 ? 4 : values == 70000 || values == 0 ? 4 + 32 : 4 + 2;
    CHECK(c.rows == 2 * ((k.rows + 1) * 4 + 4 + 16) + k.coefs * per_coef + k.coef_values * 32);
    CHECK(c.row_max == RowChunkLayout::of(1, 6, 6, per_coef - 4).bytes);
  }
}

}  // namespace

int main() {
  packing_bounds();
  packed_rows_dot();
  packed_chunks();
  priced_rows();
  return cuzk_test::finish("row_format_test");
}
