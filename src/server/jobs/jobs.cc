#include "server/jobs/jobs.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "common/log.h"
#include "common/mutex.h"
#include "common/time_util.h"
#include "sched/order.h"
#include "server/accounts/accounts.h"
#include "server/jobs/jobs_rows.h"
#include "server/queues/queues.h"
#include "server/quotas/quotas.h"
#include "server/scheduling/snapshot_builder.h"
#include "server/nodes/task_transport.h"
#include "server/reservations/reservations.h"

namespace rota::server {
namespace {

using api::Json;
using store::Db;
using jobs::JobState;
using jobs::StateName;
using jobs::TaskState;

// "job-12.r0.worker-1" -> 12.
std::optional<int64_t> JobIdOfTask(const std::string& task) {
  if (task.rfind("job-", 0) != 0) return std::nullopt;
  const size_t dot = task.find('.', 4);
  if (dot == std::string::npos || dot == 4 || dot > 22) return std::nullopt;
  int64_t id = 0;
  for (size_t i = 4; i < dot; ++i) {
    if (task[i] < '0' || task[i] > '9') return std::nullopt;
    id = id * 10 + (task[i] - '0');
  }
  return id;
}

bool Ended(const JobTask& t) {
  return t.state == TaskState::kExited || t.state == TaskState::kLost || t.state == TaskState::kUnstarted;
}
bool Failed(const JobTask& t) {
  return t.state == TaskState::kLost || (t.state == TaskState::kExited && (t.signal || t.exit_code.value_or(1) != 0));
}
int Code(const JobTask& t) { return t.signal ? 128 + *t.signal : t.exit_code.value_or(255); }

std::string Describe(const JobTask& t) {
  std::string s = t.name + " on " + t.node;
  if (t.state == TaskState::kLost) return s + " was lost" + (t.error.empty() ? "" : ": " + t.error);
  if (!t.error.empty()) return s + " failed: " + t.error;
  if (t.signal) return s + " was killed by signal " + std::to_string(*t.signal);
  return s + " exited with status " + std::to_string(t.exit_code.value_or(-1));
}

// The tasks whose success ends the job: chief/master/launcher when there is
// one, else every running task but parameter servers and evaluators.
bool Decisive(const Job& job, const JobTask& t) {
  bool has_lead = false;
  for (const auto& x : job.tasks) {
    has_lead = has_lead || x.role == "chief" || x.role == "master" || x.role == "launcher";
  }
  if (!t.runs) return false;
  if (has_lead) return t.role == "chief" || t.role == "master" || t.role == "launcher";
  return t.role != "ps" && t.role != "evaluator";
}

}  // namespace

JobService::JobService(store::Store* store, ClusterState* cluster, TaskTransport* gateway,
                       Reservations* reservations, Accounts* accounts, Queues* queues,
                       const Quotas* quotas, const Clock* clock, JobServiceOptions options)
    : store_(store),
      cluster_(cluster),
      gateway_(gateway),
      reservations_(reservations),
      accounts_(accounts),
      queues_(queues),
      quotas_(quotas),
      clock_(clock),
      options_(options),
      launcher_(gateway),
      logs_(gateway, std::chrono::milliseconds(options.log_timeout_ms), options.log_max_pending) {
  gateway_->SetTaskListeners(
      [this](const std::string& node, api::TaskStatusMsg m) {
        MutexLock lock(&mu_);
        for (auto& r : m.tasks) reports_.emplace_back(node, std::move(r));
        cv_.NotifyAll();
      },
      [this](const std::string& node, api::TaskLogMsg m) { logs_.OnAnswer(node, std::move(m)); });
}

JobService::~JobService() {
  if (node_listener_ != 0) cluster_->RemoveListener(node_listener_);
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  MutexLock lock(&mu_);
  if (usage_at_ms_ > 0) SaveUsage(clock_->NowMs(), /*wait=*/true);
}

Status JobService::Start() {
  started_at_ms_ = clock_->NowMs();
  std::vector<Job> loaded;
  std::vector<store::JobRow> rows;
  store::FairShareUsage usage;
  std::map<int64_t, int64_t> run_began;  // job -> when its current run was placed
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, store::UnfinishedJobs(db));
    ASSIGN_OR_RETURN(usage, store::LoadFairShareUsage(db));
    for (const auto& r : rows) {
      if (r.state != jobs::StateName(JobState::kStarting) && r.state != jobs::StateName(JobState::kRunning)) continue;
      ASSIGN_OR_RETURN(auto events, store::JobEvents(db, r.id));
      for (const auto& e : events) {
        if (e.state == jobs::StateName(JobState::kStarting)) run_began[r.id] = e.t_ms;  // the last one
      }
    }
    return Status::Ok();
  }));
  for (const auto& r : rows) {
    auto job = JobFromRow(r);
    if (!job.ok()) {
      ROTA_LOG(WARNING) << "jobs: skipping a stored job: " << job.status().message();
      continue;
    }
    loaded.push_back(std::move(*job));
  }
  {
    MutexLock lock(&mu_);
    // Fair-share usage decays from when it was stored.
    const int64_t since = std::max<int64_t>(0, started_at_ms_ - usage.at_ms);
    usage_.user = sched::Decayed(usage.user, since, options_.fairshare_half_life_ms);
    usage_.group = sched::Decayed(usage.group, since, options_.fairshare_half_life_ms);
    usage_at_ms_ = usage_saved_ms_ = started_at_ms_;
    for (auto& j : loaded) {
      // Its run goes on: its time limit and GPU time count from when it was placed.
      auto began = run_began.find(j.id);
      j.started_ms = began != run_began.end() ? std::min(began->second, clock_->NowMs()) : clock_->NowMs();
      j.run_open = scheduling::HoldsResources(j);
      active_[j.id] = std::move(j);
    }
  }
  if (!loaded.empty()) ROTA_LOG(INFO) << "jobs: " << loaded.size() << " unfinished job(s) restored";
  RETURN_IF_ERROR(LoadArrayFailures());
  // A node that connects, answers again or goes away changes what fits: pass
  // now, not at the next full tick.
  node_listener_ = cluster_->AddListener([this](const std::string& event, const NodeView&) {
    if (event != "node") return;
    {
      MutexLock lock(&mu_);
      wake_ = dirty_ = true;
    }
    cv_.NotifyAll();
  });
  if (!options_.manual) thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

