// Synthetic circuits and the insecure development setup, through the public C ABI, both curves and
// both profiles: the generated witness satisfies every constraint (checked here, independently of
// the generator), the profile has the shape it promises, the key made by cuzk_setup_insecure_dev
// opens with every point check, proofs made with it verify (and tampered ones do not), and bad
// arguments, malformed or missing .r1cs files and unwritable paths give a status, not a crash.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixture.hpp"
#include "cuzk.h"
#include "prove_call.hpp"
#include "curve/curves.hpp"
#include "formats/r1cs.hpp"
#include "formats/wtns.hpp"
#include "prover/r1cs_check.hpp"
#include "util/thread_pool.hpp"

namespace {

using cuzk_test::read_file;

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), (std::streamsize)bytes.size());
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

const char* curve_name(uint32_t curve) { return curve == CUZK_CURVE_BN254 ? "bn254" : "bls12_381"; }
const char* profile_name(uint32_t profile) { return profile == CUZK_SYNTH_POREP ? "porep" : "uniform"; }

// In memory: sizes first, then the bytes; parsed back with the library's readers; every constraint
// checked against the witness; the porep shape measured.
void synth_in_memory(uint32_t curve, uint32_t profile, uint32_t n, uint32_t n_public) {
  char err[512];
  size_t r1cs_len = 0, wtns_len = 0;
  cuzk_status st = cuzk_synth_circuit(curve, profile, n, n_public, 7, nullptr, 0, &r1cs_len, nullptr, 0, &wtns_len,
                                      err, sizeof err);
  CHECK(st == CUZK_ERR_SHORT_BUFFER && r1cs_len > 0 && wtns_len > 0);
  std::vector<uint8_t> r1cs_bytes(r1cs_len), wtns_bytes(wtns_len);
  st = cuzk_synth_circuit(curve, profile, n, n_public, 7, r1cs_bytes.data(), r1cs_bytes.size(), &r1cs_len,
                          wtns_bytes.data(), wtns_bytes.size(), &wtns_len, err, sizeof err);
  CHECK(st == CUZK_OK);
  if (st != CUZK_OK) { std::fprintf(stderr, "  synth: %s\n", err); return; }

  // Same seed, same bytes; another seed, other bytes.
  std::vector<uint8_t> again(r1cs_len), again_w(wtns_len), other(r1cs_len), other_w(wtns_len);
  cuzk_synth_circuit(curve, profile, n, n_public, 7, again.data(), again.size(), &r1cs_len, again_w.data(),
                     again_w.size(), &wtns_len, err, sizeof err);
  CHECK(again == r1cs_bytes && again_w == wtns_bytes);
  cuzk_synth_circuit(curve, profile, n, n_public, 8, other.data(), other.size(), &r1cs_len, other_w.data(),
                     other_w.size(), &wtns_len, err, sizeof err);
  CHECK(other != r1cs_bytes && other_w != wtns_bytes);

  cuzk::formats::R1cs r1cs;
  cuzk::formats::Wtns wtns;
  std::string e;
  CHECK(cuzk::formats::parse_r1cs(r1cs_bytes.data(), r1cs_bytes.size(), r1cs, e) == CUZK_OK);
  CHECK(cuzk::formats::parse_wtns(wtns_bytes.data(), wtns_bytes.size(), wtns, e) == CUZK_OK);
  CHECK(r1cs.curve == (cuzk_curve)curve && wtns.curve == (cuzk_curve)curve);
  CHECK(r1cs.n_constraints == n && r1cs.n_public() == n_public && r1cs.n_wires == wtns.n_witness);
  cuzk::ThreadPool pool(2);
  cuzk_status sat = curve == CUZK_CURVE_BN254
                        ? cuzk::prover::check_r1cs_witness<cuzk::curve::Bn254>(r1cs, wtns.values, pool, e)
                        : cuzk::prover::check_r1cs_witness<cuzk::curve::Bls12381>(r1cs, wtns.values, pool, e);
  CHECK(sat == CUZK_OK);
  if (sat != CUZK_OK) std::fprintf(stderr, "  %s/%s: %s\n", curve_name(curve), profile_name(profile), e.c_str());
  // w[0] = 1
  CHECK(wtns.values[0] == 1 && std::all_of(wtns.values + 1, wtns.values + 32, [](uint8_t b) { return b == 0; }));

  // A changed witness value that a constraint reads no longer satisfies the circuit.
  std::vector<uint8_t> broken(wtns.values, wtns.values + (size_t)wtns.n_witness * 32);
  broken[((size_t)wtns.n_witness - 1) * 32] ^= 1;  // the last output
  sat = curve == CUZK_CURVE_BN254 ? cuzk::prover::check_r1cs_witness<cuzk::curve::Bn254>(r1cs, broken.data(), pool, e)
                                  : cuzk::prover::check_r1cs_witness<cuzk::curve::Bls12381>(r1cs, broken.data(), pool, e);
  CHECK(sat == CUZK_ERR_UNSATISFIED);

  double per_row[3];
  for (int m = 0; m < 3; m++) per_row[m] = (double)r1cs.n_terms[m] / n;
  size_t bits = 0;
  for (uint32_t i = 0; i < wtns.n_witness; i++) {
    const uint8_t* v = wtns.values + (size_t)i * 32;
    bool small = v[0] <= 1;
    for (int k = 1; k < 32 && small; k++) small = v[k] == 0;
    bits += small;
  }
  const double bit_share = (double)bits / wtns.n_witness;
  std::printf("  %s/%s 2^%d: %.2f / %.2f / %.2f terms per row in A/B/C, %.0f%% of the witness 0 or 1\n",
              curve_name(curve), profile_name(profile), __builtin_ctz(n), per_row[0], per_row[1], per_row[2],
              100 * bit_share);
  if (profile == CUZK_SYNTH_POREP) {
    CHECK(per_row[0] > 2.3 && per_row[0] < 2.5);
    CHECK(per_row[1] > 0.99 && per_row[1] < 1.01);
    CHECK(per_row[2] > 2.1 && per_row[2] < 2.3);
    CHECK(bit_share > 0.75);
  } else {
    CHECK(bit_share < 0.01);
  }
}

