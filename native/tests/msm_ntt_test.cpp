// The CPU kernels against plain definitions: MSM against sums of scalar multiples (points whose
// discrete logs are known, so large sums reduce to one scalar multiplication), NTT against a
// direct O(n^2) evaluation and against values computed by ffjavascript (tools/gen_ntt_vectors.mjs).
#include <random>
#include <stdexcept>
#include <vector>

#include "check.hpp"
#include "cpu/msm.hpp"
#include "cpu/ntt.hpp"
#include "curve/ops.hpp"
#include "field/root_of_unity.hpp"

using namespace cuzk;
using namespace cuzk::curve;
using cuzk::cpu::NttKind;

namespace {

std::mt19937_64 rng(20240611);

template <class Fr>
Fr random_fr() {
  for (;;) {
    uint64_t l[4];
    for (auto& w : l) w = rng();
    l[3] &= (~0ULL) >> (256 - Fr::Params::BITS);
    Fr x = Fr::from_raw(l);
    if (x.is_canonical()) return x.to_mont();
  }
}

template <class Fr>
void fr_to_scalar_bytes(const Fr& x, uint8_t* out) { x.to_bytes_std(out); }

template <class F> struct GroupOf;
template <class C, class F>
const Affine<F>& generator() {
  if constexpr (std::is_same_v<F, typename C::Fq>) return C::g1_generator();
  else return C::g2_generator();
}

// Points with known discrete logs (base = dl * G), scalars, and the expected sum.
template <class C, class F>
struct MsmCase {
  using Fr = typename C::Fr;
  std::vector<uint8_t> point_buf, scalar_buf;  // one spare byte in front: unaligned inputs
  std::vector<Affine<F>> points;
  std::vector<Fr> dl, k;
  size_t n = 0;
  const uint8_t* point_bytes() const { return point_buf.data() + 1; }
  const uint8_t* scalar_bytes() const { return scalar_buf.data() + 1; }

