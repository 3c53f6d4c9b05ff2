#include "reserve/policy.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "common/gpu_model.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "reserve/cli_time.h"
#include "reserve/json_fields.h"
#include "reserve/windows.h"

namespace rota::reserve {
namespace {

using api::Json;

constexpr size_t kMaxListItems = 1000;

Status CheckNameList(const std::string& field, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    for (char c : names[i]) {
      if (std::iscntrl(static_cast<unsigned char>(c))) {
        return Status::InvalidArgument(field + "[" + std::to_string(i) +
                                       "]: control characters are not allowed");
      }
    }
  }
  return Status::Ok();
}

Status Refuse(const Policy& p, const char* rule, const std::string& why) {
  return Status::PermissionDenied("policy '" + p.name + "' (" + rule + "): " + why);
}

// GPUs of `r` targeted by `p`.
int TargetedCount(const Policy& p, const std::string& node, const std::vector<uint32_t>& gpus,
                  const ModelOf& model_of) {
  int n = 0;
  for (uint32_t g : gpus) n += p.Targets(node, model_of ? model_of(node, g) : "") ? 1 : 0;
  return n;
}

Status CheckWindows(const Policy& p, int64_t from_ms, int64_t to_ms) {
  if (p.windows.empty() || from_ms >= to_ms) return Status::Ok();
  int64_t t = FloorDiv(from_ms, 1000);
  const int64_t end = FloorDiv(to_ms + 999, 1000);
  for (int guard = 0; t < end && guard < 100'000; ++guard) {
    const int64_t local = p.tz.ToLocal(t);
    const int64_t day = FloorDiv(local, 86400) * 86400;
    const int64_t sec = local - day;
    const int wd = WeekdayOf(local);
    int64_t best = -1;
    for (const auto& w : p.windows) {
      if (!std::count(w.days.begin(), w.days.end(), wd)) continue;
      if (sec >= w.from_min * 60 && sec < w.to_min * 60) best = std::max(best, day + w.to_min * 60);
    }
    if (best < 0) {
      return Refuse(p, "windows",
                    FormatLocal(t * 1000, p.tz) + " (" + p.zone + ") is outside the allowed times " +
                        DescribeWindows(p.windows));
    }
    int64_t next = p.tz.ToUtc(best);
    t = next > t ? next : t + 60;
  }
  return Status::Ok();
}

Status CheckMaxGpus(const Policy& p, const PolicyRequest& req, int new_count,
                    const std::vector<Reservation>& existing, const ModelOf& model_of) {
  std::vector<std::pair<int64_t, int>> events;
  for (const auto& r : existing) {
    if (!r.Overlaps(req.start_ms, req.end_ms)) continue;
    int c = TargetedCount(p, r.node, r.gpus, model_of);
    if (c == 0) continue;
    events.emplace_back(std::max(r.start_ms, req.start_ms), c);
    events.emplace_back(std::min(r.end_ms, req.end_ms), -c);
  }
  std::sort(events.begin(), events.end());  // at equal times, releases (-c) first
  int cur = 0, peak = 0;
  int64_t peak_t = req.start_ms;
  for (const auto& [t, d] : events) {
    cur += d;
    if (cur > peak) peak = cur, peak_t = t;
  }
  if (static_cast<int64_t>(peak) + new_count > *p.max_gpus) {
    return Refuse(p, "max_gpus",
                  "you would hold " + std::to_string(peak + new_count) + " GPUs at once at " +
                      FormatRfc3339(peak_t) + " (at most " + std::to_string(*p.max_gpus) + ")");
  }
  return Status::Ok();
}

Status CheckWeeklyHours(const Policy& p, const PolicyRequest& req, int new_count,
                        const std::vector<Reservation>& existing, const ModelOf& model_of) {
  const int64_t week = 7 * kDayMs;
  for (int64_t w = IsoWeekStart(req.start_ms); w < req.end_ms; w += week) {
    const int64_t w_end = w + week;
    auto overlap = [&](int64_t a, int64_t b) {
      return std::max<int64_t>(0, std::min(b, w_end) - std::max(a, w));
    };
    double used_ms = 0;
    for (const auto& r : existing) {
      if (r.cancelled_ms) continue;
      int c = TargetedCount(p, r.node, r.gpus, model_of);
      used_ms += static_cast<double>(c) * static_cast<double>(overlap(r.start_ms, r.end_ms));
    }
    double asked_ms = static_cast<double>(new_count) * static_cast<double>(overlap(req.start_ms, req.end_ms));
    double total_h = (used_ms + asked_ms) / 3.6e6;
    if (total_h > *p.weekly_gpu_hours + 1e-9) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "week %s would use %.1f GPU-hours (%.1f already reserved + %.1f asked); the "
                    "quota is %.1f",
                    IsoWeekLabel(w).c_str(), total_h, used_ms / 3.6e6, asked_ms / 3.6e6,
                    *p.weekly_gpu_hours);
      return Refuse(p, "weekly_gpu_hours", buf);
    }
  }
  return Status::Ok();
}

}  // namespace

