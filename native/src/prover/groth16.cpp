#include "prover/groth16.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <new>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "curve/ops.hpp"
#include "engine/engine.hpp"
#include "engine/key_view.hpp"
#include "field/random.hpp"
#include "prover/r1cs_check.hpp"
#include "prover/vk.hpp"
#include "prover/witness_check.hpp"

namespace cuzk::prover {

namespace {

using engine::Engine;
using engine::KeyView;
using engine::PhaseScope;
using engine::PhaseTimes;
using engine::ProofSums;

template <class Fr>
void scalar_limbs(const uint8_t* bytes, uint64_t out[4]) {
  std::memcpy(out, bytes, 32);
}

// A uniform element of Fr (standard LE) from the OS CSPRNG: the blinding scalars r, s.
template <class Fr>
cuzk_status random_scalar(uint8_t* out, std::string& err) {
  Fr v;
  if (!field::os_random_element(v, err)) return CUZK_ERR_INTERNAL;
  std::memcpy(out, v.l, 32);
  return CUZK_OK;
}

// The witnesses of a batch, checked one proof ahead of the engine on a helper thread: proof p+1's
// check (values < r, w[0], the attached .r1cs) runs while the engine computes proof p, so that it
// leaves the critical path. The engine takes proofs in order; inputs(p) waits for p's check and
// returns its failure (the first failing proof of the batch) or CUZK_ERR_CANCELLED when the
// caller's progress.cancel is set. Without a helper thread (the OS refused one) the checks run in
// inputs() itself.
class CheckAhead final : public engine::WitnessSource {
 public:
  using Check = std::function<cuzk_status(size_t p, engine::ProofInputs& in, std::string& err)>;
  CheckAhead(size_t n, Check check, const Progress& progress)
      : n_(n), check_(std::move(check)), progress_(progress), checked_(n) {}
  ~CheckAhead() { stop(); }

  void start() {
    try {
      helper_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      // no helper: inputs() checks each proof itself
    }
  }
  // Stops the helper after its current proof and joins it (before the batch's memory goes away).
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (helper_.joinable()) helper_.join();
  }

  size_t size() const override { return n_; }
  void computed(size_t) override { progress_.add(1); }
  bool cancelled() const override { return progress_.cancelled(); }
  const engine::ProofInputs& checked(size_t p) const { return checked_[p]; }

  cuzk_status inputs(size_t p, engine::ProofInputs* out, std::string& err) override {
    if (progress_.cancelled()) return cancelled(p, err);
    std::unique_lock<std::mutex> lock(mutex_);
    if (p + 1 > asked_) asked_ = p + 1;
    wake_.notify_all();
    if (!helper_.joinable()) {  // checks inline, in order
      while (ready_ <= p && !failed_) {
        lock.unlock();
        check_next();
        lock.lock();
      }
    }
    wake_.wait(lock, [&] { return ready_ > p || failed_ || halted_; });
    if (ready_ > p) {
      *out = checked_[p];
      return CUZK_OK;
    }
    if (failed_) {
      err = fail_err_;
      return fail_st_;
    }
    return cancelled(p, err);
  }

 private:
  cuzk_status cancelled(size_t p, std::string& err) const {
    err = "cancelled after " + std::to_string(p) + " of " + std::to_string(n_) + " proofs; no proof returned";
    return CUZK_ERR_CANCELLED;
  }

  // Checks proof ready_ (one thread at a time: the helper, or inputs() without one).
  void check_next() {
    const size_t p = ready_;
    engine::ProofInputs in;
    std::string e;
    cuzk_status st;
    try {  // nothing may escape the helper thread: the failure goes to the engine's inputs(p)
      st = check_(p, in, e);
    } catch (const std::bad_alloc&) {
      st = CUZK_ERR_OUT_OF_MEMORY;
      e = "proof " + std::to_string(p) + ": out of host memory";
    } catch (const std::exception& x) {
      st = CUZK_ERR_INTERNAL;
      e = "proof " + std::to_string(p) + ": internal error: " + x.what();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (st == CUZK_OK) {
      checked_[p] = in;
      ready_ = p + 1;
    } else {
      failed_ = true;
      fail_st_ = st;
      fail_err_ = std::move(e);
    }
    wake_.notify_all();
  }

  void run() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        // Proof q is checked once the engine has asked for q - 1: one ahead, no further.
        wake_.wait(lock, [&] { return stop_ || ready_ < std::min(n_, asked_ + 1); });
        if (stop_ || failed_ || ready_ >= n_) break;
      }
      if (progress_.cancelled()) break;
      check_next();
      std::lock_guard<std::mutex> lock(mutex_);
      if (failed_ || ready_ >= n_) break;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    halted_ = true;
    wake_.notify_all();
  }

