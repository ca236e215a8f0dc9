#include "setup/synth.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "curve/curves.hpp"
#include "formats/primes.hpp"
#include "setup/random.hpp"

namespace cuzk::setup {
namespace {

constexpr uint32_t kMaxConstraints = 1u << 30;  // wires stay below 2^32
constexpr uint32_t kPorepInputBits = 256;       // private inputs of the porep profile, all bits
constexpr uint32_t kUniformInputs = 16;         // private inputs of the uniform profile, full width
constexpr uint32_t kFrBytes = 32;

// The kinds of rows. The porep rows are the bit gadgets SHA-256-style circuits are made of; their
// mix (3 XOR, 1 AND, 1 PACK8 in every 5 rows) gives exactly 2.4 / 1.0 / 2.2 terms per row in A/B/C.
enum class Gadget {
  PublicCopy,  // pub * 1 = out                        (1, 1, 1); binds each public input
  Xor,         // (2x) * y = x + y - out, out = x ^ y  (1, 1, 3)
  And,         // x * y = out                          (1, 1, 1)
  Pack8,       // (sum 2^i b_i) * 1 = out              (8, 1, 1); a byte from 8 bits
  Uniform,     // (r1 u + r2 v) * (r3 x + r4 y) = r5 z + r6 out, random full-width r_i (2, 2, 2)
};

struct Terms {
  uint32_t a, b, c;
};

Terms terms_of(Gadget g) {
  switch (g) {
    case Gadget::PublicCopy: return {1, 1, 1};
    case Gadget::Xor: return {1, 1, 3};
    case Gadget::And: return {1, 1, 1};
    case Gadget::Pack8: return {8, 1, 1};
    case Gadget::Uniform: return {2, 2, 2};
  }
  return {0, 0, 0};
}

Gadget gadget_of(const SynthParams& p, uint32_t row) {
  if (row < p.n_public) return Gadget::PublicCopy;
  if (p.profile == CUZK_SYNTH_UNIFORM) return Gadget::Uniform;
  switch ((row - p.n_public) % 5) {
    case 0:
    case 1:
    case 2: return Gadget::Xor;
    case 3: return Gadget::And;
    default: return Gadget::Pack8;
  }
}

uint64_t row_bytes(Terms t) { return 12 + (uint64_t)(t.a + t.b + t.c) * (4 + kFrBytes); }

const formats::CurvePrimes* curve_primes(uint32_t curve) {
  for (const auto& c : formats::kSupportedCurves)
    if ((uint32_t)c.curve == curve) return &c;
  return nullptr;
}

template <class Fr>
class Generator {
 public:
  Generator(const SynthParams& p, const SynthShape& s, ByteSink& r1cs, ByteSink& wtns)
      : p_(p), s_(s), r1cs_(r1cs), wtns_(wtns), rng_(p.seed), prime_(curve_primes(p.curve)->r) {}

  void run() {
    const uint32_t first_private = 1 + p_.n_public;
    const uint32_t first_output = first_private + s_.n_prv_in;
    w_.resize(s_.n_wires);
    w_[0] = Fr::one();
    for (uint32_t i = 1; i < first_private; i++) w_[i] = rng_.template field<Fr>();
    const bool porep = p_.profile == CUZK_SYNTH_POREP;
    for (uint32_t i = first_private; i < first_output; i++) {
      w_[i] = porep ? ((rng_.next() & 1) ? Fr::one() : Fr::zero()) : rng_.template field<Fr>();
      if (porep) bits_.push_back(i);
    }
    // The output coefficient of a uniform row comes from a small table so that solving for the
    // output costs a product, not an inversion per row.
    for (int k = 0; k < 16; k++) {
      out_coef_[k] = rng_.template nonzero_field<Fr>();
      out_coef_inv_[k] = out_coef_[k].inverse();
    }
    two_ = Fr::from_u64(2);
    minus_one_ = -Fr::one();

    write_r1cs_header();
    for (uint32_t row = 0; row < p_.n_constraints; row++) make_row(row, first_output + row);
    write_labels();
    write_wtns();
  }

 private:
  struct Term {
    uint32_t wire;
    Fr coef;
  };

  void write_r1cs_header() {
    r1cs_.write("r1cs", 4);
    r1cs_.u32(1);  // version
    r1cs_.u32(3);  // sections: header, constraints, wire labels
    r1cs_.section(1, 4 + kFrBytes + 4 * 4 + 8 + 4);
    r1cs_.u32(kFrBytes);
    r1cs_.write(prime_, kFrBytes);
    r1cs_.u32(s_.n_wires);
    r1cs_.u32(0);             // public outputs
    r1cs_.u32(p_.n_public);   // public inputs
    r1cs_.u32(s_.n_prv_in);   // private inputs
    r1cs_.u64(s_.n_wires);    // labels: one per wire
    r1cs_.u32(p_.n_constraints);
    r1cs_.section(2, s_.constraints_bytes);
  }

