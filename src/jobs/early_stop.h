#pragma once
// Early stopping of a sweep's trials on a metric they report (rota-metric
// lines): the median stopping rule and ASHA (asynchronous successive halving).
// Pure: the rule's spec, and which running trials to stop given what every
// trial of the sweep reported so far. Stateless: the decisions follow from the
// stored points alone (their steps and times), so a restarted or newly elected
// server decides exactly what its predecessor did. See docs/design-jobs.md
// ("Early stopping").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"

namespace rota::jobs {

struct EarlyStopSpec {
  enum class Rule { kMedian, kAsha };
  Rule rule = Rule::kMedian;
  std::string metric;     // a metric name (api::ValidateMetricName)
  bool maximize = false;  // goal: min (loss) or max (accuracy)
  // Median: no trial is stopped before it reported this step. ASHA: the first
  // rung (r); the rungs are r, r*eta, r*eta^2, ... (up to max_step when > 0).
  int64_t min_step = 1;
  uint32_t min_trials = 3;  // median: completed trials needed before any stop
  uint32_t reduction = 3;   // ASHA: eta, 2..100; the top 1/eta of a rung go on
  int64_t max_step = 0;     // ASHA: no rung beyond this step (0: none)
  bool operator==(const EarlyStopSpec&) const = default;
};

// JSON form (the sweep's "early_stopping"): {rule: median|asha, metric,
// goal?: min|max, min_step?, min_trials? (median), reduction?, max_step?
// (asha)}. Unknown keys and fields of the other rule are refused.
Result<EarlyStopSpec> EarlyStopSpecFromJson(const api::Json& j);
api::Json ToJson(const EarlyStopSpec& s);
// `rota run --early-stopping RULE:METRIC[:min|max]` ("asha:loss", "median:accuracy:max").
Result<EarlyStopSpec> ParseEarlyStopFlag(const std::string& text);

// One trial of the sweep as the rule sees it.
struct TrialMetric {
  int64_t step = 0;  // points without a step are not used
  double value = 0;
  int64_t time_ms = 0;  // when it was reported (orders trials reaching a rung)
};
struct TrialHistory {
  int64_t job_id = 0;
  bool running = false;    // may be stopped
  bool completed = false;  // ended successfully without being stopped early
  std::vector<TrialMetric> points;  // of the spec's metric, any order
};

struct EarlyStop {
  int64_t job_id = 0;
  std::string reason;  // starts with kStoppedEarly
};
// The reason of every trial stopped early begins with this.
inline constexpr const char* kStoppedEarly = "stopped early";

// The running trials to stop now, lowest job id first.
//
// Median: a running trial whose last step s >= min_step is stopped when at
// least min_trials completed trials reported a point at a step <= s and the
// trial's best value up to s is strictly worse than the median of those
// trials' running averages (mean of their values up to s).
//
// ASHA: a trial reaches rung k with its first point at a step >= r*eta^k. It
// is compared with the trials that reached that rung no later than it did,
// itself included (n of them): when n >= eta and its value there is not among
// the best floor(n/eta), it is stopped. Each rung decides once per trial, when
// the trial reaches it: trials reaching it later do not revisit it.
std::vector<EarlyStop> DecideEarlyStops(const EarlyStopSpec& spec, const std::vector<TrialHistory>& trials);

}  // namespace rota::jobs
