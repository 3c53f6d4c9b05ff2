// The job service's arrays: one submission stored as an array and its members
// (ordinary jobs), the cap on members running at once applied before each
// scheduling pass, and cancelling a whole array. See docs/design-jobs.md
// ("Job arrays").
#include <map>
#include <string>

#include "common/log.h"
#include "common/time_util.h"
#include "common/mutex.h"
#include "server/accounts/accounts.h"
#include "server/jobs/jobs.h"
#include "server/jobs/jobs_rows.h"
#include "server/scheduling/snapshot_builder.h"

namespace rota::server {

using store::Db;

api::Json ArrayToJson(const store::ArrayRow& a) {
  api::Json counts = api::Json::object();
  for (const auto& [state, n] : a.counts) counts[state] = n;
  api::Json out{{"id", a.id},
                {"name", a.name},
                {"owner", a.owner},
                {"indices", a.indices},
                {"size", a.size},
                {"max_running", a.max_running},
                {"created", FormatRfc3339(a.created_ms)},
                {"counts", std::move(counts)}};
  if (auto spec = api::ParseJson(a.spec_json); spec.ok()) out["spec"] = std::move(*spec);
  if (!a.sweep_json.empty()) {
    if (auto sweep = api::ParseJson(a.sweep_json); sweep.ok()) out["sweep"] = std::move(*sweep);
  }
  return out;
}

Result<jobs::ArraySpec> ArrayFromJson(const api::Json& j) {
  if (j.is_string()) return jobs::ParseArraySpec(j.get<std::string>());
  if (!j.is_object()) return Status::InvalidArgument("array: must be a string (\"0-99%10\") or {indices, max_running}");
  for (const auto& [key, value] : j.items()) {
    if (key != "indices" && key != "max_running") {
      return Status::InvalidArgument("array." + key + ": unknown field (use indices, max_running)");
    }
  }
  auto indices = j.find("indices");
  if (indices == j.end() || !indices->is_string()) {
    return Status::InvalidArgument("array.indices: must be a string such as \"0-99\" or \"0,3,7-9\"");
  }
  ASSIGN_OR_RETURN(jobs::ArraySpec a, jobs::ParseArraySpec(indices->get<std::string>()));
  if (auto cap = j.find("max_running"); cap != j.end()) {
    if (!cap->is_number_integer() || cap->get<int64_t>() < 1 || cap->get<int64_t>() > int64_t{jobs::kMaxArrayMembers}) {
      return Status::InvalidArgument("array.max_running: must be a whole number 1.." +
                                     std::to_string(jobs::kMaxArrayMembers));
    }
    if (a.max_running != 0) return Status::InvalidArgument("array: give the cap once (%N or max_running)");
    a.max_running = static_cast<uint32_t>(cap->get<int64_t>());
  }
  return a;
}

Result<store::ArrayRow> JobService::SubmitArray(int64_t owner_id, const std::string& owner,
                                                const jobs::JobSpec& spec, const jobs::ArraySpec& array) {
  return SubmitMembers(owner_id, owner, spec, array, {}, "", 0);
}

Result<store::ArrayRow> JobService::SubmitSweep(int64_t owner_id, const std::string& owner,
                                                const jobs::JobSpec& spec, const jobs::SweepSpec& sweep) {
  RETURN_IF_ERROR(jobs::CheckSweep(sweep));
  std::vector<std::map<std::string, std::string>> trials = jobs::Trials(sweep);
  jobs::ArraySpec array;
  array.max_running = sweep.max_running;
  for (size_t i = 0; i < trials.size(); ++i) array.indices.push_back(static_cast<int64_t>(i));
  return SubmitMembers(owner_id, owner, spec, array, trials, jobs::ToJson(sweep).dump(), sweep.max_failures);
}

Result<store::ArrayRow> JobService::SubmitMembers(int64_t owner_id, const std::string& owner,
                                                  const jobs::JobSpec& submitted, const jobs::ArraySpec& array,
                                                  const std::vector<std::map<std::string, std::string>>& params,
                                                  const std::string& sweep_json, uint32_t max_failures) {
  if (array.indices.empty() || array.indices.size() > jobs::kMaxArrayMembers) {
    return Status::InvalidArgument("array: must have 1.." + std::to_string(jobs::kMaxArrayMembers) + " members");
  }
  if (!params.empty() && params.size() != array.indices.size()) {
    return Status::Internal("array: " + std::to_string(params.size()) + " parameter sets for " +
                            std::to_string(array.indices.size()) + " members");
  }
  std::map<std::string, std::string> keys{{"index", ""}};
  if (!params.empty()) {
    for (const auto& [k, v] : params.front()) keys[k] = v;
  }
  RETURN_IF_ERROR(jobs::CheckArrayTemplate(submitted, keys));
  // Queue, quotas and placement are checked once: members differ only in argv and env.
  ASSIGN_OR_RETURN(jobs::JobSpec spec, CheckSubmission(owner_id, owner, submitted));
  const int64_t now = clock_->NowMs();
  store::ArrayRow arow;
  arow.owner_id = owner_id;
  arow.owner = owner;
  arow.name = spec.name;
  arow.indices = jobs::ArraySpecText(array);
  arow.max_running = array.max_running;
  arow.size = static_cast<int64_t>(array.indices.size());
  arow.spec_json = jobs::ToJson(spec).dump();
  arow.created_ms = now;
  arow.sweep_json = sweep_json;
  std::vector<Job> members;
  // One write transaction: the array and all its members, or nothing.
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    members.clear();
    members.reserve(array.indices.size());
    ASSIGN_OR_RETURN(arow.id, store::InsertArray(db, arow));
    for (size_t i = 0; i < array.indices.size(); ++i) {
      const int64_t index = array.indices[i];
      Job job;
      job.owner_id = owner_id;
      job.owner = owner;
      std::map<std::string, std::string> values;
      if (!params.empty()) values = params[i];
      values["index"] = std::to_string(index);
      job.spec = jobs::MemberSpec(spec, arow.id, index, values);
      if (!params.empty()) {
        job.params = params[i];
        job.spec.env[jobs::kTrialParamsVar] = api::Json(params[i]).dump();
      }
      if (Status st = jobs::Validate(job.spec); !st.ok()) {
        return st.WithContext("array member " + std::to_string(index));
      }
      job.created_ms = job.updated_ms = job.queued_ms = now;
      job.reason = "submitted";
      job.array_id = arow.id;
      job.array_index = index;
      job.array_cap = array.max_running;
      job.array_max_failures = max_failures;
      store::JobRow row = RowOf(job);
      row.name = job.spec.name;
      row.spec_json = jobs::ToJson(job.spec).dump();
      ASSIGN_OR_RETURN(job.id, store::InsertJob(db, row));
      members.push_back(std::move(job));
    }
    return Status::Ok();
  }));
  {
    MutexLock lock(&mu_);
    for (auto& m : members) {
      const int64_t id = m.id;
      active_.emplace(id, std::move(m));
    }
    wake_ = dirty_ = true;
    cv_.NotifyAll();
  }
  arow.counts[jobs::StateName(jobs::JobState::kPending)] = arow.size;
  ROTA_LOG(INFO) << (sweep_json.empty() ? "array " : "sweep ") << arow.id << " (" << spec.name
                 << ") submitted by " << owner << ": " << arow.size << " member(s) [" << arow.indices << "]";
  return arow;
}

