// End-to-end proving through the public C ABI on the committed circom/snarkjs fixtures, both
// curves: proofs verify, the three witness paths (.wtns, raw, a/b/c) give identical proofs for the
// same r and s, batches work, and bad inputs (wrong curve, wrong length, unsatisfied witness,
// hundreds of mutated files) give a status and never a crash or a proof that does not verify.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixture.hpp"
#include "cuzk.h"
#include "abc_inputs.hpp"
#include "prove_call.hpp"
#include "curve/curves.hpp"
#include "formats/r1cs.hpp"
#include "formats/wtns.hpp"

namespace {

using cuzk_test::abc_from_r1cs;
using cuzk_test::read_file;

struct Fixture {
  std::string dir;
  bool exists() const { return std::ifstream(dir + "/circuit.zkey").good(); }
  std::string zkey() const { return dir + "/circuit.zkey"; }
  std::string r1cs() const { return dir + "/circuit.r1cs"; }
  std::string wtns() const { return dir + "/witness.wtns"; }
};

using cuzk_test::CpuProver;

// Small deterministic r, s values below both scalar fields.
std::vector<uint8_t> scalars(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n * 32, 0);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) {
      uint64_t x = rng();
      std::memcpy(&v[i * 32 + k * 8], &x, 8);
    }
  return v;
}

void public_of(const std::vector<uint8_t>& wtns_bytes, uint32_t n_public, std::vector<uint8_t>& out) {
  cuzk::formats::Wtns w;
  std::string e;
  cuzk::formats::parse_wtns(wtns_bytes.data(), wtns_bytes.size(), w, e);
  out.assign(w.values + 32, w.values + 32 + (size_t)n_public * 32);
}

