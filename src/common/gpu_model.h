#pragma once
// The GPU-model rule, one place for the scheduler (sched) and the submit-time
// check (jobs/placement): which model a GPU has and whether a task asking a
// model may use it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/strings.h"

namespace rota {

// The model of GPU `gpu` of a node: its own when the node names one per GPU
// (`per_gpu`, set only on nodes of mixed models), else the node's.
inline const std::string& ModelOfGpu(const std::vector<std::string>& per_gpu,
                                     const std::string& node_model, uint32_t gpu) {
  return gpu < per_gpu.size() ? per_gpu[gpu] : node_model;
}

// Whether a task asking `wanted` ("": any model) may use a GPU of `model`:
// `wanted` is a part of it, letters without case ("1080" fits
// "NVIDIA GeForce GTX 1080 Ti").
inline bool ModelWanted(std::string_view model, std::string_view wanted) {
  return ContainsIgnoringCase(model, wanted);
}

}  // namespace rota
