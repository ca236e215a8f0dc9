// An engine's memory plan: where each point section of a key lives (resident in the engine's
// memory, streamed in, or read in place from the key), how large a chunk its MSMs and streams
// work in, whether the A/B rows are held whole or read in chunks per proof, and what the host
// holds for it. Chosen from the engine's budget (device or host memory) and the host's budget.
//
// The plan is arithmetic over an engine's costs (EngineCosts: the bytes of each buffer as that
// engine computes them), so the same function plans a prover at creation and answers
// cuzk_plan_memory for a key that is only described, on a machine without the engine's device.
#pragma once

#include <cstdint>
#include <string>

#include "cuzk.h"
#include "formats/zkey.hpp"

namespace cuzk::engine {

using formats::PointSection;
constexpr int kSections = formats::kPointSections;

// Sections summed over the same scalars: A and C over the witness (C's point of scalar i is
// C[i - n_public - 1], none for i <= n_public), B1 and B2 over the witness, H over the H scalars.
// A group is one scalar plan on the GPU, so its sections store points at the same indices, and the
// streamed sections of a group come up chunk by chunk together.
enum PointGroup : int { kGroupAC = 0, kGroupB, kGroupH, kPointGroups };
inline PointGroup group_of(PointSection s) {
  return s == formats::kSecA || s == formats::kSecC ? kGroupAC : s == formats::kSecH ? kGroupH : kGroupB;
}

// Where a section's points live while proving (cuzk_memory_plan.placement).
enum Placement : uint32_t {
  kInKey = CUZK_PLACEMENT_IN_KEY,        // read in place from the key's memory (CPU engine)
  kResident = CUZK_PLACEMENT_RESIDENT,   // stored once in the engine's memory
  kStreamed = CUZK_PLACEMENT_STREAMED,   // read in chunks per group of proofs
};

// The smallest and largest chunks a plan chooses (points). The smallest keeps a tiny budget
// plannable for a test key; below a few thousand points a chunk's fixed work dominates.
constexpr int kMinChunkLog = 10;
constexpr int kMaxChunkLog = 31;
constexpr uint64_t kMaxGroup = 1u << 20;  // the largest batch a call takes
// An H chunk of its own is at most 2^kMaxHChunkSteps times the other groups' chunk.
constexpr int kMaxHChunkSteps = 3;
// The groups an engine may sort and sum an MSM's windows in (EngineCosts::window_group_choices of
// them, fewest first): more groups, a smaller workspace at the same chunk.
constexpr int kWindowGroupChoices = 4;
constexpr uint32_t kWindowGroups[kWindowGroupChoices] = {1, 2, 4, 8};

// What a plan knows of a key: its counts, and for a key an engine has scanned, its supports (the
// points not at infinity, engine/key_memory.hpp). A key only described keeps every point.
struct KeyShape {
  uint32_t curve = CUZK_CURVE_BN254;
  uint64_t n_vars = 0, n_public = 0, domain = 0, rows = 0;  // rows = n_constraints + n_public + 1
  uint64_t coefs = 0;             // A and B coefficients together
  uint64_t row_max_coefs = 0;     // the most coefficients of one row of A or B (0: unknown)
  uint64_t coef_values = 0;       // distinct A/B coefficient values when few enough for a table of
                                  // 16-bit indices (engine::CoefTable); 0: the values themselves
  uint64_t points[kSections] = {};
  uint64_t infinity[kSections] = {};
  uint64_t support[kPointGroups] = {};  // stored points of each group
  uint64_t index_count = 0;       // support indices held (groups that drop points)
  // How fast streamed points are read from the key where they are not pinned (its PointSource's
  // rate; 0: unknown, taken as a key whose points are in memory).
  double key_read_bytes_per_s = 0;
  // Per chunk of 2^k points, the widest range of scalar indices one chunk of a support covers
  // (0: unknown, taken as the group's whole length): of any support, and of each group's.
  uint64_t span[32] = {};
  uint64_t group_span[kPointGroups][32] = {};
};

// The counts of a key with n_vars wires, n_public public inputs, n_constraints rows and `coefs`
// A and B coefficients, every point kept.
KeyShape describe_key(uint32_t curve, uint64_t n_vars, uint64_t n_public, uint64_t n_constraints, uint64_t coefs);

// What an engine's buffers cost, in bytes, by its own arithmetic (cuda/engine/gpu_costs.hpp,
// cpu/cpu_costs.hpp). A section with point_bytes 0 is read in place from the key (kInKey).
struct EngineCosts {
  const char* memory = "device";  // what the budget is of, for messages
  uint64_t fixed = 0;             // needed whatever the plan: witness, indices, margin
  uint64_t vector_bytes = 0;      // one full-length vector of the NTT stage (domain x 32)
  uint32_t vectors_min = 3;       // the fewest such vectors the engine can work with (of 3)
  // 4: a spare vector the previous proof's H scalars leave the device through while this proof's
  // a, b and c transform (only where a group keeps its H scalars on the host, the rows whole);
  // without it such a proof has one vector fewer for its own work.
  uint32_t vectors_max = 3;
  double per_vector_saved_s = 0;  // the time per proof each vector fewer costs
  uint64_t rows = 0;              // the A and B rows held whole (0: not held by the engine)
  uint64_t row_max = 0;           // the largest single row's bytes (a row chunk holds at least one)
  bool rows_can_chunk = false;    // the engine can read its rows in chunks per proof
  // MSM scratch for a chunk of 2^k points, its windows in kWindowGroups[g] groups (g below
  // window_group_choices; 1: the engine sorts them all at once), and what each group beyond the
  // first costs a chunk of one section of m points (its digits read the scalars again, a plan
  // shared by sections sorts a group again): window_group_cost_s + m * window_group_point_s.
  uint64_t msm_workspace[kWindowGroupChoices][kMaxChunkLog + 1] = {};
  uint32_t window_group_choices = 1;
  // The H section's MSM in chunks of its own, larger than the other groups' (h_own_chunk): the
  // MSM workspace as the buffers it is allocated in, each of which grows to the largest any MSM
  // run in it takes (msm_parts: the other groups' MSMs, their sum msm_workspace; h_msm_parts: an
  // H chunk's), and the scalars an H chunk brings up when H streams (h_stream_scalars).
  static constexpr int kWorkspaceParts = 12;
  bool h_own_chunk = false;
  uint64_t msm_parts[kWindowGroupChoices][kMaxChunkLog + 1][kWorkspaceParts] = {};
  uint64_t h_msm_parts[kWindowGroupChoices][kMaxChunkLog + 1][kWorkspaceParts] = {};
  uint64_t h_stream_scalars[kMaxChunkLog + 1] = {};
  double window_group_cost_s = 0, window_group_point_s = 0;
  uint64_t stream_scalars[kMaxChunkLog + 1] = {};  // a streamed chunk's scalar buffer (only when one streams)
  uint64_t largest_msm = 0;       // points of the largest MSM (a chunk of this many is no chunking)
  uint64_t stored[kSections] = {};       // points the engine would hold of each section
  uint64_t point_bytes[kSections] = {};  // bytes a point of each section takes in the engine
  uint64_t scalar_bytes_per_proof[kSections] = {};  // scalars a streamed section uploads per proof
  uint64_t h_kept_per_proof = 0;  // bytes a proof keeps for a group when H streams (domain x 32)
  bool kept_on_host = false;      // those kept bytes are host memory (GPU) or the engine's own (CPU)
  uint32_t stream_buffers = 2;    // chunk buffers a streamed section comes up through
  bool streams_groups = false;    // a group's streamed sections come up together (one buffer holds them all)
  double link_bytes_per_s = 25e9; // the engine's read rate for streamed bytes (PCIe, or a file)
  // GPU: how fast a streamed section that is not pinned is packed from the key on the host (its
  // points in memory, its file, or its generator), beside the link.
  double key_read_bytes_per_s = 6e9;
  double chunk_cost_s = 0.5e-3;   // the fixed cost of one more chunk of an MSM
  double h_chunk_cost_s = 0;      // of the H MSM's (its dense scalars take a wide window: more
                                  // buckets to reduce a chunk); 0: chunk_cost_s
  double row_chunk_cost_s = 30e-6;  // the fixed cost of one more chunk of rows read (its copies, its launch)
  // The engine can hand the memory of a proof's own work (the witness on it, the NTT vectors, the
  // row chunks) to a group's streamed sums (the MSM workspace, the stream buffers) and back, once
  // per group: the two phases then take turns in the same bytes.
  bool phases_share = false;
  uint64_t proof_only = 0;        // of fixed: what only a proof's own work holds (its witness)
  double phase_switch_s = 0;      // one hand-over and back (frees and allocations), per group
  // The engine can run proof p+1's own work (witness upload, a/b/c, NTTs) beside proof p's MSMs,
  // with a second witness and set of NTT vectors, when every section is resident and the rows whole.
  bool proofs_overlap = false;
  // Precomputed copies of the H points (GPU, cuda/msm/bases.cuh), made at prover creation when H
  // is resident in one chunk: for t copies asked (2..kMaxHCopies), the window they are made for and
  // the copies that window uses (0: none possible). While they are made the copies (copy 0 too)
  // and h_copies_scratch are held beside the resident points; after, used - 1 copies beyond them
  // (copy 0 replaces the points).
  static constexpr int kMaxHCopies = 64;
  static constexpr int kMaxAutoHCopies = 16;  // the most the plan chooses by itself
  uint64_t h_copy_bytes = 0;          // one copy of the stored H points (0: no copies in this engine)
  uint64_t h_copies_auto_from = 0;    // H points below which automatic copies gain nothing
  uint64_t h_copies_scratch = 0;      // scratch held while they are made
  int h_copies_window[kMaxHCopies + 1] = {};
  int h_copies_used[kMaxHCopies + 1] = {};
};

// The caller's limits and forced choices (cuzk_prover_options, cuzk_plan_request).
struct PlanLimits {
  uint64_t budget = 0;       // bytes of the engine's memory; must be set (automatic resolved by the caller)
  uint64_t host_budget = 0;  // bytes of host memory the plan may take beyond the key
  uint64_t batch = 1;        // proofs per call the plan is judged for (traffic per proof; a prover: 1)
  bool stream_all = false;   // every held section streamed
  bool stream_rows = false;  // rows in chunks (when the engine can)
  bool overlap = false;      // proofs overlapped where the room allows (a second proof's buffers)
  int h_copies = -1;         // copies of the H points: -1 the plan chooses, 0 or 1 none, else that many
  uint64_t chunk_points = 0; // forced MSM chunk (a power of two); 0 = chosen
};

struct MemoryPlan {
  const char* memory = "device";
  uint64_t budget = 0, host_budget = 0, batch = 1;
  uint64_t fixed = 0;               // witness, indices, margin
  uint64_t vector_bytes = 0;        // one full-length vector of the NTT stage
  uint32_t vectors = 3;             // full-length vectors the NTT stage holds
  uint64_t rows_bytes = 0;          // rows in the engine's memory: all of them, or two chunks
  uint64_t rows_chunk = 0;          // 0: rows held whole; else bytes of one chunk read per proof
  uint64_t msm_chunk = 0;           // points per MSM chunk (>= largest_msm: one chunk)
  uint64_t msm_workspace = 0;       // MSM scratch at that chunk, with a streamed chunk's scalars
  uint32_t msm_window_groups = 1;   // the groups each MSM's windows are sorted and summed in
  uint64_t h_chunk = 0;             // points per chunk of the H MSM (msm_chunk, or larger in the
                                    // same workspace: EngineCosts::h_own_chunk)
  uint32_t h_window_groups = 1;     // and the groups its windows are sorted and summed in
  uint64_t points[kSections] = {};    // points of each section in the key
  uint64_t infinity[kSections] = {};  // of which at infinity
  uint64_t stored[kSections] = {};    // points the engine holds (0 for kInKey)
  uint64_t stored_bytes[kSections] = {};
  uint64_t point_bytes[kSections] = {};
  uint32_t placement[kSections] = {};
  uint64_t group = 1;               // proofs of the judged batch that share one read of each streamed section
  uint64_t group_max = 1;           // the most proofs whose kept scalars fit (a batch's group: up to this)
  uint64_t host_bytes = 0;          // host memory the plan takes: pinned streamed points, kept H scalars
  uint32_t pinned = 0;              // bit s: streamed section s is copied to pinned host memory once
                                    // (the others are packed from the key per group)
  uint32_t stream_buffers = 2;      // chunk buffers of the widest streamed point
  bool streams_groups = false;      // a chunk buffer holds a group's streamed sections together
  bool phases_shared = false;       // a proof's work and a group's streamed sums take turns in shared_bytes
  uint64_t shared_bytes = 0;        // bytes the two phases take turns in (counted once in total)
  uint64_t phase_slack = 0;         // with shared phases, what the proof phase leaves of shared_bytes
                                    // (the streamed sums' phase the larger): room while proofs compute
  uint64_t overlap_bytes = 0;       // a second proof's witness and NTT vectors (0: proofs one after another)
  uint32_t h_copies = 0;            // copies of the H points held (copy 0 the points; 0: none)
  int h_copies_asked = 0, h_copies_window = 0;  // how they are made (msm_bases_build's copies and window)
  uint64_t h_copies_bytes = 0;      // the copies beyond the resident H points
  uint64_t min_budget = 0;          // the smallest budget this key can be planned in
  uint64_t link_bytes_per_proof = 0;  // predicted bytes read over the link per proof of the batch
  double predicted_extra_s = 0;     // predicted cost per proof over the unconstrained plan
  double predicted_groups_s = 0;    // of which the window groups beyond the first
  double predicted_h_chunks_s = 0;  // and the H MSM's chunks beyond its first

