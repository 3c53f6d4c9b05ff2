#pragma once
// Minute aggregates (gpu_minutes, node_minutes). The writer stores raw rows as
// samples arrive and writes a node's minute once, after the minute has closed
// (Writer: "dirty minutes"), instead of updating the aggregate row with every
// sample. A minute's totals come from memory when every raw row of it went
// through OpenMinutes (open_minutes.h), else from its raw rows read back
// (Recompute). Writing is idempotent (INSERT OR REPLACE), so a minute that
// receives late samples, or whose aggregation a crash interrupted, is simply
// written again. Writer thread only.

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common/status.h"
#include "server/store/gpu_samples.h"
#include "server/store/sql.h"

namespace rota::store {

// Sum, count and maximum of the readings present (absent ones are skipped).
template <typename T>
struct MinuteAcc {
  T sum = 0;
  int64_t n = 0;
  T max = 0;  // meaningful when n > 0
  void Add(std::optional<T> v) {
    if (!v) return;
    sum += *v;
    if (n == 0 || *v > max) max = *v;
    ++n;
  }
  bool operator==(const MinuteAcc&) const = default;
};

// One GPU's minute.
struct GpuMinute {
  static constexpr int kMetrics = 5;  // util_gpu, util_mem, mem_used, temp, power_mw
  static constexpr GpuField kMetricField[kMetrics] = {kUtilGpu, kUtilMem, kMemUsed, kTemp,
                                                      kPowerMw};
  int64_t n = 0, failed_n = 0;
  MinuteAcc<int64_t> metric[kMetrics];
  std::optional<int64_t> energy_mj, energy_t;  // the latest counter reading in the minute
  bool operator==(const GpuMinute&) const = default;
};

// One node's minute: its host readings and each GPU's. Samples may be added in
// any order; the totals do not depend on it (but for the last bits of the
// floating-point sums).
struct MinuteTotals {
  int64_t host_n = 0;  // host samples
  MinuteAcc<double> cpu_percent, load1;
  MinuteAcc<int64_t> mem_used;
  std::vector<std::pair<uint32_t, GpuMinute>> gpus;  // by GPU index, in order of arrival

  void AddHost(std::optional<double> cpu_percent, std::optional<int64_t> mem_used,
               std::optional<double> load1);
  void AddGpu(int64_t t_ms, const StoredGpu& g);
};

class MinuteAggregates {
 public:
  // Prepares the statements on the write connection.
  static Result<MinuteAggregates> Prepare(Db& db);

  // Replaces the aggregate rows of node `node`'s minute starting at `minute_ms`
  // by `totals`: per GPU and for the host, the sample count, per metric the
  // sum, count and maximum of the readings present, the GPU's failed count, and
  // the energy counter's latest reading with its time. Runs inside the caller's
  // transaction.
  Status Put(int64_t node, int64_t minute_ms, const MinuteTotals& totals);

  // As Put, with the totals of the minute's raw rows. A minute without raw
  // rows keeps the aggregates it has (retention may have deleted its raw rows).
  Status Recompute(int64_t node, int64_t minute_ms);

 private:
  MinuteAggregates() = default;
  std::optional<GpuSampleReader> read_gpu_;
  std::vector<GpuReading> readings_;  // reused
  Stmt read_node_, put_gpu_, put_node_;
};

}  // namespace rota::store
