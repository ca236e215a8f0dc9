#include "engine/key_memory.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstdio>
#include <cstring>

namespace cuzk::engine {

using formats::kPointSections;
using formats::kSecA;
using formats::kSecB1;
using formats::kSecB2;
using formats::kSecC;
using formats::kSecH;
using formats::ZkeyGroth16;

namespace {

constexpr uint64_t kScanChunk = 1u << 20;  // points per read of a key on demand
constexpr uint64_t kPackBlock = 1u << 16;  // points per read when packing from a file

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return false;
  return true;
}

// The scalar index of point k of section s, and back (C's points start at scalar n_public + 1).
uint64_t lead_of(const ZkeyGroth16& z, PointSection s) { return s == kSecC ? (uint64_t)z.n_public + 1 : 0; }

std::string mib(uint64_t bytes) {
  char b[48];
  std::snprintf(b, sizeof b, "%llu bytes (%.1f MiB)", (unsigned long long)bytes, bytes / 1048576.0);
  return b;
}

}  // namespace

cuzk_status upload_step(const Progress& progress, uint64_t bytes, std::string& err) {
  progress.add(bytes);
  if (!progress.cancelled()) return CUZK_OK;
  err = "cancelled during the key upload, after " + mib(progress.done()) + " of " + mib(progress.total()) + "; no prover made";
  return CUZK_ERR_CANCELLED;
}

const char* section_name(PointSection s) {
  static const char* names[kPointSections] = {"A", "B1", "B2", "C", "H"};
  return names[s];
}

cuzk_phase msm_phase(PointSection s) {
  static const cuzk_phase phases[kPointSections] = {CUZK_PHASE_MSM_A, CUZK_PHASE_MSM_B1, CUZK_PHASE_MSM_B2,
                                                    CUZK_PHASE_MSM_C, CUZK_PHASE_MSM_H};
  return phases[s];
}

cuzk_status read_points(const ZkeyGroth16& z, PointSection s, uint64_t first, uint64_t count, uint8_t* dst,
                        std::string& err) {
  const uint64_t pb = z.point_bytes(s);
  if (first > z.point_count(s) || count > z.point_count(s) - first) {
    err = std::string("points ") + std::to_string(first) + "+" + std::to_string(count) + " past section " +
          section_name(s);
    return CUZK_ERR_INTERNAL;
  }
  if (const uint8_t* p = z.points(s)) {
    std::memcpy(dst, p + first * pb, count * pb);
    return CUZK_OK;
  }
  if (!z.source) { err = "the key holds no point section " + std::string(section_name(s)); return CUZK_ERR_INTERNAL; }
  return z.source->read(s, first, count, dst, err);
}

cuzk_status CompactKey::build(const ZkeyGroth16& z, ThreadPool& pool, std::string& err) {
  const uint32_t n_of[kPointGroups] = {z.n_vars, z.n_vars, z.domain_size};
  const PointSection members[kPointGroups][2] = {{kSecA, kSecC}, {kSecB1, kSecB2}, {kSecH, kSecH}};
  std::vector<uint8_t> keep, scratch, marks(kScanChunk);
  for (int g = 0; g < kPointGroups; g++) {
    Support& sup = support[g];
    sup.n = n_of[g];
    keep.assign(sup.n, 0);
    for (int m = 0; m < (g == kGroupH ? 1 : 2); m++) {
      const PointSection s = members[g][m];
      const uint64_t pb = z.point_bytes(s), count = z.point_count(s), lead = lead_of(z, s);
      std::atomic<uint64_t> zeros{0};
      for (uint64_t lo = 0; lo < count; lo += kScanChunk) {
        const uint64_t n = std::min(kScanChunk, count - lo);
        // A generator knows its infinities from the scalars: no points made to count them.
        if (!z.points(s) && z.source && z.source->finite_marks(s, lo, n, marks.data())) {
          uint64_t local = 0;
          for (uint64_t k = 0; k < n; k++) {
            if (marks[k]) keep[lead + lo + k] = 1;
            else local++;
          }
          zeros += local;
          continue;
        }
        const uint8_t* pts = z.points(s) ? z.points(s) + lo * pb : nullptr;
        if (!pts) {
          scratch.resize(n * pb);
          if (cuzk_status st = read_points(z, s, lo, n, scratch.data(), err); st != CUZK_OK) return st;
          pts = scratch.data();
        }
        pool.parallel_range(n, [&](size_t a, size_t b) {
          uint64_t local = 0;
          for (size_t k = a; k < b; k++) {
            if (all_zero(pts + k * pb, pb)) local++;
            else keep[lead + lo + k] = 1;
          }
          zeros += local;
        }, 4096);
      }
      infinity[s] = zeros.load();
    }
    uint64_t kept = 0;
    for (uint8_t k : keep) kept += k;
    sup.all = kept == sup.n;
    sup.index.clear();
    if (!sup.all) {
      sup.index.reserve(kept);
      for (uint32_t i = 0; i < sup.n; i++)
        if (keep[i]) sup.index.push_back(i);
    }
  }
  return CUZK_OK;
}

