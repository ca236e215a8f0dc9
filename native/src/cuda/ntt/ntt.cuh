// Number-theoretic transforms over Fr on the GPU, same convention as cpu/ntt.hpp (the roots are
// w_k = ROOT_OF_UNITY^(2^(s-k)), as ffjavascript and snarkjs use them).
//
// A transform of 2^L elements is a few passes over device memory, each doing k radix-2 stages
// (k <= 10) in shared memory on groups of 2^k elements that lie 2^s_lo apart (s_lo = the lowest
// stage of the pass). Between passes the elements are "twisted" by one power of w each: a pass of
// decimation in frequency (DIF, natural order in, bit-reversed out) is a plain size-2^k DIF on
// every group followed by multiplying the output at group position m by
// w_{2^(s_lo+k)}^(low * bitrev_k(m)), low = index mod 2^s_lo; a decimation-in-time pass (DIT,
// bit-reversed in, natural out) twists its input the same way before a plain DIT. (Checked
// against a direct DFT; the derivation is in docs/perf-log.md, ## CUDA.) The twist factors come
// from two tables of 2^14 powers each (w^e = lo[e mod 2^14] * hi[e >> 14], one product), or, for
// passes whose unit is w_{2^18} or coarser, from one table of 2^18 powers (one load, no product).
//
// Proving needs no bit reversal at all: inverse by DIF (natural -> bit-reversed), then the coset
// forward by DIT (bit-reversed -> natural) with the n^-1 and g^k scaling fused into its first
// pass. The standalone natural-order API writes the last DIF pass's output bit-reversed (fused).
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "cuda/curve/curves.cuh"
#include "cuda/runtime/runtime.cuh"

