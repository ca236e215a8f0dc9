// GPU benchmarks in one executable (bench/gpu/run.sh runs each section as its own process, after
// the GPU tests of native/tests/gpu, `ctest -L gpu`, which hold the correctness checks).
//
//   gpu_bench msm [max_log]  MSMs on GPU-resident inputs (points (k0+i)*G made on the GPU, random
//                          scalars < r; a 99 % 0/1 variant), each result checked against
//                          (sum s_i (k0+i)) * G; medians. MSM_ONLY picks groups; GPU_BENCH_SWEEP=1
//                          also times every window size at 2^22 and 2^24
//   gpu_bench ntt          NTT benchmarks, both curves (2^24, 2^27)
//   gpu_bench ntt-bench [reps]  BLS12-381 NTT benchmarks only (A/B runs); ntt-one [L]: one of each
//                          transform, for a profiler
//   gpu_bench engine [max_log]  the GPU engine on synthetic keys of 2^20, 2^22, 2^24, 2^25 constraints
//                          up to 2^max_log,
//                          with its phase breakdown: by default, without H copies
//                          (EngineOptions::h_copies = 0), and with B2 on the CPU
//   gpu_bench engine-stream [log]  a batch of 4 on a BLS12-381 synthetic key of 2^log (24; 16..26):
//                          resident in one chunk and in 4, and streamed in 4 chunks, for a 90 % 0/1
//                          witness with uniform rest, one with small values skewed towards the
//                          smallest and a PoRep profile's (bits and uniform bytes); one streamed
//                          batch of each traced (where a streamed pass's time goes)
//   gpu_bench fixed-base   the development setup's fixed-base batch on the GPU, 2^20 points
//   gpu_bench msm-chunks [log]  one BLS12-381 G1 MSM of 2^log points (24) whole and in chunks, each
//                          chunk reduced and its partial sums added; traced
//   gpu_bench msm-windows [log]  one BLS12-381 G1 MSM of 2^log uniform scalars (26; 20..27) whole
//                          and in chunks of 2^22..2^24 at each window the chooser could take
//   gpu_bench msm-chunk-copies [log]  one BLS12-381 G1 MSM of 2^log uniform scalars (26; 24..27)
//                          in chunks of 2^23 and 2^24 over t = 2..4 precomputed copies of its
//                          points at windows 18..21, against t = 1 (a streamed H pass with copies)
//   gpu_bench msm-h-proof [log]  one proof's H MSM of 2^log uniform scalars (26; 24..27) over its
//                          points in chunks, the buckets kept across the chunks and reduced once:
//                          points on the GPU, and streamed from pinned host memory on a copy stream
//                          (double-buffered) as a streamed H section summed per proof would run;
//                          against the MSM whole and in chunks that reduce their own buckets
//   gpu_bench msm-acc [log]  the bucket walk's candidate forms (accumulate_variants.cuh) against the
//                          library's kernel on one plan of 2^log (24): same words first, then timed
//   gpu_bench msm-precompute [max_log]  G1 MSMs over t precomputed copies of the points
//                          (cuda/msm/bases.cuh), BLS12-381 and BN254 at 2^20, 2^22, 2^24 (2^26
//                          BLS12-381 when max_log >= 26; BLS12-381 G2 when MSM_ONLY names it):
//                          per t, windows around the chooser's,
//                          the copies' build time and memory; t = 1 (the chooser) as the baseline;
//                          every result checked like section msm's; a table at the end
// Every section prints "RESULT <name> <value> <unit>" lines; run.sh gathers them into a table.
#include "gpu_check.cuh"

using namespace cuzk;
using namespace cuzk::cuda;
using namespace cuzk::gpu_check;

