#pragma once
// Violation detection: which GPU processes of one node sample break the rules.
// Pure: no clock, no I/O.
//
// A process on GPU g is fine when any of these holds:
//  - its uid is below the settings' min_uid (root and system accounts: never
//    judged, whatever they run);
//  - the mode in effect on g is "off" (the reservation's settings on a reserved
//    GPU, `node_default` on an unreserved one);
//  - g is unreserved and the mode is not "strict";
//  - its Unix user is the owner's Unix user of a reservation covering g;
//  - it belongs to a job allocation on this node covering g with the same Unix user;
//  - its Unix user is in exempt_users, or its executable is exempt
//    (IsExemptProcess; argv0 only when the agent did not report the executable).
// Processes whose owner the agent could not read (no uid) are skipped: they are
// gone or unreadable, and rota never signals what it cannot attribute. A
// reservation whose owner has no Unix account ("") is not enforced.

#include <cstdint>
#include <string>
#include <vector>

#include "api/types.h"
#include "enforce/types.h"

namespace rota::enforce {

// One process; (pid, start_time_ms) identifies it (a reused pid has another start).
struct OffendingProcess {
  uint32_t pid = 0;
  int64_t start_time_ms = 0;  // 0 when the agent did not report it
  std::string command;

  bool operator==(const OffendingProcess&) const = default;
};

// The offending processes of one uid on one GPU.
struct Offence {
  std::string node;
  uint32_t gpu = 0;
  std::string gpu_uuid;
  uint32_t uid = 0;
  std::string unix_user;                    // "" when the agent knew only the uid
  std::vector<OffendingProcess> processes;  // by pid, no duplicates
  int64_t reservation_id = 0;               // 0: unreserved GPU (strict mode)
  int64_t reservation_owner_id = 0;
  std::string reservation_owner_username;
  std::string reservation_title;
  int64_t reservation_start_ms = 0;
  int64_t reservation_end_ms = 0;
  EnforcementSettings settings;  // in effect on this GPU
};

// The offences in `sample` of `node`, ordered by (gpu, uid). `active` are the
// reservations active on `node` now (others are ignored); when reservations
// overlap on a GPU, a process may run for any of their owners and an offence is
// charged to the one with the lowest id. `jobs` are job allocations (others'
// nodes ignored).
std::vector<Offence> Detect(const std::string& node, const api::NodeSample& sample,
                            const std::vector<ReservationView>& active,
                            const std::vector<JobAllocationView>& jobs,
                            const EnforcementSettings& node_default);

// True when process `p` is exempt by `exempt_commands` (EnforcementSettings):
//  - an entry that is an absolute path matches when it equals p.exe;
//  - an entry that is a name matches p.exe's basename;
//  - "USER:EXE" matches as EXE does, for a process whose Unix user (p.user) or uid
//    (decimal) is USER.
// The executable is what the kernel says the process runs (/proc/PID/exe), never
// argv[0], which a process chooses (`exec -a Xorg python train.py`). When the agent
// did not report it (p.exe empty: an agent older than the field, or unreadable),
// the entries are matched against argv0 of p.command instead: such a process is
// conservatively left alone rather than signalled when it might be exempt.
bool IsExemptProcess(const api::GpuProcess& p, const std::vector<std::string>& exempt_commands);

}  // namespace rota::enforce
