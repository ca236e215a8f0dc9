// What the key holds (formats.md 1; snarkjs zkey_new.js followed by one contribution), with
// u_i, v_i, w_i(X) = sum_c A/B/C[c][i] L_c(X) over the Lagrange basis L_c of the domain <w_n>
// (w_n = ffjavascript's Fr.w[log n], as the prover's NTTs), and the snarkjs input rows: A gets
// L_{n_constraints + s} for every public signal s (and s = 0):
//   alpha1, beta1, delta1 = alpha, beta, delta * G1; beta2, gamma2, delta2 = beta, gamma, delta * G2;
//   A_i = u_i(tau) G1; B1_i = v_i(tau) G1; B2_i = v_i(tau) G2;
//   IC_i = (beta u_i + alpha v_i + w_i)(tau) / gamma G1 (i <= n_public), C_i = the same / delta;
//   H_j = L^(2n)_(2j+1)(tau) / delta G1: the Lagrange basis of the 2n-th roots of unity at the odd
//   indices, because the prover feeds the H MSM the values of a*b - c on the odd coset w_2n <w_n>
//   with no division by Z (p(tau) = sum_j p(odd_j) L^(2n)_(2j+1)(tau): p vanishes on the even points).
// Every point is then a fixed-base product of a generator (fixed_base.hpp; cuda/setup/fixed_base.cu on a GPU).
#include "setup/dev_setup.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "cuda/backend.hpp"
#include "curve/curves.hpp"
#include "curve/ops.hpp"
#include "field/root_of_unity.hpp"
#include "formats/byte_reader.hpp"
#include "setup/fixed_base.hpp"
#include "setup/output_file.hpp"
#include "setup/random.hpp"
#include "util/clock.hpp"
#include "util/progress.hpp"

namespace cuzk::setup {

size_t test_hooks::generated_points_window = 0;

namespace {

using field::root_of_unity;

constexpr size_t kBlock = 1 << 15;  // points per block written: bounds the buffers to a few MiB
constexpr size_t kGpuBlock = 1 << 20;  // points per GPU call (at most 192 MiB of BLS12-381 G2 output)

// Thrown at a unit boundary when the caller asked to stop: the unwinding drops the temporary file.
struct Cancelled {};

// GPU 0 for the key points, when the library has CUDA and the machine a GPU; else none.
struct GpuHandle {
  cuda::DeviceContext* device = nullptr;
  GpuHandle() {
    if (!cuda::compiled_in()) return;
    std::string err;
    int count = 0;
    if (cuda::device_count(&count, err) != CUZK_OK || count == 0) return;
    if (cuda::open_device(0, &device, err) != CUZK_OK) device = nullptr;
  }
  ~GpuHandle() { drop(); }
  void drop() {
    if (device) cuda::close_device(device);
    device = nullptr;
  }
};

// A signal's terms, gathered from the row-major .r1cs (counting sort by wire).
struct Occurrence {
  const uint8_t* coef;  // standard form LE, < r (checked by parse_r1cs)
  uint32_t row;
  uint32_t matrix;  // 0 = A, 1 = B, 2 = C
};

// The point sections of a key made in memory: each point is k * G1 or G2 for its scalar (u, v, k
// or h of the setup, kept here), made when a prover reads it: on GPU 0 while it works, else (or
// after a GPU failure) on CPU fixed-base tables built at the first CPU read. Reads of less than a
// window are served from the last window made, so a reader walking a section in small blocks
// makes each point once. test_hooks::generated_points_window sets the window to n points (tests: many windows
// in a small key).
template <class C>
class GeneratedPoints final : public formats::PointSource {
  using Fr = typename C::Fr;
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  static constexpr size_t kWindow = 1 << 20;  // points made per call (at most 192 MiB of BLS12-381 G2)
  static size_t window_points() {
    const size_t n = test_hooks::generated_points_window;
    return n >= 1 && n <= kWindow ? n : kWindow;
  }

 public:
  GeneratedPoints(uint32_t n_public, std::vector<Fr> u, std::vector<Fr> v, std::vector<Fr> k, std::vector<Fr> h,
                  std::shared_ptr<GpuHandle> gpu)
      : n_public_(n_public), u_(std::move(u)), v_(std::move(v)), k_(std::move(k)), h_(std::move(h)), gpu_(std::move(gpu)) {}

