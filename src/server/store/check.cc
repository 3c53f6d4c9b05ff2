#include "server/store/check.h"

#include <sys/stat.h>

#include "server/store/pg_backend.h"
#include "server/store/schema.h"
#include "server/store/sqlite_backend.h"
#include "server/store/store_url.h"

namespace rota::store {
namespace {

struct Rule {
  const char* what;
  const char* count_sql;  // SELECT count(*) of the rows that break the rule
};

// Portable SQL (SQLite and PostgreSQL).
constexpr Rule kRules[] = {
    {"GPUs without their node", "SELECT count(*) FROM gpus g WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = g.node)"},
    {"samples without their node",
     "SELECT count(*) FROM node_gpu_samples s WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = s.node)"},
    {"host samples without their node",
     "SELECT count(*) FROM node_samples s WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = s.node)"},
    {"GPU minutes without their node",
     "SELECT count(*) FROM gpu_minutes m WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = m.node)"},
    {"node minutes without their node",
     "SELECT count(*) FROM node_minutes m WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = m.node)"},
    {"group members without their group or user",
     "SELECT count(*) FROM group_members m WHERE NOT EXISTS (SELECT 1 FROM groups g WHERE g.id = m.group_id) "
     "OR NOT EXISTS (SELECT 1 FROM users u WHERE u.id = m.user_id)"},
    {"tokens without their user", "SELECT count(*) FROM tokens t WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = t.user_id)"},
    {"reservations without their owner",
     "SELECT count(*) FROM reservations r WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = r.owner_id)"},
    {"reservation GPUs without their reservation",
     "SELECT count(*) FROM reservation_gpus g WHERE NOT EXISTS (SELECT 1 FROM reservations r WHERE r.id = g.reservation_id)"},
    {"reservation GPUs on another node than their reservation",
     "SELECT count(*) FROM reservation_gpus g JOIN reservations r ON r.id = g.reservation_id WHERE g.node <> r.node"},
    {"reservations ending before they start", "SELECT count(*) FROM reservations WHERE end_ms <= start_ms"},
    {"jobs without their owner", "SELECT count(*) FROM jobs j WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = j.owner_id)"},
    {"job events without their job",
     "SELECT count(*) FROM job_events e WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = e.job_id)"},
    {"ended jobs without an end time",
     "SELECT count(*) FROM jobs WHERE state IN ('succeeded', 'failed', 'cancelled') AND ended_ms IS NULL"},
    {"usage of jobs that do not exist",
     "SELECT count(*) FROM usage_hourly h WHERE h.job_id <> 0 AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = h.job_id)"},
    {"negative usage", "SELECT count(*) FROM usage_hourly WHERE gpu_ms < 0 OR busy_ms < 0 OR energy_mj < 0"},
    {"violation events without their violation",
     "SELECT count(*) FROM violation_events e WHERE NOT EXISTS (SELECT 1 FROM violations v WHERE v.id = e.violation_id)"},
    {"array members without their array",
     "SELECT count(*) FROM jobs j WHERE j.array_id <> 0 AND NOT EXISTS (SELECT 1 FROM job_arrays a WHERE a.id = j.array_id)"},
    {"metrics of jobs that do not exist",
     "SELECT count(*) FROM task_metrics m WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = m.job_id)"},
    {"more than one leader lease", "SELECT CASE WHEN count(*) > 1 THEN count(*) ELSE 0 END FROM leader_lease"},
};

constexpr const char* kCounted[] = {"nodes",   "gpus",       "node_gpu_samples", "users",       "reservations",
                                    "jobs",    "job_events", "usage_hourly",     "violations"};

Result<Db> OpenForCheck(const StoreUrl& u) {
  if (u.dialect == Dialect::kPostgres) {
    ASSIGN_OR_RETURN(Db db, OpenPostgres(u.pg_url, u.display));
    RETURN_IF_ERROR(db.Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
    return db;
  }
  struct stat st{};
  if (::stat(u.sqlite_path.c_str(), &st) != 0) return Status::NotFound("no store at " + u.sqlite_path);
  ASSIGN_OR_RETURN(Db db, Db::Open(u.sqlite_path, SQLITE_OPEN_READWRITE));  // never CREATE
  RETURN_IF_ERROR(db.Exec("PRAGMA query_only = ON"));
  auto app_id = db.QueryInt("PRAGMA application_id");
  if (!app_id.ok() || *app_id != kApplicationId) {
    return Status::InvalidArgument(u.display + " is not a rota store");
  }
  RETURN_IF_ERROR(db.Exec("BEGIN"));  // one snapshot (WAL)
  return db;
}

}  // namespace

Result<CheckReport> CheckStore(const std::string& url) {
  ASSIGN_OR_RETURN(StoreUrl u, ParseStoreUrl(url));
  ASSIGN_OR_RETURN(Db db, OpenForCheck(u));
  CheckReport report;
  report.store = u.display;
  ASSIGN_OR_RETURN(report.schema_version,
                   u.dialect == Dialect::kPostgres ? PgSchemaVersion(db) : SchemaVersion(db));
  if (report.schema_version == 0) return Status::InvalidArgument(u.display + " holds no rota store");
  if (report.schema_version > kSchemaVersion) {
    return Status::Conflict(u.display + " has schema version " + std::to_string(report.schema_version) +
                            ", written by a newer rota (this one knows up to " + std::to_string(kSchemaVersion) +
                            "): check it with that rota");
  }
  report.checks++;
  if (report.schema_version < kSchemaVersion) {
    report.problems.push_back({"schema version " + std::to_string(report.schema_version) + " is older than " +
                                   std::to_string(kSchemaVersion) + " (a server of this rota upgrades it)",
                               1});
  }
  if (u.dialect == Dialect::kSqlite) {
    report.checks++;
    ASSIGN_OR_RETURN(Stmt integrity, db.Prepare("PRAGMA integrity_check"));
    int64_t bad = 0;
    std::string first;
    while (true) {
      ASSIGN_OR_RETURN(bool row, integrity.Step());
      if (!row) break;
      const std::string text = integrity.Text(0);
      if (text == "ok") continue;
      if (first.empty()) first = text;
      ++bad;
    }
    if (bad > 0) report.problems.push_back({"integrity_check: " + first, bad});
    report.checks++;
    ASSIGN_OR_RETURN(Stmt fk, db.Prepare("PRAGMA foreign_key_check"));
    int64_t broken = 0;
    std::string table;
    while (true) {
      ASSIGN_OR_RETURN(bool row, fk.Step());
      if (!row) break;
      if (table.empty()) table = fk.Text(0);
      ++broken;
    }
    if (broken > 0) report.problems.push_back({"foreign_key_check (first in table " + table + ")", broken});
  }
  for (const Rule& r : kRules) {
    report.checks++;
    ASSIGN_OR_RETURN(int64_t n, db.QueryInt(r.count_sql));
    if (n != 0) report.problems.push_back({r.what, n});
  }
  for (const char* table : kCounted) {
    ASSIGN_OR_RETURN(int64_t n, db.QueryInt(std::string("SELECT count(*) FROM ") + table));
    report.counts.emplace_back(table, n);
  }
  (void)db.Exec("ROLLBACK");
  return report;
}

}  // namespace rota::store