namespace cuzk::cuda {

constexpr uint32_t kNttMaxLog = 28;       // tables are built for w_{2^28} (BN254's two-adicity)
constexpr uint32_t kNttTwistBits = 14;    // two tables of 2^14 powers
constexpr uint32_t kNttMaxStages = 10;    // stages per pass
constexpr uint32_t kNttTileLog = 11;      // elements per block: 2^11 (64 KiB of shared memory)
constexpr uint32_t kNttMidLog = 18;       // a third table: w_{2^18}^i, i < 2^18 (8 MiB)

// Device tables of one direction (forward roots or their inverses).
template <class F>
struct NttRoots {
  const F* lo;     // W^i, i < 2^14, W = w_{2^28}^(+-1)
  const F* hi;     // W^(i * 2^14)
  const F* small;  // w_{2^10}^(+-j), j < 2^9: the in-group twiddles of every pass size
  const F* mid;    // w_{2^18}^(+-i), i < 2^18: twist factors of the passes that end at stage 18 or below
};

template <class F>
__device__ __forceinline__ F ntt_root_pow(const NttRoots<F>& t, uint32_t e) {
  F a = load16(t.lo + (e & ((1u << kNttTwistBits) - 1)));
  uint32_t h = e >> kNttTwistBits;
  return h ? a * load16(t.hi + h) : a;
}

// The twist factor w_{2^S}^t (t < 2^S): one load from the mid table when S <= 18 (the middle pass
// of a 2^27 transform), else the lo*hi product.
template <class F>
__device__ __forceinline__ F ntt_twist(const NttRoots<F>& r, uint32_t t, uint32_t S) {
  if (S <= kNttMidLog) return load16(r.mid + (t << (kNttMidLog - S)));
  return ntt_root_pow(r, t << (kNttMaxLog - S));
}

__host__ __device__ __forceinline__ uint32_t bitrev_bits(uint32_t x, uint32_t bits) {
#ifdef __CUDA_ARCH__
  return bits ? __brev(x) >> (32 - bits) : 0;
#else
  uint32_t y = 0;
  for (uint32_t i = 0; i < bits; i++) y = (y << 1) | ((x >> i) & 1);
  return y;
#endif
}

// What a pass does to elements besides its butterflies.
enum NttOp : uint32_t {
  kNttPreToMont = 1,       // input is standard form: multiply by R^2 first
  kNttPreCoset = 2,        // multiply input x by g^x, g = w_{2^(L+1)} (forward coset, natural order)
  kNttPreCosetBitrev = 4,  // multiply input at position p by n^-1 g^bitrev_L(p) (proving path)
};

// The natural-order output step, fused into the last DIF pass (kNttPostBitrev): the bit-reversal
// permutation, optional scale (n^-1), optional coset factor g^-x (inverse coset), optional from_mont.
enum NttPostOp : uint32_t { kNttPostScale = 1, kNttPostCoset = 2, kNttPostFromMont = 4, kNttPostBitrev = 8 };

template <class F>
__device__ __forceinline__ F ntt_post(F v, uint32_t x, uint32_t L, uint32_t ops, const F& scale, const NttRoots<F>& cr) {
  if (ops & kNttPostScale) v = v * scale;
  if (ops & kNttPostCoset) v = v * ntt_root_pow(cr, x << (kNttMaxLog - L - 1));
  if (ops & kNttPostFromMont) v = v.from_mont();
  return v;
}

template <class F>
struct NttPassArgs {
  F* data;        // output
  const F* src;   // input: data itself, except around the bit-reversed last pass (see dif())
  uint32_t L, s_lo, k, g;  // 2^k-element groups 2^s_lo apart; 2^g adjacent groups per block
  uint32_t ops;
  uint32_t post;            // NttPostOp: only on the last DIF pass (s_lo = 0)
  F post_scale;
  // kNttPreCosetBitrev: the forward hi table times n^-1 (NttContext's coset hi table for L), so
  // that n^-1 g^e = coset_roots.lo[e mod 2^14] * coset_hi_scaled[e >> 14] is one product.
  const F* coset_hi_scaled;
  NttRoots<F> roots;        // of this transform's direction
  NttRoots<F> coset_roots;  // for the g^x factors (forward or inverse)
};

// Shared-memory tiles are planes of 16 bytes: words 4h..4h+3 of element e at 16-byte slot
// h * stride + e. An element is N/4 128-bit accesses (8 32-bit ones before: docs/perf-log.md,
// CUDA #16), and a quarter-warp on 8 consecutive elements covers the 32 banks once; an
// element-major tile (32-byte rows) would put every 4th element on the same banks.
template <class F>
__device__ __forceinline__ F sm_get(const uint32_t* s, uint32_t stride, uint32_t e) {
  static_assert(F::N % 4 == 0, "16-byte planes");
  const uint4* q = reinterpret_cast<const uint4*>(s);
  F v;
#pragma unroll
  for (int h = 0; h < F::N / 4; h++) {
    const uint4 t = q[h * stride + e];
    v.l[4 * h] = t.x;
    v.l[4 * h + 1] = t.y;
    v.l[4 * h + 2] = t.z;
    v.l[4 * h + 3] = t.w;
  }
  return v;
}
template <class F>
__device__ __forceinline__ void sm_put(uint32_t* s, uint32_t stride, uint32_t e, const F& v) {
  uint4* q = reinterpret_cast<uint4*>(s);
#pragma unroll
  for (int h = 0; h < F::N / 4; h++) q[h * stride + e] = make_uint4(v.l[4 * h], v.l[4 * h + 1], v.l[4 * h + 2], v.l[4 * h + 3]);
}

// A block's tile in shared memory and the twiddles of its 2^k-point groups (see ntt_pass).
template <class F>
struct NttTile {
  uint32_t* s;   // 2^(k+g) elements, in 16-byte planes (sm_get): element m of group c at (m << g) | c
  uint32_t* tw;  // w_{2^k}^j, j < 2^(k-1)
  uint32_t n, tw_n, k, g;
};

// One radix-2 stage (pairs 2^sp apart) on every group of the tile, after a barrier.
template <class F, bool Dit>
__device__ __forceinline__ void ntt_radix2(const NttTile<F>& t, uint32_t sp) {
  __syncthreads();
  const uint32_t cols = 1u << t.g;
  for (uint32_t b = threadIdx.x; b < t.n / 2; b += blockDim.x) {
    const uint32_t c = b & (cols - 1), j = b >> t.g;
    const uint32_t lowj = j & ((1u << sp) - 1);
    const uint32_t m0 = ((j >> sp) << (sp + 1)) | lowj;
    const uint32_t e0 = (m0 << t.g) | c, e1 = ((m0 | (1u << sp)) << t.g) | c;
    F u = sm_get<F>(t.s, t.n, e0), v = sm_get<F>(t.s, t.n, e1);
    if (Dit) {
      if (sp) v = v * sm_get<F>(t.tw, t.tw_n, lowj << (t.k - 1 - sp));
      sm_put(t.s, t.n, e0, u + v);
      sm_put(t.s, t.n, e1, u - v);
    } else {
      F d = u - v;
      sm_put(t.s, t.n, e0, u + v);
      sm_put(t.s, t.n, e1, sp ? d * sm_get<F>(t.tw, t.tw_n, lowj << (t.k - 1 - sp)) : d);
    }
  }
}

// Stages s0 and s0 + 1 on quads m0 + {0, H, 2H, 3H} (H = 2^s0, low = m0 mod H), after a barrier.
// Bottom (s0 = 0): low is 0, so stage 0 has no twiddles and stage 1's first is 1: one product
// per quad instead of four (or three).
template <class F, bool Dit, bool Bottom>
__device__ __forceinline__ void ntt_radix4(const NttTile<F>& t, uint32_t s0) {
  __syncthreads();
  const uint32_t cols = 1u << t.g, s1 = s0 + 1, H = 1u << s0;
  for (uint32_t q = threadIdx.x; q < t.n / 4; q += blockDim.x) {
    const uint32_t c = q & (cols - 1), j = q >> t.g;
    const uint32_t low = Bottom ? 0 : j & (H - 1);
    const uint32_t m0 = ((j >> s0) << (s0 + 2)) | low;
    const uint32_t e0 = (m0 << t.g) | c, e1 = ((m0 + H) << t.g) | c, e2 = ((m0 + 2 * H) << t.g) | c,
                   e3 = ((m0 + 3 * H) << t.g) | c;
    F x0 = sm_get<F>(t.s, t.n, e0), x1 = sm_get<F>(t.s, t.n, e1), x2 = sm_get<F>(t.s, t.n, e2),
      x3 = sm_get<F>(t.s, t.n, e3);
    if (Dit) {
      if (!Bottom) {
        const F w0 = sm_get<F>(t.tw, t.tw_n, low << (t.k - 1 - s0));
        x1 = x1 * w0;
        x3 = x3 * w0;
      }
      F y0 = x0 + x1, y1 = x0 - x1, y2 = x2 + x3, y3 = x2 - x3;
      if (!Bottom) y2 = y2 * sm_get<F>(t.tw, t.tw_n, low << (t.k - 1 - s1));
      y3 = y3 * sm_get<F>(t.tw, t.tw_n, (low + H) << (t.k - 1 - s1));
      sm_put(t.s, t.n, e0, y0 + y2);
      sm_put(t.s, t.n, e2, y0 - y2);
      sm_put(t.s, t.n, e1, y1 + y3);
      sm_put(t.s, t.n, e3, y1 - y3);
    } else {
      F y0 = x0 + x2, y2 = x0 - x2;
      if (!Bottom) y2 = y2 * sm_get<F>(t.tw, t.tw_n, low << (t.k - 1 - s1));
      F y1 = x1 + x3, y3 = (x1 - x3) * sm_get<F>(t.tw, t.tw_n, (low + H) << (t.k - 1 - s1));
      F z1 = y0 - y1, z3 = y2 - y3;
      if (!Bottom) {
        const F w0 = sm_get<F>(t.tw, t.tw_n, low << (t.k - 1 - s0));
        z1 = z1 * w0;
        z3 = z3 * w0;
      }
      sm_put(t.s, t.n, e0, y0 + y1);
      sm_put(t.s, t.n, e1, z1);
      sm_put(t.s, t.n, e2, y2 + y3);
      sm_put(t.s, t.n, e3, z3);
    }
  }
}

// Three blocks per SM: 3 x 72 KiB of shared memory fits at k = 9, so registers are capped at 80
// (the radix-4 stages below would take 128 and leave two blocks; 80 spills a few words).
template <class F, bool Dit>
__global__ void __launch_bounds__(256, 3) ntt_pass(NttPassArgs<F> a) {
  extern __shared__ __align__(16) uint32_t smem32[];
  const uint32_t k = a.k, g = a.g, cols = 1u << g, tile_n = 1u << (k + g), tw_n = 1u << (k - 1);
  uint32_t* tile = smem32;
  uint32_t* tw = smem32 + F::N * tile_n;  // 2^(k-1) powers of w_{2^k}
  for (uint32_t i = threadIdx.x; i < tw_n; i += blockDim.x)
    sm_put(tw, tw_n, i, load16(a.roots.small + (i << (kNttMaxStages - k))));

  // Bit-reversed output (last DIF pass, s_lo = 0): the block's 2^g groups are 2^(L-k-g) groups
  // apart, so that their outputs land side by side: group hi = blockIdx.x + c * 2^(L-k-g), output
  // m goes to bitrev_L(hi * 2^k + m) = bitrev_k(m) * 2^(L-k) + bitrev_(L-k-g)(blockIdx.x) * 2^g +
  // bitrev_g(c): runs of 2^g elements.
  const bool brev = a.post & kNttPostBitrev;
  uint32_t low0 = 0;
  size_t base = 0;
  if (!brev) {
    const uint32_t col_blocks = 1u << (a.s_lo - g);
    const uint32_t hi = blockIdx.x / col_blocks;
    low0 = (blockIdx.x % col_blocks) << g;
    base = ((size_t)hi << (a.s_lo + k)) | low0;
  }
  const uint32_t S = a.s_lo + k;  // twist unit: w_{2^S}

  for (uint32_t e = threadIdx.x; e < tile_n; e += blockDim.x) {
    const uint32_t m = e >> g, c = e & (cols - 1);
    const size_t x = brev ? (((size_t)blockIdx.x + ((size_t)c << (a.L - k - g))) << k) + m
                          : base + ((size_t)m << a.s_lo) + c;
    F v = load16(a.src + x);
    if (a.ops & kNttPreToMont) v = v.to_mont();
    if (a.ops & kNttPreCoset) v = v * ntt_root_pow(a.coset_roots, (uint32_t)x << (kNttMaxLog - a.L - 1));
    if (a.ops & kNttPreCosetBitrev) {
      const uint32_t e = bitrev_bits((uint32_t)x, a.L) << (kNttMaxLog - a.L - 1);
      v = v * (load16(a.coset_roots.lo + (e & ((1u << kNttTwistBits) - 1))) * load16(a.coset_hi_scaled + (e >> kNttTwistBits)));
    }
    if (Dit && a.s_lo > 0) {
      uint32_t t = (low0 + c) * bitrev_bits(m, k);
      if (t) v = v * ntt_twist(a.roots, t, S);
    }
    sm_put(tile, tile_n, e, v);
  }

  // Stages two at a time (radix 4 in registers: half the shared-memory round trips and barriers),
  // and when k is odd one radix-2 stage, the top one (DIF: first; DIT: last). Stages 0 and 1 then
  // always share a step, whose own code leaves out the twiddles that are 1 there.
  const NttTile<F> tl{tile, tw, tile_n, tw_n, k, g};
  if (Dit) {
    if (k >= 2) ntt_radix4<F, true, true>(tl, 0);
    for (uint32_t s0 = 2; s0 + 1 < k; s0 += 2) ntt_radix4<F, true, false>(tl, s0);
    if (k & 1) ntt_radix2<F, true>(tl, k - 1);
  } else {
    if (k & 1) ntt_radix2<F, false>(tl, k - 1);
    for (uint32_t s0 = (k & 1) ? k - 3 : k - 2; s0 >= 2 && s0 < k; s0 -= 2) ntt_radix4<F, false, false>(tl, s0);
    if (k >= 2) ntt_radix4<F, false, true>(tl, 0);
  }
  __syncthreads();

  if (brev) {
    const size_t mid = (size_t)bitrev_bits(blockIdx.x, a.L - k - g) << g;
    for (uint32_t e = threadIdx.x; e < tile_n; e += blockDim.x) {
      const uint32_t m = e >> g, c = e & (cols - 1);
      const size_t y = ((size_t)bitrev_bits(m, k) << (a.L - k)) | mid | bitrev_bits(c, g);
      F v = sm_get<F>(tile, tile_n, e);
      store16(a.data + y, ntt_post(v, (uint32_t)y, a.L, a.post, a.post_scale, a.coset_roots));
    }
    return;
  }
  for (uint32_t e = threadIdx.x; e < tile_n; e += blockDim.x) {
    const uint32_t m = e >> g, c = e & (cols - 1);
    const size_t x = base + ((size_t)m << a.s_lo) + c;
    F v = sm_get<F>(tile, tile_n, e);
    if (!Dit && a.s_lo > 0) {
      uint32_t t = (low0 + c) * bitrev_bits(m, k);
      if (t) v = v * ntt_twist(a.roots, t, S);
    }
    store16(a.data + x, v);
  }
}

template <class F>
__global__ void ntt_elementwise_mont(F* data, size_t n, bool to_mont) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = to_mont ? data[i].to_mont() : data[i].from_mont();
}