std::map<std::string, std::set<uint16_t>> JobService::BusyPorts(int64_t now_ms) {
  std::map<std::string, std::set<uint16_t>> busy;
  for (const auto& [id, job] : active_) {
    for (const auto& t : job.tasks) {
      if (!Ended(t) && t.port != 0) busy[t.address].insert(t.port);
    }
  }
  for (auto& [address, ports] : foreign_ports_) {
    for (auto it = ports.begin(); it != ports.end();) {
      if (it->second <= now_ms) {
        it = ports.erase(it);
      } else {
        busy[address].insert(it->first);
        ++it;
      }
    }
  }
  return busy;
}

void JobService::SetState(Job& job, JobState state, const std::string& reason, int64_t now_ms) {
  const bool changed = job.state != state || job.reason != reason;
  job.state = state;
  job.reason = reason;
  job.updated_ms = now_ms;
  Persist(job, changed ? std::optional<JobState>(state) : std::nullopt, reason);
  if (changed) ROTA_LOG(INFO) << "job " << job.id << ": " << StateName(state) << " (" << reason << ")";
}

void JobService::Finish(Job& job, JobState state, const std::string& reason, int64_t now_ms) {
  CloseRun(job, now_ms);
  job.ended_ms = now_ms;
  job.wait_reason.clear();
  dirty_ = true;
  job.stop_to = StopTo::kNone;
  if (state == JobState::kFailed && job.array_max_failures > 0) ++array_failed_[job.array_id];
  SetState(job, state, reason, now_ms);
}

