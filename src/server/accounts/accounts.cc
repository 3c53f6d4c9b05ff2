#include "server/accounts/accounts.h"

#include <sodium.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/file_util.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "server/store/accounts.h"

namespace rota::server {
namespace {

using store::Db;

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

Result<User> UserFromRow(const store::UserRow& r) {
  User u;
  u.id = r.id;
  u.username = r.username;
  u.display_name = r.display_name;
  u.email = r.email;
  u.unix_user = r.unix_user;
  try {
    auto j = nlohmann::json::parse(r.unix_users_json);
    for (auto& [node, name] : j.items()) u.unix_users[node] = name.get<std::string>();
  } catch (const std::exception& e) {
    return Status::IoError("user " + u.username + ": stored unix_users is unreadable: " + e.what());
  }
  ASSIGN_OR_RETURN(u.role, ParseRole(r.role));
  u.has_password = r.has_password;
  u.disabled = r.disabled;
  u.created_ms = r.created_ms;
  u.updated_ms = r.updated_ms;
  u.groups = r.groups;
  return u;
}

// User `id`; NotFound naming it.
Result<User> UserById(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(auto row, store::FindUserById(db, id));
  if (!row) return Status::NotFound("user " + std::to_string(id) + " not found");
  return UserFromRow(*row);
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

Accounts::Accounts(store::Store* store, std::string key, std::string hash_cost, TokenLimits limits)
    : store_(store), key_(std::move(key)), hash_cost_(std::move(hash_cost)), limits_(limits) {
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
  store::UserRow row;
  row.username = *patch.username;
  row.display_name = patch.display_name.value_or("");
  row.email = patch.email.value_or("");
  row.unix_user = patch.unix_user.value_or("");
  row.unix_users_json = UnixUsersJson(patch.unix_users.value_or(std::map<std::string, std::string>{}));
  row.role = RoleName(patch.role.value_or(Role::kUser));
  row.password_hash = hash;
  row.disabled = patch.disabled.value_or(false);
  row.created_ms = row.updated_ms = now_ms;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto dup, store::FindUserByName(db, row.username));
    if (dup) return Status::Conflict("user '" + row.username + "' already exists");
    ASSIGN_OR_RETURN(id, store::InsertUser(db, row));
    if (patch.groups) RETURN_IF_ERROR(store::SetUserGroups(db, id, *patch.groups));
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
    ASSIGN_OR_RETURN(User cur, UserById(db, id));
    const Role new_role = patch.role.value_or(cur.role);
    const bool new_disabled = patch.disabled.value_or(cur.disabled);
    if (cur.role == Role::kAdmin && (new_role != Role::kAdmin || new_disabled)) {
      ASSIGN_OR_RETURN(int64_t admins, store::CountEnabledAdmins(db));
      if (admins <= 1) {
        return Status::Conflict("cannot demote or disable the last enabled admin");
      }
    }
    store::UserRow row;
    row.id = id;
    row.display_name = patch.display_name.value_or(cur.display_name);
    row.email = patch.email.value_or(cur.email);
    row.unix_user = patch.unix_user.value_or(cur.unix_user);
    row.unix_users_json = UnixUsersJson(patch.unix_users.value_or(cur.unix_users));
    row.role = RoleName(new_role);
    row.disabled = new_disabled;
    row.updated_ms = now_ms;
    row.password_hash = hash;
    RETURN_IF_ERROR(store::UpdateUser(db, row));
    if (patch.groups) RETURN_IF_ERROR(store::SetUserGroups(db, id, *patch.groups));
    // A disabled user ends every session; a changed password every token, API tokens
    // too (whoever knew the old password may have made some).
    if (patch.password) {
      RETURN_IF_ERROR(store::DeleteTokensOf(db, id).status());
    } else if (new_disabled) {
      RETURN_IF_ERROR(store::DeleteSessions(db, id));
    }
    return Status::Ok();
  }));
  InvalidateTokenCache();
  return GetUser(id);
}

Status Accounts::DeleteUser(int64_t id) {
  Status st = store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(User cur, UserById(db, id));
    ASSIGN_OR_RETURN(int64_t owns, store::CountReservationsOf(db, id));
    if (owns > 0) {
      return Status::Conflict("user '" + cur.username +
                                        "' owns reservations; disable the account instead");
    }
    ASSIGN_OR_RETURN(int64_t jobs, store::CountJobsOf(db, id));
    if (jobs > 0) {
      return Status::Conflict("user '" + cur.username + "' owns " + std::to_string(jobs) +
                              (jobs == 1 ? " job" : " jobs") + " (their history stays); disable the account instead");
    }
    if (cur.role == Role::kAdmin && !cur.disabled) {
      ASSIGN_OR_RETURN(int64_t admins, store::CountEnabledAdmins(db));
      if (admins <= 1) return Status::Conflict("cannot delete the last enabled admin");
    }
    return store::DeleteUser(db, id);
  });
  InvalidateTokenCache();
  return st;
}

Result<User> Accounts::GetUser(int64_t id) {
  Result<User> out = Status::Internal("unset");
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    out = UserById(db, id);
    return Status::Ok();
  }));
  return out;
}

Result<User> Accounts::FindUser(const std::string& username) {
  Result<User> out = Status::Internal("unset");
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto row, store::FindUserByName(db, username));
    out = row ? UserFromRow(*row) : Status::NotFound("user '" + username + "' not found");
    return Status::Ok();
  }));
  return out;
}

Result<std::map<std::string, std::string>> Accounts::PrimaryGroups() {
  std::map<std::string, std::string> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::PrimaryGroups(db));
    return Status::Ok();
  }));
  return out;
}