  const size_t n_;
  const Check check_;
  const Progress& progress_;
  std::vector<engine::ProofInputs> checked_;
  std::thread helper_;
  std::mutex mutex_;
  std::condition_variable wake_;
  size_t ready_ = 0;  // proofs [0, ready_) are checked
  size_t asked_ = 0;  // the engine has asked for proofs [0, asked_)
  bool failed_ = false, stop_ = false, halted_ = false;
  cuzk_status fail_st_ = CUZK_OK;
  std::string fail_err_;
};

template <class C>
class Groth16Prover final : public Prover {
  using Fr = typename C::Fr;
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  using G1 = typename C::G1;
  using G2 = typename C::G2;
  using G1x = typename C::G1x;
  using G2x = typename C::G2x;

 public:
  Groth16Prover(const formats::ZkeyGroth16& z, ThreadPool& pool) : z_(z), pool_(pool) {
    alpha1_ = curve::load_key_point<Fq>(z.alpha1);
    beta1_ = curve::load_key_point<Fq>(z.beta1);
    delta1_ = curve::load_key_point<Fq>(z.delta1);
    beta2_ = curve::load_key_point<Fq2>(z.beta2);
    delta2_ = curve::load_key_point<Fq2>(z.delta2);
    vk_ = vk_from_zkey<C>(z);
  }

  cuzk_status init(const engine::EngineMaker& engines, std::string& err) {
    cuzk_status st = view_.build(z_, pool_, err);
    if (st != CUZK_OK) return st;
    st = engines.make(view_, &engine_, err);
    if (st == CUZK_OK && !engine_->reads_host_rows()) view_.release_rows();  // the GPU holds its own
    return st;
  }

  cuzk_status prove(const ProveArgs& args, const formats::R1cs* r1cs, std::string& err) override {
    std::lock_guard<std::mutex> lock(mutex_);  // one call at a time per prover: it owns workspace
    PhaseTimes times(args.timings, args.n, engine_->kind());
    cuzk_status st = prove_locked(args, r1cs, times, err);
    times.finish();
    return st;
  }

