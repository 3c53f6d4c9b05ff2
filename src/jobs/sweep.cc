#include "jobs/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "common/strings.h"
#include "jobs/array.h"

namespace rota::jobs {
namespace {

using api::Json;

bool ValidParamName(const std::string& n) {
  if (n.empty() || n.size() > 32 || n == "index") return false;
  if (!(n[0] == '_' || (n[0] >= 'a' && n[0] <= 'z'))) return false;
  for (char c : n) {
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

bool ParseDouble(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*out);
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

const char* KindName(SweepParam::Kind k) {
  switch (k) {
    case SweepParam::Kind::kUniform: return "uniform";
    case SweepParam::Kind::kLogUniform: return "loguniform";
    case SweepParam::Kind::kInt: return "int";
    case SweepParam::Kind::kList: break;
  }
  return "list";
}

Status CheckParam(const SweepParam& p, const std::string& field) {
  if (!ValidParamName(p.name)) {
    return Status::InvalidArgument(field + ": parameter name '" + p.name.substr(0, 40) +
                                   "' must be [a-z_][a-z0-9_]{0,31} and not 'index'");
  }
  if (p.kind == SweepParam::Kind::kList) {
    if (p.values.empty() || p.values.size() > kMaxSweepValues) {
      return Status::InvalidArgument(field + ": give 1.." + std::to_string(kMaxSweepValues) + " values");
    }
    for (const auto& v : p.values) {
      if (v.size() > 1024) return Status::InvalidArgument(field + ": a value is longer than 1024 bytes");
    }
    return Status::Ok();
  }
  if (!std::isfinite(p.lo) || !std::isfinite(p.hi) || p.lo > p.hi) {
    return Status::InvalidArgument(field + ": a range needs lo <= hi");
  }
  if (p.kind == SweepParam::Kind::kLogUniform && p.lo <= 0) {
    return Status::InvalidArgument(field + ": loguniform needs 0 < lo");
  }
  if (p.kind == SweepParam::Kind::kInt &&
      (p.lo != std::floor(p.lo) || p.hi != std::floor(p.hi) || std::fabs(p.lo) > 1e15 || std::fabs(p.hi) > 1e15)) {
    return Status::InvalidArgument(field + ": int needs whole numbers");
  }
  return Status::Ok();
}

// splitmix64: small, fast, the same everywhere.
uint64_t Next(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
double Unit(uint64_t* state) { return static_cast<double>(Next(state) >> 11) * 0x1.0p-53; }  // [0, 1)

}  // namespace

Result<SweepParam> ParseSweepFlag(const std::string& text) {
  const std::string field = "--sweep " + text.substr(0, 64);
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::InvalidArgument(field + ": use NAME=V1,V2,... or NAME=uniform:LO:HI, loguniform:LO:HI, int:LO:HI");
  }
  SweepParam p;
  p.name = text.substr(0, eq);
  const std::string rest = text.substr(eq + 1);
  const std::vector<std::string> parts = Split(rest, ':');
  if (parts.size() == 3 && (parts[0] == "uniform" || parts[0] == "loguniform" || parts[0] == "int")) {
    p.kind = parts[0] == "uniform" ? SweepParam::Kind::kUniform
             : parts[0] == "loguniform" ? SweepParam::Kind::kLogUniform : SweepParam::Kind::kInt;
    if (!ParseDouble(parts[1], &p.lo) || !ParseDouble(parts[2], &p.hi)) {
      return Status::InvalidArgument(field + ": " + parts[0] + ":LO:HI needs two numbers");
    }
  } else {
    p.values = Split(rest, ',');
  }
  RETURN_IF_ERROR(CheckParam(p, field));
  return p;
}

Status CheckSweep(const SweepSpec& s) {
  if (s.params.empty() || s.params.size() > kMaxSweepParams) {
    return Status::InvalidArgument("sweep.parameters: give 1.." + std::to_string(kMaxSweepParams));
  }
  std::set<std::string> names;
  for (const auto& p : s.params) {
    RETURN_IF_ERROR(CheckParam(p, "sweep.parameters." + p.name));
    if (!names.insert(p.name).second) return Status::InvalidArgument("sweep.parameters." + p.name + ": given twice");
  }
  if (s.method == SweepSpec::Method::kGrid) {
    double size = 1;
    for (const auto& p : s.params) {
      if (p.kind != SweepParam::Kind::kList) {
        return Status::InvalidArgument("sweep.parameters." + p.name + ": a grid takes lists of values; ranges need "
                                       "method random");
      }
      size *= static_cast<double>(p.values.size());
    }
    if (size > static_cast<double>(kMaxArrayMembers) && (s.max_trials == 0 || s.max_trials > kMaxArrayMembers)) {
      return Status::InvalidArgument("sweep: the grid has more than " + std::to_string(kMaxArrayMembers) +
                                     " trials; give max_trials");
    }
  } else if (s.count < 1 || s.count > kMaxArrayMembers) {
    return Status::InvalidArgument("sweep.count: random search needs 1.." + std::to_string(kMaxArrayMembers) +
                                   " trials");
  }
  if (s.max_trials > kMaxArrayMembers || s.max_running > kMaxArrayMembers || s.max_failures > kMaxArrayMembers) {
    return Status::InvalidArgument("sweep: max_trials, max_running and max_failures go up to " +
                                   std::to_string(kMaxArrayMembers));
  }
  return Status::Ok();
}

Result<SweepSpec> SweepSpecFromJson(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("sweep: must be an object");
  SweepSpec s;
  for (auto field_it = j.begin(); field_it != j.end(); ++field_it) {
    const std::string& key = field_it.key();
    const Json& v = field_it.value();
    auto count = [&key, &v](uint32_t* out) -> Status {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > int64_t{kMaxArrayMembers}) {
        return Status::InvalidArgument("sweep." + key + ": must be a whole number 0.." +
                                       std::to_string(kMaxArrayMembers));
      }
      *out = static_cast<uint32_t>(v.get<int64_t>());
      return Status::Ok();
    };
    if (key == "method") {
      if (!v.is_string() || (v != "grid" && v != "random")) {
        return Status::InvalidArgument("sweep.method: grid or random");
      }
      s.method = v == "grid" ? SweepSpec::Method::kGrid : SweepSpec::Method::kRandom;
    } else if (key == "count") {
      RETURN_IF_ERROR(count(&s.count));
    } else if (key == "max_running") {
      RETURN_IF_ERROR(count(&s.max_running));
    } else if (key == "max_trials") {
      RETURN_IF_ERROR(count(&s.max_trials));
    } else if (key == "max_failures") {
      RETURN_IF_ERROR(count(&s.max_failures));
    } else if (key == "seed") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0) {
        return Status::InvalidArgument("sweep.seed: must be a whole number of 0 or more");
      }
      s.seed = v.get<uint64_t>();
    } else if (key == "parameters") {
      if (!v.is_object()) return Status::InvalidArgument("sweep.parameters: must be an object {NAME: values}");
      for (auto param_it = v.begin(); param_it != v.end(); ++param_it) {
        const std::string& name = param_it.key();
        const Json& def = param_it.value();
        const std::string field = "sweep.parameters." + name;
        SweepParam p;
        p.name = name;
        if (def.is_array()) {
          for (const auto& x : def) {
            if (x.is_string()) p.values.push_back(x.get<std::string>());
            else if (x.is_number() || x.is_boolean()) p.values.push_back(x.dump());
            else return Status::InvalidArgument(field + ": values must be strings, numbers or booleans");
          }
        } else if (def.is_object() && def.size() == 1) {
          const std::string kind = def.begin().key();
          const Json& range = def.begin().value();
          if (kind != "uniform" && kind != "loguniform" && kind != "int") {
            return Status::InvalidArgument(field + ": use [values], {uniform: [lo, hi]}, {loguniform: [lo, hi]} or "
                                           "{int: [lo, hi]}");
          }
          // Numbers, or text that is one (YAML files keep "1e-4" as text).
          auto number = [](const Json& x, double* out) {
            if (x.is_number()) {
              *out = x.get<double>();
              return std::isfinite(*out);
            }
            return x.is_string() && ParseDouble(x.get<std::string>(), out);
          };
          if (!range.is_array() || range.size() != 2 || !number(range[0], &p.lo) || !number(range[1], &p.hi)) {
            return Status::InvalidArgument(field + "." + kind + ": must be [lo, hi], two numbers");
          }
          p.kind = kind == "uniform" ? SweepParam::Kind::kUniform
                   : kind == "loguniform" ? SweepParam::Kind::kLogUniform : SweepParam::Kind::kInt;
        } else {
          return Status::InvalidArgument(field + ": use [values] or {uniform|loguniform|int: [lo, hi]}");
        }
        s.params.push_back(std::move(p));
      }
    } else if (key == "early_stopping") {
      auto e = EarlyStopSpecFromJson(v);
      if (!e.ok()) return Status::InvalidArgument("sweep." + e.status().message());
      s.early_stopping = std::move(*e);
    } else {
      return Status::InvalidArgument("sweep." + key + ": unknown field (method, parameters, count, seed, "
                                     "max_running, max_trials, max_failures, early_stopping)");
    }
  }
  RETURN_IF_ERROR(CheckSweep(s));
  return s;
}

