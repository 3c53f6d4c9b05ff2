#include "api/power_protocol.h"

#include <set>

#include "api/types.h"

namespace rota::api {
namespace {

constexpr size_t kMaxText = 1024;
constexpr uint64_t kMaxMw = 100'000'000;  // 100 kW: far above any GPU

Status Bad(const std::string& field, const std::string& why) {
  return Status::InvalidArgument(field + ": " + why);
}

Status Uint(const Json& j, const std::string& at, const char* key, uint64_t max, uint32_t* out) {
  if (!j.contains(key) || !j[key].is_number_unsigned() || j[key].get<uint64_t>() > max) {
    return Bad(at + "." + key, "must be an integer in [0, " + std::to_string(max) + "]");
  }
  *out = static_cast<uint32_t>(j[key].get<uint64_t>());
  return Status::Ok();
}

Status OptMw(const Json& j, const std::string& at, const char* key, std::optional<uint32_t>* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::Ok();
  uint32_t v = 0;
  RETURN_IF_ERROR(Uint(j, at, key, kMaxMw, &v));
  *out = v;
  return Status::Ok();
}

Status Text(const Json& j, const std::string& at, const char* key, bool required, size_t max,
            std::string* out) {
  if (!j.contains(key) || j[key].is_null()) {
    return required ? Bad(at + "." + key, "is required") : Status::Ok();
  }
  if (!j[key].is_string() || j[key].get_ref<const std::string&>().size() > max) {
    return Bad(at + "." + key, "must be a string of at most " + std::to_string(max) + " bytes");
  }
  *out = j[key].get<std::string>();
  return Status::Ok();
}

Result<const Json*> Gpus(const Json& j) {
  if (!j.contains("gpus") || !j["gpus"].is_array()) return Bad("gpus", "must be an array");
  if (j["gpus"].size() > kMaxGpusPerNode) {
    return Bad("gpus", "more than " + std::to_string(kMaxGpusPerNode) + " GPUs");
  }
  return &j["gpus"];
}

void PutMw(Json& j, const char* key, const std::optional<uint32_t>& v) {
  if (v) j[key] = *v;
}

}  // namespace

const char* PowerOutcomeName(PowerOutcome o) {
  switch (o) {
    case PowerOutcome::kSet: return "set";
    case PowerOutcome::kRestored: return "restored";
    case PowerOutcome::kUnchanged: return "unchanged";
    case PowerOutcome::kRefused: return "refused";
    case PowerOutcome::kError: return "error";
  }
  return "error";
}

Json ToJson(const PowerLimitsMsg& m) {
  Json gpus = Json::array();
  for (const auto& g : m.gpus) {
    Json e{{"index", g.index}, {"uuid", g.uuid}};
    PutMw(e, "limit_mw", g.limit_mw);
    if (!g.reason.empty()) e["reason"] = g.reason;
    gpus.push_back(std::move(e));
  }
  return Json{{"gpus", std::move(gpus)}};
}

Json ToJson(const PowerReportMsg& m) {
  Json gpus = Json::array();
  for (const auto& g : m.gpus) {
    Json e{{"index", g.index}, {"uuid", g.uuid}, {"outcome", PowerOutcomeName(g.outcome)},
           {"detail", g.detail}};
    PutMw(e, "requested_mw", g.requested_mw);
    PutMw(e, "limit_mw", g.limit_mw);
    PutMw(e, "previous_mw", g.previous_mw);
    PutMw(e, "default_mw", g.default_mw);
    PutMw(e, "min_mw", g.min_mw);
    PutMw(e, "max_mw", g.max_mw);
    gpus.push_back(std::move(e));
  }
  return Json{{"gpus", std::move(gpus)}};
}

Result<PowerLimitsMsg> PowerLimitsFromJson(const Json& j) {
  ASSIGN_OR_RETURN(const Json* gpus, Gpus(j));
  PowerLimitsMsg m;
  std::set<uint32_t> seen;
  for (size_t i = 0; i < gpus->size(); ++i) {
    const Json& e = (*gpus)[i];
    const std::string at = "gpus[" + std::to_string(i) + "]";
    if (!e.is_object()) return Bad(at, "must be an object");
    PowerLimitSetting s;
    RETURN_IF_ERROR(Uint(e, at, "index", kMaxGpusPerNode - 1, &s.index));
    RETURN_IF_ERROR(Text(e, at, "uuid", true, 128, &s.uuid));
    RETURN_IF_ERROR(OptMw(e, at, "limit_mw", &s.limit_mw));
    if (s.limit_mw && *s.limit_mw == 0) return Bad(at + ".limit_mw", "must be positive");
    RETURN_IF_ERROR(Text(e, at, "reason", false, kMaxText, &s.reason));
    if (!seen.insert(s.index).second) return Bad(at + ".index", "GPU listed twice");
    m.gpus.push_back(std::move(s));
  }
  return m;
}

Result<PowerReportMsg> PowerReportFromJson(const Json& j) {
  ASSIGN_OR_RETURN(const Json* gpus, Gpus(j));
  PowerReportMsg m;
  for (size_t i = 0; i < gpus->size(); ++i) {
    const Json& e = (*gpus)[i];
    const std::string at = "gpus[" + std::to_string(i) + "]";
    if (!e.is_object()) return Bad(at, "must be an object");
    PowerGpuReport r;
    RETURN_IF_ERROR(Uint(e, at, "index", kMaxGpusPerNode - 1, &r.index));
    RETURN_IF_ERROR(Text(e, at, "uuid", false, 128, &r.uuid));
    RETURN_IF_ERROR(OptMw(e, at, "requested_mw", &r.requested_mw));
    RETURN_IF_ERROR(OptMw(e, at, "limit_mw", &r.limit_mw));
    RETURN_IF_ERROR(OptMw(e, at, "previous_mw", &r.previous_mw));
    RETURN_IF_ERROR(OptMw(e, at, "default_mw", &r.default_mw));
    RETURN_IF_ERROR(OptMw(e, at, "min_mw", &r.min_mw));
    RETURN_IF_ERROR(OptMw(e, at, "max_mw", &r.max_mw));
    std::string outcome;
    RETURN_IF_ERROR(Text(e, at, "outcome", true, 16, &outcome));
    bool known = false;
    for (auto o : {PowerOutcome::kSet, PowerOutcome::kRestored, PowerOutcome::kUnchanged,
                   PowerOutcome::kRefused, PowerOutcome::kError}) {
      if (outcome == PowerOutcomeName(o)) r.outcome = o, known = true;
    }
    if (!known) return Bad(at + ".outcome", "'" + outcome + "' is not a power outcome");
    RETURN_IF_ERROR(Text(e, at, "detail", false, kMaxText, &r.detail));
    m.gpus.push_back(std::move(r));
  }
  return m;
}

}  // namespace rota::api