cuzk_status CompactKey::pack(const ZkeyGroth16& z, PointSection s, uint64_t j0, uint64_t count, uint8_t* dst,
                             std::vector<uint8_t>& scratch, std::string& err) const {
  const Support& sup = support[group_of(s)];
  const uint64_t pb = z.point_bytes(s), lead = lead_of(z, s), n_points = z.point_count(s);
  if (sup.all) {  // stored point j is scalar j: one range (after C's leading infinities)
    const uint64_t zeros = j0 < lead ? std::min(count, lead - j0) : 0;
    std::memset(dst, 0, zeros * pb);
    if (count == zeros) return CUZK_OK;
    return read_points(z, s, j0 + zeros - lead, count - zeros, dst + zeros * pb, err);
  }
  const uint8_t* in_memory = z.points(s);
  uint64_t block_lo = 0, block_hi = 0;  // the points of the section held in scratch
  for (uint64_t j = j0; j < j0 + count; j++) {
    uint8_t* out = dst + (j - j0) * pb;
    const uint64_t i = sup.index[j];
    if (i < lead) { std::memset(out, 0, pb); continue; }
    const uint64_t k = i - lead;
    if (in_memory) { std::memcpy(out, in_memory + k * pb, pb); continue; }
    if (k < block_lo || k >= block_hi) {
      block_lo = k;
      block_hi = std::min(n_points, k + kPackBlock);
      scratch.resize((block_hi - block_lo) * pb);
      if (cuzk_status st = read_points(z, s, block_lo, block_hi - block_lo, scratch.data(), err); st != CUZK_OK)
        return st;
    }
    std::memcpy(out, scratch.data() + (k - block_lo) * pb, pb);
  }
  return CUZK_OK;
}

uint64_t MemoryPlan::bytes_where(Placement where, bool largest) const {
  uint64_t b = 0;
  for (int s = 0; s < kPointSections; s++)
    if (placement[s] == where) b = largest ? std::max(b, stored_bytes[s]) : b + stored_bytes[s];
  return b;
}

void describe_sections(const ZkeyGroth16& z, const CompactKey& key, const uint64_t (&point_bytes)[kPointSections],
                       MemoryPlan& plan) {
  for (int i = 0; i < kPointSections; i++) {
    const PointSection s = (PointSection)i;
    plan.points[s] = z.point_count(s);
    plan.infinity[s] = key.infinity[s];
    plan.stored[s] = point_bytes[s] ? key.stored(s) : 0;
    plan.stored_bytes[s] = plan.stored[s] * point_bytes[s];
    plan.placement[s] = point_bytes[s] ? kResident : kInKey;
  }
}

bool streamed(const MemoryPlan& plan, PointSection s) {
  return plan.placement[s] == kStreamed && plan.stored[s] > 0;
}

bool streams_any(const MemoryPlan& plan) {
  for (int s = 0; s < kPointSections; s++)
    if (streamed(plan, (PointSection)s)) return true;
  return false;
}

size_t stream_group_size(const MemoryPlan& plan, size_t n, uint64_t per_proof, uint64_t room, bool per_proof_only) {
  if (n < 2 || !streams_any(plan) || per_proof_only) return 1;
  const uint64_t fit = per_proof ? room / per_proof : n;
  return fit < 2 ? 1 : (size_t)std::min<uint64_t>(fit, n);
}

cuzk_status choose_placements(MemoryPlan& plan, bool force_stream, std::string& err) {
  uint32_t held = 0;  // sections the engine holds, as a bit set
  for (int s = 0; s < kPointSections; s++)
    if (plan.stored_bytes[s]) held |= 1u << s;
  int best = -1;
  uint64_t best_streamed = 0, best_resident = 0;
  for (uint32_t resident = 0; resident < (1u << kPointSections); resident++) {
    if ((resident & ~held) || (force_stream && resident)) continue;
    MemoryPlan p = plan;
    for (int s = 0; s < kPointSections; s++)
      if (held & (1u << s)) p.placement[s] = (resident & (1u << s)) ? kResident : kStreamed;
    if (p.total() > plan.budget) continue;
    const uint64_t streamed = p.streamed_per_proof(), res = p.resident_bytes();
    if (best < 0 || streamed < best_streamed || (streamed == best_streamed && res < best_resident)) {
      best = (int)resident;
      best_streamed = streamed;
      best_resident = res;
    }
  }
  for (int s = 0; s < kPointSections; s++)
    if (held & (1u << s)) plan.placement[s] = best >= 0 && (best & (1u << s)) ? kResident : kStreamed;
  if (best >= 0) return CUZK_OK;
  // Not even every section streamed fits: name what is needed.
  if (!held) {
    err = std::string("the key does not fit the ") + plan.memory + " memory budget of " + mib(plan.budget) +
          ": its rows and proving workspace need " + mib(plan.fixed);
    return CUZK_ERR_OUT_OF_MEMORY;
  }
  int largest = 0;
  for (int s = 0; s < kPointSections; s++)
    if (plan.stored_bytes[s] > plan.stored_bytes[largest]) largest = s;
  err = std::string("the key does not fit the ") + plan.memory + " memory budget of " + mib(plan.budget) +
        ": it needs at least " + mib(plan.total()) + " (rows and workspace " + mib(plan.fixed) +
        ", and a stream buffer for its largest section, " + section_name((PointSection)largest) + ", of " +
        mib(plan.stream_buffer_bytes()) + "; all sections resident would need " +
        mib(plan.fixed + plan.streamed_per_proof()) + ")";
  return CUZK_ERR_OUT_OF_MEMORY;
}

}  // namespace cuzk::engine