void JobService::Launch(Job& job, const std::vector<jobs::PlacedTask>& placed, int64_t now_ms,
                        std::map<int64_t, Result<User>>& owners) {
  const std::string job_key = "job-" + std::to_string(job.id);
  auto plan = jobs::BuildLaunch(job.spec, placed, {job_key, job.restart_count});
  if (!plan.ok()) return Finish(job, JobState::kFailed, plan.status().message(), now_ms);
  // Each launch has task ids of its own ("job-7.r2.worker-0"), so that nodes
  // never take one for an earlier launch's: the restart count, or one past the
  // previous launch when the job was placed again without a restart.
  uint32_t attempt = job.restart_count;
  for (const auto& t : job.tasks) {
    size_t r = t.id.find(".r", job_key.size());
    if (r == std::string::npos) continue;
    attempt = std::max<uint32_t>(attempt, static_cast<uint32_t>(std::strtoul(t.id.c_str() + r + 2, nullptr, 10)) + 1);
  }
  job.tasks.clear();
  auto known = owners.find(job.owner_id);
  if (known == owners.end()) known = owners.emplace(job.owner_id, accounts_->GetUser(job.owner_id)).first;
  const Result<User>& owner = known->second;
  // A task's CPU and memory limits are shared by its processes (one per GPU for pytorch).
  std::map<std::string, int> processes_of;
  for (const auto& p : *plan) processes_of[p.task]++;
  for (const auto& p : *plan) {
    JobTask t;
    t.id = job_key + ".r" + std::to_string(attempt) + "." + p.name;
    t.name = p.name;
    t.role = p.role;
    t.index = p.task_index;
    t.node = p.node;
    for (const auto& pt : placed) {
      if (pt.Name() == p.task) {
        t.address = pt.address;
        t.port = pt.port;
      }
    }
    t.gpus = p.gpus;
    t.runs = p.runs;
    t.unix_user = owner.ok() ? owner->UnixUserOn(p.node) : "";
    if (!p.runs) t.state = TaskState::kRunning;  // holds its GPUs; nothing to start
    if (p.runs) {
      api::TaskStartMsg m;
      m.task.id = t.id;
      m.task.job_id = job_key;
      m.task.name = p.name;
      m.task.argv = p.argv;
      m.task.env = p.env;
      m.task.workdir = job.spec.workdir;
      m.task.user = t.unix_user;
      m.task.files = p.files;
      m.task.file_env = p.file_env;
      if (t.port != 0) m.task.ports = {t.port};
      m.task.stop_after_disconnect_ms = job.spec.stop_after_disconnect_ms;
      for (const auto& g : job.spec.groups) {
        if (g.role != p.role) continue;
        const int n = std::max(1, processes_of[p.task]);
        m.task.cpus = static_cast<double>(g.cpus_per_task) / n;
        m.task.memory_bytes = g.memory_bytes_per_task / static_cast<uint64_t>(n);
        if (g.malleable) {
          // Its minimum until RebalanceMalleable, later in this round, divides the node.
          m.task.malleable = true;
          m.task.cpus = g.malleable->min_cpus / n;
          m.task.gpus = p.gpus;
          auto sig = job.spec.env.find(jobs::kResizeSignalVar);
          m.task.resize_signal = sig == job.spec.env.end() ? "USR1" : sig->second;
          malleable_jobs_.insert(job.id);
        }
      }
      // Sent by the Launcher once the lock is released; a start it cannot send
      // undoes the launch (ApplyLaunchFailures).
      outbox_sends_.push_back(TaskSend{job.id, p.node, std::move(m), "", job.spec.secrets, job.owner_id});
    }
    job.tasks.push_back(std::move(t));
  }
  job.started_ms = now_ms;
  job.run_open = true;
  holdings_version_.fetch_add(1, std::memory_order_release);
  SetState(job, JobState::kStarting,
           job.restart_count == 0 ? "placed" : "restart " + std::to_string(job.restart_count), now_ms);
}

void JobService::ApplyLaunchFailures(const std::vector<LaunchFailure>& failures) {
  const int64_t now_ms = clock_->NowMs();
  for (const auto& f : failures) {
    auto it = active_.find(f.job_id);
    if (it == active_.end() || it->second.Final()) continue;
    Job& job = it->second;
    // Only the launch that failed: its tasks are still the job's.
    const bool current = std::any_of(job.tasks.begin(), job.tasks.end(), [&](const JobTask& t) {
      return t.runs && (f.sent.count(t.id) || t.state == TaskState::kCreated);
    });
    if (!current) continue;
    // Gang: what started is stopped; the job goes back to pending (or fails, when
    // trying again cannot help).
    for (auto& t : job.tasks) {
      if (t.runs && t.state == TaskState::kCreated) {
        if (f.sent.count(t.id)) Send(job.id, t.node, api::TaskSignalMsg{t.id, "KILL"});
        t.state = TaskState::kUnstarted;
      }
    }
    // Its run never began: no GPU time, and nothing it held to release.
    job.run_open = false;
    holdings_version_.fetch_add(1, std::memory_order_release);
    dirty_ = true;
    if (job.Stopping()) {  // cancelled (or stopped) while its starts were being sent
      AfterTaskChange(job, now_ms);
      continue;
    }
    if (f.final) {  // e.g. a secret deleted since the submit: no later try can start it
      Finish(job, JobState::kFailed, f.failure, now_ms);
      continue;
    }
    job.retry_at_ms = now_ms + 2000;
    SetState(job, JobState::kPending, f.failure, now_ms);
  }
}

