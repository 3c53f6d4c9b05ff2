#include "server/store/ssh_nodes.h"

namespace rota::store {

Result<std::vector<SshNodeRow>> LoadSshNodes(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT name, url, gpus, gpu_model, labels_json, created_ms, "
                                      "host_key, host_key_source, host_key_ms "
                                      "FROM ssh_nodes ORDER BY name"));
  std::vector<SshNodeRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({s.Text(0), s.Text(1), s.Int(2), s.Text(3), s.Text(4), s.Int(5), s.Text(6),
                   s.Text(7), s.Int(8)});
  }
  return out;
}

Status InsertSshNode(Db& db, const SshNodeRow& row) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO ssh_nodes (name, url, gpus, gpu_model, "
                                      "labels_json, created_ms, host_key, host_key_source, "
                                      "host_key_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  return s.Bind(1, row.name).Bind(2, row.url).Bind(3, row.gpus).Bind(4, row.gpu_model)
      .Bind(5, row.labels_json).Bind(6, row.created_ms).Bind(7, row.host_key)
      .Bind(8, row.host_key_source).Bind(9, row.host_key_ms).Run();
}

Status UpdateSshNodeHostKey(Db& db, const SshNodeRow& row) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("UPDATE ssh_nodes SET host_key = ?2, host_key_source = ?3, "
                                      "host_key_ms = ?4 WHERE name = ?1"));
  RETURN_IF_ERROR(s.Bind(1, row.name).Bind(2, row.host_key).Bind(3, row.host_key_source)
                      .Bind(4, row.host_key_ms).Run());
  if (db.Changes() == 0) return Status::NotFound("no ssh node named '" + row.name + "'");
  return Status::Ok();
}

Status DeleteSshNode(Db& db, const std::string& name) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("DELETE FROM ssh_nodes WHERE name = ?1"));
  return s.Bind(1, name).Run();
}

Result<std::vector<SshTaskRow>> LoadSshTasks(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, node, unix_user, created_ms FROM ssh_tasks"));
  std::vector<SshTaskRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({s.Text(0), s.Text(1), s.Text(2), s.Int(3)});
  }
  return out;
}

Status PutSshTask(Db& db, const SshTaskRow& row) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO ssh_tasks (id, node, unix_user, created_ms) "
                                      "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (id) DO UPDATE SET "
                                      "node = excluded.node, unix_user = excluded.unix_user, "
                                      "created_ms = excluded.created_ms"));
  return s.Bind(1, row.id).Bind(2, row.node).Bind(3, row.unix_user).Bind(4, row.created_ms).Run();
}

Status DeleteSshTask(Db& db, const std::string& id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("DELETE FROM ssh_tasks WHERE id = ?1"));
  return s.Bind(1, id).Run();
}

}  // namespace rota::store
