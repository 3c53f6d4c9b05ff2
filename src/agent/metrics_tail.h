#pragma once
// Metrics a task reports: lines of its stdout log or of its ROTA_METRICS_FILE of
// the form
//   rota-metric NAME=VALUE [NAME=VALUE ...] [step=N]
// (names as api::ValidateMetricName, values finite numbers, N a whole number;
// at most kMaxPairsPerLine pairs). Any other line is not a metric; a line that
// begins with "rota-metric " but is malformed is skipped and counted.
//
// MetricsTail follows each task's sources from the offset of the last line it
// handed out and confirmed (Commit): complete lines only, so a line the task is
// still writing is read once it ends. The offsets live in memory: after an agent
// restart or a new registration (Rewind) the sources are read again from the
// start and the server keeps each point once (api::TaskMetricPoint's identity).
// See docs/design-jobs.md ("Metrics").
//
// Thread-compatible (the task manager's thread).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/task_protocol.h"

namespace rota::agent {

inline constexpr std::string_view kMetricPrefix = "rota-metric ";
inline constexpr size_t kMaxPairsPerLine = 32;
// The most bytes read from one source per Read; a longer line is skipped whole.
inline constexpr size_t kMaxMetricReadBytes = 256 * 1024;

// The points of one line (without its newline); empty when it is not a metric
// line. *malformed is set when it begins with the prefix but cannot be read (then
// no point of it is kept).
std::vector<api::TaskMetricPoint> ParseMetricLine(std::string_view line, bool* malformed);

class MetricsTail {
 public:
  struct Source {
    std::string path;
    api::TaskMetricPoint::Source kind = api::TaskMetricPoint::Source::kStdout;
  };
  // The points of the lines completed in `sources` since the last Commit of `id`,
  // at most api::kMaxMetricPointsPerMessage (the rest on the next Read), each with
  // its line's offset as seq and `now_ms` as its time. A missing source has none.
  std::vector<api::TaskMetricPoint> Read(const std::string& id, const std::vector<Source>& sources,
                                         int64_t now_ms);
  // The points of the last Read of `id` reached the server: the next Read starts
  // after them.
  void Commit(const std::string& id);
  // Every task's sources are read again from their start.
  void Rewind() { tasks_.clear(); }
  void Forget(const std::string& id) { tasks_.erase(id); }
  // Lines skipped as malformed, since the start.
  uint64_t malformed() const { return malformed_; }

 private:
  struct Cursor {
    uint64_t offset = 0;     // next byte to read
    bool in_long_line = false;  // skipping the rest of a line longer than a read
  };
  struct Task {
    std::map<std::string, Cursor> committed, pending;  // by source path
  };
  std::map<std::string, Task> tasks_;
  uint64_t malformed_ = 0;
};

}  // namespace rota::agent