void JobService::Act() {
  // The messages first (a start is not held up by the store), then the rows.
  while (!outbox_sends_.empty()) {
    std::vector<TaskSend> sends;
    sends.swap(outbox_sends_);
    mu_.Unlock();  // never a lock held over I/O
    std::vector<LaunchFailure> failures = launcher_.Send(sends);
    mu_.Lock();
    if (!failures.empty()) ApplyLaunchFailures(failures);  // may queue KILLs: sent by the next turn
  }
  WriteRows();
}

void JobService::StopGang(Job& job, StopTo to, const std::string& reason, int64_t now_ms,
                          const std::string& notice) {
  job.stop_to = to;
  job.stop_reason = reason;
  job.kill_at_ms = now_ms + options_.stop_grace_ms;
  for (auto& t : job.tasks) {
    if (!t.runs && !Ended(t)) {  // placeholders just end
      t.state = TaskState::kExited;
      t.exit_code = 0;
    }
    if (t.runs && t.state == TaskState::kRunning) {
      Send(job.id, t.node, api::TaskSignalMsg{t.id, "TERM", notice}, "job " + std::to_string(job.id) + ": SIGTERM " + t.name);
    }
  }
  SetState(job, job.state, "stopping: " + reason, now_ms);
  AfterTaskChange(job, now_ms);
}

void JobService::AfterTaskChange(Job& job, int64_t now_ms) {
  const bool all_ended = std::all_of(job.tasks.begin(), job.tasks.end(),
                                     [](const JobTask& t) { return !t.runs || Ended(t); });
  // Every node found without the owner's Unix account is noted, those of
  // tasks refused while the gang stops too: each costs a launch to find.
  bool no_account = false;
  for (const auto& t : job.tasks) {
    if (t.runs && t.state == TaskState::kExited && !t.unix_user.empty() &&
        t.error == api::NoUnixUserError(t.unix_user)) {
      no_account_[job.owner][t.node] = NoAccount{t.unix_user, now_ms + kNoAccountMs};
      no_account = true;
    }
  }
  if (job.Stopping()) {
    if (!all_ended) return;  // StopGang already ended the placeholders
    const StopTo to = job.stop_to;
    const std::string reason = job.stop_reason;
    job.stop_to = StopTo::kNone;
    CloseRun(job, now_ms);
    switch (to) {
      case StopTo::kRestart:
      case StopTo::kReplace:
      case StopTo::kRequeue:
        if (to == StopTo::kRestart) ++job.restart_count;  // retry_at_ms set by the caller
        job.queued_ms = now_ms;
        dirty_ = true;
        return SetState(job, JobState::kPending, reason, now_ms);  // replace, requeue: not a restart
      case StopTo::kSucceeded: return Finish(job, JobState::kSucceeded, reason, now_ms);
      case StopTo::kCancelled: return Finish(job, JobState::kCancelled, reason, now_ms);
      case StopTo::kFailed:
      case StopTo::kNone: return Finish(job, JobState::kFailed, reason, now_ms);
    }
  }
  // A port its agent found taken by something outside rota: placed again on
  // other ports, without counting a restart.
  for (const auto& t : job.tasks) {
    if (t.runs && t.state == TaskState::kExited && t.port != 0 && t.error == api::PortInUseError(t.port)) {
      foreign_ports_[t.address][t.port] = now_ms + 60'000;
      job.retry_at_ms = now_ms;
      return StopGang(job, StopTo::kReplace, t.error + "; placing the job again on other ports", now_ms);
    }
  }
  // A node without the owner's Unix account: placed again on other nodes
  // (none of the owner's jobs goes there for a while), without counting a
  // restart.
  for (const auto& t : job.tasks) {
    if (no_account && t.runs && t.state == TaskState::kExited && !t.unix_user.empty() &&
        t.error == api::NoUnixUserError(t.unix_user)) {
      job.retry_at_ms = now_ms;
      std::string why = t.error;  // "... on this node": name it
      if (auto at = why.rfind("this node"); at != std::string::npos) why.replace(at, 9, t.node);
      return StopGang(job, StopTo::kReplace, why + "; placing the job again where its owner has one", now_ms);
    }
  }
  // A failure: restart the gang when the policy allows, else fail. The task
  // that ended first is the cause (its peers often fail because it did).
  const JobTask* first = nullptr;
  for (const auto& t : job.tasks) {
    if (!t.runs || !Failed(t)) continue;
    const int64_t at = t.ended_ms > 0 ? t.ended_ms : INT64_MAX;  // lost: no end time
    if (first == nullptr || at < (first->ended_ms > 0 ? first->ended_ms : INT64_MAX)) first = &t;
  }
  if (first != nullptr) {
    const std::string why = Describe(*first);
    if (auto delay = job.spec.restart.DelayBefore(job.restart_count + 1, Code(*first))) {
      job.retry_at_ms = now_ms + *delay;
      return StopGang(job, StopTo::kRestart, why + "; restarting the gang", now_ms);
    }
    return StopGang(job, StopTo::kFailed, why, now_ms);
  }
  // Success of the decisive tasks ends the job.
  bool any_decisive = false, decided = true;
  for (const auto& t : job.tasks) {
    if (!Decisive(job, t)) continue;
    any_decisive = true;
    decided = decided && t.state == TaskState::kExited && !Failed(t);
  }
  if (any_decisive && decided) {
    if (all_ended) return Finish(job, JobState::kSucceeded, "every task succeeded", now_ms);
    return StopGang(job, StopTo::kSucceeded, "the decisive tasks succeeded", now_ms);
  }
  if (job.state == JobState::kStarting &&
      std::all_of(job.tasks.begin(), job.tasks.end(), [](const JobTask& t) {
        return t.state == TaskState::kRunning || t.state == TaskState::kExited;
      })) {
    SetState(job, JobState::kRunning, "every task started", now_ms);
  }
}

