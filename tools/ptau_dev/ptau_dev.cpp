// ptau-dev: writes a phase-2-prepared powers-of-tau file (.ptau) from fresh random toxic waste, for
// tests and benchmarks only. The file has the shape of `snarkjs powersoftau new` + one
// `contribute` + `prepare phase2` (formats.md 4; snarkjs powersoftau_new.js, _contribute.js,
// _preparephase2.js): sections 1-7 and 12-15 in that order, points in key encoding (Montgomery
// LE affine). snarkjs's own route takes minutes per power at 2^14 on two cores because
// prepare phase2 runs FFTs over group elements; here every point is a fixed-base product of a
// generator with a scalar computed in Fr, which is embarrassingly parallel.
//
// INSECURE BY CONSTRUCTION: one process knows tau, alpha and beta (it drops them on exit, but
// nothing proves that). Anyone holding them can forge proofs for every key built on the file.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "blake2b.hpp"
#include "curve/curves.hpp"
#include "curve/ops.hpp"
#include "setup/fixed_base.hpp"  // the same tables the development setup uses
#include "setup/random.hpp"      // and the same OS-CSPRNG scalars
#include "snarkjs_compat.hpp"
#include "util/thread_pool.hpp"

namespace ptau_dev {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Points per block when streaming a section: bounds memory to a few MiB whatever the power.
constexpr size_t kBlock = 1 << 15;

template <class Fr>
Fr root_of_unity(int log_n) {  // ffjavascript's Fr.w[log_n]
  Fr w = Fr::from_raw(Fr::Params::ROOT_OF_UNITY);
  for (int i = log_n; i < Fr::Params::TWO_ADICITY; i++) w = w.sqr();
  return w;
}

class Output {
 public:
  explicit Output(const std::string& path) : path_(path) {
    f_ = std::fopen(path.c_str(), "wb");
    if (!f_) throw std::runtime_error("cannot open " + path + " for writing");
  }
  ~Output() { if (f_) std::fclose(f_); }
  void bytes(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f_) != n) throw std::runtime_error("write failed: " + path_);
    pos_ += n;
  }
  void u32(uint32_t v) { bytes(&v, 4); }  // the container is little-endian, as is x86-64
  void u64(uint64_t v) { bytes(&v, 8); }
  void section(uint32_t id, uint64_t size) { u32(id); u64(size); }
  uint64_t pos() const { return pos_; }
  void flush() { if (std::fflush(f_) != 0) throw std::runtime_error("write failed: " + path_); }
  void close() {
    if (std::fclose(f_) != 0) { f_ = nullptr; throw std::runtime_error("write failed: " + path_); }
    f_ = nullptr;
  }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  uint64_t pos_ = 0;
};

template <class C>
class Writer {
  using Fr = typename C::Fr;
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  using G1 = typename C::G1;
  using G2 = typename C::G2;
  static constexpr size_t kG1 = C::G1_BYTES, kG2 = C::G2_BYTES;
  static constexpr int kScalarBits = Fr::Params::BITS;

 public:
  Writer(int power, cuzk::ThreadPool& pool) : power_(power), m_((size_t)1 << power), pool_(pool) {}

  void run(const std::string& path) {
    auto t0 = Clock::now();
    draw_toxic_waste();
    // Every point of the file is a multiple of one of the two generators.
    const size_t n_g1 = (2 * m_ - 1) + 2 * m_ + (4 * m_ - 1) + 2 * (2 * m_ - 1);
    const size_t n_g2 = m_ + 1 + (2 * m_ - 1);
    cuzk::setup::FixedBaseTable<Fq> g1(C::g1_generator(), kScalarBits, n_g1, pool_);
    cuzk::setup::FixedBaseTable<Fq2> g2(C::g2_generator(), kScalarBits, n_g2, pool_);
    g1_ = &g1;
    g2_ = &g2;
    t_tables_ = seconds_since(t0);

    Output out(path);
    out.bytes("ptau", 4);
    out.u32(1);   // version
    out.u32(11);  // sections 1-7 and 12-15, as prepare phase2 writes them
    write_header(out);

    auto t1 = Clock::now();
    write_powers(out);
    t_powers_ = seconds_since(t1);

    auto t2 = Clock::now();
    out.flush();
    write_contribution(out, path);
    t_contribution_ = seconds_since(t2);

    auto t3 = Clock::now();
    write_lagrange(out);
    t_lagrange_ = seconds_since(t3);
    out.close();
    t_total_ = seconds_since(t0);
  }

