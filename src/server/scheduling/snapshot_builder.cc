#include "server/scheduling/snapshot_builder.h"

#include <algorithm>

namespace rota::server::scheduling {
namespace {

bool Alive(const JobTask& t) {
  return t.state == jobs::TaskState::kCreated || t.state == jobs::TaskState::kRunning;
}

// A process on a job's GPU is the job's when it runs as the job's Unix user
// (or its user is unknown).
bool OfJob(const api::GpuProcess& p, const std::string& job_user) {
  return p.user.empty() || job_user.empty() || p.user == job_user;
}

sched::JobMeta MetaOf(const Job& job, const SchedulingInput& in) {
  sched::JobMeta m;
  m.id = job.id;
  m.user = job.owner;
  if (auto g = in.group_of.find(job.owner); g != in.group_of.end()) m.group = g->second;
  m.queue = job.spec.QueueName();
  m.priority = job.spec.Priority();
  m.submitted_ms = job.created_ms;
  m.queued_ms = job.queued_ms > 0 ? job.queued_ms : job.created_ms;
  m.time_limit_ms = job.spec.time_limit_ms;
  m.preemptible = job.spec.preemptible.value_or(false);
  m.attained_gpu_ms = job.attained_gpu_ms + (HoldsResources(job) ? CurrentRunGpuMs(job, in.now_ms) : 0);
  return m;
}

const jobs::TaskGroup* GroupOf(const Job& job, const std::string& role) {
  for (const auto& g : job.spec.groups) {
    if (g.role == role) return &g;
  }
  return nullptr;
}

std::vector<sched::TaskDemand> DemandsOf(const Job& job, const SchedulingInput& in) {
  std::vector<sched::TaskDemand> out;
  auto without = in.nodes_without_account.find(job.owner);
  for (const auto& g : job.spec.groups) {
    sched::TaskDemand d;
    d.tasks = g.replicas;
    d.gpus_per_task = g.gpus_per_task;
    d.cpus_per_task = g.PlacementMilliCpus();
    d.memory_per_task = g.memory_bytes_per_task;
    d.labels = g.node_labels;
    d.gpu_model = g.gpu_model;
    d.nodes = g.nodes;
    if (without != in.nodes_without_account.end()) d.not_nodes = without->second;
    out.push_back(std::move(d));
  }
  return out;
}

sched::RunningJob RunningOf(const Job& job, const SchedulingInput& in) {
  sched::RunningJob r;
  r.meta = MetaOf(job, in);
  r.started_ms = job.started_ms;
  r.expected_end_ms = job.spec.time_limit_ms > 0 ? job.started_ms + job.spec.time_limit_ms : 0;
  r.stoppable = !job.Stopping();
  r.moving = job.Stopping() && job.moving;
  // A spread job is not moved: its demands alone do not say how it was placed.
  if (!job.spec.spread) r.demands = DemandsOf(job, in);
  // Processes of one task (pytorch: one per GPU) share its GPUs, CPUs and memory.
  std::map<std::pair<std::string, uint32_t>, size_t> slot;
  for (const auto& t : job.tasks) {
    if (!Alive(t)) continue;
    auto [it, fresh] = slot.try_emplace({t.role, t.index}, r.tasks.size());
    if (fresh) {
      sched::TaskAlloc a;
      a.node = t.node;
      if (const auto* g = GroupOf(job, t.role)) {
        a.cpus = g->PlacementMilliCpus();
        a.memory_bytes = g->memory_bytes_per_task;
      }
      r.tasks.push_back(std::move(a));
    }
    auto& gpus = r.tasks[it->second].gpus;
    gpus.insert(gpus.end(), t.gpus.begin(), t.gpus.end());
  }
  for (auto& a : r.tasks) {
    std::sort(a.gpus.begin(), a.gpus.end());
    a.gpus.erase(std::unique(a.gpus.begin(), a.gpus.end()), a.gpus.end());
  }
  return r;
}

sched::PendingJob PendingOf(const Job& job, const SchedulingInput& in) {
  sched::PendingJob p;
  p.meta = MetaOf(job, in);
  p.not_before_ms = job.retry_at_ms;
  p.spread = job.spec.spread;
  p.demands = DemandsOf(job, in);
  if (in.membership != nullptr && !in.membership->admins.count(job.owner)) {
    for (const auto& q : in.queues) {
      if (q.name != p.meta.queue) continue;
      static const std::vector<std::string> kNone;
      auto g = in.membership->groups_of.find(job.owner);
      p.queue_refuses_owner = !q.Admits(job.owner, g == in.membership->groups_of.end() ? kNone : g->second);
    }
  }
  return p;
}

}  // namespace

bool HoldsResources(const Job& job) {
  return std::any_of(job.tasks.begin(), job.tasks.end(), [](const JobTask& t) { return Alive(t); });
}

bool Schedulable(const Job& job) {
  return job.state == jobs::JobState::kPending && !job.Stopping() && !HoldsResources(job);
}

double CurrentRunGpuMs(const Job& job, int64_t now_ms) {
  double ms = 0;
  for (const auto& t : job.tasks) {
    // A task that ended (as its node reports) holds its GPUs up to its end.
    const int64_t end = t.ended_ms > 0 ? std::clamp(t.ended_ms, job.started_ms, std::max(job.started_ms, now_ms)) : now_ms;
    ms += static_cast<double>(t.gpus.size()) * static_cast<double>(std::max<int64_t>(0, end - job.started_ms));
  }
  return ms;
}

JobGpus JobGpusByNode(const std::map<int64_t, Job>& jobs) {
  JobGpus out;
  for (const auto& [id, job] : jobs) {
    for (const auto& t : job.tasks) {
      if (!Alive(t)) continue;
      auto& node = out[t.node];
      for (uint32_t g : t.gpus) node[g] = GpuHolder{job.owner, t.unix_user};
    }
  }
  return out;
}

std::vector<uint32_t> UnusableGpus(const NodeView& view, const NodeJobGpus& job_gpus,
                                   const std::map<GpuKey, int64_t>& released_ms) {
  std::vector<uint32_t> out;
  if (!view.latest) return out;
  const int64_t sampled = view.latest->time_ms;
  for (const auto& g : view.latest->gpus) {
    bool unusable = g.failed;
    auto job = job_gpus.find(g.index);
    auto released = released_ms.find({view.info->name, g.index});
    // A job's processes linger in samples taken up to one interval after its end.
    const bool stale = released != released_ms.end() &&
                       sampled <= released->second + view.info->sample_interval_ms;
    for (const auto& p : g.processes) {
      if (unusable) break;
      if (job != job_gpus.end()) unusable = !OfJob(p, job->second.unix_user);
      else unusable = !stale;
    }
    if (unusable) out.push_back(g.index);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool OwnerUses(const NodeView& view, const std::vector<uint32_t>& gpus, const NodeJobGpus& job_gpus,
               const std::string& owner) {
  if (!view.latest) return false;
  for (const auto& g : view.latest->gpus) {
    if (!std::binary_search(gpus.begin(), gpus.end(), g.index)) continue;
    auto job = job_gpus.find(g.index);
    for (const auto& p : g.processes) {
      const bool others_job =
          job != job_gpus.end() && job->second.owner != owner && OfJob(p, job->second.unix_user);
      if (!others_job) return true;
    }
  }
  return false;
}

sched::Snapshot BuildSnapshot(const SchedulingInput& in) {
  sched::Snapshot s;
  s.now_ms = in.now_ms;
  s.policy = in.policy;
  static const std::map<int64_t, Job> kNoJobs;
  const auto& jobs = in.jobs != nullptr ? *in.jobs : kNoJobs;
  JobGpus computed;
  if (in.job_gpus == nullptr) computed = JobGpusByNode(jobs);
  const JobGpus& job_gpus = in.job_gpus != nullptr ? *in.job_gpus : computed;
  static const NodeJobGpus kNone;
  for (const auto& view : in.nodes) {
    sched::Node n;
    n.name = view.info->name;
    n.labels = view.info->labels;
    n.cpus = view.info->cpus * 1000;  // milli-cores (TaskGroup::PlacementMilliCpus)
    n.memory_bytes = view.info->memory_bytes;
    if (auto ports = in.job_ports.find(n.name); ports != in.job_ports.end()) {
      n.task_slots = ports->second.slots;
      n.port_pool = ports->second.pool;
    }
    n.schedulable = view.state == NodeState::kReady && view.connected && !view.drain;
    if (view.drain) {
      n.unschedulable_reason = view.drain->reason.empty() ? "drained" : "drained: " + view.drain->reason;
    } else if (!n.schedulable) {
      n.unschedulable_reason = "unreachable";
    }
    if (!view.info->gpus.empty()) n.gpu_model = view.info->gpus.front().name;
    std::set<uint32_t> present;
    n.gpu_models = GpuModelsIfMixed(*view.info);
    for (const auto& g : view.info->gpus) {
      present.insert(g.index);
      n.gpus = std::max(n.gpus, g.index + 1);
    }
    auto jg = job_gpus.find(n.name);
    std::set<uint32_t> unusable;
    for (uint32_t g : UnusableGpus(view, jg == job_gpus.end() ? kNone : jg->second, in.released_ms)) {
      unusable.insert(g);
    }
    for (uint32_t g = 0; g < n.gpus; ++g) {
      if (!present.count(g)) unusable.insert(g);  // a gap in the node's GPU indices
    }
    if (auto u = in.unconfirmed_gpus.find(n.name); u != in.unconfirmed_gpus.end()) {
      for (uint32_t g : u->second) {
        if (g < n.gpus) unusable.insert(g);
      }
    }
    n.unusable_gpus.assign(unusable.begin(), unusable.end());
    s.nodes.push_back(std::move(n));
  }
  s.pending.reserve(jobs.size());  // moves of grown vectors cost more than the spare room
  for (const auto& [id, job] : jobs) {
    if (job.Final()) continue;
    if (HoldsResources(job)) {
      s.running.push_back(RunningOf(job, in));
    } else if (Schedulable(job) && (in.held_owners == nullptr || !in.held_owners->count(job.owner)) &&
               (in.held_jobs == nullptr || !in.held_jobs->count(id))) {
      s.pending.push_back(PendingOf(job, in));
    }
  }
  for (const auto& r : in.reservations) {
    if (r.cancelled_ms || r.end_ms <= in.now_ms) continue;
    sched::Reservation x;
    x.id = r.id;
    x.user = r.owner;
    x.node = r.node;
    x.gpus = r.gpus;
    x.start_ms = r.start_ms;
    x.end_ms = r.end_ms;
    x.owner_idle = in.idle_reservations.count(r.id) > 0;
    s.reservations.push_back(std::move(x));
  }
  s.queues = in.queues;
  s.fairshare = in.fairshare;
  s.user_quotas = in.user_quotas;
  s.group_quotas = in.group_quotas;
  s.user_period_gpu_hours = in.user_period_gpu_hours;
  s.group_period_gpu_hours = in.group_period_gpu_hours;
  return s;
}

}  // namespace rota::server::scheduling
