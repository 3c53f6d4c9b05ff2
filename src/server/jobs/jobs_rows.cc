// The job service's store side: job rows, their JSON, Persist, Get and List.
#include "server/jobs/jobs_rows.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/mutex.h"
#include "common/time_util.h"
#include "server/scheduling/snapshot_builder.h"

namespace rota::server {

using api::Json;
using store::Db;

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

// When a pending job last became pending (submitted or requeued).
int64_t QueuedMs(const Job& j) { return j.queued_ms > 0 ? j.queued_ms : j.created_ms; }

// A job in its current run: "started" (and "deadline") are shown.
bool Runs(const Job& j) {
  return (j.state == jobs::JobState::kStarting || j.state == jobs::JobState::kRunning) && j.started_ms > 0;
}

}  // namespace

Result<Job> JobFromRow(const store::JobRow& row) {
  Job job;
  job.id = row.id;
  job.owner_id = row.owner_id;
  job.owner = row.owner;
  auto spec_json = api::ParseJson(row.spec_json);
  if (!spec_json.ok()) return spec_json.status().WithContext("job " + std::to_string(job.id));
  auto spec = jobs::JobSpecFromJson(*spec_json);
  if (!spec.ok()) return spec.status().WithContext("job " + std::to_string(job.id));
  job.spec = *spec;
  auto state = jobs::ParseJobState(row.state);
  if (!state) return Status::InvalidArgument("job " + std::to_string(job.id) + ": unknown state '" + row.state + "'");
  job.state = *state;
  job.reason = row.reason;
  job.restart_count = static_cast<uint32_t>(row.restart_count);
  auto tasks = api::ParseJson(row.tasks_json);
  if (tasks.ok() && tasks->is_array()) {
    for (const auto& t : *tasks) job.tasks.push_back(TaskFromJson(t));
  }
  job.created_ms = row.created_ms;
  job.updated_ms = row.updated_ms;
  job.ended_ms = row.ended_ms;
  job.queued_ms = row.queued_ms;
  job.attained_gpu_ms = static_cast<double>(row.attained_gpu_ms);
  job.preemptions = static_cast<uint32_t>(row.preemptions);
  job.lost_gpu_ms = static_cast<double>(row.lost_gpu_ms);
  job.array_id = row.array_id;
  job.array_index = row.array_index;
  job.array_cap = static_cast<uint32_t>(row.array_cap);
  job.array_max_failures = static_cast<uint32_t>(row.array_max_failures);
  if (!row.params_json.empty()) {
    auto params = api::ParseJson(row.params_json);
    if (params.ok() && params->is_object()) {
      for (const auto& [k, v] : params->items()) {
        if (v.is_string()) job.params[k] = v.get<std::string>();
      }
    }
  }
  return job;
}

store::JobRow RowOf(const Job& job) {
  Json tasks = Json::array();
  for (const auto& t : job.tasks) tasks.push_back(TaskJson(t));
  store::JobRow r;
  r.id = job.id;
  r.owner_id = job.owner_id;
  r.owner = job.owner;
  r.state = jobs::StateName(job.state);
  r.reason = job.reason;
  r.restart_count = job.restart_count;
  r.tasks_json = tasks.dump();
  r.created_ms = job.created_ms;
  r.updated_ms = job.updated_ms;
  r.ended_ms = job.ended_ms;
  r.queued_ms = job.queued_ms;
  r.attained_gpu_ms = static_cast<int64_t>(job.attained_gpu_ms);
  r.preemptions = job.preemptions;
  r.lost_gpu_ms = static_cast<int64_t>(job.lost_gpu_ms);
  r.array_id = job.array_id;
  r.array_index = job.array_index;
  r.array_cap = job.array_cap;
  r.array_max_failures = job.array_max_failures;
  if (!job.params.empty()) r.params_json = Json(job.params).dump();
  return r;
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
  if (j.array_id > 0) out["array"] = Json{{"id", j.array_id}, {"index", j.array_index}};
  if (!j.params.empty()) out["params"] = j.params;
  if (j.Stopping()) out["stopping"] = true;
  if (Runs(j)) {
    out["started"] = FormatRfc3339(j.started_ms);
    if (j.spec.time_limit_ms > 0) out["deadline"] = FormatRfc3339(j.started_ms + j.spec.time_limit_ms);
  }
  out["queue"] = j.spec.QueueName();
  out["priority"] = j.spec.Priority();
  out["preemptible"] = j.spec.preemptible.value_or(false);
  out["preemptions"] = j.preemptions;
  out["lost_gpu_seconds"] = static_cast<int64_t>(j.lost_gpu_ms / 1000);
  out["gpu_seconds"] = static_cast<int64_t>(j.attained_gpu_ms / 1000);
  if (j.state == jobs::JobState::kPending) out["queued"] = FormatRfc3339(QueuedMs(j));
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
  if (j.array_id > 0) {
    w.Key("array");
    w.BeginObject();
    w.Key("id");
    w.Int(j.array_id);
    w.Key("index");
    w.Int(j.array_index);
    w.EndObject();
  }
  w.Key("created");
  w.String(FormatRfc3339(j.created_ms));
  if (Runs(j) && j.spec.time_limit_ms > 0) {
    w.Key("deadline");
    w.String(FormatRfc3339(j.started_ms + j.spec.time_limit_ms));
  }
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
  if (!j.params.empty()) {
    w.Key("params");
    w.BeginObject();
    for (const auto& [k, v] : j.params) {
      w.Key(k);
      w.String(v);
    }
    w.EndObject();
  }
  if (waits && j.position > 0) {
    w.Key("position");
    w.Int(j.position);
  }
  w.Key("preemptible");
  w.Bool(j.spec.preemptible.value_or(false));
  w.Key("preemptions");
  w.Int(j.preemptions);
  w.Key("priority");
  w.Int(j.spec.Priority());
  w.Key("queue");
  w.String(j.spec.QueueName());
  if (j.state == jobs::JobState::kPending) {
    w.Key("queued");
    w.String(FormatRfc3339(QueuedMs(j)));
  }
  w.Key("reason");
  w.String(waits ? j.wait_reason : j.reason);
  w.Key("restart_count");
  w.Int(j.restart_count);
  if (Runs(j)) {
    w.Key("started");
    w.String(FormatRfc3339(j.started_ms));
  }
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
  auto& events = outbox_rows_[job.id];  // the row itself is built once, by WriteRows
  if (event) events.push_back(store::JobEventRow{job.updated_ms, jobs::StateName(*event), reason});
}

