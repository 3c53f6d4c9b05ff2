#pragma once
// EarlyStopper: applies the sweeps' early-stopping rules (jobs/early_stop.h)
// to their running trials. The leader calls Tick every couple of seconds (the
// server's background loop): for each sweep with a rule and a running trial,
// it reads the members' points of the rule's metric from the store (no lock
// held), decides in the pure core and stops the trials it names through
// JobService::StopEarly (the preemption notice path). It reads what every
// server stored, so trials reporting through followers' agent connections
// count as well. See docs/design-jobs.md ("Early stopping").
//
// Each sweep is looked at every 2 s at most, and never more often than every 10 times
// what its last look cost: a look reads every stored point of the rule's metric (100
// trials x 1,000 points: ~50 ms; 1,000 x 1,000: ~1 s, docs/benchmarks.md), so a huge sweep
// takes at most ~1/10 of the background loop, which also checks liveness and timeouts.
//
// Not thread-safe: one caller (the background loop).

#include <cstdint>
#include <map>
#include <optional>

#include "common/clock.h"
#include "jobs/early_stop.h"

namespace rota::store {
class Store;
}

namespace rota::server {

class JobService;

class EarlyStopper {
 public:
  // All borrowed; must outlive this. `clock` times the looks (MonotonicMs).
  EarlyStopper(store::Store* store, JobService* jobs, Clock* clock);

  // One look at every sweep with a running trial whose next look is due; returns the
  // trials stopped.
  int Tick();

  struct Stats {
    uint64_t looks = 0;    // sweeps looked at
    uint64_t stopped = 0;  // trials stopped
    int64_t last_look_ms = 0;  // what the last look cost
  };
  Stats stats() const { return stats_; }

 private:
  // The array's rule (nullopt: none, or not a sweep), read from its row once.
  std::optional<jobs::EarlyStopSpec> RuleOf(int64_t array_id);

  store::Store* const store_;
  JobService* const jobs_;
  Clock* const clock_;
  std::map<int64_t, std::optional<jobs::EarlyStopSpec>> rules_;  // arrays with running members
  std::map<int64_t, int64_t> next_look_ms_;                      // by array, MonotonicMs
  Stats stats_;
};

}  // namespace rota::server
