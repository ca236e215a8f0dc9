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

std::string mib(uint64_t bytes) { return bytes_text(bytes); }

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

void shape_of(const ZkeyGroth16& z, const CompactKey& key, KeyShape& out) {
  for (int i = 0; i < kPointSections; i++) {
    out.points[i] = z.point_count((PointSection)i);
    out.infinity[i] = key.infinity[i];
  }
  out.key_read_bytes_per_s = z.source ? z.source->read_bytes_per_s() : 0;
  out.index_count = 0;
  for (int g = 0; g < kPointGroups; g++) {
    const Support& sup = key.support[g];
    out.support[g] = sup.size();
    if (!sup.all) out.index_count += sup.index.size();
  }
  for (int k = 0; k < kMinChunkLog; k++) {  // no plan chunks so few
    out.span[k] = 1ull << k;
    for (int g = 0; g < kPointGroups; g++) out.group_span[g][k] = 1ull << k;
  }
  for (int k = kMinChunkLog; k < 32; k++) {
    const uint64_t chunk = 1ull << k;
    uint64_t widest = 0;
    for (int g = 0; g < kPointGroups; g++) {
      const Support& sup = key.support[g];
      uint64_t group_widest = 0;
      if (sup.all || sup.index.empty()) {
        group_widest = std::min<uint64_t>(chunk, sup.n);
      } else {
        for (uint64_t j = 0; j < sup.index.size(); j += chunk) {
          const uint64_t last = std::min<uint64_t>(j + chunk, sup.index.size()) - 1;
          group_widest = std::max<uint64_t>(group_widest, (uint64_t)sup.index[last] - sup.index[j] + 1);
        }
      }
      out.group_span[g][k] = group_widest;
      widest = std::max(widest, group_widest);
    }
    out.span[k] = widest;
    if (chunk >= std::max<uint64_t>(key.support[0].n, key.support[2].n)) {
      for (int r = k + 1; r < 32; r++) {
        out.span[r] = widest;
        for (int g = 0; g < kPointGroups; g++) out.group_span[g][r] = out.group_span[g][k];
      }
      break;
    }
  }
}

}  // namespace cuzk::engine