void JobService::Send(int64_t job_id, const std::string& node, api::TaskSignalMsg m, std::string log_failure_as) {
  outbox_sends_.push_back(TaskSend{job_id, node, std::move(m), std::move(log_failure_as)});
}

void JobService::WriteRows() {
  if (!outbox_rows_.empty()) {
    std::vector<store::JobUpdate> updates;
    updates.reserve(outbox_rows_.size());
    std::vector<int64_t> ends;
    for (auto& [id, events] : outbox_rows_) {
      auto it = active_.find(id);
      if (it == active_.end()) continue;  // never: a job leaves active_ only once its end is committed
      updates.push_back(store::JobUpdate{RowOf(it->second), std::move(events)});
      if (it->second.Final()) ends.push_back(id);
    }
    outbox_rows_.clear();
    // One write for the round, queued under the lock with each row built from
    // the job as it is now: whichever thread queues a later write (a round, a
    // Cancel) never carries an older row (a crash may lose the last few ms of
    // them: agents re-report their tasks). The end of a job is committed before
    // the job leaves the active set (DropCommittedEnds), so it never looks
    // older than it is.
    const size_t n = updates.size();
    store_->WriteAsync([updates = std::move(updates)](Db& db) { return store::UpdateJobs(db, updates); },
                       [this, n, ends = std::move(ends)](Status st) {
                         if (!st.ok()) ROTA_LOG(WARNING) << "jobs: cannot store " << n << " job row(s): " << st.message();
                         if (ends.empty()) return;
                         MutexLock lock(&ends_mu_);
                         ends_committed_.insert(ends_committed_.end(), ends.begin(), ends.end());
                       });
  }
}

namespace {

// `job` with its current run's GPU time so far in attained_gpu_ms.
Job WithRunSoFar(Job job, int64_t now_ms) {
  if (job.run_open) {
    job.attained_gpu_ms += scheduling::CurrentRunGpuMs(job, now_ms);
    job.run_open = false;
  }
  return job;
}

}  // namespace

Result<Job> JobService::Get(int64_t id, std::vector<JobEvent>* events) {
  {
    MutexLock lock(&mu_);
    auto it = active_.find(id);
    if (it != active_.end() && events == nullptr) return WithRunSoFar(it->second, clock_->NowMs());
  }
  std::optional<store::JobRow> row;
  std::vector<store::JobEventRow> history;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(row, store::GetJob(db, id));
    if (row && events != nullptr) {
      ASSIGN_OR_RETURN(history, store::JobEvents(db, id));
    }
    return Status::Ok();
  }));
  if (!row) return Status::NotFound("job " + std::to_string(id) + " not found");
  ASSIGN_OR_RETURN(Job stored, JobFromRow(*row));
  for (const auto& e : history) {
    auto state = jobs::ParseJobState(e.state);
    if (!state) continue;  // written by this code only; never expected
    events->push_back(JobEvent{e.t_ms, *state, e.reason});
  }
  MutexLock lock(&mu_);
  auto it = active_.find(id);
  if (it != active_.end()) return WithRunSoFar(it->second, clock_->NowMs());  // fresher than the store
  return stored;
}

Result<std::vector<Job>> JobService::List(const ListQuery& q, bool* more) {
  const int limit = q.limit;
  if (limit < 1 || limit > 1000) return Status::InvalidArgument("limit: must be 1..1000");
  if (q.offset < 0) return Status::InvalidArgument("offset: must be 0 or more");
  if (q.before < 0 || q.after < 0) return Status::InvalidArgument("before, after: must be job ids");
  if (q.before > 0 && q.after > 0) return Status::InvalidArgument("before and after: give one of them");
  if (q.offset > 0 && (q.before > 0 || q.after > 0)) {
    return Status::InvalidArgument("offset: does not combine with before or after");
  }
  const store::JobListFilter filter{q.owner_id, q.state ? jobs::StateName(*q.state) : "", q.before, q.after,
                                    q.array_id};
  std::vector<store::JobRow> rows;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, store::ListJobs(db, filter, limit + 1, q.offset));  // one more: are there more?
    return Status::Ok();
  }));
  if (more != nullptr) *more = rows.size() > static_cast<size_t>(limit);
  if (rows.size() > static_cast<size_t>(limit)) rows.pop_back();
  if (q.after > 0) std::reverse(rows.begin(), rows.end());  // newest first
  std::vector<Job> out;
  for (const auto& r : rows) {
    auto job = JobFromRow(r);
    if (job.ok()) out.push_back(std::move(*job));
  }
  MutexLock lock(&mu_);
  for (auto& j : out) {
    auto it = active_.find(j.id);
    if (it != active_.end()) j = WithRunSoFar(it->second, clock_->NowMs());
  }
  return out;
}

}  // namespace rota::server
