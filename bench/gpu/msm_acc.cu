// gpu_bench msm-acc [log]: the bucket walk's candidate forms (accumulate_variants.cuh) against the
// library's msm_accumulate on one plan of 2^log uniform scalars (24; 20..26): BLS12-381 G1, BN254
// G1 and BLS12-381 G2 (at 2^(log-2)). First the whole MSM is checked against (sum s_i k_i) G, then
// every form's buckets, carries and tails are compared word for word with the library kernel's;
// only then are the forms timed, alone (CUDA events around the kernel), round-robin over rounds,
// medians. Each form's registers, local memory and blocks an SM are printed with it. For G1 the
// reduction's segment sums and the ones' sum are compared and timed the same way in each field.
// The segments are also timed by window count (how the time steps with waves of threads). Last,
// the library's walk and merge with the plan's chunks against the chunks fitted to whole waves of
// the device (the library's choice), each MSM checked whole.
#include "accumulate_variants.cuh"
#include "gpu_check.cuh"

#include <cstring>
#include <functional>

using namespace cuzk;
using namespace cuzk::cuda;
using namespace cuzk::gpu_check;

namespace {

template <class T>
struct Tag {
  using type = T;
};

// Words where a and b differ.
__global__ void count_differences(const uint32_t* a, const uint32_t* b, size_t n, unsigned long long* out) {
  unsigned long long d = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    d += a[i] != b[i];
  if (d) atomicAdd(out, d);
}

// The kernel time of each of n forms (CUDA events on s around launch(f); prepare(f) runs before
// it, untimed), round-robin over `rounds` rounds after a warm-up round: medians, 0 for the forms
// not timed.
template <class Prepare, class Launch>
std::vector<double> round_robin_medians(size_t n, int rounds, cudaStream_t s, const std::vector<bool>& timed,
                                        Prepare&& prepare, Launch&& launch) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  std::vector<std::vector<double>> ms(n);
  for (int r = 0; r <= rounds; r++)
    for (size_t f = 0; f < n; f++) {
      if (!timed[f]) continue;
      prepare(f);
      CHECK_CUDA(cudaEventRecord(a, s));
      launch(f);
      CHECK_CUDA(cudaEventRecord(b, s));
      CHECK_CUDA(cudaEventSynchronize(b));
      float t = 0;
      CHECK_CUDA(cudaEventElapsedTime(&t, a, b));
      if (r) ms[f].push_back(t);
    }
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  std::vector<double> med(n, 0.0);
  for (size_t f = 0; f < n; f++)
    if (timed[f]) med[f] = median(ms[f]);
  return med;
}

// What a walk writes.
struct WalkOutputs {
  DevArray<uint8_t> buckets, carry, tails, tail_key;
  WalkOutputs(size_t bucket_bytes, size_t carry_bytes, size_t chunks)
      : buckets(bucket_bytes), carry(carry_bytes), tails(carry_bytes), tail_key(chunks * 4) {}
  void clear(cudaStream_t s) {
    for (auto* b : {&buckets, &carry, &tails, &tail_key}) CHECK_CUDA(cudaMemsetAsync(b->p, 0, b->n, s));
  }
  unsigned long long differences(const WalkOutputs& o) const {
    DevArray<unsigned long long> d(1);
    CHECK_CUDA(cudaMemset(d.p, 0, 8));
    for (auto [a, b] : {std::pair{&buckets, &o.buckets}, {&carry, &o.carry}, {&tails, &o.tails}, {&tail_key, &o.tail_key}})
      count_differences<<<1024, 256>>>(reinterpret_cast<const uint32_t*>(a->p), reinterpret_cast<const uint32_t*>(b->p),
                                       a->n / 4, d.p);
    CHECK_CUDA(cudaGetLastError());
    unsigned long long h = 0;
    d.download(&h);
    return h;
  }
};

struct Form {
  std::string name;
  cudaFuncAttributes attr{};
  int blocks_per_sm = 0;
  std::function<void(const MsmPlan&, const MsmShape&, const void*, WalkOutputs&, cudaStream_t)> launch;
};

template <class Kernel>
void describe(Form& f, Kernel kernel, size_t smem) {
  CHECK_CUDA(cudaFuncGetAttributes(&f.attr, kernel));
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&f.blocks_per_sm, kernel, bench::kAccThreads, smem));
}