  formats::Status read(formats::PointSection s, uint64_t first, uint64_t count, uint8_t* dst,
                       std::string& err) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    const size_t pb = s == formats::kSecB2 ? C::G2_BYTES : C::G1_BYTES;
    if (count >= window_points_) return make(s, first, count, dst, err);
    while (count > 0) {
      const uint64_t lo = first / window_points_ * window_points_;
      if (!(window_valid_ && window_section_ == s && window_first_ == lo)) {
        const uint64_t n = std::min<uint64_t>(window_points_, scalars_of(s).second - lo);
        window_.resize(n * pb);
        window_valid_ = false;
        if (formats::Status st = make(s, lo, n, window_.data(), err); st != CUZK_OK) return st;
        window_valid_ = true;
        window_section_ = s;
        window_first_ = lo;
      }
      const uint64_t take = std::min<uint64_t>(count, lo + window_.size() / pb - first);
      std::memcpy(dst, window_.data() + (first - lo) * pb, take * pb);
      dst += take * pb;
      first += take;
      count -= take;
    }
    return CUZK_OK;
  }

  // Each read makes its points again (fixed-base multiplications): far slower than a copy.
  double read_bytes_per_s() const override { return 0.6e9; }

  bool finite_marks(formats::PointSection s, uint64_t first, uint64_t count, uint8_t* marks) const override {
    const Fr* scalars = scalars_of(s).first + first;
    for (uint64_t i = 0; i < count; i++) marks[i] = scalars[i].is_zero() ? 0 : 1;
    return true;
  }

 private:
  // The scalars of section s and how many there are (C's start after the public signals).
  std::pair<const Fr*, uint64_t> scalars_of(formats::PointSection s) const {
    switch (s) {
      case formats::kSecA: return {u_.data(), u_.size()};
      case formats::kSecB1:
      case formats::kSecB2: return {v_.data(), v_.size()};
      case formats::kSecC: return {k_.data() + n_public_ + 1, k_.size() - n_public_ - 1};
      default: return {h_.data(), h_.size()};
    }
  }

  formats::Status make(formats::PointSection s, uint64_t first, uint64_t count, uint8_t* dst, std::string& err) const {
    const Fr* scalars = scalars_of(s).first + first;
    const cuzk_group group = s == formats::kSecB2 ? CUZK_G2 : CUZK_G1;
    if (gpu_ && gpu_->device) {
      if (cuda::fixed_base_mul(gpu_->device, C::ID, group, reinterpret_cast<const uint8_t*>(scalars), count, dst, err) ==
          CUZK_OK)
        return CUZK_OK;
      gpu_->drop();  // the CPU tables from here on, as the file setup does
      err.clear();
    }
    ThreadPool& pool = default_thread_pool();
    if (group == CUZK_G1) {
      if (!g1_) g1_ = std::make_unique<FixedBaseTable<Fq>>(C::g1_generator(), Fr::Params::BITS, u_.size() * 4, pool);
      g1_->mul_many(scalars, count, dst, pool);
    } else {
      if (!g2_) g2_ = std::make_unique<FixedBaseTable<Fq2>>(C::g2_generator(), Fr::Params::BITS, v_.size(), pool);
      g2_->mul_many(scalars, count, dst, pool);
    }
    return CUZK_OK;
  }

  const uint32_t n_public_;
  const size_t window_points_ = window_points();
  const std::vector<Fr> u_, v_, k_, h_;
  std::shared_ptr<GpuHandle> gpu_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<FixedBaseTable<Fq>> g1_;
  mutable std::unique_ptr<FixedBaseTable<Fq2>> g2_;
  mutable std::vector<uint8_t> window_;
  mutable bool window_valid_ = false;
  mutable formats::PointSection window_section_ = formats::kSecA;
  mutable uint64_t window_first_ = 0;
};

template <class C>
class DevSetup {
  using Fr = typename C::Fr;
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  static constexpr size_t kG1 = C::G1_BYTES, kG2 = C::G2_BYTES;

 public:
  DevSetup(const formats::R1cs& r1cs, ThreadPool& pool, std::shared_ptr<GpuHandle> gpu, const Progress& progress)
      : r1cs_(r1cs), pool_(pool), gpu_(gpu), progress_(progress) {}

