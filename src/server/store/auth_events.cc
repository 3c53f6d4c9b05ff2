#include "server/store/auth_events.h"

namespace rota::store {

Status InsertAuthEvent(Db& db, const AuthEventRow& row) {
  ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO auth_events (t_ms, action, address, username, "
                                        "actor, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id"));
  ASSIGN_OR_RETURN(const int64_t id, ins.Bind(1, row.t_ms)
                                         .Bind(2, row.action)
                                         .Bind(3, row.address)
                                         .Bind(4, row.username)
                                         .Bind(5, row.actor)
                                         .Bind(6, row.detail)
                                         .RunReturningId());
  if (id % 1000 != 0) return Status::Ok();  // trim now and then: ids only grow
  ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM auth_events WHERE id <= ?1"));
  return del.Bind(1, id - kMaxAuthEvents).Run();
}

Result<std::vector<AuthEventRow>> ListAuthEvents(Db& db, int64_t before_id, int limit) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, t_ms, action, address, username, actor, detail "
                                      "FROM auth_events WHERE ?1 = 0 OR id < ?1 "
                                      "ORDER BY id DESC LIMIT ?2"));
  s.Bind(1, before_id).Bind(2, static_cast<int64_t>(limit));
  std::vector<AuthEventRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({s.Int(0), s.Int(1), s.Text(2), s.Text(3), s.Text(4), s.Text(5), s.Text(6)});
  }
  return out;
}

}  // namespace rota::store
