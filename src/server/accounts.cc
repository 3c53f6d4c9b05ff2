#include "server/accounts.h"

#include <sodium.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/file_util.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/strings.h"

namespace rota::server {
namespace {

using store::Db;
using store::Stmt;

constexpr size_t kMaxDisplayName = 200;
constexpr size_t kMaxEmail = 254;
constexpr size_t kMinPassword = 8;
constexpr size_t kMaxPassword = 1024;
constexpr size_t kMaxTokenName = 100;
constexpr size_t kMaxGroupName = 64;
constexpr size_t kMaxDescription = 1000;
constexpr const char* kTokenPrefix = "rota_";
constexpr size_t kTokenIdHex = 16;
constexpr size_t kTokenSecretHex = 48;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool HasControl(const std::string& s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string ToHex(const unsigned char* data, size_t n) {
  std::string out(n * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), data, n);
  out.pop_back();
  return out;
}

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

const char* kUserColumns =
    "id, username, display_name, email, unix_user, unix_users_json, role, "
    "password_hash IS NOT NULL, disabled, created_ms, updated_ms";

Result<User> ReadUser(Db& db, Stmt& s) {
  User u;
  u.id = s.Int(0);
  u.username = s.Text(1);
  u.display_name = s.Text(2);
  u.email = s.Text(3);
  u.unix_user = s.Text(4);
  try {
    auto j = nlohmann::json::parse(s.Text(5));
    for (auto& [node, name] : j.items()) u.unix_users[node] = name.get<std::string>();
  } catch (const std::exception& e) {
    return Status::IoError("user " + u.username + ": stored unix_users is unreadable: " + e.what());
  }
  ASSIGN_OR_RETURN(u.role, ParseRole(s.Text(6)));
  u.has_password = s.Int(7) != 0;
  u.disabled = s.Int(8) != 0;
  u.created_ms = s.Int(9);
  u.updated_ms = s.Int(10);
  ASSIGN_OR_RETURN(Stmt g, db.Prepare("SELECT g.name FROM groups g JOIN group_members m ON "
                                      "m.group_id = g.id WHERE m.user_id = ?1 ORDER BY g.name"));
  g.Bind(1, u.id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, g.Step());
    if (!row) break;
    u.groups.push_back(g.Text(0));
  }
  return u;
}

Result<User> QueryOneUser(Db& db, const std::string& where, const std::string& arg,
                          const std::string& what) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kUserColumns +
                                      " FROM users WHERE " + where));
  s.Bind(1, arg);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound(what + " not found");
  return ReadUser(db, s);
}

Status ValidatePatch(const UserPatch& p) {
  if (p.username) RETURN_IF_ERROR(ValidateUsername(*p.username));
  if (p.display_name &&
      (p.display_name->size() > kMaxDisplayName || HasControl(*p.display_name))) {
    return Status::InvalidArgument("display_name must be at most 200 bytes without control "
                                   "characters");
  }
  if (p.email) RETURN_IF_ERROR(ValidateEmail(*p.email));
  if (p.unix_user && !p.unix_user->empty()) RETURN_IF_ERROR(ValidateUnixUser(*p.unix_user));
  if (p.unix_users) {
    for (const auto& [node, name] : *p.unix_users) {
      if (node.empty() || node.size() > 253 || HasControl(node)) {
        return Status::InvalidArgument("unix_users: bad node name '" + node + "'");
      }
      Status st = ValidateUnixUser(name);
      if (!st.ok()) return st.WithContext("unix_users." + node);
    }
  }
  if (p.password && (p.password->size() < kMinPassword || p.password->size() > kMaxPassword)) {
    return Status::InvalidArgument("password must be 8 to 1024 bytes long");
  }
  return Status::Ok();
}

// Replaces the user's group memberships. NotFound naming an unknown group.
Status SetGroups(Db& db, int64_t user_id, const std::vector<std::string>& groups) {
  ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM group_members WHERE user_id = ?1"));
  RETURN_IF_ERROR(del.Bind(1, user_id).Run());
  for (const auto& name : groups) {
    ASSIGN_OR_RETURN(Stmt find, db.Prepare("SELECT id FROM groups WHERE name = ?1"));
    find.Bind(1, name);
    ASSIGN_OR_RETURN(bool row, find.Step());
    if (!row) return Status::NotFound("group '" + name + "' not found");
    const int64_t gid = find.Int(0);
    ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT OR IGNORE INTO group_members (group_id, "
                                          "user_id) VALUES (?1, ?2)"));
    RETURN_IF_ERROR(ins.Bind(1, gid).Bind(2, user_id).Run());
  }
  return Status::Ok();
}

