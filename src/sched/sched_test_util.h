#pragma once
// Builders for scheduler tests: snapshots in a few lines.

#include <string>
#include <vector>

#include "sched/snapshot.h"

namespace rota::sched::testing {

inline constexpr int64_t kNow = 1'800'000'000'000;  // a fixed "now"
inline constexpr int64_t kMin = 60'000;
inline constexpr int64_t kHour = 3'600'000;

inline Node MakeNode(const std::string& name, uint32_t gpus, std::vector<uint32_t> unusable = {}) {
  Node n;
  n.name = name;
  n.gpu_model = "A100";
  n.gpus = gpus;
  n.unusable_gpus = std::move(unusable);
  return n;
}

inline TaskDemand Demand(uint32_t tasks, uint32_t gpus_per_task) {
  TaskDemand d;
  d.tasks = tasks;
  d.gpus_per_task = gpus_per_task;
  return d;
}

inline PendingJob Pending(JobId id, const std::string& user, std::vector<TaskDemand> demands,
                          int64_t submitted = kNow - kMin) {
  PendingJob p;
  p.meta.id = id;
  p.meta.user = user;
  p.meta.submitted_ms = submitted;
  p.meta.queued_ms = submitted;
  p.demands = std::move(demands);
  return p;
}

inline RunningJob Running(JobId id, const std::string& user, std::vector<TaskAlloc> tasks,
                          int64_t started = kNow - kHour, int64_t expected_end = 0) {
  RunningJob r;
  r.meta.id = id;
  r.meta.user = user;
  r.meta.submitted_ms = started;
  r.meta.queued_ms = started;
  r.started_ms = started;
  r.expected_end_ms = expected_end;
  r.tasks = std::move(tasks);
  uint32_t gpus = 0;
  for (const auto& t : r.tasks) gpus += static_cast<uint32_t>(t.gpus.size());
  r.meta.attained_gpu_ms = static_cast<double>(gpus) * static_cast<double>(kNow - started);
  return r;
}

inline TaskAlloc On(const std::string& node, std::vector<uint32_t> gpus) {
  TaskAlloc t;
  t.node = node;
  t.gpus = std::move(gpus);
  return t;
}

inline Snapshot Base(std::vector<Node> nodes) {
  Snapshot s;
  s.now_ms = kNow;
  s.nodes = std::move(nodes);
  s.queues.push_back(Queue{});
  return s;
}

inline const Wait* WaitOf(const Decisions& d, JobId id) {
  for (const auto& w : d.waits) {
    if (w.id == id) return &w;
  }
  return nullptr;
}

inline const Start* StartOf(const Decisions& d, JobId id) {
  for (const auto& s : d.starts) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

}  // namespace rota::sched::testing