// h = a*b - c on the coset, out of Montgomery form: the H-MSM scalars, written over `a`.
template <class F>
__global__ void ntt_h_scalars(F* a, const F* b, const F* c, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = (a[i] * b[i] - c[i]).from_mont();
}

// The same in two steps, for an NTT stage that holds two vectors: a <- a*b, then (once c is in b's
// place) a <- (a - c) in standard form.
template <class F>
__global__ void ntt_h_product(F* a, const F* b, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * b[i];
}
template <class F>
__global__ void ntt_h_less(F* ab, const F* c, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) ab[i] = (ab[i] - c[i]).from_mont();
}

// ---------------------------------------------------------------------------------------------
// Host side: the root tables of one scalar field on one device, and the pass drivers.
// ---------------------------------------------------------------------------------------------

// HF: the host field (field::Fp<P>); F: its device twin. The member functions are defined in
// ntt.cu, out of the class, so that the kernels are compiled (and registered) in that one file.
template <class HF, class F>
class NttContext {
 public:
  cuzk_status init(std::string& err);  // builds and uploads the root tables once

  const NttRoots<F>& forward() const { return dir_[0]; }
  const NttRoots<F>& inverse() const { return dir_[1]; }

  static HF inv_n(uint32_t L) { return HF::from_u64(1ull << L).inverse(); }