namespace {

void result(const std::string& name, double v, const char* unit) {
  std::printf("RESULT %s %.3f %s\n", name.c_str(), v, unit);
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// msm benchmarks
// ---------------------------------------------------------------------------------------------
template <class HC, int G>
void msm_bench(const char* name, const std::vector<int>& logs, int reps_big, bool sweep = false) {
  using A = typename Group<HC, G>::Affine;
  using Fr = typename HC::Fr;
  const int max_log = *std::max_element(logs.begin(), logs.end());
  const size_t nmax = (size_t)1 << max_log;
  const uint64_t k0 = 0x123456789ull;
  double t0 = now_ms();
  DevArray<A> pts(nmax);
  make_points_on_gpu<HC, G>(pts, nmax, k0);
  std::printf("%s: %zu points generated in %.0f ms\n", name, nmax, now_ms() - t0);
  for (double zo : {0.0, 0.99}) {
    auto sc = random_scalars<Fr>(nmax, 17 + (zo > 0), zo);
    DevArray<uint8_t> ds(nmax * 32);
    ds.upload(sc.data());
    for (int lg : logs) {
      if (zo > 0 && lg != 24 && lg != 20) continue;
      size_t n = (size_t)1 << lg;
      auto expect = dlog_reference<HC, G>(sc, n, k0);
      int reps = lg >= 24 ? reps_big : 5;
      std::vector<double> ms;
      bool ok = true;
      for (int r = 0; r < reps + 1; r++) {
        CHECK_CUDA(cudaDeviceSynchronize());
        double a = now_ms();
        auto got = gpu_msm<HC, G>(pts.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, 0);
        double b = now_ms();
        if (r > 0) ms.push_back(b - a);
        ok &= got.equals(expect);
      }
      EXPECT(ok, "%s 2^%d (0/1 %.0f%%): wrong sum", name, lg, zo * 100);
      std::string label = std::string("msm ") + name + " 2^" + std::to_string(lg) + (zo > 0 ? " 99%01" : "");
      std::printf("%s: median %.2f ms (window %d, %u bucket scalars, %u ones) %s\n", label.c_str(), median(ms),
                  g_dev->plan.c, g_dev->plan.n_rest, g_dev->plan.n_ones, ok ? "ok" : "WRONG");
      result(label, median(ms), "ms");
      if (zo == 0 && (lg == 22 || lg == 24) && sweep && std::getenv("GPU_BENCH_SWEEP")) {  // window sizes around the chosen one
        for (int c = 14; c <= 22; c++) {
          std::vector<double> t;
          for (int r = 0; r < 3; r++) {
            CHECK_CUDA(cudaDeviceSynchronize());
            double a = now_ms();
            gpu_msm<HC, G>(pts.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, c);
            if (r) t.push_back(now_ms() - a);
          }
          std::printf("sweep %s 2^%d window %d: %.2f ms\n", name, lg, c, median(t));
        }
      }
      if (lg >= 24) {  // one traced run: where the time goes
        g_kernel_trace = true;
        gpu_msm<HC, G>(pts.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, 0);
        g_kernel_trace = false;
      }
    }
  }
}

void section_msm(int max_log) {
  std::vector<int> logs;
  for (int l : {20, 22, 24, 26})
    if (l <= max_log) logs.push_back(l);
  if (msm_selected("bls12-381 G1")) msm_bench<curve::Bls12381, 1>("bls12-381 G1", logs, 3, true);
  if (msm_selected("bn254 G1")) msm_bench<curve::Bn254, 1>("bn254 G1", logs, 3, true);
  std::vector<int> g2;
  for (int l : {20, 24})
    if (l <= max_log) g2.push_back(l);
  if (msm_selected("bls12-381 G2")) msm_bench<curve::Bls12381, 2>("bls12-381 G2", g2, 3, true);
  if (msm_selected("bn254 G2")) msm_bench<curve::Bn254, 2>("bn254 G2", {20}, 3);
}

// ---------------------------------------------------------------------------------------------
// ntt
// ---------------------------------------------------------------------------------------------
// 2^L random elements below r, Montgomery form, from an mt19937_64 seeded with `seed`.
// Medians of `reps` timed runs (after one warm-up) of the natural-order forward transform, the
// bit-reversed-out DIF alone and the proving path (inverse, then coset forward), per size.
template <class HC>
void ntt_bench(const char* name, std::vector<uint32_t> logs, int reps) {
  using HF = typename HC::Fr;
  using F = typename DeviceCurve<HC>::Fr;
  auto& ctx = g_dev->ntt<HC>();
  CHECK_OK(ctx.init(err));
  for (uint32_t L : logs) {
    size_t n = (size_t)1 << L;
    DevArray<HF> d(n);
    {
      // random elements below r (the top limb cut to 60 bits), a fresh seed per run: the kernels
      // have no data-dependent branches, but the timed inputs should not be a special pattern
      std::vector<HF> v(n);
      uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)std::chrono::steady_clock::now().time_since_epoch().count();
      for (auto& e : v) {
        uint64_t w[4];
        for (auto& y : w) {  // xorshift64*: 2^27 elements in about a second
          x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
          y = x * 0x2545f4914f6cdd1dull;
        }
        w[3] >>= 4;
        e = HF::from_raw(w);
      }
      d.upload(v.data());
      CHECK_CUDA(cudaDeviceSynchronize());
    }
    auto time = [&](auto&& fn) {
      std::vector<double> ms;
      for (int r = 0; r <= reps; r++) {
        CHECK_CUDA(cudaDeviceSynchronize());
        double a = now_ms();
        fn();
        CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
        if (r) ms.push_back(now_ms() - a);
      }
      return median(ms);
    };
    double fwd = time([&] { CHECK_OK(ctx.natural(reinterpret_cast<F*>(d.p), L, CUZK_NTT_FORWARD, false, g_dev->stream, err)); });
    double dif = time([&] { CHECK_OK(ctx.dif(reinterpret_cast<F*>(d.p), L, false, 0, false, g_dev->stream, err)); });
    double pair = time([&] { CHECK_OK(ctx.to_coset(reinterpret_cast<F*>(d.p), L, g_dev->stream, err)); });
    result(std::string("ntt ") + name + " 2^" + std::to_string(L) + " fwd nat", fwd, "ms");
    result(std::string("ntt ") + name + " 2^" + std::to_string(L) + " fwd bitrev-out", dif, "ms");
    result(std::string("ntt ") + name + " 2^" + std::to_string(L) + " inv+coset", pair, "ms");
  }
}


void section_ntt() {
  ntt_bench<curve::Bls12381>("bls12-381", {24, 27}, 5);
  ntt_bench<curve::Bn254>("bn254", {24, 27}, 5);
}

// Benchmarks only, more repetitions (A/B runs of NTT changes): BLS12-381 2^24 and 2^27.
void section_ntt_bench(int reps) { ntt_bench<curve::Bls12381>("bls12-381", {24, 27}, reps); }

// One natural-order forward transform and one proving-path pair of 2^L on BLS12-381, after a
// warm-up of each: a short process for a profiler (ncu -k regex:ntt_pass).
void section_ntt_one(uint32_t L) {
  using HC = curve::Bls12381;
  using F = DeviceCurve<HC>::Fr;
  auto& ctx = g_dev->ntt<HC>();
  CHECK_OK(ctx.init(err));
  DevArray<HC::Fr> d((size_t)1 << L);
  CHECK_CUDA(cudaMemset(d.p, 0x11, ((size_t)1 << L) * sizeof(HC::Fr)));
  for (int r = 0; r < 2; r++) {
    CHECK_OK(ctx.natural(reinterpret_cast<F*>(d.p), L, CUZK_NTT_FORWARD, false, g_dev->stream, err));
    CHECK_OK(ctx.to_coset(reinterpret_cast<F*>(d.p), L, g_dev->stream, err));
  }
  CHECK_CUDA(cudaStreamSynchronize(g_dev->stream));
  std::printf("ntt-one bls12-381 2^%u: done\n", L);
}


// ---------------------------------------------------------------------------------------------
// engine: whole proofs in the GPU engine on synthetic keys (gpu_check.cuh's SyntheticKey), with
// the phase breakdown, B2 on the GPU and on the CPU (native/tests/gpu/engine_test.cu checks the
// engine's sums against the CPU engine's)
// ---------------------------------------------------------------------------------------------
template <class HC>
void engine_bench(const char* name, const std::vector<uint32_t>& logs) {
  for (uint32_t lg : logs) {
    SyntheticKey<HC> key(lg);
    // the default (H copies chosen automatically), without copies, and B2 on the CPU
    for (int variant : {0, 1, 2}) {
      const bool b2_cpu = variant == 2, no_copies = variant == 1;
      if (b2_cpu && lg > 20) continue;  // the CPU G2 MSM takes seconds beyond this
      engine::EngineOptions options;
      options.g2_on_cpu = b2_cpu;
      options.h_copies = no_copies ? 0 : -1;
      std::unique_ptr<engine::Engine<HC>> gpu;
      double t0 = now_ms();
      CHECK_OK(make_engine<HC>(g_dev, key.view, options, cuzk::Progress(), &gpu, err));
      double setup = now_ms() - t0;
      engine::WitnessBatch batch;
      batch.n = 1;
      batch.w.push_back(key.witness.data());
      std::vector<double> ms;
      cuzk_timings rec{};
      for (int r = 0; r < 4; r++) {
        engine::PhaseTimes t(&rec, 1, CUZK_BACKEND_CUDA);
        engine::ProofSums<HC> out;
        std::string err;
        double a = now_ms();
        EXPECT(gpu->compute(batch, t, &out, err) == CUZK_OK, "engine: %s", err.c_str());
        if (r) ms.push_back(now_ms() - a);
      }
      std::string label = std::string("engine ") + name + " 2^" + std::to_string(lg) + (b2_cpu ? " B2 on CPU" : "") +
                          (no_copies ? " no H copies" : "");
      std::printf("%s: %.2f ms/proof (engine setup %.0f ms); phases ms:", label.c_str(), median(ms), setup);
      static const char* names[] = {"parse", "wcheck", "abc", "ntt_h", "msm_a", "msm_b1", "msm_b2", "msm_c",
                                    "msm_h", "batch_add", "upload", "download"};
      for (int p = 2; p < 12; p++) {
        const cuzk_interval& iv = rec.phases[p];
        if (iv.end_ns) std::printf(" %s %.2f", names[p], (iv.end_ns - iv.start_ns) / 1e6);
      }
      std::printf("\n");
      result(label, median(ms), "ms");
    }
  }
}

// engine-stream: where a streamed pass's time goes. A BLS12-381 synthetic key of 2^log, a batch of
// 4 proofs in one group: resident in one chunk, resident in 4 chunks, and every section streamed
// in 4 chunks (the budget runs' shape at 12 GiB), each timed (median of 2 batches after a
// warm-up), for two witnesses: 90 % 0/1 and the rest uniform, and a PoRep profile's (80 % 0/1,
// the rest bytes, 4 uniform public inputs). Then one streamed batch of each traced (KernelTrace
// lines for every plan, bucket walk, reduction and ones' sum of every step).
void section_engine_stream(int lg) {
  using HC = curve::Bls12381;
  using Fr = typename HC::Fr;
  SyntheticKey<HC> key((uint32_t)lg);
  constexpr size_t kBatch = 4;
  const size_t n = key.witness.size() / 32;
  // Small values of 2..8 bits, skewed towards the smallest (a few buckets hold most pairs), and a
  // PoRep witness's bytes (packed random bits: uniform over 0..255), each among 80 % 0s and 1s,
  // after the constant 1 and 4 uniform public inputs.
  std::vector<uint8_t> small = small_scalars<Fr>(n, 13, 0.8, 0.0, 8), porep(n * 32, 0);
  std::mt19937_64 rng(19);
  for (size_t i = 0; i < n; i++) porep[i * 32] = (uint8_t)(rng() % 10 < 8 ? rng() & 1 : rng() & 0xff);
  const std::vector<uint8_t> inputs = random_scalars<Fr>(4, 17, 0.0);
  for (std::vector<uint8_t>* w : {&small, &porep}) {
    std::memcpy(w->data(), key.witness.data(), 32);       // the constant 1
    std::memcpy(w->data() + 32, inputs.data(), 4 * 32);  // 4 uniform public inputs
  }
  const struct {
    const char* name;
    const std::vector<uint8_t>* w;
  } witnesses[] = {{"uniform rest", &key.witness}, {"small values", &small}, {"porep bytes", &porep}};
  struct Variant {
    const char* name;
    bool stream_all;
    uint64_t chunk;
  } variants[] = {{"resident, one chunk", false, 0},
                  {"resident, 4 chunks", false, (uint64_t)1 << (lg - 2)},
                  {"streamed, 4 chunks", true, (uint64_t)1 << (lg - 2)}};
  for (const auto& wit : witnesses)
  for (const Variant& v : variants) {
    engine::EngineOptions options;
    options.h_copies = 0;
    options.stream_all = v.stream_all;
    options.chunk_points = v.chunk;
    std::unique_ptr<engine::Engine<HC>> gpu;
    CHECK_OK(make_engine<HC>(g_dev, key.view, options, cuzk::Progress(), &gpu, err));
    engine::WitnessBatch batch;
    batch.n = kBatch;
    batch.w.assign(kBatch, wit.w->data());
    const bool traced_variant = v.stream_all;
    std::vector<double> ms;
    cuzk_timings rec[kBatch] = {};
    for (int r = 0; r < (traced_variant ? 4 : 3); r++) {
      const bool traced = traced_variant && r == 3;
      if (traced) std::printf("trace: engine-stream bls12-381 2^%d %s, %s, a batch of %zu\n", lg, v.name, wit.name, kBatch);
      g_kernel_trace = traced;
      engine::PhaseTimes t(rec, kBatch, CUZK_BACKEND_CUDA);
      std::vector<engine::ProofSums<HC>> out(kBatch);
      std::string e;
      const double a = now_ms();
      EXPECT(gpu->compute(batch, t, out.data(), e) == CUZK_OK, "engine-stream: %s", e.c_str());
      g_kernel_trace = false;
      if (r > 0 && !traced) ms.push_back((now_ms() - a) / kBatch);
    }
    const std::string label = std::string("engine-stream bls12-381 2^") + std::to_string(lg) + " " + v.name + ", " + wit.name;
    std::printf("%s: %.2f ms/proof in a batch of %zu; proof 0's phases ms:", label.c_str(), median(ms), kBatch);
    static const char* names[] = {"parse", "wcheck", "abc", "ntt_h", "msm_a", "msm_b1", "msm_b2", "msm_c",
                                  "msm_h", "batch_add", "upload", "download"};
    for (int p = 2; p < 12; p++) {
      const cuzk_interval& iv = rec[0].phases[p];
      if (iv.end_ns) std::printf(" %s %.2f", names[p], (iv.end_ns - iv.start_ns) / 1e6);
    }
    std::printf("\n");
    result(label, median(ms), "ms");
  }
}

void section_engine(int max_log) {
  std::vector<uint32_t> logs;
  for (uint32_t l : {20u, 22u, 24u, 25u})
    if ((int)l <= max_log) logs.push_back(l);
  engine_bench<curve::Bls12381>("bls12-381", logs);
  engine_bench<curve::Bn254>("bn254", logs);
}

// fixed-base: GPU time of the development setup's batch k_i * G at 2^20 points, host to host
// (native/tests/gpu/fixed_base_test.cu checks it against the CPU tables).
template <class HC, int G>
void fixed_base_bench(const char* name) {
  using Fr = typename HC::Fr;
  using F = std::conditional_t<G == 1, typename HC::Fq, typename HC::Fq2>;
  const size_t n = (size_t)1 << 20;
  auto raw = random_scalars<Fr>(n, 29 + G, 0.0);
  std::vector<Fr> sc(n);
  par_for(n, [&](size_t i) { sc[i] = Fr::from_raw(reinterpret_cast<const uint64_t*>(&raw[i * 32])).to_mont(); });
  std::vector<uint8_t> out(n * 2 * F::BYTES);
  std::vector<double> ms;
  for (int r = 0; r < 3; r++) {
    double a = now_ms();
    CHECK_OK(fixed_base_mul(g_dev, HC::ID, G == 1 ? CUZK_G1 : CUZK_G2, reinterpret_cast<const uint8_t*>(sc.data()), n,
                            out.data(), err));
    ms.push_back(now_ms() - a);
  }
  std::printf("fixed-base %s: GPU 2^20 median %.1f ms (host to host)\n", name, median(ms));
  result(std::string("fixed-base ") + name + " 2^20", median(ms), "ms");
}

void section_fixed_base() {
  fixed_base_bench<curve::Bn254, 1>("bn254 g1");
  fixed_base_bench<curve::Bn254, 2>("bn254 g2");
  fixed_base_bench<curve::Bls12381, 1>("bls12_381 g1");
  fixed_base_bench<curve::Bls12381, 2>("bls12_381 g2");
}

// ---------------------------------------------------------------------------------------------
// msm-precompute: the key-point copies of cuda/msm/bases.cuh
// ---------------------------------------------------------------------------------------------
struct PrecomputeRow {
  std::string group;
  int lg, copies, c;
  double ms, build_ms, gib;
};

// Per copy count of one group and size, the best window: "TABLE" lines.
void print_precompute_table(const std::vector<PrecomputeRow>& rows, const std::string& group, int lg) {
  std::printf("TABLE %-14s %5s %6s %4s %10s %8s %10s %8s\n", "group", "size", "copies", "c", "median ms", "vs t=1",
              "build ms", "GiB");
  double base = 0;
  for (const PrecomputeRow& r : rows)
    if (r.group == group && r.lg == lg && r.copies == 1) base = r.ms;
  for (const PrecomputeRow& r : rows) {
    if (r.group != group || r.lg != lg) continue;
    bool best = true;
    for (const PrecomputeRow& o : rows)
      if (o.group == group && o.lg == lg && o.copies == r.copies && o.ms < r.ms) best = false;
    if (best)
      std::printf("TABLE %-14s %5s %6d %4d %10.2f %8.3f %10.0f %8.2f\n", group.c_str(), ("2^" + std::to_string(lg)).c_str(),
                  r.copies, r.c, r.ms, r.ms / base, r.build_ms, r.gib);
  }
  std::fflush(stdout);
}

// G2 (each MSM ~3x a G1's, each copy 2x the memory) tries fewer shapes: t = 4 and one window a
// copy, at the chooser's window and one above.
template <class HC, int G>
void precompute_bench(const char* name, const std::vector<int>& logs, std::vector<PrecomputeRow>& rows) {
  using A = typename Group<HC, G>::Affine;
  using Fr = typename HC::Fr;
  constexpr int bits = Fr::Params::BITS;
  const int max_log = *std::max_element(logs.begin(), logs.end());
  const size_t nmax = (size_t)1 << max_log;
  const uint64_t k0 = 0x123456789ull;
  DevArray<A> pts(nmax);
  make_points_on_gpu<HC, G>(pts, nmax, k0);
  auto sc = random_scalars<Fr>(nmax, 17, 0.0);  // section msm's scalars
  DevArray<uint8_t> ds(nmax * 32);
  ds.upload(sc.data());
  const uint32_t* scalars = reinterpret_cast<const uint32_t*>(ds.p);
  MsmBases bases;
  for (int lg : logs) {
    const size_t n = (size_t)1 << lg;
    const auto expect = dlog_reference<HC, G>(sc, n, k0);
    const int reps = lg >= 24 ? 5 : 7;
    // medians of reps timed runs after a warm-up, each result checked
    auto time = [&](auto&& msm, const char* what) {
      std::vector<double> ms;
      bool ok = true;
      for (int r = 0; r <= reps; r++) {
        CHECK_CUDA(cudaDeviceSynchronize());
        double a = now_ms();
        auto got = msm();
        double b = now_ms();
        if (r > 0) ms.push_back(b - a);
        ok &= got.equals(expect);
      }
      EXPECT(ok, "msm-precompute %s 2^%d %s: wrong sum", name, lg, what);
      return median(ms);
    };
    const double base = time([&] { return gpu_msm<HC, G>(pts.p, scalars, n, true, 0); }, "t=1");
    const int base_c = g_dev->plan.c;
    std::printf("msm-pre %s 2^%d t=1 c=%d (chooser): %.2f ms\n", name, lg, base_c, base);
    result(std::string("msm-pre ") + name + " 2^" + std::to_string(lg) + " t=1 c=" + std::to_string(base_c), base, "ms");
    rows.push_back({name, lg, 1, base_c, base, 0, 0});
    if (lg == 24) {  // where the time goes
      g_kernel_trace = true;
      gpu_msm<HC, G>(pts.p, scalars, n, true, 0);
      g_kernel_trace = false;
    }
    std::vector<std::pair<int, int>> seen;
    for (int t : {2, 3, 4, 6, 0}) {  // 0: one window per copy
      if (lg >= 26 && (t == 3 || t == 6)) continue;  // each build takes seconds there
      if (G == 2 && t != 4 && t != 0) continue;
      const int chosen = msm_window_bits(n, bits, t ? t : 64);
      std::vector<int> windows = {chosen};
      if (G == 2)
        windows = {chosen, chosen + 1};
      else if (lg < 26)
        windows = {chosen - 1, chosen, chosen + 1, chosen + 2};
      for (int c : windows) {
        if (c < 12 || c > kMsmMaxWindowWithCopies) continue;
        const int copies = msm_copies_used(bits, c, t ? t : msm_windows(bits, c));
        if (std::find(seen.begin(), seen.end(), std::make_pair(copies, c)) != seen.end()) continue;
        seen.push_back({copies, c});
        const double gib = (double)copies * n * sizeof(A) / 1073741824.0;
        bases.points.release();
        size_t free_b = 0, total_b = 0;
        CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
        // the copies, the build's scratch, the plan's pairs (16 bytes each) and a margin
        const double need = gib + (double)(n * 16ull * msm_windows(bits, c) + (1ull << 31) + (4ull << 30)) / 1073741824.0;
        if (need > free_b / 1073741824.0) {
          std::printf("msm-pre %s 2^%d t=%d c=%d: skipped, needs ~%.1f GiB, %.1f free\n", name, lg, copies, c, need,
                      free_b / 1073741824.0);
          continue;
        }
        double a = now_ms();
        CHECK_OK((msm_bases_build<HC, G>(bases, pts.p, (uint32_t)n, copies, c, g_dev->stream, err)));
        const double build = now_ms() - a;
        std::string what = "t=" + std::to_string(copies) + " c=" + std::to_string(c);
        const double ms = time([&] { return gpu_msm_copies<HC, G>(bases, scalars, n, true); }, what.c_str());
        std::printf("msm-pre %s 2^%d %s: %.2f ms (%.3f of t=1), copies %.2f GiB built in %.0f ms\n", name, lg,
                    what.c_str(), ms, ms / base, gib, build);
        const std::string label = std::string(" ") + name + " 2^" + std::to_string(lg) + " " + what;
        result("msm-pre" + label, ms, "ms");
        result("msm-pre-build" + label, build, "ms");
        result("msm-pre-mem" + label, gib, "GiB");
        rows.push_back({name, lg, copies, c, ms, build, gib});
        if (lg == 24 && t == 0 && c == chosen) {
          g_kernel_trace = true;
          gpu_msm_copies<HC, G>(bases, scalars, n, true);
          g_kernel_trace = false;
        }
      }
    }
    bases.points.release();
    print_precompute_table(rows, name, lg);
  }
}

void section_msm_precompute(int max_log) {
  std::vector<PrecomputeRow> rows;
  std::vector<int> logs;
  for (int l : {20, 22, 24})
    if (l <= max_log) logs.push_back(l);
  if (msm_selected("bls12-381 G1")) precompute_bench<curve::Bls12381, 1>("bls12-381 G1", logs, rows);
  if (msm_selected("bn254 G1")) precompute_bench<curve::Bn254, 1>("bn254 G1", logs, rows);
  if (max_log >= 26 && msm_selected("bls12-381 G1")) precompute_bench<curve::Bls12381, 1>("bls12-381 G1", {26}, rows);
  // G2 only when asked for by name (MSM_ONLY): 2^24 over 12 copies is 36 GiB of points
  if (std::getenv("MSM_ONLY") && msm_selected("bls12-381 G2")) precompute_bench<curve::Bls12381, 2>("bls12-381 G2", logs, rows);
}

// The median of 3 runs of run() after a warm-up, each result checked against `expect`; printed
// and reported as RESULT `label`.
template <class HX, class Run>
void time_checked(const std::string& label, const HX& expect, Run&& run) {
  std::vector<double> ms;
  bool ok = true;
  for (int r = 0; r < 4; r++) {
    CHECK_CUDA(cudaDeviceSynchronize());
    const double a = now_ms();
    ok &= run().equals(expect);
    if (r) ms.push_back(now_ms() - a);
  }
  EXPECT(ok, "%s: wrong sum", label.c_str());
  std::printf("%s: median %.2f ms %s\n", label.c_str(), median(ms), ok ? "ok" : "WRONG");
  result(label, median(ms), "ms");
}

// One MSM in chunks of q points on the GPU at `window` (0: the chooser's), over `copies` copies of
// its points (msm/bases.cuh), as a pass runs them (gpu_check.cuh's gpu_msm_chunks).
template <class HC>
typename Group<HC, 1>::HostXyzz chunked_msm(const void* d_points, const uint8_t* d_scalars, size_t n, size_t q,
                                            MsmChunkBuffers& io, int window = 0, int copies = 1) {
  MsmChunking how;
  how.window = window;
  how.copies = copies;
  return gpu_msm_chunks<HC, 1>(d_points, nullptr, d_scalars, n, q, how, io);
}

// msm-chunks: one BLS12-381 G1 MSM of 2^log points, whole and in chunks of 2^18, 2^20, 2^22 over
// the window of a full chunk, as the engine runs a pass: each chunk reduces its own buckets and
// adds its partial sums into one set on the device, combined once on the host. Two scalar sets:
// uniform below r, and a PoRep witness's mix (40 % 0, 40 % 1, 20 % bytes). Every result checked
// against (sum s_i k_i) * G; medians of 3 after a warm-up, then one traced run in chunks of 2^20
// (KernelTrace lines: where a chunk's fixed cost goes).
void section_msm_chunks(int log) {
  using HC = curve::Bls12381;
  using A = typename Group<HC, 1>::Affine;
  const size_t n = (size_t)1 << log;
  const uint64_t k0 = 0x123456789ull;
  DevArray<A> pts(n);
  make_points_on_gpu<HC, 1>(pts, n, k0);
  MsmChunkBuffers sums;  // the chunked runs' partial sums, reused
  for (int mix = 0; mix < 2; mix++) {
    std::vector<uint8_t> sc = random_scalars<HC::Fr>(n, 31, 0.0);
    if (mix) {  // a PoRep witness: bits and bytes
      std::mt19937_64 rng(7);
      for (size_t i = 0; i < n; i++) {
        std::memset(&sc[i * 32], 0, 32);
        const uint64_t r = rng() % 10;
        sc[i * 32] = r < 4 ? 0 : r < 8 ? 1 : (uint8_t)(2 + rng() % 254);
      }
    }
    const char* mix_name = mix ? "porep-mix" : "uniform";
    DevArray<uint8_t> ds(n * 32);
    ds.upload(sc.data());
    const auto expect = dlog_reference<HC, 1>(sc, n, k0);
    auto time = [&](const std::string& label, auto&& run) { time_checked(label, expect, run); };
    const std::string base = std::string("msm-chunks bls12-381 G1 2^") + std::to_string(log) + " " + mix_name;
    time(base + " whole", [&] { return gpu_msm<HC, 1>(pts.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, 0); });
    for (int q : {18, 20, 22}) {
      if (q >= log) continue;
      time(base + " chunks 2^" + std::to_string(q),
           [&] { return chunked_msm<HC>(pts.p, ds.p, n, (size_t)1 << q, sums); });
    }
    if (log > 20) {
      std::printf("trace: %s, chunks of 2^20\n", mix_name);
      g_kernel_trace = true;
      chunked_msm<HC>(pts.p, ds.p, std::min(n, (size_t)1 << 22), (size_t)1 << 20, sums);
      g_kernel_trace = false;
    }
  }
}

// msm-windows: the window chooser against the clock. One BLS12-381 G1 MSM of 2^log uniform
// scalars (the H MSM's kind), whole and in chunks of 2^22, 2^23 and 2^24 as a streamed H pass runs
// them, at the chooser's window and at each window it could take (16, 19, 20, 22: the others leave
// a top window of a few bits); every sum checked, medians of 3. Says whether msm_window_bits's
// model (3 additions a bucket) picks the fastest window where chunks reduce their buckets each.
void section_msm_windows(int log) {
  using HC = curve::Bls12381;
  using A = typename Group<HC, 1>::Affine;
  constexpr int bits = HC::Fr::Params::BITS;
  const size_t n = (size_t)1 << log;
  const uint64_t k0 = 0x9e3779b9ull;
  DevArray<A> pts(n);
  make_points_on_gpu<HC, 1>(pts, n, k0);
  const std::vector<uint8_t> sc = random_scalars<HC::Fr>(n, 33, 0.0);
  DevArray<uint8_t> ds(n * 32);
  ds.upload(sc.data());
  const auto expect = dlog_reference<HC, 1>(sc, n, k0);
  MsmChunkBuffers sums;
  std::printf("%-34s %8s %8s %8s %8s %8s   chooser\n", "msm-windows bls12-381 G1 uniform", "c=16", "c=19", "c=20", "c=22", "best");
  for (int q : {22, 23, 24, 0}) {
    if (q >= log) continue;
    const size_t chunk = q ? (size_t)1 << q : n;
    const int chosen = msm_window_bits(std::min(chunk, n), bits);
    const std::string label = std::string("msm-windows bls12-381 G1 2^") + std::to_string(log) +
                              (q ? " chunks 2^" + std::to_string(q) : std::string(" whole"));
    double best = 1e300;
    int best_c = 0;
    std::string row;
    for (int c : {16, 19, 20, 22}) {
      std::vector<double> ms;
      bool ok = true;
      for (int r = 0; r < 4; r++) {
        CHECK_CUDA(cudaDeviceSynchronize());
        const double a = now_ms();
        const auto got = q ? chunked_msm<HC>(pts.p, ds.p, n, chunk, sums, c)
                           : gpu_msm<HC, 1>(pts.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, c);
        ok &= got.equals(expect);
        if (r) ms.push_back(now_ms() - a);
      }
      EXPECT(ok, "%s c=%d: wrong sum", label.c_str(), c);
      const double m = median(ms);
      result(label + " c=" + std::to_string(c), m, "ms");
      char cell[32];
      std::snprintf(cell, sizeof cell, " %8.2f", m);
      row += cell;
      if (m < best) best = m, best_c = c;
      // The chunks' buckets reduced (sums kept) and freed between windows: nothing else carries over.
      g_dev->msm.release();
      g_dev->plan.release();
    }
    std::printf("%-34s%s %8d   %d\n", (q ? "chunks 2^" + std::to_string(q) : std::string("whole")).c_str(), row.c_str(),
                best_c, chosen);
  }
}

// msm-chunk-copies: the H MSM of a streamed pass with precomputed copies of its points. One
// BLS12-381 G1 MSM of 2^log uniform scalars in chunks of 2^23 and 2^24 (each chunk reduces its own
// buckets and adds them into one set), over t = 2..4 copies made for window c (a chunk is its
// points at an offset into the copies, as a chunk buffer holding t slices would give it), against
// t = 1 at c = 20 and at the chooser's window; every sum checked, medians of 3. Says whether
// streaming the copies (t times the H points' traffic) pays for fewer windows reduced a chunk.
void section_msm_chunk_copies(int log) {
  using HC = curve::Bls12381;
  using A = typename Group<HC, 1>::Affine;
  constexpr int bits = HC::Fr::Params::BITS;
  const size_t n = (size_t)1 << log;
  const uint64_t k0 = 0x51ed270bull;
  DevArray<A> pts(n);
  make_points_on_gpu<HC, 1>(pts, n, k0);
  const std::vector<uint8_t> sc = random_scalars<HC::Fr>(n, 35, 0.0);
  DevArray<uint8_t> ds(n * 32);
  ds.upload(sc.data());
  const auto expect = dlog_reference<HC, 1>(sc, n, k0);
  MsmChunkBuffers sums;
  // Each variant's MSM workspace given back after it: nothing carries over to the next.
  auto time = [&](const std::string& label, auto&& run) {
    time_checked(label, expect, run);
    g_dev->msm.release();
    g_dev->plan.release();
  };
  const std::string base = "msm-chunk-copies bls12-381 G1 2^" + std::to_string(log);
  for (int q : {23, 24}) {
    if (q >= log) continue;
    const size_t chunk = (size_t)1 << q;
    const int chosen = msm_window_bits(chunk, bits);
    std::vector<int> windows = {chosen};
    if (chosen != 20) windows.push_back(20);
    for (int c : windows)
      time(base + " chunks 2^" + std::to_string(q) + " t=1 c=" + std::to_string(c),
           [&] { return chunked_msm<HC>(pts.p, ds.p, n, chunk, sums, c); });
  }
  for (int t : {2, 3, 4}) {
    for (int c : {18, 19, 20, 21}) {
      MsmBases bases;
      CHECK_OK((msm_bases_build<HC, 1>(bases, pts.p, (uint32_t)n, t, c, g_dev->stream, err)));
      if (bases.copies != msm_copies_used(bits, c, t)) continue;
      for (int q : {23, 24}) {
        if (q >= log) continue;
        time(base + " chunks 2^" + std::to_string(q) + " t=" + std::to_string(bases.copies) + " c=" + std::to_string(c),
             [&] { return chunked_msm<HC>(bases.as<A>(), ds.p, n, (size_t)1 << q, sums, c, bases.copies); });
      }
      bases.points.release();
    }
  }
}

// msm-h-proof: a streamed H section summed per proof, right after its NTTs, over its scalars on
// the GPU: each chunk of H points comes up once per proof (not once per group of proofs), but its
// buckets are kept across the chunks and reduced once, as the whole MSM does, and the H scalars
// never leave the GPU. One BLS12-381 G1 MSM of 2^log uniform scalars (the H MSM's kind): whole
// (the resident plan without copies), in chunks of 2^24 that reduce their own buckets (the
// streamed H pass), and in chunks of 2^23 and 2^24 with kept buckets at windows 19..21 in 1 and 2
// window groups, points on the GPU and streamed from pinned host memory; every sum checked,
// medians of 3; then one traced run of chunks reduced, chunks kept and whole at c = 20. Says what
// a proof's H MSM costs when its points stream past its kept buckets, and what a chunk costs.
void section_msm_h_proof(int log) {
  using HC = curve::Bls12381;
  using A = typename Group<HC, 1>::Affine;
  const size_t n = (size_t)1 << log;
  const uint64_t k0 = 0x2545f491ull;
  DevArray<A> pts(n);
  make_points_on_gpu<HC, 1>(pts, n, k0);
  PinnedBuffer host_points;
  CHECK_OK(host_points.ensure(n * sizeof(A), err));
  CHECK_CUDA(cudaMemcpy(host_points.as(), pts.p, n * sizeof(A), cudaMemcpyDeviceToHost));
  const std::vector<uint8_t> sc = random_scalars<HC::Fr>(n, 37, 0.0);
  DevArray<uint8_t> ds(n * 32);
  ds.upload(sc.data());
  const auto expect = dlog_reference<HC, 1>(sc, n, k0);
  MsmChunkBuffers io;
  // One proof's H MSM in chunks of q: points on the GPU or streamed from the host, buckets kept or not.
  auto proof_h_msm = [&](bool streamed, size_t q, bool keep, int c, int groups) {
    MsmChunking how;
    how.window = c;
    how.window_groups = groups;
    how.keep = keep;
    return gpu_msm_chunks<HC, 1>(streamed ? nullptr : pts.p, streamed ? host_points.as() : nullptr, ds.p, n, q, how, io);
  };
  auto time = [&](const std::string& label, auto&& run) {
    time_checked(label, expect, run);
    g_dev->msm.release();
    g_dev->plan.release();
  };
  const std::string base = "msm-h-proof bls12-381 G1 2^" + std::to_string(log);
  time(base + " whole", [&] { return gpu_msm<HC, 1>(pts.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, 0); });
  time(base + " device chunks 2^24 reduced c=20", [&] { return proof_h_msm(false, (size_t)1 << 24, false, 20, 1); });
  time(base + " streamed chunks 2^24 reduced c=20",
       [&] { return proof_h_msm(true, (size_t)1 << 24, false, 20, 1); });
  for (int q : {23, 24})
    for (int c : {19, 20, 21})
      for (int groups : {1, 2}) {
        if (q >= log) continue;
        const std::string shape = " chunks 2^" + std::to_string(q) + " kept c=" + std::to_string(c) + " groups=" + std::to_string(groups);
        if (q == 24 && groups == 1)
          time(base + " device" + shape, [&] { return proof_h_msm(false, (size_t)1 << q, true, c, groups); });
        time(base + " streamed" + shape,
             [&] { return proof_h_msm(true, (size_t)1 << q, true, c, groups); });
      }
  // Where a chunk's time goes beyond its share of the whole MSM: one traced run each of the chunks
  // that reduce their own buckets and of those that keep them (KernelTrace lines).
  g_kernel_trace = true;
  for (int v = 0; v < 3; v++) {
    const size_t q = v == 2 ? n : (size_t)1 << 24;
    std::printf("trace: %s %s c=20\n", base.c_str(), v == 0 ? "device chunks 2^24 reduced" : v == 1 ? "device chunks 2^24 kept" : "whole");
    CHECK_CUDA(cudaDeviceSynchronize());
    const double a = now_ms();
    const bool ok = proof_h_msm(false, q, v == 1, 20, 1).equals(expect);
    EXPECT(ok, "traced run %d: wrong sum", v);
    std::printf("traced run: %.2f ms wall %s\n", now_ms() - a, ok ? "ok" : "WRONG");
  }
  g_kernel_trace = false;
  io.kept.release();
  io.slot[0].release();
  io.slot[1].release();
}

}  // namespace