  void write_labels() {
    r1cs_.section(3, 8ull * s_.n_wires);
    std::vector<uint64_t> block;
    for (uint64_t w = 0; w < s_.n_wires;) {
      block.clear();
      for (; w < s_.n_wires && block.size() < 8192; w++) block.push_back(w);
      r1cs_.write(block.data(), block.size() * 8);
    }
  }

  void write_wtns() {
    wtns_.write("wtns", 4);
    wtns_.u32(2);  // version
    wtns_.u32(2);  // sections
    wtns_.section(1, 4 + kFrBytes + 4);
    wtns_.u32(kFrBytes);
    wtns_.write(prime_, kFrBytes);
    wtns_.u32(s_.n_wires);
    wtns_.section(2, (uint64_t)kFrBytes * s_.n_wires);
    std::vector<uint8_t> block;
    for (size_t i = 0; i < w_.size();) {
      size_t n = std::min<size_t>(8192, w_.size() - i);
      block.resize(n * kFrBytes);
      for (size_t k = 0; k < n; k++) w_[i + k].to_bytes_std(&block[k * kFrBytes]);
      wtns_.write(block.data(), block.size());
      i += n;
    }
  }

  // `count` distinct bit wires (porep), or distinct wires below `limit` (uniform).
  void pick_distinct(uint32_t count, uint32_t limit, bool from_bits, uint32_t* out) {
    for (uint32_t k = 0; k < count; k++) {
      for (;;) {
        uint32_t cand = from_bits ? bits_[rng_.below((uint32_t)bits_.size())] : rng_.below(limit);
        bool dup = false;
        for (uint32_t j = 0; j < k; j++) dup |= out[j] == cand;
        if (!dup) { out[k] = cand; break; }
      }
    }
  }

  void make_row(uint32_t row, uint32_t out_wire) {
    a_.clear();
    b_.clear();
    c_.clear();
    Fr out_coef_inv = Fr::one();
    const Fr one = Fr::one();
    uint32_t pick[8];
    const Gadget g = gadget_of(p_, row);
    switch (g) {
      case Gadget::PublicCopy:
        a_.push_back({1 + row, one});
        b_.push_back({0, one});
        c_.push_back({out_wire, one});
        break;
      case Gadget::Xor:
        pick_distinct(2, 0, true, pick);
        a_.push_back({pick[0], two_});
        b_.push_back({pick[1], one});
        c_.push_back({pick[0], one});
        c_.push_back({pick[1], one});
        c_.push_back({out_wire, minus_one_});
        out_coef_inv = minus_one_;
        break;
      case Gadget::And:
        pick_distinct(2, 0, true, pick);
        a_.push_back({pick[0], one});
        b_.push_back({pick[1], one});
        c_.push_back({out_wire, one});
        break;
      case Gadget::Pack8: {
        pick_distinct(8, 0, true, pick);
        Fr coef = one;
        for (int i = 0; i < 8; i++) {
          a_.push_back({pick[i], coef});
          coef = coef + coef;
        }
        b_.push_back({0, one});
        c_.push_back({out_wire, one});
        break;
      }
      case Gadget::Uniform: {
        pick_distinct(2, out_wire, false, pick);
        a_.push_back({pick[0], rng_.template nonzero_field<Fr>()});
        a_.push_back({pick[1], rng_.template nonzero_field<Fr>()});
        pick_distinct(2, out_wire, false, pick);
        b_.push_back({pick[0], rng_.template nonzero_field<Fr>()});
        b_.push_back({pick[1], rng_.template nonzero_field<Fr>()});
        c_.push_back({rng_.below(out_wire), rng_.template nonzero_field<Fr>()});
        uint32_t k = rng_.below(16);
        c_.push_back({out_wire, out_coef_[k]});
        out_coef_inv = out_coef_inv_[k];
        break;
      }
    }
    // Solve (A.w)(B.w) = (C.w) for the output, the last term of C.
    Fr rest = Fr::zero();
    for (size_t i = 0; i + 1 < c_.size(); i++) rest += c_[i].coef * w_[c_[i].wire];
    w_[out_wire] = (eval(a_) * eval(b_) - rest) * out_coef_inv;
    if (g == Gadget::Xor || g == Gadget::And) bits_.push_back(out_wire);

    buf_.clear();
    put_lc(a_);
    put_lc(b_);
    put_lc(c_);
    r1cs_.write(buf_.data(), buf_.size());
  }

