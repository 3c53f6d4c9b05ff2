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
// Not thread-safe: one caller (the background loop).

#include <cstdint>
#include <map>
#include <optional>

#include "jobs/early_stop.h"

namespace rota::store {
class Store;
}

namespace rota::server {

class JobService;

class EarlyStopper {
 public:
  // Both borrowed; must outlive this.
  EarlyStopper(store::Store* store, JobService* jobs);

  // One look at every sweep with a running trial; returns the trials stopped.
  int Tick();

  struct Stats {
    uint64_t looks = 0;    // sweeps looked at
    uint64_t stopped = 0;  // trials stopped
  };
  Stats stats() const { return stats_; }

 private:
  // The array's rule (nullopt: none, or not a sweep), read from its row once.
  std::optional<jobs::EarlyStopSpec> RuleOf(int64_t array_id);

  store::Store* const store_;
  JobService* const jobs_;
  std::map<int64_t, std::optional<jobs::EarlyStopSpec>> rules_;  // arrays with running members
  Stats stats_;
};

}  // namespace rota::server
