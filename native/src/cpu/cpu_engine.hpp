// The CPU backend's engine: a, b, c from the key's coefficients, the H polynomial through six NTTs,
// and the five MSMs, all on the context's thread pool.
#pragma once

#include <memory>

#include "prover/engine.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::cpu {

template <class C>
std::unique_ptr<prover::Engine<C>> make_engine(const prover::KeyView<C>& key, ThreadPool& pool);

}  // namespace cuzk::cpu