  // The key as a file (cuzk_setup_insecure_dev).
  formats::Status run(const std::string& path, cuzk_setup_info& info, std::string& err) {
    const uint64_t t0 = now_ns();
    if (formats::Status st = check_sizes(err); st != CUZK_OK) return st;
    OutputFile out(path);  // before the work: an unwritable path fails at once
    // Progress counts the key points: 6 in the header, IC, A, B1, B2, C and H.
    progress_.set_total(6 + (uint64_t)n_public_ + 1 + 3ull * n_vars_ + (n_vars_ - n_public_ - 1) + n_);
    stop_if_cancelled();
    draw_toxic_waste();
    compute_scalars();
    stop_if_cancelled();
    const uint64_t t1 = now_ns();

    // With a GPU the tables serve only the six header points: small ones (and full-size ones are
    // built if the GPU fails half-way, in emit).
    const bool gpu = gpu_ && gpu_->device;
    build_tables(gpu);
    stop_if_cancelled();
    const uint64_t t2 = now_ns();

    write_key(out, true);
    out.commit();
    const uint64_t t3 = now_ns();
    fill_info(info, out.written(), t0, t1, t2, t3);
    return CUZK_OK;
  }

  // The key in memory (cuzk_setup_insecure_dev_key): the .zkey's bytes without the point sections'
  // payloads, and the generator that makes any range of those points when a prover reads them.
  formats::Status run_in_memory(formats::FileBytes& bytes, std::unique_ptr<formats::PointSource>& points,
                                cuzk_setup_info& info, std::string& err) {
    const uint64_t t0 = now_ns();
    if (formats::Status st = check_sizes(err); st != CUZK_OK) return st;
    progress_.set_total(6 + (uint64_t)n_public_ + 1);  // the header and IC points: the rest are made later
    stop_if_cancelled();
    draw_toxic_waste();
    compute_scalars();
    stop_if_cancelled();
    const uint64_t t1 = now_ns();
    build_tables(true);
    const uint64_t t2 = now_ns();

    if (formats::Status st = formats::FileBytes::blank(key_bytes(), bytes, err); st != CUZK_OK) return st;
    MemorySink out(bytes.mutable_data(), bytes.size());
    write_key(out, false);
    if (out.written() != bytes.size()) throw std::logic_error("dev key: size computed and written differ");
    for (const auto& range : skipped_) bytes.leave_out(range.first, range.second);
    const uint64_t t3 = now_ns();
    fill_info(info, bytes.bytes_in_memory(), t0, t1, t2, t3);
    points = std::make_unique<GeneratedPoints<C>>(n_public_, std::move(u_), std::move(v_), std::move(k_),
                                                  std::move(h_), gpu_);
    return CUZK_OK;
  }

 private:
  formats::Status check_sizes(std::string& err) {
    n_vars_ = r1cs_.n_wires;
    n_public_ = r1cs_.n_public();
    n_constraints_ = r1cs_.n_constraints;
    if (n_constraints_ == 0) return formats::fail(err, CUZK_ERR_FORMAT, "r1cs: the circuit has no constraints");
    if ((uint64_t)n_public_ + 1 > n_vars_) {
      return formats::fail(err, CUZK_ERR_FORMAT,
                           "r1cs: " + std::to_string(n_public_) + " public signals do not fit in " +
                               std::to_string(n_vars_) + " wires (wire 0 is the constant 1)");
    }
    rows_ = (uint64_t)n_constraints_ + n_public_ + 1;
    log_n_ = 0;
    while (((uint64_t)1 << log_n_) < rows_) log_n_++;
    if (log_n_ + 1 > (uint32_t)Fr::Params::TWO_ADICITY) {
      return formats::fail(err, CUZK_ERR_UNSUPPORTED,
                           std::to_string(n_constraints_) + " constraints and " + std::to_string(n_public_ + 1) +
                               " input rows need a domain of 2^" + std::to_string(log_n_) +
                               "; the H points need the 2^" + std::to_string(log_n_ + 1) + "-th roots of unity, and " +
                               C::name() + "'s scalar field has only up to 2^" +
                               std::to_string(Fr::Params::TWO_ADICITY));
    }
    n_ = (size_t)1 << log_n_;
    // The scalars live in memory (u, v, k per signal, the terms by signal, two domain-sized
    // vectors): refuse up front what cannot fit rather than be killed half-way.
    const uint64_t nnz = r1cs_.n_terms[0] + r1cs_.n_terms[1] + r1cs_.n_terms[2];
    const uint64_t need = 104ull * n_vars_ + 16 * nnz + 64ull * n_ + 64 * rows_;
    const uint64_t have = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGE_SIZE);
    if (have > 0 && need > have) {
      return formats::fail(err, CUZK_ERR_OUT_OF_MEMORY,
                           "the setup of " + std::to_string(n_vars_) + " signals and a domain of 2^" +
                               std::to_string(log_n_) + " needs about " + std::to_string(need >> 20) +
                               " MiB of memory; this machine has " + std::to_string(have >> 20) + " MiB");
    }

