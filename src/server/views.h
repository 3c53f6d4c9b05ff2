#pragma once
// JSON views of cluster state returned by the API and the live stream.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/codec.h"
#include "api/json_writer.h"
#include "common/mutex.h"
#include "server/cluster_state.h"

namespace rota::server {

// A node: identity, state, and (if `with_latest`) its latest sample.
api::Json NodeJson(const NodeView& node, bool with_latest);

// Writes one JSON object per GPU of `node` (as elements of an array the caller
// opened), merging identity (NodeInfo.gpus) with the latest reading; state is
// "ok", "failed" or "unreachable" (node not ready). DOM-free: GET /api/v1/gpus
// writes thousands of these.
void WriteGpuRows(const NodeView& node, api::JsonWriter& w);

// Remembers each node's rendered GPU rows until the node's sample or state
// changes, so a listing of a large cluster renders only what changed since the
// previous listing. Thread-safe.
class GpuRowsCache {
 public:
  // The rows of `node` as JSON object texts joined by commas ("" for no GPUs).
  std::string Rows(const NodeView& node);

 private:
  struct Entry {
    const api::NodeSample* sample = nullptr;
    std::shared_ptr<const api::NodeSample> keep;  // keeps `sample` from being reused
    NodeState state = NodeState::kUnreachable;
    std::string node_id;
    size_t gpus = 0;
    std::string text;
  };
  Mutex mu_;
  std::map<std::string, Entry> entries_ ROTA_GUARDED_BY(mu_);
};

// Sorted unique user names of the processes on a GPU.
std::vector<std::string> GpuUsers(const api::GpuSample& gpu);

}  // namespace rota::server
