// cuzk_key_export_vk_alphabeta: e(alpha1, beta2) as snarkjs writes vk_alphabeta_12. Every committed
// fixture's key against the vk_alphabeta_12 snarkjs wrote in its verification_key.json (both curves);
// pairing_snarkjs against @noble/curves's pairing values (pairing_vectors.inc, which equal snarkjs's);
// the size protocol; a key whose alpha1 or beta2 lies outside its subgroup is refused.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "curve/ops.hpp"
#include "fixture.hpp"
#include "pairing/pairing.hpp"
#include "pairing_vectors.inc"

namespace fs = std::filesystem;
using namespace cuzk;
using cuzk_test::read_file;

namespace {

using Bytes = std::vector<uint8_t>;

// A decimal string as n little-endian bytes (empty when it does not fit or holds a non-digit).
Bytes le_of_decimal(const std::string& digits, size_t n) {
  Bytes out(n, 0);
  for (char ch : digits) {
    if (ch < '0' || ch > '9') return {};
    unsigned carry = (unsigned)(ch - '0');
    for (auto& b : out) {
      unsigned v = b * 10u + carry;
      b = (uint8_t)v;
      carry = v >> 8;
    }
    if (carry) return {};
  }
  return out;
}

// The 12 coefficients of "vk_alphabeta_12" in a verification_key.json, in the order they appear
// (snarkjs nests them [[[c000, c001], ...]]: the order of the flattened array), as LE bytes.
Bytes alphabeta_of_json(const std::string& json, size_t fq_bytes) {
  size_t at = json.find("\"vk_alphabeta_12\"");
  if (at == std::string::npos) return {};
  at += std::strlen("\"vk_alphabeta_12\"");
  Bytes out;
  for (int i = 0; i < 12; i++) {
    size_t open = json.find('"', at), close = json.find('"', open + 1);
    if (open == std::string::npos || close == std::string::npos) return {};
    Bytes c = le_of_decimal(json.substr(open + 1, close - open - 1), fq_bytes);
    if (c.empty()) return {};
    out.insert(out.end(), c.begin(), c.end());
    at = close + 1;
  }
  return out;
}

Bytes export_alphabeta(const cuzk_key* key, cuzk_status* st, char* err, size_t err_cap) {
  size_t len = 0;
  cuzk_key_export_vk_alphabeta(key, nullptr, 0, &len, nullptr, 0);
  Bytes out(len);
  *st = cuzk_key_export_vk_alphabeta(key, out.data(), out.size(), &len, err, err_cap);
  return out;
}

void check_fixtures() {
  int checked = 0;
  for (const char* curve : {"bn254", "bls12_381"}) {
    std::vector<fs::path> dirs;
    std::error_code ec;
    for (fs::directory_iterator it(fs::path("tests/fixtures") / curve, ec), end; !ec && it != end; it.increment(ec))
      dirs.push_back(it->path());
    CHECK(!ec);  // run from the repository root (ctest does)
    std::sort(dirs.begin(), dirs.end());
    double ms = 0;
    for (const auto& dir : dirs) {
      cuzk_key* key = nullptr;
      char err[256] = {0};
      CHECK(cuzk_key_open((dir / "circuit.zkey").c_str(), 0, &key, err, sizeof err) == CUZK_OK);
      if (!key) { std::fprintf(stderr, "%s: %s\n", dir.c_str(), err); continue; }
      cuzk_key_info info{};
      CHECK(cuzk_key_get_info(key, &info, err, sizeof err) == CUZK_OK);
      Bytes bytes = read_file((dir / "verification_key.json").string());
      Bytes expected = alphabeta_of_json(std::string(bytes.begin(), bytes.end()), info.fq_bytes);
      CHECK(expected.size() == 12u * info.fq_bytes);
      cuzk_status st;
      auto t0 = std::chrono::steady_clock::now();
      Bytes ours = export_alphabeta(key, &st, err, sizeof err);
      ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      CHECK(st == CUZK_OK);
      bool same = ours == expected;
      CHECK(same);
      if (!same) std::fprintf(stderr, "%s: vk_alphabeta_12 differs from snarkjs's\n", dir.c_str());
      checked++;
      cuzk_key_close(key, nullptr, 0);
    }
    std::printf("%s: cuzk_key_export_vk_alphabeta %.2f ms per key\n", curve, dirs.empty() ? 0.0 : ms / dirs.size());
  }
  std::printf("vk_alphabeta_12 of %d fixture keys equal to snarkjs's\n", checked);
  CHECK(checked >= 20);  // 11 circuits on each curve are committed
}

// noble's pairing equals snarkjs's (the fixtures above show it for alpha, beta), on random points too.
template <class C, size_t K>
void check_noble(const PairingVector (&vectors)[K]) {
  using Fq = typename C::Fq;
  auto fq = [](const uint64_t* v) { return Fq::from_raw(v).to_mont(); };
  for (const auto& v : vectors) {
    typename C::G1 p{fq(v.p.x), fq(v.p.y)};
    typename C::G2 q{{fq(v.q.x0), fq(v.q.x1)}, {fq(v.q.y0), fq(v.q.y1)}};
    pairing::Fq12<C> e = pairing::pairing_snarkjs<C>(p, q);
    const typename C::Fq2* ours[6] = {&e.c0.c0, &e.c0.c1, &e.c0.c2, &e.c1.c0, &e.c1.c1, &e.c1.c2};
    bool same = true;
    for (int i = 0; i < 6; i++) same &= ours[i]->c0 == fq(v.e.c[2 * i]) && ours[i]->c1 == fq(v.e.c[2 * i + 1]);
    CHECK(same);
  }
}

void check_size_protocol() {
  cuzk_key* key = nullptr;
  char err[256] = {0};
  CHECK(cuzk_key_open("tests/fixtures/bls12_381/single/circuit.zkey", 0, &key, err, sizeof err) == CUZK_OK);
  size_t len = 0;
  CHECK(cuzk_key_export_vk_alphabeta(key, nullptr, 0, &len, err, sizeof err) == CUZK_ERR_SHORT_BUFFER);
  CHECK(len == 12 * 48);
  Bytes out(len, 0xab);
  CHECK(cuzk_key_export_vk_alphabeta(key, out.data(), len - 1, &len, err, sizeof err) == CUZK_ERR_SHORT_BUFFER);
  CHECK(std::string(err).find("575 bytes; 576 needed") != std::string::npos);
  CHECK(std::all_of(out.begin(), out.end(), [](uint8_t b) { return b == 0xab; }));  // untouched
  CHECK(cuzk_key_export_vk_alphabeta(key, out.data(), out.size(), nullptr, err, sizeof err) == CUZK_OK);  // out_len optional
  cuzk_status st;
  CHECK(export_alphabeta(key, &st, err, sizeof err) == out);  // the same value every call
  CHECK(cuzk_key_export_vk_alphabeta(nullptr, out.data(), out.size(), &len, err, sizeof err) == CUZK_ERR_INVALID_ARGUMENT);
  CHECK(std::string(err) == "key is NULL");
  cuzk_key_close(key, nullptr, 0);
}

// The key's `point` (G1 or G2, Montgomery form as a .zkey holds it) replaced by `other` in the file's
// bytes; the point must occur exactly once (the Groth16 header section).
template <class F>
bool replace_point(Bytes& zkey, const curve::Affine<F>& point, const curve::Affine<F>& other) {
  Bytes from(2 * F::BYTES), to(2 * F::BYTES);
  curve::store_key_point(point, from.data());
  curve::store_key_point(other, to.data());
  auto at = std::search(zkey.begin(), zkey.end(), from.begin(), from.end());
  if (at == zkey.end() || std::search(at + 1, zkey.end(), from.begin(), from.end()) != zkey.end()) return false;
  std::copy(to.begin(), to.end(), at);
  return true;
}

// A key whose alpha1 (BLS12-381) or beta2 (BN254) is on its curve (so the key opens) but outside the
// order-r subgroup: no snarkjs value to match, so the call refuses it.
template <class C>
void check_outside_subgroup(const char* fixture) {
  using Fq = typename C::Fq;
  auto fq = [](const uint64_t* v) { return Fq::from_raw(v).to_mont(); };
  Bytes zkey = read_file(std::string("tests/fixtures/") + fixture + "/circuit.zkey");
  cuzk_test::CpuProver k;
  CHECK(k.open_memory(zkey));
  if (k.vk.empty()) return;
  bool replaced;
  if constexpr (std::is_same_v<C, curve::Bls12381>) {
    auto alpha1 = curve::load_output_point<Fq>(k.vk.data());
    const auto& r = bls12_381_g1_not_in_subgroup;
    replaced = replace_point(zkey, alpha1, typename C::G1{fq(r.x), fq(r.y)});
  } else {
    auto beta2 = curve::load_output_point<typename C::Fq2>(k.vk.data() + C::G1_BYTES);
    const auto& r = bn254_g2_not_in_subgroup;
    replaced = replace_point(zkey, beta2, typename C::G2{{fq(r.x0), fq(r.x1)}, {fq(r.y0), fq(r.y1)}});
  }
  CHECK(replaced);
  cuzk_key* key = nullptr;
  char err[256] = {0};
  CHECK(cuzk_key_open_memory(zkey.data(), zkey.size(), 0, &key, err, sizeof err) == CUZK_OK);  // on the curve
  cuzk_status st;
  export_alphabeta(key, &st, err, sizeof err);
  CHECK(st == CUZK_ERR_FORMAT);
  CHECK(std::string(err).find("not in its order-r subgroup") != std::string::npos);
  cuzk_key_close(key, nullptr, 0);
}

}  // namespace

int main() {
  check_fixtures();
  check_noble<curve::Bn254>(bn254_pairing_vectors);
  check_noble<curve::Bls12381>(bls12_381_pairing_vectors);
  check_size_protocol();
  check_outside_subgroup<curve::Bn254>("bn254/mulchain_4");
  check_outside_subgroup<curve::Bls12381>("bls12_381/mulchain_4");
  return cuzk_test::finish("vk_alphabeta_test");
}