    return CUZK_OK;
  }

  void fill_info(cuzk_setup_info& info, uint64_t key_bytes, uint64_t t0, uint64_t t1, uint64_t t2, uint64_t t3) const {
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.curve = C::ID;
    info.n_vars = n_vars_;
    info.n_public = n_public_;
    info.n_constraints = n_constraints_;
    info.domain_size = (uint32_t)n_;
    info.threads = pool_.size();
    info.g1_window_bits = (uint32_t)g1_->window_bits();
    info.g2_window_bits = (uint32_t)g2_->window_bits();
    info.gpu = gpu_ && gpu_->device ? 1 : 0;
    info.zkey_bytes = key_bytes;
    info.scalars_ns = t1 - t0;
    info.tables_ns = t2 - t1;
    info.points_ns = t3 - t2;
    info.total_ns = t3 - t0;
  }

  // The .zkey's size, from the counts (write_key writes exactly this much).
  uint64_t key_bytes() const {
    const uint64_t coefs = r1cs_.n_terms[0] + r1cs_.n_terms[1] + n_public_ + 1;
    const uint64_t header = 4 + Fq::BYTES + 4 + 32 + 12 + 3 * kG1 + 3 * kG2;
    const uint64_t payloads = 4 + header + (n_public_ + 1ull) * kG1 + (4 + coefs * (12 + 32)) +
                              2ull * n_vars_ * kG1 + (uint64_t)n_vars_ * kG2 +
                              ((uint64_t)n_vars_ - n_public_ - 1) * kG1 + (uint64_t)n_ * kG1 + (64 + 4);
    return 12 + 10 * 12 + payloads;  // magic, version, count; ten section headers
  }

  void stop_if_cancelled() const {
    if (progress_.cancelled()) throw Cancelled{};
  }

  void draw_toxic_waste() {
    for (;;) {  // tau must not be a 2n-th root of unity: the Lagrange formulas divide by tau - w^i
      tau_ = random_nonzero<Fr>();
      Fr t = tau_;
      for (uint32_t i = 0; i <= log_n_; i++) t = t.sqr();  // tau^(2n)
      if (t != Fr::one()) break;
    }
    alpha_ = random_nonzero<Fr>();
    beta_ = random_nonzero<Fr>();
    gamma_ = random_nonzero<Fr>();
    delta_ = random_nonzero<Fr>();
  }

  // out[i] = z * x_i / (tau - x_i) with x_i = g * w^i, i < count: the Lagrange basis at tau, up to
  // the factor z. Chunks in parallel, one inversion per chunk (batch trick).
  void lagrange_like(std::vector<Fr>& out, size_t count, const Fr& g, const Fr& w, const Fr& z) {
    out.resize(count);
    std::vector<Fr> x(count);
    pool_.parallel_range(count, [&](size_t begin, size_t end) {
      Fr xi = g * w.pow_u64(begin);
      for (size_t i = begin; i < end; i++) {
        x[i] = xi;
        out[i] = tau_ - xi;
        xi = xi * w;
      }
      std::vector<Fr> scratch(end - begin);
      field::batch_inverse(out.data() + begin, end - begin, scratch.data());
      for (size_t i = begin; i < end; i++) out[i] = z * x[i] * out[i];
    }, 4096, 2);
  }

