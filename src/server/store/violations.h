#pragma once
// SQL of the enforcement audit log (tables violations and violation_events):
// rows with their processes and pids as JSON text, which server/audit.cc
// reads and writes. Called inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct ViolationRow {
  int64_t id = 0;
  std::string node;
  int64_t gpu = 0;
  std::string gpu_uuid;
  std::optional<int64_t> uid;
  std::string unix_user;
  std::optional<int64_t> user_id;  // the offender's account
  std::string username;            // read only: its username ("" unknown)
  int64_t reservation_id = 0;      // 0: none
  int64_t reservation_owner_id = 0;
  std::string reservation_owner;  // read only
  std::string mode;
  bool dry_run = false;
  std::string state = "open";  // "open" or "resolved"
  int64_t opened_ms = 0;
  std::optional<int64_t> closed_ms;
  std::string processes_json = "[]";
  std::string resolution;
  std::string last_action;  // read only: action of the latest event
};

struct ViolationEventRow {
  int64_t id = 0;
  int64_t t_ms = 0;
  std::string action, outcome, detail;
  std::string pids_json = "[]";
};

// Inserts an open violation (the row's node, GPU, who, reservation, mode,
// dry run, opened_ms and processes); returns its id.
Result<int64_t> InsertViolation(Db& db, const ViolationRow& row);
// NotFound naming the id.
Result<ViolationRow> GetViolation(Db& db, int64_t id);
// Appends an event to violation `id` (not checked: see GetViolation).
Status InsertViolationEvent(Db& db, int64_t id, const ViolationEventRow& e);
// Its events, oldest first.
Result<std::vector<ViolationEventRow>> ViolationEvents(Db& db, int64_t id);
Status SetViolationProcesses(Db& db, int64_t id, const std::string& processes_json);
Status ResolveViolation(Db& db, int64_t id, int64_t t_ms, const std::string& resolution);

// Filters of ListViolations; empty strings and absent times do not filter.
struct ViolationFilter {
  std::string node;
  std::string user;   // the offender's Unix user or username
  std::string state;  // "open" or "resolved"
  std::optional<int64_t> from_ms, to_ms;  // open at some time in [from, to)
  int64_t limit = 100, offset = 0;
};
// Newest first.
Result<std::vector<ViolationRow>> ListViolations(Db& db, const ViolationFilter& f);
// The open ones, oldest first.
Result<std::vector<ViolationRow>> OpenViolations(Db& db);

}  // namespace rota::store
