#pragma once
// JobMetrics: the metrics jobs' tasks report (rota-metric lines, read by the
// agents: agent/metrics_tail.h) as they come in over the agents' connections,
// and what the API reads of them. See docs/design-jobs.md ("Metrics").
//
// A node's points are kept only for a task the job service placed on that node
// for a job that is not over (JobService::JobOfTaskOn); a job keeps at most
// kMaxNamesPerJob metric names and kMaxPointsPerJob points (counted since this
// server started: a bound on what an agent can make the store hold, not an
// account). Points are written by the store's writer (Store::WriteAsync): the
// network thread that hands them over never waits for the store.
//
// Thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/codec.h"
#include "api/task_protocol.h"
#include "common/mutex.h"
#include "common/status.h"
#include "server/store/metrics.h"

namespace rota::store {
class Store;
}

namespace rota::server {

class JobMetrics {
 public:
  static constexpr size_t kMaxNamesPerJob = 64;
  static constexpr int64_t kMaxPointsPerJob = 100'000;
  static constexpr size_t kMaxPointsPerRead = 10'000;
  static constexpr size_t kCountedJobs = 10'000;  // the newest jobs' bounds are kept

  // The job whose task `task` runs on `node`, or nullopt (JobService::JobOfTaskOn).
  using TaskOwner = std::function<std::optional<int64_t>(const std::string& node, const std::string& task)>;
  // `store` borrowed; must outlive this.
  JobMetrics(store::Store* store, TaskOwner owner);

  // A task_metrics from `node`'s agent (a network thread; never blocks on the store).
  void OnMetrics(const std::string& node, api::TaskMetricsMsg m) ROTA_EXCLUDES(mu_);

  // Job `job_id`'s points in time order, at most `limit` (1..kMaxPointsPerRead).
  Result<std::vector<store::MetricRow>> JobPoints(int64_t job_id, size_t limit, bool* truncated) const;
  // Per member job of array `array_id`, per metric, its summary.
  Result<std::map<int64_t, std::map<std::string, store::MetricSummary>>> ArraySummaries(int64_t array_id) const;

  struct Stats {
    uint64_t points_accepted = 0;
    uint64_t points_refused = 0;  // not the node's task, a job over, or over a job's bounds
  };
  Stats stats() const ROTA_EXCLUDES(mu_);

 private:
  struct PerJob {
    std::set<std::string> names;
    int64_t points = 0;
  };
  store::Store* const store_;
  const TaskOwner owner_;
  mutable Mutex mu_;
  std::map<int64_t, PerJob> jobs_ ROTA_GUARDED_BY(mu_);
  Stats stats_ ROTA_GUARDED_BY(mu_);
};

// {NAME: {last, min, max, count, last_step?}} (job_metrics_api.cc).
api::Json MetricSummariesToJson(const std::map<std::string, store::MetricSummary>& summaries);

}  // namespace rota::server
