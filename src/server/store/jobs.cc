#include "server/store/jobs.h"

#include <algorithm>
#include <utility>

namespace rota::store {
namespace {

constexpr char kJobSelect[] =
    "SELECT j.id, j.owner_id, coalesce(u.username, ''), j.spec_json, j.state, j.reason, "
    "j.restart_count, j.tasks_json, j.created_ms, j.updated_ms, j.ended_ms, "
    "j.queued_ms, j.attained_gpu_ms, j.preemptions, j.lost_gpu_ms, j.name "
    "FROM jobs j LEFT JOIN users u ON u.id = j.owner_id ";

JobRow RowOf(Stmt& s) {
  JobRow r;
  r.id = s.Int(0);
  r.owner_id = s.Int(1);
  r.owner = s.Text(2);
  r.spec_json = s.Text(3);
  r.state = s.Text(4);
  r.reason = s.Text(5);
  r.restart_count = s.Int(6);
  r.tasks_json = s.Text(7);
  r.created_ms = s.Int(8);
  r.updated_ms = s.Int(9);
  if (!s.IsNull(10)) r.ended_ms = s.Int(10);
  r.queued_ms = s.Int(11);
  r.attained_gpu_ms = s.Int(12);
  r.preemptions = s.Int(13);
  r.lost_gpu_ms = s.Int(14);
  r.name = s.Text(15);
  return r;
}

Result<std::vector<JobRow>> Rows(Stmt& s) {
  std::vector<JobRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(RowOf(s));
  }
  return out;
}

Status AppendEvent(Db& db, int64_t job_id, const JobEventRow& e) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO job_events (job_id, t_ms, state, reason) "
                                      "VALUES (?1, ?2, ?3, ?4)"));
  return s.Bind(1, job_id).Bind(2, e.t_ms).Bind(3, e.state).Bind(4, e.reason).Run();
}

}  // namespace

Result<int64_t> InsertJob(Db& db, const JobRow& row) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO jobs (owner_id, name, spec_json, state, reason, "
                                      "tasks_json, created_ms, updated_ms, queued_ms) "
                                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  RETURN_IF_ERROR(s.Bind(1, row.owner_id).Bind(2, row.name).Bind(3, row.spec_json).Bind(4, row.state)
                      .Bind(5, row.reason).Bind(6, row.tasks_json).Bind(7, row.created_ms)
                      .Bind(8, row.updated_ms).Bind(9, row.queued_ms).Run());
  const int64_t id = db.LastInsertRowid();
  RETURN_IF_ERROR(AppendEvent(db, id, {row.created_ms, row.state, row.reason}));
  return id;
}

Status UpdateJob(Db& db, const JobRow& row, const JobEventRow* event) {
  ASSIGN_OR_RETURN(Stmt up, db.Prepare("UPDATE jobs SET state = ?2, reason = ?3, restart_count = ?4, "
                                       "tasks_json = ?5, updated_ms = ?6, ended_ms = ?7, queued_ms = ?8, "
                                       "attained_gpu_ms = ?9, preemptions = ?10, lost_gpu_ms = ?11 "
                                       "WHERE id = ?1"));
  up.Bind(1, row.id).Bind(2, row.state).Bind(3, row.reason).Bind(4, row.restart_count);
  up.Bind(5, row.tasks_json).Bind(6, row.updated_ms).Bind(8, row.queued_ms);
  up.Bind(9, row.attained_gpu_ms).Bind(10, row.preemptions).Bind(11, row.lost_gpu_ms);
  if (row.ended_ms) up.Bind(7, *row.ended_ms);
  else up.BindNull(7);
  RETURN_IF_ERROR(up.Run());
  return event == nullptr ? Status::Ok() : AppendEvent(db, row.id, *event);
}

Result<std::optional<JobRow>> GetJob(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kJobSelect) + "WHERE j.id = ?1"));
  s.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<JobRow>();
  return std::optional<JobRow>(RowOf(s));
}

Result<std::vector<JobEventRow>> JobEvents(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT t_ms, state, reason FROM job_events WHERE job_id = ?1 "
                                      "ORDER BY t_ms, id"));
  s.Bind(1, id);
  std::vector<JobEventRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool more, s.Step());
    if (!more) break;
    out.push_back({s.Int(0), s.Text(1), s.Text(2)});
  }
  return out;
}

Result<std::vector<JobRow>> ListJobs(Db& db, const JobListFilter& f, int limit, int64_t offset) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kJobSelect) +
                                      "WHERE (?1 = 0 OR j.owner_id = ?1) AND (?2 = '' OR j.state = ?2) "
                                      "AND (?5 = 0 OR j.id < ?5) AND (?6 = 0 OR j.id > ?6) " +
                                      (f.after > 0 ? "ORDER BY j.id ASC" : "ORDER BY j.id DESC") +
                                      " LIMIT ?3 OFFSET ?4"));
  s.Bind(1, f.owner_id).Bind(2, f.state).Bind(3, int64_t{limit}).Bind(4, offset).Bind(5, f.before).Bind(6, f.after);
  return Rows(s);
}

Result<std::vector<JobRow>> UnfinishedJobs(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kJobSelect) +
                                      "WHERE j.state NOT IN ('succeeded', 'failed', 'cancelled')"));
  return Rows(s);
}

Result<EndedUsage> EndedUsageSince(Db& db, int64_t since_ms, int64_t recent_ms) {
  // One statement: both parts see the same committed state.
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT u.username, SUM(j.attained_gpu_ms), NULL FROM jobs j "
                                      "JOIN users u ON u.id = j.owner_id "
                                      "WHERE j.ended_ms >= ?1 GROUP BY u.username "
                                      "UNION ALL SELECT NULL, NULL, id FROM jobs WHERE ended_ms >= ?2"));
  s.Bind(1, since_ms).Bind(2, recent_ms);
  EndedUsage out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    if (s.IsNull(2)) {
      out.gpu_ms_by_owner[s.Text(0)] = static_cast<double>(s.Int(1));
    } else {
      out.recent_ids.insert(s.Int(2));
    }
  }
  return out;
}

Result<FairShareUsage> LoadFairShareUsage(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT kind, name, gpu_ms, at_ms FROM fairshare_usage"));
  FairShareUsage out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    (s.Text(0) == "group" ? out.group : out.user)[s.Text(1)] = s.Double(2);
    out.at_ms = std::max(out.at_ms, s.Int(3));
  }
  return out;
}

Status SaveFairShareUsage(Db& db, const FairShareUsage& usage) {
  RETURN_IF_ERROR(db.Exec("DELETE FROM fairshare_usage"));
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO fairshare_usage (kind, name, gpu_ms, at_ms) "
                                      "VALUES (?1, ?2, ?3, ?4)"));
  for (const auto& [kind, m] : {std::pair<std::string, const std::map<std::string, double>*>{"user", &usage.user},
                                {"group", &usage.group}}) {
    for (const auto& [name, ms] : *m) {
      s.Reset();
      RETURN_IF_ERROR(s.Bind(1, kind).Bind(2, name).Bind(3, ms).Bind(4, usage.at_ms).Run());
    }
  }
  return Status::Ok();
}

}  // namespace rota::store
