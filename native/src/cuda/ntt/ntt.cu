// The NTT drivers and kernels for both scalar fields, compiled here once; see ntt.cuh.
#include "cuda/ntt/ntt.cuh"

namespace cuzk::cuda {

// mid[i] = w_{2^18}^i = W^(i * 2^10), W = w_{2^28}^(+-1), from the lo/hi tables (one product each).
template <class F>
__global__ void ntt_build_mid(F* mid, NttRoots<F> r) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (1u << kNttMidLog)) store16(mid + i, ntt_root_pow(r, i << (kNttMaxLog - kNttMidLog)));
}

// out[(L << hi_log) + j] = hi[j] * inv_n[L]: the coset pair's scaled hi tables, every L at once.
template <class F>
__global__ void ntt_build_coset_hi_scaled(F* out, const F* hi, const F* inv_n, uint32_t hi_log, uint32_t count) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) store16(out + i, load16(hi + (i & ((1u << hi_log) - 1))) * load16(inv_n + (i >> hi_log)));
}

template <class HF, class F>
cuzk_status NttContext<HF, F>::init(std::string& err) {
  if (ready_) return CUZK_OK;
  static_assert(sizeof(HF) == sizeof(F), "host and device Fr layouts");
  constexpr int s = HF::Params::TWO_ADICITY;
  HF root = HF::from_raw(HF::Params::ROOT_OF_UNITY);  // Montgomery limbs already
  for (int i = 0; i < s - (int)kNttMaxLog; i++) root = root.sqr();
  HF roots[2] = {root, root.inverse()};
  const size_t tn = (size_t)1 << kNttTwistBits, sn = (size_t)1 << (kNttMaxStages - 1);
  // both directions' lo, hi and small tables, then n^-1 for every L < kNttMaxLog
  std::vector<HF> host(2 * (2 * tn + sn) + kNttMaxLog);
  for (uint32_t L = 0; L < kNttMaxLog; L++) host[2 * (2 * tn + sn) + L] = inv_n(L);
  for (int d = 0; d < 2; d++) {
    HF* lo = host.data() + d * (2 * tn + sn);
    HF* hi = lo + tn;
    HF* sm = hi + tn;
    HF w = roots[d], step = w;
    for (uint32_t i = 0; i < kNttTwistBits; i++) step = step.sqr();  // w^(2^14)
    lo[0] = HF::one();
    hi[0] = HF::one();
    for (size_t i = 1; i < tn; i++) {
      lo[i] = lo[i - 1] * w;
      hi[i] = hi[i - 1] * step;
    }
    HF w10 = w;  // w_{2^10} = w_{2^28}^(2^18)
    for (uint32_t i = 0; i < kNttMaxLog - kNttMaxStages; i++) w10 = w10.sqr();
    sm[0] = HF::one();
    for (size_t i = 1; i < sn; i++) sm[i] = sm[i - 1] * w10;
  }
  const size_t mn = (size_t)1 << kNttMidLog, hn = (size_t)kNttMaxLog << kCosetHiLog;
  CUZK_TRY(tables_.ensure((host.size() + 2 * mn + hn) * sizeof(HF), err));
  CUZK_CU(cudaMemcpy(tables_.as(), host.data(), host.size() * sizeof(HF), cudaMemcpyHostToDevice));
  // A copy from pageable memory may return before its DMA lands, and the transforms run on a
  // non-blocking stream that does not wait for the legacy stream: wait here, once.
  CUZK_CU(cudaDeviceSynchronize());
  const F* t = tables_.as<F>();
  for (int d = 0; d < 2; d++) {
    const F* lo = t + d * (2 * tn + sn);
    F* mid = const_cast<F*>(t) + host.size() + d * mn;
    dir_[d] = NttRoots<F>{lo, lo + tn, lo + 2 * tn, mid};
    ntt_build_mid<F><<<(uint32_t)(mn / 256), 256>>>(mid, dir_[d]);
    CUZK_LAUNCHED("ntt_build_mid");
  }
  F* hi_scaled = const_cast<F*>(t) + host.size() + 2 * mn;
  ntt_build_coset_hi_scaled<F><<<(uint32_t)(hn / 256), 256>>>(hi_scaled, dir_[0].hi, t + 2 * (2 * tn + sn),
                                                                 kCosetHiLog, (uint32_t)hn);
  CUZK_LAUNCHED("ntt_build_coset_hi_scaled");
  coset_hi_scaled_ = hi_scaled;
  CUZK_CU(cudaDeviceSynchronize());
  // Tiles of 2^11 elements plus a twiddle table: up to 80 KiB of shared memory per block.
  CUZK_CU(cudaFuncSetAttribute(ntt_pass<F, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024));
  CUZK_CU(cudaFuncSetAttribute(ntt_pass<F, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024));
  ready_ = true;
  return CUZK_OK;
}