struct Setup {
  std::string dir, r1cs, wtns, zkey;
};

// Files, setup, key opened with every check, proofs through the library verified natively.
void setup_and_prove(uint32_t curve, uint32_t profile, uint32_t n, uint32_t n_public, const std::string& dir) {
  char err[512];
  const std::string base = dir + "/" + curve_name(curve) + "_" + profile_name(profile);
  const std::string r1cs = base + ".r1cs", wtns = base + ".wtns", zkey = base + ".zkey";
  cuzk_status st = cuzk_synth_circuit_write(curve, profile, n, n_public, 11, r1cs.c_str(), wtns.c_str(), err, sizeof err);
  CHECK(st == CUZK_OK);
  if (st != CUZK_OK) { std::fprintf(stderr, "  synth write: %s\n", err); return; }

  cuzk_setup_info info;
  std::memset(&info, 0xff, sizeof info);
  st = cuzk_setup_insecure_dev(r1cs.c_str(), zkey.c_str(), 0, 0, &info, nullptr, err, sizeof err);
  CHECK(st == CUZK_OK);
  if (st != CUZK_OK) { std::fprintf(stderr, "  setup: %s\n", err); return; }
  CHECK(info.struct_size == sizeof info && info.curve == curve && info.n_constraints == n && info.n_public == n_public);
  CHECK(info.domain_size >= n + n_public + 1 && info.domain_size / 2 < n + n_public + 1);
  CHECK(info.zkey_bytes == read_file(zkey).size() && info.total_ns > 0 && info.threads >= 1);
  CHECK(!exists(zkey + ".tmp." + std::to_string(getpid())));

  cuzk_key* key = nullptr;
  st = cuzk_key_open(zkey.c_str(), 0, &key, err, sizeof err);  // every point on its curve
  CHECK(st == CUZK_OK);
  if (st != CUZK_OK) { std::fprintf(stderr, "  key open: %s\n", err); return; }
  cuzk_key_info ki{};
  cuzk_key_get_info(key, &ki, err, sizeof err);
  CHECK(ki.n_constraints == n && ki.n_public == n_public && ki.domain_size == info.domain_size && ki.n_vars == info.n_vars);
  CHECK(cuzk_key_attach_r1cs(key, r1cs.c_str(), err, sizeof err) == CUZK_OK);
  std::vector<uint8_t> vk(ki.vk_bytes);
  size_t vk_len = 0;
  CHECK(cuzk_key_export_vk(key, vk.data(), vk.size(), &vk_len, err, sizeof err) == CUZK_OK);

  cuzk_context* ctx = nullptr;
  cuzk_prover* prover = nullptr;
  CHECK(cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &ctx, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_prover_create(ctx, key, 0, &prover, nullptr, err, sizeof err) == CUZK_OK);
  std::vector<uint8_t> wtns_bytes = read_file(wtns);
  cuzk::formats::Wtns w;
  std::string e;
  cuzk::formats::parse_wtns(wtns_bytes.data(), wtns_bytes.size(), w, e);
  std::vector<uint8_t> pub(w.values + 32, w.values + 32 + (size_t)n_public * 32);

  for (int i = 0; i < 2; i++) {  // fresh r, s each time
    std::vector<uint8_t> proof(ki.proof_bytes);
    st = prove_call(prover, wtns_bytes.data(), wtns_bytes.size(), CUZK_WITNESS_WTNS, 1, nullptr, nullptr, 0,
                    proof.data(), proof.size(), nullptr, nullptr, err, sizeof err);
    CHECK(st == CUZK_OK);
    if (st != CUZK_OK) { std::fprintf(stderr, "  prove: %s\n", err); break; }
    int32_t valid = -1;
    CHECK(cuzk_verify(curve, vk.data(), vk_len, proof.data(), proof.size(), pub.data(), n_public, &valid, err,
                      sizeof err) == CUZK_OK && valid == 1);
    if (n_public > 0) {
      std::vector<uint8_t> bad = pub;
      bad[0] ^= 1;
      valid = -1;
      CHECK(cuzk_verify(curve, vk.data(), vk_len, proof.data(), proof.size(), bad.data(), n_public, &valid, err,
                        sizeof err) == CUZK_OK && valid == 0);
    }
  }
  std::printf("  %s/%s 2^%d: setup %.3f s (scalars %.3f, tables %.3f, points %.3f; windows %u/%u bits), key %.1f MB\n",
              curve_name(curve), profile_name(profile), __builtin_ctz(n), info.total_ns / 1e9, info.scalars_ns / 1e9,
              info.tables_ns / 1e9, info.points_ns / 1e9, info.g1_window_bits, info.g2_window_bits,
              info.zkey_bytes / 1e6);

  // A second setup of the same circuit draws new toxic waste: its proofs do not verify under the
  // first key's vk.
  const std::string zkey2 = base + "_2.zkey";
  CHECK(cuzk_setup_insecure_dev(r1cs.c_str(), zkey2.c_str(), 1, 0, nullptr, nullptr, err, sizeof err) == CUZK_OK);
  cuzk_key* key2 = nullptr;
  cuzk_prover* prover2 = nullptr;
  if (cuzk_key_open(zkey2.c_str(), 0, &key2, err, sizeof err) == CUZK_OK &&
      cuzk_prover_create(ctx, key2, 0, &prover2, nullptr, err, sizeof err) == CUZK_OK) {
    std::vector<uint8_t> proof(ki.proof_bytes);
    CHECK(prove_call(prover2, wtns_bytes.data(), wtns_bytes.size(), CUZK_WITNESS_WTNS, 1, nullptr, nullptr,
                     CUZK_PROVE_SELF_CHECK, proof.data(), proof.size(), nullptr, nullptr, err, sizeof err) == CUZK_OK);
    int32_t valid = -1;
    CHECK(cuzk_verify(curve, vk.data(), vk_len, proof.data(), proof.size(), pub.data(), n_public, &valid, err,
                      sizeof err) == CUZK_OK && valid == 0);
  } else {
    CHECK(false);
  }
  cuzk_prover_destroy(prover2, nullptr, 0);
  cuzk_key_close(key2, nullptr, 0);
  cuzk_prover_destroy(prover, nullptr, 0);
  cuzk_context_destroy(ctx, nullptr, 0);
  cuzk_key_close(key, nullptr, 0);
}

