// The job service's store side: job rows, their JSON, Persist, Get and List.
#include "server/jobs_rows.h"

#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/mutex.h"
#include "common/time_util.h"

namespace rota::server {

using api::Json;
using store::Db;
using store::Stmt;

const char* const kJobSelect =
    "SELECT j.id, j.owner_id, coalesce(u.username, ''), j.spec_json, j.state, j.reason, "
    "j.restart_count, j.tasks_json, j.created_ms, j.updated_ms, j.ended_ms, "
    "j.queued_ms, j.attained_gpu_ms, j.preemptions, j.lost_gpu_ms "
    "FROM jobs j LEFT JOIN users u ON u.id = j.owner_id ";

api::Json TaskJson(const JobTask& t) {
  Json j{{"id", t.id},     {"name", t.name},   {"role", t.role},   {"index", t.index},
         {"node", t.node}, {"address", t.address}, {"gpus", t.gpus}, {"port", t.port},
         {"runs", t.runs}, {"unix_user", t.unix_user}, {"state", jobs::StateName(t.state)}, {"pid", t.pid}};
  if (t.exit_code) j["exit_code"] = *t.exit_code;
  if (t.signal) j["signal"] = *t.signal;
  if (!t.error.empty()) j["error"] = t.error;
  if (t.ended_ms > 0) j["ended_ms"] = t.ended_ms;
  return j;
}

namespace {

JobTask TaskFromJson(const api::Json& j) {
  JobTask t;
  t.id = j.value("id", "");
  t.name = j.value("name", "");
  t.role = j.value("role", "");
  t.index = j.value("index", 0u);
  t.node = j.value("node", "");
  t.address = j.value("address", "");
  t.gpus = j.value("gpus", std::vector<uint32_t>{});
  t.port = j.value("port", uint16_t{0});
  t.runs = j.value("runs", true);
  t.unix_user = j.value("unix_user", "");
  t.state = jobs::ParseTaskState(j.value("state", "created")).value_or(jobs::TaskState::kLost);
  t.pid = j.value("pid", int64_t{0});
  if (j.contains("exit_code")) t.exit_code = j["exit_code"].get<int>();
  if (j.contains("signal")) t.signal = j["signal"].get<int>();
  t.error = j.value("error", "");
  t.ended_ms = j.value("ended_ms", int64_t{0});
  return t;
}

}  // namespace

Result<Job> JobFromRow(store::Stmt& s) {
  Job job;
  job.id = s.Int(0);
  job.owner_id = s.Int(1);
  job.owner = s.Text(2);
  auto spec_json = api::ParseJson(s.Text(3));
  if (!spec_json.ok()) return spec_json.status().WithContext("job " + std::to_string(job.id));
  auto spec = jobs::JobSpecFromJson(*spec_json);
  if (!spec.ok()) return spec.status().WithContext("job " + std::to_string(job.id));
  job.spec = *spec;
  auto state = jobs::ParseJobState(s.Text(4));
  if (!state) return Status::InvalidArgument("job " + std::to_string(job.id) + ": unknown state '" + s.Text(4) + "'");
  job.state = *state;
  job.reason = s.Text(5);
  job.restart_count = static_cast<uint32_t>(s.Int(6));
  auto tasks = api::ParseJson(s.Text(7));
  if (tasks.ok() && tasks->is_array()) {
    for (const auto& t : *tasks) job.tasks.push_back(TaskFromJson(t));
  }
  job.created_ms = s.Int(8);
  job.updated_ms = s.Int(9);
  if (!s.IsNull(10)) job.ended_ms = s.Int(10);
  job.queued_ms = s.Int(11);
  job.attained_gpu_ms = static_cast<double>(s.Int(12));
  job.preemptions = static_cast<uint32_t>(s.Int(13));
  job.lost_gpu_ms = static_cast<double>(s.Int(14));
  return job;
}

// "job-12.r0.worker-1" -> 12.

Json ToJson(const Job& j, const std::vector<JobEvent>* events) {
  Json tasks = Json::array();
  for (const auto& t : j.tasks) tasks.push_back(TaskJson(t));
  Json out{{"id", j.id},
           {"name", j.spec.name},
           {"owner", j.owner},
           {"state", jobs::StateName(j.state)},
           {"reason", j.reason},
           {"restart_count", j.restart_count},
           {"framework", jobs::FrameworkName(j.spec.framework)},
           {"spec", jobs::ToJson(j.spec)},
           {"tasks", std::move(tasks)},
           {"created", FormatRfc3339(j.created_ms)},
           {"updated", FormatRfc3339(j.updated_ms)}};
  if (j.ended_ms) out["ended"] = FormatRfc3339(*j.ended_ms);
  if (j.Stopping()) out["stopping"] = true;
  out["queue"] = j.spec.QueueName();
  out["priority"] = j.spec.priority;
  out["preemptible"] = j.spec.preemptible.value_or(false);
  out["preemptions"] = j.preemptions;
  out["lost_gpu_seconds"] = static_cast<int64_t>(j.lost_gpu_ms / 1000);
  out["gpu_seconds"] = static_cast<int64_t>(j.attained_gpu_ms / 1000);
  if (j.state == jobs::JobState::kPending && !j.wait_reason.empty()) {
    out["reason"] = j.wait_reason;
    if (j.position > 0) out["position"] = j.position;
    if (j.estimated_start_ms > 0) out["estimated_start"] = FormatRfc3339(j.estimated_start_ms);
  }
  if (events != nullptr) {
    Json ev = Json::array();
    for (const auto& e : *events) {
      ev.push_back(Json{{"time", FormatRfc3339(e.t_ms)}, {"state", jobs::StateName(e.state)}, {"reason", e.reason}});
    }
    out["events"] = std::move(ev);
  }
  return out;
}

void AppendQueueRow(api::JsonWriter& w, const Job& j) {
  // Keys in the order a document's dump gives them (sorted).
  const bool waits = j.state == jobs::JobState::kPending && !j.wait_reason.empty();
  uint64_t gpus = 0;
  for (const auto& g : j.spec.groups) gpus += uint64_t{g.replicas} * g.gpus_per_task;
  w.BeginObject();
  w.Key("created");
  w.String(FormatRfc3339(j.created_ms));
  if (j.ended_ms) {
    w.Key("ended");
    w.String(FormatRfc3339(*j.ended_ms));
  }
  if (waits && j.estimated_start_ms > 0) {
    w.Key("estimated_start");
    w.String(FormatRfc3339(j.estimated_start_ms));
  }
  w.Key("framework");
  w.String(jobs::FrameworkName(j.spec.framework));
  w.Key("gpu_seconds");
  w.Int(static_cast<int64_t>(j.attained_gpu_ms / 1000));
  w.Key("gpus");
  w.Int(gpus);
  w.Key("id");
  w.Int(j.id);
  w.Key("lost_gpu_seconds");
  w.Int(static_cast<int64_t>(j.lost_gpu_ms / 1000));
  w.Key("name");
  w.String(j.spec.name);
  w.Key("owner");
  w.String(j.owner);
  if (waits && j.position > 0) {
    w.Key("position");
    w.Int(j.position);
  }
  w.Key("preemptible");
  w.Bool(j.spec.preemptible.value_or(false));
  w.Key("preemptions");
  w.Int(j.preemptions);
  w.Key("priority");
  w.Int(j.spec.priority);
  w.Key("queue");
  w.String(j.spec.QueueName());
  w.Key("reason");
  w.String(waits ? j.wait_reason : j.reason);
  w.Key("restart_count");
  w.Int(j.restart_count);
  w.Key("state");
  w.String(jobs::StateName(j.state));
  if (j.Stopping()) {
    w.Key("stopping");
    w.Bool(true);
  }
  w.Key("updated");
  w.String(FormatRfc3339(j.updated_ms));
  w.EndObject();
}

void JobService::Persist(const Job& job, std::optional<jobs::JobState> event, const std::string& reason) {
  Json tasks = Json::array();
  for (const auto& t : job.tasks) tasks.push_back(TaskJson(t));
  const std::string event_state = event ? jobs::StateName(*event) : "";
  auto write = [id = job.id, state = std::string(jobs::StateName(job.state)), job_reason = job.reason,
                restart_count = int64_t{job.restart_count}, tasks = tasks.dump(),
                updated_ms = job.updated_ms, ended_ms = job.ended_ms, event_state,
                queued_ms = job.queued_ms, attained = static_cast<int64_t>(job.attained_gpu_ms),
                preemptions = int64_t{job.preemptions}, lost = static_cast<int64_t>(job.lost_gpu_ms),
                reason](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt up, db.Prepare("UPDATE jobs SET state = ?2, reason = ?3, restart_count = ?4, "
                                         "tasks_json = ?5, updated_ms = ?6, ended_ms = ?7, queued_ms = ?8, "
                                         "attained_gpu_ms = ?9, preemptions = ?10, lost_gpu_ms = ?11 "
                                         "WHERE id = ?1"));
    up.Bind(1, id).Bind(2, state).Bind(3, job_reason).Bind(4, restart_count);
    up.Bind(5, tasks).Bind(6, updated_ms).Bind(8, queued_ms).Bind(9, attained).Bind(10, preemptions);
    up.Bind(11, lost);
    if (ended_ms) up.Bind(7, *ended_ms);
    else up.BindNull(7);
    RETURN_IF_ERROR(up.Run());
    if (event_state.empty()) return Status::Ok();
    ASSIGN_OR_RETURN(Stmt ev, db.Prepare("INSERT INTO job_events (job_id, t_ms, state, reason) "
                                         "VALUES (?1, ?2, ?3, ?4)"));
    return ev.Bind(1, id).Bind(2, updated_ms).Bind(3, event_state).Bind(4, reason).Run();
  };
  // Changes are queued and commit together (a crash may lose the last few ms of
  // them: agents re-report their tasks). The end of a job is committed before the
  // job leaves the active set (DropCommittedEnds), so it never looks older than it is.
  if (job.Final()) {
    store_->WriteAsync(std::move(write), [this, id = job.id](Status st) {
      if (!st.ok()) ROTA_LOG(WARNING) << "job " << id << ": cannot store its end: " << st.message();
      MutexLock lock(&ends_mu_);
      ends_committed_.push_back(id);
    });
    return;
  }
  store_->WriteAsync(std::move(write), [id = job.id](Status st) {
    if (!st.ok()) ROTA_LOG(WARNING) << "job " << id << ": cannot store its state: " << st.message();
  });
}

