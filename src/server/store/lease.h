#pragma once
// The leader lease and the servers registry in the store (schema version 17): the SQL of
// server/leadership/ (the rule itself is server/leadership/lease_rule.h; docs/design-store.md,
// "Leader lease"). PostgreSQL only: on SQLite there is one server, always the leader.
//
// Every time here is the database's clock (ms since the Unix epoch), read in the
// statement that uses it, so servers whose clocks disagree still agree on the lease.
//
// LeaseStore is not thread-safe: one thread (the leadership loop) owns it. CheckFence runs
// on the store writer's connection inside each of its write transactions.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "server/store/options.h"
#include "server/store/sql.h"

namespace rota::store {

// The lease row as read, with the database's clock at the read.
struct LeaseRecord {
  std::string holder;   // server id; "" never held
  std::string address;  // the holder's URL (where followers forward)
  int64_t epoch = 0;    // fencing token: +1 at each acquisition
  int64_t expires_at_ms = 0;
  int64_t renewed_at_ms = 0;
  int64_t db_now_ms = 0;
};

struct ServerRecord {
  std::string id;
  std::string address;
  std::string version;
  int64_t started_ms = 0;
  int64_t last_seen_ms = 0;  // the database's clock at its last registration renewal
};

class LeaseStore {
 public:
  // Connects to the PostgreSQL store `url` (a store URL, store_url.h) and brings its
  // schema to this rota's version (as Store::OpenUrl does). InvalidArgument for a SQLite
  // URL or a bad one; Unavailable when the server cannot be reached; Conflict for a
  // schema from a newer rota.
  static Result<std::unique_ptr<LeaseStore>> Open(const std::string& url, Clock& clock);
  ~LeaseStore();

  Result<LeaseRecord> Read();
  // Takes the lease for `holder` if its row is still `seen` (same epoch) and has expired
  // at the database's now: epoch + 1, expiry now + ttl_ms. Returns the new epoch, or
  // nullopt when another server renewed or took it first.
  Result<std::optional<int64_t>> TryAcquire(const LeaseRecord& seen, const std::string& holder,
                                            const std::string& address, int64_t ttl_ms);
  // Extends the lease `holder` holds at `epoch` to now + ttl_ms, if it has not expired.
  // false: it is lost (expired, or another server's).
  Result<bool> Renew(const std::string& holder, int64_t epoch, int64_t ttl_ms);
  // Ends the lease at once (a clean stop), if still `holder`'s at `epoch`.
  Status Release(const std::string& holder, int64_t epoch);
  // Creates or refreshes this server's registration (last_seen_ms = now).
  Status Register(const ServerRecord& server);
  // Registrations seen within `max_age_ms` of now, by id; others are deleted.
  Result<std::vector<ServerRecord>> ListServers(int64_t max_age_ms);

 private:
  explicit LeaseStore(Db db) : db_(std::move(db)) {}
  Db db_;
};

// The fence (run first in a leader's write transaction, on the writer's connection):
// OK when the lease row still names `fence` (holder and epoch) and has not expired at the
// transaction's start (now()); it is then locked FOR SHARE until the transaction ends, so
// no other server can acquire the lease before this transaction commits or rolls back.
// Unavailable ("this server no longer holds the leader lease") otherwise.
Status CheckFence(Db& db, const LeaseFence& fence);

}  // namespace rota::store
