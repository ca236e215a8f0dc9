// The device field and curve code (native/src/cuda/field/field.cuh, curve/curves.cuh) run through its host
// emulation of the PTX carry chains, against the host Fp: the same limb logic the GPU executes,
// checked on any machine (no GPU needed).
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "check.hpp"
#include "cuda/curve/curves.cuh"
#include "cuda/field/fp2_pair.cuh"
#include "curve/ops.hpp"

using namespace cuzk;

namespace {

std::mt19937_64 rng(1);

template <class H>
H random_element() {
  uint64_t r[H::N];
  for (auto& w : r) w = rng();
  r[H::N - 1] >>= 3;
  return H::from_raw(r).to_mont();
}
using cuzk_test::same_bytes;

template <class H, class D>
void check_field() {
  int bad = 0;
  for (int it = 0; it < 5000; it++) {
    H a = random_element<H>(), b = random_element<H>();
    if (it % 97 == 0) a = H::zero();
    if (it % 89 == 0) b = H::zero() - H::one();
    D da = same_bytes<D>(a), db = same_bytes<D>(b);
    bad += !(same_bytes<H>(da * db) == a * b);
    bad += !(same_bytes<H>(da + db) == a + b);
    bad += !(same_bytes<H>(da - db) == a - b);
    bad += !(same_bytes<H>(-da) == -a);
    bad += !(same_bytes<H>(da.sqr()) == a.sqr());
  }
  CHECK(bad == 0);
  // Representations with zero 32-bit halves: rows of the product whose low limb is zero, the
  // m_i = 0 case of the reduction (BLS12-381 r's friendly reduction row treats it apart).
  for (int it = 0; it < 20000; it++) {
    H x[2];
    for (H& h : x) {
      uint64_t r[H::N];
      for (auto& w : r) {
        w = rng();
        const uint64_t pick = rng() % 4;
        if (pick == 1) w &= 0xffffffff00000000ull;
        if (pick == 2) w &= 0x00000000ffffffffull;
        if (pick == 3) w = 0;
      }
      r[H::N - 1] >>= 3;
      h = H::from_raw(r);  // taken as Montgomery limbs: any value below p is one
    }
    bad += !(same_bytes<H>(same_bytes<D>(x[0]) * same_bytes<D>(x[1])) == x[0] * x[1]);
  }
  CHECK(bad == 0);
  H a = random_element<H>();
  CHECK(same_bytes<H>(same_bytes<D>(a).inverse()) == a.inverse());  // p - 2 borrows on BLS12-381 r
  CHECK(same_bytes<H>(D::one()) == H::one());
  H raw = H::zero();
  raw.l[0] = 12345;
  CHECK(same_bytes<H>(same_bytes<D>(raw).to_mont()) == H::from_u64(12345));
  CHECK(same_bytes<H>(same_bytes<D>(H::from_u64(12345)).from_mont()) == raw);
}

// Mixed additions through every special case (infinity, doubling, cancellation), doubling and
// full addition, on the device point types.
template <class GA, class GX, class DA, class DX>
void check_curve(const GA& g) {
  int bad = 0;
  GX acc = GX::infinity();
  DX dacc = same_bytes<DX>(acc);
  for (int it = 0; it < 60; it++) {
    uint64_t k[4];
    for (auto& w : k) w = rng();
    GA p = curve::scalar_mul(g, k, 4).to_affine();
    if (it % 17 == 0) p = GA::infinity();
    if (it % 13 == 0) p = same_bytes<GX>(dacc).to_affine();
    if (it % 19 == 0) p = -same_bytes<GX>(dacc).to_affine();
    acc = acc.add_affine(p);
    dacc = dacc.add_affine(same_bytes<DA>(p));
    bad += !same_bytes<GX>(dacc).equals(acc);
    DX d2 = dacc.dbl();
    bad += !same_bytes<GX>(d2).equals(acc.dbl());
    bad += !same_bytes<GX>(d2.add(dacc)).equals(acc.dbl().add(acc));
  }
  CHECK(bad == 0);
}

// Two host threads as the two lanes of a pair (cuda/field/fp2_pair.cuh): an exchange writes this
// lane's value, waits for the other lane's, reads it, and waits again before the slot is reused.
struct HostPairLanes {
  static inline thread_local int lane = 0;
  static inline std::mutex m;
  static inline std::condition_variable cv;
  static inline int arrived = 0;
  static inline unsigned long generation = 0;
  static inline unsigned char slot[2][64];
  static void barrier() {
    std::unique_lock<std::mutex> lock(m);
    const unsigned long g = generation;
    if (++arrived == 2) {
      arrived = 0;
      generation++;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != g; });
    }
  }
  static bool odd() { return lane == 1; }
  static void exchange(const void* mine, void* theirs, size_t bytes) {
    std::memcpy(slot[lane], mine, bytes);
    barrier();
    std::memcpy(theirs, slot[1 - lane], bytes);
    barrier();
  }
  template <class F>
  static F other(const F& x) {
    static_assert(sizeof(F) <= sizeof(slot[0]), "exchange slot");
    F r;
    exchange(&x, &r, sizeof x);
    return r;
  }
  static bool both(bool b) {
    bool o = false;
    exchange(&b, &o, sizeof b);
    return o && b;
  }
};

