#include "server/store/metrics.h"

namespace rota::store {

Status InsertMetricPoints(Db& db, int64_t job_id, const std::string& task,
                          const std::vector<api::TaskMetricPoint>& points) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO task_metrics (job_id, task, source, seq, name, step, value, "
                                      "time_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING"));
  for (const auto& p : points) {
    s.Reset();
    RETURN_IF_ERROR(s.Bind(1, job_id)
                        .Bind(2, task)
                        .Bind(3, int64_t{p.source == api::TaskMetricPoint::Source::kFile ? 1 : 0})
                        .Bind(4, static_cast<int64_t>(p.seq))
                        .Bind(5, p.name)
                        .Bind(6, p.step)
                        .Bind(7, p.value)
                        .Bind(8, p.time_ms)
                        .Run());
  }
  return Status::Ok();
}

Result<std::vector<MetricRow>> JobMetrics(Db& db, int64_t job_id, size_t limit, bool* truncated) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT task, name, step, value, time_ms FROM task_metrics WHERE job_id = ?1 "
                                      "ORDER BY time_ms, task, source, seq, name LIMIT ?2"));
  s.Bind(1, job_id).Bind(2, static_cast<int64_t>(limit) + 1);
  std::vector<MetricRow> out;
  *truncated = false;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    if (out.size() == limit) {
      *truncated = true;
      break;
    }
    out.push_back({s.Text(0), s.Text(1), s.Int(2), s.Double(3), s.Int(4)});
  }
  return out;
}

Result<std::map<int64_t, std::map<std::string, MetricSummary>>> ArrayMetricSummaries(Db& db, int64_t array_id) {
  std::map<int64_t, std::map<std::string, MetricSummary>> out;
  ASSIGN_OR_RETURN(Stmt agg, db.Prepare("SELECT m.job_id, m.name, MIN(m.value), MAX(m.value), COUNT(*) "
                                        "FROM task_metrics m JOIN jobs j ON j.id = m.job_id "
                                        "WHERE j.array_id = ?1 GROUP BY m.job_id, m.name"));
  agg.Bind(1, array_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, agg.Step());
    if (!row) break;
    MetricSummary& sum = out[agg.Int(0)][agg.Text(1)];
    sum.min = agg.Double(2);
    sum.max = agg.Double(3);
    sum.count = agg.Int(4);
  }
  ASSIGN_OR_RETURN(Stmt last, db.Prepare("SELECT job_id, name, value, step FROM (SELECT m.job_id, m.name, m.value, "
                                         "m.step, ROW_NUMBER() OVER (PARTITION BY m.job_id, m.name ORDER BY "
                                         "m.time_ms DESC, m.task DESC, m.source DESC, m.seq DESC) AS rn "
                                         "FROM task_metrics m JOIN jobs j ON j.id = m.job_id WHERE j.array_id = ?1) "
                                         "AS ranked WHERE rn = 1"));
  last.Bind(1, array_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, last.Step());
    if (!row) break;
    MetricSummary& sum = out[last.Int(0)][last.Text(1)];
    sum.last = last.Double(2);
    sum.last_step = last.Int(3);
  }
  return out;
}

Result<std::vector<TrialPoints>> ArrayTrialPoints(Db& db, int64_t array_id, const std::string& metric) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT j.id, j.state, j.reason, m.step, m.value, m.time_ms FROM jobs j "
                                      "LEFT JOIN task_metrics m ON m.job_id = j.id AND m.name = ?2 AND m.step >= 0 "
                                      "WHERE j.array_id = ?1 ORDER BY j.id, m.time_ms, m.step"));
  s.Bind(1, array_id).Bind(2, metric);
  std::vector<TrialPoints> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    const int64_t id = s.Int(0);
    if (out.empty() || out.back().job_id != id) out.push_back({id, s.Text(1), s.Text(2), {}});
    if (!s.IsNull(3)) out.back().points.push_back({s.Int(3), s.Double(4), s.Int(5)});
  }
  return out;
}

}  // namespace rota::store
