// The self-check is on by default: a proof that fails its pairing check is never returned
// (CUZK_ERR_SELF_CHECK, proofs zeroed), and the message blames the likely cause: the key when an
// attached .r1cs shows the witness satisfies the circuit, the witness when it does not, either
// without one. CUZK_PROVE_NO_SELF_CHECK skips it (and the same inputs then give a proof that
// cuzk_verify rejects, which shows the check was needed). A batch names its first failing proof.
// Both curves.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixture.hpp"
#include "cuzk.h"
#include "prove_call.hpp"
#include "formats/wtns.hpp"
#include "formats/zkey.hpp"

namespace {

using Bytes = std::vector<uint8_t>;

using cuzk_test::read_file;

struct Prover {
  cuzk_key* key = nullptr;
  cuzk_context* ctx = nullptr;
  cuzk_prover* prover = nullptr;
  cuzk_key_info info{};
  Bytes vk;
  ~Prover() {
    cuzk_prover_destroy(prover, nullptr, 0);
    cuzk_context_destroy(ctx, nullptr, 0);
    cuzk_key_close(key, nullptr, 0);
  }
  bool open(const Bytes& zkey, const std::string& r1cs_path) {
    char err[512];
    if (cuzk_key_open_memory(zkey.data(), zkey.size(), 0, &key, err, sizeof err) != CUZK_OK) {
      std::fprintf(stderr, "  open: %s\n", err);
      return false;
    }
    cuzk_key_get_info(key, &info, err, sizeof err);
    if (!r1cs_path.empty() && cuzk_key_attach_r1cs(key, r1cs_path.c_str(), err, sizeof err) != CUZK_OK) return false;
    vk.resize(info.vk_bytes);
    size_t len = 0;
    if (cuzk_key_export_vk(key, vk.data(), vk.size(), &len, err, sizeof err) != CUZK_OK) return false;
    if (cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &ctx, err, sizeof err) != CUZK_OK) return false;
    return cuzk_prover_create(ctx, key, 0, &prover, nullptr, err, sizeof err) == CUZK_OK;
  }
  // Proves one raw witness with fixed r, s; returns the status, the proof and the message.
  cuzk_status prove(const Bytes& w, uint32_t flags, Bytes& proof, std::string& msg, cuzk_timings* t = nullptr) {
    Bytes r(32, 0), s(32, 0);
    r[0] = 7;
    s[0] = 9;
    proof.assign(info.proof_bytes, 0xAB);
    char err[1024] = {0};
    cuzk_status st = prove_call(prover, w.data(), w.size(), CUZK_WITNESS_RAW, 1, r.data(), s.data(), flags,
                                proof.data(), proof.size(), t, nullptr, err, sizeof err);
    msg = err;
    return st;
  }
  bool verifies(const Bytes& proof, const Bytes& w) {
    int32_t valid = -1;
    char err[512];
    cuzk_status st = cuzk_verify(info.curve, vk.data(), vk.size(), proof.data(), proof.size(), w.data() + 32,
                                 info.n_public, &valid, err, sizeof err);
    return st == CUZK_OK && valid == 1;
  }
};

bool all_zero(const Bytes& b) {
  for (uint8_t x : b)
    if (x != 0) return false;
  return true;
}

bool has(const std::string& msg, const char* part) {
  bool ok = msg.find(part) != std::string::npos;
  if (!ok) std::fprintf(stderr, "  message '%s' lacks '%s'\n", msg.c_str(), part);
  return ok;
}

const char* kEither = "either the witness does not satisfy the circuit or the key (or the backend) is at fault";
const char* kAttach = "attach the circuit's .r1cs";
const char* kKey = "the witness satisfies the circuit's .r1cs, so the key (or the backend) is at fault";
const char* kWitness = "the witness does not satisfy the circuit (";

// A key whose A points i and j are swapped: every point is still on its curve (open accepts it),
// but the proofs it gives are wrong.
Bytes corrupted_key(const Bytes& zkey, const Bytes& w) {
  cuzk::formats::ZkeyGroth16 z;
  std::string e;
  CHECK(cuzk::formats::parse_zkey(zkey.data(), zkey.size(), z, e) == CUZK_OK);
  const size_t g1 = 2 * z.n8q, at = (size_t)(z.points_a - zkey.data());
  Bytes bad = zkey;
  for (uint32_t i = 1; i < z.n_vars; i++)
    for (uint32_t j = i + 1; j < z.n_vars; j++) {
      const uint8_t *pi = z.points_a + i * g1, *pj = z.points_a + j * g1;
      if (std::memcmp(pi, pj, g1) == 0 || std::memcmp(&w[i * 32], &w[j * 32], 32) == 0) continue;
      std::memcpy(&bad[at + i * g1], pj, g1);
      std::memcpy(&bad[at + j * g1], pi, g1);
      return bad;
    }
  CHECK(!"no two distinct A points with distinct witness values");
  return bad;
}