// body(lane) on two threads at once, as the two lanes of a pair.
template <class Body>
void run_pair(Body body) {
  std::thread odd([&] {
    HostPairLanes::lane = 1;
    body(1);
  });
  HostPairLanes::lane = 0;
  body(0);
  odd.join();
}

// The lane-pair Fp2 (each lane one component) against the one-thread device Fp2 and the host's:
// products, squares, sums, zero tests, then the mixed addition through every special case,
// doubling and full addition. Every result must have the same words (both are fully reduced).
template <class HF2, class DF2, class GA, class GX, class DX>
void check_pair(const GA& g) {
  using DF = typename DF2::Base;
  using PF = cuda::Fp2Pair<DF, HostPairLanes>;
  using PA = curve::Affine<PF>;
  using PX = curve::Xyzz<PF>;
  auto half = [](const HF2& x, int lane) { return PF{same_bytes<DF>(lane ? x.c1 : x.c0)}; };
  auto half_a = [&](const GA& p, int lane) { return PA{half(p.x, lane), half(p.y, lane)}; };
  // Fields.
  const int n = 400;
  std::vector<HF2> a(n), b(n);
  for (int i = 0; i < n; i++) {
    a[i] = HF2{random_element<typename HF2::Base>(), random_element<typename HF2::Base>()};
    b[i] = HF2{random_element<typename HF2::Base>(), random_element<typename HF2::Base>()};
    if (i % 7 == 0) b[i].c1 = HF2::Base::zero();
    if (i % 11 == 0) a[i] = HF2::zero();
    if (i % 13 == 0) b[i] = a[i];
    if (i % 17 == 0) b[i] = -a[i];
    if (i % 19 == 0) a[i].c0 = HF2::Base::zero() - HF2::Base::one();
  }
  std::vector<DF> prod[2], sq[2], sum[2], diff[2];
  std::vector<int> zero[2], equal[2];
  run_pair([&](int lane) {
    for (int i = 0; i < n; i++) {
      const PF x = half(a[i], lane), y = half(b[i], lane);
      prod[lane].push_back((x * y).v);
      sq[lane].push_back(x.sqr().v);
      sum[lane].push_back((x + y).v);
      diff[lane].push_back((x - y).v);
      zero[lane].push_back((x - y).is_zero());
      equal[lane].push_back(x == y);
    }
  });
  int bad = 0;
  auto whole = [&](const std::vector<DF>* v, int i) { return same_bytes<HF2>(DF2{v[0][i], v[1][i]}); };
  for (int i = 0; i < n; i++) {
    const DF2 da = same_bytes<DF2>(a[i]), db = same_bytes<DF2>(b[i]);
    bad += !(whole(prod, i) == same_bytes<HF2>(da * db)) + !(whole(prod, i) == a[i] * b[i]);
    bad += !(whole(sq, i) == a[i].sqr()) + !(whole(sum, i) == a[i] + b[i]) + !(whole(diff, i) == a[i] - b[i]);
    bad += (zero[0][i] != zero[1][i]) + (zero[0][i] != (a[i] - b[i]).is_zero());
    bad += (equal[0][i] != equal[1][i]) + (equal[0][i] != (a[i] == b[i]));
  }
  CHECK(bad == 0);
  // Points: the one-thread device XYZZ walk fixes the sequence (with its special cases), the pair
  // repeats it.
  std::vector<GA> pts;
  std::vector<GX> after_add, after_dbl, after_full;
  GX acc = GX::infinity();
  DX dacc = same_bytes<DX>(acc);
  for (int it = 0; it < 60; it++) {
    uint64_t k[4];
    for (auto& w : k) w = rng();
    GA p = curve::scalar_mul(g, k, 4).to_affine();
    if (it % 17 == 0) p = GA::infinity();
    if (it % 13 == 0) p = same_bytes<GX>(dacc).to_affine();
    if (it % 19 == 0) p = -same_bytes<GX>(dacc).to_affine();
    pts.push_back(p);
    dacc = dacc.add_affine(same_bytes<curve::Affine<typename DX::Field>>(p));
    after_add.push_back(same_bytes<GX>(dacc));
    after_dbl.push_back(same_bytes<GX>(dacc.dbl()));
    after_full.push_back(same_bytes<GX>(dacc.dbl().add(dacc)));
  }
  std::vector<PX> lanes_add[2], lanes_dbl[2], lanes_full[2];
  run_pair([&](int lane) {
    PX pacc = PX::infinity();
    for (const GA& p : pts) {
      pacc = pacc.add_affine(half_a(p, lane));
      lanes_add[lane].push_back(pacc);
      const PX d = pacc.dbl();
      lanes_dbl[lane].push_back(d);
      lanes_full[lane].push_back(d.add(pacc));
    }
  });
  auto joined = [&](const std::vector<PX>* v, size_t i) {
    auto c = [&](PF PX::*f) { return DF2{(v[0][i].*f).v, (v[1][i].*f).v}; };
    return same_bytes<GX>(curve::Xyzz<DF2>{c(&PX::X), c(&PX::Y), c(&PX::ZZ), c(&PX::ZZZ)});
  };
  for (size_t i = 0; i < pts.size(); i++) {
    const GX add = joined(lanes_add, i), dbl = joined(lanes_dbl, i), full = joined(lanes_full, i);
    bad += std::memcmp(&after_add[i], &add, sizeof(GX)) != 0;
    bad += std::memcmp(&after_dbl[i], &dbl, sizeof(GX)) != 0;
    bad += std::memcmp(&after_full[i], &full, sizeof(GX)) != 0;
  }
  CHECK(bad == 0);
  CHECK(pts.size() == 60);
}

}  // namespace