  void report(const char* curve) const {
    std::fprintf(stderr,
                 "ptau-dev: %s power %d written in %.2f s (tables %.2f, powers %.2f, contribution record %.2f, "
                 "lagrange %.2f; G1 window %d bits, G2 %d bits, %u threads)\n",
                 curve, power_, t_total_, t_tables_, t_powers_, t_contribution_, t_lagrange_, g1_w_, g2_w_,
                 pool_.size());
  }

 private:
  void draw_toxic_waste() {
    const Fr one = Fr::one();
    for (;;) {
      tau_ = cuzk::setup::random_nonzero<Fr>();
      // tau must not be one of the roots of unity the Lagrange bases are evaluated at.
      Fr t = tau_;
      for (int i = 0; i <= power_; i++) t = t.sqr();  // tau^(2m)
      if (t != one) break;
    }
    alpha_ = cuzk::setup::random_nonzero<Fr>();
    beta_ = cuzk::setup::random_nonzero<Fr>();
    powers_.resize(2 * m_ + 1);  // tau^0 .. tau^(2m)
    powers_[0] = one;
    for (size_t i = 1; i <= 2 * m_; i++) powers_[i] = powers_[i - 1] * tau_;
  }

  void write_header(Output& out) {
    out.section(1, 4 + Fq::BYTES + 4 + 4);
    out.u32((uint32_t)Fq::BYTES);
    out.bytes(Fq::Params::MODULUS, Fq::BYTES);  // LE limbs = LE bytes
    out.u32((uint32_t)power_);
    out.u32((uint32_t)power_);  // ceremony power
  }

  // scalars[i] * G for i < n, streamed to the file in blocks; `each` sees every block too.
  template <class Table, class Each>
  void emit(const Table& table, const Fr* scalars, size_t n, size_t point_bytes, Output& out, Each&& each) {
    std::vector<uint8_t> buf(std::min(n, kBlock) * point_bytes);
    for (size_t b = 0; b < n; b += kBlock) {
      size_t cnt = std::min(kBlock, n - b);
      table.mul_many(scalars + b, cnt, buf.data(), pool_);
      out.bytes(buf.data(), cnt * point_bytes);
      each(buf.data(), cnt);
    }
  }

