#include "server/views.h"

#include <algorithm>
#include <set>

#include "common/time_util.h"

namespace rota::server {

api::Json NodeJson(const NodeView& node, bool with_latest) {
  api::Json j = api::ToJson(node.info);
  j["state"] = NodeStateName(node.state);
  j["connected"] = node.connected;
  j["last_seen"] = node.last_seen_ms > 0 ? api::Json(FormatRfc3339Ms(node.last_seen_ms)) : api::Json();
  j["state_since"] =
      node.state_since_ms > 0 ? api::Json(FormatRfc3339Ms(node.state_since_ms)) : api::Json();
  if (!node.unreachable_reason.empty()) j["unreachable_reason"] = node.unreachable_reason;
  size_t failed = 0;
  if (node.latest.has_value()) {
    for (const auto& g : node.latest->gpus) failed += g.failed ? 1 : 0;
  }
  j["gpu_count"] = node.info.gpus.size();
  j["failed_gpu_count"] = failed;
  if (with_latest) {
    if (node.latest.has_value()) {
      api::Json latest = api::ToJson(*node.latest);
      latest["time"] = FormatRfc3339Ms(node.latest->time_ms);
      j["latest"] = std::move(latest);
    } else {
      j["latest"] = nullptr;
    }
  }
  return j;
}

std::vector<std::string> GpuUsers(const api::GpuSample& gpu) {
  std::set<std::string> users;
  for (const auto& p : gpu.processes) {
    if (!p.user.empty()) users.insert(p.user);
    else if (p.uid.has_value()) users.insert(std::to_string(*p.uid));
  }
  return {users.begin(), users.end()};
}

std::vector<api::Json> GpuRowsJson(const NodeView& node) {
  std::vector<api::Json> rows;
  for (const auto& info : node.info.gpus) {
    api::Json row = api::ToJson(info);
    row["node"] = node.info.name;
    const api::GpuSample* sample = nullptr;
    if (node.latest.has_value()) {
      for (const auto& g : node.latest->gpus) {
        if (g.index == info.index) sample = &g;
      }
    }
    std::string state = "ok";
    if (node.state != NodeState::kReady) state = "unreachable";
    else if (sample != nullptr && sample->failed) state = "failed";
    row["state"] = state;
    if (sample != nullptr) {
      api::Json s = api::ToJson(*sample);
      for (auto it = s.begin(); it != s.end(); ++it) {
        if (it.key() != "index" && it.key() != "uuid") row[it.key()] = it.value();
      }
      row["users"] = GpuUsers(*sample);
      row["time"] = FormatRfc3339Ms(node.latest->time_ms);
    } else {
      row["processes"] = api::Json::array();
      row["users"] = api::Json::array();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace rota::server
