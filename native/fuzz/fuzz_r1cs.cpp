// The .r1cs reader on any bytes: formats::parse_r1cs directly (every term of every constraint
// inside the input, wires < n_wires), then through the C ABI: the bytes written to a file,
// cuzk_key_attach_r1cs on a committed key of the same curve (mulchain_4), and, when attached, a
// proof of the committed witness, which checks it constraint by constraint against the fuzzed
// system: refused with a clean status, or proved.
#include <unistd.h>

#include "formats/r1cs.hpp"
#include "harness.hpp"

using namespace cuzk_fuzz;

namespace {

struct Fixture {
  Bytes zkey, wtns;
  uint32_t proof_bytes = 0;
};

const Fixture& fixture(cuzk_curve curve) {
  Fixture& f = per_curve<Fixture>(curve);
  if (!f.zkey.empty()) return f;
  f.zkey = read_mulchain_4(curve, "circuit.zkey");
  f.wtns = read_mulchain_4(curve, "witness.wtns");
  f.proof_bytes = curve == CUZK_CURVE_BN254 ? CUZK_PROOF_BYTES_BN254 : CUZK_PROOF_BYTES_BLS12_381;
  return f;
}

// One file per process, rewritten for every input and removed at exit.
struct ScratchFile {
  std::string path;
  ~ScratchFile() { unlink(path.c_str()); }
};
const std::string& scratch_path() {
  static const ScratchFile file{[] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/cuzk-fuzz-r1cs-" + std::to_string(getpid()) + ".r1cs";
  }()};
  return file.path;
}

void check_parsed(const cuzk::formats::R1cs& r1cs, const uint8_t* data, size_t size) {
  const uint8_t* end = data + size;
  if (r1cs.constraint_offsets.size() != r1cs.n_constraints) die("parse_r1cs: constraint_offsets has the wrong size");
  for (uint32_t c = 0; c < r1cs.n_constraints; c++)
    for (uint32_t m = 0; m < 3; m++) {
      auto lc = r1cs.lc(c, m);
      if (lc.data() < data || lc.data() + lc.size() * lc.term_bytes() > end) die("parse_r1cs: a term lies outside the input");
      for (auto term : lc)
        if (term.wire >= r1cs.n_wires) die("parse_r1cs: a wire >= n_wires was accepted");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuzk::formats::R1cs r1cs;
  std::string why;
  cuzk_status parsed = clean_parse(cuzk::formats::parse_r1cs(data, size, r1cs, why), why, "parse_r1cs");
  if (parsed == CUZK_OK) check_parsed(r1cs, data, size);
  const Fixture& f = fixture(parsed == CUZK_OK ? r1cs.curve : CUZK_CURVE_BN254);
  FILE* out = std::fopen(scratch_path().c_str(), "wb");
  if (!out || std::fwrite(data, 1, size, out) != size || std::fclose(out) != 0) die("cannot write " + scratch_path());

  char err[512];
  cuzk_key* key = nullptr;
  require_ok(cuzk_key_open_memory(f.zkey.data(), f.zkey.size(), CUZK_KEY_SKIP_POINT_CHECKS, &key, err, sizeof err), err,
             "cuzk_key_open_memory");
  cuzk_status st = cuzk_key_attach_r1cs(key, scratch_path().c_str(), err, sizeof err);
  require_clean(st, err, sizeof err, "cuzk_key_attach_r1cs");
  if (st == CUZK_OK && parsed != CUZK_OK) die("cuzk_key_attach_r1cs accepted an .r1cs that parse_r1cs refuses: " + why);
  if (st == CUZK_OK) {
    cuzk_prover* prover = nullptr;
    require_ok(cuzk_prover_create(cpu_context(), key, 0, &prover, nullptr, err, sizeof err), err, "cuzk_prover_create");
    Bytes proof(f.proof_bytes);
    st = prove_one(prover, f.wtns.data(), f.wtns.size(), CUZK_WITNESS_WTNS, proof, err, sizeof err);
    require_clean(st, err, sizeof err, "cuzk_prove(attached .r1cs)");
    require_ok(cuzk_prover_destroy(prover, err, sizeof err), err, "cuzk_prover_destroy");
  }
  require_ok(cuzk_key_close(key, err, sizeof err), err, "cuzk_key_close");
  return 0;
}
