#include "engine/memory_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <vector>

namespace cuzk::engine {

namespace {

constexpr uint64_t kMinRowChunk = 4096;        // bytes; a chunk also holds the largest row
constexpr uint64_t kMaxRowChunk = 256ull << 20;  // larger chunks only cost memory: the link is the limit

uint64_t pow2_at_least(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}


// One candidate: everything but the placements, which are searched per candidate.
struct Shape {
  int chunk_log;
  uint64_t rows_chunk;  // 0: whole
  uint32_t vectors;     // the NTT stage's full-length vectors
  int window_choice = 0;  // kWindowGroups[window_choice] groups of an MSM's windows
  int h_chunk_log = 0;    // the H MSM's own chunk (0: chunk_log) and its window groups' choice
  int h_window_choice = 0;
};

// The MSM workspace of a shape: the other groups' MSMs at its chunk and, when H has a larger chunk
// of its own, the larger of each buffer of theirs and of H's.
uint64_t workspace_of(const EngineCosts& c, const Shape& sh) {
  if (sh.h_chunk_log <= sh.chunk_log) return c.msm_workspace[sh.window_choice][sh.chunk_log];
  const uint64_t* others = c.msm_parts[sh.window_choice][sh.chunk_log];
  const uint64_t* h = c.h_msm_parts[sh.h_window_choice][sh.h_chunk_log];
  uint64_t bytes = 0;
  for (int i = 0; i < EngineCosts::kWorkspaceParts; i++) bytes += std::max(others[i], h[i]);
  return bytes;
}

}  // namespace

int chunk_log_of(uint64_t points) {
  int k = 0;
  while (k < 63 && (1ull << k) < points) k++;
  return k;
}

std::string bytes_text(uint64_t bytes) {
  char b[64];
  if (bytes >= (1ull << 30)) std::snprintf(b, sizeof b, "%llu bytes (%.2f GiB)", (unsigned long long)bytes, bytes / 1073741824.0);
  else std::snprintf(b, sizeof b, "%llu bytes (%.1f MiB)", (unsigned long long)bytes, bytes / 1048576.0);
  return b;
}

KeyShape describe_key(uint32_t curve, uint64_t n_vars, uint64_t n_public, uint64_t n_constraints, uint64_t coefs) {
  KeyShape k;
  k.curve = curve;
  k.n_vars = n_vars;
  k.n_public = n_public;
  k.rows = n_constraints + n_public + 1;
  k.domain = pow2_at_least(k.rows);
  k.coefs = coefs;
  const uint64_t c_points = n_vars > n_public + 1 ? n_vars - n_public - 1 : 0;
  const uint64_t counts[kSections] = {n_vars, n_vars, n_vars, c_points, k.domain};
  for (int s = 0; s < kSections; s++) k.points[s] = counts[s];
  k.support[0] = k.support[1] = n_vars;
  k.support[2] = k.domain;
  // Every point kept: a chunk of stored points is a chunk of scalars.
  for (int j = 0; j < 32; j++) {
    k.span[j] = std::min<uint64_t>(1ull << j, std::max(n_vars, k.domain));
    for (int g = 0; g < kPointGroups; g++) k.group_span[g][j] = std::min<uint64_t>(1ull << j, k.support[g]);
  }
  return k;
}

uint64_t MemoryPlan::bytes_where(Placement where) const {
  uint64_t b = 0;
  for (int s = 0; s < kSections; s++)
    if (placement[s] == where) b += stored_bytes[s];
  return b;
}

uint64_t MemoryPlan::bytes_of(uint32_t sections) const {
  uint64_t b = 0;
  for (int s = 0; s < kSections; s++)
    if (sections >> s & 1u) b += stored_bytes[s];
  return b;
}

uint64_t MemoryPlan::pinned_bytes() const {
  uint32_t sections = 0;
  for (int s = 0; s < kSections; s++)
    if (pinned_section((PointSection)s)) sections |= 1u << s;
  return bytes_of(sections);
}

uint64_t MemoryPlan::streamed_point_bytes(PointGroup g) const {
  uint64_t b = 0;
  for (int s = 0; s < kSections; s++)
    if (placement[s] == kStreamed && stored[s] && group_of((PointSection)s) == g) b += point_bytes[s];
  return b;
}

uint64_t MemoryPlan::stream_buffer_bytes() const {
  uint64_t widest = 0, most = 0;
  if (streams_groups)
    for (int g = 0; g < kPointGroups; g++) widest = std::max(widest, streamed_point_bytes((PointGroup)g));
  for (int s = 0; s < kSections; s++)
    if (placement[s] == kStreamed && stored[s]) {
      most = std::max(most, stored[s]);
      widest = std::max(widest, point_bytes[s]);
    }
  uint64_t slot = std::min(msm_chunk, most) * widest;
  if (h_chunk > msm_chunk && placement[formats::kSecH] == kStreamed && stored[formats::kSecH])
    slot = std::max(slot, std::min(h_chunk, stored[formats::kSecH]) * point_bytes[formats::kSecH]);
  return stream_buffers * slot;
}

bool streamed(const MemoryPlan& plan, PointSection s) { return plan.placement[s] == kStreamed && plan.stored[s] > 0; }

bool streams_any(const MemoryPlan& plan) {
  for (int s = 0; s < kSections; s++)
    if (streamed(plan, (PointSection)s)) return true;
  return false;
}

uint64_t stream_group(const MemoryPlan& plan, uint64_t n, bool per_proof_only) {
  if (n < 2 || per_proof_only || !streams_any(plan)) return 1;
  return std::max<uint64_t>(1, std::min(plan.group_max, n));
}

uint64_t group_within_room(uint64_t group, uint64_t per_proof, uint64_t room) {
  if (per_proof == 0 || room / per_proof >= group) return std::max<uint64_t>(1, group);
  return std::max<uint64_t>(1, room / per_proof);
}

namespace {

// The plan of one shape, one resident set and one set of pinned streamed sections into `p`, with
// its group, host bytes, traffic and cost; false when the pinned sections do not fit the host budget.
bool evaluate(const EngineCosts& c, const PlanLimits& lim, const Shape& sh, uint32_t resident, uint32_t pinned,
              bool share, MemoryPlan& p) {
  const bool own_h = sh.h_chunk_log > sh.chunk_log;
  p.msm_chunk = 1ull << sh.chunk_log;
  p.vectors = sh.vectors;
  p.msm_window_groups = kWindowGroups[sh.window_choice];
  p.h_chunk = own_h ? 1ull << sh.h_chunk_log : p.msm_chunk;
  p.h_window_groups = own_h ? kWindowGroups[sh.h_window_choice] : p.msm_window_groups;
  const uint64_t workspace = workspace_of(c, sh);
  p.msm_workspace = workspace;
  p.rows_chunk = sh.rows_chunk;
  p.rows_bytes = sh.rows_chunk ? 2 * sh.rows_chunk : c.rows;
  for (int s = 0; s < kSections; s++)
    if (p.stored_bytes[s]) p.placement[s] = (resident & (1u << s)) ? kResident : kStreamed;
  const uint64_t streamed_bytes = p.streamed_bytes();
  const bool h_streams = streamed(p, formats::kSecH);
  uint64_t stream_scalars = 0;  // the scalars of a streamed chunk (of the largest chunk's)
  if (streamed_bytes) {
    stream_scalars = c.stream_scalars[sh.chunk_log];
    if (own_h && h_streams) stream_scalars = std::max(stream_scalars, c.h_stream_scalars[sh.h_chunk_log]);
    p.msm_workspace += stream_scalars;
  }
  // A streamed section is copied once to pinned host memory when it is in `pinned` and the host
  // budget holds it (GPU), else packed from the key per group; the H scalars a group keeps go to
  // the host (GPU) or the room. Rows read in chunks come from a pinned copy on the host (GPU) or
  // from the key (CPU).
  const uint64_t host_rows = sh.rows_chunk && c.kept_on_host ? c.rows : 0;
  const uint64_t host_left = lim.host_budget > host_rows ? lim.host_budget - host_rows : 0;
  p.pinned = c.kept_on_host ? pinned : 0;
  for (int s = 0; s < kSections; s++)
    if (!streamed(p, (PointSection)s)) p.pinned &= ~(1u << s);
  if (p.pinned != (c.kept_on_host ? pinned : 0u) || p.pinned_bytes() > host_left) return false;
  p.host_bytes = host_rows + p.pinned_bytes();
  uint64_t group = kMaxGroup;
  if (h_streams && c.h_kept_per_proof) {
    const uint64_t room = c.kept_on_host ? (lim.host_budget > p.host_bytes ? lim.host_budget - p.host_bytes : 0) : p.room();
    group = std::min<uint64_t>(group, room / c.h_kept_per_proof);
  }
  p.group_max = streamed_bytes && group >= 2 ? group : 1;
  p.group = std::max<uint64_t>(1, std::min(p.group_max, lim.batch));
  // Shared phases: every streamed sum waits for its group (a proof alone is a group of one), over
  // scalars on the host: the H scalars kept there need room for one proof at least.
  p.phases_shared = share && c.phases_share && streamed_bytes && c.kept_on_host && (!h_streams || group >= 1);
  p.shared_bytes = 0;
  p.phase_slack = 0;
  if (p.phases_shared) {
    // Only a proof's work: its witness, the NTT vectors, the row chunks. Only the streamed sums:
    // the stream buffers, the chunk's scalars, and the MSM workspace unless a resident section is
    // summed in a proof's work too (then both phases hold it).
    const bool resident_sums = p.resident_bytes() > 0;
    const uint64_t proof_phase = c.proof_only + (uint64_t)sh.vectors * c.vector_bytes + (sh.rows_chunk ? p.rows_bytes : 0);
    const uint64_t stream_phase = p.stream_buffer_bytes() + stream_scalars + (resident_sums ? 0 : workspace);
    p.shared_bytes = std::min(proof_phase, stream_phase);
    p.phase_slack = stream_phase > proof_phase ? stream_phase - proof_phase : 0;
  }
  const bool h_goes_out = c.kept_on_host && h_streams && (p.group > 1 || p.phases_shared);
  if (h_goes_out) p.host_bytes += p.group * c.h_kept_per_proof;
  // The H scalars going out beside the next proof take one vector of it (the rows whole: else they
  // go out after the proof): with two, the next proof forms a and b apart and c again. A fourth
  // vector serves nothing else.
  const bool h_out_beside = h_goes_out && sh.rows_chunk == 0;
  if (sh.vectors > 3 && !h_out_beside) return false;
  const uint32_t own_vectors = std::min<uint32_t>(sh.vectors - (h_out_beside ? 1 : 0), 3);
  // Traffic per proof: each streamed section once per group (ceil(batch / group) reads shared by
  // the batch's proofs: a group of 9 in a batch of 10 reads twice), the scalars of each streamed
  // section per proof (once for a group's sections when they stream together), the H scalars out
  // and back when kept on the host, the rows per proof when chunked.
  const uint64_t batch = std::max<uint64_t>(lim.batch, 1);
  const double reads_per_proof = (double)((batch + p.group - 1) / p.group) / (double)batch;
  double link = (double)streamed_bytes * reads_per_proof;
  for (int g = 0; g < kPointGroups; g++) {
    uint64_t scalars = 0;
    for (int s = 0; s < kSections; s++)
      if (group_of((PointSection)s) == g && streamed(p, (PointSection)s)) {
        const uint64_t b = c.scalar_bytes_per_proof[s];
        scalars = c.streams_groups ? std::max(scalars, b) : scalars + b;
      }
    link += (double)scalars;
  }
  if (h_streams && c.kept_on_host) link += 2.0 * (double)c.h_kept_per_proof;
  // Rows in chunks: read once per proof for a, b and c together, twice with two NTT vectors (c
  // is formed again once a*b is).
  const double row_passes = sh.rows_chunk ? (sh.vectors >= 3 ? 1 : 2) : 0;
  link += (double)c.rows * row_passes;
  p.link_bytes_per_proof = (uint64_t)link;
  uint64_t extra_chunks = 0, h_extra_chunks = 0;  // beyond each section's first (H's apart)
  double window_groups_s = 0;
  for (int s = 0; s < kSections; s++)
    if (p.stored[s]) {
      const PointGroup g = group_of((PointSection)s);
      const uint64_t chunks = p.chunks_of((PointSection)s);
      (g == kGroupH ? h_extra_chunks : extra_chunks) += chunks - 1;
      const double per_group = c.window_group_cost_s + (double)std::min(p.chunk_of(g), p.stored[s]) * c.window_group_point_s;
      window_groups_s += (double)chunks * (double)(p.window_groups_of(g) - 1) * per_group;
    }
  const double h_chunk_cost = c.h_chunk_cost_s > 0 ? c.h_chunk_cost_s : c.chunk_cost_s;
  const double row_chunks = sh.rows_chunk ? (double)((c.rows + sh.rows_chunk - 1) / sh.rows_chunk) * row_passes : 0;
  // What is not pinned is packed from the key once per group (GPU; the CPU engine's link is the key).
  const double from_key = c.kept_on_host ? (double)(streamed_bytes - p.pinned_bytes()) * reads_per_proof : 0.0;
  p.predicted_extra_s = link / c.link_bytes_per_s + from_key / c.key_read_bytes_per_s +
                        (double)extra_chunks * c.chunk_cost_s + (double)h_extra_chunks * h_chunk_cost + window_groups_s +
                        row_chunks * c.row_chunk_cost_s + (double)(3 - own_vectors) * c.per_vector_saved_s +
                        (p.phases_shared ? c.phase_switch_s * reads_per_proof : 0.0);
  p.predicted_groups_s = window_groups_s;
  p.predicted_h_chunks_s = (double)h_extra_chunks * h_chunk_cost;
  return true;
}

// Copies of the H points into `p` (h_copies...): none unless H is resident in one chunk; as many
// as forced (out of memory when making them does not fit the room: p.min_budget is then the
// budget they would need), or the most up to kMaxAutoHCopies whose making fits the room.
cuzk_status choose_h_copies(const EngineCosts& c, const PlanLimits& lim, MemoryPlan& p, std::string& err) {
  const PointSection h = formats::kSecH;
  const uint64_t n = p.stored[h];
  if (!c.h_copy_bytes || p.placement[h] != kResident || n == 0 || p.chunks_of(h) > 1) return CUZK_OK;
  if (lim.h_copies == 0 || lim.h_copies == 1 || (lim.h_copies < 0 && n < c.h_copies_auto_from)) return CUZK_OK;
  // While they are made: every copy used (copy 0 included) and the scratch, beside the points,
  // which the plan already holds.
  auto making = [&](int t) { return (uint64_t)c.h_copies_used[t] * c.h_copy_bytes + c.h_copies_scratch; };
  int t = 0;
  if (lim.h_copies > 0) {
    t = std::min(lim.h_copies, EngineCosts::kMaxHCopies);
    if (c.h_copies_used[t] >= 2 && making(t) > p.room()) {
      p.min_budget = p.total() + making(t);
      err = std::to_string(lim.h_copies) + " copies of the H points do not fit the " + std::string(c.memory) +
            " memory budget of " + bytes_text(lim.budget) + ": with them it needs at least " + bytes_text(p.min_budget) +
            " (they take " + bytes_text(making(t)) + " while they are made; ask for fewer, or none)";
      return CUZK_ERR_OUT_OF_MEMORY;
    }
  } else {
    for (int k = EngineCosts::kMaxAutoHCopies; k >= 2 && t == 0; k--)
      if (c.h_copies_used[k] >= 2 && making(k) <= p.room()) t = k;
  }
  if (t < 2 || c.h_copies_used[t] < 2) return CUZK_OK;
  p.h_copies = (uint32_t)c.h_copies_used[t];
  p.h_copies_asked = t;
  p.h_copies_window = c.h_copies_window[t];
  p.h_copies_bytes = (uint64_t)(p.h_copies - 1) * c.h_copy_bytes;
  return CUZK_OK;
}

// Of two plans predicted to cost the same: the larger MSM chunk, then fewer window groups, then the
// larger H chunk and fewer groups of its windows, then the larger row chunk, then fewer resident
// bytes, then fewer host bytes.
bool wins_tie(const MemoryPlan& p, const MemoryPlan& best) {
  if (p.msm_chunk != best.msm_chunk) return p.msm_chunk > best.msm_chunk;
  if (p.msm_window_groups != best.msm_window_groups) return p.msm_window_groups < best.msm_window_groups;
  if (p.h_chunk != best.h_chunk) return p.h_chunk > best.h_chunk;
  if (p.h_window_groups != best.h_window_groups) return p.h_window_groups < best.h_window_groups;
  if (p.rows_chunk != best.rows_chunk) return p.rows_chunk > best.rows_chunk;
  if (p.resident_bytes() != best.resident_bytes()) return p.resident_bytes() < best.resident_bytes();
  return p.host_bytes < best.host_bytes;
}

}  // namespace

cuzk_status plan_memory(const EngineCosts& c, const PlanLimits& lim, MemoryPlan& plan, std::string& err) {
  plan.memory = c.memory;
  plan.budget = lim.budget;
  plan.host_budget = lim.host_budget;
  plan.batch = std::max<uint64_t>(lim.batch, 1);
  plan.fixed = c.fixed;
  plan.vector_bytes = c.vector_bytes;
  plan.stream_buffers = c.stream_buffers;
  plan.streams_groups = c.streams_groups;
  uint32_t held = 0;
  for (int s = 0; s < kSections; s++) {
    plan.point_bytes[s] = c.point_bytes[s];
    plan.stored[s] = c.point_bytes[s] ? c.stored[s] : 0;
    plan.stored_bytes[s] = plan.stored[s] * c.point_bytes[s];
    plan.placement[s] = c.point_bytes[s] ? kResident : kInKey;
    if (plan.stored_bytes[s]) held |= 1u << s;
  }
  // The chunks to try: one chunk for the largest MSM first, then halves.
  const int full_log = std::clamp(chunk_log_of(pow2_at_least(std::max<uint64_t>(c.largest_msm, 1))), kMinChunkLog, kMaxChunkLog);
  const int h_full_log = std::clamp(chunk_log_of(pow2_at_least(std::max<uint64_t>(c.stored[formats::kSecH], 1))), kMinChunkLog, kMaxChunkLog);
  int hi = full_log, lo = kMinChunkLog;
  if (lim.chunk_points) {
    const uint64_t q = lim.chunk_points;
    if ((q & (q - 1)) || q < (1ull << kMinChunkLog) || q > (1ull << kMaxChunkLog)) {
      err = "the MSM chunk is " + std::to_string(q) + " points: a power of two from 2^" + std::to_string(kMinChunkLog) +
            " to 2^" + std::to_string(kMaxChunkLog) + ", or 0 to let the plan choose";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    hi = lo = std::min(chunk_log_of(q), full_log);
  }
  // Rows: whole (unless forced into chunks), or chunks of a power of two from the smallest that
  // holds the largest row up to kMaxRowChunk.
  std::vector<uint64_t> row_choices;
  if (!(lim.stream_rows && c.rows_can_chunk) || !c.rows) row_choices.push_back(0);
  if (c.rows_can_chunk && c.rows) {
    for (uint64_t r = pow2_at_least(std::max(c.row_max, kMinRowChunk)); r <= kMaxRowChunk && (r < c.rows || lim.stream_rows); r <<= 1) {
      row_choices.push_back(r);
      if (r >= c.rows) break;
    }
  }
  bool found = false;
  MemoryPlan best;
  uint64_t least = std::numeric_limits<uint64_t>::max();
  const uint32_t fewest = std::clamp<uint32_t>(c.vectors_min, 1, 3);
  const uint32_t most_vectors = std::clamp<uint32_t>(c.vectors_max, fewest, 4);
  for (int k = hi; k >= lo; k--) {
    for (uint64_t rows_chunk : row_choices) {
      for (uint32_t vectors = most_vectors; vectors >= fewest; vectors--) {
      for (uint32_t resident = 0; resident < (1u << kSections); resident++) {
      if ((resident & ~held) || (lim.stream_all && resident)) continue;
      // The pinned sets to try (GPU): all the streamed sections when the host holds them beside
      // the judged batch's kept H scalars (nothing else can cost less); else every subset.
      const uint32_t can_pin = c.kept_on_host ? held & ~resident : 0;
      const uint64_t host_rows = rows_chunk && c.kept_on_host ? c.rows : 0;
      const uint64_t kept_h = (can_pin >> formats::kSecH & 1u) ? plan.batch * c.h_kept_per_proof : 0;
      const bool pin_all = plan.bytes_of(can_pin) + host_rows + kept_h <= lim.host_budget;
      for (uint32_t pinned = can_pin;; pinned = (pinned - 1) & can_pin) {
      for (bool share : {false, true}) {
        if (plan.bytes_of(pinned) + host_rows > lim.host_budget) break;
        if (share && !c.phases_share) continue;
        // The most window groups take the least (a smaller workspace never makes a plan larger):
        // they count for the minimum, and when even they do not fit, nothing of this shape does.
        // Else the fewest that fit (more only cost time).
        const int most = (int)std::clamp<uint32_t>(c.window_group_choices, 1, kWindowGroupChoices) - 1;
        MemoryPlan p = plan;
        if (!evaluate(c, lim, Shape{k, rows_chunk, vectors, most}, resident, pinned, share, p)) continue;
        if (share && !p.phases_shared) continue;
        if (p.host_bytes > lim.host_budget && rows_chunk) continue;  // no host room for the rows' copy
        least = std::min(least, p.total());
        if (p.total() > lim.budget) continue;
        // With fewer groups and H in fewer chunks this shape costs at least its cost without
        // either: past the best, done.
        if (found && p.predicted_extra_s - p.predicted_groups_s - p.predicted_h_chunks_s > best.predicted_extra_s + 1e-12)
          continue;
        Shape chosen{k, rows_chunk, vectors, most};
        for (int g = 0; g < most; g++) {
          MemoryPlan q = plan;
          if (evaluate(c, lim, Shape{k, rows_chunk, vectors, g}, resident, pinned, share, q) && q.total() <= lim.budget) {
            p = q;
            chosen.window_choice = g;
            break;
          }
        }
        // H in larger chunks of its own, where they fit beside the rest: the cheapest.
        if (c.h_own_chunk && !lim.chunk_points && p.chunks_of(formats::kSecH) > 1) {
          for (int kh = std::min(h_full_log, k + kMaxHChunkSteps); kh > k; kh--)
            for (int gh = 0; gh <= most; gh++) {
              Shape with_h = chosen;
              with_h.h_chunk_log = kh;
              with_h.h_window_choice = gh;
              MemoryPlan q = plan;
              if (!evaluate(c, lim, with_h, resident, pinned, share, q) || q.total() > lim.budget) continue;
              if (share && !q.phases_shared) continue;
              if (q.host_bytes > lim.host_budget && rows_chunk) continue;
              if (q.predicted_extra_s < p.predicted_extra_s - 1e-12 ||
                  (q.predicted_extra_s <= p.predicted_extra_s + 1e-12 && wins_tie(q, p)))
                p = q;
            }
        }
        const bool better = !found || p.predicted_extra_s < best.predicted_extra_s - 1e-12 ||
                            (p.predicted_extra_s <= best.predicted_extra_s + 1e-12 && wins_tie(p, best));
        if (better) {
          best = p;
          found = true;
        }
      }
      if (pinned == 0 || pin_all) break;
      }
      }
      }
    }
  }
  if (found) {
    best.min_budget = least;
    // Overlap takes only what the best plan leaves: it never costs a chunk, a vector or a resident
    // section (a proof's own work is a fraction of its MSMs' time, and can only hide behind them).
    if (c.proofs_overlap && lim.overlap && !streams_any(best) && !best.rows_chunk && !best.phases_shared) {
      const uint64_t second = c.proof_only + (uint64_t)best.vectors * c.vector_bytes;
      if (best.room() >= second) best.overlap_bytes = second;
    }
    const cuzk_status st = choose_h_copies(c, lim, best, err);
    plan = best;
    return st;
  }
  // Nothing fits: name the minimum and what it is made of.
  MemoryPlan all_resident = plan;
  evaluate(c, lim, Shape{hi, row_choices.front(), 3}, held, 0, false, all_resident);
  plan.min_budget = least;
  err = std::string("the key does not fit the ") + c.memory + " memory budget of " + bytes_text(lim.budget) +
        ": it needs at least " + bytes_text(least) + " (buffers every plan needs " + bytes_text(c.fixed) +
        ", then the NTT stage's vectors, the rows, the MSM workspace and a stream buffer at their smallest; every section resident "
        "without chunks would need " + bytes_text(all_resident.total()) + ")";
  return CUZK_ERR_OUT_OF_MEMORY;
}

}  // namespace cuzk::engine
