// cuzk_key_check_witness, the one witness check: every return code it documents, on both curves,
// and for each case cuzk_prove gives the same status (it calls the same check) and never a proof.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixture.hpp"
#include "cuzk.h"
#include "formats/wtns.hpp"

namespace {

using Bytes = std::vector<uint8_t>;

using cuzk_test::read_file;

void put_u32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; i++) b.push_back((uint8_t)(v >> (8 * i)));
}
void put_u64(Bytes& b, uint64_t v) {
  for (int i = 0; i < 8; i++) b.push_back((uint8_t)(v >> (8 * i)));
}

// A .wtns (version 2) of the given values over `prime` (n8 bytes each, n8 = prime.size()).
Bytes make_wtns(const Bytes& prime, const Bytes& values) {
  const uint32_t n8 = (uint32_t)prime.size();
  Bytes b = {'w', 't', 'n', 's'};
  put_u32(b, 2);
  put_u32(b, 2);
  put_u32(b, 1);
  put_u64(b, 4 + n8 + 4);
  put_u32(b, n8);
  b.insert(b.end(), prime.begin(), prime.end());
  put_u32(b, (uint32_t)(values.size() / n8));
  put_u32(b, 2);
  put_u64(b, values.size());
  b.insert(b.end(), values.begin(), values.end());
  return b;
}

struct Case {
  const char* what;
  Bytes witness;
  uint32_t format;
  cuzk_status want;
  const char* message_part;  // must appear in the message
};

struct Keyed {
  cuzk_key* key = nullptr;
  cuzk_context* ctx = nullptr;
  cuzk_prover* prover = nullptr;
  cuzk_key_info info{};
  ~Keyed() {
    cuzk_prover_destroy(prover, nullptr, 0);
    cuzk_context_destroy(ctx, nullptr, 0);
    cuzk_key_close(key, nullptr, 0);
  }
};

bool open(const std::string& dir, Keyed& k) {
  char err[512];
  if (cuzk_key_open((dir + "/circuit.zkey").c_str(), 0, &k.key, err, sizeof err) != CUZK_OK) return false;
  if (cuzk_key_get_info(k.key, &k.info, err, sizeof err) != CUZK_OK) return false;
  if (cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &k.ctx, err, sizeof err) != CUZK_OK) return false;
  return cuzk_prover_create(k.ctx, k.key, 0, &k.prover, nullptr, err, sizeof err) == CUZK_OK;
}

void check_case(Keyed& k, const Case& c) {
  char err[512] = {0};
  uint64_t offset = 12345;
  cuzk_status st = cuzk_key_check_witness(k.key, c.witness.data(), c.witness.size(), c.format, &offset, err, sizeof err);
  const bool ok = st == c.want && std::strstr(err, c.message_part) != nullptr;
  CHECK(ok);
  if (!ok) std::fprintf(stderr, "  %s: status %d (%s) message '%s'\n", c.what, (int)st, cuzk_status_name(st), err);
  if (c.want != CUZK_OK) CHECK(offset == 12345);  // written on success only

  // cuzk_prove runs the same check: same status, the message prefixed with the proof index.
  Bytes proof(k.info.proof_bytes, 0xAB);
  char perr[512] = {0};
  cuzk_status pst = cuzk_prove(k.prover, c.witness.data(), c.witness.size(), c.format, 1, nullptr, nullptr, 0,
                               proof.data(), proof.size(), nullptr, nullptr, perr, sizeof perr);
  CHECK(pst == c.want);
  if (c.want != CUZK_OK) {
    const bool same_message = std::string(perr) == std::string("proof 0: ") + err;
    CHECK(same_message);
    if (!same_message) std::fprintf(stderr, "  %s: prove said '%s', check said '%s'\n", c.what, perr, err);
  }
}

