#include "server/queues/queues.h"

#include <algorithm>

#include "common/file_util.h"
#include "common/mutex.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "server/accounts/accounts.h"
#include "reserve/json_fields.h"
#include "reserve/reservation.h"
#include "server/store/sched_settings.h"

namespace rota::server {
namespace {

using api::Json;
using reserve::FormatDurationMs;
using reserve::JsonFields;
using store::Db;

constexpr const char* kDefaultQueue = "default";

QueueDef BuiltInDefault() {
  QueueDef d;
  d.queue.name = kDefaultQueue;
  d.queue.min_priority = -100;
  d.queue.max_priority = 0;
  d.description = "built in: everyone's jobs unless they name another queue";
  return d;
}

Status Bad(const std::string& field, const std::string& why) {
  return Status::InvalidArgument("queue." + field + ": " + why);
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

Result<QueueDef> QueueFromJson(const Json& body, bool check_names) {
  if (!body.is_object()) return Status::InvalidArgument("queue: must be an object");
  Json j = body;
  for (const char* key : {"default_time_limit", "max_time_limit"}) {
    if (j.contains(key) && j[key] == "0") j.erase(key);  // "0": none
  }
  JsonFields f(j, "queue");
  // built_in, pending and unfinished are what GET adds: read-only, so a queue
  // as GET gives it may be PUT back (and read by rota simulate --queues).
  RETURN_IF_ERROR(f.Only({"name", "description", "priority", "min_priority", "max_priority", "users",
                          "groups", "max_gpus", "default_time_limit", "max_time_limit",
                          "preemptible", "built_in", "pending", "unfinished"}));
  QueueDef d;
  sched::Queue& q = d.queue;
  q.name.clear();
  RETURN_IF_ERROR(f.Str("name", &q.name, true, 32));
  if (!jobs::ValidQueueName(q.name)) return Bad("name", "'" + q.name + "': use [a-z][a-z0-9_-]{0,31}");
  RETURN_IF_ERROR(f.Str("description", &d.description, false, api::kMaxTextLength));
  int64_t v = 0;
  RETURN_IF_ERROR(f.Int("priority", &v, jobs::kMinPriority, jobs::kMaxPriority));
  q.priority = static_cast<int>(v);
  v = 0;
  RETURN_IF_ERROR(f.Int("min_priority", &v, jobs::kMinPriority, jobs::kMaxPriority));
  q.min_priority = static_cast<int>(v);
  v = 0;
  RETURN_IF_ERROR(f.Int("max_priority", &v, jobs::kMinPriority, jobs::kMaxPriority));
  q.max_priority = static_cast<int>(v);
  if (q.min_priority > q.max_priority) return Bad("min_priority", "must not exceed max_priority");
  RETURN_IF_ERROR(f.StrArray("users", &q.users, kMaxQueueMembers, 64));
  RETURN_IF_ERROR(f.StrArray("groups", &q.groups, kMaxQueueMembers, 64));
  for (auto* names : {&q.users, &q.groups}) {
    for (auto& name : *names) name = std::string(Trim(name));  // " bob": bob
  }
  for (const auto& u : q.users) {
    Status st = check_names ? ValidateUsername(u) : Status::Ok();
    if (!st.ok()) return Bad("users", st.message());
  }
  for (const auto& g : q.groups) {
    Status st = check_names ? ValidateGroupName(g) : Status::Ok();
    if (!st.ok()) return Bad("groups", st.message());
  }
  v = 0;
  RETURN_IF_ERROR(f.Int("max_gpus", &v, 0, 1'000'000));
  q.max_gpus = static_cast<uint32_t>(v);
  RETURN_IF_ERROR(f.Duration("default_time_limit", &q.default_time_limit_ms));
  if (q.default_time_limit_ms < 0 || q.default_time_limit_ms > jobs::kMaxTimeLimitMs) {
    return Bad("default_time_limit", "must be 0 (none) up to 366d");
  }
  RETURN_IF_ERROR(f.Duration("max_time_limit", &q.max_time_limit_ms));
  if (q.max_time_limit_ms < 0 || q.max_time_limit_ms > jobs::kMaxTimeLimitMs) {
    return Bad("max_time_limit", "must be 0 (none) up to 366d");
  }
  if (q.max_time_limit_ms > 0 && q.default_time_limit_ms > q.max_time_limit_ms) {
    return Bad("default_time_limit", "must not exceed max_time_limit");
  }
  RETURN_IF_ERROR(f.Bool("preemptible", &q.preemptible_by_default));
  return d;
}

Json ToJson(const QueueDef& d) {
  const sched::Queue& q = d.queue;
  Json j{{"name", q.name},
         {"description", d.description},
         {"priority", q.priority},
         {"min_priority", q.min_priority},
         {"max_priority", q.max_priority},
         {"users", q.users},
         {"groups", q.groups},
         {"max_gpus", q.max_gpus},
         {"preemptible", q.preemptible_by_default},
         {"built_in", q.name == kDefaultQueue}};
  if (q.default_time_limit_ms > 0) j["default_time_limit"] = FormatExactDuration(q.default_time_limit_ms);
  if (q.max_time_limit_ms > 0) j["max_time_limit"] = FormatExactDuration(q.max_time_limit_ms);
  return j;
}

Result<std::vector<sched::Queue>> QueuesFromJsonFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path, size_t{16} << 20));
  auto parsed = api::ParseStrictJson(text);
  if (!parsed.ok()) return Status::InvalidArgument(path + ": " + parsed.status().message());
  const Json* list = &*parsed;
  if (list->is_object() && list->contains("queues")) list = &(*list)["queues"];
  if (!list->is_array()) {
    return Status::InvalidArgument(path + ": expected an array of queues or {\"queues\": [...]}");
  }
  if (list->size() > kMaxQueues) {
    return Status::InvalidArgument(path + ": at most " + std::to_string(kMaxQueues) + " queues");
  }
  std::vector<sched::Queue> out;
  for (size_t i = 0; i < list->size(); ++i) {
    Json entry = (*list)[i];
    auto def = QueueFromJson(entry);
    const std::string where = path + ": queues[" + std::to_string(i) + "]";
    if (!def.ok()) return Status::InvalidArgument(where + ": " + def.status().message());
    for (const auto& q : out) {
      if (q.name == def->queue.name) return Status::InvalidArgument(where + ": '" + q.name + "' is given twice");
    }
    out.push_back(std::move(def->queue));
  }
  return out;
}