void bad_arguments(const std::string& dir) {
  char err[512];
  size_t r1cs_len = 0, wtns_len = 0;
  auto synth = [&](uint32_t curve, uint32_t profile, uint32_t n, uint32_t n_public) {
    return cuzk_synth_circuit(curve, profile, n, n_public, 1, nullptr, 0, &r1cs_len, nullptr, 0, &wtns_len, err,
                              sizeof err);
  };
  CHECK(synth(0, CUZK_SYNTH_POREP, 1024, 1) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(synth(CUZK_CURVE_BN254, 7, 1024, 1) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(synth(CUZK_CURVE_BN254, CUZK_SYNTH_POREP, 0, 0) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(synth(CUZK_CURVE_BN254, CUZK_SYNTH_POREP, 4, 5) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(synth(CUZK_CURVE_BN254, CUZK_SYNTH_POREP, (1u << 30) + 1, 0) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strlen(err) > 0);
  CHECK(cuzk_synth_circuit(CUZK_CURVE_BN254, CUZK_SYNTH_POREP, 16, 1, 1, nullptr, 0, nullptr, nullptr, 0, &wtns_len,
                           err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  // A buffer one byte short is refused, and nothing is written into it.
  CHECK(synth(CUZK_CURVE_BN254, CUZK_SYNTH_UNIFORM, 64, 2) == CUZK_ERR_SHORT_BUFFER);
  std::vector<uint8_t> r1cs(r1cs_len - 1, 0xab), wtns(wtns_len, 0xab);
  CHECK(cuzk_synth_circuit(CUZK_CURVE_BN254, CUZK_SYNTH_UNIFORM, 64, 2, 1, r1cs.data(), r1cs.size(), &r1cs_len,
                           wtns.data(), wtns.size(), &wtns_len, err, sizeof err) == CUZK_ERR_SHORT_BUFFER);
  CHECK(r1cs[0] == 0xab && wtns[0] == 0xab);

  CHECK(cuzk_synth_circuit_write(CUZK_CURVE_BN254, CUZK_SYNTH_POREP, 64, 1, 1, nullptr, "x.wtns", err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  const std::string missing_dir = dir + "/no/such/dir";
  CHECK(cuzk_synth_circuit_write(CUZK_CURVE_BN254, CUZK_SYNTH_POREP, 64, 1, 1, (missing_dir + "/c.r1cs").c_str(),
                                 (dir + "/c.wtns").c_str(), err, sizeof err) == CUZK_ERR_IO);
  CHECK(std::strstr(err, "no/such/dir") != nullptr);
  CHECK(!exists(dir + "/c.wtns"));  // neither file appears when one cannot be written

  const std::string r1cs_path = dir + "/ok.r1cs", wtns_path = dir + "/ok.wtns";
  CHECK(cuzk_synth_circuit_write(CUZK_CURVE_BN254, CUZK_SYNTH_POREP, 64, 1, 1, r1cs_path.c_str(), wtns_path.c_str(), err,
                                 sizeof err) == CUZK_OK);
  const std::string zkey = dir + "/out.zkey";
  CHECK(cuzk_setup_insecure_dev(nullptr, zkey.c_str(), 0, 0, nullptr, nullptr, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_setup_insecure_dev(r1cs_path.c_str(), nullptr, 0, 0, nullptr, nullptr, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_setup_insecure_dev(r1cs_path.c_str(), zkey.c_str(), 0, 4, nullptr, nullptr, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_setup_insecure_dev((dir + "/none.r1cs").c_str(), zkey.c_str(), 0, 0, nullptr, nullptr, err, sizeof err) == CUZK_ERR_IO);
  CHECK(cuzk_setup_insecure_dev(r1cs_path.c_str(), (missing_dir + "/k.zkey").c_str(), 0, 0, nullptr, nullptr, err, sizeof err) ==
        CUZK_ERR_IO);
  CHECK(std::strstr(err, "no/such/dir") != nullptr);
  // A witness is not an .r1cs; a truncated .r1cs is malformed; neither leaves a key behind.
  CHECK(cuzk_setup_insecure_dev(wtns_path.c_str(), zkey.c_str(), 0, 0, nullptr, nullptr, err, sizeof err) == CUZK_ERR_FORMAT);
  std::vector<uint8_t> bytes = read_file(r1cs_path);
  const std::string cut = dir + "/cut.r1cs";
  write_file(cut, std::vector<uint8_t>(bytes.begin(), bytes.begin() + bytes.size() / 2));
  CHECK(cuzk_setup_insecure_dev(cut.c_str(), zkey.c_str(), 0, 0, nullptr, nullptr, err, sizeof err) == CUZK_ERR_FORMAT);
  // A header that claims 2^32 - 16 wires (no label section to contradict it): refused for memory
  // before anything is allocated, not killed half-way.
  {
    std::vector<uint8_t> huge(bytes.begin(), bytes.end());
    uint32_t n_wires = 0;
    std::memcpy(&n_wires, &huge[60], 4);
    huge.resize(huge.size() - (12 + 8ull * n_wires));  // drop section 3 (wire labels)
    huge[8] = 2;                                        // two sections
    const uint32_t claimed = 0xfffffff0u;
    std::memcpy(&huge[60], &claimed, 4);
    const std::string path = dir + "/huge.r1cs";
    write_file(path, huge);
    CHECK(cuzk_setup_insecure_dev(path.c_str(), zkey.c_str(), 0, 0, nullptr, nullptr, err, sizeof err) == CUZK_ERR_OUT_OF_MEMORY);
    CHECK(std::strstr(err, "MiB") != nullptr);
  }
  // Every single-byte change of the header and the first constraint: a status, never a crash.
  size_t ok = 0, refused = 0;
  for (size_t i = 0; i < 200 && i < bytes.size(); i++) {
    std::vector<uint8_t> mutated = bytes;
    mutated[i] ^= 0x80;
    const std::string path = dir + "/mutated.r1cs";
    write_file(path, mutated);
    cuzk_status st = cuzk_setup_insecure_dev(path.c_str(), zkey.c_str(), 1, 0, nullptr, nullptr, err, sizeof err);
    if (st == CUZK_OK) ok++;
    else if (st == CUZK_ERR_FORMAT || st == CUZK_ERR_CURVE_MISMATCH || st == CUZK_ERR_UNSUPPORTED || st == CUZK_ERR_IO ||
             st == CUZK_ERR_OUT_OF_MEMORY) refused++;
  }
  CHECK(ok + refused == std::min<size_t>(200, bytes.size()));
  CHECK(refused > 0);
  std::remove(zkey.c_str());
}

}  // namespace

int main() {
  const cuzk_test::ScratchDir scratch("cuzk-setup-test-");
  const std::string& dir = scratch.path();
  for (uint32_t curve : {CUZK_CURVE_BN254, CUZK_CURVE_BLS12_381}) {
    for (uint32_t profile : {CUZK_SYNTH_UNIFORM, CUZK_SYNTH_POREP}) {
      synth_in_memory(curve, profile, 1u << 12, 3);
      setup_and_prove(curve, profile, 1u << 10, profile == CUZK_SYNTH_POREP ? 4 : 1, dir);
    }
  }
  bad_arguments(dir);
  return cuzk_test::finish("setup_test");
}
