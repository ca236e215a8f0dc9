// How the backend makes its engine: plain C++ (no CUDA types), declared for the door (backend.hpp)
// and implemented by engine.cu (absent.cpp without CUDA).
#pragma once

#include <memory>
#include <string>

#include "cuzk.h"
#include "engine/engine.hpp"
#include "util/progress.hpp"

namespace cuzk::cuda {

struct DeviceContext;

// progress: the key upload's (cuzk_prover_create): the bytes the engine uploaded, once it has.
// options.memory_budget: device bytes (0: the free memory); a key that does not fit even streamed
// is CUZK_ERR_OUT_OF_MEMORY before anything is allocated.
template <class C>
cuzk_status make_engine(DeviceContext* device, const engine::KeyView<C>& key, const engine::EngineOptions& options,
                        const Progress& progress, std::unique_ptr<engine::Engine<C>>* out, std::string& err);
template <class C>
cuzk_status make_engine(DeviceContext* device, const engine::KeyView<C>& key, const Progress& progress,
                        std::unique_ptr<engine::Engine<C>>* out, std::string& err) {
  return make_engine<C>(device, key, engine::EngineOptions{}, progress, out, err);
}

}  // namespace cuzk::cuda