  void compute_scalars() {
    const Fr w_n = root_of_unity<Fr>(log_n_);
    const Fr tau_n = tau_.pow_u64(n_);
    // L_c(tau) = (tau^n - 1) / n * w^c / (tau - w^c), for the rows in use.
    std::vector<Fr> lagrange;
    lagrange_like(lagrange, rows_, Fr::one(), w_n, (tau_n - Fr::one()) * Fr::from_u64(n_).inverse());

    gather_occurrences();

    // u, v and beta*u + alpha*v + w per signal. The sums run over the raw coefficients (a
    // Montgomery product of a standard-form coefficient with L gives c*L/R); one conversion per
    // signal at the end restores the Montgomery form.
    u_.resize(n_vars_);
    v_.resize(n_vars_);
    k_.resize(n_vars_);
    const Fr gamma_inv = gamma_.inverse(), delta_inv = delta_.inverse();
    pool_.parallel_range(n_vars_, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; i++) {
        Fr sum[3] = {Fr::zero(), Fr::zero(), Fr::zero()};
        for (uint64_t e = occ_start_[i]; e < occ_start_[i + 1]; e++) {
          const Occurrence& o = occ_[e];
          sum[o.matrix] += Fr::from_bytes_mont(o.coef) * lagrange[o.row];
        }
        Fr u = sum[0].to_mont(), v = sum[1].to_mont(), w = sum[2].to_mont();
        if (i <= n_public_) u += lagrange[n_constraints_ + i];  // snarkjs's input rows
        u_[i] = u;
        v_[i] = v;
        k_[i] = (beta_ * u + alpha_ * v + w) * (i <= n_public_ ? gamma_inv : delta_inv);
      }
    }, 1024);
    occ_.clear();
    occ_.shrink_to_fit();

    // H_j = L^(2n)_(2j+1)(tau) / delta = (tau^2n - 1) / (2n delta) * x_j / (tau - x_j), x_j = w_2n w_n^j.
    const Fr z = (tau_n * tau_n - Fr::one()) * (Fr::from_u64(2 * n_) * delta_).inverse();
    lagrange_like(h_, n_, root_of_unity<Fr>(log_n_ + 1), w_n, z);
  }

  void gather_occurrences() {
    occ_start_.assign((size_t)n_vars_ + 2, 0);
    const uint64_t term = 4 + r1cs_.n8;
    auto walk = [&](auto&& visit) {
      for (uint32_t c = 0; c < n_constraints_; c++) {
        const uint8_t* p = r1cs_.constraints + r1cs_.constraint_offsets[c];
        for (uint32_t m = 0; m < 3; m++) {
          const uint32_t n_terms = formats::load_u32_le(p);
          p += 4;
          for (uint32_t t = 0; t < n_terms; t++, p += term) visit(c, m, formats::load_u32_le(p), p + 4);
        }
      }
    };
    walk([&](uint32_t, uint32_t, uint32_t wire, const uint8_t*) { occ_start_[(size_t)wire + 2]++; });
    for (size_t i = 2; i < occ_start_.size(); i++) occ_start_[i] += occ_start_[i - 1];
    occ_.resize(occ_start_.back());
    walk([&](uint32_t c, uint32_t m, uint32_t wire, const uint8_t* coef) {
      occ_[occ_start_[(size_t)wire + 1]++] = Occurrence{coef, c, m};
    });
    occ_start_.pop_back();  // now occ_start_[i] .. occ_start_[i + 1] are wire i's terms
  }

  void build_tables(bool header_only) {
    const size_t g1_muls = header_only ? 3 : 6 + (n_public_ + 1) + 3 * (size_t)n_vars_ + n_;
    const size_t g2_muls = header_only ? 3 : 3 + (size_t)n_vars_;
    g1_ = std::make_unique<FixedBaseTable<Fq>>(C::g1_generator(), Fr::Params::BITS, g1_muls, pool_);
    g2_ = std::make_unique<FixedBaseTable<Fq2>>(C::g2_generator(), Fr::Params::BITS, g2_muls, pool_);
  }

  // Streams n multiples of one generator to the file: on the GPU while it works, else on the CPU
  // tables (a GPU failure drops the GPU for the rest of the call and rebuilds full-size tables).
  // points = false: the section's payload is skipped (a key in memory makes its points on demand).
  void emit(ByteSink& out, uint32_t id, cuzk_group group, const Fr* scalars, size_t n, size_t point_bytes,
            bool points = true) {
    out.section(id, (uint64_t)n * point_bytes);
    if (!points) {
      skipped_.push_back({static_cast<MemorySink&>(out).written(), (uint64_t)n * point_bytes});
      out.skip((uint64_t)n * point_bytes);
      return;
    }
    const bool gpu = gpu_ && gpu_->device;
    const size_t block = gpu ? kGpuBlock : kBlock;
    std::vector<uint8_t> buf(std::min(n, block) * point_bytes);
    for (size_t b = 0; b < n; b += block) {
      stop_if_cancelled();  // between chunks of points (at most kGpuBlock each)
      const size_t cnt = std::min(block, n - b);
      if (gpu_ && gpu_->device) {
        std::string err;
        if (cuda::fixed_base_mul(gpu_->device, C::ID, group, reinterpret_cast<const uint8_t*>(scalars + b), cnt,
                                 buf.data(), err) == CUZK_OK) {
          out.write(buf.data(), cnt * point_bytes);
          progress_.add(cnt);
          continue;
        }
        gpu_->drop();
        build_tables(false);
      }
      if (group == CUZK_G1) g1_->mul_many(scalars + b, cnt, buf.data(), pool_);
      else g2_->mul_many(scalars + b, cnt, buf.data(), pool_);
      out.write(buf.data(), cnt * point_bytes);
      progress_.add(cnt);
    }
  }

  template <class F>
  void put_point(ByteSink& out, const FixedBaseTable<F>& table, const Fr& k) {
    uint64_t limbs[Fr::N];
    k.to_std_limbs(limbs);
    uint8_t bytes[4 * Fq::BYTES];
    curve::store_key_point(table.mul(limbs, Fr::N), bytes);
    out.write(bytes, 2 * F::BYTES);
    progress_.add(1);
  }

  void write_coefficients(ByteSink& out) {
    const uint64_t record = 12 + 32;
    const uint64_t count = r1cs_.n_terms[0] + r1cs_.n_terms[1] + n_public_ + 1;
    out.section(4, 4 + count * record);
    out.u32((uint32_t)count);
    std::vector<uint8_t> buf;
    buf.reserve(kBlock * record);
    auto put = [&](uint32_t matrix, uint32_t row, uint32_t signal, const Fr& stored) {
      const size_t at = buf.size();
      buf.resize(at + record);
      std::memcpy(&buf[at], &matrix, 4);
      std::memcpy(&buf[at + 4], &row, 4);
      std::memcpy(&buf[at + 8], &signal, 4);
      std::memcpy(&buf[at + 12], stored.l, 32);
      if (buf.size() >= kBlock * record) {
        out.write(buf.data(), buf.size());
        buf.clear();
      }
    };
    // Stored value: v * R^2 mod r, i.e. the raw limbs after two conversions (formats.md 1).
    const uint64_t term = 4 + r1cs_.n8;
    for (uint32_t c = 0; c < n_constraints_; c++) {
      const uint8_t* p = r1cs_.constraints + r1cs_.constraint_offsets[c];
      for (uint32_t m = 0; m < 2; m++) {  // A and B; C is not stored
        const uint32_t n_terms = formats::load_u32_le(p);
        p += 4;
        for (uint32_t t = 0; t < n_terms; t++, p += term)
          put(m, c, formats::load_u32_le(p), Fr::from_bytes_mont(p + 4).to_mont().to_mont());
      }
    }
    const Fr one_stored = Fr::one().to_mont();
    for (uint32_t s = 0; s <= n_public_; s++) put(0, n_constraints_ + s, s, one_stored);
    out.write(buf.data(), buf.size());
  }

  // points = false: sections 5..9 are laid out but not written (run_in_memory).
  void write_key(ByteSink& out, bool points) {
    const FixedBaseTable<Fq>& g1 = *g1_;
    const FixedBaseTable<Fq2>& g2 = *g2_;
    out.write("zkey", 4);
    out.u32(1);   // version
    out.u32(10);  // sections
    out.section(1, 4);
    out.u32(1);  // Groth16

    out.section(2, 4 + Fq::BYTES + 4 + 32 + 12 + 3 * kG1 + 3 * kG2);  // formats.md 1: 660 / 964 bytes
    out.u32((uint32_t)Fq::BYTES);
    out.write(Fq::Params::MODULUS, Fq::BYTES);  // LE limbs = LE bytes
    out.u32(32);
    out.write(Fr::Params::MODULUS, 32);
    out.u32(n_vars_);
    out.u32(n_public_);
    out.u32((uint32_t)n_);
    put_point(out, g1, alpha_);
    put_point(out, g1, beta_);
    put_point(out, g2, beta_);
    put_point(out, g2, gamma_);
    put_point(out, g1, delta_);
    put_point(out, g2, delta_);

    emit(out, 3, CUZK_G1, k_.data(), (size_t)n_public_ + 1, kG1);
    write_coefficients(out);
    emit(out, 5, CUZK_G1, u_.data(), n_vars_, kG1, points);
    emit(out, 6, CUZK_G1, v_.data(), n_vars_, kG1, points);
    emit(out, 7, CUZK_G2, v_.data(), n_vars_, kG2, points);
    emit(out, 8, CUZK_G1, k_.data() + n_public_ + 1, (size_t)n_vars_ - n_public_ - 1, kG1, points);
    emit(out, 9, CUZK_G1, h_.data(), n_, kG1, points);

    // Contributions: the circuit hash is zero (there is no ceremony transcript) and none is listed.
    out.section(10, 64 + 4);
    const uint8_t zero_hash[64] = {};
    out.write(zero_hash, sizeof zero_hash);
    out.u32(0);
  }

  const formats::R1cs& r1cs_;
  ThreadPool& pool_;
  std::shared_ptr<GpuHandle> gpu_;  // shared with the generator of a key made in memory
  const Progress& progress_;
  std::unique_ptr<FixedBaseTable<Fq>> g1_;
  std::unique_ptr<FixedBaseTable<Fq2>> g2_;
  uint32_t n_vars_ = 0, n_public_ = 0, n_constraints_ = 0, log_n_ = 0;
  uint64_t rows_ = 0;
  size_t n_ = 0;
  Fr tau_, alpha_, beta_, gamma_, delta_;
  std::vector<uint64_t> occ_start_;
  std::vector<Occurrence> occ_;
  std::vector<Fr> u_, v_, k_, h_;
  std::vector<std::pair<uint64_t, uint64_t>> skipped_;  // (offset, bytes) of the payloads run_in_memory left out
};

}  // namespace