std::string UnixUsersJson(const std::map<std::string, std::string>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j.dump();
}

}  // namespace

const char* RoleName(Role role) { return role == Role::kAdmin ? "admin" : "user"; }

Result<Role> ParseRole(const std::string& text) {
  if (text == "admin") return Role::kAdmin;
  if (text == "user") return Role::kUser;
  return Status::InvalidArgument("role must be 'admin' or 'user', not '" + text + "'");
}

const std::string& User::UnixUserOn(const std::string& node) const {
  auto it = unix_users.find(node);
  if (it != unix_users.end()) return it->second;
  return unix_user.empty() ? username : unix_user;
}

Status ValidateGroupName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= kMaxGroupName;
  for (char c : name) ok = ok && (IsLowerAlnum(c) || c == '_' || c == '-' || c == '.');
  if (!ok) {
    return Status::InvalidArgument("group name '" + name.substr(0, 80) +
                                   "' must be 1-64 lower-case letters, digits, '_', '-', '.'");
  }
  return Status::Ok();
}

Status ValidateUsername(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 32 &&
            ((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_');
  for (char c : name) ok = ok && (IsLowerAlnum(c) || c == '_' || c == '.' || c == '-');
  if (!ok) {
    return Status::InvalidArgument("username '" + name.substr(0, 64) +
                                   "' must be 1-32 characters: a lower-case letter or '_', then "
                                   "lower-case letters, digits, '_', '.' or '-'");
  }
  return Status::Ok();
}

Status ValidateEmail(const std::string& email) {
  if (email.empty()) return Status::Ok();
  const auto at = email.find('@');
  bool ok = email.size() <= kMaxEmail && at != std::string::npos && at > 0 &&
            at + 1 < email.size() && email.find('@', at + 1) == std::string::npos &&
            !HasControl(email);
  for (char c : email) ok = ok && !std::isspace(static_cast<unsigned char>(c)) && c != '<' &&
                            c != '>' && c != ',' && c != '"';
  if (!ok) return Status::InvalidArgument("email '" + email.substr(0, 64) + "' is not valid");
  return Status::Ok();
}

Status ValidateUnixUser(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 32 && name[0] != '-';
  for (char c : name) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-');
  }
  if (!ok) {
    return Status::InvalidArgument("unix account name '" + name.substr(0, 64) +
                                   "' is not valid (1-32 letters, digits, '_', '.', '-')");
  }
  return Status::Ok();
}

Accounts::Accounts(store::Store* store, std::string key, std::string hash_cost)
    : store_(store), key_(std::move(key)), hash_cost_(std::move(hash_cost)) {
  if (sodium_init() < 0) ROTA_LOG(ERROR) << "libsodium failed to initialise";
}

Result<std::string> Accounts::HashPassword(const std::string& password) const {
  unsigned long long ops = crypto_pwhash_OPSLIMIT_INTERACTIVE;
  size_t mem = crypto_pwhash_MEMLIMIT_INTERACTIVE;
  if (hash_cost_ == "moderate") {
    ops = crypto_pwhash_OPSLIMIT_MODERATE;
    mem = crypto_pwhash_MEMLIMIT_MODERATE;
  } else if (hash_cost_ == "min") {
    ops = crypto_pwhash_OPSLIMIT_MIN;
    mem = crypto_pwhash_MEMLIMIT_MIN;
  }
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str_alg(out, password.data(), password.size(), ops, mem,
                            crypto_pwhash_ALG_ARGON2ID13) != 0) {
    return Status::ResourceExhausted("cannot hash password (out of memory)");
  }
  return std::string(out);
}

std::string Accounts::Mac(const std::string& secret) const {
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, reinterpret_cast<const unsigned char*>(key_.data()),
                              key_.size());
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(secret.data()),
                                secret.size());
  crypto_auth_hmacsha256_final(&st, mac);
  return ToHex(mac, sizeof mac);
}

