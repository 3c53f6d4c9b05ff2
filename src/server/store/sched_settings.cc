#include "server/store/sched_settings.h"

namespace rota::store {

Result<std::vector<QueueRow>> LoadQueues(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT name, spec_json, created_ms, updated_ms FROM queues"));
  std::vector<QueueRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({s.Text(0), s.Text(1), s.Int(2), s.Int(3)});
  }
  return out;
}

Status InsertQueue(Db& db, const QueueRow& row) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO queues (name, spec_json, created_ms, updated_ms) "
                                      "VALUES (?1, ?2, ?3, ?4)"));
  return s.Bind(1, row.name).Bind(2, row.spec_json).Bind(3, row.created_ms).Bind(4, row.updated_ms).Run();
}

Status PutQueue(Db& db, const QueueRow& row) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO queues (name, spec_json, created_ms, updated_ms) "
                                      "VALUES (?1, ?2, ?3, ?4) ON CONFLICT(name) DO UPDATE SET "
                                      "spec_json = ?2, updated_ms = ?4"));
  return s.Bind(1, row.name).Bind(2, row.spec_json).Bind(3, row.created_ms).Bind(4, row.updated_ms).Run();
}

Status DeleteQueue(Db& db, const std::string& name) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("DELETE FROM queues WHERE name = ?1"));
  return s.Bind(1, name).Run();
}

Result<std::vector<QuotaRow>> LoadQuotas(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT kind, name, spec_json, updated_ms FROM quotas"));
  std::vector<QuotaRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({s.Text(0), s.Text(1), s.Text(2), s.Int(3)});
  }
  return out;
}

Status PutQuota(Db& db, const QuotaRow& row) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO quotas (kind, name, spec_json, updated_ms) "
                                      "VALUES (?1, ?2, ?3, ?4) ON CONFLICT(kind, name) DO UPDATE "
                                      "SET spec_json = ?3, updated_ms = ?4"));
  return s.Bind(1, row.kind).Bind(2, row.name).Bind(3, row.spec_json).Bind(4, row.updated_ms).Run();
}

Status DeleteQuota(Db& db, const std::string& kind, const std::string& name) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("DELETE FROM quotas WHERE kind = ?1 AND name = ?2"));
  return s.Bind(1, kind).Bind(2, name).Run();
}

}  // namespace rota::store
