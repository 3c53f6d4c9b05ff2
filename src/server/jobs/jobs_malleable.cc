// JobService's malleable tasks: a node's cores divided again among its live
// malleable tasks whenever that set changes (see jobs.h, RebalanceMalleable).

#include <cmath>
#include <cstdio>
#include <tuple>

#include "common/log.h"
#include "server/jobs/jobs.h"

namespace rota::server {
namespace {

using jobs::TaskState;

const jobs::TaskGroup* GroupFor(const Job& job, const std::string& role) {
  for (const auto& g : job.spec.groups) {
    if (g.role == role) return &g;
  }
  return nullptr;
}

// A task that holds (or is about to hold) its node's cores.
bool Live(const JobTask& t) { return t.runs && (t.state == TaskState::kCreated || t.state == TaskState::kRunning); }

std::string Cores(double cpus) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", cpus);
  return text;
}

}  // namespace

void JobService::RebalanceMalleable(int64_t now_ms) {
  if (malleable_jobs_.empty() && malleable_live_.empty()) return;
  std::map<std::string, std::vector<std::pair<Job*, JobTask*>>> live;
  for (auto id = malleable_jobs_.begin(); id != malleable_jobs_.end();) {
    auto it = active_.find(*id);
    if (it == active_.end() || it->second.Final()) {
      id = malleable_jobs_.erase(id);
      continue;
    }
    Job& job = it->second;
    for (auto& t : job.tasks) {
      const jobs::TaskGroup* g = GroupFor(job, t.role);
      if (g != nullptr && g->malleable && Live(t)) live[t.node].emplace_back(&job, &t);
    }
    ++id;
  }
  std::map<std::string, std::set<std::string>> now_live;
  for (const auto& [node, tasks] : live) {
    for (const auto& entry : tasks) now_live[node].insert(entry.second->id);
  }
  for (const auto& [node, ids] : now_live) {
    auto before = malleable_live_.find(node);
    if (before != malleable_live_.end() && before->second == ids) continue;
    RebalanceNode(node, live[node], now_ms);
  }
  malleable_live_ = std::move(now_live);
}

void JobService::RebalanceNode(const std::string& node, const std::vector<std::pair<Job*, JobTask*>>& tasks,
                               int64_t now_ms) {
  const std::optional<NodeView> view = cluster_->Node(node);
  if (!view || !view->info || view->info->cpus == 0) return;  // unknown cores: nothing to divide
  // Cores other jobs' tasks were placed with on the node stay theirs.
  double others = 0;
  std::set<std::tuple<int64_t, std::string, uint32_t>> counted;  // a task's processes share its cores
  for (const auto& [id, job] : active_) {
    if (job.Final()) continue;
    for (const auto& t : job.tasks) {
      if (t.node != node || !Live(t)) continue;
      const jobs::TaskGroup* g = GroupFor(job, t.role);
      if (g != nullptr && !g->malleable && counted.emplace(id, t.role, t.index).second) others += g->cpus_per_task;
    }
  }
  const uint32_t reserved = static_cast<uint32_t>(std::min<double>(view->info->cpus, std::ceil(others)));
  malleable::NodeCores cores{reserved, view->info->cpus - reserved};
  // Processes of one task (one per GPU) share its bounds.
  std::map<std::pair<int64_t, std::string>, int> processes;
  for (const auto& [job, t] : tasks) processes[{job->id, t->role + "." + std::to_string(t->index)}]++;
  std::vector<malleable::Task> in;
  for (const auto& [job, t] : tasks) {
    const jobs::TaskGroup* g = GroupFor(*job, t->role);
    const double n = processes[{job->id, t->role + "." + std::to_string(t->index)}];
    in.push_back(malleable::Task{t->id, g->malleable->min_cpus / n, g->malleable->max_cpus / n,
                                 g->cpus_per_task / n, job->spec.Priority()});
  }
  auto allotments = cores.count == 0 ? Result<std::vector<malleable::Allotment>>(Status::ResourceExhausted(
                                           "other jobs' tasks hold every core"))
                                     : malleable::DivideCores(cores, in, options_.malleable_policy);
  if (!allotments.ok()) {
    ROTA_LOG(WARNING) << "node " << node << ": malleable tasks keep their allotments: "
                      << allotments.status().message();
    return;
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto [job, t] = tasks[i];
    const malleable::Allotment& a = (*allotments)[i];
    if (std::fabs(a.cpus - t->cpus) < 1e-9 && a.cpuset == t->cpuset) continue;
    t->cpus = a.cpus;
    t->cpuset = a.cpuset;
    // A start still in the outbox carries the allotment itself (generation 0).
    bool in_start = false;
    for (auto& s : outbox_sends_) {
      auto* start = std::get_if<api::TaskStartMsg>(&s.msg);
      if (start != nullptr && start->task.id == t->id) {
        start->task.cpus = a.cpus;
        start->task.cpuset = a.cpuset;
        in_start = true;
      }
    }
    std::string what = t->name + " on " + node + ": " + Cores(a.cpus) + " cores (CPUs " + a.cpuset + ")";
    if (!in_start) {
      // Generations grow across server restarts too: from the clock, past the last one sent.
      t->generation = std::max<uint64_t>(t->generation + 1, static_cast<uint64_t>(std::max<int64_t>(now_ms, 1)));
      outbox_sends_.push_back(TaskSend{job->id, node,
                                       api::TaskResizeMsg{t->id, a.cpus, a.cpuset, t->generation},
                                       "job " + std::to_string(job->id) + ": resize " + t->name});
    }
    job->updated_ms = now_ms;
    Persist(*job, job->state, (in_start ? "malleable start: " : "resized: ") + what);
  }
}

}  // namespace rota::server