Result<User> Accounts::CreateUser(const UserPatch& patch, int64_t now_ms) {
  if (!patch.username) return Status::InvalidArgument("username is required");
  RETURN_IF_ERROR(ValidatePatch(patch));
  std::optional<std::string> hash;
  if (patch.password) {
    ASSIGN_OR_RETURN(std::string h, HashPassword(*patch.password));
    hash = std::move(h);
  }
  int64_t id = 0;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt dup, db.Prepare("SELECT 1 FROM users WHERE username = ?1"));
    dup.Bind(1, *patch.username);
    ASSIGN_OR_RETURN(bool exists, dup.Step());
    if (exists) return Status::Conflict("user '" + *patch.username + "' already exists");
    ASSIGN_OR_RETURN(
        Stmt ins,
        db.Prepare("INSERT INTO users (username, display_name, email, unix_user, "
                   "unix_users_json, role, password_hash, disabled, created_ms, updated_ms) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) RETURNING id"));
    ins.Bind(1, *patch.username)
        .Bind(2, patch.display_name.value_or(""))
        .Bind(3, patch.email.value_or(""))
        .Bind(4, patch.unix_user.value_or(""))
        .Bind(5, UnixUsersJson(patch.unix_users.value_or(std::map<std::string, std::string>{})))
        .Bind(6, std::string(RoleName(patch.role.value_or(Role::kUser))))
        .Bind(7, hash)
        .Bind(8, int64_t{patch.disabled.value_or(false) ? 1 : 0})
        .Bind(9, now_ms);
    ASSIGN_OR_RETURN(bool row, ins.Step());
    if (!row) return Status::Internal("insert of user returned no id");
    id = ins.Int(0);
    RETURN_IF_ERROR(ins.Run());
    if (patch.groups) RETURN_IF_ERROR(SetGroups(db, id, *patch.groups));
    return Status::Ok();
  }));
  return GetUser(id);
}

Result<User> Accounts::UpdateUser(int64_t id, const UserPatch& patch, int64_t now_ms) {
  if (patch.username) return Status::InvalidArgument("username cannot be changed");
  RETURN_IF_ERROR(ValidatePatch(patch));
  std::optional<std::string> hash;
  if (patch.password) {
    ASSIGN_OR_RETURN(std::string h, HashPassword(*patch.password));
    hash = std::move(h);
  }
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(User cur, QueryOneUser(db, "id = ?1", std::to_string(id),
                                            "user " + std::to_string(id)));
    const Role new_role = patch.role.value_or(cur.role);
    const bool new_disabled = patch.disabled.value_or(cur.disabled);
    if (cur.role == Role::kAdmin && (new_role != Role::kAdmin || new_disabled)) {
      ASSIGN_OR_RETURN(int64_t admins,
                       db.QueryInt("SELECT count(*) FROM users WHERE role = 'admin' AND "
                                   "disabled = 0"));
      if (admins <= 1) {
        return Status::Conflict("cannot demote or disable the last enabled admin");
      }
    }
    ASSIGN_OR_RETURN(
        Stmt up, db.Prepare("UPDATE users SET display_name = ?2, email = ?3, unix_user = ?4, "
                            "unix_users_json = ?5, role = ?6, disabled = ?7, updated_ms = ?8, "
                            "password_hash = coalesce(?9, password_hash) WHERE id = ?1"));
    up.Bind(1, id)
        .Bind(2, patch.display_name.value_or(cur.display_name))
        .Bind(3, patch.email.value_or(cur.email))
        .Bind(4, patch.unix_user.value_or(cur.unix_user))
        .Bind(5, UnixUsersJson(patch.unix_users.value_or(cur.unix_users)))
        .Bind(6, std::string(RoleName(new_role)))
        .Bind(7, int64_t{new_disabled ? 1 : 0})
        .Bind(8, now_ms)
        .Bind(9, hash);
    RETURN_IF_ERROR(up.Run());
    if (patch.groups) RETURN_IF_ERROR(SetGroups(db, id, *patch.groups));
    if (new_disabled || patch.password) {
      // A disabled user or a changed password ends every session.
      ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM tokens WHERE user_id = ?1 AND kind = "
                                            "'session'"));
      RETURN_IF_ERROR(del.Bind(1, id).Run());
    }
    return Status::Ok();
  }));
  InvalidateTokenCache();
  return GetUser(id);
}