Queues::Queues(store::Store* store, const Clock* clock) : store_(store), clock_(clock) {
  queues_[kDefaultQueue] = BuiltInDefault();
}

Status Queues::Start() {
  std::vector<QueueDef> loaded;
  std::vector<store::QueueRow> rows;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, store::LoadQueues(db));
    return Status::Ok();
  }));
  for (const auto& r : rows) {
    auto json = api::ParseJson(r.spec_json);
    if (!json.ok()) return json.status().WithContext("stored queue " + r.name);
    auto def = QueueFromJson(*json, /*check_names=*/false);  // as stored by any version
    if (!def.ok()) return def.status().WithContext("stored queue " + r.name);
    def->created_ms = r.created_ms;
    def->updated_ms = r.updated_ms;
    loaded.push_back(std::move(*def));
  }
  MutexLock lock(&mu_);
  for (auto& d : loaded) queues_[d.queue.name] = std::move(d);
  return Status::Ok();
}

std::vector<QueueDef> Queues::List() const {
  MutexLock lock(&mu_);
  std::vector<QueueDef> out;
  out.push_back(queues_.at("default"));
  for (const auto& [name, d] : queues_) {
    if (name != "default") out.push_back(d);
  }
  return out;
}

std::vector<sched::Queue> Queues::ForScheduler() const {
  MutexLock lock(&mu_);
  std::vector<sched::Queue> out;
  for (const auto& [name, d] : queues_) out.push_back(d.queue);
  return out;
}

Result<QueueDef> Queues::Get(const std::string& name) const {
  MutexLock lock(&mu_);
  auto it = queues_.find(name);
  if (it == queues_.end()) return Status::NotFound("no queue '" + name + "'");
  return it->second;
}

Status Queues::Store(const QueueDef& d, bool create) {
  Json j = ToJson(d);
  j.erase("built_in");
  const store::QueueRow row{d.queue.name, j.dump(), d.created_ms, d.updated_ms};
  return store_->Write([&](Db& db) { return create ? store::InsertQueue(db, row) : store::PutQueue(db, row); });
}

