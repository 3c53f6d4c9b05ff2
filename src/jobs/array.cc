#include "jobs/array.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "common/strings.h"

namespace rota::jobs {
namespace {

Status Bad(const std::string& text, const std::string& why) {
  return Status::InvalidArgument("array '" + text.substr(0, 64) + (text.size() > 64 ? "...'" : "'") + ": " + why);
}

bool ParseNumber(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out >= 0;
}

}  // namespace

Result<ArraySpec> ParseArraySpec(const std::string& text) {
  if (text.empty()) return Bad(text, "give indices, e.g. 0-99 or 0-99%10 or 0,3,7-9");
  if (text.size() > kMaxArrayText) return Bad(text, "longer than " + std::to_string(kMaxArrayText) + " characters");
  ArraySpec a;
  std::string_view list = text;
  if (const size_t pct = list.find('%'); pct != std::string_view::npos) {
    int64_t cap = 0;
    if (!ParseNumber(list.substr(pct + 1), &cap) || cap < 1 || cap > int64_t{kMaxArrayMembers}) {
      return Bad(text, "%N caps the members running at once: N must be 1.." + std::to_string(kMaxArrayMembers));
    }
    a.max_running = static_cast<uint32_t>(cap);
    list = list.substr(0, pct);
  }
  for (const std::string& part : Split(list, ',')) {
    std::string_view p = part;
    int64_t step = 1;
    if (const size_t colon = p.find(':'); colon != std::string_view::npos) {
      if (!ParseNumber(p.substr(colon + 1), &step) || step < 1) {
        return Bad(text, "step in '" + part + "' must be a whole number of at least 1");
      }
      p = p.substr(0, colon);
      if (p.find('-') == std::string_view::npos) return Bad(text, "a step needs a range: '" + part + "'");
    }
    int64_t lo = 0, hi = 0;
    if (const size_t dash = p.find('-'); dash != std::string_view::npos) {
      if (!ParseNumber(p.substr(0, dash), &lo) || !ParseNumber(p.substr(dash + 1), &hi)) {
        return Bad(text, "'" + part + "' is not a range A-B of whole numbers");
      }
      if (hi < lo) return Bad(text, "range " + part + " runs backwards");
    } else if (!ParseNumber(p, &lo)) {
      return Bad(text, "'" + part + "' is not an index (a whole number of 0 or more) or a range A-B");
    } else {
      hi = lo;
    }
    if (hi > kMaxArrayIndex) return Bad(text, "indices go up to " + std::to_string(kMaxArrayIndex));
    if ((hi - lo) / step + 1 + static_cast<int64_t>(a.indices.size()) > int64_t{kMaxArrayMembers}) {
      return Bad(text, "more than " + std::to_string(kMaxArrayMembers) + " members");
    }
    for (int64_t i = lo; i <= hi; i += step) a.indices.push_back(i);
  }
  std::sort(a.indices.begin(), a.indices.end());
  if (auto dup = std::adjacent_find(a.indices.begin(), a.indices.end()); dup != a.indices.end()) {
    return Bad(text, "index " + std::to_string(*dup) + " is given twice");
  }
  return a;
}

std::string ArraySpecText(const ArraySpec& a) {
  std::string out;
  for (size_t i = 0; i < a.indices.size();) {
    size_t j = i;
    while (j + 1 < a.indices.size() && a.indices[j + 1] == a.indices[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(a.indices[i]);
    if (j > i) out += "-" + std::to_string(a.indices[j]);
    i = j + 1;
  }
  if (a.max_running > 0) out += "%" + std::to_string(a.max_running);
  return out;
}

std::string Substitute(const std::string& arg, const std::map<std::string, std::string>& values) {
  std::string out;
  out.reserve(arg.size());
  size_t i = 0;
  while (i < arg.size()) {
    const size_t open = arg.find('{', i);
    if (open == std::string::npos) break;
    const size_t close = arg.find('}', open + 1);
    if (close == std::string::npos) break;
    auto v = values.find(arg.substr(open + 1, close - open - 1));
    if (v == values.end()) {
      out.append(arg, i, open + 1 - i);  // not ours: keep the brace, look on after it
      i = open + 1;
      continue;
    }
    out.append(arg, i, open - i);
    out += v->second;
    i = close + 1;
  }
  out.append(arg, i, std::string::npos);
  return out;
}

bool HasPlaceholder(const std::string& arg, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    if (arg.find("{" + key + "}") != std::string::npos) return true;
  }
  return false;
}

Status CheckArrayTemplate(const JobSpec& spec, const std::map<std::string, std::string>& values) {
  for (const char* var : {kArrayIndexVar, kArrayIdVar, kTrialParamsVar}) {
    if (spec.env.count(var)) return Status::InvalidArgument(std::string("job.env.") + var + ": rota sets it for each array member");
  }
  if (!spec.shell) return Status::Ok();
  auto check = [&](const std::vector<std::string>& argv, const std::string& field) -> Status {
    for (const auto& a : argv) {
      if (HasPlaceholder(a, values)) {
        return Status::InvalidArgument(field + ": placeholders are substituted in argv only, not in a shell "
                                       "command; read $" + kArrayIndexVar + " there instead");
      }
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(check(spec.command, "job.command"));
  for (size_t g = 0; g < spec.groups.size(); ++g) {
    RETURN_IF_ERROR(check(spec.groups[g].command, "job.groups[" + std::to_string(g) + "].command"));
  }
  return Status::Ok();
}

JobSpec MemberSpec(const JobSpec& spec, int64_t array_id, int64_t index,
                   const std::map<std::string, std::string>& values) {
  JobSpec m = spec;
  for (auto& a : m.command) a = Substitute(a, values);
  for (auto& g : m.groups) {
    for (auto& a : g.command) a = Substitute(a, values);
  }
  m.env[kArrayIndexVar] = std::to_string(index);
  m.env[kArrayIdVar] = std::to_string(array_id);
  return m;
}

std::set<int64_t> HeldByArrayCap(const std::vector<ArrayMemberState>& members) {
  std::unordered_map<int64_t, int64_t> room;  // capped array -> members it may still start
  for (const auto& m : members) {
    if (m.max_running == 0) continue;
    auto it = room.try_emplace(m.array_id, int64_t{m.max_running}).first;
    if (m.holds) --it->second;
  }
  std::vector<const ArrayMemberState*> waiting;
  for (const auto& m : members) {
    if (m.max_running > 0 && m.schedulable) waiting.push_back(&m);
  }
  std::sort(waiting.begin(), waiting.end(), [](const ArrayMemberState* a, const ArrayMemberState* b) {
    return a->job_id < b->job_id;
  });
  std::set<int64_t> held;
  for (const ArrayMemberState* m : waiting) {
    int64_t& left = room[m->array_id];
    if (left > 0) {
      --left;
    } else {
      held.insert(held.end(), m->job_id);
    }
  }
  return held;
}

}  // namespace rota::jobs
