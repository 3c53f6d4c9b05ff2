#pragma once
// Accounts: users, groups and tokens, kept in the store (tables users, groups,
// group_members, tokens). Passwords are argon2id hashes (libsodium); tokens are
// "rota_<id>_<secret>" where only a keyed MAC of the secret is stored, so the
// database alone cannot mint or verify a token.
//
// Thread-safe: every method goes through store::Store::Read / Write.

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "server/store/accounts.h"
#include "server/store/store.h"

namespace rota::server {

enum class Role { kUser, kAdmin };
const char* RoleName(Role role);                     // "user", "admin"
Result<Role> ParseRole(const std::string& text);     // InvalidArgument otherwise

struct User {
  int64_t id = 0;
  std::string username;      // [a-z_][a-z0-9_.-]{0,31}
  std::string display_name;  // free text, <= 200 bytes
  std::string email;         // "" or local@domain
  // Unix account on every node ("" = same as username), and per-node overrides.
  std::string unix_user;
  std::map<std::string, std::string> unix_users;  // node -> unix account
  Role role = Role::kUser;
  std::vector<std::string> groups;  // group names, sorted
  bool disabled = false;
  bool has_password = false;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;

  // The Unix account this user has on `node`.
  const std::string& UnixUserOn(const std::string& node) const;
};

// Fields a create/update may set; absent fields keep their value (update) or
// default (create).
struct UserPatch {
  std::optional<std::string> username;  // create only
  std::optional<std::string> display_name;
  std::optional<std::string> email;
  std::optional<std::string> unix_user;
  std::optional<std::map<std::string, std::string>> unix_users;
  std::optional<Role> role;
  std::optional<std::string> password;  // 8..1024 bytes
  std::optional<bool> disabled;
  std::optional<std::vector<std::string>> groups;  // must exist
};

struct Group {
  int64_t id = 0;
  std::string name;
  std::string description;
  std::vector<std::string> members;  // usernames, sorted
  int64_t created_ms = 0;
};

struct TokenInfo {
  std::string id;  // public part, shown in lists
  int64_t user_id = 0;
  std::string kind;  // "session" or "api"
  std::string name;
  int64_t created_ms = 0;
  std::optional<int64_t> expires_ms;
  std::optional<int64_t> last_used_ms;
};

// Validation shared by the API and the store (InvalidArgument naming the field).
Status ValidateUsername(const std::string& name);
Status ValidateGroupName(const std::string& name);
Status ValidateEmail(const std::string& email);
Status ValidateUnixUser(const std::string& name);

// The longest a token lives, by kind. Applied when a token is issued (a longer
// lifetime is refused, none asked for gets the maximum) and when one is presented (a
// token older than its kind's maximum is expired, whatever it was issued with, so that
// lowering a maximum shortens tokens issued before).
struct TokenLimits {
  int64_t api_max_ms = 90LL * 86'400'000;      // api_token_max_ttl
  int64_t session_max_ms = 12LL * 3'600'000;   // session_ttl
};

class Accounts {
 public:
  // `key` (>= 32 bytes) keys the token MACs; `hash_cost` is "interactive"
  // (default; ~0.3 s per hash), "moderate" or "min" (tests only).
  // All pointers borrowed.
  Accounts(store::Store* store, std::string key, std::string hash_cost, TokenLimits limits = {});

  // ---- users ----
  // InvalidArgument for bad fields, Conflict when the username is taken.
  Result<User> CreateUser(const UserPatch& patch, int64_t now_ms);
  Result<User> UpdateUser(int64_t id, const UserPatch& patch, int64_t now_ms);
  // A new password ends every token of the user (sessions and API tokens); the
  // caller checks the current password first where one is needed (accounts_api.cc).
  // Deletes the user and its tokens. Conflict when it owns
  // reservations (disable it instead).
  Status DeleteUser(int64_t id);
  Result<User> GetUser(int64_t id);
  Result<User> FindUser(const std::string& username);
  // Every user's primary group (the first of its groups by name; users in no
  // group are absent), by username: one read (the scheduler's fair share and
  // group quotas).
  Result<std::map<std::string, std::string>> PrimaryGroups();
  // The usernames of disabled accounts (their pending jobs wait).
  Result<std::set<std::string>> DisabledUsers();
  // Every user's groups and the admins: one read (whether a queue changed
  // since a job's submission still admits its owner).
  Result<store::QueueMembership> QueueMembership();
  // The enabled user whose Unix account on `node` is `unix_user`; NotFound when
  // none is, or several share it (which of them ran a process is unknown).
  Result<User> FindByUnixUser(const std::string& node, const std::string& unix_user);
  Result<std::vector<User>> ListUsers();
  Result<int64_t> CountUsers();
  // Checks a password. Unauthenticated ("invalid username or password") for an
  // unknown user, a wrong password or a disabled user.
  Result<User> CheckPassword(const std::string& username, const std::string& password);

  // ---- groups ----
  Result<Group> CreateGroup(const std::string& name, const std::string& description,
                            int64_t now_ms);
  Status DeleteGroup(const std::string& name);
  Result<std::vector<Group>> ListGroups();

  // ---- tokens ----
  // Issues a token for `user_id`; returns the full secret token (shown once)
  // and its info. `ttl_ms` 0: the maximum of its kind (TokenLimits); InvalidArgument
  // for a longer one.
  Result<std::pair<std::string, TokenInfo>> IssueToken(int64_t user_id, const std::string& kind,
                                                       const std::string& name, int64_t ttl_ms,
                                                       int64_t now_ms);
  // The user holding `token`. Unauthenticated for a malformed, unknown,
  // forged, expired or revoked token, or a disabled user. Verified tokens are
  // cached (every request carries one): a change to users, groups or tokens made
  // through this object drops the cache at once; entries also expire after
  // kTokenCacheMs, a bound for changes made to the store by anyone else.
  Result<User> VerifyToken(const std::string& token, int64_t now_ms);
  static constexpr int64_t kTokenCacheMs = 10'000;
  static constexpr size_t kTokenCacheMax = 4096;
  Result<std::vector<TokenInfo>> ListTokens(int64_t user_id);
  // NotFound if `token_id` is not a token of `user_id` (any user when user_id is 0).
  Status RevokeToken(int64_t user_id, const std::string& token_id);

 private:
  Result<std::string> HashPassword(const std::string& password) const;
  std::string Mac(const std::string& secret) const;
  // When a token of `kind` created at `created_ms` expires: the earlier of its own
  // expiry and its kind's maximum lifetime.
  int64_t ExpiryOf(const std::string& kind, int64_t created_ms,
                   std::optional<int64_t> expires_ms) const;

  struct CachedToken {
    std::string mac;
    User user;
    int64_t expires_ms = 0;  // ExpiryOf
    int64_t last_used_ms = 0;     // as recorded in the store
    int64_t cached_at_mono_ms = 0;
  };
  // Drops every cached token (after any change to users, groups or tokens).
  void InvalidateTokenCache();

  store::Store* const store_;
  const std::string key_;
  const std::string hash_cost_;
  const TokenLimits limits_;
  Mutex cache_mu_;
  std::unordered_map<std::string, CachedToken> token_cache_ ROTA_GUARDED_BY(cache_mu_);  // by token id
  uint64_t cache_generation_ ROTA_GUARDED_BY(cache_mu_) = 0;  // bumped by InvalidateTokenCache
};

// Loads <data_dir>/auth-key (32 random bytes, hex), creating it with mode 0600
// on first start.
Result<std::string> LoadOrCreateAuthKey(const std::string& data_dir);

}  // namespace rota::server
