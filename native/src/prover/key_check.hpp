// Checks every point of a proving key lies on its curve, in parallel, at open time. A corrupted
// key (a flipped bit in a point) would otherwise give proofs that are silently wrong; this finds
// it once, up front, and names the section and index of the first bad point.
#pragma once

#include <string>

#include "cuzk.h"
#include "formats/zkey.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::prover {

cuzk_status check_key_points(const formats::ZkeyGroth16& zkey, ThreadPool& pool, std::string& err);

}  // namespace cuzk::prover