// The library's kernel, as msm_accumulate_into launches it for fresh buckets (A, X: the group's
// walk twins).
template <class A, class X>
Form library_form() {
  Form f;
  f.name = "library";
  describe(f, msm_accumulate<A, X, false>, 0);
  f.launch = [](const MsmPlan& plan, const MsmShape& sh, const void* pts, WalkOutputs& o, cudaStream_t s) {
    msm_accumulate<A, X, false><<<ceil_div(sh.chunks, bench::kAccThreads), bench::kAccThreads, 0, s>>>(
        plan.keys, plan.vals, plan.total, plan.sentinel, sh.K, static_cast<const A*>(pts),
        reinterpret_cast<X*>(o.buckets.p), reinterpret_cast<X*>(o.carry.p), reinterpret_cast<X*>(o.tails.p),
        reinterpret_cast<uint32_t*>(o.tail_key.p));
  };
  return f;
}

// A candidate form: the walk W over points of type A (the library's or its outlined twin).
template <class A, class X, class W, int kMinBlocks>
Form candidate(const std::string& name) {
  Form f;
  f.name = name;
  constexpr size_t smem = W::kSharedBytes;
  auto kernel = bench::accumulate_variant<A, X, W, kMinBlocks>;
  describe(f, kernel, smem);
  f.launch = [kernel](const MsmPlan& plan, const MsmShape& sh, const void* pts, WalkOutputs& o, cudaStream_t s) {
    kernel<<<ceil_div(sh.chunks, bench::kAccThreads), bench::kAccThreads, smem, s>>>(
        plan.keys, plan.vals, plan.total, plan.sentinel, sh.K, static_cast<const A*>(pts),
        reinterpret_cast<X*>(o.buckets.p), reinterpret_cast<X*>(o.carry.p), reinterpret_cast<X*>(o.tails.p),
        reinterpret_cast<uint32_t*>(o.tail_key.p));
  };
  return f;
}

template <class HC>
std::vector<Form> g1_forms() {
  using A = typename Group<HC, 1>::Affine;
  using X = typename Group<HC, 1>::Xyzz;
  using FC = DFp<typename HC::Fq::Params, kCalledProducts>;
  using FS = DFp<typename HC::Fq::Params, kCalledProductsAndSquares>;
  using AC = curve::Affine<FC>;
  using XC = curve::Xyzz<FC>;
  using AS = curve::Affine<FS>;
  using XS = curve::Xyzz<FS>;
  static_assert(sizeof(AC) == sizeof(A) && sizeof(XC) == sizeof(X) && sizeof(XS) == sizeof(X), "twins share the layout");
  using bench::RegisterIO;
  using bench::SharedIO;
  using bench::Walk;
  std::vector<Form> forms{library_form<typename Group<HC, 1>::WalkAffine, typename Group<HC, 1>::WalkXyzz>(),
                          candidate<A, X, Walk<X, bench::kLibraryOrder, RegisterIO>, 1>("inline"),
                          candidate<AC, XC, Walk<XC, bench::kLibraryOrder, RegisterIO>, 1>("calls"),
                          candidate<AC, XC, Walk<XC, bench::kLibraryOrder, RegisterIO>, 4>("calls, 4 blocks"),
                          candidate<AC, XC, Walk<XC, bench::kLeanOrder, RegisterIO>, 1>("calls, lean"),
                          candidate<AC, XC, Walk<XC, bench::kLeanOrder, RegisterIO>, 4>("calls, lean, 4 blocks"),
                          candidate<AC, XC, Walk<XC, bench::kLeanOrder, SharedIO>, 4>("calls, shared, 4 blocks"),
                          candidate<AS, XS, Walk<XS, bench::kLibraryOrder, RegisterIO>, 1>("calls+sq"),
                          candidate<AS, XS, Walk<XS, bench::kLibraryOrder, RegisterIO>, 4>("calls+sq, 4 blocks"),
                          candidate<AS, XS, Walk<XS, bench::kLeanOrder, RegisterIO>, 1>("calls+sq, lean"),
                          candidate<AS, XS, Walk<XS, bench::kLeanOrder, SharedIO>, 4>("calls+sq, shared, 4 blocks"),
                          candidate<AC, XC, Walk<XC, bench::kPairedProducts, RegisterIO>, 1>("pairs"),
                          candidate<AC, XC, Walk<XC, bench::kPairedProducts, RegisterIO>, 3>("pairs, 3 blocks"),
                          candidate<AC, XC, Walk<XC, bench::kTripledProducts, RegisterIO>, 1>("triples"),
                          candidate<AC, XC, Walk<XC, bench::kTripledProducts, RegisterIO>, 3>("triples, 3 blocks")};
  // BN254's inlined walk fits 4 blocks already (106 registers): one more block is 102.
  if constexpr (X::Field::N == 8) forms.push_back(candidate<A, X, Walk<X, bench::kLibraryOrder, RegisterIO>, 5>("inline, 5 blocks"));
  return forms;
}

