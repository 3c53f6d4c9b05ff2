#pragma once
// JSON views of cluster state returned by the API and the live stream.

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "api/json_writer.h"
#include "common/mutex.h"
#include "server/nodes/cluster_state.h"

namespace rota::server {

// A node: identity, state, and (if `with_latest`) its latest sample.
api::Json NodeJson(const NodeView& node, bool with_latest);

// Writes one JSON object per GPU of `node` (as elements of an array the caller
// opened), merging identity (NodeInfo.gpus) with the latest reading; state is
// "ok", "failed" or "unreachable" (node not ready). DOM-free: GET /api/v1/gpus
// writes thousands of these.
// `starts` (may be null) gets the offset in the output of each row's '{'.
void WriteGpuRows(const NodeView& node, api::JsonWriter& w, std::vector<size_t>* starts = nullptr);

// One node's GPU rows, rendered: JSON objects joined by commas ("" for no
// GPUs); row i is text[starts[i], end of row i), where a row ends one byte
// (the comma) before the next one starts, the last at text.size().
struct GpuRows {
  std::string text;
  std::vector<size_t> starts;
  size_t size() const { return starts.size(); }
  // Rows [from, to) as text joined by commas. REQUIRES: from < to <= size().
  std::string_view Slice(size_t from, size_t to) const;
};

// Remembers each node's rendered GPU rows until the node's sample or state
// changes, so a listing of a large cluster renders only what changed since the
// previous listing. Thread-safe.
class GpuRowsCache {
 public:
  // The rows of `node` (shared: valid after the cache renders the node again).
  std::shared_ptr<const GpuRows> Rows(const NodeView& node);

 private:
  struct Entry {
    const api::NodeSample* sample = nullptr;
    std::shared_ptr<const api::NodeSample> keep;  // keeps `sample` from being reused
    NodeState state = NodeState::kUnreachable;
    std::string node_id;
    size_t gpus = 0;
    std::shared_ptr<const GpuRows> rows;
  };
  Mutex mu_;
  std::map<std::string, Entry> entries_ ROTA_GUARDED_BY(mu_);
};

// Sorted unique user names of the processes on a GPU.
std::vector<std::string> GpuUsers(const api::GpuSample& gpu);

}  // namespace rota::server