bool Policy::Covers(const std::string& username, const std::vector<std::string>& user_groups) const {
  if (users.empty() && groups.empty()) return true;
  if (std::find(users.begin(), users.end(), username) != users.end()) return true;
  if (std::find(users.begin(), users.end(), "*") != users.end()) return true;
  for (const auto& g : user_groups) {
    if (std::find(groups.begin(), groups.end(), g) != groups.end()) return true;
  }
  return false;
}

bool Policy::Targets(const std::string& node, const std::string& gpu_model) const {
  if (!nodes.empty() && std::find(nodes.begin(), nodes.end(), node) == nodes.end()) return false;
  if (gpu_models.empty()) return true;
  return std::any_of(gpu_models.begin(), gpu_models.end(),
                     [&](const std::string& m) { return ModelWanted(gpu_model, m); });
}

Result<Policy> PolicyFromJson(const Json& j) {
  JsonFields f(j, "policy");
  RETURN_IF_ERROR(f.Only({"name", "description", "subjects", "targets", "windows",
                          "max_duration", "max_ahead", "max_gpus", "weekly_gpu_hours",
                          "enforcement", "idle", "id", "created", "updated"}));
  Policy p;
  RETURN_IF_ERROR(f.Str("name", &p.name, true, 64));
  bool name_ok = !p.name.empty();
  for (char c : p.name) {
    name_ok = name_ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  }
  if (!name_ok) {
    return Status::InvalidArgument("policy.name: '" + p.name +
                                   "' must be 1-64 characters of [A-Za-z0-9._-]");
  }
  RETURN_IF_ERROR(f.Str("description", &p.description, false, 2000));
  if (f.Has("subjects")) {
    JsonFields s(j["subjects"], "policy.subjects");
    RETURN_IF_ERROR(s.Only({"users", "groups"}));
    RETURN_IF_ERROR(s.StrArray("users", &p.users, kMaxListItems, 64));
    RETURN_IF_ERROR(s.StrArray("groups", &p.groups, kMaxListItems, 64));
    RETURN_IF_ERROR(CheckNameList("policy.subjects.users", p.users));
    RETURN_IF_ERROR(CheckNameList("policy.subjects.groups", p.groups));
  }
  if (f.Has("targets")) {
    JsonFields t(j["targets"], "policy.targets");
    RETURN_IF_ERROR(t.Only({"nodes", "gpu_models"}));
    RETURN_IF_ERROR(t.StrArray("nodes", &p.nodes, kMaxListItems, 63));
    RETURN_IF_ERROR(t.StrArray("gpu_models", &p.gpu_models, kMaxListItems, 128));
    for (size_t i = 0; i < p.nodes.size(); ++i) {
      if (!api::IsValidNodeName(p.nodes[i])) {
        return Status::InvalidArgument("policy.targets.nodes[" + std::to_string(i) + "]: '" +
                                       p.nodes[i] + "' is not a valid node name");
      }
    }
    RETURN_IF_ERROR(CheckNameList("policy.targets.gpu_models", p.gpu_models));
  }
  if (f.Has("windows")) {
    ASSIGN_OR_RETURN(WeeklyWindows w, WeeklyWindowsFromJson(j["windows"], "policy.windows"));
    p.zone = std::move(w.zone);
    p.tz = std::move(w.tz);
    p.windows = std::move(w.windows);
  }
  int64_t ms = 0;
  if (f.Has("max_duration")) {
    RETURN_IF_ERROR(f.Duration("max_duration", &ms));
    p.max_duration_ms = ms;
  }
  if (f.Has("max_ahead")) {
    RETURN_IF_ERROR(f.Duration("max_ahead", &ms));
    p.max_ahead_ms = ms;
  }
  if (f.Has("max_gpus")) {
    int64_t n = 0;
    RETURN_IF_ERROR(f.Int("max_gpus", &n, 1, 100'000));
    p.max_gpus = static_cast<uint32_t>(n);
  }
  if (f.Has("weekly_gpu_hours")) {
    double h = 0;
    RETURN_IF_ERROR(f.Number("weekly_gpu_hours", &h, 0, 1e7));
    p.weekly_gpu_hours = h;
  }
  if (f.Has("enforcement")) {
    if (!j["enforcement"].is_object()) {
      return Status::InvalidArgument("policy.enforcement: must be a JSON object");
    }
    p.enforcement = j["enforcement"];
  }
  if (f.Has("idle")) {
    JsonFields idle(j["idle"], "policy.idle");
    RETURN_IF_ERROR(idle.Only({"threshold_pct", "after", "release"}));
    IdleRule r;
    if (!idle.Has("after")) return Status::InvalidArgument("policy.idle.after: required");
    RETURN_IF_ERROR(idle.Number("threshold_pct", &r.threshold_pct, 0, 100));
    RETURN_IF_ERROR(idle.Duration("after", &r.after_ms));
    RETURN_IF_ERROR(idle.Bool("release", &r.release));
    p.idle = r;
  }
  return p;
}

Json PolicySpecJson(const Policy& p) {
  Json j{{"description", p.description},
         {"subjects", {{"users", p.users}, {"groups", p.groups}}},
         {"targets", {{"nodes", p.nodes}, {"gpu_models", p.gpu_models}}},
         {"enforcement", p.enforcement}};
  if (!p.windows.empty()) j["windows"] = ToJson(WeeklyWindows{p.zone, p.tz, p.windows});
  if (p.max_duration_ms) j["max_duration"] = FormatExactDuration(*p.max_duration_ms);
  if (p.max_ahead_ms) j["max_ahead"] = FormatExactDuration(*p.max_ahead_ms);
  if (p.max_gpus) j["max_gpus"] = *p.max_gpus;
  if (p.weekly_gpu_hours) j["weekly_gpu_hours"] = *p.weekly_gpu_hours;
  if (p.idle) {
    j["idle"] = {{"threshold_pct", p.idle->threshold_pct},
                 {"after", FormatExactDuration(p.idle->after_ms)},
                 {"release", p.idle->release}};
  }
  return j;
}

Json ToJson(const Policy& p) {
  Json j = PolicySpecJson(p);
  j["id"] = p.id;
  j["name"] = p.name;
  j["created"] = FormatRfc3339(p.created_ms);
  j["updated"] = FormatRfc3339(p.updated_ms);
  return j;
}

Status EvaluatePolicies(const std::vector<Policy>& policies, const Requester& who,
                        const PolicyRequest& req, const std::vector<Reservation>& existing,
                        const ModelOf& model_of, int64_t now_ms) {
  if (who.admin || policies.empty()) return Status::Ok();
  // Subjects: every requested GPU that some policy targets must be open to the user.
  std::set<size_t> applying;  // indexes into `policies`
  for (const auto& g : req.gpus) {
    const Policy* first_target = nullptr;
    bool covered = false;
    for (size_t i = 0; i < policies.size(); ++i) {
      const Policy& p = policies[i];
      if (!p.Targets(req.node, g.model)) continue;
      if (!first_target) first_target = &p;
      if (p.Covers(who.username, who.groups)) {
        covered = true;
        applying.insert(i);
      }
    }
    if (first_target && !covered) {
      std::vector<std::string> who_may;
      if (!first_target->users.empty()) who_may.push_back("users " + Join(first_target->users, ", "));
      if (!first_target->groups.empty()) {
        who_may.push_back("groups " + Join(first_target->groups, ", "));
      }
      return Refuse(*first_target, "subjects",
                    req.node + "/" + std::to_string(g.index) + " may be reserved only by " +
                        Join(who_may, " and ") + "; " + who.username + " is not among them");
    }
  }
  for (size_t i : applying) {
    const Policy& p = policies[i];
    int count = 0;
    for (const auto& g : req.gpus) count += p.Targets(req.node, g.model) ? 1 : 0;
    const int64_t length = req.end_ms - req.start_ms;
    if (p.max_duration_ms && length > *p.max_duration_ms) {
      return Refuse(p, "max_duration",
                    FormatDurationMs(length) + " is longer than the maximum " +
                        FormatDurationMs(*p.max_duration_ms));
    }
    if (p.max_ahead_ms && req.start_ms - now_ms > *p.max_ahead_ms) {
      return Refuse(p, "max_ahead",
                    "start " + FormatRfc3339(req.start_ms) + " is " +
                        FormatDurationMs(req.start_ms - now_ms) + " ahead; at most " +
                        FormatDurationMs(*p.max_ahead_ms) + " allowed");
    }
    RETURN_IF_ERROR(CheckWindows(p, std::max(req.start_ms, req.windows_from_ms), req.end_ms));
    if (p.max_gpus) RETURN_IF_ERROR(CheckMaxGpus(p, req, count, existing, model_of));
    if (p.weekly_gpu_hours) RETURN_IF_ERROR(CheckWeeklyHours(p, req, count, existing, model_of));
  }
  return Status::Ok();
}

std::vector<AppliedIdleRule> IdleRulesFor(const std::vector<Policy>& policies,
                                          const std::string& username,
                                          const std::vector<std::string>& groups,
                                          const std::string& node,
                                          const std::vector<NodeGpu>& gpus) {
  std::vector<AppliedIdleRule> out;
  for (const auto& p : policies) {
    if (!p.idle || !p.Covers(username, groups)) continue;
    bool targets = std::any_of(gpus.begin(), gpus.end(),
                               [&](const NodeGpu& g) { return p.Targets(node, g.model); });
    if (targets) out.push_back({p.name, *p.idle});
  }
  return out;
}

int64_t IsoWeekStart(int64_t t_ms) {
  const int64_t day = FloorDiv(t_ms, kDayMs);
  const int64_t monday = day - ((day + 3) % 7 + 7) % 7;
  return monday * kDayMs;
}

std::string IsoWeekLabel(int64_t t_ms) {
  // The ISO year is the year of the week's Thursday.
  const int64_t thursday_s = (IsoWeekStart(t_ms) + 3 * kDayMs) / 1000;
  const Civil c = CivilFromSeconds(thursday_s);
  const int64_t jan1 = SecondsFromCivil(Civil{c.year, 1, 1});
  const int64_t week = (thursday_s - jan1) / 86400 / 7 + 1;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-W%02d", c.year, static_cast<int>(week));
  return buf;
}

}  // namespace rota::reserve
