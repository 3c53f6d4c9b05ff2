#include "server/views.h"

#include <algorithm>
#include <set>

#include "api/sample_writer.h"
#include "common/mutex.h"
#include "common/time_util.h"

namespace rota::server {

api::Json NodeJson(const NodeView& node, bool with_latest) {
  api::Json j = api::ToJson(*node.info);
  j["state"] = NodeStateName(node.state);
  j["connected"] = node.connected;
  j["last_seen"] = node.last_seen_ms > 0 ? api::Json(FormatRfc3339Ms(node.last_seen_ms)) : api::Json();
  j["state_since"] =
      node.state_since_ms > 0 ? api::Json(FormatRfc3339Ms(node.state_since_ms)) : api::Json();
  if (!node.unreachable_reason.empty()) j["unreachable_reason"] = node.unreachable_reason;
  j["drain"] = node.drain ? api::Json{{"reason", node.drain->reason},
                                      {"by", node.drain->by},
                                      {"since", FormatRfc3339Ms(node.drain->since_ms)}}
                          : api::Json();
  size_t failed = 0;
  if (node.latest != nullptr) {
    for (const auto& g : node.latest->gpus) failed += g.failed ? 1 : 0;
  }
  j["gpu_count"] = node.info->gpus.size();
  j["failed_gpu_count"] = failed;
  if (with_latest) {
    if (node.latest != nullptr) {
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

std::string_view GpuRows::Slice(size_t from, size_t to) const {
  const size_t end = to < starts.size() ? starts[to] - 1 : text.size();
  return std::string_view(text).substr(starts[from], end - starts[from]);
}

void WriteGpuRows(const NodeView& node, api::JsonWriter& w, std::vector<size_t>* starts) {
  for (const auto& info : node.info->gpus) {
    const api::GpuSample* sample = nullptr;
    if (node.latest != nullptr) {
      for (const auto& g : node.latest->gpus) {
        if (g.index == info.index) sample = &g;
      }
    }
    const char* state = "ok";
    if (node.state != NodeState::kReady) state = "unreachable";
    else if (sample != nullptr && sample->failed) state = "failed";
    w.BeginObject();
    if (starts != nullptr) starts->push_back(w.size() - 1);
    w.Key("node");
    w.String(node.info->name);
    w.Key("index");
    w.Int(info.index);
    w.Key("uuid");
    w.String(info.uuid);
    w.Key("name");
    w.String(info.name);
    w.Key("pci_bus_id");
    w.String(info.pci_bus_id);
    if (info.power_limit_mw.has_value() && (sample == nullptr || !sample->power_limit_mw)) {
      w.Key("power_limit_mw");
      w.Int(*info.power_limit_mw);
    }
    if (info.memory_total_bytes.has_value() && (sample == nullptr || !sample->memory_total_bytes)) {
      w.Key("memory_total_bytes");
      w.Int(*info.memory_total_bytes);
    }
    w.Key("state");
    w.String(state);
    w.Key("users");
    w.BeginArray();
    if (sample != nullptr) {
      for (const auto& u : GpuUsers(*sample)) w.String(u);
    }
    w.EndArray();
    if (sample != nullptr) {
      w.Key("time");
      w.String(FormatRfc3339Ms(node.latest->time_ms));
      api::WriteGpuSampleReadings(w, *sample);
    } else {
      w.Key("processes");
      w.BeginArray();
      w.EndArray();
    }
    w.EndObject();
  }
}

std::shared_ptr<const GpuRows> GpuRowsCache::Rows(const NodeView& node) {
  {
    MutexLock lock(&mu_);
    auto it = entries_.find(node.info->name);
    if (it != entries_.end() && it->second.sample == node.latest.get() &&
        it->second.state == node.state && it->second.node_id == node.info->node_id &&
        it->second.gpus == node.info->gpus.size()) {
      return it->second.rows;
    }
  }
  auto rows = std::make_shared<GpuRows>();
  api::JsonWriter w(&rows->text);
  WriteGpuRows(node, w, &rows->starts);
  MutexLock lock(&mu_);
  Entry& e = entries_[node.info->name];
  e.sample = node.latest.get();
  e.keep = node.latest;
  e.state = node.state;
  e.node_id = node.info->node_id;
  e.gpus = node.info->gpus.size();
  e.rows = rows;
  return rows;
}

}  // namespace rota::server
