// The caller's cuzk_progress seen from inside a long call: atomic stores of stage/done/total and
// atomic loads of `cancel` on caller memory (another thread, e.g. a JS timer, reads and writes it
// meanwhile). A null Progress reports nothing and is never cancelled.
#pragma once

#include <cstdint>

#include "cuzk.h"

namespace cuzk {

class Progress {
 public:
  Progress() = default;
  explicit Progress(cuzk_progress* p) : p_(p) {}

  // A new stage: done = 0, total as known now (0 = not yet).
  void begin(cuzk_stage stage, uint64_t total) const {
    if (!p_) return;
    __atomic_store_n(&p_->phase, 0u, __ATOMIC_RELAXED);
    __atomic_store_n(&p_->done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&p_->total, total, __ATOMIC_RELAXED);
    __atomic_store_n(&p_->stage, (uint32_t)stage, __ATOMIC_RELEASE);
  }
  void set_total(uint64_t total) const {
    if (p_) __atomic_store_n(&p_->total, total, __ATOMIC_RELEASE);
  }
  // The phase the work is in now (cuzk_progress.phase: 1 + phase).
  void phase(cuzk_phase phase) const {
    if (p_) __atomic_store_n(&p_->phase, (uint32_t)phase + 1, __ATOMIC_RELEASE);
  }
  void add(uint64_t units) const {
    if (p_) __atomic_fetch_add(&p_->done, units, __ATOMIC_RELEASE);
  }
  uint64_t done() const { return p_ ? __atomic_load_n(&p_->done, __ATOMIC_ACQUIRE) : 0; }
  uint64_t total() const { return p_ ? __atomic_load_n(&p_->total, __ATOMIC_ACQUIRE) : 0; }
  bool cancelled() const { return p_ && __atomic_load_n(&p_->cancel, __ATOMIC_ACQUIRE) != 0; }

 private:
  cuzk_progress* p_ = nullptr;
};

}  // namespace cuzk