  // The stage counts of the passes: as even as possible, each <= kNttMaxStages.
  static std::vector<uint32_t> split(uint32_t L) {
    uint32_t p = (L + kNttMaxStages - 1) / kNttMaxStages;
    std::vector<uint32_t> ks;
    for (uint32_t i = 0; i < p; i++) ks.push_back(L / p + (i < L % p ? 1 : 0));
    return ks;
  }

  // DIF passes (natural -> bit-reversed), `first_ops` applied to the input of the first pass;
  // `last_post` (NttPostOp, with kNttPostBitrev: natural order out) fused into the last pass.
  cuzk_status dif(F* d, uint32_t L, bool inverse_roots, uint32_t first_ops, bool coset_inverse_roots, cudaStream_t s,
                  std::string& err, uint32_t last_post = 0, const HF& post_scale = HF::one());
  // DIT passes (bit-reversed -> natural); kNttPreCosetBitrev in `first_ops` takes the forward coset
  // roots.
  cuzk_status dit(F* d, uint32_t L, bool inverse_roots, uint32_t first_ops, cudaStream_t s, std::string& err);
  // Natural order in and out, standard or Montgomery form; kind: CUZK_NTT_*.
  cuzk_status natural(F* d, uint32_t L, uint32_t kind, bool std_form, cudaStream_t s, std::string& err);
  // The proving step for one vector: Montgomery evaluations on <w> -> evaluations on g<w>.
  cuzk_status to_coset(F* d, uint32_t L, cudaStream_t s, std::string& err);

