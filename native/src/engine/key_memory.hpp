// How an engine holds a key's points: only the points that are not infinity,
// compacted per group of sections that share scalars, each section either resident in the
// engine's memory or streamed in once per proof, as a memory plan chosen from a budget says.
// Both engines use this; the points come from the key's memory or, for a key opened with
// CUZK_KEY_POINTS_ON_DEMAND, from its file (formats::FileBytes::read_at).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuzk.h"
#include "formats/zkey.hpp"
#include "util/progress.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::engine {

using formats::PointSection;

// Sections summed over the same scalars: A and C over the witness (C's point of scalar i is
// C[i - n_public - 1], none for i <= n_public), B1 and B2 over the witness, H over the H scalars.
// A group is one scalar plan on the GPU, so its sections store points at the same indices.
enum PointGroup : int { kGroupAC = 0, kGroupB, kGroupH, kPointGroups };
inline PointGroup group_of(PointSection s) {
  return s == formats::kSecA || s == formats::kSecC ? kGroupAC : s == formats::kSecH ? kGroupH : kGroupB;
}
const char* section_name(PointSection s);  // "A", "B1", "B2", "C", "H"
cuzk_phase msm_phase(PointSection s);  // CUZK_PHASE_MSM_A, ... the phase of its MSM

// The scalar indices whose points a group stores: stored point j belongs to scalar index[j]
// (ascending); `all` when none is dropped (stored point j is scalar j: nothing to gather).
struct Support {
  uint32_t n = 0;  // the group's scalars: n_vars, or domain_size for H
  bool all = true;
  std::vector<uint32_t> index;
  uint64_t size() const { return all ? n : index.size(); }
};

// dst <- points [first, first + count) of section s in key encoding, from wherever the key has them.
cuzk_status read_points(const formats::ZkeyGroth16& z, PointSection s, uint64_t first, uint64_t count, uint8_t* dst,
                        std::string& err);

// The supports of a key: a scalar index is kept in a group when any of the group's sections has a
// point other than infinity there.
struct CompactKey {
  Support support[kPointGroups];
  uint64_t infinity[formats::kPointSections] = {};  // points at infinity in each section of the key

  uint64_t stored(PointSection s) const { return support[group_of(s)].size(); }
  // Scans every point section (on the pool; a key on demand is read in chunks of 2^20 points).
  cuzk_status build(const formats::ZkeyGroth16& z, ThreadPool& pool, std::string& err);
  // dst <- stored points [j0, j0 + count) of section s, key encoding (explicit infinities where
  // the group keeps an index the section has no point for). scratch: reused for reads from a file.
  cuzk_status pack(const formats::ZkeyGroth16& z, PointSection s, uint64_t j0, uint64_t count, uint8_t* dst,
                   std::vector<uint8_t>& scratch, std::string& err) const;
};

// Where a section's points live while proving (cuzk_memory_plan.placement).
enum Placement : uint32_t {
  kInKey = CUZK_PLACEMENT_IN_KEY,        // read in place from the key's memory (CPU engine)
  kResident = CUZK_PLACEMENT_RESIDENT,   // stored once in the engine's memory
  kStreamed = CUZK_PLACEMENT_STREAMED,   // read into the engine's stream buffer per proof or group of proofs
};

// An engine's memory plan for one key, and what it reports (cuzk_prover_memory_plan).
struct MemoryPlan {
  const char* memory = "device";  // what the budget is of, for messages
  uint64_t budget = 0;            // bytes the engine may use
  uint64_t fixed = 0;             // rows and proving workspace: needed whatever the placements
  uint64_t points[formats::kPointSections] = {};    // points of each section in the key
  uint64_t infinity[formats::kPointSections] = {};  // of which at infinity
  uint64_t stored[formats::kPointSections] = {};    // points the engine holds (0 for kInKey)
  uint64_t stored_bytes[formats::kPointSections] = {};
  uint32_t placement[formats::kPointSections] = {};

  uint64_t resident_bytes() const { return bytes_where(kResident, false); }
  // The largest streamed section: one buffer serves all.
  uint64_t stream_buffer_bytes() const { return bytes_where(kStreamed, true); }
  uint64_t streamed_per_proof() const { return bytes_where(kStreamed, false); }
  uint64_t total() const { return fixed + resident_bytes() + stream_buffer_bytes(); }
  // What the budget leaves after the plan (a batch's kept scalars go there: stream_group_size).
  uint64_t room() const { return budget > total() ? budget - total() : 0; }

 private:
  uint64_t bytes_where(Placement where, bool largest) const;  // the sum (or largest) of those sections' bytes
};

// Fills points/infinity/stored/stored_bytes from the compact key (point_bytes: the engine's bytes
// per point of each section; 0 leaves the section kInKey).
void describe_sections(const formats::ZkeyGroth16& z, const CompactKey& key, const uint64_t (&point_bytes)[formats::kPointSections],
                       MemoryPlan& plan);

// Chooses the placements of the sections the engine holds (stored_bytes > 0): of the sets kept
// resident whose total fits the budget, the one that streams the fewest bytes per proof (fewer
// resident bytes on a tie). force_stream: every such section streamed. CUZK_ERR_OUT_OF_MEMORY,
// naming the sizes and the budget, when not even streaming every section fits.
cuzk_status choose_placements(MemoryPlan& plan, bool force_stream, std::string& err);

// A batch with streamed sections reads each of them once per group of proofs, not once per
// proof, and computes all the group's MSMs over that section from the one read (supraseal's
// order): the engine first takes every proof of the group through its a, b, c, NTT and resident
// MSMs, keeping the scalars the streamed sections need (per_proof bytes a proof), then reads each
// streamed section and sums it with every proof's scalars. The group holds as many proofs as
// `room` (bytes left in the engine's budget and memory) keeps scalars for, at most n; 1 (every
// proof reads the sections itself, as before) when fewer than two fit, nothing is streamed, or
// per_proof_only (EngineOptions::stream_per_proof; measurements: the same proofs).
bool streams_any(const MemoryPlan& plan);
bool streamed(const MemoryPlan& plan, PointSection s);
size_t stream_group_size(const MemoryPlan& plan, size_t n, uint64_t per_proof, uint64_t room, bool per_proof_only);

// One step of an engine's key upload (CUZK_STAGE_KEY_UPLOAD, units bytes): counts `bytes` done and
// says CUZK_ERR_CANCELLED (how far it got) when the caller asked to stop; the engine then frees
// what it holds and makes no prover.
cuzk_status upload_step(const Progress& progress, uint64_t bytes, std::string& err);

}  // namespace cuzk::engine