void curve_cases(const std::string& dir, const std::string& other_dir) {
  Keyed k;
  bool opened = open(dir, k);
  CHECK(opened);
  if (!opened) return;
  const Bytes wtns = read_file(dir + "/witness.wtns");
  cuzk::formats::Wtns parsed;
  std::string e;
  CHECK(cuzk::formats::parse_wtns(wtns.data(), wtns.size(), parsed, e) == CUZK_OK);
  const size_t values_offset = (size_t)(parsed.values - wtns.data());
  const Bytes prime(parsed.prime, parsed.prime + 32);
  const Bytes raw(parsed.values, parsed.values + (size_t)parsed.n_witness * 32);
  char err[512];

  // CUZK_OK, both formats; the offset points at the values.
  uint64_t offset = 999;
  CHECK(cuzk_key_check_witness(k.key, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, &offset, err, sizeof err) == CUZK_OK);
  CHECK(offset == values_offset);
  CHECK(cuzk_key_check_witness(k.key, raw.data(), raw.size(), CUZK_WITNESS_RAW, &offset, err, sizeof err) == CUZK_OK);
  CHECK(offset == 0);
  CHECK(cuzk_key_check_witness(k.key, raw.data(), raw.size(), CUZK_WITNESS_RAW, nullptr, err, sizeof err) == CUZK_OK);

  // CUZK_ERR_INVALID_ARGUMENT for NULL handles (cuzk_prove has its own NULL checks).
  CHECK(cuzk_key_check_witness(nullptr, raw.data(), raw.size(), CUZK_WITNESS_RAW, nullptr, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_key_check_witness(k.key, nullptr, raw.size(), CUZK_WITNESS_RAW, nullptr, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);

  std::vector<Case> cases;
  cases.push_back({"valid .wtns", wtns, CUZK_WITNESS_WTNS, CUZK_OK, ""});
  cases.push_back({"valid raw", raw, CUZK_WITNESS_RAW, CUZK_OK, ""});
  cases.push_back({"unknown format", raw, 7, CUZK_ERR_INVALID_ARGUMENT, "unknown witness_format 7"});
  {
    Bytes v = raw;
    std::memcpy(&v[2 * 32], prime.data(), 32);  // w[2] = r
    cases.push_back({"raw value = r", v, CUZK_WITNESS_RAW, CUZK_ERR_INVALID_ARGUMENT, "witness value 2 is not < r"});
    cases.push_back({".wtns value = r", make_wtns(prime, v), CUZK_WITNESS_WTNS, CUZK_ERR_INVALID_ARGUMENT,
                     "witness value 2 is not < r"});
    std::memset(&v[2 * 32], 0xff, 32);
    cases.push_back({"raw value 2^256-1", v, CUZK_WITNESS_RAW, CUZK_ERR_INVALID_ARGUMENT, "witness value 2"});
  }
  {
    Bytes t(wtns.begin(), wtns.begin() + (long)(wtns.size() - 5));
    cases.push_back({"truncated .wtns", t, CUZK_WITNESS_WTNS, CUZK_ERR_FORMAT, ".wtns: "});
    Bytes m = wtns;
    m[0] = 'x';
    cases.push_back({"bad magic", m, CUZK_WITNESS_WTNS, CUZK_ERR_FORMAT, "magic"});
    cases.push_back({"raw bytes given as .wtns", raw, CUZK_WITNESS_WTNS, CUZK_ERR_FORMAT, ".wtns: "});
    Bytes odd(prime.begin(), prime.begin() + 7);
    cases.push_back({"n8 = 7", make_wtns(odd, Bytes(14, 0)), CUZK_WITNESS_WTNS, CUZK_ERR_FORMAT, "7 bytes"});
  }
  {
    const Bytes other = read_file(other_dir + "/witness.wtns");
    cases.push_back({"other curve's .wtns", other, CUZK_WITNESS_WTNS, CUZK_ERR_CURVE_MISMATCH, "but the key is for"});
    Bytes eight(prime.begin(), prime.begin() + 8);
    cases.push_back({"8-byte field", make_wtns(eight, Bytes(16, 0)), CUZK_WITNESS_WTNS, CUZK_ERR_CURVE_MISMATCH,
                     "values of 8 bytes"});
    Bytes foreign = prime;
    foreign[0] ^= 2;  // r + 2 or r - 2: not a supported prime
    cases.push_back({"foreign 254-bit prime", make_wtns(foreign, raw), CUZK_WITNESS_WTNS, CUZK_ERR_CURVE_MISMATCH,
                     "-bit prime"});
  }
  {
    Bytes shorter(raw.begin(), raw.end() - 32);
    cases.push_back({"raw one value short", shorter, CUZK_WITNESS_RAW, CUZK_ERR_WITNESS_LENGTH, "raw witness is"});
    Bytes longer = raw;
    longer.insert(longer.end(), 32, 0);
    cases.push_back({"raw one value long", longer, CUZK_WITNESS_RAW, CUZK_ERR_WITNESS_LENGTH, "variables"});
    cases.push_back({".wtns one value short", make_wtns(prime, shorter), CUZK_WITNESS_WTNS, CUZK_ERR_WITNESS_LENGTH,
                     "the witness has"});
    cases.push_back({"one-byte raw", Bytes(1, 1), CUZK_WITNESS_RAW, CUZK_ERR_WITNESS_LENGTH, "raw witness is 0 values (1 bytes)"});
  }
  {
    Bytes v = raw;
    v[0] = 2;
    cases.push_back({"raw w[0] = 2", v, CUZK_WITNESS_RAW, CUZK_ERR_UNSATISFIED, "w[0] must be 1"});
    cases.push_back({".wtns w[0] = 2", make_wtns(prime, v), CUZK_WITNESS_WTNS, CUZK_ERR_UNSATISFIED, "w[0] must be 1"});
    v[0] = 1;
    v[31] = 1;  // 1 + 2^248
    cases.push_back({"raw w[0] = 1 + 2^248", v, CUZK_WITNESS_RAW, CUZK_ERR_UNSATISFIED, "w[0] must be 1"});
  }
  for (const Case& c : cases) check_case(k, c);
  std::printf("  %s: %zu cases\n", dir.c_str(), cases.size());
}

}  // namespace

int main() {
  curve_cases("tests/fixtures/bn254/mulchain_4", "tests/fixtures/bls12_381/mulchain_4");
  curve_cases("tests/fixtures/bls12_381/mulchain_4", "tests/fixtures/bn254/mulchain_4");
  return cuzk_test::finish("witness_check_test");
}
