#include "enforce/types.h"

#include <algorithm>
#include <set>

namespace rota::enforce {
namespace {

Status Bad(const std::string& field, const std::string& what) {
  return Status::InvalidArgument(field + ": " + what);
}

Result<int64_t> GetGrace(const Json& v, const std::string& field) {
  if (!v.is_number_integer()) return Bad(field, "must be an integer (milliseconds)");
  int64_t ms = v.get<int64_t>();
  if (ms < 0 || ms > kMaxGraceMs) {
    return Bad(field,
               "must be in [0, " + std::to_string(kMaxGraceMs) + "] ms, got " + std::to_string(ms));
  }
  return ms;
}

Result<bool> GetBool(const Json& v, const std::string& field) {
  if (!v.is_boolean()) return Bad(field, "must be true or false");
  return v.get<bool>();
}

Result<std::vector<std::string>> GetNames(const Json& v, const std::string& field) {
  if (!v.is_array()) return Bad(field, "must be an array of strings");
  if (v.size() > kMaxExemptions) {
    return Bad(field, "at most " + std::to_string(kMaxExemptions) + " entries");
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    if (!v[i].is_string()) return Bad(f, "must be a string");
    std::string s = v[i].get<std::string>();
    if (s.empty() || s.size() > kMaxExemptionLength) {
      return Bad(f, "must be 1.." + std::to_string(kMaxExemptionLength) + " characters");
    }
    for (char c : s) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        return Bad(f, "holds a control character");
    }
    out.push_back(std::move(s));
  }
  return out;
}

// An exempt command "USER:EXE" (not an absolute path) needs both parts.
Status CheckExemptCommand(const std::string& c, const std::string& field) {
  if (c[0] == '/') return Status::Ok();
  const size_t colon = c.find(':');
  if (colon == std::string::npos) return Status::Ok();
  if (colon == 0 || colon + 1 == c.size() || c.find(':', colon + 1) != std::string::npos ||
      c.substr(0, colon).find('/') != std::string::npos) {
    return Bad(field, "'" + c + "' must be EXE or USER:EXE (one user, one executable)");
  }
  return Status::Ok();
}

Status CheckNames(const std::vector<std::string>& names, const std::string& field) {
  if (names.size() > kMaxExemptions) {
    return Bad(field, "at most " + std::to_string(kMaxExemptions) + " entries");
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty() || names[i].size() > kMaxExemptionLength) {
      return Bad(field + "[" + std::to_string(i) + "]",
                 "must be 1.." + std::to_string(kMaxExemptionLength) + " characters");
    }
    if (field == "exempt_commands") {
      RETURN_IF_ERROR(CheckExemptCommand(names[i], field + "[" + std::to_string(i) + "]"));
    }
  }
  return Status::Ok();
}

bool ValidMode(const std::string& m) { return m == "off" || m == "reserved" || m == "strict"; }

// Adds the names of `extra` missing from `base`, keeping base's order.
std::vector<std::string> Union(std::vector<std::string> base,
                               const std::vector<std::string>& extra) {
  for (const auto& e : extra) {
    if (std::find(base.begin(), base.end(), e) == base.end()) base.push_back(e);
  }
  return base;
}

}  // namespace

Json ToJson(const EnforcementSettings& s) {
  return Json{{"mode", s.mode},
              {"dry_run", s.dry_run},
              {"grace_email_ms", s.grace_email_ms},
              {"grace_term_ms", s.grace_term_ms},
              {"grace_kill_ms", s.grace_kill_ms},
              {"exempt_users", s.exempt_users},
              {"exempt_commands", s.exempt_commands}};
}

