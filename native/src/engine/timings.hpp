// Phase timings of one call, written straight into the caller's cuzk_timings records: offsets in
// nanoseconds from the call's start, taken with the monotonic clock. Thread-safe for distinct
// (proof, phase) slots; a phase that runs again for the same proof widens its interval.
#pragma once

#include <cstring>

#include "cuzk.h"
#include "util/clock.hpp"
#include "util/progress.hpp"

namespace cuzk::engine {

class PhaseTimes {
 public:
  // records: NULL (timings not wanted) or n_proofs records.
  PhaseTimes(cuzk_timings* records, size_t n_proofs, cuzk_backend backend)
      : records_(records), n_(n_proofs), start_(now_ns()) {
    if (!records_) return;
    for (size_t i = 0; i < n_; i++) {
      std::memset(&records_[i], 0, sizeof(cuzk_timings));
      records_[i].struct_size = sizeof(cuzk_timings);
      records_[i].phase_count = CUZK_PHASE_COUNT;
      records_[i].backend = backend;
      records_[i].proof_index = (uint32_t)i;
    }
  }

  uint64_t call_start() const { return start_; }
  size_t proofs() const { return n_; }

  // Records [start, end] (absolute now_ns() values) for one proof.
  void record(size_t proof, cuzk_phase phase, uint64_t start, uint64_t end) {
    if (!records_ || proof >= n_) return;
    cuzk_interval& iv = records_[proof].phases[phase];
    uint64_t s = start - start_ + 1, e = end - start_ + 1;  // +1: 0 means "did not run"
    if (iv.start_ns == 0 || s < iv.start_ns) iv.start_ns = s;
    if (e > iv.end_ns) iv.end_ns = e;
  }
  // The same interval for every proof of the batch (work done for all at once).
  void record_all(cuzk_phase phase, uint64_t start, uint64_t end) {
    for (size_t i = 0; i < n_; i++) record(i, phase, start, end);
  }
  // The caller's progress, told which phase the work enters (PhaseScope does, and engines whose
  // phases run on a device say so as they queue them). The checks that run ahead on their own
  // thread are not the work in progress: they are not reported.
  void watch(const Progress& progress) { progress_ = progress; }
  void entering(cuzk_phase phase) const {
    if (phase != CUZK_PHASE_PARSE && phase != CUZK_PHASE_WITNESS_CHECK) progress_.phase(phase);
  }
  void finish() {
    if (!records_) return;
    uint64_t total = now_ns() - start_;
    for (size_t i = 0; i < n_; i++) records_[i].total_ns = total;
  }

 private:
  cuzk_timings* records_;
  size_t n_;
  uint64_t start_;
  Progress progress_;
};

// Scoped timing of one phase: `PhaseScope t(times, proof, CUZK_PHASE_ABC);`
class PhaseScope {
 public:
  PhaseScope(PhaseTimes& times, size_t proof, cuzk_phase phase)
      : times_(times), proof_(proof), phase_(phase), start_(now_ns()) {
    times.entering(phase);
  }
  ~PhaseScope() {
    uint64_t end = now_ns();
    if (proof_ == kAll) times_.record_all(phase_, start_, end);
    else times_.record(proof_, phase_, start_, end);
  }
  static constexpr size_t kAll = ~size_t(0);

 private:
  PhaseTimes& times_;
  size_t proof_;
  cuzk_phase phase_;
  uint64_t start_;
};

}  // namespace cuzk::engine
