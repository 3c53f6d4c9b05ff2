#pragma once
// SQL of accounts: users (table users), groups (groups, group_members) and
// API/session tokens (tokens). Rules (validation, the last admin, password
// hashing, token MACs) are the account service's (server/accounts/accounts.cc). Called
// inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct UserRow {
  int64_t id = 0;
  std::string username;
  std::string display_name;
  std::string email;
  std::string unix_user;
  std::string unix_users_json = "{}";
  std::string role = "user";  // "admin" or "user"
  // Written: the new hash (nullopt: none at insert, unchanged at update).
  std::optional<std::string> password_hash;
  bool has_password = false;  // read
  bool disabled = false;
  int64_t created_ms = 0, updated_ms = 0;
  std::vector<std::string> groups;  // read: group names, sorted
};

// nullopt when there is none.
Result<std::optional<UserRow>> FindUserById(Db& db, int64_t id);
Result<std::optional<UserRow>> FindUserByName(Db& db, const std::string& username);
// By username.
Result<std::vector<UserRow>> ListUserRows(Db& db);
Result<int64_t> CountUsers(Db& db);
Result<int64_t> CountEnabledAdmins(Db& db);
// How many reservations the user owns (any state).
Result<int64_t> CountReservationsOf(Db& db, int64_t user_id);
// How many jobs the user owns (any state: ended jobs keep their owner).
Result<int64_t> CountJobsOf(Db& db, int64_t user_id);
// Returns the new user's id; the username's unique key refuses a taken one.
Result<int64_t> InsertUser(Db& db, const UserRow& row);
// Writes display name, email, Unix users, role, disabled, updated_ms and the
// password hash when one is given.
Status UpdateUser(Db& db, const UserRow& row);
Status DeleteUser(Db& db, int64_t id);
// Replaces the user's memberships. NotFound naming an unknown group.
Status SetUserGroups(Db& db, int64_t user_id, const std::vector<std::string>& groups);
// The groups of a user, by name.
Result<std::vector<std::string>> UserGroups(Db& db, int64_t user_id);
// Each user's first group by name (users in no group are absent).
Result<std::map<std::string, std::string>> PrimaryGroups(Db& db);
// The usernames of disabled accounts.
Result<std::set<std::string>> DisabledUsernames(Db& db);
// Who a queue admits: every user's groups by name (users in no group are
// absent) and the usernames of admins.
struct QueueMembership {
  std::map<std::string, std::vector<std::string>> groups_of;
  std::set<std::string> admins;
};
Result<QueueMembership> ReadQueueMembership(Db& db);
// A user's email ("" when none or no such user).
Result<std::string> UserEmail(Db& db, int64_t user_id);

struct PasswordRow {
  int64_t user_id = 0;
  std::string hash;  // "" when the user has no password
  bool disabled = false;
};
// nullopt for an unknown username.
Result<std::optional<PasswordRow>> PasswordOf(Db& db, const std::string& username);

struct GroupRow {
  int64_t id = 0;
  std::string name;
  std::string description;
  std::vector<std::string> members;  // usernames, sorted
  int64_t created_ms = 0;
};

Result<bool> GroupExists(Db& db, const std::string& name);
// Returns the new group's id.
Result<int64_t> InsertGroup(Db& db, const std::string& name, const std::string& description,
                            int64_t created_ms);
// False when there was none.
Result<bool> DeleteGroup(Db& db, const std::string& name);
// By name, with members.
Result<std::vector<GroupRow>> ListGroupRows(Db& db);

struct TokenRow {
  std::string id;
  int64_t user_id = 0;
  std::string kind;  // "session" or "api"
  std::string name;
  std::string secret_mac;
  int64_t created_ms = 0;
  std::optional<int64_t> expires_ms;
  std::optional<int64_t> last_used_ms;
};

Status InsertToken(Db& db, const TokenRow& row);
// nullopt when there is none.
Result<std::optional<TokenRow>> GetToken(Db& db, const std::string& id);
Status TouchToken(Db& db, const std::string& id, int64_t now_ms);
// The user's tokens, oldest first (secret_mac not read).
Result<std::vector<TokenRow>> ListTokenRows(Db& db, int64_t user_id);
// Deletes token `id` (of `user_id`; 0: anyone's). False when there was none.
Result<bool> DeleteToken(Db& db, const std::string& id, int64_t user_id);
// Ends every session of the user.
Status DeleteSessions(Db& db, int64_t user_id);
// Deletes every token of the user (sessions and API tokens); returns how many.
Result<int64_t> DeleteTokensOf(Db& db, int64_t user_id);

}  // namespace rota::store
