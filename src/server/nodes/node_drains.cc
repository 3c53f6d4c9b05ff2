#include "server/nodes/node_drains.h"

#include "common/log.h"
#include "common/strings.h"
#include "server/store/node_drains.h"

namespace rota::server {

NodeDrains::NodeDrains(store::Store* store, ClusterState* cluster, const Clock* clock)
    : store_(store), cluster_(cluster), clock_(clock) {}

Status NodeDrains::Start() {
  std::vector<store::NodeDrainRow> rows;
  RETURN_IF_ERROR(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, store::LoadNodeDrains(db));
    return Status::Ok();
  }));
  for (auto& r : rows) {
    if (cluster_->SetDrain(r.node, NodeDrain{r.reason, r.by, r.since_ms}).ok()) continue;
    ROTA_LOG(WARNING) << "node '" << r.node << "' is drained but no longer known: drain removed";
    RETURN_IF_ERROR(store_->Write([&](store::Db& db) { return store::DeleteNodeDrain(db, r.node); }));
  }
  return Status::Ok();
}

Result<NodeView> NodeDrains::Drain(const std::string& node, const std::string& reason,
                                   const std::string& by) {
  RETURN_IF_ERROR(CheckText("reason", reason, kMaxDrainReasonChars, false));
  MutexLock lock(&mu_);
  auto view = cluster_->Node(node);
  if (!view.has_value()) return Status::NotFound("node '" + node + "' not found");
  NodeDrain drain{reason, by, view->drain ? view->drain->since_ms : clock_->NowMs()};
  RETURN_IF_ERROR(store_->Write([&](store::Db& db) {
    return store::PutNodeDrain(db, {node, drain.reason, drain.by, drain.since_ms});
  }));
  RETURN_IF_ERROR(cluster_->SetDrain(node, drain));
  ROTA_LOG(INFO) << "node " << node << " drained by " << by << (reason.empty() ? "" : ": " + reason);
  return *cluster_->Node(node);
}

Result<NodeView> NodeDrains::Resume(const std::string& node) {
  MutexLock lock(&mu_);
  auto view = cluster_->Node(node);
  if (!view.has_value()) return Status::NotFound("node '" + node + "' not found");
  if (!view->drain.has_value()) return *view;
  RETURN_IF_ERROR(store_->Write([&](store::Db& db) { return store::DeleteNodeDrain(db, node); }));
  RETURN_IF_ERROR(cluster_->SetDrain(node, std::nullopt));
  ROTA_LOG(INFO) << "node " << node << " resumed";
  return *cluster_->Node(node);
}

}  // namespace rota::server
