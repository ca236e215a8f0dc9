// cuzk_key_check_witness, the one witness check: every return code it documents, on both curves,
// and for each case cuzk_prove gives the same status (it calls the same check) and never a proof;
// with a cuzk_witness_check the same status and message, and the facts of each case; without
// CUZK_CHECK_SCAN the same checks but the scan of values < r.
#include <cstdint>
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

// What cuzk_key_check_witness must write to its cuzk_witness_check (with CUZK_CHECK_SCAN) about a case.
struct Facts {
  uint32_t witness_curve = 0;
  uint64_t values = 0;
  uint64_t first_bad_index = UINT64_MAX;
  uint64_t values_offset = 0;
};

struct Case {
  const char* what;
  Bytes witness;
  uint32_t format;
  cuzk_status want;
  const char* message_part;  // must appear in the message
  Facts facts;
};

// Where a well-formed .wtns's values start (the test's own reading, through the reader).
uint64_t wtns_values_offset(const Bytes& wtns) {
  cuzk::formats::Wtns parsed;
  std::string e;
  if (cuzk::formats::parse_wtns(wtns.data(), wtns.size(), parsed, e) != CUZK_OK) return UINT64_MAX;
  return (uint64_t)(parsed.values - wtns.data());
}


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

bool same_facts(const cuzk_witness_check& got, const Facts& want) {
  return got.witness_curve == want.witness_curve && got.values == want.values &&
         got.first_bad_index == want.first_bad_index && got.values_offset == want.values_offset;
}

// With a cuzk_witness_check: with CUZK_CHECK_SCAN the status and message of the call without one and
// the case's facts; without the flag the status and message of the shape check (no out) and the same
// facts but no scan, and the case's own status wherever the scan finds nothing.
void check_detail(Keyed& k, const Case& c, cuzk_status plain, const char* plain_err) {
  char err[512] = {0};
  cuzk_witness_check got;
  std::memset(&got, 0xAB, sizeof got);
  got.struct_size = sizeof got;
  cuzk_status st = cuzk_key_check_witness(k.key, c.witness.data(), c.witness.size(), c.format, CUZK_CHECK_SCAN, &got,
                                          err, sizeof err);
  const bool ok = st == plain && std::string(err) == plain_err && same_facts(got, c.facts) &&
                  got.struct_size == sizeof got;
  CHECK(ok);
  if (!ok) {
    std::fprintf(stderr, "  %s: with out %d '%s' curve %u values %llu first_bad %llu offset %llu\n", c.what, (int)st,
                 err, got.witness_curve, (unsigned long long)got.values, (unsigned long long)got.first_bad_index,
                 (unsigned long long)got.values_offset);
  }

  char shape_err[512] = {0};
  cuzk_status shape = cuzk_key_check_witness(k.key, c.witness.data(), c.witness.size(), c.format, 0, nullptr, shape_err,
                                             sizeof shape_err);
  std::memset(&got, 0xAB, sizeof got);
  got.struct_size = sizeof got;
  st = cuzk_key_check_witness(k.key, c.witness.data(), c.witness.size(), c.format, 0, &got, err, sizeof err);
  Facts unscanned = c.facts;
  unscanned.first_bad_index = UINT64_MAX;
  const bool shape_ok = st == shape && std::string(err) == shape_err && same_facts(got, unscanned);
  CHECK(shape_ok);
  if (!shape_ok) {
    std::fprintf(stderr, "  %s: shape with out %d '%s', without %d '%s'\n", c.what, (int)st, err, (int)shape,
                 shape_err);
  }
  // The scan is all that the flag adds: a case it does not refuse is refused alike without it, and
  // the shape check never names a value not < r.
  const bool scan_only = c.facts.first_bad_index == UINT64_MAX ? shape == c.want
                                                               : std::strstr(shape_err, "is not < r") == nullptr;
  CHECK(scan_only);
  if (!scan_only) std::fprintf(stderr, "  %s: shape check %d '%s'\n", c.what, (int)shape, shape_err);
}

