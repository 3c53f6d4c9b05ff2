#pragma once
// JSON views of cluster state returned by the API and the live stream.

#include <string>
#include <vector>

#include "api/codec.h"
#include "api/json_writer.h"
#include "server/cluster_state.h"

namespace rota::server {

// A node: identity, state, and (if `with_latest`) its latest sample.
api::Json NodeJson(const NodeView& node, bool with_latest);

// Writes one JSON object per GPU of `node` (as elements of an array the caller
// opened), merging identity (NodeInfo.gpus) with the latest reading; state is
// "ok", "failed" or "unreachable" (node not ready). DOM-free: GET /api/v1/gpus
// writes thousands of these.
void WriteGpuRows(const NodeView& node, api::JsonWriter& w);

// Sorted unique user names of the processes on a GPU.
std::vector<std::string> GpuUsers(const api::GpuSample& gpu);

}  // namespace rota::server
