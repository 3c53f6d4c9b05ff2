#include "server/nodes/cluster_state.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "common/mutex.h"

namespace rota::server {

std::vector<std::string> GpuModelsIfMixed(const api::NodeInfo& info) {
  const auto& gpus = info.gpus;
  if (std::all_of(gpus.begin(), gpus.end(),
                  [&](const api::GpuInfo& g) { return g.name == gpus.front().name; }))
    return {};
  std::vector<std::string> models;
  for (const auto& g : gpus) {
    if (g.index >= models.size()) models.resize(g.index + 1);
    models[g.index] = g.name;
  }
  return models;
}

const char* NodeStateName(NodeState state) {
  return state == NodeState::kReady ? "ready" : "unreachable";
}

void ClusterState::LoadKnown(const std::vector<api::NodeInfo>& nodes) {
  MutexLock lock(&mu_);
  for (const auto& info : nodes) {
    Entry& e = nodes_[info.name];
    if (e.session != 0) continue;
    e.view.info = std::make_shared<const api::NodeInfo>(info);
    e.view.state = NodeState::kUnreachable;
    e.view.unreachable_reason = "no agent connected since the server started";
  }
}

Status ClusterState::Connect(const api::NodeInfo& info, uint64_t session, int64_t now_ms) {
  NodeView copy;
  {
    MutexLock lock(&mu_);
    Entry& e = nodes_[info.name];
    if (e.session != 0 && e.session != session && e.view.info->node_id != info.node_id &&
        e.view.state == NodeState::kReady) {
      return Status::Conflict("node name '" + info.name +
                              "' is already connected with a different node id (" +
                              e.view.info->node_id + ")");
    }
    e.session = session;
    e.view.info = std::make_shared<const api::NodeInfo>(info);
    e.view.connected = true;
    e.view.last_seen_ms = now_ms;
    e.view.state = NodeState::kReady;
    e.view.state_since_ms = now_ms;
    e.view.unreachable_reason.clear();
    copy = e.view;
  }
  Notify("node", copy);
  return Status::Ok();
}

Status ClusterState::SetDrain(const std::string& name, std::optional<NodeDrain> drain) {
  NodeView copy;
  {
    MutexLock lock(&mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end()) return Status::NotFound("node '" + name + "' not found");
    it->second.view.drain = std::move(drain);
    copy = it->second.view;
  }
  Notify("node", copy);
  return Status::Ok();
}

void ClusterState::Disconnect(const std::string& name, uint64_t session, int64_t now_ms) {
  NodeView copy;
  {
    MutexLock lock(&mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end() || it->second.session != session) return;
    Entry& e = it->second;
    e.session = 0;
    e.view.connected = false;
    e.view.state = NodeState::kUnreachable;
    e.view.state_since_ms = now_ms;
    e.view.unreachable_reason = "agent disconnected";
    copy = e.view;
  }
  Notify("node", copy);
}

void ClusterState::RecordSample(const std::string& name, uint64_t session,
                                const api::NodeSample& sample, int64_t now_ms) {
  NodeView copy;
  bool became_ready = false;
  // Copied, and the sample it replaces freed, outside the lock: every agent
  // message passes here, from every network thread.
  auto latest = std::make_shared<const api::NodeSample>(sample);
  std::shared_ptr<const api::NodeSample> replaced;
  {
    MutexLock lock(&mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end() || it->second.session != session) return;
    Entry& e = it->second;
    e.view.last_seen_ms = now_ms;
    if (e.view.state != NodeState::kReady) {
      e.view.state = NodeState::kReady;
      e.view.state_since_ms = now_ms;
      e.view.unreachable_reason.clear();
      became_ready = true;
    }
    bool newer = !e.view.latest || e.view.latest->time_ms < sample.time_ms;
    if (!newer && !became_ready) return;
    if (newer) replaced = std::exchange(e.view.latest, std::move(latest));
    if (listeners_.empty()) return;
    copy = e.view;
  }
  if (became_ready) Notify("node", copy);
  Notify("sample", copy);
}

int ClusterState::CheckLiveness(int64_t now_ms) {
  std::vector<NodeView> changed;
  {
    MutexLock lock(&mu_);
    for (auto& [name, e] : nodes_) {
      if (e.view.state != NodeState::kReady) continue;
      int64_t limit = missed_heartbeats_ * e.view.info->sample_interval_ms;
      int64_t silent = now_ms - e.view.last_seen_ms;
      if (silent <= limit) continue;
      e.view.state = NodeState::kUnreachable;
      e.view.state_since_ms = now_ms;
      char buf[128];
      std::snprintf(buf, sizeof(buf), "no report for %.1f s (%d sample intervals)", silent / 1000.0,
                    missed_heartbeats_);
      e.view.unreachable_reason = buf;
      changed.push_back(e.view);
    }
  }
  for (const auto& v : changed) Notify("node", v);
  return static_cast<int>(changed.size());
}

std::vector<NodeView> ClusterState::Nodes() const {
  MutexLock lock(&mu_);
  std::vector<NodeView> out;
  out.reserve(nodes_.size());
  for (const auto& [name, e] : nodes_) out.push_back(e.view);
  return out;
}

std::optional<NodeView> ClusterState::Node(const std::string& name) const {
  MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  return it->second.view;
}

int ClusterState::ConnectedCount() const {
  MutexLock lock(&mu_);
  int n = 0;
  for (const auto& [name, e] : nodes_) n += e.session != 0 ? 1 : 0;
  return n;
}

int ClusterState::AddListener(Listener listener) {
  MutexLock lock(&mu_);
  int id = next_listener_++;
  listeners_[id] = std::move(listener);
  return id;
}

void ClusterState::RemoveListener(int id) {
  MutexLock lock(&mu_);
  listeners_.erase(id);
}

bool ClusterState::HasListeners() const {
  MutexLock lock(&mu_);
  return !listeners_.empty();
}

void ClusterState::Notify(const std::string& event, const NodeView& view) {
  std::vector<Listener> copy;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, l] : listeners_) copy.push_back(l);
  }
  for (const auto& l : copy) l(event, view);
}

}  // namespace rota::server