  void encode() {
    constexpr size_t PB = 2 * F::BYTES;
    point_buf.assign(n * PB + 1, 0);
    scalar_buf.assign(n * 32 + 1, 0);
    for (size_t i = 0; i < n; i++) {
      store_key_point(points[i], point_buf.data() + 1 + PB * i);
      k[i].to_bytes_std(scalar_buf.data() + 1 + 32 * i);
    }
  }
  // sum k_i dl_i as one scalar multiplication of the generator
  Xyzz<F> expected() const {
    Fr e = Fr::zero();
    for (size_t i = 0; i < n; i++) e = e + k[i] * dl[i];
    uint64_t limbs[4];
    e.to_std_limbs(limbs);
    return scalar_mul(generator<C, F>(), limbs, 4);
  }
  Xyzz<F> naive() const {
    Xyzz<F> acc = Xyzz<F>::infinity();
    for (size_t i = 0; i < n; i++) {
      uint64_t limbs[4];
      k[i].to_std_limbs(limbs);
      acc = acc.add(scalar_mul(points[i], limbs, 4));
    }
    return acc;
  }
};

enum class ScalarMix { Mixed, AllZero, Random, Ones };

// Fresh points walk an arithmetic progression B + iA (one addition each); 'mixed' inputs also
// get infinity, repeated and negated points, and scalars 0, 1, r-1, small and repeated values.
template <class C, class F>
MsmCase<C, F> make_case(size_t n, ScalarMix mix, bool mixed_points) {
  using Fr = typename C::Fr;
  MsmCase<C, F> cs;
  cs.n = n;
  const auto& g = generator<C, F>();
  Fr a = random_fr<Fr>(), b = random_fr<Fr>();
  uint64_t la[4], lb[4];
  a.to_std_limbs(la);
  b.to_std_limbs(lb);
  Xyzz<F> A = scalar_mul(g, la, 4), cur = scalar_mul(g, lb, 4);
  Fr cur_dl = b;
  std::vector<Xyzz<F>> proj(n);
  cs.dl.resize(n);
  std::vector<int> kind(n, 0);  // 0 fresh, 1 infinity, 2 repeat, 3 negation
  for (size_t i = 0; i < n; i++) {
    unsigned roll = (unsigned)(rng() % 100);
    if (mixed_points && i > 0 && roll < 5) kind[i] = 1;
    else if (mixed_points && i > 0 && roll < 15) kind[i] = 2;
    else if (mixed_points && i > 0 && roll < 20) kind[i] = 3;
    proj[i] = cur;
    cs.dl[i] = cur_dl;
    cur = cur.add(A);
    cur_dl = cur_dl + a;
  }
  cs.points.resize(n);
  to_affine_batch(proj.data(), cs.points.data(), n);
  for (size_t i = 0; i < n; i++) {
    size_t j = i > 0 ? rng() % i : 0;
    if (kind[i] == 1) { cs.points[i] = Affine<F>::infinity(); cs.dl[i] = Fr::zero(); }
    if (kind[i] == 2) { cs.points[i] = cs.points[j]; cs.dl[i] = cs.dl[j]; }
    if (kind[i] == 3) { cs.points[i] = -cs.points[j]; cs.dl[i] = -cs.dl[j]; }
  }
  cs.k.resize(n);
  const Fr r_minus_1 = -Fr::one();
  const Fr repeated = random_fr<Fr>();
  for (size_t i = 0; i < n; i++) {
    unsigned roll = (unsigned)(rng() % 100);
    switch (mix) {
      case ScalarMix::AllZero: cs.k[i] = Fr::zero(); break;
      case ScalarMix::Ones: cs.k[i] = Fr::one(); break;
      case ScalarMix::Random: cs.k[i] = random_fr<Fr>(); break;
      case ScalarMix::Mixed:
        if (roll < 30) cs.k[i] = Fr::zero();
        else if (roll < 50) cs.k[i] = Fr::one();
        else if (roll < 55) cs.k[i] = r_minus_1;
        else if (roll < 60) cs.k[i] = Fr::from_u64(2 + rng() % 15);
        else if (roll < 65) cs.k[i] = repeated;
        else cs.k[i] = random_fr<Fr>();
        break;
    }
  }
  cs.encode();
  return cs;
}

template <class C, class F>
void check_msm_group(ThreadPool& pool, size_t max_n) {
  const size_t sizes[] = {0, 1, 2, 3, 17, 1000, 4097, 65537};
  for (size_t n : sizes) {
    if (n > max_n) continue;
    for (ScalarMix mix : {ScalarMix::Mixed, ScalarMix::Random, ScalarMix::AllZero}) {
      if (n > 4097 && mix == ScalarMix::AllZero) continue;
      auto cs = make_case<C, F>(n, mix, mix == ScalarMix::Mixed);
      auto got = cpu::msm<C, F>(pool, cs.point_bytes(), cs.scalar_bytes(), n);
      auto want = cs.expected();
      CHECK(got.equals(want));
      if (mix == ScalarMix::AllZero) CHECK(got.is_infinity());
      if (n <= 17 || (n == 1000 && mix == ScalarMix::Mixed)) CHECK(got.equals(cs.naive()));
    }
  }
  // one point, one scalar, many times: every bucket addition is a doubling
  {
    auto cs = make_case<C, F>(3000, ScalarMix::Random, false);
    for (size_t i = 0; i < cs.n; i++) { cs.points[i] = cs.points[0]; cs.dl[i] = cs.dl[0]; cs.k[i] = cs.k[0]; }
    cs.encode();
    CHECK((cpu::msm<C, F>(pool, cs.point_bytes(), cs.scalar_bytes(), cs.n).equals(cs.expected())));
  }
  // P and -P with equal scalars cancel inside every bucket
  {
    auto cs = make_case<C, F>(2000, ScalarMix::Random, false);
    for (size_t i = 1; i < cs.n; i += 2) { cs.points[i] = -cs.points[i - 1]; cs.dl[i] = -cs.dl[i - 1]; cs.k[i] = cs.k[i - 1]; }
    cs.encode();
    auto got = cpu::msm<C, F>(pool, cs.point_bytes(), cs.scalar_bytes(), cs.n);
    CHECK(got.is_infinity());
  }
  // all scalars 1 and r-1
  {
    auto cs = make_case<C, F>(5000, ScalarMix::Ones, true);
    CHECK((cpu::msm<C, F>(pool, cs.point_bytes(), cs.scalar_bytes(), cs.n).equals(cs.expected())));
    for (auto& x : cs.k) x = -typename C::Fr(x);
    cs.encode();
    CHECK((cpu::msm<C, F>(pool, cs.point_bytes(), cs.scalar_bytes(), cs.n).equals(cs.expected())));
  }
}

// The assembly product, sum and difference (when compiled in) against the portable ones, edge
// values included.
template <class F>
void check_field_mul() {
  std::vector<F> xs = {F::zero(), F::one(), -F::one(), F::from_u64(2), -F::from_u64(2), F::from_raw(F::Params::R2)};
  for (int i = 0; i < 200; i++) {
    uint64_t l[F::N];
    for (auto& w : l) w = rng();
    l[F::N - 1] >>= (i % 2) ? 2 : 8;
    F x = F::from_raw(l);
    if (x.is_canonical()) xs.push_back(x);
  }
  bool ok = true;
  for (const F& a : xs)
    for (const F& b : xs) {
      F p = a * b, s = a + b, d = a - b;
      ok &= p == a.mul_portable(b) && p.is_canonical();
      ok &= s == a.add_portable(b) && s.is_canonical();
      ok &= d == a.sub_portable(b) && d.is_canonical();
    }
  CHECK(ok);
}

// ---- NTT -------------------------------------------------------------------------------------

// y_i = sum_j a_j (shift * w^i)^j, for the indices asked
template <class Fr>
Fr eval_at(const std::vector<Fr>& a, const Fr& x) {
  Fr acc = Fr::zero();
  for (size_t j = a.size(); j-- > 0;) acc = acc * x + a[j];
  return acc;
}

template <class Fr>
std::vector<Fr> random_vec(size_t n) {
  std::vector<Fr> v(n);
  for (auto& x : v) x = random_fr<Fr>();
  return v;
}

template <class Fr>
void check_ntt_field(ThreadPool& pool, const char* const (&fwd_hex)[8], const char* const (&coset_hex)[8],
                     uint32_t largest_log) {
  // against ffjavascript: a = 1..8
  {
    auto from_hex = [](const char* h) {
      uint64_t l[4] = {0, 0, 0, 0};
      std::string s(h + 2);
      for (size_t i = 0; i < s.size(); i++) {
        char ch = s[s.size() - 1 - i];
        uint64_t d = ch <= '9' ? ch - '0' : ch - 'a' + 10;
        l[i / 16] |= d << (4 * (i % 16));
      }
      return Fr::from_raw(l).to_mont();
    };
    std::vector<Fr> a(8), b(8);
    for (int i = 0; i < 8; i++) a[i] = b[i] = Fr::from_u64(i + 1);
    cpu::ntt(pool, a.data(), 3, NttKind::Forward);
    cpu::ntt(pool, b.data(), 3, NttKind::CosetForward);
    bool fwd_ok = true, coset_ok = true;
    for (int i = 0; i < 8; i++) {
      fwd_ok &= a[i] == from_hex(fwd_hex[i]);
      coset_ok &= b[i] == from_hex(coset_hex[i]);
    }
    CHECK(fwd_ok);
    CHECK(coset_ok);
  }
  // against direct evaluation, every output for small n, sampled outputs for large n; the roots are
  // the library's (field/root_of_unity.hpp), which the ffjavascript vectors above pin independently
  for (uint32_t log_n : {0u, 1u, 2u, 3u, 4u, 7u, 9u, 13u, 15u, 17u}) {
    const size_t n = (size_t)1 << log_n;
    const Fr w = field::root_of_unity<Fr>(log_n), g = field::root_of_unity<Fr>(log_n + 1);
    auto a = random_vec<Fr>(n);
    std::vector<Fr> y = a, yc = a;
    cpu::ntt(pool, y.data(), log_n, NttKind::Forward);
    cpu::ntt(pool, yc.data(), log_n, NttKind::CosetForward);
    std::vector<size_t> idx;
    if (n <= 512) for (size_t i = 0; i < n; i++) idx.push_back(i);
    else for (int t = 0; t < 12; t++) idx.push_back(t < 2 ? t * (n - 1) : rng() % n);
    bool ok = true, ok_c = true;
    for (size_t i : idx) {
      Fr x = w.pow_u64(i);
      ok &= y[i] == eval_at(a, x);
      ok_c &= yc[i] == eval_at(a, g * x);
    }
    CHECK(ok);
    CHECK(ok_c);
    // inverse: a_j = 1/n sum_i y_i w^-ij, checked at sampled j
    std::vector<Fr> back = y, back_c = yc;
    cpu::ntt(pool, back.data(), log_n, NttKind::Inverse);
    cpu::ntt(pool, back_c.data(), log_n, NttKind::CosetInverse);
    CHECK(back == a);
    CHECK(back_c == a);
    if (n <= 512) {
      std::vector<Fr> z = a;
      cpu::ntt(pool, z.data(), log_n, NttKind::Inverse);
      Fr n_inv = Fr::from_u64(n).inverse(), w_inv = w.inverse();
      bool ok_i = true;
      for (size_t j = 0; j < n; j++) ok_i &= z[j] == eval_at(a, w_inv.pow_u64(j)) * n_inv;
      CHECK(ok_i);
    }
  }
  // round trips at larger sizes (past one cache block of 2^14, cpu/ntt.cpp), several thread counts
  for (uint32_t log_n : {12u, 14u, 18u, 20u}) {
    if (log_n > largest_log) continue;
    auto a = random_vec<Fr>((size_t)1 << log_n);
    auto y = a;
    cpu::ntt(pool, y.data(), log_n, NttKind::Inverse);
    cpu::ntt(pool, y.data(), log_n, NttKind::Forward);
    CHECK(y == a);
    cpu::ntt(pool, y.data(), log_n, NttKind::CosetForward);
    ThreadPool three(3);
    cpu::ntt(three, y.data(), log_n, NttKind::CosetInverse);
    CHECK(y == a);
  }
  // ranges
  bool threw = false;
  Fr dummy = Fr::zero();
  try { cpu::ntt(pool, &dummy, Fr::Params::TWO_ADICITY + 1, NttKind::Forward); } catch (const std::invalid_argument&) { threw = true; }
  CHECK(threw);
  threw = false;
  try { cpu::ntt(pool, &dummy, Fr::Params::TWO_ADICITY, NttKind::CosetForward); } catch (const std::invalid_argument&) { threw = true; }
  CHECK(threw);
}

// ffjavascript F1Field.fft of [1..8], and of [a_k * Fr.w[4]^k] (tools/gen_ntt_vectors.mjs)
const char* const kBn254Fwd[8] = {
    "0x24", "0x2701a4fd3f1d3e7a309cdc72c7c8fcb5c94af009cb48e6e51461367a2f1796",
    "0x2cf135e7506a45d632d270d45f1181294833fc48d823f2728", "0x2701a4fd3f1d38dc09dff2657f0e365b7b3064279b23bdde94d81b75b0c93e",
    "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593effffffd", "0x303d4ccde3f282f0dc4665c41c024a26ccb8b7e4521e4cd3654d1d787a4f36bb",
    "0x30644e72e131a026e93ce7417adcfaf9fb0cdb0288a15dfcc0a231066dc0d8d1", "0x303d4ccde3f282eb3e1fa8da0eb98f60726a9d586fee27aa5ecd945d75d0e863"};
const char* const kBn254Coset[8] = {
    "0x16332f954c3785d2a38bc730c4e3966e744114fe83a05083a374d26ef05a9d6b", "0x474d1a2e53e0d3b96db0b15dc63299492703c5628cb319f462f1c018c5952c4",
    "0x12098978ff6dbd3edf697fd700a2d5a3c2de9463f72a149703602dc454aa66bb", "0x86051fe9084836bec48aa70b5196392daf7805109586b8e8fee320e315d9abe",
    "0x12cacf3200ee1c0bdd82ae780690d0b6eb31190b5843771e38a5e0295854c330", "0x22e75cfbc925ee548d48cf2bcf8ada38b264995f98a67b4387117ad43479a80",
    "0x25c114a575cfe12804c7bda415b5a1014c53cbc56aeca803180a3407b76a74d4", "0x2160b501aedcb0aaf7b8db865441f082116924690383c895c592669a7a3d3bdf"};
const char* const kBlsFwd[8] = {
    "0x24", "0x365115eb3032e21e7f4f1feb02292dd2b0777fd497076365497feed718363e9a",
    "0x73eda753299d7d45fdf2a4ce3195c4c1a3b1a3f927f25bfefffbfffefffffffd", "0x365115eb3032e222e9dd865eb241545a108f7fe8471f63654987eed718363e9a",
    "0x73eda753299d7d483339d80809a1d80553bda402fffe5bfefffffffefffffffd", "0x3d9c9167f96a9b25495c51a9576083ab432e241ab8def899b6781127e7c9c15f",
    "0x235473339d80c1343b00c0009d80c00000003fffffffffffc", "0x3d9c9167f96a9b29b3eab81d0778aa32a346242e68f6f899b6801127e7c9c15f"};
const char* const kBlsCoset[8] = {
    "0x264b7ec8a11fc47106f74c053497849c9bc9306ede8870f3b96f9a84f42319ea", "0x5a29c6e937e4ab383a439a3e292d537e4c882ed2b9e8e37283276f8b913cb631",
    "0x64bdbb9f8e5fb98600c863662f91487438c446e502cca21abdabc8c1e0e27f6f", "0x43ffa5e0a9b53a9f3ae93699ed2969700c9e1ee479cb8571d60389b843306a00",
    "0x4a6644dd2c63de163323e76de8e656ce9323fa3071710f2e56948b27f2c106be", "0x69334c78d9acba0604d2cabea673c3c144ad5b44cab4776bfd40c08f0ecff01a",
    "0x126bcf60f7579e8e35f41957fe70ec7db005d6b2e57295c13264118f38395fef", "0x546c3cb6c191d7f01549ec6027dea70ded2942dbc95633aca980462a1cc2efbc"};

}  // namespace