  // Feeds the compressed encodings of a block to the response hash (snarkjs contribute hashes
  // batchLEMtoC of every section it writes).
  template <class F>
  void hash_compressed(Blake2b& h, const uint8_t* pts, size_t n) {
    std::vector<uint8_t> enc(n * F::BYTES);
    pool_.parallel_range(n, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; i++)
        encode_compressed(cuzk::curve::load_key_point<F>(pts + i * 2 * F::BYTES), enc.data() + i * F::BYTES);
    }, 1024);
    h.update(enc.data(), enc.size());
  }

  // Sections 2-6: tau^i G1 (2m-1), tau^i G2 (m), alpha tau^i G1 (m), beta tau^i G1 (m), beta G2.
  void write_powers(Output& out) {
    response_.update(first_challenge(), 64);
    auto g1_hash = [&](const uint8_t* p, size_t n) { hash_compressed<Fq>(response_, p, n); };
    auto g2_hash = [&](const uint8_t* p, size_t n) { hash_compressed<Fq2>(response_, p, n); };
    section_offset_[2] = out.pos() + 12;
    out.section(2, (2 * m_ - 1) * kG1);
    emit(*g1_, powers_.data(), 2 * m_ - 1, kG1, out, g1_hash);

    section_offset_[3] = out.pos() + 12;
    out.section(3, m_ * kG2);
    emit(*g2_, powers_.data(), m_, kG2, out, g2_hash);

    std::vector<Fr> scaled(m_);
    for (int s = 4; s <= 5; s++) {
      const Fr& k = s == 4 ? alpha_ : beta_;
      pool_.parallel_range(m_, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; i++) scaled[i] = powers_[i] * k;
      }, 4096);
      section_offset_[s] = out.pos() + 12;
      out.section(s, m_ * kG1);
      emit(*g1_, scaled.data(), m_, kG1, out, g1_hash);
    }

    section_offset_[6] = out.pos() + 12;
    out.section(6, kG2);
    emit(*g2_, &beta_, 1, kG2, out, g2_hash);
    g1_w_ = g1_->window_bits();
    g2_w_ = g2_->window_bits();
  }

  // snarkjs powersoftau_utils.js calculateFirstChallengeHash: blake2b over the blank
  // accumulator (every point a generator) in uncompressed encoding, after blake2b("").
  const uint8_t* first_challenge() {
    Blake2b h;
    uint8_t empty[64];
    blake2b_512(nullptr, 0, empty);
    h.update(empty, 64);
    uint8_t g1u[kG1], g2u[kG2];
    encode_uncompressed(C::g1_generator(), g1u);
    encode_uncompressed(C::g2_generator(), g2u);
    auto repeat = [&](const uint8_t* p, size_t len, size_t n) {
      std::vector<uint8_t> run(len * 4096);
      for (size_t i = 0; i < 4096; i++) std::memcpy(run.data() + i * len, p, len);
      for (size_t i = 0; i < n; i += 4096) h.update(run.data(), len * std::min<size_t>(4096, n - i));
    };
    repeat(g1u, kG1, 2 * m_ - 1);
    repeat(g2u, kG2, m_);
    repeat(g1u, kG1, m_);
    repeat(g1u, kG1, m_);
    h.update(g2u, kG2);
    h.final(first_challenge_);
    return first_challenge_;
  }

  G1 g1_mul(const Fr& k) { uint64_t l[Fr::N]; k.to_std_limbs(l); return g1_->mul(l, Fr::N); }
  G2 g2_mul(const Fr& k) { uint64_t l[Fr::N]; k.to_std_limbs(l); return g2_->mul(l, Fr::N); }

  // One element of the contribution's public key (snarkjs keypair.js calculatePubKey): a random
  // G1 point s, s*x, and x times hashToG2(personalization, challenge, s, s*x), which proves
  // knowledge of x to the verifier's pairing check.
  struct KeyPart { G1 g1_s, g1_sx; G2 g2_spx; };
  KeyPart key_part(uint8_t personalization, const Fr& x) {
    KeyPart k;
    Fr s = cuzk::setup::random_nonzero<Fr>();
    k.g1_s = g1_mul(s);
    k.g1_sx = g1_mul(s * x);
    Blake2b h;
    h.update(&personalization, 1);
    h.update(first_challenge_, 64);
    uint8_t u[kG1];
    encode_uncompressed(k.g1_s, u);
    h.update(u, kG1);
    encode_uncompressed(k.g1_sx, u);
    h.update(u, kG1);
    uint8_t digest[64];
    h.final(digest);
    G2 sp = hash_to_g2<C>(digest);
    uint64_t xl[Fr::N];
    x.to_std_limbs(xl);
    k.g2_spx = cuzk::curve::scalar_mul(sp, xl, Fr::N).to_affine();
    return k;
  }

  // Section 7: one contribution record, as `powersoftau contribute` would have written it
  // (snarkjs powersoftau_utils.js writeContribution), so `powersoftau verify` can check the file.
  void write_contribution(Output& out, const std::string& path) {
    KeyPart kt = key_part(0, tau_), ka = key_part(1, alpha_), kb = key_part(2, beta_);
    const G1* key_g1[6] = {&kt.g1_s, &kt.g1_sx, &ka.g1_s, &ka.g1_sx, &kb.g1_s, &kb.g1_sx};
    const G2* key_g2[3] = {&kt.g2_spx, &ka.g2_spx, &kb.g2_spx};

    // Response hash: challenge, compressed sections (already fed), then the key uncompressed.
    uint8_t partial[Blake2b::kPartialBytes];
    response_.export_partial(partial);
    for (const G1* p : key_g1) { uint8_t u[kG1]; encode_uncompressed(*p, u); response_.update(u, kG1); }
    for (const G2* p : key_g2) { uint8_t u[kG2]; encode_uncompressed(*p, u); response_.update(u, kG2); }
    uint8_t response_hash[64];
    response_.final(response_hash);

    // Next challenge: the response hash, then every point of sections 2-6 uncompressed, read
    // back from the file just written.
    Blake2b next;
    next.update(response_hash, 64);
    hash_sections_uncompressed(next, path);
    uint8_t next_challenge[64];
    next.final(next_challenge);

    static const char kName[] = "ptau-dev INSECURE test setup";
    std::vector<uint8_t> rec;
    auto put = [&](const void* p, size_t n) { rec.insert(rec.end(), (const uint8_t*)p, (const uint8_t*)p + n); };
    auto put_g1 = [&](const G1& p) { uint8_t b[kG1]; cuzk::curve::store_key_point(p, b); put(b, kG1); };
    auto put_g2 = [&](const G2& p) { uint8_t b[kG2]; cuzk::curve::store_key_point(p, b); put(b, kG2); };
    uint32_t n_contributions = 1;
    put(&n_contributions, 4);
    put_g1(g1_mul(tau_));
    put_g2(g2_mul(tau_));
    put_g1(g1_mul(alpha_));
    put_g1(g1_mul(beta_));
    put_g2(g2_mul(beta_));
    for (const G1* p : key_g1) put_g1(*p);
    for (const G2* p : key_g2) put_g2(*p);
    put(partial, sizeof partial);
    put(next_challenge, 64);
    uint32_t type = 0;  // a contribution, not a beacon
    put(&type, 4);
    uint32_t params_len = 2 + (uint32_t)(sizeof kName - 1);
    put(&params_len, 4);
    uint8_t name_hdr[2] = {1, (uint8_t)(sizeof kName - 1)};  // param 1 = name
    put(name_hdr, 2);
    put(kName, sizeof kName - 1);

    out.section(7, rec.size());
    out.bytes(rec.data(), rec.size());
  }

  void hash_sections_uncompressed(Blake2b& h, const std::string& path) {
    std::FILE* in = std::fopen(path.c_str(), "rb");
    if (!in) throw std::runtime_error("cannot reopen " + path);
    const size_t counts[7] = {0, 0, 2 * m_ - 1, m_, m_, m_, 1};
    std::vector<uint8_t> buf, enc;
    for (int s = 2; s <= 6; s++) {
      bool is_g2 = s == 3 || s == 6;
      size_t pb = is_g2 ? kG2 : kG1;
      if (fseeko(in, (off_t)section_offset_[s], SEEK_SET) != 0) throw std::runtime_error("seek failed");
      for (size_t b = 0; b < counts[s]; b += kBlock) {
        size_t cnt = std::min(kBlock, counts[s] - b);
        buf.resize(cnt * pb);
        enc.resize(cnt * pb);
        if (std::fread(buf.data(), 1, buf.size(), in) != buf.size()) throw std::runtime_error("short read");
        pool_.parallel_range(cnt, [&](size_t lo, size_t hi) {
          for (size_t i = lo; i < hi; i++) {
            if (is_g2) encode_uncompressed(cuzk::curve::load_key_point<Fq2>(&buf[i * pb]), &enc[i * pb]);
            else encode_uncompressed(cuzk::curve::load_key_point<Fq>(&buf[i * pb]), &enc[i * pb]);
          }
        }, 1024);
        h.update(enc.data(), enc.size());
      }
    }
    std::fclose(in);
  }

  // Sections 12-15: for every size n = 2^k, k = 0..power (and power+1 for tauG1), the points
  // L_i(tau)*G, i < n, where L_i is the Lagrange basis on <w_n>, w_n = Fr.w[k]:
  //   L_i(tau) = (tau^n - 1) w_n^i / (n (tau - w_n^i)).
  // prepare phase2 computes the same points as an inverse FFT of the tau^j G; at k = power+1
  // that input has only 2m-1 powers (the last slot is zero), which removes the j = n-1 term:
  //   L'_i = L_i(tau) - tau^(n-1) w_n^i / n   (w_n^(-i(n-1)) = w_n^i).
  void write_lagrange(Output& out) {
    const size_t top = 2 * m_;                   // the largest size, 2^(power+1)
    const size_t total = 2 * top - 1;            // all sizes 1..top back to back
    std::vector<Fr> w_pow(top);                  // w_top^j
    {
      Fr w = root_of_unity<Fr>(power_ + 1);
      w_pow[0] = Fr::one();
      for (size_t j = 1; j < top; j++) w_pow[j] = w_pow[j - 1] * w;
    }
    std::vector<Fr> lag(total), scratch(total);
    for (int k = 0; k <= power_ + 1; k++) {
      size_t n = (size_t)1 << k, off = n - 1, stride = top / n;
      for (size_t i = 0; i < n; i++) lag[off + i] = tau_ - w_pow[i * stride];
    }
    // Montgomery's trick per chunk: one inversion each, and the chunks run in parallel.
    pool_.parallel_range(total, [&](size_t b, size_t e) {
      cuzk::field::batch_inverse(lag.data() + b, e - b, scratch.data() + b);
    }, 4096, 1);
    for (int k = 0; k <= power_ + 1; k++) {
      size_t n = (size_t)1 << k, off = n - 1, stride = top / n;
      Fr n_inv = Fr::from_u64(n).inverse();
      Fr c = (powers_[n] - Fr::one()) * n_inv;
      Fr drop = k == power_ + 1 ? powers_[n - 1] * n_inv : Fr::zero();
      pool_.parallel_range(n, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; i++) {
          const Fr& w = w_pow[i * stride];
          lag[off + i] = c * w * lag[off + i] - drop * w;
        }
      }, 4096);
    }

    auto none = [](const uint8_t*, size_t) {};
    out.section(12, total * kG1);
    emit(*g1_, lag.data(), total, kG1, out, none);
    const size_t below_top = top - 1;  // sizes 1..m for the other three sections
    out.section(13, below_top * kG2);
    emit(*g2_, lag.data(), below_top, kG2, out, none);
    std::vector<Fr>& scaled = scratch;
    for (int s = 14; s <= 15; s++) {
      const Fr& k = s == 14 ? alpha_ : beta_;
      pool_.parallel_range(below_top, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; i++) scaled[i] = lag[i] * k;
      }, 4096);
      out.section(s, below_top * kG1);
      emit(*g1_, scaled.data(), below_top, kG1, out, none);
    }
  }

  int power_;
  size_t m_;
  cuzk::ThreadPool& pool_;
  Fr tau_, alpha_, beta_;
  std::vector<Fr> powers_;
  const cuzk::setup::FixedBaseTable<Fq>* g1_ = nullptr;
  const cuzk::setup::FixedBaseTable<Fq2>* g2_ = nullptr;
  Blake2b response_;
  uint8_t first_challenge_[64];
  uint64_t section_offset_[7] = {};
  int g1_w_ = 0, g2_w_ = 0;
  double t_tables_ = 0, t_powers_ = 0, t_contribution_ = 0, t_lagrange_ = 0, t_total_ = 0;
};