  uint64_t resident_bytes() const { return bytes_where(kResident); }
  uint64_t streamed_bytes() const { return bytes_where(kStreamed); }
  bool pinned_section(PointSection s) const { return placement[s] == kStreamed && (pinned >> s & 1u); }
  uint64_t pinned_bytes() const;
  uint64_t bytes_of(uint32_t sections) const;  // stored bytes of the sections in the mask (bit s: section s)
  // Bytes of one point of each streamed section of group g together.
  uint64_t streamed_point_bytes(PointGroup g) const;
  // Chunk buffers (two: one filling while the other is summed) of the widest streamed point, or of
  // the widest group's streamed points together when streams_groups; a streamed H chunk of its own
  // takes at most that, or the buffers are its size.
  uint64_t stream_buffer_bytes() const;
  uint64_t total() const {
    return fixed + vectors * vector_bytes + rows_bytes + msm_workspace + resident_bytes() + stream_buffer_bytes() -
           shared_bytes + overlap_bytes + h_copies_bytes;
  }
  uint64_t room() const { return budget > total() ? budget - total() : 0; }
  // The room while a proof's own work is allocated (with shared phases, the streamed sums' extra
  // bytes are free then).
  uint64_t proof_phase_room() const { return room() + phase_slack; }
  // A group's MSM chunk and window groups (H's may be its own).
  uint64_t chunk_of(PointGroup g) const { return g == kGroupH && h_chunk ? h_chunk : msm_chunk; }
  uint32_t window_groups_of(PointGroup g) const { return g == kGroupH && h_chunk ? h_window_groups : msm_window_groups; }
  uint64_t chunks_of(PointSection s) const {
    const uint64_t q = chunk_of(group_of(s));
    return q ? (stored[s] + q - 1) / q : 0;
  }

