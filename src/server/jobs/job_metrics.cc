#include "server/jobs/job_metrics.h"

#include "common/log.h"
#include "server/store/store.h"

namespace rota::server {

JobMetrics::JobMetrics(store::Store* store, TaskOwner owner) : store_(store), owner_(std::move(owner)) {}

void JobMetrics::OnMetrics(const std::string& node, api::TaskMetricsMsg m) {
  const std::optional<int64_t> job = owner_(node, m.id);
  std::vector<api::TaskMetricPoint> kept;
  {
    MutexLock lock(&mu_);
    if (!job) {
      stats_.points_refused += m.points.size();
      return;
    }
    PerJob& per = jobs_[*job];
    // Only the newest jobs are counted (ids grow): a job that ran long ago has
    // reported all it will.
    while (jobs_.size() > kCountedJobs && jobs_.begin()->first != *job) jobs_.erase(jobs_.begin());
    kept.reserve(m.points.size());
    for (auto& p : m.points) {
      const bool known = per.names.count(p.name) > 0;
      if (per.points >= kMaxPointsPerJob || (!known && per.names.size() >= kMaxNamesPerJob)) {
        ++stats_.points_refused;
        continue;
      }
      if (!known) per.names.insert(p.name);
      ++per.points;
      kept.push_back(std::move(p));
    }
    stats_.points_accepted += kept.size();
  }
  if (kept.empty()) return;
  store_->WriteAsync(
      [job_id = *job, task = m.id, points = std::move(kept)](store::Db& db) {
        return store::InsertMetricPoints(db, job_id, task, points);
      },
      [task = m.id](Status st) {
        if (!st.ok()) ROTA_LOG(WARNING) << "metrics of task " << task << " not stored: " << st.message();
      });
}

Result<std::vector<store::MetricRow>> JobMetrics::JobPoints(int64_t job_id, size_t limit, bool* truncated) const {
  std::vector<store::MetricRow> rows;
  RETURN_IF_ERROR(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, store::JobMetrics(db, job_id, limit, truncated));
    return Status::Ok();
  }));
  return rows;
}

Result<std::map<int64_t, std::map<std::string, store::MetricSummary>>> JobMetrics::ArraySummaries(
    int64_t array_id) const {
  std::map<int64_t, std::map<std::string, store::MetricSummary>> out;
  RETURN_IF_ERROR(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::ArrayMetricSummaries(db, array_id));
    return Status::Ok();
  }));
  return out;
}

JobMetrics::Stats JobMetrics::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace rota::server