Status ValidateEnforcementSettings(const EnforcementSettings& s) {
  if (!ValidMode(s.mode))
    return Bad("mode", "must be off, reserved or strict, got '" + s.mode + "'");
  const std::pair<const char*, int64_t> graces[] = {{"grace_email_ms", s.grace_email_ms},
                                                    {"grace_term_ms", s.grace_term_ms},
                                                    {"grace_kill_ms", s.grace_kill_ms}};
  for (const auto& [name, ms] : graces) {
    if (ms < 0 || ms > kMaxGraceMs) {
      return Bad(name, "must be in [0, " + std::to_string(kMaxGraceMs) + "] ms, got " +
                           std::to_string(ms));
    }
  }
  if (s.grace_email_ms > s.grace_term_ms) {
    return Bad("grace_email_ms", "(" + std::to_string(s.grace_email_ms) +
                                     ") must not exceed grace_term_ms (" +
                                     std::to_string(s.grace_term_ms) + ")");
  }
  RETURN_IF_ERROR(CheckNames(s.exempt_users, "exempt_users"));
  return CheckNames(s.exempt_commands, "exempt_commands");
}

Result<EnforcementSettings> ParseEnforcementSettings(const Json& j,
                                                     const EnforcementSettings& base) {
  if (!j.is_object()) return Status::InvalidArgument("enforcement settings must be a JSON object");
  EnforcementSettings s = base;
  for (const auto& [key, v] : j.items()) {
    if (key == "mode") {
      if (!v.is_string()) return Bad(key, "must be a string");
      s.mode = v.get<std::string>();
      if (!ValidMode(s.mode))
        return Bad(key, "must be off, reserved or strict, got '" + s.mode + "'");
    } else if (key == "dry_run") {
      ASSIGN_OR_RETURN(s.dry_run, GetBool(v, key));
    } else if (key == "grace_email_ms") {
      ASSIGN_OR_RETURN(s.grace_email_ms, GetGrace(v, key));
    } else if (key == "grace_term_ms") {
      ASSIGN_OR_RETURN(s.grace_term_ms, GetGrace(v, key));
    } else if (key == "grace_kill_ms") {
      ASSIGN_OR_RETURN(s.grace_kill_ms, GetGrace(v, key));
    } else if (key == "exempt_users") {
      ASSIGN_OR_RETURN(s.exempt_users, GetNames(v, key));
    } else if (key == "exempt_commands") {
      ASSIGN_OR_RETURN(s.exempt_commands, GetNames(v, key));
    } else {
      return Bad(key, "unknown enforcement setting");
    }
  }
  RETURN_IF_ERROR(ValidateEnforcementSettings(s));
  return s;
}

Json ToJson(const OwnerLimits& l) {
  return Json{
      {"min_grace_email_ms", l.min_grace_email_ms}, {"max_grace_email_ms", l.max_grace_email_ms},
      {"min_grace_term_ms", l.min_grace_term_ms},   {"max_grace_term_ms", l.max_grace_term_ms},
      {"min_grace_kill_ms", l.min_grace_kill_ms},   {"max_grace_kill_ms", l.max_grace_kill_ms},
      {"allow_disable", l.allow_disable},           {"allow_exemptions", l.allow_exemptions}};
}

Result<OwnerLimits> ParseOwnerLimits(const Json& j, const OwnerLimits& base) {
  if (!j.is_object()) return Status::InvalidArgument("owner limits must be a JSON object");
  OwnerLimits l = base;
  const std::pair<const char*, int64_t OwnerLimits::*> graces[] = {
      {"min_grace_email_ms", &OwnerLimits::min_grace_email_ms},
      {"max_grace_email_ms", &OwnerLimits::max_grace_email_ms},
      {"min_grace_term_ms", &OwnerLimits::min_grace_term_ms},
      {"max_grace_term_ms", &OwnerLimits::max_grace_term_ms},
      {"min_grace_kill_ms", &OwnerLimits::min_grace_kill_ms},
      {"max_grace_kill_ms", &OwnerLimits::max_grace_kill_ms}};
  for (const auto& [key, v] : j.items()) {
    bool known = false;
    for (const auto& [name, member] : graces) {
      if (key == name) {
        ASSIGN_OR_RETURN(l.*member, GetGrace(v, key));
        known = true;
      }
    }
    if (known) continue;
    if (key == "allow_disable") {
      ASSIGN_OR_RETURN(l.allow_disable, GetBool(v, key));
    } else if (key == "allow_exemptions") {
      ASSIGN_OR_RETURN(l.allow_exemptions, GetBool(v, key));
    } else {
      return Bad(key, "unknown owner limit");
    }
  }
  const std::tuple<const char*, int64_t, int64_t> pairs[] = {
      {"grace_email_ms", l.min_grace_email_ms, l.max_grace_email_ms},
      {"grace_term_ms", l.min_grace_term_ms, l.max_grace_term_ms},
      {"grace_kill_ms", l.min_grace_kill_ms, l.max_grace_kill_ms}};
  for (const auto& [name, lo, hi] : pairs) {
    if (lo > hi) {
      return Bad(std::string("min_") + name, "(" + std::to_string(lo) + ") exceeds max_" + name +
                                                 " (" + std::to_string(hi) + ")");
    }
  }
  return l;
}

