#include "server/store/node_drains.h"

namespace rota::store {

Result<std::vector<NodeDrainRow>> LoadNodeDrains(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT node, reason, by_user, since_ms FROM node_drains ORDER BY node"));
  std::vector<NodeDrainRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({s.Text(0), s.Text(1), s.Text(2), s.Int(3)});
  }
  return out;
}

Status PutNodeDrain(Db& db, const NodeDrainRow& row) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO node_drains (node, reason, by_user, since_ms) "
                                      "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (node) DO UPDATE SET "
                                      "reason = excluded.reason, by_user = excluded.by_user, "
                                      "since_ms = excluded.since_ms"));
  return s.Bind(1, row.node).Bind(2, row.reason).Bind(3, row.by).Bind(4, row.since_ms).Run();
}

Status DeleteNodeDrain(Db& db, const std::string& node) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("DELETE FROM node_drains WHERE node = ?1"));
  return s.Bind(1, node).Run();
}

}  // namespace rota::store