 private:
  cuzk_status prove_locked(const ProveArgs& args, const formats::R1cs* r1cs, PhaseTimes& times, std::string& err) {
    const size_t n = args.n;
    if (n == 0) { err = "n_proofs is 0"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (!args.proofs) { err = "proofs is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    if ((args.r == nullptr) != (args.s == nullptr)) {
      err = "r and s must both be given (deterministic proofs) or both be NULL (random)";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    if (args.proofs_cap / C::PROOF_BYTES < n) {
      err = "proofs buffer holds " + std::to_string(args.proofs_cap) + " bytes; " + std::to_string(n) + " proofs need " +
            std::to_string(n * C::PROOF_BYTES);
      return CUZK_ERR_SHORT_BUFFER;
    }
    // The inputs are n records of one size each: their total must be addressable.
    const size_t record = args.a ? (size_t)std::max(z_.domain_size, z_.n_vars) * 32 : args.witness_stride;
    if (!args.witness_list && record > 0 && n > SIZE_MAX / record) {
      err = std::to_string(n) + " proofs of " + std::to_string(record) + "-byte inputs exceed the address space";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    if (args.a ? (!args.b || !args.c || !args.assignment) : !(args.witnesses || args.witness_list)) {
      err = args.a ? "a, b, c and assignment are all required" : "witnesses is NULL";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    if (args.witness_list) {
      for (size_t p = 0; p < n; p++) {
        if (!args.witness_list[p]) {
          err = "witnesses[" + std::to_string(p) + "] is NULL";
          return CUZK_ERR_INVALID_ARGUMENT;
        }
      }
    }
    args.progress.begin(CUZK_STAGE_PROVE, n);
    times.watch(args.progress);
    CheckAhead batch(n, [&](size_t p, engine::ProofInputs& in, std::string& e) {
      return check_proof_inputs(args, r1cs, times, p, in, e);
    }, args.progress);
    // Checking ahead pays once a proof is long enough to hide the helper thread's handoff; for one
    // proof, or a tiny circuit, the handoff costs more than it hides (bench_test saw 2-5 ms of a
    // 20 ms batch of 2^8 circuits outside every phase, under load): then check inline, in order.
    if (n > 1 && z_.n_vars >= (1u << 11)) batch.start();
    sums_.resize(n);
    cuzk_status st = engine_->compute(batch, times, sums_.data(), err);
    batch.stop();
    if (st != CUZK_OK) {
      std::memset(args.proofs, 0, n * C::PROOF_BYTES);  // nothing of a failed or cancelled batch is returned
      return st;
    }
    // r and s in order (one random source), then each proof's finalize and self-check on the pool:
    // the proofs are independent, and one after another they are a serial tail after the engine.
    std::vector<uint8_t> rs_bytes(n * 64);
    for (size_t p = 0; p < n; p++) {
      uint8_t* rb = &rs_bytes[p * 64];
      uint8_t* sb = rb + 32;
      if (args.r) {
        std::memcpy(rb, args.r + p * 32, 32);
        std::memcpy(sb, args.s + p * 32, 32);
        if (first_value_not_below_r(z_, rb, 1) == 0 || first_value_not_below_r(z_, sb, 1) == 0) {
          err = "proof " + std::to_string(p) + ": r and s must be < r (standard form)";
          return CUZK_ERR_INVALID_ARGUMENT;
        }
      } else {
        if ((st = random_scalar<Fr>(rb, err)) != CUZK_OK) return st;
        if ((st = random_scalar<Fr>(sb, err)) != CUZK_OK) return st;
      }
    }
    const bool check = !(args.flags & CUZK_PROVE_NO_SELF_CHECK);
    std::vector<uint8_t> valid(n, 1);
    pool_.parallel_for(n, [&](size_t p) {
      {
        PhaseScope t(times, p, CUZK_PHASE_FINALIZE);
        finalize(sums_[p], &rs_bytes[p * 64], &rs_bytes[p * 64 + 32], args.proofs + p * C::PROOF_BYTES);
      }
      if (check) {
        PhaseScope t(times, p, CUZK_PHASE_SELF_CHECK);
        valid[p] = self_check(args.proofs + p * C::PROOF_BYTES, batch.checked(p).w);
      }
    });
    for (size_t p = 0; p < n; p++)
      if (!valid[p]) {  // the first that failed is named
        std::memset(args.proofs, 0, n * C::PROOF_BYTES);  // a proof that failed is never returned
        err = "proof " + std::to_string(p) + " failed its self-check (pairing) and was not returned: " +
              blame(args, r1cs, batch.checked(p).w, times, p);
        return CUZK_ERR_SELF_CHECK;
      }
    return CUZK_OK;
  }

  // The checks of proof p's inputs before any work on it (timed as PARSE, then WITNESS_CHECK for
  // an attached .r1cs); messages name the proof. Runs on the batch's helper thread (CheckAhead).
  cuzk_status check_proof_inputs(const ProveArgs& args, const formats::R1cs* r1cs, PhaseTimes& times, size_t p,
                                 engine::ProofInputs& in, std::string& err) {
    cuzk_status st = CUZK_OK;
    {
      PhaseScope t(times, p, CUZK_PHASE_PARSE);
      st = args.a ? check_evaluations(args, p, in, err)
                  : check_witness(z_, args.witness_list ? args.witness_list[p] : args.witnesses + p * args.witness_stride,
                                  args.witness_stride,
                                  args.witness_format, pool_, &in.w, err);
    }
    if (st == CUZK_OK && r1cs && !(args.flags & CUZK_PROVE_SKIP_R1CS_CHECK)) {
      PhaseScope t(times, p, CUZK_PHASE_WITNESS_CHECK);
      st = check_r1cs_witness<C>(*r1cs, in.w, pool_, err);
    }
    if (st != CUZK_OK) err = "proof " + std::to_string(p) + ": " + err;
    return st;
  }

  cuzk_status check_evaluations(const ProveArgs& args, size_t p, engine::ProofInputs& in, std::string& err) {
    const size_t d = z_.domain_size;
    in.w = args.assignment + p * (size_t)z_.n_vars * 32;
    in.a = args.a + p * d * 32;
    in.b = args.b + p * d * 32;
    in.c = args.c + p * d * 32;
    if (first_value_not_below_r(z_, in.w, z_.n_vars, &pool_) < z_.n_vars ||
        first_value_not_below_r(z_, in.a, d, &pool_) < d || first_value_not_below_r(z_, in.b, d, &pool_) < d ||
        first_value_not_below_r(z_, in.c, d, &pool_) < d) {
      err = "an assignment or evaluation value is not < r";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    if (!is_constant_one(in.w)) {
      err = "witness w[0] must be 1 (the constant wire)";
      return CUZK_ERR_UNSATISFIED;
    }
    return CUZK_OK;
  }

  //   A = alpha1 + sum A_i w_i + r delta1
  //   B = beta2 + sum B2_i w_i + s delta2            (and its G1 twin B1 with beta1, delta1)
  //   C = sum C_i w_i + H + s A + r B1 - r s delta1
  void finalize(const ProofSums<C>& sums, const uint8_t* rb, const uint8_t* sb, uint8_t* out) {
    uint64_t r[4], s[4], rs[4];
    scalar_limbs<Fr>(rb, r);
    scalar_limbs<Fr>(sb, s);
    (Fr::from_bytes_std(rb) * Fr::from_bytes_std(sb)).to_std_limbs(rs);
    G1x a = sums.a.add_affine(alpha1_).add(curve::scalar_mul(delta1_, r, 4));
    G2x b = sums.b2.add_affine(beta2_).add(curve::scalar_mul(delta2_, s, 4));
    G1x b1 = sums.b1.add_affine(beta1_).add(curve::scalar_mul(delta1_, s, 4));
    G1x c = sums.c.add(sums.h)
                .add(curve::scalar_mul_xyzz(a, s, 4))
                .add(curve::scalar_mul_xyzz(b1, r, 4))
                .add(-curve::scalar_mul(delta1_, rs, 4));
    curve::store_output_point(a.to_affine(), out);
    curve::store_output_point(b.to_affine(), out + C::G1_BYTES);
    curve::store_output_point(c.to_affine(), out + C::G1_BYTES + C::G2_BYTES);
  }

  // The likely cause of a failed self-check. The witness passed every check of its own, so either
  // it does not satisfy the circuit or the key (or the backend) is at fault; an attached .r1cs
  // tells which.
  std::string blame(const ProveArgs& args, const formats::R1cs* r1cs, const uint8_t* w, PhaseTimes& times, size_t p) {
    const std::string backend = std::string(" (") + (engine_->kind() == CUZK_BACKEND_CUDA ? "GPU" : "CPU") + " backend)";
    if (!r1cs) {
      return "either the witness does not satisfy the circuit or the key (or the backend) is at fault" + backend +
             "; attach the circuit's .r1cs to the key to tell which";
    }
    if (args.flags & CUZK_PROVE_SKIP_R1CS_CHECK) {  // the constraints have not been checked yet
      PhaseScope t(times, p, CUZK_PHASE_WITNESS_CHECK);
      std::string unsatisfied;
      if (check_r1cs_witness<C>(*r1cs, w, pool_, unsatisfied) != CUZK_OK)
        return "the witness does not satisfy the circuit (" + unsatisfied + ")";
    }
    if (args.a)
      return "the assignment satisfies the circuit's .r1cs, so the a, b, c evaluations do not match it or the key "
             "(or the backend) is at fault" + backend;
    return "the witness satisfies the circuit's .r1cs, so the key (or the backend) is at fault" + backend;
  }

  bool self_check(const uint8_t* proof, const uint8_t* w) {
    G1 a = curve::load_output_point<Fq>(proof);
    G2 b = curve::load_output_point<Fq2>(proof + C::G1_BYTES);
    G1 c = curve::load_output_point<Fq>(proof + C::G1_BYTES + C::G2_BYTES);
    std::vector<Fr> pub(z_.n_public);
    for (size_t i = 0; i < pub.size(); i++) pub[i] = Fr::from_bytes_std(w + (i + 1) * 32);
    return pairing::verify_groth16<C>(vk_, a, b, c, pub.data(), pub.size());
  }

  const formats::ZkeyGroth16& z_;
  ThreadPool& pool_;
  KeyView<C> view_;
  std::unique_ptr<Engine<C>> engine_;
  std::vector<ProofSums<C>> sums_;
  G1 alpha1_, beta1_, delta1_;
  G2 beta2_, delta2_;
  pairing::VerifyingKey<C> vk_;
  std::mutex mutex_;
};

template <class C>
cuzk_status make_prover_for(const formats::ZkeyGroth16& zkey, ThreadPool& pool, const engine::EngineMaker& engines,
                            std::unique_ptr<Prover>* out, std::string& err) {
  auto p = std::make_unique<Groth16Prover<C>>(zkey, pool);
  cuzk_status st = p->init(engines, err);
  if (st != CUZK_OK) return st;
  *out = std::move(p);
  return CUZK_OK;
}

}  // namespace

cuzk_status make_prover(const formats::ZkeyGroth16& zkey, ThreadPool& pool, const engine::EngineMaker& engines,
                        std::unique_ptr<Prover>* out, std::string& err) {
  if (zkey.curve == CUZK_CURVE_BN254) return make_prover_for<curve::Bn254>(zkey, pool, engines, out, err);
  return make_prover_for<curve::Bls12381>(zkey, pool, engines, out, err);
}

}  // namespace cuzk::prover
