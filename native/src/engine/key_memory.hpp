// How an engine holds a key's points: only the points that are not infinity, compacted per group
// of sections that share scalars; where each section then lives is the memory plan's
// (engine/memory_plan.hpp).
// Both engines use this; the points come from the key's memory or, for a key opened with
// CUZK_KEY_POINTS_ON_DEMAND, from its file (formats::FileBytes::read_at).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuzk.h"
#include "engine/memory_plan.hpp"
#include "formats/zkey.hpp"
#include "util/progress.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::engine {

using formats::PointSection;

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

// The shape a plan needs (engine/memory_plan.hpp): the key's counts with its supports, and the
// widest scalar range a chunk of each size covers.
void shape_of(const formats::ZkeyGroth16& z, const CompactKey& key, KeyShape& out);

// One step of an engine's key upload (CUZK_STAGE_KEY_UPLOAD, units bytes): counts `bytes` done and
// says CUZK_ERR_CANCELLED (how far it got) when the caller asked to stop; the engine then frees
// what it holds and makes no prover.
cuzk_status upload_step(const Progress& progress, uint64_t bytes, std::string& err);

}  // namespace cuzk::engine