Status JobService::LoadArrayFailures() {
  std::set<int64_t> arrays;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, job] : active_) {
      if (job.array_max_failures > 0) arrays.insert(job.array_id);
    }
  }
  std::map<int64_t, int64_t> failed;
  for (const int64_t id : arrays) {
    ASSIGN_OR_RETURN(store::ArrayRow a, GetArray(id));
    auto f = a.counts.find(jobs::StateName(jobs::JobState::kFailed));
    failed[id] = f == a.counts.end() ? 0 : f->second;
  }
  MutexLock lock(&mu_);
  for (const auto& [id, n] : failed) array_failed_[id] = n;
  return Status::Ok();
}

Result<store::ArrayRow> JobService::GetArray(int64_t id) {
  std::optional<store::ArrayRow> row;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(row, store::GetArray(db, id));
    return Status::Ok();
  }));
  if (!row) return Status::NotFound("array " + std::to_string(id) + " not found");
  return std::move(*row);
}

Result<std::vector<store::ArrayRow>> JobService::ListArrays(int64_t owner_id, int limit, int64_t before) {
  if (limit < 1 || limit > 1000) return Status::InvalidArgument("limit: must be 1..1000");
  if (before < 0) return Status::InvalidArgument("before: must be an array id");
  std::vector<store::ArrayRow> rows;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, store::ListArrays(db, owner_id, limit, before));
    return Status::Ok();
  }));
  return rows;
}

