#pragma once
// UsageTracker: live GPU/memory utilisation of reservations and their idle
// time, accumulated from the samples ClusterState receives. In memory only:
// Reservations finalizes the averages into the store when a reservation ends
// (falling back to the store's minute aggregates after a restart).
//
// Thread-safe (one mutex); OnSample is cheap enough for an io thread.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/mutex.h"
#include "reserve/policy.h"

namespace rota::server {

// What a running reservation has used so far.
struct LiveUsage {
  double avg_util_gpu = 0;  // mean over samples of the mean over its GPUs, percent
  double avg_util_mem = 0;
  int64_t samples = 0;
  std::optional<int64_t> idle_since_ms;  // under the lowest idle threshold since then
};

struct TrackedReservation {
  int64_t id = 0;
  std::string node;
  std::vector<uint32_t> gpus;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::vector<reserve::AppliedIdleRule> idle_rules;
  bool idle_notified = false;  // a notice went out: only a releasing rule may act now
  bool idle_released = false;  // released early: nothing more to do
};

// An idle rule whose time is up.
struct IdleDue {
  int64_t id = 0;
  std::string policy;
  reserve::IdleRule rule;
  int64_t idle_since_ms = 0;
  double avg_util_gpu = 0;  // mean GPU utilisation of its samples since idle_since_ms, percent
};

class UsageTracker {
 public:
  // Adds or replaces (keeping accumulated usage) a reservation to follow.
  void Track(const TrackedReservation& r);
  void Forget(int64_t id);
  // Accumulates one sample of `node` into reservations running at its time.
  void OnSample(const std::string& node, const api::NodeSample& sample);
  std::optional<LiveUsage> Usage(int64_t id) const;
  // Removes and returns (with their usage, samples 0 when none) reservations
  // with end_ms <= now_ms.
  std::vector<std::pair<TrackedReservation, LiveUsage>> TakeEnded(int64_t now_ms);
  // Rules idle for at least their `after` (measured to the latest sample), of
  // reservations running at now_ms: at most one per reservation, a releasing
  // rule first; after a notice only releasing rules, after a release none.
  std::vector<IdleDue> DueIdle(int64_t now_ms) const;
  // A notice went out for `id` (and released it, when `released`).
  void MarkNotified(int64_t id, bool released);
  // Replaces the idle rules of reservation `id` (policies changed).
  void SetIdleRules(int64_t id, std::vector<reserve::AppliedIdleRule> rules);
  std::vector<TrackedReservation> All() const;

 private:
  struct Entry {
    TrackedReservation r;
    double sum_gpu = 0, sum_mem = 0;
    int64_t n_gpu = 0, n_mem = 0;
    int64_t last_sample_ms = 0;
    std::map<double, int64_t> idle_since;  // threshold -> first idle sample time
    // threshold -> (sum, count) of the GPU utilisation of its idle samples
    std::map<double, std::pair<double, int64_t>> idle_util;
  };
  mutable Mutex mu_;
  std::map<int64_t, Entry> entries_ ROTA_GUARDED_BY(mu_);
  std::map<std::string, std::set<int64_t>> by_node_ ROTA_GUARDED_BY(mu_);
};

}  // namespace rota::server
