// The .wtns reader on any bytes: formats::parse_wtns directly (a parsed witness must lie inside
// the input), then through the C ABI against a committed key of the witness's curve (mulchain_4):
// cuzk_key_check_witness as .wtns and as raw values (an accepted witness's values lie inside the
// input), and cuzk_prove, which must agree with the check: the same refusal, or a proof (or a
// failed self-check: a fuzzed witness rarely satisfies the circuit).
#include "formats/wtns.hpp"
#include "harness.hpp"

using namespace cuzk_fuzz;

namespace {

struct Fixture {
  Bytes zkey;
  cuzk_key* key = nullptr;
  cuzk_prover* prover = nullptr;
  uint32_t proof_bytes = 0;
  uint32_t n_vars = 0;
};

Fixture& fixture(cuzk_curve curve) {
  Fixture& f = per_curve<Fixture>(curve);
  if (f.prover) return f;
  f.zkey = read_mulchain_4(curve, "circuit.zkey");
  char err[512];
  require_ok(cuzk_key_open_memory(f.zkey.data(), f.zkey.size(), 0, &f.key, err, sizeof err), err, "cuzk_key_open_memory");
  require_ok(cuzk_prover_create(cpu_context(), f.key, 0, &f.prover, nullptr, err, sizeof err), err, "cuzk_prover_create");
  cuzk_key_info info;
  require_ok(cuzk_key_get_info(f.key, &info, err, sizeof err), err, "cuzk_key_get_info");
  f.proof_bytes = info.proof_bytes;
  f.n_vars = info.n_vars;
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuzk::formats::Wtns wtns;
  std::string why;
  cuzk_status parsed = clean_parse(cuzk::formats::parse_wtns(data, size, wtns, why), why, "parse_wtns");
  cuzk_curve curve = CUZK_CURVE_BN254;
  if (parsed == CUZK_OK) {
    uint64_t end = uint64_t(wtns.values - data) + uint64_t(wtns.n_witness) * wtns.n8;
    if (wtns.values < data || end > size || wtns.prime < data || wtns.prime + wtns.n8 > data + size)
      die("parse_wtns returned pointers outside the input");
    curve = wtns.curve;
  } else if (size > 0) {
    curve = (data[size - 1] & 1) ? CUZK_CURVE_BLS12_381 : CUZK_CURVE_BN254;  // refused anyway: either key
  }
  Fixture& f = fixture(curve);
  char err[512];
  cuzk_witness_check found{};
  found.struct_size = sizeof found;
  cuzk_status raw =
      cuzk_key_check_witness(f.key, data, size, CUZK_WITNESS_RAW, CUZK_CHECK_SCAN, &found, err, sizeof err);
  require_clean(raw, err, sizeof err, "cuzk_key_check_witness(raw)");
  cuzk_status checked = cuzk_key_check_witness(f.key, data, size, CUZK_WITNESS_WTNS, CUZK_CHECK_SCAN, &found, err,
                                               sizeof err);
  require_clean(checked, err, sizeof err, "cuzk_key_check_witness(.wtns)");
  if (checked == CUZK_OK) {
    const uint64_t offset = found.values_offset;
    if (parsed != CUZK_OK) die("cuzk_key_check_witness accepted a .wtns that parse_wtns refuses: " + why);
    if (offset > size || size - offset < uint64_t(f.n_vars) * CUZK_FR_BYTES) die("cuzk_key_check_witness: values outside the input");
  }
  if (size == 0) return 0;  // a zero stride is an argument error, not a .wtns
  Bytes proof(f.proof_bytes);
  cuzk_status st = prove_one(f.prover, data, size, CUZK_WITNESS_WTNS, proof, err, sizeof err);
  require_clean(st, err, sizeof err, "cuzk_prove(.wtns)");
  if (checked != CUZK_OK && st != checked)
    die("cuzk_prove gave status " + std::to_string(st) + " where cuzk_key_check_witness gave " + std::to_string(checked));
  if (checked == CUZK_OK && st != CUZK_OK && st != CUZK_ERR_SELF_CHECK)
    die(std::string("cuzk_prove refused a witness cuzk_key_check_witness accepted: ") + err);
  return 0;
}
