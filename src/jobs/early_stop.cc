#include "jobs/early_stop.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "api/task_protocol.h"
#include "common/strings.h"

namespace rota::jobs {
namespace {

using api::Json;

constexpr int64_t kMaxStep = int64_t{1} << 53;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A whole number lo..hi, as a number or as text (YAML files keep scalars as text).
Status WholeNumber(const Json& v, const std::string& field, int64_t lo, int64_t hi, int64_t* out) {
  int64_t n = 0;
  bool ok = false;
  if (v.is_number_integer()) {
    n = v.get<int64_t>();
    ok = true;
  } else if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    ok = !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == std::string::npos;
    if (ok) n = std::stoll(s);
  }
  if (!ok || n < lo || n > hi) {
    return Status::InvalidArgument(field + ": must be a whole number " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  *out = n;
  return Status::Ok();
}

bool Better(const EarlyStopSpec& s, double a, double b) { return s.maximize ? a > b : a < b; }

struct Sorted {
  const TrialHistory* trial;
  std::vector<TrialMetric> points;  // by step, then time
};

Sorted SortPoints(const TrialHistory& t) {
  Sorted s{&t, {}};
  for (const auto& p : t.points) {
    if (p.step >= 0 && std::isfinite(p.value)) s.points.push_back(p);
  }
  std::sort(s.points.begin(), s.points.end(), [](const TrialMetric& a, const TrialMetric& b) {
    return a.step != b.step ? a.step < b.step : a.time_ms < b.time_ms;
  });
  return s;
}

std::optional<EarlyStop> Median(const EarlyStopSpec& spec, const Sorted& t, const std::vector<Sorted>& all) {
  if (t.points.empty()) return std::nullopt;
  const int64_t s = t.points.back().step;
  if (s < spec.min_step) return std::nullopt;
  double best = t.points.front().value;
  for (const auto& p : t.points) {
    if (Better(spec, p.value, best)) best = p.value;
  }
  std::vector<double> averages;
  for (const auto& c : all) {
    if (!c.trial->completed) continue;
    double sum = 0;
    int64_t n = 0;
    for (const auto& p : c.points) {
      if (p.step > s) break;
      sum += p.value;
      ++n;
    }
    if (n > 0) averages.push_back(sum / static_cast<double>(n));
  }
  if (averages.empty() || averages.size() < spec.min_trials) return std::nullopt;
  std::sort(averages.begin(), averages.end());
  const size_t n = averages.size();
  const double median = n % 2 == 1 ? averages[n / 2] : (averages[n / 2 - 1] + averages[n / 2]) / 2;
  if (!Better(spec, median, best)) return std::nullopt;
  return EarlyStop{t.trial->job_id, std::string(kStoppedEarly) + " (median rule): best " + spec.metric + " " +
                                        Num(best) + " by step " + std::to_string(s) + " is worse than " +
                                        Num(median) + ", the median of " + std::to_string(n) +
                                        " completed trials' running averages"};
}

// The trial's point at the rung `step`: its first at a step >= it.
const TrialMetric* AtRung(const Sorted& t, int64_t step) {
  auto it = std::lower_bound(t.points.begin(), t.points.end(), step,
                             [](const TrialMetric& p, int64_t s) { return p.step < s; });
  return it == t.points.end() ? nullptr : &*it;
}

std::optional<EarlyStop> Asha(const EarlyStopSpec& spec, const Sorted& t, const std::vector<Sorted>& all) {
  if (t.points.empty()) return std::nullopt;
  const int64_t last = t.points.back().step;
  for (int64_t rung = std::max<int64_t>(spec.min_step, 1); rung <= last;) {
    if (spec.max_step > 0 && rung > spec.max_step) break;
    const TrialMetric* mine = AtRung(t, rung);
    if (mine == nullptr) break;
    size_t n = 0, better = 0;
    for (const auto& o : all) {
      const TrialMetric* theirs = AtRung(o, rung);
      if (theirs == nullptr || theirs->time_ms > mine->time_ms) continue;
      ++n;
      if (Better(spec, theirs->value, mine->value)) ++better;
    }
    const size_t keep = n / spec.reduction;
    if (n >= spec.reduction && better >= keep) {
      return EarlyStop{t.trial->job_id, std::string(kStoppedEarly) + " (ASHA): " + spec.metric + " " +
                                            Num(mine->value) + " at step " + std::to_string(mine->step) +
                                            " is not among the best " + std::to_string(keep) + " of the " +
                                            std::to_string(n) + " trials that reached rung " +
                                            std::to_string(rung)};
    }
    if (rung > kMaxStep / spec.reduction) break;
    rung *= spec.reduction;
  }
  return std::nullopt;
}

}  // namespace

Result<EarlyStopSpec> EarlyStopSpecFromJson(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("early_stopping: must be an object {rule, metric, ...}");
  EarlyStopSpec s;
  auto rule = j.find("rule");
  if (rule == j.end() || !rule->is_string() || (*rule != "median" && *rule != "asha")) {
    return Status::InvalidArgument("early_stopping.rule: median or asha");
  }
  s.rule = *rule == "median" ? EarlyStopSpec::Rule::kMedian : EarlyStopSpec::Rule::kAsha;
  const bool median = s.rule == EarlyStopSpec::Rule::kMedian;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    const std::string field = "early_stopping." + key;
    int64_t n = 0;
    if (key == "rule") {
      continue;
    } else if (key == "metric") {
      if (!v.is_string()) return Status::InvalidArgument(field + ": must be a metric name");
      s.metric = v.get<std::string>();
      RETURN_IF_ERROR(api::ValidateMetricName(s.metric).WithContext(field));
    } else if (key == "goal") {
      if (!v.is_string() || (v != "min" && v != "max")) return Status::InvalidArgument(field + ": min or max");
      s.maximize = v == "max";
    } else if (key == "min_step") {
      RETURN_IF_ERROR(WholeNumber(v, field, median ? 0 : 1, kMaxStep, &n));
      s.min_step = n;
    } else if (key == "min_trials" && median) {
      RETURN_IF_ERROR(WholeNumber(v, field, 1, 100'000, &n));
      s.min_trials = static_cast<uint32_t>(n);
    } else if (key == "reduction" && !median) {
      RETURN_IF_ERROR(WholeNumber(v, field, 2, 100, &n));
      s.reduction = static_cast<uint32_t>(n);
    } else if (key == "max_step" && !median) {
      RETURN_IF_ERROR(WholeNumber(v, field, 0, kMaxStep, &n));
      s.max_step = n;
    } else {
      return Status::InvalidArgument(field + ": unknown field for rule " + rule->get<std::string>() +
                                     (median ? " (rule, metric, goal, min_step, min_trials)"
                                             : " (rule, metric, goal, min_step, reduction, max_step)"));
    }
  }
  if (s.metric.empty()) return Status::InvalidArgument("early_stopping.metric: name the metric the rule compares");
  if (!median && s.max_step > 0 && s.max_step < s.min_step) {
    return Status::InvalidArgument("early_stopping.max_step: below min_step (the first rung)");
  }
  return s;
}

Json ToJson(const EarlyStopSpec& s) {
  Json out{{"rule", s.rule == EarlyStopSpec::Rule::kMedian ? "median" : "asha"},
           {"metric", s.metric},
           {"goal", s.maximize ? "max" : "min"},
           {"min_step", s.min_step}};
  if (s.rule == EarlyStopSpec::Rule::kMedian) {
    out["min_trials"] = s.min_trials;
  } else {
    out["reduction"] = s.reduction;
    if (s.max_step > 0) out["max_step"] = s.max_step;
  }
  return out;
}

Result<EarlyStopSpec> ParseEarlyStopFlag(const std::string& text) {
  const std::vector<std::string> parts = Split(text, ':');
  if (parts.size() < 2 || parts.size() > 3) {
    return Status::InvalidArgument("--early-stopping '" + text + "': use RULE:METRIC[:min|max] (asha:loss, "
                                   "median:accuracy:max)");
  }
  Json j{{"rule", parts[0]}, {"metric", parts[1]}};
  if (parts.size() == 3) j["goal"] = parts[2];
  auto s = EarlyStopSpecFromJson(j);
  if (!s.ok()) return Status::InvalidArgument("--early-stopping '" + text + "': " + s.status().message());
  return s;
}

std::vector<EarlyStop> DecideEarlyStops(const EarlyStopSpec& spec, const std::vector<TrialHistory>& trials) {
  std::vector<Sorted> all;
  all.reserve(trials.size());
  for (const auto& t : trials) all.push_back(SortPoints(t));
  std::vector<EarlyStop> out;
  for (const auto& t : all) {
    if (!t.trial->running) continue;
    auto stop = spec.rule == EarlyStopSpec::Rule::kMedian ? Median(spec, t, all) : Asha(spec, t, all);
    if (stop) out.push_back(std::move(*stop));
  }
  std::sort(out.begin(), out.end(), [](const EarlyStop& a, const EarlyStop& b) { return a.job_id < b.job_id; });
  return out;
}

}  // namespace rota::jobs
