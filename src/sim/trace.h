#pragma once
// Cluster traces for `rota simulate`: CSV with a header naming the columns.
//   submit time: submit_time ("YYYY-MM-DD HH:MM:SS" UTC, RFC 3339, or seconds)
//   duration:    duration_s | duration (seconds, may be fractional)
//   GPUs:        num_gpus | gpus
//   optional:    user, queue, cluster (Philly's virtual cluster: the group)
// The Philly file in shared/traces reads as is. Rows need not be sorted.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rota::sim {

struct TraceJob {
  size_t line = 0;  // 1-based line in the file (for messages)
  int64_t submit_ms = 0;
  int64_t duration_ms = 0;
  uint32_t gpus = 0;
  std::string user, group, queue;
};

struct TraceReadOptions {
  // A bad row is skipped with a warning (true) or refuses the whole trace.
  bool skip_bad_rows = false;
  size_t max_warnings = 20;  // kept in `warnings`; the rest are only counted
};

struct Trace {
  std::vector<TraceJob> jobs;  // sorted by submit time, then line
  size_t bad_rows = 0;
  std::vector<std::string> warnings;  // "line 12: num_gpus: '-3' is not a GPU count (1..4096)"
};

// InvalidArgument naming the line and column on the first bad row (unless
// skipped), a missing column or an empty trace; NotFound/IoError for the file.
Result<Trace> ParseTrace(const std::string& csv, const TraceReadOptions& options = {});
Result<Trace> ReadTrace(const std::string& path, const TraceReadOptions& options = {});

}  // namespace rota::sim