// --largest-ntt-log N: the largest NTT round trip (default 20). The sanitizer build stops at 18,
// past the same cache block at a quarter of the work.
int main(int argc, char** argv) {
  const uint32_t largest_log = (uint32_t)cuzk_test::int_option(argc, argv, "--largest-ntt-log", 20, 12, 20);
  ThreadPool& pool = default_thread_pool();
  check_field_mul<Bn254::Fq>();
  check_field_mul<Bn254::Fr>();
  check_field_mul<Bls12381::Fq>();
  check_field_mul<Bls12381::Fr>();
  // NTT on both paths (AVX-512 IFMA where available, and the portable one)
  for (bool simd : {true, false}) {
    if (simd && !cpu::simd_available()) continue;
    cpu::set_simd(simd);
    check_ntt_field<Bn254::Fr>(pool, kBn254Fwd, kBn254Coset, largest_log);
    check_ntt_field<Bls12381::Fr>(pool, kBlsFwd, kBlsCoset, largest_log);
  }

  // every size on the default path (AVX-512 IFMA where the CPU has it), and the portable path
  // up to 4097 points when the default is the vector one
  for (bool simd : {true, false}) {
    if (simd && !cpu::simd_available()) continue;
    cpu::set_simd(simd);
    size_t max_n = simd || !cpu::simd_available() ? 65537 : 4097;
    check_msm_group<Bn254, Bn254::Fq>(pool, 65537);  // > one slice of the portable path
    // more points than one slice of the vector path: bucket sums carried between slices
    auto big = make_case<Bn254, Bn254::Fq>(300000, ScalarMix::Random, false);
    CHECK((cpu::msm<Bn254, Bn254::Fq>(pool, big.point_bytes(), big.scalar_bytes(), big.n).equals(big.expected())));
    check_msm_group<Bn254, Bn254::Fq2>(pool, max_n);
    check_msm_group<Bls12381, Bls12381::Fq>(pool, max_n);
    check_msm_group<Bls12381, Bls12381::Fq2>(pool, max_n);
  }
  cpu::set_simd(true);
  // other thread counts: one thread, and more threads than windows (points split into parts)
  {
    ThreadPool one(1), many(24);
    for (ThreadPool* p : {&one, &many}) {
      auto g1 = make_case<Bn254, Bn254::Fq>(20000, ScalarMix::Mixed, true);
      CHECK((cpu::msm<Bn254, Bn254::Fq>(*p, g1.point_bytes(), g1.scalar_bytes(), g1.n).equals(g1.expected())));
      auto g2 = make_case<Bls12381, Bls12381::Fq2>(3000, ScalarMix::Random, true);
      CHECK((cpu::msm<Bls12381, Bls12381::Fq2>(*p, g2.point_bytes(), g2.scalar_bytes(), g2.n).equals(g2.expected())));
      auto g3 = make_case<Bn254, Bn254::Fq2>(3000, ScalarMix::Mixed, true);
      CHECK((cpu::msm<Bn254, Bn254::Fq2>(*p, g3.point_bytes(), g3.scalar_bytes(), g3.n).equals(g3.expected())));
    }
  }
  return cuzk_test::finish("msm_ntt_test");
}
