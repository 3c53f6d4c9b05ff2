#include "server/store/node_credentials.h"

namespace rota::store {

Result<std::vector<NodeCredentialRow>> LoadNodeCredentials(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT node, secret_hash, enrolled_ms, remote "
                                      "FROM node_credentials ORDER BY node"));
  std::vector<NodeCredentialRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({s.Text(0), s.Text(1), s.Int(2), s.Text(3)});
  }
  return out;
}

Status InsertNodeCredential(Db& db, const NodeCredentialRow& row) {
  ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT count(*) FROM node_credentials WHERE node = ?1"));
  q.Bind(1, row.node);
  ASSIGN_OR_RETURN(bool found, q.Step());
  if (found && q.Int(0) > 0) {
    return Status::AlreadyExists("node " + row.node + " is already enrolled");
  }
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO node_credentials (node, secret_hash, "
                                      "enrolled_ms, remote) VALUES (?1, ?2, ?3, ?4)"));
  return s.Bind(1, row.node).Bind(2, row.secret_hash).Bind(3, row.enrolled_ms).Bind(4, row.remote).Run();
}

Result<bool> DeleteNodeCredential(Db& db, const std::string& node) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("DELETE FROM node_credentials WHERE node = ?1"));
  RETURN_IF_ERROR(s.Bind(1, node).Run());
  return db.Changes() > 0;
}

}  // namespace rota::store
