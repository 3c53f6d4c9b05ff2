#pragma once
// Value types of GPU-usage enforcement: the settings a policy (and, within
// limits, a reservation owner) chooses, and the views of reservations and job
// allocations the detector judges processes against. Pure values; JSON codecs
// validate everything and name the offending field.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/status.h"

namespace rota::enforce {

using Json = nlohmann::json;

// Limits on settings from outside.
inline constexpr int64_t kMaxGraceMs = 7LL * 24 * 3600 * 1000;  // one week
inline constexpr size_t kMaxExemptions = 256;
inline constexpr size_t kMaxExemptionLength = 256;

struct EnforcementSettings {
  // "off": nothing is a violation; "reserved": on a reserved GPU only the
  // reservation owner (and rota jobs) may run; "strict": additionally any use
  // of an unreserved GPU outside a rota job is a violation.
  std::string mode = "reserved";
  // Record what would have happened; send no signals (warnings and mails are
  // not sent either: the caller only records).
  bool dry_run = false;
  int64_t grace_email_ms = 60'000;        // G1: email, from the violation's start
  int64_t grace_term_ms = 300'000;        // G2: SIGTERM, from the violation's start
  int64_t grace_kill_ms = 30'000;         // G3: SIGKILL, after the process's SIGTERM
  std::vector<std::string> exempt_users;  // Unix user names
  // Matched against the process's executable (GpuProcess::exe, never argv[0], which
  // a process sets itself): "/usr/lib/xorg/Xorg" (an absolute path: that file),
  // "Xorg" (a name: the executable's basename; any file of that name, a user's copy
  // too), "USER:EXE" (EXE as above, for processes of Unix user USER, a name or a
  // uid number, only). See IsExemptProcess.
  std::vector<std::string> exempt_commands;
  // Processes of uids below this are never violations, whatever their command:
  // root and system accounts. Server-wide (config enforcement_min_uid): not one of
  // the JSON keys, so neither a policy nor a reservation owner can change it.
  uint32_t min_uid = api::kDefaultEnforcementMinUid;

  bool operator==(const EnforcementSettings&) const = default;
};

// {"mode", "dry_run", "grace_email_ms", "grace_term_ms", "grace_kill_ms",
//  "exempt_users", "exempt_commands"} (min_uid is not a JSON setting).
Json ToJson(const EnforcementSettings& s);
// Parses an object holding any of the keys above; absent keys keep their value
// from `base`. InvalidArgument naming the field for a non-object, unknown key,
// wrong type, unknown mode, grace outside [0, kMaxGraceMs], grace_email_ms >
// grace_term_ms, empty/oversized/too many exemptions, an exempt command "USER:EXE"
// without a user or an executable. min_uid is kept from `base`.
Result<EnforcementSettings> ParseEnforcementSettings(const Json& j,
                                                     const EnforcementSettings& base = {});
// The checks of ParseEnforcementSettings on a value built in code.
Status ValidateEnforcementSettings(const EnforcementSettings& s);

// What an admin lets reservation owners change in their reservation's settings.
struct OwnerLimits {
  int64_t min_grace_email_ms = 0;
  int64_t max_grace_email_ms = 24LL * 3600 * 1000;
  int64_t min_grace_term_ms = 60'000;
  int64_t max_grace_term_ms = 24LL * 3600 * 1000;
  int64_t min_grace_kill_ms = 5'000;
  int64_t max_grace_kill_ms = 3600'000;
  // Owners may set mode "off" or dry_run true only when this is set.
  bool allow_disable = false;
  // Owners may add exempt users/commands (e.g. to share their GPUs).
  bool allow_exemptions = true;

  bool operator==(const OwnerLimits&) const = default;
};

// {"min_grace_email_ms", "max_grace_email_ms", ..., "allow_disable", "allow_exemptions"}.
Json ToJson(const OwnerLimits& l);
// As ParseEnforcementSettings: absent keys keep `base`; min <= max per grace.
Result<OwnerLimits> ParseOwnerLimits(const Json& j, const OwnerLimits& base = {});

// The settings in effect for a reservation: `policy` changed by the owner's
// `overrides` (an object with any of "mode", "dry_run", "grace_*_ms",
// "exempt_users", "exempt_commands"). Exemptions are added to the policy's,
// never removed. PermissionDenied naming the limit when an override leaves
// `limits` ("grace_term_ms 10000 is below the minimum 60000 allowed to
// reservation owners"; "mode off: reservation owners may not disable
// enforcement"); InvalidArgument for malformed overrides. A null `overrides`
// means none.
Result<EnforcementSettings> ApplyOwnerOverrides(const EnforcementSettings& policy,
                                                const Json& overrides, const OwnerLimits& limits);

// A reservation active on a node, as the detector needs it.
struct ReservationView {
  int64_t id = 0;
  int64_t owner_id = 0;
  std::string owner_username;
  std::string owner_unix_user;  // the owner's Unix account on `node`
  std::string title;
  std::string node;
  std::vector<uint32_t> gpus;
  int64_t start_ms = 0, end_ms = 0;
  EnforcementSettings settings;  // effective (policy + owner overrides)
};

// GPUs allocated to a rota job on a node (jobs arrive in a later issue).
struct JobAllocationView {
  std::string job_id;
  std::string node;
  std::vector<uint32_t> gpus;
  std::string unix_user;
};

}  // namespace rota::enforce