Status Accounts::DeleteUser(int64_t id) {
  Status st = store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(User cur, QueryOneUser(db, "id = ?1", std::to_string(id),
                                            "user " + std::to_string(id)));
    ASSIGN_OR_RETURN(Stmt owns, db.Prepare("SELECT count(*) FROM reservations WHERE owner_id = ?1"));
    owns.Bind(1, id);
    ASSIGN_OR_RETURN(bool row, owns.Step());
    if (row && owns.Int(0) > 0) {
      return Status::Conflict("user '" + cur.username +
                                        "' owns reservations; disable the account instead");
    }
    if (cur.role == Role::kAdmin && !cur.disabled) {
      ASSIGN_OR_RETURN(int64_t admins,
                       db.QueryInt("SELECT count(*) FROM users WHERE role = 'admin' AND "
                                   "disabled = 0"));
      if (admins <= 1) return Status::Conflict("cannot delete the last enabled admin");
    }
    ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM users WHERE id = ?1"));
    return del.Bind(1, id).Run();
  });
  InvalidateTokenCache();
  return st;
}

Result<User> Accounts::GetUser(int64_t id) {
  Result<User> out = Status::Internal("unset");
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    out = QueryOneUser(db, "id = ?1", std::to_string(id), "user " + std::to_string(id));
    return Status::Ok();
  }));
  return out;
}

Result<User> Accounts::FindUser(const std::string& username) {
  Result<User> out = Status::Internal("unset");
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    out = QueryOneUser(db, "username = ?1", username, "user '" + username + "'");
    return Status::Ok();
  }));
  return out;
}

Result<std::map<std::string, std::string>> Accounts::PrimaryGroups() {
  std::map<std::string, std::string> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT u.username, min(g.name) FROM users u "
                                        "JOIN group_members m ON m.user_id = u.id "
                                        "JOIN groups g ON g.id = m.group_id GROUP BY u.id"));
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      out[s.Text(0)] = s.Text(1);
    }
    return Status::Ok();
  }));
  return out;
}

Result<User> Accounts::FindByUnixUser(const std::string& node, const std::string& unix_user) {
  ASSIGN_OR_RETURN(std::vector<User> users, ListUsers());
  for (auto& u : users) {
    if (!u.disabled && u.UnixUserOn(node) == unix_user) return std::move(u);
  }
  return Status::NotFound("no rota user has Unix account '" + unix_user + "' on " + node);
}

Result<std::vector<User>> Accounts::ListUsers() {
  std::vector<User> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kUserColumns +
                                        " FROM users ORDER BY username"));
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      ASSIGN_OR_RETURN(User u, ReadUser(db, s));
      out.push_back(std::move(u));
    }
    return Status::Ok();
  }));
  return out;
}

Result<int64_t> Accounts::CountUsers() {
  int64_t n = 0;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(n, db.QueryInt("SELECT count(*) FROM users"));
    return Status::Ok();
  }));
  return n;
}

Result<User> Accounts::CheckPassword(const std::string& username, const std::string& password) {
  const Status refused = Status::Unauthenticated("invalid username or password");
  if (password.size() > kMaxPassword) return refused;
  std::string hash;
  int64_t id = 0;
  bool disabled = false;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, coalesce(password_hash, ''), disabled FROM "
                                        "users WHERE username = ?1"));
    s.Bind(1, username);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) {
      id = s.Int(0);
      hash = s.Text(1);
      disabled = s.Int(2) != 0;
    }
    return Status::Ok();
  }));
  if (hash.empty()) {
    // Spend the time of a verification anyway, so that timing does not reveal
    // which usernames exist.
    static const std::string dummy = *HashPassword("rota-timing-equaliser");
    if (crypto_pwhash_str_verify(dummy.c_str(), password.data(), password.size()) == 0) {
      ROTA_LOG(DEBUG) << "timing equaliser matched";
    }
    return refused;
  }
  if (crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) != 0) {
    return refused;
  }
  if (disabled) return refused;
  return GetUser(id);
}

