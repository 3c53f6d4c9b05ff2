#include "server/store/secrets.h"

namespace rota::store {
namespace {

constexpr const char* kColumns =
    "name, owner_user_id, owner_group, created_by, created_ms, last_used_ms, size, key_id";

SecretRow ReadRow(Stmt& s) {
  return {s.Text(0), s.Int(1), s.Text(2), s.Int(3), s.Int(4), s.Int(5), s.Int(6), s.Int(7), ""};
}

}  // namespace

Status InsertSecret(Db& db, const SecretRow& row) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("INSERT INTO secrets (") + kColumns +
                                      ", sealed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  return s.Bind(1, row.name).Bind(2, row.owner_user_id).Bind(3, row.owner_group)
      .Bind(4, row.created_by).Bind(5, row.created_ms).Bind(6, row.last_used_ms)
      .Bind(7, row.size).Bind(8, row.key_id).Bind(9, row.sealed).Run();
}

Result<std::optional<SecretRow>> GetSecret(Db& db, const std::string& name, bool with_value) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kColumns +
                                      (with_value ? ", sealed" : ", ''") +
                                      " FROM secrets WHERE name = ?1"));
  s.Bind(1, name);
  ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) return std::optional<SecretRow>();
  SecretRow row = ReadRow(s);
  row.sealed = s.Text(8);
  return std::optional<SecretRow>(std::move(row));
}

Result<std::vector<SecretRow>> ListSecrets(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kColumns +
                                      " FROM secrets ORDER BY name"));
  std::vector<SecretRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(ReadRow(s));
  }
  return out;
}

Result<bool> DeleteSecret(Db& db, const std::string& name) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("DELETE FROM secrets WHERE name = ?1"));
  RETURN_IF_ERROR(s.Bind(1, name).Run());
  return db.Changes() > 0;
}

Status ResealSecret(Db& db, const std::string& name, int64_t key_id, const std::string& sealed) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("UPDATE secrets SET key_id = ?2, sealed = ?3 WHERE name = ?1"));
  return s.Bind(1, name).Bind(2, key_id).Bind(3, sealed).Run();
}

Status TouchSecret(Db& db, const std::string& name, int64_t now_ms) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("UPDATE secrets SET last_used_ms = ?2 WHERE name = ?1"));
  return s.Bind(1, name).Bind(2, now_ms).Run();
}

}  // namespace rota::store
