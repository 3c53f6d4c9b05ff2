#include "server/quotas/quotas.h"

#include <utility>

#include "common/time_util.h"
#include "reserve/json_fields.h"
#include "server/accounts/accounts.h"
#include "server/store/sched_settings.h"

namespace rota::server {
namespace {

using api::Json;
using reserve::JsonFields;
using store::Db;

Status ValidName(const std::string& kind, const std::string& name) {
  if (kind == "user") return ValidateUsername(name);
  if (kind != "group") {
    return Status::InvalidArgument("quota kind '" + kind.substr(0, 32) + "': use user or group");
  }
  return ValidateGroupName(name);
}

}  // namespace

Result<QuotaDef> QuotaFromJson(const std::string& kind, const std::string& name, const Json& body) {
  RETURN_IF_ERROR(ValidName(kind, name));
  if (!body.is_object()) return Status::InvalidArgument("quota: must be an object");
  JsonFields f(body, "quota");
  RETURN_IF_ERROR(f.Only({"kind", "name", "max_gpus", "max_gpu_hours", "share", "updated"}));
  for (const char* key : {"kind", "name"}) {
    if (f.Has(key) && body[key] != (std::string(key) == "kind" ? kind : name)) {
      return Status::InvalidArgument(std::string("quota.") + key + ": the body says " + body[key].dump() +
                                     ", the path '" + (std::string(key) == "kind" ? kind : name) + "'");
    }
  }
  QuotaDef q;
  q.kind = kind;
  q.name = name;
  int64_t gpus = 0;
  RETURN_IF_ERROR(f.Int("max_gpus", &gpus, 0, 1'000'000));
  q.limits.max_gpus = static_cast<uint32_t>(gpus);
  RETURN_IF_ERROR(f.Number("max_gpu_hours", &q.limits.max_gpu_hours_per_period, 0, 1e12));
  // One message for 0, negative and vanishing shares (1e-320 is no share).
  if (f.Has("share") && body["share"].is_number() &&
      !(body["share"].get<double>() >= kMinShare && body["share"].get<double>() <= kMaxShare)) {
    return Status::InvalidArgument("quota.share: must be from 0.001 to 1000000");
  }
  RETURN_IF_ERROR(f.Number("share", &q.share, kMinShare, kMaxShare));
  return q;
}

Json ToJson(const QuotaDef& q) {
  Json j{{"kind", q.kind},
         {"name", q.name},
         {"max_gpus", q.limits.max_gpus},
         {"max_gpu_hours", q.limits.max_gpu_hours_per_period},
         {"share", q.share}};
  if (q.updated_ms > 0) j["updated"] = FormatRfc3339(q.updated_ms);
  return j;
}

Quotas::Quotas(store::Store* store, const Clock* clock) : store_(store), clock_(clock) {}

Status Quotas::Start() {
  std::vector<QuotaDef> loaded;
  std::vector<store::QuotaRow> rows;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, store::LoadQuotas(db));
    return Status::Ok();
  }));
  for (const auto& r : rows) {
    const std::string what = "stored quota " + r.kind + " " + r.name;
    auto json = api::ParseJson(r.spec_json);
    if (!json.ok()) return json.status().WithContext(what);
    auto q = QuotaFromJson(r.kind, r.name, *json);
    if (!q.ok()) return q.status().WithContext(what);
    q->updated_ms = r.updated_ms;
    loaded.push_back(std::move(*q));
  }
  MutexLock lock(&mu_);
  for (auto& q : loaded) quotas_[{q.kind, q.name}] = std::move(q);
  return Status::Ok();
}

std::vector<QuotaDef> Quotas::List() const {
  MutexLock lock(&mu_);
  std::vector<QuotaDef> out;
  for (const char* kind : {"user", "group"}) {
    for (const auto& [key, q] : quotas_) {
      if (key.first == kind) out.push_back(q);
    }
  }
  return out;
}

Result<QuotaDef> Quotas::Get(const std::string& kind, const std::string& name) const {
  RETURN_IF_ERROR(ValidName(kind, name));
  MutexLock lock(&mu_);
  auto it = quotas_.find({kind, name});
  if (it == quotas_.end()) return Status::NotFound("no quota for " + kind + " '" + name + "'");
  return it->second;
}

QuotaView Quotas::ForScheduler() const {
  MutexLock lock(&mu_);
  QuotaView v;
  for (const auto& [key, q] : quotas_) {
    const bool user = q.kind == "user";
    (user ? v.user_quotas : v.group_quotas)[q.name] = q.limits;
    if (q.share != 1) (user ? v.user_shares : v.group_shares)[q.name] = q.share;
  }
  return v;
}

Result<QuotaDef> Quotas::Set(const QuotaDef& in) {
  QuotaDef q = in;
  q.updated_ms = clock_->NowMs();
  {
    MutexLock lock(&mu_);
    if (!quotas_.count({q.kind, q.name}) && quotas_.size() >= kMaxQuotas) {
      return Status::ResourceExhausted("at most " + std::to_string(kMaxQuotas) + " quotas");
    }
  }
  Json j = ToJson(q);
  j.erase("updated");
  const store::QuotaRow row{q.kind, q.name, j.dump(), q.updated_ms};
  RETURN_IF_ERROR(store_->Write([&](Db& db) { return store::PutQuota(db, row); }));
  {
    MutexLock lock(&mu_);
    quotas_[{q.kind, q.name}] = q;
  }
  if (change_hook_) change_hook_();
  return q;
}

Status Quotas::Delete(const std::string& kind, const std::string& name) {
  RETURN_IF_ERROR(Get(kind, name).status());
  RETURN_IF_ERROR(store_->Write([&](Db& db) { return store::DeleteQuota(db, kind, name); }));
  {
    MutexLock lock(&mu_);
    quotas_.erase({kind, name});
  }
  if (change_hook_) change_hook_();
  return Status::Ok();
}

}  // namespace rota::server
