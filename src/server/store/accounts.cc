#include "server/store/accounts.h"

namespace rota::store {
namespace {

constexpr const char* kUserColumns =
    "id, username, display_name, email, unix_user, unix_users_json, role, "
    "password_hash IS NOT NULL, disabled, created_ms, updated_ms";

Result<UserRow> ReadUser(Db& db, Stmt& s) {
  UserRow u;
  u.id = s.Int(0);
  u.username = s.Text(1);
  u.display_name = s.Text(2);
  u.email = s.Text(3);
  u.unix_user = s.Text(4);
  u.unix_users_json = s.Text(5);
  u.role = s.Text(6);
  u.has_password = s.Int(7) != 0;
  u.disabled = s.Int(8) != 0;
  u.created_ms = s.Int(9);
  u.updated_ms = s.Int(10);
  ASSIGN_OR_RETURN(u.groups, UserGroups(db, u.id));
  return u;
}

template <class T>
Result<std::optional<UserRow>> FindUser(Db& db, const char* where, const T& arg) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kUserColumns + " FROM users WHERE " + where));
  s.Bind(1, arg);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<UserRow>();
  ASSIGN_OR_RETURN(UserRow u, ReadUser(db, s));
  return std::optional<UserRow>(std::move(u));
}

Result<std::vector<std::string>> Texts(Stmt& s) {
  std::vector<std::string> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(s.Text(0));
  }
  return out;
}

}  // namespace

Result<std::optional<UserRow>> FindUserById(Db& db, int64_t id) { return FindUser(db, "id = ?1", id); }

Result<std::optional<UserRow>> FindUserByName(Db& db, const std::string& username) {
  return FindUser(db, "username = ?1", username);
}

Result<std::vector<UserRow>> ListUserRows(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kUserColumns + " FROM users ORDER BY username"));
  std::vector<UserRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(UserRow u, ReadUser(db, s));
    out.push_back(std::move(u));
  }
  return out;
}

Result<int64_t> CountUsers(Db& db) { return db.QueryInt("SELECT count(*) FROM users"); }

Result<int64_t> CountEnabledAdmins(Db& db) {
  return db.QueryInt("SELECT count(*) FROM users WHERE role = 'admin' AND disabled = 0");
}

Result<int64_t> CountReservationsOf(Db& db, int64_t user_id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT count(*) FROM reservations WHERE owner_id = ?1"));
  s.Bind(1, user_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Result<int64_t> CountJobsOf(Db& db, int64_t user_id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT count(*) FROM jobs WHERE owner_id = ?1"));
  s.Bind(1, user_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Result<int64_t> InsertUser(Db& db, const UserRow& u) {
  ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO users (username, display_name, email, unix_user, "
                                        "unix_users_json, role, password_hash, disabled, created_ms, "
                                        "updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
                                        "RETURNING id"));
  return ins.Bind(1, u.username)
      .Bind(2, u.display_name)
      .Bind(3, u.email)
      .Bind(4, u.unix_user)
      .Bind(5, u.unix_users_json)
      .Bind(6, u.role)
      .Bind(7, u.password_hash)
      .Bind(8, int64_t{u.disabled ? 1 : 0})
      .Bind(9, u.created_ms)
      .Bind(10, u.updated_ms)
      .RunReturningId();
}

Status UpdateUser(Db& db, const UserRow& u) {
  ASSIGN_OR_RETURN(Stmt up, db.Prepare("UPDATE users SET display_name = ?2, email = ?3, unix_user = ?4, "
                                       "unix_users_json = ?5, role = ?6, disabled = ?7, updated_ms = ?8, "
                                       "password_hash = coalesce(?9, password_hash) WHERE id = ?1"));
  return up.Bind(1, u.id)
      .Bind(2, u.display_name)
      .Bind(3, u.email)
      .Bind(4, u.unix_user)
      .Bind(5, u.unix_users_json)
      .Bind(6, u.role)
      .Bind(7, int64_t{u.disabled ? 1 : 0})
      .Bind(8, u.updated_ms)
      .Bind(9, u.password_hash)
      .Run();
}

Status DeleteUser(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM users WHERE id = ?1"));
  return del.Bind(1, id).Run();
}

Status SetUserGroups(Db& db, int64_t user_id, const std::vector<std::string>& groups) {
  ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM group_members WHERE user_id = ?1"));
  RETURN_IF_ERROR(del.Bind(1, user_id).Run());
  for (const auto& name : groups) {
    ASSIGN_OR_RETURN(Stmt find, db.Prepare("SELECT id FROM groups WHERE name = ?1"));
    find.Bind(1, name);
    ASSIGN_OR_RETURN(bool row, find.Step());
    if (!row) return Status::NotFound("group '" + name + "' not found");
    const int64_t gid = find.Int(0);
    ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO group_members (group_id, user_id) "
                                          "VALUES (?1, ?2) ON CONFLICT DO NOTHING"));
    RETURN_IF_ERROR(ins.Bind(1, gid).Bind(2, user_id).Run());
  }
  return Status::Ok();
}

Result<std::vector<std::string>> UserGroups(Db& db, int64_t user_id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT g.name FROM group_members m JOIN groups g ON "
                                      "g.id = m.group_id WHERE m.user_id = ?1 ORDER BY g.name"));
  s.Bind(1, user_id);
  return Texts(s);
}

Result<std::map<std::string, std::string>> PrimaryGroups(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT u.username, min(g.name) FROM users u "
                                      "JOIN group_members m ON m.user_id = u.id "
                                      "JOIN groups g ON g.id = m.group_id GROUP BY u.id"));
  std::map<std::string, std::string> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out[s.Text(0)] = s.Text(1);
  }
  return out;
}