int main() {
  using B = cuda::DeviceCurve<curve::Bn254>;
  using L = cuda::DeviceCurve<curve::Bls12381>;
  check_field<curve::Bn254::Fq, B::Fq>();
  check_field<curve::Bn254::Fr, B::Fr>();
  check_field<curve::Bls12381::Fq, L::Fq>();
  check_field<curve::Bls12381::Fr, L::Fr>();
  check_curve<curve::Bn254::G1, curve::Bn254::G1x, B::G1, B::G1x>(curve::Bn254::g1_generator());
  check_curve<curve::Bn254::G2, curve::Bn254::G2x, B::G2, B::G2x>(curve::Bn254::g2_generator());
  check_curve<curve::Bls12381::G1, curve::Bls12381::G1x, L::G1, L::G1x>(curve::Bls12381::g1_generator());
  check_curve<curve::Bls12381::G2, curve::Bls12381::G2x, L::G2, L::G2x>(curve::Bls12381::g2_generator());
  check_pair<curve::Bn254::Fq2, B::Fq2, curve::Bn254::G2, curve::Bn254::G2x, B::G2x>(curve::Bn254::g2_generator());
  check_pair<curve::Bls12381::Fq2, L::Fq2, curve::Bls12381::G2, curve::Bls12381::G2x, L::G2x>(
      curve::Bls12381::g2_generator());
  return cuzk_test::finish("cuda_field_test");
}