Result<Job> JobService::Get(int64_t id, std::vector<JobEvent>* events) {
  {
    MutexLock lock(&mu_);
    auto it = active_.find(id);
    if (it != active_.end() && events == nullptr) return it->second;
  }
  std::optional<Job> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kJobSelect) + "WHERE j.id = ?1"));
    s.Bind(1, id);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Status::NotFound("job " + std::to_string(id) + " not found");
    ASSIGN_OR_RETURN(Job job, JobFromRow(s));
    out = std::move(job);
    if (events == nullptr) return Status::Ok();
    ASSIGN_OR_RETURN(Stmt e, db.Prepare("SELECT t_ms, state, reason FROM job_events WHERE job_id = ?1 "
                                        "ORDER BY t_ms, id"));
    e.Bind(1, id);
    while (true) {
      ASSIGN_OR_RETURN(bool more, e.Step());
      if (!more) break;
      auto state = jobs::ParseJobState(e.Text(1));
      if (!state) continue;  // written by this code only; never expected
      events->push_back(JobEvent{e.Int(0), *state, e.Text(2)});
    }
    return Status::Ok();
  }));
  MutexLock lock(&mu_);
  auto it = active_.find(id);
  if (it != active_.end()) return it->second;  // fresher than the store
  return *out;
}