template <class HC>
std::vector<Form> g2_forms() {
  using A = typename Group<HC, 2>::Affine;
  using X = typename Group<HC, 2>::Xyzz;
  using bench::RegisterIO;
  using bench::SharedIO;
  using bench::Walk;
  std::vector<Form> forms{library_form<A, X>(), candidate<A, X, Walk<X, bench::kLeanOrder, RegisterIO>, 1>("lean"),
                          candidate<A, X, Walk<X, bench::kLeanOrder, SharedIO>, 3>("shared, 3 blocks")};
  return forms;
}

// The reduction's first step (msm_segments, as msm_reduce_into launches it) over the buckets the
// walk made, in the group's field (inline products) and in its twins whose products (and squares)
// are calls: T and R of every segment compared word for word, then timed.
template <class HC>
void segments_forms(const std::string& label, const void* buckets, int c, int nwin, int rounds) {
  using X = typename Group<HC, 1>::Xyzz;
  using FC = DFp<typename HC::Fq::Params, kCalledProducts>;
  using FS = DFp<typename HC::Fq::Params, kCalledProductsAndSquares>;
  const MsmShape sh = MsmShape::of(c, 1);
  const size_t segs = (size_t)nwin * sh.S;
  const cudaStream_t s = g_dev->stream;
  DevArray<X> ref_t(segs), ref_r(segs), t(segs), r(segs);
  auto launch = [&](auto field, X* out_t, X* out_r) {
    using W = curve::Xyzz<typename decltype(field)::type>;
    msm_segments<W><<<ceil_div(segs, 64), 64, 0, s>>>(static_cast<const W*>(buckets), sh.nb, sh.L, sh.S, (uint32_t)nwin,
                                                      reinterpret_cast<W*>(out_t), reinterpret_cast<W*>(out_r));
  };
  const std::vector<std::string> names{"inline", "calls", "calls+sq"};
  auto run = [&](size_t f, X* out_t, X* out_r) {
    if (f == 0) launch(Tag<typename X::Field>{}, out_t, out_r);
    else if (f == 1) launch(Tag<FC>{}, out_t, out_r);
    else launch(Tag<FS>{}, out_t, out_r);
  };
  run(0, ref_t.p, ref_r.p);
  CHECK_CUDA(cudaGetLastError());
  std::vector<bool> same(names.size(), true);
  DevArray<unsigned long long> d(1);
  for (size_t f = 1; f < names.size(); f++) {
    run(f, t.p, r.p);
    // the library's stream does not wait for the legacy stream, nor it for the library's: join first
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaMemset(d.p, 0, 8));
    count_differences<<<1024, 256>>>(reinterpret_cast<const uint32_t*>(ref_t.p), reinterpret_cast<const uint32_t*>(t.p),
                                     segs * sizeof(X) / 4, d.p);
    count_differences<<<1024, 256>>>(reinterpret_cast<const uint32_t*>(ref_r.p), reinterpret_cast<const uint32_t*>(r.p),
                                     segs * sizeof(X) / 4, d.p);
    CHECK_CUDA(cudaDeviceSynchronize());
    unsigned long long h = 0;
    d.download(&h);
    same[f] = h == 0;
    EXPECT(h == 0, "%s segments %s: %llu words differ", label.c_str(), names[f].c_str(), h);
  }
  const auto ms = round_robin_medians(names.size(), rounds, s, std::vector<bool>(names.size(), true), [](size_t) {},
                                      [&](size_t f) { run(f, t.p, r.p); });
  for (size_t f = 0; f < names.size(); f++) {
    const double m = ms[f];
    std::printf("%s segments %-10s %8.2f ms %6.3f %s\n", label.c_str(), names[f].c_str(), m, m / ms[0],
                same[f] ? "same words" : "DIFFERS");
    if (same[f]) std::printf("RESULT %s segments %s %.3f ms\n", label.c_str(), names[f].c_str(), m);
  }
  // The library's segments over the first k windows only (timing alone; the sums of the others are
  // not made): how the time steps with the waves of threads says whether a last wave of a few
  // blocks costs a full one (steps) or its share (a line).
  using WX = typename Group<HC, 1>::WalkXyzz;
  uint32_t blocks = 0;
  CHECK_OK(resident_blocks(msm_segments<WX>, 64, 0, blocks, err));
  const uint64_t resident = (uint64_t)blocks * 64;
  std::vector<int> ks;
  for (int k = 1; k <= nwin; k++) ks.push_back(k);
  const auto kms = round_robin_medians(ks.size(), rounds, s, std::vector<bool>(ks.size(), true), [](size_t) {},
                                       [&](size_t i) {
                                         const size_t n = (size_t)ks[i] * sh.S;
                                         msm_segments<WX><<<ceil_div(n, 64), 64, 0, s>>>(
                                             static_cast<const WX*>(buckets), sh.nb, sh.L, sh.S, (uint32_t)ks[i],
                                             reinterpret_cast<WX*>(t.p), reinterpret_cast<WX*>(r.p));
                                       });
  std::printf("%s segments by windows (%llu threads at once, %u a window):", label.c_str(),
              (unsigned long long)resident, sh.S);
  for (size_t i = 0; i < ks.size(); i++)
    std::printf(" %d: %.2f waves %.3f ms;", ks[i], (double)ks[i] * sh.S / (double)resident, kms[i]);
  std::printf("\n");
  std::fflush(stdout);
}

