#pragma once
// The messages a simulated agent sends: its registration (a node with `gpus` simulated
// A100s) and its samples. Shared by the ingest load generator (bench/ingest_load.cc) and
// SimAgentFleet, so both load the server alike.

#include <cstdint>
#include <string>

#include "api/protocol.h"

namespace rota::loadgen {

// Node `name` (stable id `node_id`) with `gpus` GPUs whose uuids are
// GPU-load-<salt>-<index>, sampling every `interval_ms`.
api::RegisterMsg SimRegistration(const std::string& name, const std::string& node_id, int salt, int gpus,
                                 int64_t interval_ms);

// A sample at `t_ms` of the node registered with the same `gpus` and `salt`.
api::NodeSample SimSample(int gpus, int64_t t_ms, int salt);

}  // namespace rota::loadgen