Result<std::vector<Job>> JobService::List(int64_t owner_id, std::optional<jobs::JobState> state_filter,
                                          int limit) {
  if (limit < 1 || limit > 1000) return Status::InvalidArgument("limit: must be 1..1000");
  const std::string state = state_filter ? jobs::StateName(*state_filter) : "";
  std::vector<Job> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kJobSelect) +
                                        "WHERE (?1 = 0 OR j.owner_id = ?1) AND (?2 = '' OR j.state = ?2) "
                                        "ORDER BY j.id DESC LIMIT ?3"));
    s.Bind(1, owner_id).Bind(2, state).Bind(3, int64_t{limit});
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      auto job = JobFromRow(s);
      if (job.ok()) out.push_back(std::move(*job));
    }
    return Status::Ok();
  }));
  MutexLock lock(&mu_);
  for (auto& j : out) {
    auto it = active_.find(j.id);
    if (it != active_.end()) j = it->second;
  }
  return out;
}

Result<std::map<std::string, double>> EndedGpuMsByOwner(store::Db& db, int64_t since_ms) {
  ASSIGN_OR_RETURN(store::Stmt s, db.Prepare("SELECT u.username, SUM(j.attained_gpu_ms) FROM jobs j "
                                             "JOIN users u ON u.id = j.owner_id "
                                             "WHERE j.ended_ms >= ?1 GROUP BY u.username"));
  s.Bind(1, since_ms);
  std::map<std::string, double> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out[s.Text(0)] = static_cast<double>(s.Int(1));
  }
  return out;
}

Result<StoredUsage> LoadFairShareUsage(store::Db& db) {
  ASSIGN_OR_RETURN(store::Stmt s, db.Prepare("SELECT kind, name, gpu_ms, at_ms FROM fairshare_usage"));
  StoredUsage out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    (s.Text(0) == "group" ? out.group : out.user)[s.Text(1)] = s.Double(2);
    out.at_ms = std::max(out.at_ms, s.Int(3));
  }
  return out;
}

Status SaveFairShareUsage(store::Db& db, const StoredUsage& usage) {
  RETURN_IF_ERROR(db.Exec("DELETE FROM fairshare_usage"));
  ASSIGN_OR_RETURN(store::Stmt s, db.Prepare("INSERT INTO fairshare_usage (kind, name, gpu_ms, at_ms) "
                                             "VALUES (?1, ?2, ?3, ?4)"));
  for (const auto& [kind, m] : {std::pair<std::string, const std::map<std::string, double>*>{"user", &usage.user},
                                {"group", &usage.group}}) {
    for (const auto& [name, ms] : *m) {
      s.Reset();
      RETURN_IF_ERROR(s.Bind(1, kind).Bind(2, name).Bind(3, ms).Bind(4, usage.at_ms).Run());
    }
  }
  return Status::Ok();
}

}  // namespace rota::server
