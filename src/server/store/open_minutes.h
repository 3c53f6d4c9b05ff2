#pragma once
// The totals of the minutes the writer has not written yet, accumulated from
// the samples as it stores them, so that a closed minute's aggregates need not
// read its raw rows back (at 10,000 nodes that was 10,000 node-minutes of reads
// a minute; docs/design-store.md).
//
// Totals are exact only when every raw row of their (node, minute) went through
// them. So a (node, minute) is tracked only when its first new row comes at or
// after the floor, a minute the caller keeps past every minute that may hold
// rows the totals have not seen: minutes with rows from before this process
// (Writer::Start), minutes whose writing has begun (a late first row of one),
// and, after a transaction rolled back, every minute not yet written (Clear).
// An untracked (node, minute) is recomputed from its rows (MinuteAggregates).
// Writer thread only.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>

#include "api/types.h"
#include "server/store/minutes.h"

namespace rota::store {

class OpenMinutes {
 public:
  explicit OpenMinutes(int64_t floor_ms) : floor_(floor_ms) {}

  // Adds the host readings of a sample whose node_samples row was new.
  void AddHost(int64_t node, int64_t t_ms, const api::HostSample& h, int64_t mem_used);
  // Adds the GPU readings of a sample whose node_gpu_samples row was new.
  void AddGpus(int64_t node, int64_t t_ms, std::span<const api::GpuSample> gpus);

  // Stops tracking (node, minute), returning its totals (nullopt when untracked).
  std::optional<MinuteTotals> Take(int64_t node, int64_t minute_ms);
  // Tracks no new (node, minute) before `floor_ms` (the floor never goes back;
  // minutes already tracked stay until taken).
  void RaiseFloor(int64_t floor_ms);
  // Forgets every total (rows they counted were rolled back) and raises the
  // floor to `floor_ms` and past every minute it tracked.
  void Clear(int64_t floor_ms);

  int64_t floor_ms() const { return floor_; }
  size_t tracked() const;  // (node, minute) pairs
  uint64_t additions() const { return additions_; }  // samples added to totals, ever

 private:
  // The totals to add to, created when allowed; null when untracked.
  MinuteTotals* Slot(int64_t node, int64_t t_ms);

  int64_t floor_;
  uint64_t additions_ = 0;
  std::map<int64_t, std::unordered_map<int64_t, MinuteTotals>> minutes_;  // minute -> node -> totals
};

}  // namespace rota::store
