#pragma once
// Power limit messages of the agent protocol (see protocol.h):
//
// server -> agent
//   power_limits {"gpus": [{"index", "uuid", "limit_mw"?, "reason"?}]}
//     The limits the node's GPUs should have now: the whole set for the node.
//     A GPU listed without limit_mw, or not listed, gets its default limit back
//     if the agent had changed it. Sent when the agent registers and whenever a
//     target changes.
// agent -> server
//   power_report {"gpus": [{"index", "uuid", "requested_mw"?, "limit_mw"?,
//                 "previous_mw"?, "default_mw"?, "min_mw"?, "max_mw"?,
//                 "outcome", "detail"}]}
//     The answer to each power_limits: one entry per GPU the message or the
//     agent's own record concerned, with what is in force afterwards.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"

namespace rota::api {

struct PowerLimitSetting {
  uint32_t index = 0;
  std::string uuid;                  // the GPU the server means (checked by the agent)
  std::optional<uint32_t> limit_mw;  // absent: the GPU's default
  std::string reason;                // for the agent's log, <= 1024 bytes
};

struct PowerLimitsMsg {
  std::vector<PowerLimitSetting> gpus;  // at most kMaxGpusPerNode, indexes unique
};

enum class PowerOutcome {
  kSet,        // the requested limit is now in force
  kRestored,   // the default limit is back
  kUnchanged,  // it was in force already
  kRefused,    // the GPU or driver does not allow it (not root, not supported, out of range)
  kError,      // anything else: unknown GPU, NVML failure
};
const char* PowerOutcomeName(PowerOutcome o);  // "set", "restored", ...

struct PowerGpuReport {
  uint32_t index = 0;
  std::string uuid;
  std::optional<uint32_t> requested_mw;  // absent: the default was asked for
  std::optional<uint32_t> limit_mw;      // in force after the change (as read back)
  std::optional<uint32_t> previous_mw;   // in force before
  std::optional<uint32_t> default_mw;
  std::optional<uint32_t> min_mw;
  std::optional<uint32_t> max_mw;
  PowerOutcome outcome = PowerOutcome::kError;
  std::string detail;  // why, in words; <= 1024 bytes
};

struct PowerReportMsg {
  std::vector<PowerGpuReport> gpus;  // at most kMaxGpusPerNode
};

Json ToJson(const PowerLimitsMsg& m);
Json ToJson(const PowerReportMsg& m);
// InvalidArgument naming the field.
Result<PowerLimitsMsg> PowerLimitsFromJson(const Json& j);
Result<PowerReportMsg> PowerReportFromJson(const Json& j);

}  // namespace rota::api