 private:
  uint64_t bytes_where(Placement where) const;
};

bool streamed(const MemoryPlan& plan, PointSection s);
bool streams_any(const MemoryPlan& plan);

// Chooses the plan: of the choices that fit the budget (MSM chunk, rows whole or chunked, the NTT
// stage's vectors, the set of sections kept resident; for each, the fewest window groups whose
// workspace fits, and where the engine can, a larger chunk of H's own), the one predicted to cost
// the least time per proof (streamed bytes
// over the link, shared by a group; rows read per proof; one more chunk's fixed work; each more
// window group's reading of the scalars), a larger chunk and fewer resident bytes on a tie. Fills plan (counts: points/infinity from the caller).
// Then, when asked (overlap), where the engine can and the chosen plan keeps everything resident
// with the rows whole, the room left for a second proof's buffers makes proofs overlap
// (overlap_bytes); then copies of a resident, unchunked H section (h_copies) from the room left
// after that, or as many as forced (CUZK_ERR_OUT_OF_MEMORY when they do not fit).
// CUZK_ERR_OUT_OF_MEMORY naming the minimum budget when nothing fits; CUZK_ERR_INVALID_ARGUMENT
// for a forced chunk that is not a power of two in [2^kMinChunkLog, 2^kMaxChunkLog].
cuzk_status plan_memory(const EngineCosts& costs, const PlanLimits& limits, MemoryPlan& plan, std::string& err);

// The group size for a batch of n under a plan (at most plan.group_max, at most n; 1 when nothing
// streams or per_proof_only).
uint64_t stream_group(const MemoryPlan& plan, uint64_t n, bool per_proof_only);

// A group the host can hold now: `group`, or fewer when its proofs' kept H scalars (`per_proof`
// bytes each) would take more than `room` bytes (a smaller group reads the streamed sections more
// often, where page-locking more than the host has would end the process); at least 1.
uint64_t group_within_room(uint64_t group, uint64_t per_proof, uint64_t room);

// The k of the smallest 2^k at least `points` (a plan's chunks are powers of two).
int chunk_log_of(uint64_t points);

// "123 bytes (0.1 MiB)", for messages.
std::string bytes_text(uint64_t bytes);

}  // namespace cuzk::engine
