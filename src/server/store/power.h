#pragma once
// SQL of power policies and the power audit log (tables power_policies and
// power_events, schema version 8). Called inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "power/policy.h"
#include "server/store/sql.h"

namespace rota::store {

// Every policy, by name.
Result<std::vector<power::PowerPolicy>> LoadPowerPolicies(Db& db);
// Conflict when the name is taken; returns the stored policy with its id and times.
Result<power::PowerPolicy> InsertPowerPolicy(Db& db, const power::PowerPolicy& p, int64_t now_ms);
// NotFound for an unknown id; Conflict when the new name is another policy's.
Result<power::PowerPolicy> UpdatePowerPolicy(Db& db, int64_t id, const power::PowerPolicy& p,
                                             int64_t now_ms);
// NotFound for an unknown id; returns what was deleted.
Result<power::PowerPolicy> DeletePowerPolicy(Db& db, int64_t id);

// One entry of the power audit log: a limit an agent applied, restored or
// refused, or a policy an admin created, changed or deleted.
struct PowerEvent {
  int64_t id = 0;
  int64_t t_ms = 0;
  std::string action;  // "set", "restored", "refused", "error", "policy_created", ...
  std::string node;    // "" for policy events
  std::optional<uint32_t> gpu;
  std::string uuid;
  std::optional<uint32_t> limit_mw;     // in force after (agent) / the policy's watts * 1000
  std::optional<uint32_t> previous_mw;  // in force before (agent)
  std::optional<uint32_t> requested_mw;
  std::string policy;  // the policies behind the limit, or the policy edited
  std::string actor;   // the admin, for policy events
  std::string detail;
};

Status AddPowerEvents(Db& db, const std::vector<PowerEvent>& events);

inline constexpr int kMaxPowerEventLimit = 1000;
struct PowerEventQuery {
  std::string node;                // "" : every node (and policy events)
  std::optional<int64_t> from_ms;  // events at or after
  std::optional<int64_t> to_ms;    // events before
  int limit = 100;                 // 1..kMaxPowerEventLimit
};
// Newest first.
Result<std::vector<PowerEvent>> ListPowerEvents(Db& db, const PowerEventQuery& q);

}  // namespace rota::store