  Fr eval(const std::vector<Term>& lc) const {
    Fr acc = Fr::zero();
    for (const Term& t : lc) acc += t.coef * w_[t.wire];
    return acc;
  }

  void put_lc(const std::vector<Term>& lc) {
    size_t at = buf_.size();
    buf_.resize(at + 4 + lc.size() * (4 + kFrBytes));
    uint8_t* p = buf_.data() + at;
    uint32_t n = (uint32_t)lc.size();
    std::memcpy(p, &n, 4);
    p += 4;
    for (const Term& t : lc) {
      std::memcpy(p, &t.wire, 4);
      t.coef.to_bytes_std(p + 4);
      p += 4 + kFrBytes;
    }
  }

  const SynthParams& p_;
  const SynthShape& s_;
  ByteSink& r1cs_;
  ByteSink& wtns_;
  SeededRng rng_;
  const uint8_t* prime_;
  std::vector<Fr> w_;
  std::vector<uint32_t> bits_;
  std::vector<Term> a_, b_, c_;
  std::vector<uint8_t> buf_;
  Fr out_coef_[16], out_coef_inv_[16];
  Fr two_, minus_one_;
};

}  // namespace

formats::Status synth_shape(const SynthParams& p, SynthShape& out, std::string& err) {
  out = SynthShape{};
  if (!curve_primes(p.curve)) return formats::fail(err, CUZK_ERR_INVALID_ARGUMENT, "unknown curve " + std::to_string(p.curve));
  if (p.profile != CUZK_SYNTH_UNIFORM && p.profile != CUZK_SYNTH_POREP) {
    return formats::fail(err, CUZK_ERR_INVALID_ARGUMENT,
                         "unknown profile " + std::to_string(p.profile) + " (CUZK_SYNTH_UNIFORM or CUZK_SYNTH_POREP)");
  }
  if (p.n_constraints == 0 || p.n_constraints > kMaxConstraints) {
    return formats::fail(err, CUZK_ERR_INVALID_ARGUMENT,
                         "n_constraints must be in 1..2^30, not " + std::to_string(p.n_constraints));
  }
  if (p.n_public > p.n_constraints) {
    return formats::fail(err, CUZK_ERR_INVALID_ARGUMENT,
                         "n_public (" + std::to_string(p.n_public) + ") cannot exceed n_constraints (" +
                             std::to_string(p.n_constraints) + "): each public input has a row of its own");
  }
  out.n_prv_in = p.profile == CUZK_SYNTH_POREP ? kPorepInputBits : kUniformInputs;
  out.n_wires = 1 + p.n_public + out.n_prv_in + p.n_constraints;
  // Rows by kind: the porep pattern repeats every 5 rows after the public ones.
  uint64_t constraints_bytes = 0;
  auto add_rows = [&](Gadget g, uint64_t rows) {
    Terms t = terms_of(g);
    out.n_terms[0] += rows * t.a;
    out.n_terms[1] += rows * t.b;
    out.n_terms[2] += rows * t.c;
    constraints_bytes += rows * row_bytes(t);
  };
  add_rows(Gadget::PublicCopy, p.n_public);
  const uint64_t rest = p.n_constraints - p.n_public;
  if (p.profile == CUZK_SYNTH_UNIFORM) {
    add_rows(Gadget::Uniform, rest);
  } else {
    auto count = [&](uint64_t t) { return rest / 5 + (t < rest % 5 ? 1 : 0); };
    add_rows(Gadget::Xor, count(0) + count(1) + count(2));
    add_rows(Gadget::And, count(3));
    add_rows(Gadget::Pack8, count(4));
  }
  out.constraints_bytes = constraints_bytes;
  out.r1cs_bytes = 12 + (12 + 64) + (12 + constraints_bytes) + (12 + 8ull * out.n_wires);
  out.wtns_bytes = 12 + (12 + 40) + (12 + (uint64_t)kFrBytes * out.n_wires);
  return CUZK_OK;
}

void synth_generate(const SynthParams& p, ByteSink& r1cs, ByteSink& wtns) {
  SynthShape shape;
  std::string err;
  if (synth_shape(p, shape, err) != CUZK_OK) throw std::invalid_argument(err);
  if (p.curve == CUZK_CURVE_BN254) Generator<curve::Bn254::Fr>(p, shape, r1cs, wtns).run();
  else Generator<curve::Bls12381::Fr>(p, shape, r1cs, wtns).run();
}

}  // namespace cuzk::setup
