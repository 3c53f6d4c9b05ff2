#pragma once
// ClusterState: the server's in-memory view of every node — identity, liveness,
// and the latest sample. The store holds history; this holds "now".
//
// Thread-safe: every method may be called from any thread. Listeners are called
// with no lock held, from the thread that caused the change.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/mutex.h"
#include "common/status.h"

namespace rota::server {

enum class NodeState { kReady, kUnreachable };
const char* NodeStateName(NodeState state);

// An admin's drain of a node: no new job starts there; running jobs go on.
struct NodeDrain {
  std::string reason;  // may be empty
  std::string by;      // the admin's username
  int64_t since_ms = 0;
  bool operator==(const NodeDrain&) const = default;
};

// A copy of a view is cheap: the node's identity and its latest sample are
// shared and immutable (a new registration or sample replaces the pointer).
struct NodeView {
  std::shared_ptr<const api::NodeInfo> info = std::make_shared<const api::NodeInfo>();  // never null
  NodeState state = NodeState::kUnreachable;
  bool connected = false;
  int64_t last_seen_ms = 0;         // last message from the agent (0: never this run)
  int64_t state_since_ms = 0;       // when `state` last changed
  std::string unreachable_reason;   // e.g. "no sample for 6.2 s (3 intervals)"
  std::shared_ptr<const api::NodeSample> latest;  // null: none yet
  std::optional<NodeDrain> drain;                  // set while drained
};

// The model of each GPU of `info` by index ("" for a missing index) when they
// are not all one model; empty when they are (or there are none).
std::vector<std::string> GpuModelsIfMixed(const api::NodeInfo& info);

class ClusterState {
 public:
  // Called after a node's state or sample changed: (event, node view).
  // event is "node" (registration, liveness) or "sample".
  using Listener = std::function<void(const std::string& event, const NodeView& node)>;

  explicit ClusterState(int missed_heartbeats) : missed_heartbeats_(missed_heartbeats) {}

  // Adds nodes known from the store as unreachable (at startup).
  void LoadKnown(const std::vector<api::NodeInfo>& nodes);

  // An agent session `session` registered `info`. Conflict when another live
  // session holds the same name with a different node_id.
  Status Connect(const api::NodeInfo& info, uint64_t session, int64_t now_ms);
  // The session's connection closed; the node becomes unreachable if it was
  // still that session's.
  void Disconnect(const std::string& name, uint64_t session, int64_t now_ms);
  // A sample arrived on `session`. Older samples (replayed from the agent's
  // buffer) refresh liveness but do not replace a newer latest sample.
  void RecordSample(const std::string& name, uint64_t session, const api::NodeSample& sample,
                    int64_t now_ms);
  // Marks nodes unreachable whose last message is older than
  // missed_heartbeats * their sample interval. Returns how many changed.
  int CheckLiveness(int64_t now_ms);

  // Sets (or, with nullopt, clears) the node's drain; a "node" event. NotFound
  // for a node never seen.
  Status SetDrain(const std::string& name, std::optional<NodeDrain> drain);

  std::vector<NodeView> Nodes() const;  // sorted by name
  std::optional<NodeView> Node(const std::string& name) const;
  int ConnectedCount() const;

  // Adds a listener; returns an id for RemoveListener.
  int AddListener(Listener listener);
  void RemoveListener(int id);
  bool HasListeners() const;

 private:
  struct Entry {
    NodeView view;
    uint64_t session = 0;  // 0: no live session
  };
  // Calls the listeners (copied under mu_) without mu_ held.
  void Notify(const std::string& event, const NodeView& view) ROTA_EXCLUDES(mu_);

  const int missed_heartbeats_;
  mutable Mutex mu_;
  std::map<std::string, Entry> nodes_ ROTA_GUARDED_BY(mu_);
  std::map<int, Listener> listeners_ ROTA_GUARDED_BY(mu_);
  int next_listener_ ROTA_GUARDED_BY(mu_) = 1;
};

}  // namespace rota::server