// The library's walk and merge (msm_accumulate_into) with the plan's chunks and with the chunks
// fitted to whole waves of the device (its default): each checked whole (reduced, the ones added,
// combined on the host, against the reference), then timed round-robin like the forms.
template <class HC, int G>
void waves_bench(const std::string& label, MsmPlan& plan, const void* pts,
                 const typename Group<HC, G>::HostXyzz& expect, int rounds) {
  using A = typename Group<HC, G>::Affine;
  using X = typename Group<HC, G>::Xyzz;
  EXPECT(plan.groups() == 1, "%s: the waves' check sums one window group", label.c_str());
  if (plan.groups() != 1) return;
  const cudaStream_t s = g_dev->stream;
  MsmScratch& sc = g_dev->msm;
  const MsmShape planned = MsmShape::of(plan.c, plan.total);
  uint32_t blocks = 0;
  CHECK_OK(resident_blocks(msm_accumulate<typename Group<HC, G>::WalkAffine, typename Group<HC, G>::WalkXyzz, false>,
                           kWalkThreads, 0, blocks, err));
  const uint64_t resident = (uint64_t)blocks * kWalkThreads;
  MsmShape fitted{};
  CHECK_OK((msm_walk_in_waves<HC, G>(plan, false, fitted, err)));
  const std::vector<std::pair<std::string, MsmShape>> shapes{{"planned chunks", planned}, {"in waves", fitted}};
  DeviceBuffer buckets, sums;  // gpu_msm_walked sizes them, for the timed runs too
  std::vector<bool> ok(shapes.size());
  for (size_t f = 0; f < shapes.size(); f++) {
    ok[f] = gpu_msm_walked<HC, G>(pts, shapes[f].second, buckets, sums).equals(expect);
    EXPECT(ok[f], "%s walk with %s: the MSM is wrong", label.c_str(), shapes[f].first.c_str());
  }
  auto walk = [&](size_t f) {
    CHECK_OK((msm_accumulate_into<HC, G>(plan, static_cast<const A*>(pts), sc, s, buckets.as<X>(), false, err,
                                         &shapes[f].second)));
  };
  const size_t bucket_bytes = msm_bucket_bytes(plan.c, plan.group_nwin, sizeof(X));
  const auto ms = round_robin_medians(
      shapes.size(), rounds, s, ok, [&](size_t) { CHECK_CUDA(cudaMemsetAsync(buckets.as(), 0, bucket_bytes, s)); }, walk);
  std::printf("%s walk and merge: %llu chunk threads at once\n", label.c_str(), (unsigned long long)resident);
  for (size_t f = 0; f < shapes.size(); f++) {
    const MsmShape& sh = shapes[f].second;
    std::printf("%s %-15s K %4u, %7u chunks, %5.2f waves %9.2f ms %6.3f %s\n", label.c_str(), shapes[f].first.c_str(),
                sh.K, sh.chunks, (double)sh.chunks / (double)resident, ms[f], ok[f] && ok[0] ? ms[f] / ms[0] : 0.0,
                ok[f] ? "whole MSM ok" : "WRONG");
    if (ok[f]) std::printf("RESULT %s walk %s %.3f ms\n", label.c_str(), shapes[f].first.c_str(), ms[f]);
  }
  std::fflush(stdout);
}

