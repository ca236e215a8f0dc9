// Packed scalars (engine/scalar_pack.hpp): for witnesses of many shapes (all zero, all ones, bits
// and bytes as a PoRep witness, uniform 256-bit values, values either side of 2^32, values above
// any field's modulus, lengths that end inside a block), every range of random ends decodes, scalar
// by scalar with the function the GPU kernel uses, to the bytes that were packed; the packed form
// of a witness of bits and bytes is a small fraction of it; a form above the limit is refused.
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "engine/scalar_pack.hpp"
#include "util/thread_pool.hpp"

namespace {

using cuzk::engine::PackedRange;
using cuzk::engine::PackedScalars;

enum class Shape { Zeros, Ones, PorepMix, Uniform, Around32, Mixed };

std::vector<uint8_t> make(Shape shape, uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> s(n * 32, 0);
  for (uint64_t i = 0; i < n; i++) {
    uint8_t* x = &s[i * 32];
    const uint64_t r = rng();
    switch (shape) {
      case Shape::Zeros: break;
      case Shape::Ones: x[0] = 1; break;
      case Shape::PorepMix: x[0] = r % 10 < 4 ? 0 : r % 10 < 8 ? 1 : (uint8_t)(2 + r % 254); break;
      case Shape::Uniform:
        for (int k = 0; k < 32; k++) x[k] = (uint8_t)rng();
        break;
      case Shape::Around32: {  // 2^32 - 1, 2^32, 2^32 + 1, 2, and the top bit alone
        const uint32_t pick = r % 5;
        if (pick == 0) std::memset(x, 0xff, 4);
        else if (pick == 1) x[4] = 1;
        else if (pick == 2) x[0] = 1, x[4] = 1;
        else if (pick == 3) x[0] = 2;
        else x[31] = 0x80;
        break;
      }
      case Shape::Mixed: {
        const uint32_t pick = r % 4;
        if (pick == 1) x[0] = 1;
        if (pick == 2) std::memcpy(x, &r, 4);
        if (pick == 3)
          for (int k = 0; k < 32; k++) x[k] = (uint8_t)rng();
        break;
      }
    }
  }
  return s;
}

// Every scalar of `ranges` random ranges (and the whole) decodes to its bytes.
bool round_trips(const std::vector<uint8_t>& s, uint64_t n, const PackedScalars& p, std::mt19937_64& rng, int ranges) {
  bool ok = true;
  for (int t = 0; t <= ranges && ok; t++) {
    uint64_t lo = 0, hi = n - 1;
    if (t > 0) {
      lo = rng() % n;
      hi = lo + rng() % (n - lo);
    }
    const PackedRange r = p.range(lo, hi);
    std::vector<uint8_t> buf(r.bytes + 16);
    p.write(r, buf.data());
    for (uint64_t i = lo; i <= hi && ok; i++) {
      uint32_t out[8];
      cuzk::engine::decode_packed(buf.data(), r, i, out);
      if (std::memcmp(out, &s[i * 32], 32) != 0) {
        std::fprintf(stderr, "range [%llu, %llu]: scalar %llu decodes wrong\n", (unsigned long long)lo,
                     (unsigned long long)hi, (unsigned long long)i);
        ok = false;
      }
    }
  }
  return ok;
}

}  // namespace

int main() {
  std::string err;
  auto pool = cuzk::ThreadPool::create(2, err);
  CHECK(pool != nullptr);
  if (!pool) return cuzk_test::finish("scalar_pack_test");
  std::mt19937_64 rng(12345);
  const Shape shapes[] = {Shape::Zeros, Shape::Ones, Shape::PorepMix, Shape::Uniform, Shape::Around32, Shape::Mixed};
  const char* names[] = {"zeros", "ones", "porep mix", "uniform", "around 2^32", "mixed"};
  for (int si = 0; si < 6; si++) {
    for (uint64_t n : {1ull, 2ull, 127ull, 128ull, 129ull, 1000ull, 4096ull, 70001ull}) {
      const std::vector<uint8_t> s = make(shapes[si], n, n * 7 + si);
      PackedScalars p;
      CHECK_MSG(p.pack(s.data(), n, *pool, ~0ull), "%s, %llu scalars: not packed", names[si], (unsigned long long)n);
      CHECK(p.size() == n);
      CHECK_MSG(round_trips(s, n, p, rng, 20), "%s, %llu scalars", names[si], (unsigned long long)n);
    }
  }
  // A PoRep witness's packed form is a small fraction of it; a uniform one is not smaller.
  {
    const uint64_t n = 1u << 20;
    const std::vector<uint8_t> s = make(Shape::PorepMix, n, 99);
    PackedScalars p;
    CHECK(p.pack(s.data(), n, *pool, n * 32));
    std::printf("porep mix, 2^20 scalars: packed %.2f MiB of %.2f MiB (%.1f%%)\n", p.bytes() / 1048576.0, n * 32 / 1048576.0,
                100.0 * p.bytes() / (n * 32.0));
    CHECK(p.bytes() * 16 < n * 32);
    const std::vector<uint8_t> u = make(Shape::Uniform, n, 98);
    CHECK(!p.pack(u.data(), n, *pool, n * 32 / 2));  // refused over the limit, and holds nothing
    CHECK(p.size() == 0 && p.bytes() == 0);
    CHECK(p.pack(u.data(), n, *pool, ~0ull) && p.bytes() > n * 32);
  }
  return cuzk_test::finish("scalar_pack_test");
}