void section_msm_acc(int log);  // msm_acc.cu

int main(int argc, char** argv) {
  const std::string section = argc > 1 ? argv[1] : "";
  const int arg = argc > 2 ? std::atoi(argv[2]) : -1;
  const char* sections[] = {"msm",        "ntt",           "ntt-bench",  "ntt-one",      "engine",
                            "fixed-base", "msm-precompute", "msm-chunks", "engine-stream", "msm-windows",
                            "msm-chunk-copies", "msm-h-proof", "msm-acc"};
  if (std::find(std::begin(sections), std::end(sections), section) == std::end(sections)) {
    // the checks (field, msm-check, ntt-check, e2e, device, ...) are ctest tests now
    std::printf("unknown section '%s': gpu_bench msm|ntt|ntt-bench|ntt-one|engine|engine-stream|fixed-base|msm-precompute|"
                "msm-chunks|msm-windows|msm-chunk-copies|msm-h-proof|msm-acc [arg]; the GPU "
                "checks are `ctest -L gpu` (native/tests/gpu)\n", section.c_str());
    return 2;
  }
  return run_on_gpu0(section.c_str(), [&] {
    if (section == "msm") section_msm(arg >= 0 ? arg : 24);
    else if (section == "ntt") section_ntt();
    else if (section == "ntt-bench") section_ntt_bench(arg >= 0 ? arg : 11);
    else if (section == "ntt-one") section_ntt_one(arg >= 0 ? (uint32_t)arg : 27);
    else if (section == "engine") section_engine(arg >= 0 ? arg : 22);
    else if (section == "engine-stream") section_engine_stream(arg >= 16 && arg <= 26 ? arg : 24);
    else if (section == "msm-precompute") section_msm_precompute(arg >= 0 ? arg : 24);
    else if (section == "msm-chunks") section_msm_chunks(arg >= 0 ? arg : 24);
    else if (section == "msm-windows") section_msm_windows(arg >= 20 && arg <= 27 ? arg : 26);
    else if (section == "msm-chunk-copies") section_msm_chunk_copies(arg >= 24 && arg <= 27 ? arg : 26);
    else if (section == "msm-h-proof") section_msm_h_proof(arg >= 24 && arg <= 27 ? arg : 26);
    else if (section == "msm-acc") section_msm_acc(arg >= 20 && arg <= 26 ? arg : 24);
    else section_fixed_base();
  });
}