const char kWarning[] =
    "\n"
    "  ************************************************************************\n"
    "  *  ptau-dev: INSECURE powers of tau, FOR TESTING AND BENCHMARKS ONLY.  *\n"
    "  *  The toxic waste (tau, alpha, beta) was drawn by this one process.   *\n"
    "  *  Nothing proves it was destroyed: whoever could read this process's  *\n"
    "  *  memory can forge proofs for every key built on this file. Never use *\n"
    "  *  it (or keys made from it) to protect anything of value.             *\n"
    "  ************************************************************************\n\n";

int usage() {
  std::fprintf(stderr,
               "usage: ptau-dev <bn254|bls12_381> <power> <out.ptau>\n"
               "  Writes an INSECURE phase-2-prepared .ptau (snarkjs format) for domains up to 2^power.\n"
               "  PTAU_DEV_THREADS=n limits the worker threads (default: every core).\n");
  return 2;
}

}  // namespace
}  // namespace ptau_dev

int main(int argc, char** argv) {
  using namespace ptau_dev;
  if (argc != 4) return usage();
  std::string curve = argv[1];
  if (curve == "bn128") curve = "bn254";
  if (curve == "bls12381") curve = "bls12_381";
  char* end = nullptr;
  long power = std::strtol(argv[2], &end, 10);
  // power + 1 must stay within the 2-adicity of Fr (28 on BN254) so every size is a plain
  // power-of-two domain, as in prepare phase2's ifft branch.
  if (!end || *end || power < 1 || power > 27) {
    std::fprintf(stderr, "ptau-dev: power must be an integer in 1..27\n");
    return usage();
  }
  if (curve != "bn254" && curve != "bls12_381") return usage();
  std::string out = argv[3];
  std::string tmp = out + ".tmp." + std::to_string(getpid());

  std::fputs(kWarning, stderr);
  unsigned threads = 0;
  if (const char* t = std::getenv("PTAU_DEV_THREADS")) threads = (unsigned)std::atoi(t);
  try {
    cuzk::ThreadPool pool(threads);
    if (curve == "bn254") {
      Writer<cuzk::curve::Bn254> w((int)power, pool);
      w.run(tmp);
      w.report("bn254");
    } else {
      Writer<cuzk::curve::Bls12381> w((int)power, pool);
      w.run(tmp);
      w.report("bls12_381");
    }
    if (std::rename(tmp.c_str(), out.c_str()) != 0) throw std::runtime_error("cannot rename to " + out);
  } catch (const std::exception& e) {
    std::remove(tmp.c_str());
    std::fprintf(stderr, "ptau-dev: %s\n", e.what());
    return 1;
  }
  return 0;
}