void prove_fixture(const Fixture& f) {
  CpuProver s;
  bool opened = s.open(f.zkey(), f.r1cs());
  CHECK(opened);
  if (!opened) { std::fprintf(stderr, "  %s: %s\n", f.dir.c_str(), s.err); return; }
  std::vector<uint8_t> wtns = read_file(f.wtns());
  std::vector<uint8_t> pub;
  public_of(wtns, s.info.n_public, pub);
  const size_t pb = s.info.proof_bytes;
  auto r = scalars(3, 1), sv = scalars(3, 2);

  // .wtns path, deterministic, self-checked
  std::vector<uint8_t> proof(pb);
  cuzk_timings t{};
  cuzk_status st = prove_call(s.prover, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, 1, r.data(), sv.data(),
                              CUZK_PROVE_SELF_CHECK, proof.data(), proof.size(), &t, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_OK);
  if (st != CUZK_OK) std::fprintf(stderr, "  %s: %s\n", f.dir.c_str(), s.err);
  CHECK(s.verify(proof.data(), pub.data()));
  CHECK(t.struct_size == sizeof(cuzk_timings) && t.total_ns > 0 && t.phases[CUZK_PHASE_MSM_H].end_ns > 0);
  CHECK(t.phases[CUZK_PHASE_WITNESS_CHECK].end_ns > 0);  // r1cs attached
  if (s.info.n_public > 0) {
    std::vector<uint8_t> bad = pub;
    bad[0] ^= 1;
    CHECK(!s.verify(proof.data(), bad.data()));
  }
  std::vector<uint8_t> tampered = proof;
  tampered[5] ^= 0x10;
  CHECK(!s.verify(tampered.data(), pub.data()));

  // raw path: same r, s -> the same bytes
  cuzk::formats::Wtns w;
  std::string e;
  cuzk::formats::parse_wtns(wtns.data(), wtns.size(), w, e);
  std::vector<uint8_t> raw(w.values, w.values + (size_t)w.n_witness * 32);
  std::vector<uint8_t> proof_raw(pb);
  st = prove_call(s.prover, raw.data(), raw.size(), CUZK_WITNESS_RAW, 1, r.data(), sv.data(), 0, proof_raw.data(),
                  proof_raw.size(), nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_OK && proof_raw == proof);

  // a/b/c path (supraseal's shape), evaluations computed here from the .r1cs
  std::vector<uint8_t> a, b, c;
  if (s.info.curve == CUZK_CURVE_BN254) abc_from_r1cs<cuzk::curve::Bn254>(f.r1cs(), raw.data(), s.info.domain_size, a, b, c, s.info.n_public);
  else abc_from_r1cs<cuzk::curve::Bls12381>(f.r1cs(), raw.data(), s.info.domain_size, a, b, c, s.info.n_public);
  std::vector<uint8_t> proof_abc(pb);
  st = prove_call_abc(s.prover, a.data(), b.data(), c.data(), raw.data(), 1, r.data(), sv.data(), 0, proof_abc.data(),
                      proof_abc.size(), nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_OK && proof_abc == proof);

  // batch of three with random r, s: all verify, all differ
  std::vector<uint8_t> batch(raw.size() * 3);
  for (int i = 0; i < 3; i++) std::memcpy(&batch[i * raw.size()], raw.data(), raw.size());
  std::vector<uint8_t> proofs(pb * 3);
  std::vector<cuzk_timings> ts(3);
  st = prove_call(s.prover, batch.data(), raw.size(), CUZK_WITNESS_RAW, 3, nullptr, nullptr, 0, proofs.data(),
                  proofs.size(), ts.data(), nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_OK);
  for (int i = 0; i < 3; i++) CHECK(s.verify(&proofs[i * pb], pub.data()));
  CHECK(std::memcmp(&proofs[0], &proofs[pb], pb) != 0);
  CHECK(ts[2].proof_index == 2);

  // witnesses that lie apart (CUZK_INPUT_WITNESS_LIST): the same r, s give the same bytes as one block
  std::vector<uint8_t> second = raw;
  const uint8_t* list[2] = {raw.data(), second.data()};
  auto r2 = scalars(2, 1), s2 = scalars(2, 2);
  std::vector<uint8_t> from_list(pb * 2), from_block(pb * 2);
  st = prove_call_list(s.prover, list, raw.size(), CUZK_WITNESS_RAW, 2, r2.data(), s2.data(), 0, from_list.data(),
                       from_list.size(), nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_OK);
  st = prove_call(s.prover, batch.data(), raw.size(), CUZK_WITNESS_RAW, 2, r2.data(), s2.data(), 0, from_block.data(),
                  from_block.size(), nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_OK && from_list == from_block);
  list[1] = nullptr;
  st = prove_call_list(s.prover, list, raw.size(), CUZK_WITNESS_RAW, 2, nullptr, nullptr, 0, from_list.data(),
                       from_list.size(), nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_ERR_INVALID_ARGUMENT && std::strcmp(s.err, "witnesses[1] is NULL") == 0);

  // the argument struct: NULL, too short, an unknown input, a pointer the input does not read
  cuzk_prove_args args = prove_args();
  args.input = CUZK_INPUT_WITNESSES;
  args.witnesses = raw.data();
  args.witness_stride = raw.size();
  args.witness_format = CUZK_WITNESS_RAW;
  args.n_proofs = 1;
  args.proofs = proof.data();
  args.proofs_cap = pb;
  CHECK(cuzk_prove(s.prover, &args, s.err, sizeof s.err) == CUZK_OK);
  CHECK(cuzk_prove(s.prover, nullptr, s.err, sizeof s.err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strcmp(s.err, "args is NULL") == 0);
  CHECK(cuzk_prove(nullptr, &args, s.err, sizeof s.err) == CUZK_ERR_INVALID_ARGUMENT);
  cuzk_prove_args bad_args = args;
  bad_args.struct_size = sizeof(cuzk_prove_args) - 8;
  CHECK(cuzk_prove(s.prover, &bad_args, s.err, sizeof s.err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strstr(s.err, "struct_size") != nullptr);
  bad_args = args;
  bad_args.struct_size = sizeof(cuzk_prove_args) + 8;  // a later, longer struct: the fields it knows are read
  CHECK(cuzk_prove(s.prover, &bad_args, s.err, sizeof s.err) == CUZK_OK);
  bad_args = args;
  bad_args.input = 3;
  CHECK(cuzk_prove(s.prover, &bad_args, s.err, sizeof s.err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strcmp(s.err, "unknown input 3") == 0);
  bad_args = args;
  bad_args.a = a.data();
  CHECK(cuzk_prove(s.prover, &bad_args, s.err, sizeof s.err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strcmp(s.err, "args->a must be NULL with CUZK_INPUT_WITNESSES") == 0);
  bad_args = args;
  bad_args.input = CUZK_INPUT_WITNESS_LIST;  // witnesses set: the list input reads witness_list only
  CHECK(cuzk_prove(s.prover, &bad_args, s.err, sizeof s.err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strcmp(s.err, "args->witnesses must be NULL with CUZK_INPUT_WITNESS_LIST") == 0);
  bad_args = args;
  bad_args.input = CUZK_INPUT_ABC;
  CHECK(cuzk_prove(s.prover, &bad_args, s.err, sizeof s.err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strcmp(s.err, "args->witnesses must be NULL with CUZK_INPUT_ABC") == 0);
  bad_args.witnesses = nullptr;
  CHECK(cuzk_prove(s.prover, &bad_args, s.err, sizeof s.err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strcmp(s.err, "a is NULL") == 0);
  bad_args.a = a.data();
  CHECK(cuzk_prove(s.prover, &bad_args, s.err, sizeof s.err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strcmp(s.err, "a, b, c and assignment are all required") == 0);
  bad_args = args;
  bad_args.witnesses = nullptr;
  CHECK(cuzk_prove(s.prover, &bad_args, s.err, sizeof s.err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strcmp(s.err, "witnesses is NULL") == 0);

  // errors: short proof buffer, r without s, witness length, w[0], unsatisfied constraint
  st = prove_call(s.prover, raw.data(), raw.size(), CUZK_WITNESS_RAW, 1, nullptr, nullptr, 0, proof.data(), pb - 1,
                  nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_ERR_SHORT_BUFFER);
  st = prove_call(s.prover, raw.data(), raw.size(), CUZK_WITNESS_RAW, 1, r.data(), nullptr, 0, proof.data(), pb,
                  nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_ERR_INVALID_ARGUMENT);
  st = prove_call(s.prover, raw.data(), raw.size() - 32, CUZK_WITNESS_RAW, 1, nullptr, nullptr, 0, proof.data(), pb,
                  nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_ERR_WITNESS_LENGTH);
  std::vector<uint8_t> w0 = raw;
  w0[0] = 2;
  st = prove_call(s.prover, w0.data(), w0.size(), CUZK_WITNESS_RAW, 1, nullptr, nullptr, 0, proof.data(), pb, nullptr,
                  nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_ERR_UNSATISFIED);
  std::vector<uint8_t> unsat = raw;
  unsat[unsat.size() - 32] ^= 1;  // last signal: an internal wire every circuit here constrains
  st = prove_call(s.prover, unsat.data(), unsat.size(), CUZK_WITNESS_RAW, 1, nullptr, nullptr, 0, proof.data(), pb,
                  nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_ERR_UNSATISFIED && std::strstr(s.err, "constraint") != nullptr);
  // without the .r1cs, the self-check catches the same witness instead of returning a bad proof
  st = prove_call(s.prover, unsat.data(), unsat.size(), CUZK_WITNESS_RAW, 1, nullptr, nullptr,
                  CUZK_PROVE_SELF_CHECK | CUZK_PROVE_SKIP_R1CS_CHECK, proof.data(), pb, nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_ERR_SELF_CHECK);
  // busy: key and context refuse to go while the prover lives
  CHECK(cuzk_key_close(s.key, s.err, sizeof s.err) == CUZK_ERR_BUSY);
  CHECK(cuzk_context_destroy(s.ctx, s.err, sizeof s.err) == CUZK_ERR_BUSY);
}

// Witness of the other curve, and files of the wrong kind.
void cross_curve(const Fixture& bn, const Fixture& bls) {
  CpuProver s;
  if (!s.open(bn.zkey(), bn.r1cs())) { CHECK(false); return; }
  std::vector<uint8_t> wtns = read_file(bls.wtns());
  std::vector<uint8_t> proof(s.info.proof_bytes);
  cuzk_status st = prove_call(s.prover, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, 1, nullptr, nullptr, 0,
                              proof.data(), proof.size(), nullptr, nullptr, s.err, sizeof s.err);
  CHECK(st == CUZK_ERR_CURVE_MISMATCH);
  cuzk_key* k = nullptr;
  CHECK(cuzk_key_open(bn.wtns().c_str(), 0, &k, s.err, sizeof s.err) == CUZK_ERR_FORMAT && k == nullptr);
  CHECK(cuzk_key_open("/nonexistent/x.zkey", 0, &k, s.err, sizeof s.err) == CUZK_ERR_IO);
  CHECK(cuzk_key_attach_r1cs(s.key, bls.r1cs().c_str(), s.err, sizeof s.err) != CUZK_OK);
}

// Mutated .zkey, .wtns and .r1cs bytes: each either fails with a status, or yields a proof that
// verifies against the original key's vk.
void mutants(const Fixture& f, int count, uint64_t seed) {
  std::vector<uint8_t> zkey = read_file(f.zkey()), wtns = read_file(f.wtns()), r1cs = read_file(f.r1cs());
  CpuProver ref;
  if (!ref.open(f.zkey(), f.r1cs())) { CHECK(false); return; }
  std::vector<uint8_t> pub;
  public_of(wtns, ref.info.n_public, pub);
  std::mt19937_64 rng(seed);
  int rejected = 0, proved = 0, bad_proofs = 0;
  const std::string tmp_r1cs = "/tmp/cuzk_mutant_" + std::to_string(seed) + ".r1cs";
  for (int i = 0; i < count; i++) {
    std::vector<uint8_t> z = zkey, w = wtns, r = r1cs;
    std::vector<uint8_t>* target = i % 3 == 0 ? &z : (i % 3 == 1 ? &w : &r);
    int kind = (int)(rng() % 3);
    if (kind == 0) target->resize(rng() % target->size());       // truncation
    else if (kind == 1) (*target)[rng() % target->size()] ^= (uint8_t)(1u << (rng() % 8));  // bit flip
    else for (int k = 0; k < 4; k++) (*target)[rng() % target->size()] = (uint8_t)rng();   // bytes
    { std::ofstream(tmp_r1cs, std::ios::binary).write((const char*)r.data(), (std::streamsize)r.size()); }
    CpuProver s;
    const bool verbose = std::getenv("CUZK_TEST_VERBOSE") != nullptr;
    if (!s.open_memory(z, tmp_r1cs)) {
      if (verbose) std::printf("    mutant %d (file %d, kind %d): %s\n", i, i % 3, kind, s.err);
      rejected++;
      continue;
    }
    std::vector<uint8_t> proof(s.info.proof_bytes);
    cuzk_status st = prove_call(s.prover, w.data(), w.size(), CUZK_WITNESS_WTNS, 1, nullptr, nullptr,
                                CUZK_PROVE_SELF_CHECK, proof.data(), proof.size(), nullptr, nullptr, s.err, sizeof s.err);
    if (st != CUZK_OK) {
      if (verbose) std::printf("    mutant %d (file %d, kind %d): %s\n", i, i % 3, kind, s.err);
      rejected++;
      continue;
    }
    proved++;
    if (!ref.verify(proof.data(), pub.data())) bad_proofs++;
  }
  std::remove(tmp_r1cs.c_str());
  std::printf("  mutants of %s: %d tried, %d rejected, %d proved (all must verify: %d did not)\n", f.dir.c_str(), count,
              rejected, proved, bad_proofs);
  CHECK(bad_proofs == 0);
  CHECK(rejected > count / 2);
}

}  // namespace

int main(int argc, char** argv) {
  const char* names[] = {"single", "mulchain_4", "mulchain_4_over", "mulchain_8", "mulchain_8_over", "zero_public",
                         "many_public", "bits_10", "poseidon_10", "mulchain_10", "mulchain_10_over"};
  int mutant_count = argc > 1 ? std::atoi(argv[1]) : 150;
  for (const char* curve : {"bn254", "bls12_381"}) {
    for (const char* name : names) {
      Fixture f{std::string("tests/fixtures/") + curve + "/" + name};
      if (!f.exists()) { std::printf("  (fixture %s missing: skipped)\n", f.dir.c_str()); continue; }
      prove_fixture(f);
    }
    mutants(Fixture{std::string("tests/fixtures/") + curve + "/mulchain_4"}, mutant_count, curve[1] == 'n' ? 11 : 12);
  }
  cross_curve(Fixture{"tests/fixtures/bn254/mulchain_8"}, Fixture{"tests/fixtures/bls12_381/mulchain_8"});
  return cuzk_test::finish("prover_test");
}