Result<Group> Accounts::CreateGroup(const std::string& name, const std::string& description,
                                    int64_t now_ms) {
  RETURN_IF_ERROR(ValidateGroupName(name));
  if (description.size() > kMaxDescription || HasControl(description)) {
    return Status::InvalidArgument("description must be at most 1000 bytes without control "
                                   "characters");
  }
  Group g;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt dup, db.Prepare("SELECT 1 FROM groups WHERE name = ?1"));
    dup.Bind(1, name);
    ASSIGN_OR_RETURN(bool exists, dup.Step());
    if (exists) return Status::Conflict("group '" + name + "' already exists");
    ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO groups (name, description, created_ms) "
                                          "VALUES (?1, ?2, ?3) RETURNING id"));
    ins.Bind(1, name).Bind(2, description).Bind(3, now_ms);
    ASSIGN_OR_RETURN(bool row, ins.Step());
    if (!row) return Status::Internal("insert of group returned no id");
    g.id = ins.Int(0);
    return ins.Run();
  }));
  g.name = name;
  g.description = description;
  g.created_ms = now_ms;
  return g;
}

Status Accounts::DeleteGroup(const std::string& name) {
  Status st = store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM groups WHERE name = ?1"));
    RETURN_IF_ERROR(del.Bind(1, name).Run());
    if (db.Changes() == 0) return Status::NotFound("group '" + name + "' not found");
    return Status::Ok();
  });
  InvalidateTokenCache();
  return st;
}

Result<std::vector<Group>> Accounts::ListGroups() {
  std::vector<Group> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, name, description, created_ms FROM groups "
                                        "ORDER BY name"));
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      Group g{s.Int(0), s.Text(1), s.Text(2), {}, s.Int(3)};
      ASSIGN_OR_RETURN(Stmt m, db.Prepare("SELECT u.username FROM users u JOIN group_members gm "
                                          "ON gm.user_id = u.id WHERE gm.group_id = ?1 ORDER BY "
                                          "u.username"));
      m.Bind(1, g.id);
      while (true) {
        ASSIGN_OR_RETURN(bool mrow, m.Step());
        if (!mrow) break;
        g.members.push_back(m.Text(0));
      }
      out.push_back(std::move(g));
    }
    return Status::Ok();
  }));
  return out;
}

Result<std::pair<std::string, TokenInfo>> Accounts::IssueToken(int64_t user_id,
                                                               const std::string& kind,
                                                               const std::string& name,
                                                               int64_t ttl_ms, int64_t now_ms) {
  if (kind != "session" && kind != "api") {
    return Status::InvalidArgument("token kind must be 'session' or 'api'");
  }
  if (name.size() > kMaxTokenName || HasControl(name)) {
    return Status::InvalidArgument("token name must be at most 100 bytes without control "
                                   "characters");
  }
  if (ttl_ms < 0) return Status::InvalidArgument("token lifetime must not be negative");
  ASSIGN_OR_RETURN(std::string id, RandomHex(kTokenIdHex / 2));
  ASSIGN_OR_RETURN(std::string secret, RandomHex(kTokenSecretHex / 2));
  TokenInfo info;
  info.id = id;
  info.user_id = user_id;
  info.kind = kind;
  info.name = name;
  info.created_ms = now_ms;
  if (ttl_ms > 0) info.expires_ms = now_ms + ttl_ms;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO tokens (id, user_id, kind, name, "
                                          "secret_mac, created_ms, expires_ms) VALUES (?1, ?2, "
                                          "?3, ?4, ?5, ?6, ?7)"));
    ins.Bind(1, id).Bind(2, user_id).Bind(3, kind).Bind(4, name).Bind(5, Mac(secret));
    ins.Bind(6, now_ms).Bind(7, info.expires_ms);
    return ins.Run();
  }));
  return std::make_pair(std::string(kTokenPrefix) + id + "_" + secret, info);
}

void Accounts::InvalidateTokenCache() {
  MutexLock lock(&cache_mu_);
  ++cache_generation_;
  token_cache_.clear();
}

