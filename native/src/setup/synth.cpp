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

void write_r1cs_header(ByteSink& r1cs, const SynthParams& p, const SynthShape& s, const uint8_t* prime) {
  r1cs.write("r1cs", 4);
  r1cs.u32(1);  // version
  r1cs.u32(3);  // sections: header, constraints, wire labels
  r1cs.section(1, 4 + kFrBytes + 4 * 4 + 8 + 4);
  r1cs.u32(kFrBytes);
  r1cs.write(prime, kFrBytes);
  r1cs.u32(s.n_wires);
  r1cs.u32(0);            // public outputs
  r1cs.u32(p.n_public);   // public inputs
  r1cs.u32(s.n_prv_in);   // private inputs
  r1cs.u64(s.n_wires);    // labels: one per wire
  r1cs.u32(p.n_constraints);
  r1cs.section(2, s.constraints_bytes);
}

void write_labels(ByteSink& r1cs, uint32_t n_wires) {
  r1cs.section(3, 8ull * n_wires);
  std::vector<uint64_t> block;
  for (uint64_t w = 0; w < n_wires;) {
    block.clear();
    for (; w < n_wires && block.size() < 8192; w++) block.push_back(w);
    r1cs.write(block.data(), block.size() * 8);
  }
}

// The inputs of a witness other than the circuit's own (witness_seed != 0) come from their own
// stream; the circuit's stream still makes its draws for them, so the rows stay the same.
SeededRng inputs_rng(uint64_t witness_seed) { return SeededRng(witness_seed ^ 0x7769746e65737321ULL); }

// Writes the witness as a .wtns file, or (raw) only its values.
void write_wtns_header(ByteSink& wtns, const uint8_t* prime, uint32_t n_wires) {
  wtns.write("wtns", 4);
  wtns.u32(2);  // version
  wtns.u32(2);  // sections
  wtns.section(1, 4 + kFrBytes + 4);
  wtns.u32(kFrBytes);
  wtns.write(prime, kFrBytes);
  wtns.u32(n_wires);
  wtns.section(2, (uint64_t)kFrBytes * n_wires);
}

// What both generators start from: the parameters, the sinks, the circuit's random stream (the
// structure and, for witness seed 0, the inputs) and the wires' layout.
struct GeneratorBase {
  GeneratorBase(const SynthParams& p, const SynthShape& s, ByteSink* r1cs, ByteSink& wtns, const SynthWitness& witness)
      : p_(p), s_(s), r1cs_(r1cs), wtns_(wtns), witness_(witness), rng_(p.seed), prime_(curve_primes(p.curve)->r),
        first_private_(1 + p.n_public), first_output_(1 + p.n_public + s.n_prv_in), own_inputs_(inputs_rng(witness.seed)) {}

  const SynthParams& p_;
  const SynthShape& s_;
  ByteSink* r1cs_;  // NULL: the witness only
  ByteSink& wtns_;
  const SynthWitness& witness_;
  SeededRng rng_;
  const uint8_t* prime_;
  const uint32_t first_private_, first_output_;
  SeededRng own_inputs_;  // a witness seed's inputs (unused for seed 0)
};

// Any profile: each row solved in Fr (the uniform rows have random full-width coefficients).
template <class Fr>
class Generator : GeneratorBase {
 public:
  using GeneratorBase::GeneratorBase;