void curve_cases(const std::string& dir) {
  const Bytes zkey = read_file(dir + "/circuit.zkey"), wtns = read_file(dir + "/witness.wtns");
  const std::string r1cs = dir + "/circuit.r1cs";
  cuzk::formats::Wtns parsed;
  std::string e;
  CHECK(cuzk::formats::parse_wtns(wtns.data(), wtns.size(), parsed, e) == CUZK_OK);
  const Bytes w(parsed.values, parsed.values + (size_t)parsed.n_witness * 32);
  Bytes proof;
  std::string msg;

  // A good witness on a good key: the self-check runs by default (its phase is timed) and passes.
  {
    Prover p;
    CHECK(p.open(zkey, r1cs));
    cuzk_timings t{};
    CHECK(p.prove(w, 0, proof, msg, &t) == CUZK_OK);
    CHECK(p.verifies(proof, w));
    CHECK(t.phases[CUZK_PHASE_SELF_CHECK].end_ns > 0);
    CHECK(p.prove(w, CUZK_PROVE_SELF_CHECK, proof, msg, &t) == CUZK_OK);  // the old flag still works
    CHECK(p.prove(w, CUZK_PROVE_NO_SELF_CHECK, proof, msg, &t) == CUZK_OK);
    CHECK(t.phases[CUZK_PHASE_SELF_CHECK].end_ns == 0);  // skipped
    CHECK(p.verifies(proof, w));
    CHECK(p.prove(w, CUZK_PROVE_SELF_CHECK | CUZK_PROVE_NO_SELF_CHECK, proof, msg) == CUZK_ERR_INVALID_ARGUMENT);
    CHECK(has(msg, "contradict"));
    CHECK(p.prove(w, 0x8, proof, msg) == CUZK_ERR_INVALID_ARGUMENT);
  }

  // A corrupted key: the key is blamed when the .r1cs clears the witness; without one, either.
  const Bytes bad_key = corrupted_key(zkey, w);
  for (bool attach : {false, true}) {
    Prover p;
    CHECK(p.open(bad_key, attach ? r1cs : ""));
    CHECK(p.prove(w, 0, proof, msg) == CUZK_ERR_SELF_CHECK);
    CHECK(all_zero(proof));
    CHECK(has(msg, "failed its self-check"));
    if (attach) CHECK(has(msg, kKey));
    else CHECK(has(msg, kEither) && has(msg, kAttach));
    CHECK(p.prove(w, CUZK_PROVE_NO_SELF_CHECK, proof, msg) == CUZK_OK);
    CHECK(!p.verifies(proof, w));  // what the default refused to return
  }

  // A wrong private witness value on a good key.
  Bytes wrong = w;
  uint8_t* last = &wrong[(size_t)(parsed.n_witness - 1) * 32];
  const bool was_zero = all_zero(Bytes(last, last + 32));
  std::memset(last, 0, 32);
  if (was_zero) last[0] = 1;
  {
    Prover p;
    CHECK(p.open(zkey, ""));
    CHECK(p.prove(wrong, 0, proof, msg) == CUZK_ERR_SELF_CHECK);
    CHECK(all_zero(proof));
    CHECK(has(msg, kEither) && has(msg, kAttach));
    CHECK(p.prove(wrong, CUZK_PROVE_NO_SELF_CHECK, proof, msg) == CUZK_OK);
    CHECK(!p.verifies(proof, wrong));
  }
  {
    Prover p;
    CHECK(p.open(zkey, r1cs));
    CHECK(p.prove(wrong, 0, proof, msg) == CUZK_ERR_UNSATISFIED);  // the .r1cs check runs first
    CHECK(p.prove(wrong, CUZK_PROVE_SKIP_R1CS_CHECK, proof, msg) == CUZK_ERR_SELF_CHECK);
    CHECK(all_zero(proof));
    CHECK(has(msg, kWitness));
    CHECK(msg.find(kKey) == std::string::npos);
  }

  // A batch: the proofs are finalized and self-checked side by side; a batch with wrong witnesses
  // in proofs 1 and 3 names the first, returns nothing; a good one verifies, each proof's phases
  // timed.
  {
    Prover p;
    CHECK(p.open(zkey, ""));
    const size_t n = 5, wb = w.size();
    Bytes batch(n * wb), rs(n * 32);
    for (size_t k = 0; k < n; k++) std::memcpy(&batch[k * wb], (k == 1 || k == 3 ? wrong : w).data(), wb);
    for (size_t k = 0; k < n; k++) rs[k * 32] = (uint8_t)(11 + k);
    Bytes proofs(n * p.info.proof_bytes, 0xAB);
    cuzk_timings t[n] = {};
    char err[1024] = {0};
    CHECK(prove_call(p.prover, batch.data(), wb, CUZK_WITNESS_RAW, n, rs.data(), rs.data(), 0, proofs.data(),
                     proofs.size(), t, nullptr, err, sizeof err) == CUZK_ERR_SELF_CHECK);
    CHECK(has(err, "proof 1 failed its self-check") && all_zero(proofs));
    for (size_t k = 0; k < n; k++) std::memcpy(&batch[k * wb], w.data(), wb);
    CHECK(prove_call(p.prover, batch.data(), wb, CUZK_WITNESS_RAW, n, rs.data(), rs.data(), 0, proofs.data(),
                     proofs.size(), t, nullptr, err, sizeof err) == CUZK_OK);
    for (size_t k = 0; k < n; k++) {
      CHECK(p.verifies(Bytes(proofs.begin() + k * p.info.proof_bytes, proofs.begin() + (k + 1) * p.info.proof_bytes), w));
      CHECK(t[k].phases[CUZK_PHASE_FINALIZE].end_ns > 0 && t[k].phases[CUZK_PHASE_SELF_CHECK].end_ns > 0);
    }
    // Each proof's r, s: the batch's proofs differ (no proof finalized with another's).
    CHECK(std::memcmp(&proofs[0], &proofs[p.info.proof_bytes], p.info.proof_bytes) != 0);
  }
  std::printf("  %s: done\n", dir.c_str());
}

}  // namespace

int main() {
  curve_cases("tests/fixtures/bn254/mulchain_8");
  curve_cases("tests/fixtures/bls12_381/mulchain_8");
  return cuzk_test::finish("self_check_test");
}
