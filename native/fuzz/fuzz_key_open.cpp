// cuzk_key_open_memory on any bytes: refused with a clean status, or opened; an opened key must
// answer cuzk_key_get_info, export its verification key at the size it announces, and, when small,
// prove a witness (fuzzed keys reach the prover: the key checks are what stands between corrupted
// bytes and the MSMs) without crashing. The proof's validity is not asked: a fuzzed key is wrong.
#include "harness.hpp"

using namespace cuzk_fuzz;

namespace {

// Proving is skipped for keys larger than this, to keep executions fast.
constexpr uint32_t kMaxProvedDomain = 64;

void prove_once(cuzk_key* key, const cuzk_key_info& info) {
  char err[512];
  cuzk_prover* prover = nullptr;
  cuzk_status st = cuzk_prover_create(cpu_context(), key, 0, &prover, nullptr, err, sizeof err);
  require_clean(st, err, sizeof err, "cuzk_prover_create");
  if (st != CUZK_OK) return;
  Bytes witness(size_t(info.n_vars) * CUZK_FR_BYTES, 0);
  for (size_t i = 0; i < info.n_vars; i++) witness[i * CUZK_FR_BYTES] = uint8_t(i + 1);  // w[0] = 1
  Bytes proof(info.proof_bytes);
  st = prove_one(prover, witness.data(), witness.size(), CUZK_WITNESS_RAW, proof, err, sizeof err);
  require_clean(st, err, sizeof err, "cuzk_prove");
  require_ok(cuzk_prover_destroy(prover, err, sizeof err), err, "cuzk_prover_destroy");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char err[512];
  cuzk_key* key = nullptr;
  cuzk_status st = cuzk_key_open_memory(data, size, 0, &key, err, sizeof err);
  require_clean(st, err, sizeof err, "cuzk_key_open_memory");
  if (st != CUZK_OK) {
    if (key != nullptr) die("cuzk_key_open_memory failed but wrote a key");
    return 0;
  }
  cuzk_key_info info;
  require_ok(cuzk_key_get_info(key, &info, err, sizeof err), err, "cuzk_key_get_info");
  if (info.file_bytes != size) die("cuzk_key_info.file_bytes differs from the input size");
  size_t vk_len = 0;
  st = cuzk_key_export_vk(key, nullptr, 0, &vk_len, err, sizeof err);
  if (st != CUZK_ERR_SHORT_BUFFER || vk_len != info.vk_bytes) die("cuzk_key_export_vk's size query disagrees with vk_bytes");
  Bytes vk(vk_len);
  require_ok(cuzk_key_export_vk(key, vk.data(), vk.size(), &vk_len, err, sizeof err), err, "cuzk_key_export_vk");
  if (info.domain_size <= kMaxProvedDomain) prove_once(key, info);
  require_ok(cuzk_key_close(key, err, sizeof err), err, "cuzk_key_close");
  return 0;
}