std::optional<int64_t> JobService::HandleReport(const std::string& node, const api::TaskReport& r) {
  auto id = JobIdOfTask(r.id);
  auto it = id ? active_.find(*id) : active_.end();
  JobTask* task = nullptr;
  if (it != active_.end() && !it->second.Final()) {
    for (auto& t : it->second.tasks) {
      if (t.id == r.id && t.node == node) task = &t;
    }
  }
  if (task == nullptr) {
    // A task of an earlier attempt or of a job that ended: make sure it stops.
    if (r.state == "running") Send(0, node, api::TaskSignalMsg{r.id, "KILL"});
    return std::nullopt;
  }
  // The agent's states are running, exited and lost (checked when decoded).
  const TaskState state = jobs::ParseTaskState(r.state).value_or(TaskState::kLost);
  if (task->state == state && task->exit_code == r.exit_code && task->signal == r.signal && task->pid == r.pid) {
    return std::nullopt;
  }
  task->state = state;
  task->pid = r.pid;
  task->exit_code = r.exit_code;
  task->signal = r.signal;
  task->error = r.error;
  // The end by the node's clock, unless that clock is off from the server's
  // (before the run began, or still to come): then the time the report came.
  const int64_t now = clock_->NowMs();
  const bool plausible = r.ended_ms >= it->second.started_ms && r.ended_ms <= now;
  task->ended_ms = r.ended_ms <= 0 ? 0 : plausible ? r.ended_ms : now;
  it->second.updated_ms = now;
  return it->first;
}

void JobService::AfterReports(const std::set<int64_t>& jobs, bool ended) {
  const int64_t now = clock_->NowMs();
  // A task that ended frees what it held; one that started frees nothing (the
  // scheduler counts a starting task's GPUs, CPUs and port already). What the
  // jobs do about it (restart, requeue, end) marks a pass itself.
  if (ended) dirty_ = true;
  for (int64_t id : jobs) {
    auto it = active_.find(id);
    if (it == active_.end() || it->second.Final()) continue;
    Job& job = it->second;
    Persist(job, std::nullopt, "");
    AfterTaskChange(job, now);
  }
}