Result<QueueMembership> ReadQueueMembership(Db& db) {
  QueueMembership out;
  ASSIGN_OR_RETURN(Stmt g, db.Prepare("SELECT u.username, g.name FROM users u "
                                      "JOIN group_members m ON m.user_id = u.id "
                                      "JOIN groups g ON g.id = m.group_id ORDER BY u.username, g.name"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, g.Step());
    if (!row) break;
    out.groups_of[g.Text(0)].push_back(g.Text(1));
  }
  ASSIGN_OR_RETURN(Stmt a, db.Prepare("SELECT username FROM users WHERE role = 'admin'"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, a.Step());
    if (!row) break;
    out.admins.insert(a.Text(0));
  }
  return out;
}

Result<std::set<std::string>> DisabledUsernames(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT username FROM users WHERE disabled != 0"));
  std::set<std::string> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.insert(s.Text(0));
  }
  return out;
}

Result<std::string> UserEmail(Db& db, int64_t user_id) {
  ASSIGN_OR_RETURN(Stmt u, db.Prepare("SELECT email FROM users WHERE id = ?1"));
  u.Bind(1, user_id);
  ASSIGN_OR_RETURN(bool row, u.Step());
  return row ? u.Text(0) : std::string();
}

Result<std::optional<PasswordRow>> PasswordOf(Db& db, const std::string& username) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, coalesce(password_hash, ''), disabled FROM "
                                      "users WHERE username = ?1"));
  s.Bind(1, username);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<PasswordRow>();
  return std::optional<PasswordRow>(PasswordRow{s.Int(0), s.Text(1), s.Int(2) != 0});
}

Result<bool> GroupExists(Db& db, const std::string& name) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT 1 FROM groups WHERE name = ?1"));
  s.Bind(1, name);
  return s.Step();
}

Result<int64_t> InsertGroup(Db& db, const std::string& name, const std::string& description,
                            int64_t created_ms) {
  ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO groups (name, description, created_ms) "
                                        "VALUES (?1, ?2, ?3) RETURNING id"));
  return ins.Bind(1, name).Bind(2, description).Bind(3, created_ms).RunReturningId();
}

Result<bool> DeleteGroup(Db& db, const std::string& name) {
  ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM groups WHERE name = ?1"));
  RETURN_IF_ERROR(del.Bind(1, name).Run());
  return db.Changes() > 0;
}

Result<std::vector<GroupRow>> ListGroupRows(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, name, description, created_ms FROM groups "
                                      "ORDER BY name"));
  std::vector<GroupRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(GroupRow{s.Int(0), s.Text(1), s.Text(2), {}, s.Int(3)});
  }
  ASSIGN_OR_RETURN(Stmt m, db.Prepare("SELECT u.username FROM users u JOIN group_members gm "
                                      "ON gm.user_id = u.id WHERE gm.group_id = ?1 ORDER BY "
                                      "u.username"));
  for (auto& g : out) {
    m.Reset();
    m.Bind(1, g.id);
    ASSIGN_OR_RETURN(g.members, Texts(m));
  }
  return out;
}

Status InsertToken(Db& db, const TokenRow& t) {
  ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO tokens (id, user_id, kind, name, "
                                        "secret_mac, created_ms, expires_ms) VALUES (?1, ?2, "
                                        "?3, ?4, ?5, ?6, ?7)"));
  ins.Bind(1, t.id).Bind(2, t.user_id).Bind(3, t.kind).Bind(4, t.name).Bind(5, t.secret_mac);
  ins.Bind(6, t.created_ms).Bind(7, t.expires_ms);
  return ins.Run();
}

Result<std::optional<TokenRow>> GetToken(Db& db, const std::string& id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT user_id, kind, name, secret_mac, created_ms, expires_ms, "
                                      "last_used_ms FROM tokens WHERE id = ?1"));
  s.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<TokenRow>();
  return std::optional<TokenRow>(
      TokenRow{id, s.Int(0), s.Text(1), s.Text(2), s.Text(3), s.Int(4), s.OptInt(5), s.OptInt(6)});
}

Status TouchToken(Db& db, const std::string& id, int64_t now_ms) {
  ASSIGN_OR_RETURN(Stmt up, db.Prepare("UPDATE tokens SET last_used_ms = ?2 WHERE id = ?1"));
  return up.Bind(1, id).Bind(2, now_ms).Run();
}

Result<std::vector<TokenRow>> ListTokenRows(Db& db, int64_t user_id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, user_id, kind, name, created_ms, expires_ms, "
                                      "last_used_ms FROM tokens WHERE user_id = ?1 ORDER BY "
                                      "created_ms"));
  s.Bind(1, user_id);
  std::vector<TokenRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(TokenRow{s.Text(0), s.Int(1), s.Text(2), s.Text(3), "", s.Int(4), s.OptInt(5), s.OptInt(6)});
  }
  return out;
}

Result<bool> DeleteToken(Db& db, const std::string& id, int64_t user_id) {
  ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM tokens WHERE id = ?1 AND (?2 = 0 OR "
                                        "user_id = ?2)"));
  RETURN_IF_ERROR(del.Bind(1, id).Bind(2, user_id).Run());
  return db.Changes() > 0;
}

Status DeleteSessions(Db& db, int64_t user_id) {
  ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM tokens WHERE user_id = ?1 AND kind = 'session'"));
  return del.Bind(1, user_id).Run();
}

Result<int64_t> DeleteTokensOf(Db& db, int64_t user_id) {
  ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM tokens WHERE user_id = ?1"));
  RETURN_IF_ERROR(del.Bind(1, user_id).Run());
  return db.Changes();
}

}  // namespace rota::store
