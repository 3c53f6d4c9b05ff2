#pragma once
// The enforcement ladder: turns the offences seen in successive samples of a
// node into actions. Stateful but pure: every call takes the time, nothing
// reads a clock or performs I/O; the caller performs (or, in dry run, records)
// the actions.
//
// A violation is keyed by (node, gpu, uid, reservation). For each one:
//   first seen             -> open, warn
//   processes changed      -> update (the current process list)
//   now - opened >= G1     -> email (once)
//   now - opened >= G2     -> term: every current process not yet sent SIGTERM
//                             (processes joining later are sent it when they appear)
//   now - term(p) >= G3    -> kill: every current process p sent SIGTERM at
//                             least G3 ago and not yet SIGKILL
//   no longer offending    -> resolve, reason one of "reservation ended",
//                             "reservation owner changed", "no longer a violation"
//                             (its processes still run: settings or exemptions
//                             changed), "killed", "terminated", "processes exited"
// G1..G3 are the grace_*_ms of the offence's current settings; an action fires
// at exactly its boundary. A (pid, start time) pair identifies a process: a pid
// whose start time changed is a new process. A new owner of the reservation
// resolves the violation ("reservation owner changed") and opens a new one if
// the processes still offend.
//
// Thread safety: none; the caller serializes.

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/types.h"
#include "enforce/detector.h"
#include "enforce/types.h"

namespace rota::enforce {

struct ViolationKey {
  std::string node;
  uint32_t gpu = 0;
  uint32_t uid = 0;
  int64_t reservation_id = 0;  // 0: unreserved GPU

  auto operator<=>(const ViolationKey&) const = default;
  bool operator==(const ViolationKey&) const = default;
};
ViolationKey KeyOf(const Offence& o);
// "node-a/gpu 3 uid 1001 reservation 42"
std::string ToString(const ViolationKey& key);

enum class ActionKind { kOpen, kWarn, kUpdate, kEmail, kTerm, kKill, kResolve };
// "open", "warn", "update", "email", "term", "kill", "resolve".
const char* ActionKindName(ActionKind kind);

struct Action {
  ActionKind kind = ActionKind::kOpen;
  ViolationKey key;
  int64_t violation_id = 0;  // 0 until the caller called SetViolationId
  int64_t opened_ms = 0;     // when the violation opened
  Offence offence;           // the latest offence (for resolve: the last one seen)
  // open/warn/update/email: the current processes; term/kill: the targets;
  // resolve: the processes last seen.
  std::vector<OffendingProcess> pids;
  bool dry_run = false;  // from the offence's settings: record, do not act
  std::string reason;    // resolve: why (see above); else empty
};

// One process's progress on the ladder.
struct ProcessLadder {
  OffendingProcess process;
  int64_t term_ms = 0;  // when SIGTERM was decided (0: not yet)
  int64_t kill_ms = 0;  // when SIGKILL was decided (0: not yet)
};

// The state of one open violation: what Snapshot returns and RestoreOpen takes.
struct OpenViolation {
  ViolationKey key;
  int64_t id = 0;
  Offence offence;  // the latest offence
  int64_t opened_ms = 0;
  bool emailed = false;
  std::vector<ProcessLadder> ladder;  // every process that ever offended, by first sight
};

class Enforcer {
 public:
  // Judges the offences of one sample of `node` (Detect's output for `sample`;
  // offences of other nodes are ignored) at `now_ms`. `active` are the
  // reservations active on the node (as given to Detect) and `sample` the
  // sample itself: both only explain why violations resolved.
  std::vector<Action> Observe(const std::string& node, int64_t now_ms,
                              const std::vector<Offence>& offences,
                              const std::vector<ReservationView>& active,
                              const api::NodeSample& sample);
  // The node's connection is lost: its open violations resolve with reason
  // "node unreachable" (processes cannot be followed; if they still offend when
  // the node returns, a new violation opens).
  std::vector<Action> NodeLost(const std::string& node);
  // Records the audit id of an open violation. False when `key` is not open.
  bool SetViolationId(const ViolationKey& key, int64_t id);
  // Adds violations reloaded after a restart (replacing any with the same key),
  // so the ladder continues where it stopped instead of starting again.
  void RestoreOpen(std::vector<OpenViolation> open);
  // The open violations, by key.
  std::vector<OpenViolation> Snapshot() const;
  size_t open_count() const { return open_.size(); }

 private:
  void Step(OpenViolation& v, int64_t now_ms, std::vector<Action>& out) const;

  std::map<ViolationKey, OpenViolation> open_;
};

}  // namespace rota::enforce