template <class HF, class F>
cuzk_status NttContext<HF, F>::dif(F* d, uint32_t L, bool inverse_roots, uint32_t first_ops, bool coset_inverse_roots,
                                   cudaStream_t s, std::string& err, uint32_t last_post, const HF& post_scale) {
  const std::vector<uint32_t> ks = split(L);
  // natural order out over several passes: out of place through scratch_ (first pass d -> scratch,
  // last pass scratch -> d). One pass is one block, which reads everything before it writes.
  F* tmp = d;
  if ((last_post & kNttPostBitrev) && ks.size() > 1) {
    CUZK_TRY(scratch_.ensure(((size_t)1 << L) * sizeof(F), err));
    tmp = scratch_.as<F>();
  }
  uint32_t s_hi = L;  // one above the next pass's top stage
  for (size_t i = 0; i < ks.size(); i++) {
    const uint32_t k = ks[i], s_lo = s_hi - k;
    const bool first = i == 0, last = i + 1 == ks.size();
    F* out = last ? d : tmp;
    const F* in = first ? d : tmp;
    CUZK_TRY(launch<false>(out, L, s_lo, k, first ? first_ops : 0, inverse_roots, coset_inverse_roots, s,
                           err, last ? last_post : 0, post_scale, in));
    s_hi = s_lo;
  }
  return CUZK_OK;
}

template <class HF, class F>
cuzk_status NttContext<HF, F>::dit(F* d, uint32_t L, bool inverse_roots, uint32_t first_ops, cudaStream_t s,
                                   std::string& err) {
  uint32_t s_lo = 0;
  bool first = true;
  for (uint32_t k : split(L)) {
    CUZK_TRY(launch<true>(d, L, s_lo, k, first ? first_ops : 0, inverse_roots, false, s, err));
    first = false;
    s_lo += k;
  }
  return CUZK_OK;
}

template <class HF, class F>
cuzk_status NttContext<HF, F>::natural(F* d, uint32_t L, uint32_t kind, bool std_form, cudaStream_t s,
                                       std::string& err) {
  const bool inverse = kind == CUZK_NTT_INVERSE || kind == CUZK_NTT_COSET_INVERSE;
  const bool coset = kind == CUZK_NTT_COSET_FORWARD || kind == CUZK_NTT_COSET_INVERSE;
  uint32_t pre = (std_form ? kNttPreToMont : 0) | (coset && !inverse ? kNttPreCoset : 0);
  if (L == 0) return CUZK_OK;  // one element: every kind is the identity (n^-1 = g^0 = 1)
  uint32_t post = kNttPostBitrev | (inverse ? kNttPostScale : 0) | (coset && inverse ? kNttPostCoset : 0) |
                  (std_form ? kNttPostFromMont : 0);
  // coset roots: forward for the input's g^x (forward coset), inverse for the output's g^-x
  return dif(d, L, inverse, pre, inverse, s, err, post, inv_n(L));
}

template <class HF, class F>
cuzk_status NttContext<HF, F>::to_coset(F* d, uint32_t L, cudaStream_t s, std::string& err) {
  if (L >= kNttMaxLog) {  // the coset generator is w_{2^(L+1)}
    err = "NTT: a coset transform of 2^" + std::to_string(L) + " needs roots of order 2^" + std::to_string(L + 1) +
          " (at most 2^" + std::to_string(kNttMaxLog) + ")";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  CUZK_TRY(dif(d, L, true, 0, false, s, err));
  return dit(d, L, false, kNttPreCosetBitrev, s, err);
}

template <class HF, class F>
template <bool Dit>
cuzk_status NttContext<HF, F>::launch(F* d, uint32_t L, uint32_t s_lo, uint32_t k, uint32_t ops,
                                      bool inverse_roots, bool coset_inverse_roots, cudaStream_t s,
                                      std::string& err, uint32_t post, const HF& post_scale, const F* src) {
  NttPassArgs<F> a;
  a.data = d;
  a.src = src ? src : d;
  a.L = L;
  a.s_lo = s_lo;
  a.k = k;
  // bit-reversed output: 2^g groups 2^(L-k-g) apart per block (see the kernel)
  a.g = (post & kNttPostBitrev) ? std::min(kNttTileLog - k, L - k) : std::min(kNttTileLog - k, s_lo);
  a.ops = ops;
  a.post = post;
  a.coset_hi_scaled = coset_hi_scaled_ + ((size_t)std::min(L, kNttMaxLog - 1) << kCosetHiLog);
  std::memcpy(&a.post_scale, &post_scale, sizeof a.post_scale);
  a.roots = dir_[inverse_roots ? 1 : 0];
  a.coset_roots = dir_[coset_inverse_roots ? 1 : 0];
  const uint32_t tile = 1u << (k + a.g);
  const uint32_t threads = std::min<uint32_t>(256, std::max<uint32_t>(32, tile / 2));
  const size_t blocks = (size_t)1 << (L - k - a.g);
  const size_t smem = (size_t)(tile + (1u << (k - 1))) * sizeof(F);
  // Also set here, per launch: cheap, and sure to reach the function this launch resolves to.
  if (smem > 48 * 1024) CUZK_CU(cudaFuncSetAttribute(ntt_pass<F, Dit>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  ntt_pass<F, Dit><<<(uint32_t)blocks, threads, smem, s>>>(a);
  CUZK_LAUNCHED(Dit ? "ntt_pass<dit>" : "ntt_pass<dif>");
  return CUZK_OK;
}

template class NttContext<curve::Bn254::Fr, DeviceCurve<curve::Bn254>::Fr>;
template class NttContext<curve::Bls12381::Fr, DeviceCurve<curve::Bls12381>::Fr>;

}  // namespace cuzk::cuda