 private:
  template <bool Dit>
  cuzk_status launch(F* d, uint32_t L, uint32_t s_lo, uint32_t k, uint32_t ops, bool inverse_roots,
                     bool coset_inverse_roots, cudaStream_t s, std::string& err, uint32_t post = 0,
                     const HF& post_scale = HF::one(), const F* src = nullptr);

  DeviceBuffer tables_;
  // The bit-reversed last pass cannot run in place (its blocks write where others read): with
  // natural order out, the first pass writes here and the last reads from here. Callers of
  // natural() on one context serialize (the ABI holds the device mutex and synchronizes).
  DeviceBuffer scratch_;
  NttRoots<F> dir_[2] = {};
  // For the coset pair of 2^L (L < kNttMaxLog): the forward hi table times n^-1, 2^kCosetHiLog
  // powers a size (the coset exponents are below 2^(kNttMaxLog - 1)), size L's at L << kCosetHiLog.
  static constexpr uint32_t kCosetHiLog = kNttMaxLog - 1 - kNttTwistBits;
  const F* coset_hi_scaled_ = nullptr;
  bool ready_ = false;
};

// Compiled once, for both scalar fields, in ntt/ntt.cu.
extern template class NttContext<curve::Bn254::Fr, DeviceCurve<curve::Bn254>::Fr>;
extern template class NttContext<curve::Bls12381::Fr, DeviceCurve<curve::Bls12381>::Fr>;

}  // namespace cuzk::cuda
