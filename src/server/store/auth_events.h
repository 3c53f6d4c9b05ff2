#pragma once
// SQL of the accounts audit trail (table auth_events, schema v15): sign-ins refused by
// throttling, password changes and resets. server/audit.cc reads and writes it. Called
// inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct AuthEventRow {
  int64_t id = 0;
  int64_t t_ms = 0;
  std::string action;    // "login_throttled", "password_changed", "password_reset"
  std::string address;   // the client's address key ("" when not from a request)
  std::string username;  // the account concerned (as typed for a sign-in)
  std::string actor;     // who did it ("" for anonymous sign-ins)
  std::string detail;
};

// The newest rows kept; older ones are dropped as new ones come.
inline constexpr int64_t kMaxAuthEvents = 100'000;

// Appends `row` (its id is ignored) and drops rows beyond kMaxAuthEvents.
Status InsertAuthEvent(Db& db, const AuthEventRow& row);
// Newest first: rows with id < before_id (0: from the newest), at most `limit`.
Result<std::vector<AuthEventRow>> ListAuthEvents(Db& db, int64_t before_id, int limit);

}  // namespace rota::store
