#include "server/store/violations.h"

namespace rota::store {
namespace {

constexpr const char* kSelect = R"sql(
SELECT v.id, v.node, v.gpu, v.gpu_uuid, v.uid, v.unix_user, v.user_id, coalesce(u.username, ''),
       coalesce(v.reservation_id, 0), coalesce(v.reservation_owner_id, 0), coalesce(o.username, ''),
       v.mode, v.dry_run, v.state, v.opened_ms, v.closed_ms, v.processes_json, v.resolution,
       coalesce((SELECT e.action FROM violation_events e WHERE e.violation_id = v.id
                 ORDER BY e.t_ms DESC, e.id DESC LIMIT 1), '')
FROM violations v
LEFT JOIN users u ON u.id = v.user_id
LEFT JOIN users o ON o.id = v.reservation_owner_id
)sql";

ViolationRow RowOf(const Stmt& s) {
  ViolationRow r;
  r.id = s.Int(0);
  r.node = s.Text(1);
  r.gpu = s.Int(2);
  r.gpu_uuid = s.Text(3);
  r.uid = s.OptInt(4);
  r.unix_user = s.Text(5);
  r.user_id = s.OptInt(6);
  r.username = s.Text(7);
  r.reservation_id = s.Int(8);
  r.reservation_owner_id = s.Int(9);
  r.reservation_owner = s.Text(10);
  r.mode = s.Text(11);
  r.dry_run = s.Int(12) != 0;
  r.state = s.Text(13);
  r.opened_ms = s.Int(14);
  r.closed_ms = s.OptInt(15);
  r.processes_json = s.Text(16);
  r.resolution = s.Text(17);
  r.last_action = s.Text(18);
  return r;
}

Result<std::vector<ViolationRow>> Rows(Stmt& s) {
  std::vector<ViolationRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(RowOf(s));
  }
  return out;
}

}  // namespace

Result<int64_t> InsertViolation(Db& db, const ViolationRow& row) {
  ASSIGN_OR_RETURN(
      Stmt s,
      db.Prepare("INSERT INTO violations (node, gpu, gpu_uuid, uid, unix_user, user_id, reservation_id, "
                 "reservation_owner_id, mode, dry_run, state, opened_ms, processes_json) VALUES "
                 "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'open', ?11, ?12) RETURNING id"));
  std::optional<int64_t> rid, owner;
  if (row.reservation_id != 0) rid = row.reservation_id;
  if (row.reservation_owner_id != 0) owner = row.reservation_owner_id;
  s.Bind(1, row.node)
      .Bind(2, row.gpu)
      .Bind(3, row.gpu_uuid)
      .Bind(4, row.uid)
      .Bind(5, row.unix_user)
      .Bind(6, row.user_id)
      .Bind(7, rid)
      .Bind(8, owner)
      .Bind(9, row.mode)
      .Bind(10, int64_t{row.dry_run ? 1 : 0})
      .Bind(11, row.opened_ms)
      .Bind(12, row.processes_json);
  return s.RunReturningId();
}

Result<ViolationRow> GetViolation(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kSelect) + "WHERE v.id = ?1"));
  s.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound("violation " + std::to_string(id) + " not found");
  return RowOf(s);
}

Status InsertViolationEvent(Db& db, int64_t id, const ViolationEventRow& e) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO violation_events "
                                      "(violation_id, t_ms, action, outcome, detail, pids_json) "
                                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  s.Bind(1, id).Bind(2, e.t_ms).Bind(3, e.action).Bind(4, e.outcome).Bind(5, e.detail).Bind(6, e.pids_json);
  return s.Run();
}

Result<std::vector<ViolationEventRow>> ViolationEvents(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, t_ms, action, outcome, detail, pids_json "
                                      "FROM violation_events WHERE violation_id = ?1 "
                                      "ORDER BY t_ms, id"));
  s.Bind(1, id);
  std::vector<ViolationEventRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({s.Int(0), s.Int(1), s.Text(2), s.Text(3), s.Text(4), s.Text(5)});
  }
  return out;
}

Status SetViolationProcesses(Db& db, int64_t id, const std::string& processes_json) {
  ASSIGN_OR_RETURN(Stmt u, db.Prepare("UPDATE violations SET processes_json = ?2 WHERE id = ?1"));
  return u.Bind(1, id).Bind(2, processes_json).Run();
}

Status ResolveViolation(Db& db, int64_t id, int64_t t_ms, const std::string& resolution) {
  ASSIGN_OR_RETURN(Stmt u, db.Prepare("UPDATE violations SET state = 'resolved', closed_ms = ?2, "
                                      "resolution = ?3 WHERE id = ?1"));
  return u.Bind(1, id).Bind(2, t_ms).Bind(3, resolution).Run();
}

Result<std::vector<ViolationRow>> ListViolations(Db& db, const ViolationFilter& f) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kSelect) + R"sql(
WHERE (?1 = '' OR v.node = ?1)
  AND (?2 = '' OR v.unix_user = ?2 OR u.username = ?2)
  AND (?3 = '' OR v.state = ?3)
  AND (?4 IS NULL OR coalesce(v.closed_ms, 9223372036854775807) >= ?4)
  AND (?5 IS NULL OR v.opened_ms < ?5)
ORDER BY v.opened_ms DESC, v.id DESC
LIMIT ?6 OFFSET ?7)sql"));
  s.Bind(1, f.node).Bind(2, f.user).Bind(3, f.state).Bind(4, f.from_ms).Bind(5, f.to_ms);
  s.Bind(6, f.limit).Bind(7, f.offset);
  return Rows(s);
}

Result<std::vector<ViolationRow>> OpenViolations(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kSelect) +
                                      "WHERE v.state = 'open' ORDER BY v.opened_ms, v.id"));
  return Rows(s);
}

}  // namespace rota::store