void JobService::DropCommittedEnds() {
  std::vector<int64_t> ids;
  {
    MutexLock lock(&ends_mu_);
    ids.swap(ends_committed_);
  }
  PassCache& c = pass_cache_;
  for (int64_t id : ids) {
    auto it = active_.find(id);
    if (it == active_.end() || !it->second.Final()) continue;
    // Its GPU time now counts as an ended job's in the quota period, unless the
    // last read of ended jobs has it (or none was made yet: the first has it).
    const Job& job = it->second;
    if (c.ended_usage_ms >= 0 && c.ended_read.erase(id) == 0) c.ended_gpu_ms[job.owner] += job.attained_gpu_ms;
    active_.erase(it);
  }
}

void JobService::Tick(int64_t now_ms, bool full) {
  // Node states for the deadline and liveness checks, copied once per tick.
  std::map<std::string, NodeView> nodes;
  if (full) {
    for (auto& n : cluster_->Nodes()) nodes.emplace(n.info->name, std::move(n));
  }
  auto node = [&nodes](const std::string& name) -> const NodeView* {
    auto it = nodes.find(name);
    return it == nodes.end() ? nullptr : &it->second;
  };
  for (auto& [id, job] : active_) {
    if (job.Final()) continue;  // leaves once its end is committed
    if (full && job.Stopping() && now_ms >= job.kill_at_ms) {
      for (auto& t : job.tasks) {
        if (!t.runs || Ended(t)) continue;
        const NodeView* view = node(t.node);
        if (!view || !view->connected) {
          t.state = TaskState::kLost;  // its node is gone: nothing more to wait for
          orphans_[t.node][t.id] = Orphan{job.id, 0, t.gpus};
          t.error = "node " + t.node + " is unreachable";
          continue;
        }
        Send(job.id, t.node, api::TaskSignalMsg{t.id, "KILL"});
      }
      job.kill_at_ms = now_ms + options_.stop_grace_ms;
      AfterTaskChange(job, now_ms);
    } else if (full && (job.state == JobState::kRunning || job.state == JobState::kStarting) && !job.Stopping()) {
      if (job.spec.time_limit_ms > 0 && now_ms - job.started_ms > job.spec.time_limit_ms) {
        StopGang(job, StopTo::kFailed, "time limit " + FormatExactDuration(job.spec.time_limit_ms) + " reached",
                 now_ms);
      } else {
        // Tasks on nodes that went away are lost.
        bool changed = false;
        for (auto& t : job.tasks) {
          if (!t.runs || Ended(t)) continue;
          const NodeView* view = node(t.node);
          // A node not back yet after a server restart counts from the restart,
          // not from when it was last seen.
          const int64_t since = std::max(view ? view->state_since_ms : 0, started_at_ms_);
          if (view && view->state == NodeState::kUnreachable && now_ms - since > 10'000) {
            t.state = TaskState::kLost;
            orphans_[t.node][t.id] = Orphan{job.id, 0, t.gpus};
            t.error = "node " + t.node + " unreachable since " + FormatRfc3339(since);
            changed = true;
          }
        }
        if (changed) AfterTaskChange(job, now_ms);
      }
    }
  }
  if (full) StopOrphans(nodes, now_ms);
  if (full || dirty_) SchedulePass(now_ms, full);
}

void JobService::StopOrphans(const std::map<std::string, NodeView>& nodes, int64_t now_ms) {
  for (auto n = orphans_.begin(); n != orphans_.end();) {
    auto view = nodes.find(n->first);
    if (view == nodes.end()) {
      n = orphans_.erase(n);  // the node was removed
      continue;
    }
    if (view->second.state != NodeState::kReady || !view->second.connected) {
      ++n;
      continue;
    }
    // The node answers again: what still runs there of a superseded launch
    // stops (SIGTERM, then SIGKILL after the grace period).
    for (auto o = n->second.begin(); o != n->second.end();) {
      const bool term = o->second.kill_at_ms == 0;
      if (!term && now_ms < o->second.kill_at_ms) {
        ++o;
        continue;
      }
      const std::string what = "stopping task " + o->first + " on " + n->first +
                               ", left from a launch superseded while the node was unreachable (" +
                               (term ? "SIGTERM" : "SIGKILL") + ")";
      ROTA_LOG(WARNING) << "job " << o->second.job_id << ": " << what;
      Send(o->second.job_id, n->first,
           api::TaskSignalMsg{o->first, term ? "TERM" : "KILL",
                              term ? "stopped: its job runs elsewhere since its node was unreachable" : ""});
      if (auto job = active_.find(o->second.job_id); job != active_.end()) {
        job->second.updated_ms = now_ms;  // the event's time: when it was sent
        Persist(job->second, job->second.state, what);
      }
      if (term) {
        o->second.kill_at_ms = now_ms + options_.stop_grace_ms;
        ++o;
      } else {
        o = n->second.erase(o);
      }
    }
    n = n->second.empty() ? orphans_.erase(n) : std::next(n);
  }
}