Result<store::QueueMembership> Accounts::QueueMembership() {
  store::QueueMembership out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::ReadQueueMembership(db));
    return Status::Ok();
  }));
  return out;
}

Result<std::set<std::string>> Accounts::DisabledUsers() {
  std::set<std::string> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::DisabledUsernames(db));
    return Status::Ok();
  }));
  return out;
}

Result<User> Accounts::FindByUnixUser(const std::string& node, const std::string& unix_user) {
  ASSIGN_OR_RETURN(std::vector<User> users, ListUsers());
  std::vector<User> found;
  for (auto& u : users) {
    if (!u.disabled && u.UnixUserOn(node) == unix_user) found.push_back(std::move(u));
  }
  if (found.size() == 1) return std::move(found.front());
  if (found.empty()) return Status::NotFound("no rota user has Unix account '" + unix_user + "' on " + node);
  // Shared: which of them ran a process is unknown, so none is blamed.
  std::string names;
  for (const auto& u : found) names += (names.empty() ? "" : ", ") + u.username;
  return Status::NotFound("Unix account '" + unix_user + "' on " + node + " is shared by " + names);
}

Result<std::vector<User>> Accounts::ListUsers() {
  std::vector<User> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto rows, store::ListUserRows(db));
    for (const auto& r : rows) {
      ASSIGN_OR_RETURN(User u, UserFromRow(r));
      out.push_back(std::move(u));
    }
    return Status::Ok();
  }));
  return out;
}

Result<int64_t> Accounts::CountUsers() {
  int64_t n = 0;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(n, store::CountUsers(db));
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
    ASSIGN_OR_RETURN(auto row, store::PasswordOf(db, username));
    if (row) {
      id = row->user_id;
      hash = row->hash;
      disabled = row->disabled;
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
    ASSIGN_OR_RETURN(bool exists, store::GroupExists(db, name));
    if (exists) return Status::Conflict("group '" + name + "' already exists");
    ASSIGN_OR_RETURN(g.id, store::InsertGroup(db, name, description, now_ms));
    return Status::Ok();
  }));
  g.name = name;
  g.description = description;
  g.created_ms = now_ms;
  return g;
}

Status Accounts::DeleteGroup(const std::string& name) {
  Status st = store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(bool deleted, store::DeleteGroup(db, name));
    if (!deleted) return Status::NotFound("group '" + name + "' not found");
    return Status::Ok();
  });
  InvalidateTokenCache();
  return st;
}

Result<std::vector<Group>> Accounts::ListGroups() {
  std::vector<Group> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto rows, store::ListGroupRows(db));
    for (auto& r : rows) out.push_back(Group{r.id, r.name, r.description, std::move(r.members), r.created_ms});
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
  const int64_t max_ms = kind == "api" ? limits_.api_max_ms : limits_.session_max_ms;
  if (ttl_ms > max_ms) {
    return Status::InvalidArgument(
        "token lifetime " + FormatExactDuration(ttl_ms) + " is longer than the maximum of " +
        FormatExactDuration(max_ms) + (kind == "api" ? " (api_token_max_ttl)" : " (session_ttl)"));
  }
  if (ttl_ms == 0) ttl_ms = max_ms;
  ASSIGN_OR_RETURN(std::string id, RandomHex(kTokenIdHex / 2));
  ASSIGN_OR_RETURN(std::string secret, RandomHex(kTokenSecretHex / 2));
  TokenInfo info;
  info.id = id;
  info.user_id = user_id;
  info.kind = kind;
  info.name = name;
  info.created_ms = now_ms;
  info.expires_ms = now_ms + ttl_ms;
  const store::TokenRow row{id, user_id, kind, name, Mac(secret), now_ms, info.expires_ms, std::nullopt};
  RETURN_IF_ERROR(store_->Write([&](Db& db) { return store::InsertToken(db, row); }));
  return std::make_pair(std::string(kTokenPrefix) + id + "_" + secret, info);
}

int64_t Accounts::ExpiryOf(const std::string& kind, int64_t created_ms,
                           std::optional<int64_t> expires_ms) const {
  const int64_t max_ms = kind == "api" ? limits_.api_max_ms : limits_.session_max_ms;
  const int64_t longest = created_ms + max_ms;
  return expires_ms ? std::min(*expires_ms, longest) : longest;
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
      ASSIGN_OR_RETURN(auto row, store::GetToken(db, id));
      found = row.has_value();
      if (found) {
        entry.user.id = row->user_id;
        entry.mac = row->secret_mac;
        entry.expires_ms = ExpiryOf(row->kind, row->created_ms, row->expires_ms);
        entry.last_used_ms = row->last_used_ms.value_or(0);
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
  if (entry.expires_ms <= now_ms) return refused;
  if (entry.user.disabled) return refused;
  const bool record_use = now_ms - entry.last_used_ms >= 60'000;
  if (record_use) {
    Status st = store_->Write([&](Db& db) { return store::TouchToken(db, id, now_ms); });
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
    ASSIGN_OR_RETURN(auto rows, store::ListTokenRows(db, user_id));
    for (auto& r : rows) {
      out.push_back(TokenInfo{r.id, r.user_id, r.kind, r.name, r.created_ms,
                              ExpiryOf(r.kind, r.created_ms, r.expires_ms), r.last_used_ms});
    }
    return Status::Ok();
  }));
  return out;
}

Status Accounts::RevokeToken(int64_t user_id, const std::string& token_id) {
  Status st = store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(bool deleted, store::DeleteToken(db, token_id, user_id));
    if (!deleted) return Status::NotFound("token '" + token_id + "' not found");
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
