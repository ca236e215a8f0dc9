#include "cuda/engine/gpu_costs.hpp"

#include <algorithm>

#include "cuda/engine/row_chunks.hpp"
#include "cuda/msm/msm_sizes.hpp"
#include "curve/curves.hpp"

namespace cuzk::cuda {

namespace {

using formats::kSecB2;
static_assert(engine::kWindowGroups[engine::kWindowGroupChoices - 1] <= (uint32_t)kMsmMaxWindowGroups,
              "the plan's window groups are ones msm_plan takes");

template <class C>
engine::EngineCosts costs_for(const engine::KeyShape& key, bool b2_on_cpu) {
  engine::EngineCosts c;
  c.memory = "device";
  const uint64_t fr = 32, nv = key.n_vars, nd = key.domain;
  // The witness, the supports' indices, and a margin for the runtime, the NTT tables and the MSM's
  // small buffers.
  c.fixed = nv * fr + key.index_count * 4 + 48 + (256ull << 20);
  // a, b and c through the NTTs (a ends as the H scalars); with two, c is computed again from the
  // rows once a*b is formed (one more a/b/c pass: ~14 ms at 2^26 on an H100).
  c.vector_bytes = nd * fr;
  c.vectors_min = 2;
  c.vectors_max = 4;  // the fourth: the H scalars' way out beside the next proof (engine.cu's lanes)
  c.per_vector_saved_s = (double)nd * 2.5e-10;
  // Both matrices in compressed rows: 32-bit row offsets, columns (4 bytes), and the coefficients
  // (32), their 16-bit indices into a table of the distinct values, or those indices packed with
  // the columns (row_chunks.hpp's EntryPacking).
  const uint64_t coef_bytes = EntryPacking::of(key.n_vars, key.coef_values).coef_bytes(key.coef_values, fr);
  c.rows = 2 * ((key.rows + 1) * 4 + 4 + 16) + key.coefs * (4 + coef_bytes) + key.coef_values * fr;
  // Or in chunks per proof from a pinned copy on the host: a chunk holds at least one row.
  const uint64_t row_max = std::max<uint64_t>(key.row_max_coefs, 1);
  c.row_max = RowChunkLayout::of(1, row_max, row_max, coef_bytes).bytes;
  c.rows_can_chunk = true;
  const size_t xyzz = b2_on_cpu ? sizeof(typename C::G1x) : sizeof(typename C::G2x);
  c.largest_msm = std::max({key.support[0], key.support[1], key.support[2], (uint64_t)1});
  // The H MSM may take larger chunks of its own within the same buffers. Its scalars are gathered
  // only when its support drops points (else a chunk's are a slice of them, or of the span).
  const uint64_t h_support = key.support[engine::kGroupH];
  const bool h_gathers = h_support < key.points[formats::kSecH];
  c.h_own_chunk = true;
  static_assert(MsmBuffers::kCount + 1 <= engine::EngineCosts::kWorkspaceParts, "the workspace's parts hold an MSM's buffers");
  auto parts = [](uint64_t* out, const MsmBuffers& b, uint64_t gathered) {
    for (int i = 0; i < MsmBuffers::kCount; i++) out[i] = b.bytes[i];
    out[MsmBuffers::kCount] = gathered;
  };
  const uint64_t all_scalars = std::max(key.n_vars, key.domain);
  for (int k = engine::kMinChunkLog; k <= engine::kMaxChunkLog; k++) {
    const uint64_t m = std::min<uint64_t>(1ull << k, c.largest_msm), mh = std::min<uint64_t>(1ull << k, h_support);
    // The MSM itself and the chunk's gathered scalars, its windows in each choice of groups.
    for (int g = 0; g < engine::kWindowGroupChoices; g++) {
      const int groups = (int)engine::kWindowGroups[g];
      parts(c.msm_parts[g][k], MsmBuffers::of(m, C::Fr::Params::BITS, xyzz, groups), m * fr);
      parts(c.h_msm_parts[g][k], MsmBuffers::of(mh, C::Fr::Params::BITS, sizeof(typename C::G1x), groups),
            h_gathers ? mh * fr : 0);
      c.msm_workspace[g][k] = 0;
      for (uint64_t b : c.msm_parts[g][k]) c.msm_workspace[g][k] += b;
    }
    // A streamed chunk's scalars come up as the range of indices it covers, gathered on the device;
    // two such ranges, the next one coming up while the current one is summed.
    const uint64_t span = k < 32 && key.span[k] ? key.span[k] : all_scalars;
    c.stream_scalars[k] = 2 * (std::min<uint64_t>(span, all_scalars) * fr + 16);
    const uint64_t h_span = k < 32 && key.group_span[engine::kGroupH][k] ? key.group_span[engine::kGroupH][k] : all_scalars;
    c.h_stream_scalars[k] = 2 * (std::min<uint64_t>(h_span, all_scalars) * fr + 16);
  }
  for (int s = 0; s < engine::kSections; s++) {
    c.stored[s] = key.support[engine::group_of((formats::PointSection)s)];
    c.point_bytes[s] = s == kSecB2 ? (b2_on_cpu ? 0 : sizeof(typename C::G2)) : sizeof(typename C::G1);
    c.scalar_bytes_per_proof[s] = (s == formats::kSecH ? nd : nv) * fr;
  }
  c.h_kept_per_proof = nd * fr;
  c.kept_on_host = true;
  c.link_bytes_per_s = 25e9;  // PCIe 4/5 x16 from pinned memory, conservatively
  if (key.key_read_bytes_per_s > 0) c.key_read_bytes_per_s = key.key_read_bytes_per_s;
  c.streams_groups = true;    // A with C, B1 with B2: one plan per chunk for both
  // One more chunk of a section: its plan, sort and bucket reduction; of H's, whose dense scalars
  // take a wide window (c = 20 from 2^23: 2^19 buckets a window), ~10 ms on an H100 (a 2^26 MSM
  // in chunks of 2^23, 2^24 and whole: 496, 458 and 420 ms).
  c.chunk_cost_s = 5e-3;
  c.h_chunk_cost_s = 10e-3;
  // An MSM's windows in groups (msm_plan's window_groups): each group beyond the first reads the
  // chunk's scalars again for its digits, sorts its pairs in a sort of its own, launches its
  // kernels, and a plan shared by sections sorts a group again: ~2.5 ms a group of a 2^24 chunk of
  // dense scalars on an H100 (the 2^26 H MSM in 4 and 8 groups against the chunk's time whole).
  c.window_group_choices = engine::kWindowGroupChoices;
  c.window_group_cost_s = 0.2e-3;
  c.window_group_point_s = 150e-12;
  // A group's streamed sums take the memory of the witness, the NTT vectors and the row chunks
  // (freed and allocated again around them).
  c.phases_share = true;
  c.proof_only = nv * fr;
  c.phase_switch_s = 5e-3;
  c.proofs_overlap = true;
  // Copies of the H points (msm/bases.cuh): made while the points, the copies and up to 1 GiB of
  // scratch are held; below 2^16 points an MSM is launch-bound and automatic copies gain nothing.
  const uint64_t h_points = c.stored[formats::kSecH];
  c.h_copy_bytes = h_points * sizeof(typename C::G1);
  c.h_copies_auto_from = 1u << 16;
  c.h_copies_scratch = 1ull << 30;
  constexpr int bits = C::Fr::Params::BITS;
  for (int t = 2; t <= engine::EngineCosts::kMaxHCopies && h_points; t++) {
    const int window = msm_window_bits(h_points, bits, t);
    c.h_copies_window[t] = window;
    c.h_copies_used[t] = msm_copies_used(bits, window, t);
    if ((uint64_t)c.h_copies_used[t] * h_points >= (1ull << 31)) c.h_copies_used[t] = 0;  // past 2^31 point indices
  }
  return c;
}

}  // namespace

engine::EngineCosts gpu_costs(const engine::KeyShape& key, bool b2_on_cpu) {
  return key.curve == CUZK_CURVE_BLS12_381 ? costs_for<curve::Bls12381>(key, b2_on_cpu)
                                           : costs_for<curve::Bn254>(key, b2_on_cpu);
}

}  // namespace cuzk::cuda
