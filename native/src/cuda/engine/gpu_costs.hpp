// What the GPU engine's buffers cost, as the memory plan (engine/memory_plan.hpp) prices them:
// plain C++, so that a plan for a GPU is made on any machine (cuzk_plan_memory) and the engine
// plans itself with the same figures (key_store.cuh).
#pragma once

#include "engine/engine.hpp"
#include "engine/memory_plan.hpp"

namespace cuzk::cuda {

// b2_on_cpu: B2's MSM runs on the CPU over the key's points (not held on the device).
engine::EngineCosts gpu_costs(const engine::KeyShape& key, bool b2_on_cpu);

}  // namespace cuzk::cuda
