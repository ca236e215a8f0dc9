// cuzk_verify on any (curve, vk, proof, public signals). Input layout, so that the fuzzer can
// change each part and its length: [u8 curve][u32 LE vk_len][u32 LE proof_len][vk][proof][signals],
// lengths cut to what the input holds, n_public = the remaining bytes / 32. Each part is passed as
// its own exact-size heap copy, so a read past any of them is an ASan report. The seeds (made by
// native/fuzz/seeds.mjs from the committed fixtures' snarkjs proofs) are valid proofs.
#include "harness.hpp"

using namespace cuzk_fuzz;

namespace {

uint32_t load_u32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

Bytes take(const uint8_t*& p, size_t& left, size_t want) {
  size_t n = want < left ? want : left;
  Bytes part(p, p + n);
  p += n;
  left -= n;
  return part;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 9) return 0;
  uint32_t curve = data[0] % 4;  // 1, 2 and two values no curve has
  const uint8_t* p = data + 9;
  size_t left = size - 9;
  Bytes vk = take(p, left, load_u32(data + 1));
  Bytes proof = take(p, left, load_u32(data + 5));
  size_t n_public = left / CUZK_FR_BYTES;
  Bytes signals = take(p, left, n_public * CUZK_FR_BYTES);
  char err[512];
  int32_t valid = -1;
  cuzk_status st = cuzk_verify(curve, vk.data(), vk.size(), proof.data(), proof.size(), signals.data(), n_public,
                               &valid, err, sizeof err);
  require_clean(st, err, sizeof err, "cuzk_verify");
  if (st == CUZK_OK && valid != 0 && valid != 1) die("cuzk_verify returned OK with out_valid " + std::to_string(valid));
  return 0;
}