Result<User> Accounts::VerifyToken(const std::string& token, int64_t now_ms) {
  const Status refused = Status::Unauthenticated("invalid, expired or revoked token");
  const size_t prefix = std::string_view(kTokenPrefix).size();
  if (token.size() != prefix + kTokenIdHex + 1 + kTokenSecretHex ||
      token.compare(0, prefix, kTokenPrefix) != 0 || token[prefix + kTokenIdHex] != '_') {
    return Status::Unauthenticated("malformed token");
  }
  const std::string id = token.substr(prefix, kTokenIdHex);
  const std::string secret = token.substr(prefix + kTokenIdHex + 1);
  if (!IsHex(id) || !IsHex(secret)) return Status::Unauthenticated("malformed token");
  const std::string want = Mac(secret);
  const int64_t mono = RealClock::Get().MonotonicMs();
  CachedToken entry;
  bool cached = false;
  uint64_t generation = 0;
  {
    MutexLock lock(&cache_mu_);
    generation = cache_generation_;
    auto it = token_cache_.find(id);
    if (it != token_cache_.end() && mono - it->second.cached_at_mono_ms < kTokenCacheMs) {
      entry = it->second;
      cached = true;
    }
  }
  if (!cached) {
    bool found = false;
    RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
      ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT user_id, secret_mac, expires_ms, last_used_ms "
                                          "FROM tokens WHERE id = ?1"));
      s.Bind(1, id);
      ASSIGN_OR_RETURN(found, s.Step());
      if (found) {
        entry.user.id = s.Int(0);
        entry.mac = s.Text(1);
        entry.expires_ms = s.OptInt(2);
        entry.last_used_ms = s.OptInt(3).value_or(0);
      }
      return Status::Ok();
    }));
    if (!found) return refused;
    auto user = GetUser(entry.user.id);
    if (!user.ok()) return refused;
    entry.user = std::move(user).value();
    entry.cached_at_mono_ms = mono;
  }
  if (entry.mac.size() != want.size() ||
      sodium_memcmp(entry.mac.data(), want.data(), want.size()) != 0) {
    return refused;  // a forged secret is never cached: only store rows are
  }
  if (entry.expires_ms && *entry.expires_ms <= now_ms) return refused;
  if (entry.user.disabled) return refused;
  const bool record_use = now_ms - entry.last_used_ms >= 60'000;
  if (record_use) {
    Status st = store_->Write([&](Db& db) -> Status {
      ASSIGN_OR_RETURN(Stmt up, db.Prepare("UPDATE tokens SET last_used_ms = ?2 WHERE id = ?1"));
      return up.Bind(1, id).Bind(2, now_ms).Run();
    });
    if (!st.ok()) ROTA_LOG(WARNING) << "cannot record token use: " << st.message();
    entry.last_used_ms = now_ms;
  }
  if (!cached || record_use) {
    MutexLock lock(&cache_mu_);
    // Not when users, groups or tokens changed since the read: it may be stale.
    if (generation == cache_generation_) {
      if (token_cache_.size() >= kTokenCacheMax) token_cache_.clear();
      token_cache_[id] = entry;
    }
  }
  return entry.user;
}

Result<std::vector<TokenInfo>> Accounts::ListTokens(int64_t user_id) {
  std::vector<TokenInfo> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, user_id, kind, name, created_ms, expires_ms, "
                                        "last_used_ms FROM tokens WHERE user_id = ?1 ORDER BY "
                                        "created_ms"));
    s.Bind(1, user_id);
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      out.push_back(TokenInfo{s.Text(0), s.Int(1), s.Text(2), s.Text(3), s.Int(4), s.OptInt(5),
                              s.OptInt(6)});
    }
    return Status::Ok();
  }));
  return out;
}

Status Accounts::RevokeToken(int64_t user_id, const std::string& token_id) {
  Status st = store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM tokens WHERE id = ?1 AND (?2 = 0 OR "
                                          "user_id = ?2)"));
    RETURN_IF_ERROR(del.Bind(1, token_id).Bind(2, user_id).Run());
    if (db.Changes() == 0) return Status::NotFound("token '" + token_id + "' not found");
    return Status::Ok();
  });
  InvalidateTokenCache();
  return st;
}

Result<std::string> LoadOrCreateAuthKey(const std::string& data_dir) {
  const std::string path = data_dir + "/auth-key";
  auto existing = ReadFile(path);
  if (existing.ok()) {
    std::string key(Trim(*existing));
    if (key.size() < 64 || !IsHex(key)) {
      return Status::InvalidArgument(path + " must hold at least 32 bytes as lower-case hex");
    }
    return key;
  }
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  ASSIGN_OR_RETURN(std::string key, RandomHex(32));
  RETURN_IF_ERROR(WriteFileAtomic(path, key + "\n", 0600));
  ROTA_LOG(INFO) << "generated the token signing key in " << path;
  return key;
}

}  // namespace rota::server