void check_case(Keyed& k, const Case& c) {
  char err[512] = {0};
  cuzk_status st = cuzk_key_check_witness(k.key, c.witness.data(), c.witness.size(), c.format, CUZK_CHECK_SCAN,
                                          nullptr, err, sizeof err);
  const bool ok = st == c.want && std::strstr(err, c.message_part) != nullptr;
  CHECK(ok);
  if (!ok) std::fprintf(stderr, "  %s: status %d (%s) message '%s'\n", c.what, (int)st, cuzk_status_name(st), err);
  check_detail(k, c, st, err);

  // cuzk_prove runs the same check: same status, the message prefixed with the proof index.
  Bytes proof(k.info.proof_bytes, 0xAB);
  char perr[512] = {0};
  cuzk_status pst = prove_call(k.prover, c.witness.data(), c.witness.size(), c.format, 1, nullptr, nullptr, 0,
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

  // CUZK_OK, both formats, with and without the scan; the offset points at the values.
  for (uint32_t flags : {0u, CUZK_CHECK_SCAN}) {
    cuzk_witness_check found{};
    found.struct_size = sizeof found;
    found.values_offset = 999;
    CHECK(cuzk_key_check_witness(k.key, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, flags, &found, err, sizeof err) ==
          CUZK_OK);
    CHECK(found.values_offset == values_offset);
    CHECK(cuzk_key_check_witness(k.key, raw.data(), raw.size(), CUZK_WITNESS_RAW, flags, &found, err, sizeof err) ==
          CUZK_OK);
    CHECK(found.values_offset == 0);
    CHECK(cuzk_key_check_witness(k.key, raw.data(), raw.size(), CUZK_WITNESS_RAW, flags, nullptr, err, sizeof err) ==
          CUZK_OK);
  }

  // CUZK_ERR_INVALID_ARGUMENT for NULL handles (cuzk_prove has its own NULL checks).
  CHECK(cuzk_key_check_witness(nullptr, raw.data(), raw.size(), CUZK_WITNESS_RAW, CUZK_CHECK_SCAN, nullptr, err,
                               sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(cuzk_key_check_witness(k.key, nullptr, raw.size(), CUZK_WITNESS_RAW, CUZK_CHECK_SCAN, nullptr, err,
                               sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  // An empty witness (NULL from the FFIs) is a witness of the wrong length, said in words.
  CHECK(cuzk_key_check_witness(k.key, nullptr, 0, CUZK_WITNESS_WTNS, CUZK_CHECK_SCAN, nullptr, err, sizeof err) ==
        CUZK_ERR_WITNESS_LENGTH);
  CHECK(std::string(err).find("the witness is empty") != std::string::npos);

  // The call's own arguments: out's struct_size, unknown flags; *out left as it was.
  cuzk_witness_check detail;
  std::memset(&detail, 0x5A, sizeof detail);
  detail.struct_size = sizeof detail - 8;
  CHECK(cuzk_key_check_witness(k.key, raw.data(), raw.size(), CUZK_WITNESS_RAW, CUZK_CHECK_SCAN, &detail, err,
                               sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::strstr(err, "struct_size is 24; it must be at least 32") != nullptr);
  CHECK(detail.values == 0x5A5A5A5A5A5A5A5Aull && detail.witness_curve == 0x5A5A5A5Au);
  detail.struct_size = 0;
  CHECK(cuzk_key_check_witness(k.key, raw.data(), raw.size(), CUZK_WITNESS_RAW, 0, &detail, err, sizeof err) ==
        CUZK_ERR_INVALID_ARGUMENT);
  detail.struct_size = sizeof detail;
  for (uint32_t flags : {0x2u, CUZK_CHECK_SCAN | 0x80000000u}) {
    CHECK(cuzk_key_check_witness(k.key, raw.data(), raw.size(), CUZK_WITNESS_RAW, flags, &detail, err, sizeof err) ==
          CUZK_ERR_INVALID_ARGUMENT);
    CHECK(std::strstr(err, "unknown flags") != nullptr && detail.values == 0x5A5A5A5A5A5A5A5Aull);
    CHECK(cuzk_key_check_witness(k.key, raw.data(), raw.size(), CUZK_WITNESS_RAW, flags, nullptr, err, sizeof err) ==
          CUZK_ERR_INVALID_ARGUMENT);
  }
  // A NULL key is refused as without out, with nothing known.
  CHECK(cuzk_key_check_witness(nullptr, raw.data(), raw.size(), CUZK_WITNESS_RAW, CUZK_CHECK_SCAN, &detail, err,
                               sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(detail.values == 0 && detail.first_bad_index == UINT64_MAX && detail.witness_curve == 0);

  // The facts each case must report (cuzk_witness_check): the key's count and curve where they match.
  const uint64_t n = k.info.n_vars;
  const uint32_t curve = k.info.curve;
  const uint64_t made_offset = wtns_values_offset(make_wtns(prime, raw));  // where make_wtns puts w[0]
  const Facts good_wtns{curve, n, UINT64_MAX, values_offset}, good_raw{0, n, UINT64_MAX, 0}, unread{};
  auto bad_at = [](Facts f, uint64_t index) { f.first_bad_index = index; return f; };
  auto counted = [](uint32_t c, uint64_t values) { return Facts{c, values, UINT64_MAX, 0}; };

  std::vector<Case> cases;
  cases.push_back({"valid .wtns", wtns, CUZK_WITNESS_WTNS, CUZK_OK, "", good_wtns});
  cases.push_back({"valid raw", raw, CUZK_WITNESS_RAW, CUZK_OK, "", good_raw});
  cases.push_back({"unknown format", raw, 7, CUZK_ERR_INVALID_ARGUMENT, "unknown witness_format 7", unread});
  {
    Bytes v = raw;
    std::memcpy(&v[2 * 32], prime.data(), 32);  // w[2] = r
    cases.push_back({"raw value = r", v, CUZK_WITNESS_RAW, CUZK_ERR_INVALID_ARGUMENT, "witness value 2 is not < r",
                     bad_at(good_raw, 2)});
    cases.push_back({".wtns value = r", make_wtns(prime, v), CUZK_WITNESS_WTNS, CUZK_ERR_INVALID_ARGUMENT,
                     "witness value 2 is not < r", bad_at(Facts{curve, n, UINT64_MAX, made_offset}, 2)});
    std::memset(&v[2 * 32], 0xff, 32);
    cases.push_back({"raw value 2^256-1", v, CUZK_WITNESS_RAW, CUZK_ERR_INVALID_ARGUMENT, "witness value 2",
                     bad_at(good_raw, 2)});
    std::memset(&v[(n - 1) * 32], 0xff, 32);  // bad at 2 and n-1, and at 1 (r + 1: its first byte raised)
    std::memcpy(&v[1 * 32], prime.data(), 32);
    v[32] += 1;
    cases.push_back({"raw values not < r at 1, 2 and n-1", v, CUZK_WITNESS_RAW, CUZK_ERR_INVALID_ARGUMENT,
                     "witness value 1 is not < r", bad_at(good_raw, 1)});
    std::memcpy(&v[0], prime.data(), 32);  // w[0] = r: out of range comes before w[0] != 1
    cases.push_back({"raw w[0] = r", v, CUZK_WITNESS_RAW, CUZK_ERR_INVALID_ARGUMENT, "witness value 0 is not < r",
                     bad_at(good_raw, 0)});
  }
  {
    Bytes t(wtns.begin(), wtns.begin() + (long)(wtns.size() - 5));
    cases.push_back({"truncated .wtns", t, CUZK_WITNESS_WTNS, CUZK_ERR_FORMAT, ".wtns: ", unread});
    Bytes m = wtns;
    m[0] = 'x';
    cases.push_back({"bad magic", m, CUZK_WITNESS_WTNS, CUZK_ERR_FORMAT, "magic", unread});
    cases.push_back({"raw bytes given as .wtns", raw, CUZK_WITNESS_WTNS, CUZK_ERR_FORMAT, ".wtns: ", unread});
    Bytes odd(prime.begin(), prime.begin() + 7);
    cases.push_back({"n8 = 7", make_wtns(odd, Bytes(14, 0)), CUZK_WITNESS_WTNS, CUZK_ERR_FORMAT, "7 bytes", unread});
  }
  {
    const Bytes other = read_file(other_dir + "/witness.wtns");
    cuzk::formats::Wtns theirs;
    CHECK(cuzk::formats::parse_wtns(other.data(), other.size(), theirs, e) == CUZK_OK);
    const uint32_t other_curve = curve == CUZK_CURVE_BN254 ? CUZK_CURVE_BLS12_381 : CUZK_CURVE_BN254;
    cases.push_back({"other curve's .wtns", other, CUZK_WITNESS_WTNS, CUZK_ERR_CURVE_MISMATCH, "but the key is for",
                     counted(other_curve, theirs.n_witness)});
    Bytes eight(prime.begin(), prime.begin() + 8);
    cases.push_back({"8-byte field", make_wtns(eight, Bytes(16, 0)), CUZK_WITNESS_WTNS, CUZK_ERR_CURVE_MISMATCH,
                     "values of 8 bytes", unread});
    Bytes foreign = prime;
    foreign[0] ^= 2;  // r + 2 or r - 2: not a supported prime
    cases.push_back({"foreign 254-bit prime", make_wtns(foreign, raw), CUZK_WITNESS_WTNS, CUZK_ERR_CURVE_MISMATCH,
                     "-bit prime", unread});
  }
  {
    Bytes shorter(raw.begin(), raw.end() - 32);
    cases.push_back({"raw one value short", shorter, CUZK_WITNESS_RAW, CUZK_ERR_WITNESS_LENGTH, "raw witness is",
                     counted(0, n - 1)});
    Bytes longer = raw;
    longer.insert(longer.end(), 32, 0);
    cases.push_back({"raw one value long", longer, CUZK_WITNESS_RAW, CUZK_ERR_WITNESS_LENGTH, "variables",
                     counted(0, n + 1)});
    longer.insert(longer.end(), 5, 0);  // a partial value: counted down
    cases.push_back({"raw one value and 5 bytes long", longer, CUZK_WITNESS_RAW, CUZK_ERR_WITNESS_LENGTH,
                     "variables", counted(0, n + 1)});
    cases.push_back({".wtns one value short", make_wtns(prime, shorter), CUZK_WITNESS_WTNS, CUZK_ERR_WITNESS_LENGTH,
                     "the witness has", counted(curve, n - 1)});
    cases.push_back({"one-byte raw", Bytes(1, 1), CUZK_WITNESS_RAW, CUZK_ERR_WITNESS_LENGTH,
                     "raw witness is 0 values (1 bytes)", unread});
  }
  {
    Bytes v = raw;
    v[0] = 2;
    cases.push_back({"raw w[0] = 2", v, CUZK_WITNESS_RAW, CUZK_ERR_UNSATISFIED, "w[0] must be 1", good_raw});
    cases.push_back({".wtns w[0] = 2", make_wtns(prime, v), CUZK_WITNESS_WTNS, CUZK_ERR_UNSATISFIED, "w[0] must be 1",
                     Facts{curve, n, UINT64_MAX, made_offset}});
    v[0] = 1;
    v[31] = 1;  // 1 + 2^248
    cases.push_back({"raw w[0] = 1 + 2^248", v, CUZK_WITNESS_RAW, CUZK_ERR_UNSATISFIED, "w[0] must be 1", good_raw});
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
