#pragma once
// Minute aggregates (gpu_minutes, node_minutes) computed from the raw rows of a
// minute. The writer stores raw rows as samples arrive and computes a node's
// minute once, after the minute has closed (Writer: "dirty minutes"), instead
// of updating the aggregate row with every sample: two plain inserts per sample
// (gpu_samples.h) instead of inserts and upserts. Recomputing is idempotent, so a
// minute that receives late samples, or whose aggregation a crash interrupted,
// is simply computed again. Writer thread only.

#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "server/store/gpu_samples.h"
#include "server/store/sqlite.h"

namespace rota::store {

class MinuteAggregates {
 public:
  // Prepares the statements on the write connection.
  static Result<MinuteAggregates> Prepare(Db& db);

  // Replaces the aggregate rows of node `node`'s minute starting at `minute_ms`
  // by what its raw rows give: per GPU and for the host, the sample count, per
  // metric the sum, count and maximum of the readings present, the GPU's
  // failed count, and the energy counter's latest reading with its time. A
  // minute without raw rows keeps the aggregates it has (retention may have
  // deleted its raw rows). Runs inside the caller's transaction.
  Status Recompute(int64_t node, int64_t minute_ms);

 private:
  MinuteAggregates() = default;
  std::optional<GpuSampleReader> read_gpu_;
  std::vector<GpuReading> readings_;  // reused
  Stmt read_node_, put_gpu_, put_node_;
};

}  // namespace rota::store