void JobService::Run() {
  const auto tick = std::chrono::milliseconds(options_.tick_ms);
  int64_t last_full = INT64_MIN / 2, last_pass = INT64_MIN / 2;  // monotonic ms
  // The rounds' CPU budget (JobServiceOptions::pass_cost_factor).
  const int64_t budget_cap_ns = options_.round_budget_ms * 1'000'000;
  const int64_t share = options_.pass_cost_factor + 1;  // wall time per unit of budget
  int64_t budget_ns = budget_cap_ns, budget_at_ns = MonotonicNs();
  int64_t last_cost_ns = 0;  // of the last round
  auto refill = [&] {
    const int64_t now = MonotonicNs();
    budget_ns = std::min(budget_cap_ns, budget_ns + (now - budget_at_ns) / share);
    budget_at_ns = now;
  };
  MutexLock lock(&mu_);
  while (!stop_) {
    cv_.WaitFor(&mu_, tick,
                [&]() ROTA_REQUIRES(mu_) { return stop_ || wake_ || !reports_.empty(); });
    if (stop_) return;
    // A burst of submissions is placed in batches: one pass per gap at most, and
    // none while the budget is spent. A job submitted to an idle service is
    // placed at once. Task reports wait only while rounds are cheap (a burst of
    // task ends with a short queue is taken in batches); a costly round is not
    // put off (a freed GPU with 10,000 jobs queued is taken at once).
    refill();
    int64_t wait_ms = 0;
    const int64_t since_pass = clock_->MonotonicMs() - last_pass;
    if (reports_.empty()) {
      if (wake_ && since_pass < options_.placement_gap_ms) wait_ms = options_.placement_gap_ms - since_pass;
      if (budget_ns < 0) wait_ms = std::max(wait_ms, (-budget_ns * share + 999'999) / 1'000'000);
    } else {
      const int64_t batch_ms = options_.pass_cost_factor * last_cost_ns / 1'000'000;
      if (batch_ms <= options_.report_batch_max_ms && since_pass < batch_ms) wait_ms = batch_ms - since_pass;
    }
    if (wait_ms > 0) {
      const bool for_reports = !reports_.empty();
      cv_.WaitFor(&mu_, std::chrono::milliseconds(wait_ms),
                  [&]() ROTA_REQUIRES(mu_) { return stop_ || (!for_reports && !reports_.empty()); });
      if (stop_) return;
      refill();
    }
    wake_ = false;
    const bool full = clock_->MonotonicMs() - last_full >= options_.tick_ms;
    const int64_t began_ns = MonotonicNs();
    Round(full);
    Act();  // sends with the lock released
    last_cost_ns = MonotonicNs() - began_ns;
    budget_ns -= last_cost_ns;
    last_pass = clock_->MonotonicMs();
    if (full) last_full = last_pass;
  }
}

void JobService::OnPolicyChange() {
  {
    MutexLock lock(&mu_);
    reread_ = wake_ = dirty_ = true;
  }
  cv_.NotifyAll();
}

void JobService::Step(bool full) {
  MutexLock lock(&mu_);
  wake_ = false;
  Round(full);
  Act();
}

void JobService::Round(bool full) {
  // Every report that arrived is applied before any job reacts, so a gang's
  // failure is blamed on the task that ended first, not on the first reported.
  std::set<int64_t> changed;
  bool ended = false;
  while (!reports_.empty()) {
    auto [node, r] = std::move(reports_.front());
    reports_.pop_front();
    if (auto id = HandleReport(node, r)) {
      changed.insert(*id);
      ended = ended || r.state != "running";
    }
  }
  AfterReports(changed, ended);
  DropCommittedEnds();
  Tick(clock_->NowMs(), full);
  RebalanceMalleable(clock_->NowMs());
}

Result<Job> JobService::Cancel(int64_t user_id, bool admin, int64_t id) {
  std::string by = "user " + std::to_string(user_id);  // who cancels, for the reason
  if (auto u = accounts_->GetUser(user_id); u.ok()) by = u->username;
  {
    MutexLock lock(&mu_);
    auto it = active_.find(id);
    if (it != active_.end()) {
      Job& job = it->second;
      if (!admin && job.owner_id != user_id) {
        return Status::PermissionDenied("job " + std::to_string(id) + " belongs to " + job.owner);
      }
      if (job.Final()) {  // ended a moment ago; its end is being committed
        return Status::Conflict("job " + std::to_string(id) + " already ended: " + StateName(job.state));
      }
      if (job.stop_to != StopTo::kCancelled) {
        const int64_t now = clock_->NowMs();
        if (job.state == JobState::kPending && !job.Stopping()) {
          Finish(job, JobState::kCancelled, "cancelled by " + by, now);
        } else {
          StopGang(job, StopTo::kCancelled, "cancelled by " + by, now);
        }
        const bool ended = job.Final();
        Job copy = job;
        Act();  // its row queued, its SIGTERMs sent with the lock released (`job` may be gone after)
        if (ended) {
          // Its end is queued: wait for the commit, so what this returns is what
          // the store says from now on.
          lock.Unlock();
          Status st = store_->Flush();
          if (!st.ok()) return st;
        }
        return copy;
      }
      return job;
    }
  }
  ASSIGN_OR_RETURN(Job job, Get(id));
  if (!admin && job.owner_id != user_id) {
    return Status::PermissionDenied("job " + std::to_string(id) + " belongs to " + job.owner);
  }
  return Status::Conflict("job " + std::to_string(id) + " already ended: " + StateName(job.state));
}

void JobService::Logs(int64_t id, const std::string& task, const std::string& stream,
                      uint64_t offset, uint64_t max_bytes, LogFetcher::Done done) {
  Result<Job> job = Get(id);
  if (!job.ok()) return done(job.status());
  const JobTask* found = nullptr;
  for (const auto& t : job->tasks) {
    if (t.name == task) found = &t;
  }
  if (found == nullptr) {
    std::string names;
    for (const auto& t : job->tasks) {
      if (t.runs) names += (names.empty() ? "" : ", ") + t.name;
    }
    return done(Status::NotFound("job " + std::to_string(id) + " has no task '" + task + "'" +
                                 (names.empty() ? "" : " (tasks: " + names + ")")));
  }
  if (!found->runs) return done(Status::NotFound("task " + task + " runs nothing and has no log"));
  logs_.Fetch(found->node, api::TaskLogsMsg{0, found->id, stream, offset, max_bytes},
              std::move(done));
}

std::vector<JobService::Allocation> JobService::AllocationsOn(const std::string& node) const {
  std::vector<Allocation> out;
  MutexLock lock(&mu_);
  for (const auto& [id, job] : active_) {
    for (const auto& t : job.tasks) {
      if (t.node != node || t.gpus.empty() || Ended(t)) continue;
      out.push_back(Allocation{"job-" + std::to_string(id), t.gpus, t.unix_user});
    }
  }
  return out;
}

std::optional<int64_t> JobService::JobOfTaskOn(const std::string& node, const std::string& task) const {
  const auto id = JobIdOfTask(task);
  if (!id) return std::nullopt;
  MutexLock lock(&mu_);
  auto it = active_.find(*id);
  if (it == active_.end() || it->second.Final()) return std::nullopt;
  for (const auto& t : it->second.tasks) {
    if (t.id == task && t.node == node && t.runs) return *id;
  }
  return std::nullopt;
}

std::map<std::string, std::vector<accounting::Holding>> JobService::Holdings(int64_t since_ms) const {
  std::map<std::string, std::vector<accounting::Holding>> out;
  MutexLock lock(&mu_);
  for (const auto& [id, job] : active_) {
    if (!job.run_open) continue;
    // Tasks without GPUs too: their CPU energy is their job's (ledger.h).
    for (const auto& t : job.tasks) {
      out[t.node].push_back(accounting::Holding{id, job.owner, t.gpus, job.started_ms, 0});
    }
  }
  for (const auto& [node, h] : closed_holdings_) {
    if (h.end_ms >= since_ms) out[node].push_back(h);
  }
  return out;
}

}  // namespace rota::server