template <class HC, int G>
void acc_bench(const char* name, int log, std::vector<Form> forms, int rounds) {
  using A = typename Group<HC, G>::Affine;
  using X = typename Group<HC, G>::Xyzz;
  using Fr = typename HC::Fr;
  const size_t n = (size_t)1 << log;
  const uint64_t k0 = 0x2468aceull;
  DevArray<A> pts(n);
  make_points_on_gpu<HC, G>(pts, n, k0);
  const auto sc = random_scalars<Fr>(n, 29, 0.0);
  DevArray<uint8_t> ds(n * 32);
  ds.upload(sc.data());
  const std::string label = std::string("msm-acc ") + name + " 2^" + std::to_string(log);
  // The pipeline the forms feed, checked whole.
  const auto expect = dlog_reference<HC, G>(sc, n, k0);
  const bool whole_ok = gpu_msm<HC, G>(pts.p, reinterpret_cast<const uint32_t*>(ds.p), n, true, 0).equals(expect);
  EXPECT(whole_ok, "%s: the library's MSM is wrong", label.c_str());
  MsmPlan& plan = g_dev->plan;
  const cudaStream_t s = g_dev->stream;
  CHECK_OK((msm_plan<typename Fr::Params>(plan, reinterpret_cast<const uint32_t*>(ds.p), (uint32_t)n, true, 0, s, err)));
  CHECK_CUDA(cudaStreamSynchronize(s));
  const MsmShape sh = MsmShape::of(plan.c, plan.total);
  const size_t bucket_bytes = ((size_t)plan.group_nwin << (plan.c - 1)) * sizeof(X);
  std::printf("%s: window %d, %u pairs, %u chunks of %u, buckets %.0f MiB\n", label.c_str(), plan.c, plan.total,
              sh.chunks, sh.K, bucket_bytes / 1048576.0);
  WalkOutputs ref(bucket_bytes, (size_t)sh.chunks * sizeof(X), sh.chunks);
  WalkOutputs out(bucket_bytes, (size_t)sh.chunks * sizeof(X), sh.chunks);
  ref.clear(s);
  forms[0].launch(plan, sh, pts.p, ref, s);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaStreamSynchronize(s));
  std::vector<bool> same(forms.size(), true);
  for (size_t f = 1; f < forms.size(); f++) {
    out.clear(s);
    forms[f].launch(plan, sh, pts.p, out, s);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamSynchronize(s));
    const unsigned long long d = out.differences(ref);
    same[f] = d == 0;
    EXPECT(d == 0, "%s %s: %llu words differ from the library's walk", label.c_str(), forms[f].name.c_str(), d);
  }
  const auto ms = round_robin_medians(forms.size(), rounds, s, same, [&](size_t) { out.clear(s); },
                                      [&](size_t f) { forms[f].launch(plan, sh, pts.p, out, s); });
  std::printf("%-28s %9s %7s %5s %6s %6s %s\n", "form", "ms", "vs lib", "regs", "local", "blk/SM", "check");
  for (size_t f = 0; f < forms.size(); f++) {
    const double m = ms[f], base = ms[0];
    std::printf("%-28s %9.2f %7.3f %5d %6zu %6d %s\n", forms[f].name.c_str(), m, same[f] ? m / base : 0.0,
                forms[f].attr.numRegs, (size_t)forms[f].attr.localSizeBytes, forms[f].blocks_per_sm,
                f == 0 ? (whole_ok ? "whole MSM ok" : "WHOLE MSM WRONG") : same[f] ? "same words" : "DIFFERS");
    if (same[f]) std::printf("RESULT %s %s %.3f ms\n", label.c_str(), forms[f].name.c_str(), m);
  }
  std::fflush(stdout);
  if constexpr (G == 1) segments_forms<HC>(label, ref.buckets.p, plan.c, plan.group_nwin, rounds);
  waves_bench<HC, G>(label, plan, pts.p, expect, rounds);
  plan.release();
  g_dev->msm.release();
}