Result<QueueDef> Queues::Create(const QueueDef& q) {
  QueueDef d = q;
  d.created_ms = d.updated_ms = clock_->NowMs();
  {
    MutexLock lock(&mu_);
    if (queues_.count(d.queue.name)) return Status::AlreadyExists("queue '" + d.queue.name + "' exists");
    if (queues_.size() >= kMaxQueues) {
      return Status::ResourceExhausted("at most " + std::to_string(kMaxQueues) + " queues");
    }
  }
  // Two creates of one name: the store's primary key refuses the second.
  RETURN_IF_ERROR(Store(d, true));
  {
    MutexLock lock(&mu_);
    queues_[d.queue.name] = d;
  }
  if (change_hook_) change_hook_();
  return d;
}

Result<QueueDef> Queues::Replace(const QueueDef& q) {
  QueueDef d = q;
  {
    MutexLock lock(&mu_);
    auto it = queues_.find(d.queue.name);
    if (it == queues_.end()) return Status::NotFound("no queue '" + d.queue.name + "'");
    d.created_ms = it->second.created_ms;
  }
  d.updated_ms = clock_->NowMs();
  if (d.created_ms == 0) d.created_ms = d.updated_ms;  // the built-in default, stored from now on
  if (d.queue.name == kDefaultQueue && d.description.empty()) d.description = BuiltInDefault().description;
  RETURN_IF_ERROR(Store(d, false));
  {
    MutexLock lock(&mu_);
    queues_[d.queue.name] = d;
  }
  if (change_hook_) change_hook_();
  return d;
}

Status Queues::Delete(const std::string& name) {
  if (name == kDefaultQueue) return Status::Conflict("the default queue cannot be deleted");
  {
    MutexLock lock(&mu_);
    if (!queues_.count(name)) return Status::NotFound("no queue '" + name + "'");
  }
  RETURN_IF_ERROR(store_->Write([&](Db& db) { return store::DeleteQueue(db, name); }));
  {
    MutexLock lock(&mu_);
    queues_.erase(name);
  }
  if (change_hook_) change_hook_();
  return Status::Ok();
}

Status Queues::Admit(const std::string& user, const std::vector<std::string>& groups, bool admin,
                     jobs::JobSpec* spec) const {
  if (spec->queue.empty()) spec->queue = "default";
  MutexLock lock(&mu_);
  auto it = queues_.find(spec->queue);
  if (it == queues_.end()) {
    std::vector<std::string> names;
    for (const auto& [name, d] : queues_) names.push_back(name);
    return Status::InvalidArgument("job.queue: no queue '" + spec->queue + "' (queues: " + Join(names) + ")");
  }
  const sched::Queue& q = it->second.queue;
  if (!admin && !q.Admits(user, groups)) {
    return Status::PermissionDenied("queue '" + q.name + "' admits " + q.Members() + " only");
  }
  // A job naming no priority gets the queue's bound nearest 0.
  if (!spec->priority) spec->priority = std::clamp(0, q.min_priority, q.max_priority);
  if (*spec->priority < q.min_priority || *spec->priority > q.max_priority) {
    return Status::InvalidArgument("job.priority: " + std::to_string(*spec->priority) + " is outside queue '" +
                                   q.name + "' bounds " + std::to_string(q.min_priority) + ".." +
                                   std::to_string(q.max_priority));
  }
  if (q.max_gpus > 0 && spec->GpuCount() > q.max_gpus) {
    return Status::InvalidArgument("job: needs " + std::to_string(spec->GpuCount()) + " GPUs at once; queue '" +
                                   q.name + "' holds at most " + std::to_string(q.max_gpus));
  }
  if (spec->time_limit_ms == 0) spec->time_limit_ms = q.default_time_limit_ms;
  if (q.max_time_limit_ms > 0 && spec->time_limit_ms == 0) {
    return Status::InvalidArgument("job.time_limit: queue '" + q.name + "' requires a time limit (at most " +
                                   FormatExactDuration(q.max_time_limit_ms) + ")");
  }
  if (q.max_time_limit_ms > 0 && spec->time_limit_ms > q.max_time_limit_ms) {
    return Status::InvalidArgument("job.time_limit: " + FormatExactDuration(spec->time_limit_ms) +
                                   " exceeds queue '" + q.name + "' maximum " +
                                   FormatExactDuration(q.max_time_limit_ms));
  }
  if (!spec->preemptible) spec->preemptible = q.preemptible_by_default;
  return Status::Ok();
}

}  // namespace rota::server
