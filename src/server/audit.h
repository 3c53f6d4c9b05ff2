#pragma once
// AuditLog: every GPU-usage violation and every enforcement step taken on it,
// kept in the store (tables violations and violation_events, schema v2); and the
// accounts trail (table auth_events, schema v15): sign-ins refused by throttling,
// password changes and resets.
//
// A violation row holds who (uid, Unix user, rota user), where (node, GPU),
// which reservation, the mode and dry-run flag, every process that took part
// (pid, start time, command), when it opened and closed and why it closed. Its
// events record each step: action ("open", "warn", "update", "email", "term",
// "kill", "resolve", and "<action>_result" when the agent or the mailer
// reported back), an outcome ("sent", "queued", "ok", "partial", "failed",
// "rate_limited", "dry_run", ...), a readable detail
// and the pids concerned with per-pid outcomes.
//
// Thread-safe: every method goes through store::Store::Write / Read. Blocking.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"
#include "enforce/detector.h"
#include "server/store/store.h"

namespace rota::server {

// One pid named by an event, with its outcome when known.
struct EventPid {
  uint32_t pid = 0;
  int64_t start_time_ms = 0;
  std::string outcome;  // e.g. "signalled", "exited", "not found", "" when not applicable
  std::string detail;

  bool operator==(const EventPid&) const = default;
};

struct ViolationEvent {
  int64_t id = 0;
  int64_t t_ms = 0;
  std::string action;
  std::string outcome;
  std::string detail;
  std::vector<EventPid> pids;
};

struct ViolationRecord {
  int64_t id = 0;
  std::string node;
  uint32_t gpu = 0;
  std::string gpu_uuid;
  std::optional<uint32_t> uid;
  std::string unix_user;
  std::optional<int64_t> user_id;  // the offender's rota account, when known
  std::string username;            // its username ("" when unknown)
  int64_t reservation_id = 0;      // 0: unreserved GPU
  int64_t reservation_owner_id = 0;
  std::string reservation_owner;  // the owner's username ("" when unknown)
  std::string mode;
  bool dry_run = false;
  std::string state;  // "open" or "resolved"
  int64_t opened_ms = 0;
  std::optional<int64_t> closed_ms;
  std::vector<enforce::OffendingProcess> processes;  // every process that took part
  std::string resolution;                            // why it closed
  std::string last_action;                           // action of the latest event
  std::vector<ViolationEvent> events;                // by time; only from Get / ListOpen
};

inline constexpr int kMaxViolationListLimit = 1000;

// Filters of List. Empty strings and absent times do not filter.
struct ViolationQuery {
  std::string node;
  std::string user;                // the offender's Unix user or rota username
  std::string state;               // "", "open" or "resolved"
  std::optional<int64_t> from_ms;  // violations open at some time in [from, to)
  std::optional<int64_t> to_ms;
  int limit = 100;  // 1..kMaxViolationListLimit
  int offset = 0;   // >= 0
};
// InvalidArgument naming the field for a bad query.
Status ValidateViolationQuery(const ViolationQuery& q);
// The query of GET /api/v1/violations from its parameters: node, user,
// state (open|resolved), from/to (RFC 3339), limit (1..1000, default 100),
// offset. InvalidArgument naming the parameter for a bad or unknown one.
Result<ViolationQuery> ParseViolationQuery(const std::map<std::string, std::string>& params);
// A violation id from a URL: 1..2^53. InvalidArgument otherwise.
Result<int64_t> ParseViolationId(const std::string& text);

// One entry of the accounts trail.
struct AuthEvent {
  int64_t id = 0;
  int64_t t_ms = 0;
  std::string action;    // "login_throttled", "password_changed", "password_reset",
                         // "ssh_node_added", "ssh_node_pinned", "ssh_node_removed"
  std::string address;   // the client's address ("" when none)
  std::string username;  // the account (as typed, for a sign-in) or node concerned
  std::string actor;     // who did it ("" for a sign-in)
  std::string detail;
};
inline constexpr int kMaxAuthEventListLimit = 1000;

class AuditLog {
 public:
  // `store` is borrowed and must outlive the log.
  explicit AuditLog(store::Store* store) : store_(store) {}

  // Records a new open violation for `offence` with its "open" event; returns its id.
  // `offender_user_id` is the offender's rota account when known.
  Result<int64_t> OpenViolation(const enforce::Offence& offence, const std::string& mode,
                                bool dry_run, int64_t now_ms,
                                std::optional<int64_t> offender_user_id = std::nullopt);
  // Appends an event. NotFound for an unknown violation.
  Status AddEvent(int64_t violation_id, int64_t t_ms, const std::string& action,
                  const std::string& outcome, const std::string& detail,
                  const std::vector<EventPid>& pids = {});
  // Adds processes not yet recorded for the violation (by pid and start time)
  // and an "update" event naming the current ones. NotFound for an unknown violation.
  Status UpdateProcesses(int64_t violation_id, int64_t t_ms,
                         const std::vector<enforce::OffendingProcess>& current);
  // Closes an open violation with a "resolve" event. NotFound for an unknown
  // violation, Conflict when it is resolved already.
  Status Resolve(int64_t violation_id, int64_t t_ms, const std::string& reason);

  // Violations matching `q`, newest first, without events.
  Result<std::vector<ViolationRecord>> List(const ViolationQuery& q);
  // One violation with its events. NotFound for an unknown id.
  Result<ViolationRecord> Get(int64_t id);
  // Every open violation with its events, oldest first (for restart recovery).
  Result<std::vector<ViolationRecord>> ListOpen();

  // Appends `event` to the accounts trail without waiting for the store (callable from
  // a network thread); a failed write is logged.
  void RecordAuthEvent(AuthEvent event);
  // The newest entries first, ids below `before_id` (0: from the newest), at most
  // `limit` (1..kMaxAuthEventListLimit).
  Result<std::vector<AuthEvent>> ListAuthEvents(int64_t before_id, int limit);

 private:
  store::Store* const store_;
};

// The API view of a violation: times as RFC 3339 and Unix ms; events included
// when `with_events`.
api::Json ViolationJson(const ViolationRecord& v, bool with_events);
// {id, at (RFC 3339), action, address, username, actor, detail}.
api::Json AuthEventJson(const AuthEvent& e);

}  // namespace rota::server