namespace {

// Runs one of DevSetup's outputs for the r1cs's curve; a cancel between chunks becomes CUZK_ERR_CANCELLED.
template <class Run>
formats::Status with_dev_setup(const formats::R1cs& r1cs, ThreadPool& pool, uint32_t flags, const Progress& progress,
                               const char* nothing_left, std::string& err, Run&& run) {
  if (progress.cancelled()) return formats::fail(err, CUZK_ERR_CANCELLED, "setup cancelled before it started");
  std::shared_ptr<GpuHandle> gpu;
  if (!(flags & CUZK_SETUP_CPU_ONLY)) gpu = std::make_shared<GpuHandle>();
  try {
    if (r1cs.curve == CUZK_CURVE_BN254) {
      DevSetup<curve::Bn254> setup(r1cs, pool, gpu, progress);
      return run(setup);
    }
    if (r1cs.curve == CUZK_CURVE_BLS12_381) {
      DevSetup<curve::Bls12381> setup(r1cs, pool, gpu, progress);
      return run(setup);
    }
  } catch (const Cancelled&) {
    return formats::fail(err, CUZK_ERR_CANCELLED,
                         "setup cancelled after " + std::to_string(progress.done()) + " of " +
                             std::to_string(progress.total()) + " key points; " + nothing_left);
  }
  return formats::fail(err, CUZK_ERR_CURVE_MISMATCH, "r1cs: unsupported curve");
}

}  // namespace

formats::Status setup_insecure_dev(const formats::R1cs& r1cs, const std::string& zkey_path, ThreadPool& pool,
                                   uint32_t flags, const Progress& progress, cuzk_setup_info& info, std::string& err) {
  return with_dev_setup(r1cs, pool, flags, progress, "no file written", err,
                        [&](auto& setup) { return setup.run(zkey_path, info, err); });
}

formats::Status setup_insecure_dev_in_memory(const formats::R1cs& r1cs, ThreadPool& pool, uint32_t flags,
                                             const Progress& progress, cuzk_setup_info& info, formats::FileBytes& bytes,
                                             std::unique_ptr<formats::PointSource>& points, std::string& err) {
  return with_dev_setup(r1cs, pool, flags, progress, "no key made", err,
                        [&](auto& setup) { return setup.run_in_memory(bytes, points, info, err); });
}

}  // namespace cuzk::setup
