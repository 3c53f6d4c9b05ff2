#pragma once
// Server-side downsampling of metric series: validation of a (from, to, step)
// query and bucketing of time-ordered rows into points. Pure code, no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace rota::store {

inline constexpr int64_t kMinuteMs = 60'000;
inline constexpr int64_t kMinStepMs = 1'000;
// Hard limit of points per query; more is InvalidArgument.
inline constexpr int64_t kMaxHistoryPoints = 10'000;
// With step 0 (auto) the step is chosen so a query gives at most about this many points.
inline constexpr int64_t kAutoHistoryPoints = 1'000;

// One bucket of a series. Only metrics with at least one reading in the bucket
// appear; buckets without any row are omitted from a series.
struct SeriesPoint {
  int64_t t_ms = 0;                                  // bucket start: floor(t / step) * step
  int64_t samples = 0;                               // raw samples that fell into the bucket
  std::vector<std::pair<std::string, double>> avg;   // metric -> mean of readings
  std::vector<std::pair<std::string, double>> max;   // metric -> largest reading
  std::vector<std::pair<std::string, double>> last;  // counters (energy_mj) -> latest reading
};

// The answer to a history query.
struct Series {
  int64_t step_ms = 0;              // the step used (resolved from 0, rounded up to whole minutes
                                    // when read from the 1-minute aggregates)
  std::string resolution;           // "raw" or "1m": which table the points were computed from
  std::vector<SeriesPoint> points;  // ascending t_ms
};

// floor(t / step) * step, also for negative t.
int64_t BucketStart(int64_t t_ms, int64_t step_ms);

// Number of buckets touched by [from_ms, to_ms). REQUIRES: from < to, step > 0.
int64_t BucketCount(int64_t from_ms, int64_t to_ms, int64_t step_ms);

// Validates a query over [from_ms, to_ms) and returns the step to use:
// InvalidArgument unless 0 <= from < to, step == 0 or step >= kMinStepMs, and
// the query gives at most kMaxHistoryPoints points. step 0 picks the smallest
// "round" step (1 s, 2 s, 5 s, 10 s, 15 s, 30 s, 1 min, ... 1 day, then whole
// days) giving at most kAutoHistoryPoints intervals.
Result<int64_t> ResolveStep(int64_t from_ms, int64_t to_ms, int64_t step_ms);

// Builds points from rows given in ascending time order. Each row belongs to
// the bucket of its time; for each metric a row contributes a sum and count of
// readings and their max (a raw row: value, 1, value; a 1-minute row: its
// aggregates). Not thread-safe.
class SeriesBuilder {
 public:
  // `metrics` get avg and max, `counters` get last.
  SeriesBuilder(int64_t step_ms, std::vector<std::string> metrics,
                std::vector<std::string> counters);

  // Starts a row at `t_ms` holding `samples` raw samples. REQUIRES: t_ms >= previous row's.
  void Row(int64_t t_ms, int64_t samples);
  // Adds readings of metric `i` (index into `metrics`) to the current row's bucket.
  void Metric(size_t i, double sum, int64_t count, std::optional<double> max);
  // Sets counter `i` if `t_ms` is the latest seen in the bucket.
  void Counter(size_t i, double value, int64_t t_ms);
  // Returns the points; the builder is empty afterwards.
  std::vector<SeriesPoint> Finish();

 private:
  struct Acc {
    double sum = 0;
    int64_t count = 0;
    std::optional<double> max;
  };
  struct Last {
    std::optional<double> value;
    int64_t t_ms = 0;
  };
  void Close();

  int64_t step_;
  std::vector<std::string> metrics_, counters_;
  bool open_ = false;
  int64_t bucket_ = 0;
  int64_t samples_ = 0;
  std::vector<Acc> acc_;
  std::vector<Last> last_;
  std::vector<SeriesPoint> points_;
};

}  // namespace rota::store
