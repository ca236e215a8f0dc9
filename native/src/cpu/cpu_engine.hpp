// The CPU backend's engine: a, b, c from the key's coefficients, the H polynomial through six NTTs,
// and the five MSMs, all on the context's thread pool.
#pragma once

#include <memory>

#include "engine/engine.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::cpu {

template <class C>
std::unique_ptr<engine::Engine<C>> make_engine(const engine::KeyView<C>& key, ThreadPool& pool);

}  // namespace cuzk::cpu
