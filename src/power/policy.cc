#include "power/policy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "api/types.h"
#include "common/gpu_model.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "reserve/json_fields.h"

namespace rota::power {
namespace {

using api::Json;
using reserve::JsonFields;

constexpr size_t kMaxListItems = 1000;

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

bool ValidLabelPart(const std::string& s) {
  if (s.empty() || s.size() > api::kMaxNameLength) return false;
  return std::none_of(s.begin(), s.end(), [](char c) {
    return std::iscntrl(static_cast<unsigned char>(c)) || c == '=';
  });
}

Status ParseScope(const Json& j, Scope* out) {
  JsonFields s(j, "policy.scope");
  RETURN_IF_ERROR(s.Only({"nodes", "gpu_models", "labels"}));
  RETURN_IF_ERROR(s.StrArray("nodes", &out->nodes, kMaxListItems, 63));
  RETURN_IF_ERROR(s.StrArray("gpu_models", &out->gpu_models, kMaxListItems, 128));
  for (size_t i = 0; i < out->nodes.size(); ++i) {
    if (!api::IsValidNodeName(out->nodes[i])) {
      return Status::InvalidArgument("policy.scope.nodes[" + std::to_string(i) + "]: '" +
                                     out->nodes[i] + "' is not a valid node name");
    }
  }
  for (size_t i = 0; i < out->gpu_models.size(); ++i) {
    const auto& m = out->gpu_models[i];
    if (m.empty() || std::any_of(m.begin(), m.end(), [](char c) {
          return std::iscntrl(static_cast<unsigned char>(c));
        })) {
      return Status::InvalidArgument("policy.scope.gpu_models[" + std::to_string(i) +
                                     "]: must be a non-empty model name without control characters");
    }
  }
  if (s.Has("labels")) {
    const Json& l = j["labels"];
    if (!l.is_object() || l.size() > api::kMaxLabels) {
      return Status::InvalidArgument("policy.scope.labels: must be an object of at most " +
                                     std::to_string(api::kMaxLabels) + " KEY: VALUE strings");
    }
    for (const auto& [k, v] : l.items()) {
      if (!v.is_string() || !ValidLabelPart(k) || !ValidLabelPart(v.get<std::string>())) {
        return Status::InvalidArgument("policy.scope.labels." + k +
                                       ": keys and values must be non-empty strings without '=' "
                                       "or control characters");
      }
      out->labels[k] = v.get<std::string>();
    }
  }
  return Status::Ok();
}

}  // namespace

const char* PolicyKindName(PolicyKind k) { return k == PolicyKind::kLimit ? "limit" : "budget"; }

Result<double> ParseWatts(const Json& v, const std::string& field) {
  double w = 0;
  if (v.is_number()) {
    w = v.get<double>();
  } else if (v.is_string()) {
    std::string s = ToLower(v.get<std::string>());
    s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
    double scale = 1;
    if (s.size() > 2 && s.compare(s.size() - 2, 2, "kw") == 0) {
      scale = 1000;
      s.resize(s.size() - 2);
    } else if (s.size() > 1 && s.back() == 'w') {
      s.pop_back();
    }
    char* end = nullptr;
    w = s.empty() ? std::nan("") : std::strtod(s.c_str(), &end) * scale;
    if (s.empty() || end == nullptr || *end != '\0') w = std::nan("");
  } else {
    w = std::nan("");
  }
  if (!std::isfinite(w) || w <= 0) {
    return Status::InvalidArgument(field + ": must be a positive power like 250, \"250W\" or \"2.4kW\"");
  }
  return w;
}

bool PowerPolicy::Matches(const std::string& node, const std::map<std::string, std::string>& labels,
                          const std::string& gpu_model) const {
  if (!scope.nodes.empty() &&
      std::find(scope.nodes.begin(), scope.nodes.end(), node) == scope.nodes.end()) {
    return false;
  }
  for (const auto& [k, v] : scope.labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  if (scope.gpu_models.empty()) return true;
  return std::any_of(scope.gpu_models.begin(), scope.gpu_models.end(),
                     [&](const std::string& m) { return ModelWanted(gpu_model, m); });
}

bool PowerPolicy::ActiveAt(int64_t t_ms) const {
  return reserve::InWindows(windows.windows, windows.tz, t_ms);
}

std::string PowerPolicy::Describe() const {
  return std::string(PolicyKindName(kind)) + " " + std::to_string(watts) + " W";
}

Result<PowerPolicy> PowerPolicyFromJson(const Json& j) {
  JsonFields f(j, "policy");
  RETURN_IF_ERROR(f.Only({"name", "description", "scope", "limit", "budget", "windows", "id",
                          "kind", "watts", "created", "updated"}));
  PowerPolicy p;
  RETURN_IF_ERROR(f.Str("name", &p.name, true, 64));
  if (!ValidName(p.name)) {
    return Status::InvalidArgument("policy.name: '" + p.name +
                                   "' must be 1-64 characters of [A-Za-z0-9._-]");
  }
  RETURN_IF_ERROR(f.Str("description", &p.description, false, 2000));
  if (f.Has("scope")) RETURN_IF_ERROR(ParseScope(j["scope"], &p.scope));
  const bool has_limit = f.Has("limit"), has_budget = f.Has("budget");
  if (has_limit == has_budget) {
    return Status::InvalidArgument(
        "policy: give exactly one of limit (watts per GPU) and budget (watts for all GPUs in scope)");
  }
  if (has_limit) {
    ASSIGN_OR_RETURN(double w, ParseWatts(j["limit"], "policy.limit"));
    if (w < 1 || w > kMaxLimitWatts) {
      return Status::InvalidArgument("policy.limit: " + std::to_string(std::lround(w)) +
                                     " W is not a GPU power limit (1.." +
                                     std::to_string(kMaxLimitWatts) + " W)");
    }
    p.kind = PolicyKind::kLimit;
    p.watts = static_cast<uint64_t>(std::floor(w));
  } else {
    ASSIGN_OR_RETURN(double w, ParseWatts(j["budget"], "policy.budget"));
    if (w < 1 || w > static_cast<double>(kMaxBudgetWatts)) {
      return Status::InvalidArgument("policy.budget: must be 1 W to " +
                                     std::to_string(kMaxBudgetWatts / 1'000'000) + " MW");
    }
    p.kind = PolicyKind::kBudget;
    p.watts = static_cast<uint64_t>(std::floor(w));
  }
  if (f.Has("windows")) {
    ASSIGN_OR_RETURN(p.windows, reserve::WeeklyWindowsFromJson(j["windows"], "policy.windows"));
    std::string overlap = reserve::FirstOverlap(p.windows.windows);
    if (!overlap.empty()) {
      return Status::InvalidArgument("policy.windows.allow: windows overlap (" + overlap +
                                     "); merge them into one");
    }
  }
  return p;
}

Json PowerPolicySpecJson(const PowerPolicy& p) {
  Json scope = Json::object();
  scope["nodes"] = p.scope.nodes;
  scope["gpu_models"] = p.scope.gpu_models;
  scope["labels"] = Json::object();
  for (const auto& [k, v] : p.scope.labels) scope["labels"][k] = v;
  Json j{{"description", p.description}, {"scope", scope}};
  j[PolicyKindName(p.kind)] = p.watts;
  if (!p.windows.windows.empty()) j["windows"] = reserve::ToJson(p.windows);
  return j;
}

Json ToJson(const PowerPolicy& p) {
  Json j = PowerPolicySpecJson(p);
  j["id"] = p.id;
  j["name"] = p.name;
  j["kind"] = PolicyKindName(p.kind);
  j["watts"] = p.watts;
  j["created"] = FormatRfc3339(p.created_ms);
  j["updated"] = FormatRfc3339(p.updated_ms);
  return j;
}

}  // namespace rota::power
