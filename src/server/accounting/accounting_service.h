#pragma once
// AccountingService: the shell around accounting::Ledger. Samples from agents
// go in (OnSamples, on io threads); what jobs and reservations hold and who is
// who come from JobService, Reservations and Accounts, refreshed by Tick (the
// server's background thread); amounts and meters are stored together every
// flush interval and at Stop. Reports read the store. See
// docs/design-accounting.md.
//
// Thread-safe (one mutex around the ledger and the cached facts; store and
// service reads happen outside it).

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "accounting/ledger.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "server/store/store.h"
#include "server/store/usage.h"

namespace rota::server {

class JobService;
class Reservations;
class Accounts;
class ClusterState;

struct AccountingOptions {
  int64_t flush_interval_ms = 60'000;
  int64_t jobs_refresh_ms = 1'000;
  int64_t reservations_refresh_ms = 10'000;
  int64_t people_refresh_ms = 30'000;
  accounting::LedgerOptions ledger;
};

class AccountingService {
 public:
  // All pointers borrowed; any of jobs, reservations, accounts may be null
  // (then nothing is held, reserved, or mapped).
  AccountingService(store::Store* store, ClusterState* cluster, JobService* jobs,
                    Reservations* reservations, Accounts* accounts, const Clock* clock,
                    AccountingOptions options = {});

  // Loads the stored meters.
  Status Start();
  // Accounts samples of `node` (in time order, as the agent sent them).
  void OnSamples(const std::string& node, const std::vector<api::NodeSample>& samples)
      ROTA_EXCLUDES(mu_);
  // Refreshes the facts and flushes when due. Call often (every 250 ms).
  void Tick() ROTA_EXCLUDES(mu_);
  // Refreshes every fact now (tests; after a job or reservation change).
  void RefreshNow() ROTA_EXCLUDES(mu_);
  // Stores everything accounted so far; blocks until committed.
  Status Flush() ROTA_EXCLUDES(mu_);

  // Sums from the store; flushes first when the last flush is over 2 s old, so
  // a report includes the latest samples. InvalidArgument for a bad query.
  Result<std::vector<store::UsageSum>> Query(const store::UsageQuery& query);

  // Totals since start (Prometheus counters).
  struct Totals {
    std::map<std::string, accounting::Amounts> by_user, by_group, by_node;
  };
  Totals TotalsSinceStart() const ROTA_EXCLUDES(mu_);

 private:
  void RefreshJobs(int64_t now_ms) ROTA_EXCLUDES(mu_);
  void RefreshReservations(int64_t now_ms) ROTA_EXCLUDES(mu_);
  // Users and groups, and each node's sample interval.
  void RefreshPeople() ROTA_EXCLUDES(mu_);

  store::Store* const store_;
  ClusterState* const cluster_;
  JobService* const jobs_;
  Reservations* const reservations_;
  Accounts* const accounts_;
  const Clock* const clock_;
  const AccountingOptions options_;

  // Tick's schedule (background thread only).
  int64_t next_jobs_ms_ = 0, next_reservations_ms_ = 0, next_people_ms_ = 0, next_flush_ms_ = 0;
  // Reservations::Version() of the reservations in facts_: a change is read at the
  // next Tick (250 ms), not only every reservations_refresh_ms.
  std::atomic<uint64_t> reservations_version_{0};
  std::atomic<int64_t> last_flush_ms_{0};  // monotonic
  // JobService::HoldingsVersion() of the holdings in facts_ (also read without
  // mu_): samples refresh them first when a run opened or closed since.
  std::atomic<uint64_t> holdings_version_{0};
  bool have_holdings_ ROTA_GUARDED_BY(mu_) = false;
  std::set<std::string> warned_ahead_ ROTA_GUARDED_BY(mu_);  // nodes whose clock is ahead
  static constexpr int64_t kMaxAheadMs = 300'000;

  mutable Mutex mu_;
  accounting::Ledger ledger_ ROTA_GUARDED_BY(mu_);
  std::map<std::string, accounting::NodeFacts> facts_ ROTA_GUARDED_BY(mu_);
  accounting::People people_ ROTA_GUARDED_BY(mu_);
  Mutex flush_mu_ ROTA_ACQUIRED_BEFORE(mu_);  // one flush at a time
};

}  // namespace rota::server