Result<int64_t> JobService::CancelArray(int64_t user_id, bool admin, int64_t id) {
  ASSIGN_OR_RETURN(store::ArrayRow array, GetArray(id));
  if (!admin && array.owner_id != user_id) {
    return Status::PermissionDenied("array " + std::to_string(id) + " belongs to " + array.owner);
  }
  std::string by = "user " + std::to_string(user_id);
  if (auto u = accounts_->GetUser(user_id); u.ok()) by = u->username;
  int64_t cancelled = 0;
  bool ended = false;
  {
    MutexLock lock(&mu_);
    const int64_t now = clock_->NowMs();
    const std::string reason = "array " + std::to_string(id) + " cancelled by " + by;
    for (auto& [job_id, job] : active_) {
      if (job.array_id != id || job.Final() || job.stop_to == StopTo::kCancelled) continue;
      if (job.state == jobs::JobState::kPending && !job.Stopping()) {
        Finish(job, jobs::JobState::kCancelled, reason, now);
        ended = true;
      } else {
        StopGang(job, StopTo::kCancelled, reason, now);
        ended = ended || job.Final();
      }
      ++cancelled;
    }
    if (cancelled > 0) Act();
  }
  // What this answers is what the store says from now on.
  if (ended) RETURN_IF_ERROR(store_->Flush());
  ROTA_LOG(INFO) << "array " << id << ": " << cancelled << " member(s) cancelled by " << by;
  return cancelled;
}

std::map<int64_t, std::set<int64_t>> JobService::RunningArrayMembers() const {
  std::map<int64_t, std::set<int64_t>> out;
  MutexLock lock(&mu_);
  for (const auto& [id, job] : active_) {
    if (job.array_id > 0 && job.state == jobs::JobState::kRunning && !job.Stopping()) out[job.array_id].insert(id);
  }
  return out;
}

bool JobService::StopEarly(int64_t array_id, int64_t job_id, const std::string& reason) {
  MutexLock lock(&mu_);
  auto it = active_.find(job_id);
  if (it == active_.end()) return false;
  Job& job = it->second;
  if (job.array_id != array_id || job.state != jobs::JobState::kRunning || job.Stopping()) return false;
  const int64_t now = clock_->NowMs();
  const std::string notice = reason + " at " + FormatRfc3339(now) + "; SIGKILL follows in " +
                             std::to_string(options_.stop_grace_ms / 1000) + " s; the trial ends succeeded";
  ROTA_LOG(INFO) << "job " << job_id << ": " << reason;
  StopGang(job, StopTo::kSucceeded, reason, now, notice);
  Act();
  return true;
}

std::set<int64_t> JobService::HoldArrayMembers(int64_t now_ms) {
  // A sweep whose budget of failed trials is spent launches no more: its
  // pending trials are cancelled.
  for (auto it = array_failed_.begin(); it != array_failed_.end();) {
    bool left = false;
    for (auto& [id, job] : active_) {
      if (job.array_id != it->first || job.Final()) continue;
      left = true;
      if (it->second < job.array_max_failures || !scheduling::Schedulable(job)) continue;
      Finish(job, jobs::JobState::kCancelled,
             "sweep " + std::to_string(job.array_id) + " stopped: " + std::to_string(it->second) +
                 " trial(s) failed (max_failures " + std::to_string(job.array_max_failures) + ")",
             now_ms);
    }
    it = left ? std::next(it) : array_failed_.erase(it);
  }
  std::vector<jobs::ArrayMemberState> members;
  for (const auto& [id, job] : active_) {
    if (job.array_id == 0 || job.array_cap == 0 || job.Final()) continue;
    members.push_back({id, job.array_id, job.array_cap, scheduling::HoldsResources(job),
                       scheduling::Schedulable(job)});
  }
  if (members.empty()) return {};
  std::set<int64_t> held = jobs::HeldByArrayCap(members);
  std::map<int64_t, std::string> reasons;  // one text per array
  for (const int64_t id : held) {
    Job& job = active_.at(id);
    auto [it, fresh] = reasons.try_emplace(job.array_id);
    if (fresh) {
      it->second = "array " + std::to_string(job.array_id) + " is at its cap: at most " +
                   std::to_string(job.array_cap) + " member(s) at once";
    }
    if (job.wait_reason != it->second) job.wait_reason = it->second;
    job.position = 0;
    job.estimated_start_ms = 0;
  }
  return held;
}

}  // namespace rota::server