  void run() {
    auto input = [&](Fr drawn, bool bit) {  // the value the witness uses for a draw of the circuit's stream
      if (witness_.seed == 0) return drawn;
      if (bit) return (own_inputs_.next() & 1) ? Fr::one() : Fr::zero();
      return own_inputs_.template field<Fr>();
    };
    w_.resize(s_.n_wires);
    w_[0] = Fr::one();
    for (uint32_t i = 1; i < first_private_; i++) w_[i] = input(rng_.template field<Fr>(), false);
    const bool porep = p_.profile == CUZK_SYNTH_POREP;
    for (uint32_t i = first_private_; i < first_output_; i++) {
      w_[i] = porep ? input((rng_.next() & 1) ? Fr::one() : Fr::zero(), true) : input(rng_.template field<Fr>(), false);
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

    if (r1cs_) write_r1cs_header(*r1cs_, p_, s_, prime_);
    for (uint32_t row = 0; row < p_.n_constraints; row++) make_row(row, first_output_ + row);
    if (r1cs_) write_labels(*r1cs_, s_.n_wires);
    write_wtns();
  }

 private:
  struct Term {
    uint32_t wire;
    Fr coef;
  };

  void write_wtns() {
    if (!witness_.raw) write_wtns_header(wtns_, prime_, s_.n_wires);
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

    if (!r1cs_) return;
    buf_.clear();
    put_lc(a_);
    put_lc(b_);
    put_lc(c_);
    r1cs_->write(buf_.data(), buf_.size());
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

  std::vector<Fr> w_;
  std::vector<uint32_t> bits_;
  std::vector<Term> a_, b_, c_;
  std::vector<uint8_t> buf_;
  Fr out_coef_[16], out_coef_inv_[16];
  Fr two_, minus_one_;
};

// The porep profile, fast: every row is a bit gadget over bits, so each witness value is a bit or
// a byte (the values Generator's Fr solve gives: XOR x + y - 2xy, AND xy, PACK8 sum 2^i b_i, and
// the public copies), the coefficients' bytes are made once, and the values stream out in wire
// order. The same bytes as Generator for the same parameters (native/tests/dev_key_test.cpp).
template <class Fr>
class PorepGenerator : GeneratorBase {
 public:
  using GeneratorBase::GeneratorBase;

  void run() {
    if (!witness_.raw) write_wtns_header(wtns_, prime_, s_.n_wires);
    bit_.assign(s_.n_wires, 0);
    put_value(Fr::one());
    publics_.resize(p_.n_public);
    for (uint32_t i = 0; i < p_.n_public; i++) {
      const Fr drawn = rng_.template field<Fr>();
      publics_[i] = witness_.seed ? own_inputs_.template field<Fr>() : drawn;
      put_value(publics_[i]);
    }
    bits_.reserve((size_t)s_.n_prv_in + (size_t)p_.n_constraints / 5 * 4 + 4);
    for (uint32_t i = first_private_; i < first_output_; i++) {
      const uint8_t drawn = rng_.next() & 1;
      bit_[i] = witness_.seed ? (uint8_t)(own_inputs_.next() & 1) : drawn;
      put_small(bit_[i]);
      bits_.push_back(i);
    }
    for (int k = 0; k < 16; k++) (void)rng_.template nonzero_field<Fr>();  // Generator's uniform-row table

    Fr coef = Fr::one();
    for (int i = 0; i < 8; i++, coef = coef + coef) coef.to_bytes_std(pow2_[i]);
    Fr::one().to_bytes_std(one_);
    Fr::from_u64(2).to_bytes_std(two_);
    (-Fr::one()).to_bytes_std(minus_one_);

    if (r1cs_) write_r1cs_header(*r1cs_, p_, s_, prime_);
    for (uint32_t row = 0; row < p_.n_constraints; row++) make_row(row, first_output_ + row);
    flush_rows();
    flush_values();
    if (r1cs_) write_labels(*r1cs_, s_.n_wires);
  }

 private:
  void put_value(const Fr& v) {
    v.to_bytes_std(value_slot());
  }
  void put_small(uint8_t v) {
    uint8_t* out = value_slot();
    std::memset(out, 0, kFrBytes);
    out[0] = v;
  }
  uint8_t* value_slot() {
    if (values_.size() == kBlockValues * kFrBytes) flush_values();
    values_.resize(values_.size() + kFrBytes);
    return values_.data() + values_.size() - kFrBytes;
  }
  void flush_values() {
    wtns_.write(values_.data(), values_.size());
    values_.clear();
  }

  uint32_t pick_bit() { return bits_[rng_.below((uint32_t)bits_.size())]; }
  // `count` distinct bit wires, as Generator's pick_distinct draws them.
  void pick_distinct(uint32_t count, uint32_t* out) {
    for (uint32_t k = 0; k < count; k++) {
      for (;;) {
        const uint32_t cand = pick_bit();
        bool dup = false;
        for (uint32_t j = 0; j < k; j++) dup |= out[j] == cand;
        if (!dup) { out[k] = cand; break; }
      }
    }
  }

  // One linear combination's bytes: the count, then (wire, coefficient) per term.
  struct Lc {
    uint8_t* p;
    explicit Lc(uint8_t* at, uint32_t n) : p(at + 4) { std::memcpy(at, &n, 4); }
    void term(uint32_t wire, const uint8_t* coef) {
      std::memcpy(p, &wire, 4);
      std::memcpy(p + 4, coef, kFrBytes);
      p += 4 + kFrBytes;
    }
  };
  uint8_t* row_slot(Terms t) {
    const size_t n = row_bytes(t);
    if (rows_.size() + n > kRowBlock) flush_rows();
    rows_.resize(rows_.size() + n);
    return rows_.data() + rows_.size() - n;
  }
  void flush_rows() {
    if (r1cs_) r1cs_->write(rows_.data(), rows_.size());
    rows_.clear();
  }

  void make_row(uint32_t row, uint32_t out_wire) {
    const Gadget g = gadget_of(p_, row);
    uint32_t pick[8];
    uint8_t out_bit = 0;
    switch (g) {
      case Gadget::PublicCopy:
        if (r1cs_) {
          uint8_t* at = row_slot(terms_of(g));
          Lc a(at, 1); a.term(1 + row, one_);
          Lc b(a.p, 1); b.term(0, one_);
          Lc c(b.p, 1); c.term(out_wire, one_);
        }
        put_value(publics_[row]);
        return;
      case Gadget::Xor:
        pick_distinct(2, pick);
        if (r1cs_) {
          uint8_t* at = row_slot(terms_of(g));
          Lc a(at, 1); a.term(pick[0], two_);
          Lc b(a.p, 1); b.term(pick[1], one_);
          Lc c(b.p, 3); c.term(pick[0], one_); c.term(pick[1], one_); c.term(out_wire, minus_one_);
        }
        out_bit = bit_[pick[0]] ^ bit_[pick[1]];
        break;
      case Gadget::And:
        pick_distinct(2, pick);
        if (r1cs_) {
          uint8_t* at = row_slot(terms_of(g));
          Lc a(at, 1); a.term(pick[0], one_);
          Lc b(a.p, 1); b.term(pick[1], one_);
          Lc c(b.p, 1); c.term(out_wire, one_);
        }
        out_bit = bit_[pick[0]] & bit_[pick[1]];
        break;
      default: {  // Pack8: a byte, never picked again
        pick_distinct(8, pick);
        uint8_t byte = 0;
        for (int i = 0; i < 8; i++) byte |= (uint8_t)(bit_[pick[i]] << i);
        if (r1cs_) {
          uint8_t* at = row_slot(terms_of(g));
          Lc a(at, 8);
          for (int i = 0; i < 8; i++) a.term(pick[i], pow2_[i]);
          Lc b(a.p, 1); b.term(0, one_);
          Lc c(b.p, 1); c.term(out_wire, one_);
        }
        put_small(byte);
        return;
      }
    }
    bit_[out_wire] = out_bit;
    bits_.push_back(out_wire);
    put_small(out_bit);
  }

  static constexpr size_t kBlockValues = 8192;
  static constexpr size_t kRowBlock = 1u << 20;
  std::vector<uint8_t> bit_;   // per wire: its value where it is a bit (or an input bit)
  std::vector<Fr> publics_;
  std::vector<uint32_t> bits_;
  std::vector<uint8_t> values_, rows_;
  uint8_t one_[kFrBytes], two_[kFrBytes], minus_one_[kFrBytes], pow2_[8][kFrBytes];
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

namespace {

template <template <class> class Gen>
void generate_with(const SynthParams& p, ByteSink* r1cs, ByteSink& wtns, const SynthWitness& witness) {
  SynthShape shape;
  std::string err;
  if (synth_shape(p, shape, err) != CUZK_OK) throw std::invalid_argument(err);
  if (p.curve == CUZK_CURVE_BN254) Gen<curve::Bn254::Fr>(p, shape, r1cs, wtns, witness).run();
  else Gen<curve::Bls12381::Fr>(p, shape, r1cs, wtns, witness).run();
}

}  // namespace

void synth_generate(const SynthParams& p, ByteSink* r1cs, ByteSink& wtns, const SynthWitness& witness) {
  if (p.profile == CUZK_SYNTH_POREP) generate_with<PorepGenerator>(p, r1cs, wtns, witness);
  else generate_with<Generator>(p, r1cs, wtns, witness);
}

void synth_generate_reference(const SynthParams& p, ByteSink* r1cs, ByteSink& wtns, const SynthWitness& witness) {
  generate_with<Generator>(p, r1cs, wtns, witness);
}

}  // namespace cuzk::setup