Result<EnforcementSettings> ApplyOwnerOverrides(const EnforcementSettings& policy,
                                                const Json& overrides, const OwnerLimits& limits) {
  if (overrides.is_null()) return policy;
  // Parse on a copy with empty exemptions, so that the owner's lists can be
  // told apart and added to the policy's.
  EnforcementSettings base = policy;
  base.exempt_users.clear();
  base.exempt_commands.clear();
  auto parsed = ParseEnforcementSettings(overrides, base);
  if (!parsed.ok()) return parsed.status().WithContext("enforcement overrides");
  EnforcementSettings s = std::move(parsed).value();

  auto deny = [](const std::string& m) { return Status::PermissionDenied(m); };
  // Turning enforcement on (or "strict", which on a reserved GPU means the same
  // as "reserved") is always allowed; turning it off is not.
  if (s.mode == "off" && policy.mode != "off" && !limits.allow_disable) {
    return deny("mode off: reservation owners may not disable enforcement");
  }
  if (s.dry_run && !policy.dry_run && !limits.allow_disable) {
    return deny("dry_run: reservation owners may not switch enforcement to dry run");
  }
  const std::tuple<const char*, int64_t, int64_t, int64_t, int64_t> graces[] = {
      {"grace_email_ms", s.grace_email_ms, policy.grace_email_ms, limits.min_grace_email_ms,
       limits.max_grace_email_ms},
      {"grace_term_ms", s.grace_term_ms, policy.grace_term_ms, limits.min_grace_term_ms,
       limits.max_grace_term_ms},
      {"grace_kill_ms", s.grace_kill_ms, policy.grace_kill_ms, limits.min_grace_kill_ms,
       limits.max_grace_kill_ms}};
  for (const auto& [name, value, original, lo, hi] : graces) {
    if (value == original) continue;  // unchanged: the policy's own value always stands
    if (value < lo) {
      return deny(std::string(name) + " " + std::to_string(value) + " is below the minimum " +
                  std::to_string(lo) + " allowed to reservation owners");
    }
    if (value > hi) {
      return deny(std::string(name) + " " + std::to_string(value) + " is above the maximum " +
                  std::to_string(hi) + " allowed to reservation owners");
    }
  }
  if ((!s.exempt_users.empty() || !s.exempt_commands.empty()) && !limits.allow_exemptions) {
    return deny(std::string(!s.exempt_users.empty() ? "exempt_users" : "exempt_commands") +
                ": reservation owners may not add exemptions");
  }
  s.exempt_users = Union(policy.exempt_users, s.exempt_users);
  s.exempt_commands = Union(policy.exempt_commands, s.exempt_commands);
  if (s.exempt_users.size() > kMaxExemptions || s.exempt_commands.size() > kMaxExemptions) {
    return Status::InvalidArgument("enforcement overrides: at most " +
                                   std::to_string(kMaxExemptions) + " exemptions in total");
  }
  return s;
}

}  // namespace rota::enforce
