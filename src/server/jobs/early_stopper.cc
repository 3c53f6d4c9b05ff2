#include "server/jobs/early_stopper.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "common/log.h"
#include "jobs/sweep.h"
#include "server/jobs/jobs.h"
#include "server/store/jobs.h"
#include "server/store/metrics.h"
#include "server/store/store.h"

namespace rota::server {

namespace {
constexpr int64_t kMinPeriodMs = 2'000;  // a sweep is looked at this often at most
constexpr int64_t kCostFactor = 10;      // and never more often than 10x its look's cost
}  // namespace

EarlyStopper::EarlyStopper(store::Store* store, JobService* jobs, Clock* clock)
    : store_(store), jobs_(jobs), clock_(clock) {}

std::optional<jobs::EarlyStopSpec> EarlyStopper::RuleOf(int64_t array_id) {
  if (auto it = rules_.find(array_id); it != rules_.end()) return it->second;
  std::optional<store::ArrayRow> row;
  Status st = store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(row, store::GetArray(db, array_id));
    return Status::Ok();
  });
  if (!st.ok()) {  // looked at again next time
    ROTA_LOG(WARNING) << "early stopping: array " << array_id << ": " << st.message();
    return std::nullopt;
  }
  std::optional<jobs::EarlyStopSpec> rule;
  if (row && !row->sweep_json.empty()) {
    auto json = api::ParseJson(row->sweep_json);
    auto sweep = json.ok() ? jobs::SweepSpecFromJson(*json) : Result<jobs::SweepSpec>(json.status());
    if (sweep.ok()) {
      rule = sweep->early_stopping;
    } else {
      ROTA_LOG(WARNING) << "early stopping: array " << array_id << ": stored sweep unreadable: "
                        << sweep.status().message();
    }
  }
  rules_[array_id] = rule;
  return rule;
}

int EarlyStopper::Tick() {
  const std::map<int64_t, std::set<int64_t>> running = jobs_->RunningArrayMembers();
  // Arrays no longer running anything are forgotten (their rule is read again
  // should a member run again, e.g. after a requeue).
  for (auto it = rules_.begin(); it != rules_.end();) {
    it = running.count(it->first) ? std::next(it) : rules_.erase(it);
  }
  for (auto it = next_look_ms_.begin(); it != next_look_ms_.end();) {
    it = running.count(it->first) ? std::next(it) : next_look_ms_.erase(it);
  }
  int stopped = 0;
  for (const auto& entry : running) {
    const int64_t array_id = entry.first;  // a plain local: lambdas below capture it
    const std::set<int64_t>& members = entry.second;
    const std::optional<jobs::EarlyStopSpec> rule = RuleOf(array_id);
    if (!rule) continue;
    const int64_t started_ms = clock_->MonotonicMs();
    if (auto due = next_look_ms_.find(array_id); due != next_look_ms_.end() && started_ms < due->second) continue;
    ++stats_.looks;
    std::vector<store::TrialPoints> rows;
    Status st = store_->Read([&](store::Db& db) -> Status {
      ASSIGN_OR_RETURN(rows, store::ArrayTrialPoints(db, array_id, rule->metric));
      return Status::Ok();
    });
    if (!st.ok()) {
      ROTA_LOG(WARNING) << "early stopping: array " << array_id << ": " << st.message();
      continue;
    }
    std::vector<jobs::TrialHistory> trials;
    trials.reserve(rows.size());
    for (auto& r : rows) {
      jobs::TrialHistory t;
      t.job_id = r.job_id;
      t.running = members.count(r.job_id) > 0;
      t.completed = r.state == "succeeded" && r.reason.rfind(jobs::kStoppedEarly, 0) != 0;
      t.points.reserve(r.points.size());
      for (const auto& p : r.points) t.points.push_back({p.step, p.value, p.time_ms});
      trials.push_back(std::move(t));
    }
    for (const auto& stop : jobs::DecideEarlyStops(*rule, trials)) {
      if (jobs_->StopEarly(array_id, stop.job_id, stop.reason)) {
        ++stopped;
        ++stats_.stopped;
      }
    }
    const int64_t cost_ms = clock_->MonotonicMs() - started_ms;
    stats_.last_look_ms = cost_ms;
    next_look_ms_[array_id] = started_ms + std::max(kMinPeriodMs, kCostFactor * cost_ms);
  }
  return stopped;
}

}  // namespace rota::server
