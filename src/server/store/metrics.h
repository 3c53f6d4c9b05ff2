#pragma once
// SQL of tasks' metrics (table task_metrics, schema version 20): the points a
// job's tasks reported (rota-metric lines; api::TaskMetricPoint). A point is
// named by (task, source, seq, name): one sent again (after an agent reconnect
// or restart) is kept once. Called inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/task_protocol.h"
#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct MetricRow {
  std::string task;  // the task id ("job-7.r0.worker-0")
  std::string name;
  int64_t step = -1;  // -1: none given
  double value = 0;
  int64_t time_ms = 0;
};

// What a job reported of one metric: its last point (by time, then by its place
// in its source), the smallest and largest values, and how many points.
struct MetricSummary {
  double last = 0, min = 0, max = 0;
  int64_t last_step = -1;
  int64_t count = 0;
};

// Inserts the points of task `task` of job `job_id`; those already kept are left.
Status InsertMetricPoints(Db& db, int64_t job_id, const std::string& task,
                          const std::vector<api::TaskMetricPoint>& points);
// The job's points in time order (then by task, source place), at most `limit`
// (from the oldest); *truncated set when more exist.
Result<std::vector<MetricRow>> JobMetrics(Db& db, int64_t job_id, size_t limit, bool* truncated);
// What early stopping reads of one array member: its state and reason as
// stored, and its points of one metric that carry a step.
struct TrialPoints {
  int64_t job_id = 0;
  std::string state, reason;
  struct Point {
    int64_t step = 0;
    double value = 0;
    int64_t time_ms = 0;
  };
  std::vector<Point> points;
};
// Every member of array `array_id` (by job id) with its points of `metric`.
Result<std::vector<TrialPoints>> ArrayTrialPoints(Db& db, int64_t array_id, const std::string& metric);
// Per member job of array `array_id`, per metric name, its summary.
Result<std::map<int64_t, std::map<std::string, MetricSummary>>> ArrayMetricSummaries(Db& db, int64_t array_id);

}  // namespace rota::store
