#pragma once
// NodeDrains: admins take a node out of scheduling and put it back. A drained
// node starts no new job; the jobs running there go on. The drain is kept in
// the store (store/node_drains.h) and shown in the node's view
// (NodeView::drain), whose change wakes a scheduling pass like any node event.
//
// Thread-safe: every method may be called from any thread. Drain and Resume
// are serialised, so the store and the cluster view agree on the last one.

#include <string>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "server/nodes/cluster_state.h"
#include "server/store/store.h"

namespace rota::server {

inline constexpr size_t kMaxDrainReasonChars = 200;

class NodeDrains {
 public:
  // Borrowed; they must outlive this.
  NodeDrains(store::Store* store, ClusterState* cluster, const Clock* clock);

  // Puts the stored drains on the cluster's nodes. Call after
  // ClusterState::LoadKnown (every node that ever registered is stored and
  // known). The drain of a node the cluster does not know, one removed since,
  // is deleted (logged).
  Status Start();

  // Drains `node` for `reason` (may be empty; at most kMaxDrainReasonChars,
  // no control characters: InvalidArgument). Draining a drained node replaces
  // the reason and who drained it, and keeps since when. NotFound for a node
  // the cluster does not know.
  Result<NodeView> Drain(const std::string& node, const std::string& reason, const std::string& by);
  // Ends the drain of `node` (no error when it had none). NotFound for a node
  // the cluster does not know.
  Result<NodeView> Resume(const std::string& node);

 private:
  store::Store* const store_;
  ClusterState* const cluster_;
  const Clock* const clock_;
  Mutex mu_;  // serialises Drain and Resume
};

}  // namespace rota::server
