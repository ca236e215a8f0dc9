// The CPU backend's engine: a, b, c from the key's coefficients, the H polynomial through six NTTs,
// and the five MSMs, all on the context's thread pool.
#pragma once

#include <memory>
#include <string>

#include "engine/engine.hpp"
#include "util/progress.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::cpu {

// What this engine's buffers cost, for the memory plan (engine/memory_plan.hpp). compact: the
// engine holds the key's points (a key on demand or made in memory); else it reads them in place.
engine::EngineCosts cpu_costs(const engine::KeyShape& key, bool compact);

// A key in memory is read in place; a key on demand (CUZK_KEY_POINTS_ON_DEMAND) is held compacted
// in host memory, resident or streamed per section within options.memory_budget. Fails with the
// key's read errors, or CUZK_ERR_OUT_OF_MEMORY when the budget is too small (nothing allocated).
// `progress` counts the bytes of resident points read in (CUZK_STAGE_KEY_UPLOAD), in chunks with a
// cancel check after each (CUZK_ERR_CANCELLED).
template <class C>
cuzk_status make_engine(const engine::KeyView<C>& key, ThreadPool& pool, const engine::EngineOptions& options,
                        const Progress& progress, std::unique_ptr<engine::Engine<C>>* out, std::string& err);

// Without options, for a key in memory (tests, benchmarks).
template <class C>
std::unique_ptr<engine::Engine<C>> make_engine(const engine::KeyView<C>& key, ThreadPool& pool);

}  // namespace cuzk::cpu