Json ToJson(const SweepSpec& s) {
  Json params = Json::object();
  for (const auto& p : s.params) {
    if (p.kind == SweepParam::Kind::kList) params[p.name] = p.values;
    else params[p.name] = Json{{KindName(p.kind), Json::array({p.lo, p.hi})}};
  }
  Json out{{"method", s.method == SweepSpec::Method::kGrid ? "grid" : "random"}, {"parameters", std::move(params)}};
  if (s.method == SweepSpec::Method::kRandom) {
    out["count"] = s.count;
    out["seed"] = s.seed;
  }
  if (s.max_running > 0) out["max_running"] = s.max_running;
  if (s.max_trials > 0) out["max_trials"] = s.max_trials;
  if (s.max_failures > 0) out["max_failures"] = s.max_failures;
  if (s.early_stopping) out["early_stopping"] = ToJson(*s.early_stopping);
  return out;
}

std::vector<std::map<std::string, std::string>> Trials(const SweepSpec& s) {
  std::vector<std::map<std::string, std::string>> out;
  const size_t budget = s.max_trials > 0 ? s.max_trials : kMaxArrayMembers;
  if (s.params.empty()) return out;
  if (s.method == SweepSpec::Method::kGrid) {
    std::vector<size_t> at(s.params.size(), 0);  // an odometer, the last parameter fastest
    while (out.size() < budget) {
      std::map<std::string, std::string> t;
      for (size_t i = 0; i < s.params.size(); ++i) t[s.params[i].name] = s.params[i].values[at[i]];
      out.push_back(std::move(t));
      size_t i = s.params.size();
      while (i > 0) {
        --i;
        if (++at[i] < s.params[i].values.size()) break;
        at[i] = 0;
        if (i == 0) return out;
      }
    }
    return out;
  }
  uint64_t state = s.seed;
  const size_t n = std::min<size_t>(s.count, budget);
  for (size_t k = 0; k < n; ++k) {
    std::map<std::string, std::string> t;
    for (const auto& p : s.params) {
      const double u = Unit(&state);
      switch (p.kind) {
        case SweepParam::Kind::kList:
          t[p.name] = p.values[std::min(p.values.size() - 1, static_cast<size_t>(u * static_cast<double>(p.values.size())))];
          break;
        case SweepParam::Kind::kUniform: t[p.name] = Number(p.lo + u * (p.hi - p.lo)); break;
        case SweepParam::Kind::kLogUniform:
          t[p.name] = Number(std::exp(std::log(p.lo) + u * (std::log(p.hi) - std::log(p.lo))));
          break;
        case SweepParam::Kind::kInt: {
          const double span = p.hi - p.lo + 1;
          t[p.name] = std::to_string(static_cast<int64_t>(p.lo + std::min(span - 1, std::floor(u * span))));
          break;
        }
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace rota::jobs
