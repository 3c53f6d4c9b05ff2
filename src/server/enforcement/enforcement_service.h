#pragma once
// EnforcementService: runs violation detection and the enforcement ladder
// (src/enforce) on every live node sample, performs the actions through the
// agent and the mailer, and records every step in the AuditLog.
//
// Collaborators arrive as std::function seams (EnforcementHooks), bound by the
// server to the reservation store, accounts, AgentGateway::SendCommand and the
// SMTP notifier; tests bind working fakes.
//
// Dry run (the settings' dry_run): nothing is sent (no terminal warning, no mail,
// no signal); each step is recorded as what would have happened
// ("dry-run: would SIGTERM pids 10, 11"). Signals are sent only for violations
// recorded in the audit log: if recording the violation failed, its steps are
// retried on the next action and nothing unaudited is signalled.
//
// Mail is recorded as "email" "queued" when handed to the mailer, and its
// delivery as an "email_result" event per mail ("sent", "failed" with the SMTP
// reply, "rate_limited", ...) when the mailer finishes.
//
// Thread-safe. OnSample never waits for the agent or the mailer: command and
// mail outcomes are recorded from the send_command / send_email callbacks, on
// whatever thread they run. It does wait for the audit log's store writes when a step is taken.
// Callbacks arriving after the service is destroyed are dropped.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "enforce/detector.h"
#include "enforce/ladder.h"
#include "enforce/types.h"
#include "server/audit.h"

namespace rota::server {

// A process the agent is to act on: the agent acts only when pid and start
// time still match (a reused pid is left alone).
struct CommandTarget {
  uint32_t pid = 0;
  int64_t start_time_ms = 0;
  uint32_t gpu = 0;
};

// A command for the agent of one node.
struct CommandRequest {
  std::string action;   // "warn" (write `message` to the user's terminals) or "signal"
  uint32_t uid = 0;     // the offender
  std::string user;     // its Unix user ("" if unknown)
  std::string message;  // warn
  std::string signal;   // signal: "TERM" or "KILL"
  std::vector<CommandTarget> targets;
  int64_t violation_id = 0;
};

struct PidOutcome {
  uint32_t pid = 0;
  // "signalled", "gone", "mismatch" (pid reused: left alone), "denied", "error"
  std::string outcome;
  std::string detail;
};

// What the agent reported (or why the command did not reach it).
struct CommandOutcome {
  bool ok = false;
  std::vector<PidOutcome> pids;        // signal: one per target
  std::vector<std::string> terminals;  // warn: terminals written, e.g. "pts/3"
  std::string error;                   // !ok: why (node unreachable, timeout, ...)
};

// A mail about a violation, for the notifier to format and send.
struct EmailRequest {
  std::vector<std::string> to;
  std::string kind;  // "violation_offender" or "violation_owner" (owner and admins)
  int64_t violation_id = 0;
  std::string node;
  uint32_t gpu = 0;
  std::string gpu_uuid;
  uint32_t uid = 0;
  std::string unix_user;
  std::string offender_username;  // "" when the Unix user has no rota account
  int64_t reservation_id = 0;     // 0: unreserved GPU (strict mode)
  std::string reservation_title;
  std::string reservation_owner;
  int64_t reservation_start_ms = 0;
  int64_t reservation_end_ms = 0;
  std::vector<enforce::OffendingProcess> processes;
  int64_t opened_ms = 0;
  int64_t term_at_ms = 0;     // when SIGTERM is due
  int64_t kill_after_ms = 0;  // SIGKILL this long after SIGTERM
  std::string mode;
};

// How a mail of EmailRequest ended (notify::DeliveryReport, without notify).
struct EmailDelivery {
  std::string outcome;  // "sent", "failed", "rate_limited", "dropped" or "disabled"
  std::string detail;   // why, e.g. the SMTP reply; "" when sent
};

// A rota account as the service needs it.
struct UserContact {
  int64_t id = 0;
  std::string username;
  std::string email;  // "" when none
};

struct EnforcementHooks {
  // REQUIRED. Reservations active on `node` at `now_ms`, with effective settings.
  std::function<std::vector<enforce::ReservationView>(const std::string& node, int64_t now_ms)>
      active_reservations;
  // Job allocations on `node` (none when unset).
  std::function<std::vector<enforce::JobAllocationView>(const std::string& node, int64_t now_ms)>
      active_jobs;
  // Settings for unreserved GPUs of `node` (EnforcementSettings{} when unset).
  std::function<enforce::EnforcementSettings(const std::string& node)> node_default;
  // The rota account of Unix user `unix_user` on `node` (none when unset).
  std::function<std::optional<UserContact>(const std::string& node, const std::string& unix_user)>
      find_user_by_unix;
  // The rota account with this id (none when unset).
  std::function<std::optional<UserContact>(int64_t user_id)> get_user;
  // Email addresses of the admins (none when unset).
  std::function<std::vector<std::string>()> admin_emails;
  // REQUIRED. Sends `request` to the agent of `node`; calls `done` exactly once,
  // later and on any thread, with the outcome.
  std::function<void(const std::string& node, const CommandRequest& request,
                     std::function<void(CommandOutcome)> done)>
      send_command;
  // Queues a mail; must not block. Calls `done` exactly once, later on any
  // thread or before it returns, with how delivery ended. Unset: mail is
  // disabled (recorded as skipped).
  std::function<void(EmailRequest, std::function<void(EmailDelivery)> done)> send_email;
};

struct EnforcementOptions {
  // Samples older than this (by the server clock) are not judged: they are
  // replays from an agent's buffer. 0: no limit.
  int64_t max_sample_age_ms = 5 * 60'000;
};

class EnforcementService {
 public:
  // `audit` and `clock` are borrowed and must outlive the service.
  EnforcementService(AuditLog* audit, EnforcementHooks hooks, const Clock& clock,
                     EnforcementOptions options = {});
  ~EnforcementService();
  EnforcementService(const EnforcementService&) = delete;
  EnforcementService& operator=(const EnforcementService&) = delete;