// The ones' sum (msm_sum_indexed, launched as msm_add_ones launches it) over 2^log listed points,
// in the group's field and in its twins whose products (and squares) are calls: the partial sums
// compared word for word, then timed like the walks.
template <class HC>
void ones_bench(int log, int rounds) {
  using A = typename Group<HC, 1>::Affine;
  using X = typename Group<HC, 1>::Xyzz;
  using FC = DFp<typename HC::Fq::Params, kCalledProducts>;
  using FS = DFp<typename HC::Fq::Params, kCalledProductsAndSquares>;
  constexpr uint32_t kThreads = 128;
  uint32_t blocks = 0;  // msm_add_ones' count: one wave of the library's kernel, for every form
  CHECK_OK(resident_blocks(msm_sum_indexed<A, X>, kThreads, kThreads * sizeof(X), blocks, err));
  blocks = std::min(blocks, kMaxOnesBlocks);
  const size_t n = (size_t)1 << log;
  DevArray<A> pts(n);
  make_points_on_gpu<HC, 1>(pts, n, 0x1357bull);
  std::vector<uint32_t> h_idx(n);
  for (size_t i = 0; i < n; i++) h_idx[i] = (uint32_t)((i * 2654435761u) & (n - 1));  // a permutation
  DevArray<uint32_t> idx(n);
  idx.upload(h_idx.data());
  const cudaStream_t s = g_dev->stream;
  auto launch = [&](auto field, X* partial) {
    using F = typename decltype(field)::type;
    msm_sum_indexed<curve::Affine<F>, curve::Xyzz<F>><<<blocks, kThreads, kThreads * sizeof(X), s>>>(
        reinterpret_cast<const curve::Affine<F>*>(pts.p), idx.p, (uint32_t)n, reinterpret_cast<curve::Xyzz<F>*>(partial));
  };
  using Fq = typename X::Field;
  const std::vector<std::string> names{"inline", "calls", "calls+sq"};
  auto run = [&](size_t f, X* partial) {
    if (f == 0) launch(Tag<Fq>{}, partial);
    else if (f == 1) launch(Tag<FC>{}, partial);
    else launch(Tag<FS>{}, partial);
  };
  DevArray<X> ref(blocks), out(blocks);
  run(0, ref.p);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaStreamSynchronize(s));
  std::vector<X> h_ref(blocks), h_out(blocks);
  ref.download(h_ref.data());
  std::vector<bool> same(names.size(), true);
  for (size_t f = 1; f < names.size(); f++) {
    run(f, out.p);
    CHECK_CUDA(cudaStreamSynchronize(s));
    out.download(h_out.data());
    same[f] = std::memcmp(h_ref.data(), h_out.data(), blocks * sizeof(X)) == 0;
    EXPECT(same[f], "ones' sum %s differs from the inlined one", names[f].c_str());
  }
  const auto ms = round_robin_medians(names.size(), rounds, s, std::vector<bool>(names.size(), true), [](size_t) {},
                                      [&](size_t f) { run(f, out.p); });
  const std::string label = std::string("msm-acc ones ") + (X::Field::N == 12 ? "bls12-381" : "bn254") + " G1 2^" +
                            std::to_string(log);
  for (size_t f = 0; f < names.size(); f++) {
    const double m = ms[f];
    std::printf("%s %-10s %8.2f ms %6.3f %s\n", label.c_str(), names[f].c_str(), m, m / ms[0],
                same[f] ? "same words" : "DIFFERS");
    if (same[f]) std::printf("RESULT %s %s %.3f ms\n", label.c_str(), names[f].c_str(), m);
  }
  std::fflush(stdout);
}

}  // namespace

void section_msm_acc(int log) {
  const int rounds = 5;
  if (msm_selected("bls12-381 G1")) acc_bench<curve::Bls12381, 1>("bls12-381 G1", log, g1_forms<curve::Bls12381>(), rounds);
  if (msm_selected("bn254 G1")) acc_bench<curve::Bn254, 1>("bn254 G1", log, g1_forms<curve::Bn254>(), rounds);
  if (msm_selected("bls12-381 G2"))
    acc_bench<curve::Bls12381, 2>("bls12-381 G2", log - 2, g2_forms<curve::Bls12381>(), rounds);
  if (msm_selected("ones")) {
    ones_bench<curve::Bls12381>(log, rounds);
    ones_bench<curve::Bn254>(log, rounds);
  }
}
