#include "server/store/jobs.h"

#include <algorithm>
#include <utility>

namespace rota::store {
namespace {

constexpr char kJobSelect[] =
    "SELECT j.id, j.owner_id, coalesce(u.username, ''), j.spec_json, j.state, j.reason, "
    "j.restart_count, j.tasks_json, j.created_ms, j.updated_ms, j.ended_ms, "
    "j.queued_ms, j.attained_gpu_ms, j.preemptions, j.lost_gpu_ms, j.name, "
    "j.array_id, j.array_index, j.array_cap, j.array_max_failures, j.params_json "
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
  r.array_id = s.Int(16);
  r.array_index = s.Int(17);
  r.array_cap = s.Int(18);
  r.array_max_failures = s.Int(19);
  r.params_json = s.Text(20);
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
  constexpr const char* kInsert =
      "INSERT INTO jobs (owner_id, name, spec_json, state, reason, tasks_json, created_ms, "
      "updated_ms, queued_ms, array_id, array_index, array_cap, array_max_failures, params_json) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) RETURNING id";
  // On PostgreSQL the job and its first event in one statement (a data-modifying
  // CTE, which SQLite lacks): each statement there is a round trip, and a
  // submission is a write transaction of its own (docs/design-store.md, "Round
  // trips per write transaction on PostgreSQL").
  const bool pg = db.dialect() == Dialect::kPostgres;
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(pg ? std::string("WITH j AS (") + kInsert +
                                               "), e AS (INSERT INTO job_events (job_id, t_ms, "
                                               "state, reason) SELECT id, ?7, ?4, ?5 FROM j) "
                                               "SELECT id FROM j"
                                         : std::string(kInsert)));
  ASSIGN_OR_RETURN(const int64_t id,
                   s.Bind(1, row.owner_id).Bind(2, row.name).Bind(3, row.spec_json).Bind(4, row.state)
                       .Bind(5, row.reason).Bind(6, row.tasks_json).Bind(7, row.created_ms)
                       .Bind(8, row.updated_ms).Bind(9, row.queued_ms).Bind(10, row.array_id)
                       .Bind(11, row.array_index).Bind(12, row.array_cap).Bind(13, row.array_max_failures)
                       .Bind(14, row.params_json).RunReturningId());
  if (!pg) RETURN_IF_ERROR(AppendEvent(db, id, {row.created_ms, row.state, row.reason}));
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
  else up.BindNull(7, SqlType::kInt);
  RETURN_IF_ERROR(up.Run());
  return event == nullptr ? Status::Ok() : AppendEvent(db, row.id, *event);
}

Status UpdateJobs(Db& db, const std::vector<JobUpdate>& updates) {
  for (const auto& u : updates) {
    RETURN_IF_ERROR(UpdateJob(db, u.row, nullptr));
    for (const auto& e : u.events) RETURN_IF_ERROR(AppendEvent(db, u.row.id, e));
  }
  return Status::Ok();
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
                                      "AND (?5 = 0 OR j.id < ?5) AND (?6 = 0 OR j.id > ?6) "
                                      "AND (?7 = 0 OR (?7 > 0 AND j.array_id = ?7) OR (?7 < 0 AND j.array_id = 0)) " +
                                      (f.after > 0 || f.array_id > 0 ? "ORDER BY j.id ASC" : "ORDER BY j.id DESC") +
                                      " LIMIT ?3 OFFSET ?4"));
  s.Bind(1, f.owner_id).Bind(2, f.state).Bind(3, int64_t{limit}).Bind(4, offset).Bind(5, f.before).Bind(6, f.after);
  s.Bind(7, f.array_id);
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

namespace {

constexpr char kArraySelect[] =
    "SELECT a.id, a.owner_id, coalesce(u.username, ''), a.name, a.indices, a.max_running, a.size, "
    "a.spec_json, a.created_ms, a.sweep_json FROM job_arrays a LEFT JOIN users u ON u.id = a.owner_id ";

// Fills in the arrays' counts (one query for all of them).
Status AddCounts(Db& db, std::vector<ArrayRow>& arrays) {
  if (arrays.empty()) return Status::Ok();
  int64_t lo = arrays.front().id, hi = arrays.front().id;
  std::map<int64_t, ArrayRow*> by_id;
  for (auto& a : arrays) {
    lo = std::min(lo, a.id);
    hi = std::max(hi, a.id);
    by_id[a.id] = &a;
  }
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT array_id, state, count(*) FROM jobs WHERE array_id >= ?1 AND "
                                      "array_id <= ?2 GROUP BY array_id, state"));
  s.Bind(1, lo).Bind(2, hi);
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    if (auto it = by_id.find(s.Int(0)); it != by_id.end()) it->second->counts[s.Text(1)] = s.Int(2);
  }
  return Status::Ok();
}

Result<std::vector<ArrayRow>> ArrayRows(Db& db, Stmt& s) {
  std::vector<ArrayRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ArrayRow a;
    a.id = s.Int(0);
    a.owner_id = s.Int(1);
    a.owner = s.Text(2);
    a.name = s.Text(3);
    a.indices = s.Text(4);
    a.max_running = s.Int(5);
    a.size = s.Int(6);
    a.spec_json = s.Text(7);
    a.created_ms = s.Int(8);
    a.sweep_json = s.Text(9);
    out.push_back(std::move(a));
  }
  RETURN_IF_ERROR(AddCounts(db, out));
  return out;
}

}  // namespace

Result<int64_t> InsertArray(Db& db, const ArrayRow& row) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO job_arrays (owner_id, name, indices, max_running, size, "
                                      "spec_json, created_ms, sweep_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id"));
  return s.Bind(1, row.owner_id).Bind(2, row.name).Bind(3, row.indices).Bind(4, row.max_running)
      .Bind(5, row.size).Bind(6, row.spec_json).Bind(7, row.created_ms).Bind(8, row.sweep_json).RunReturningId();
}

Result<std::optional<ArrayRow>> GetArray(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kArraySelect) + "WHERE a.id = ?1"));
  s.Bind(1, id);
  ASSIGN_OR_RETURN(auto rows, ArrayRows(db, s));
  if (rows.empty()) return std::optional<ArrayRow>();
  return std::optional<ArrayRow>(std::move(rows.front()));
}

Result<std::vector<ArrayRow>> ListArrays(Db& db, int64_t owner_id, int limit, int64_t before) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kArraySelect) +
                                      "WHERE (?1 = 0 OR a.owner_id = ?1) AND (?2 = 0 OR a.id < ?2) "
                                      "ORDER BY a.id DESC LIMIT ?3"));
  s.Bind(1, owner_id).Bind(2, before).Bind(3, int64_t{limit});
  return ArrayRows(db, s);
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