  // Reloads the open violations from the audit log so the ladder continues
  // where it stopped. Call once at start, before samples flow.
  Status Recover();

  // Judges a live sample of `node` and acts. Samples not newer than the last
  // one judged for the node, or older than max_sample_age_ms, are ignored.
  void OnSample(const std::string& node, const api::NodeSample& sample);
  // The node's agent went away: its open violations resolve ("node unreachable").
  void OnNodeLost(const std::string& node);

  // The ladder state of the open violations.
  std::vector<enforce::OpenViolation> OpenViolations() const;

 private:
  struct Life;
  void AssignIds(std::vector<enforce::Action>& actions, int64_t now_ms) ROTA_REQUIRES(mu_);
  void Perform(const std::string& node, const enforce::Action& action, int64_t now_ms);
  void Email(const enforce::Action& action, int64_t now_ms);
  void Signal(const std::string& node, const enforce::Action& action, int64_t now_ms);
  void Warn(const std::string& node, const enforce::Action& action, int64_t now_ms);
  void Record(int64_t id, int64_t t_ms, const std::string& action, const std::string& outcome,
              const std::string& detail, const std::vector<EventPid>& pids = {});

  AuditLog* const audit_;
  const EnforcementHooks hooks_;
  const Clock& clock_;
  const EnforcementOptions options_;
  std::shared_ptr<Life> life_;  // shared with pending command callbacks

  mutable Mutex mu_;
  enforce::Enforcer enforcer_ ROTA_GUARDED_BY(mu_);
  std::map<std::string, int64_t> last_sample_ ROTA_GUARDED_BY(mu_);  // node -> sample time
};

// The text written to the offender's terminals for `action` (an open/warn action).
std::string WarningMessage(const enforce::Action& action);

}  // namespace rota::server
