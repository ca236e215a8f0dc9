// Checks every point of a proving key lies on its curve, in parallel, at open time. A corrupted
// key (a flipped bit in a point) would otherwise give proofs that are silently wrong; this finds
// it once, up front, and names the section and index of the first bad point.
#pragma once

#include <string>

#include "cuzk.h"
#include "formats/zkey.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::prover {

// Sections left in the file (CUZK_KEY_POINTS_ON_DEMAND: NULL pointers) are skipped here and
// checked piece by piece with check_section_points.
cuzk_status check_key_points(const formats::ZkeyGroth16& zkey, ThreadPool& pool, std::string& err);

// The same check of n points of one section (`name` as in the messages, e.g. "A (section 5)"),
// whose first is point `first` of its section.
cuzk_status check_section_points(cuzk_curve curve, const char* name, const uint8_t* points, size_t n, bool g2,
                                 uint64_t first, ThreadPool& pool, std::string& err);

}  // namespace cuzk::prover
