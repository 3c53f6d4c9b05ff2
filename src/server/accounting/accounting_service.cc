#include "server/accounting/accounting_service.h"

#include <utility>

#include "common/log.h"
#include "server/accounts/accounts.h"
#include "server/nodes/cluster_state.h"
#include "server/jobs/jobs.h"
#include "server/reservations/reservations.h"

namespace rota::server {

AccountingService::AccountingService(store::Store* store, ClusterState* cluster, JobService* jobs,
                                     Reservations* reservations, Accounts* accounts, const Clock* clock,
                                     AccountingOptions options)
    : store_(store),
      cluster_(cluster),
      jobs_(jobs),
      reservations_(reservations),
      accounts_(accounts),
      clock_(clock),
      options_(options),
      ledger_(options.ledger) {}

Status AccountingService::Start() {
  std::map<accounting::MeterKey, accounting::MeterState> meters;
  RETURN_IF_ERROR(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(meters, store::LoadMeters(db));
    return Status::Ok();
  }));
  {
    MutexLock lock(&mu_);
    for (const auto& [key, meter] : meters) ledger_.Restore(key, meter);
  }
  RefreshNow();
  next_flush_ms_ = clock_->MonotonicMs() + options_.flush_interval_ms;
  return Status::Ok();
}

void AccountingService::OnSamples(const std::string& node, const std::vector<api::NodeSample>& samples) {
  // A job started or ended since the holdings were read: read them first, so
  // its first and last samples are its own.
  const int64_t now = clock_->NowMs();
  if (jobs_ != nullptr && jobs_->HoldingsVersion() != holdings_version_.load()) RefreshJobs(now);
  MutexLock lock(&mu_);
  static const accounting::NodeFacts kNone;
  auto it = facts_.find(node);
  const accounting::NodeFacts& facts = it == facts_.end() ? kNone : it->second;
  for (const auto& s : samples) {
    // A clock far ahead would stop the GPU's meter in the future.
    if (s.time_ms > now + kMaxAheadMs) {
      if (!warned_ahead_.count(node)) {
        warned_ahead_.insert(node);
        ROTA_LOG(WARNING) << "accounting: samples of " << node << " are more than 5 minutes ahead of the "
                          << "server's clock; not accounted until the clocks agree";
      }
      continue;
    }
    ledger_.Add(node, s, facts, people_);
  }
}

void AccountingService::RefreshJobs(int64_t now_ms) {
  if (jobs_ == nullptr) return;
  const uint64_t version = jobs_->HoldingsVersion();
  auto holdings = jobs_->Holdings(now_ms - 3'600'000);
  MutexLock lock(&mu_);
  // Another thread may have installed newer holdings meanwhile: keep those.
  if (have_holdings_ && version < holdings_version_.load()) return;
  for (auto& [node, facts] : facts_) facts.holdings.clear();
  for (auto& [node, list] : holdings) facts_[node].holdings = std::move(list);
  holdings_version_ = version;
  have_holdings_ = true;
}

void AccountingService::RefreshReservations(int64_t now_ms) {
  if (reservations_ == nullptr) return;
  // Samples arrive up to a few minutes late (replayed after an outage) and the
  // next refresh is seconds away: cover both sides generously.
  reservations_version_ = reservations_->Version();
  auto list = reservations_->Overlapping(now_ms - 3'600'000, now_ms + 600'000);
  if (!list.ok()) {
    ROTA_LOG(WARNING) << "accounting: reservations not read: " << list.status().message();
    return;
  }
  MutexLock lock(&mu_);
  for (auto& [node, facts] : facts_) facts.reservations.clear();
  for (const auto& r : *list) {
    facts_[r.node].reservations.push_back(accounting::ReservedSpan{r.id, r.owner, r.gpus, r.start_ms, r.end_ms});
  }
}

void AccountingService::RefreshPeople() {
  if (accounts_ == nullptr) return;
  auto users = accounts_->ListUsers();
  auto groups = accounts_->PrimaryGroups();
  if (!users.ok() || !groups.ok()) {
    ROTA_LOG(WARNING) << "accounting: users not read: "
                      << (users.ok() ? groups.status() : users.status()).message();
    return;
  }
  accounting::People people;
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& u : *users) pairs.emplace_back(u.username, u.unix_user.empty() ? u.username : u.unix_user);
  people.user_of_unix = accounting::UsersOfUnixAccounts(pairs);
  people.group_of_user = std::move(*groups);
  std::map<std::string, int64_t> gaps;
  if (cluster_ != nullptr) {
    // An interval longer than three sample intervals is a gap (the node sent nothing).
    for (const auto& n : cluster_->Nodes()) gaps[n.info->name] = 3 * n.info->sample_interval_ms + 1000;
  }
  MutexLock lock(&mu_);
  people_ = std::move(people);
  for (const auto& [node, gap] : gaps) facts_[node].max_gap_ms = gap;
}

void AccountingService::RefreshNow() {
  const int64_t now = clock_->NowMs();
  RefreshPeople();
  RefreshJobs(now);
  RefreshReservations(now);
}

void AccountingService::Tick() {
  const int64_t mono = clock_->MonotonicMs();
  const int64_t now = clock_->NowMs();
  if (mono >= next_people_ms_) {
    RefreshPeople();
    next_people_ms_ = mono + options_.people_refresh_ms;
  }
  if (mono >= next_jobs_ms_) {
    RefreshJobs(now);
    next_jobs_ms_ = mono + options_.jobs_refresh_ms;
  }
  if (mono >= next_reservations_ms_ ||
      (reservations_ != nullptr && reservations_->Version() != reservations_version_)) {
    RefreshReservations(now);
    next_reservations_ms_ = mono + options_.reservations_refresh_ms;
  }
  if (mono >= next_flush_ms_) {
    Status st = Flush();
    if (!st.ok()) ROTA_LOG(WARNING) << "accounting: not stored (kept for the next try): " << st.message();
    next_flush_ms_ = mono + options_.flush_interval_ms;
  }
}

Status AccountingService::Flush() {
  MutexLock flush(&flush_mu_);
  last_flush_ms_ = clock_->MonotonicMs();
  accounting::Ledger::Pending pending;
  {
    MutexLock lock(&mu_);
    pending = ledger_.Take();
  }
  if (pending.empty()) return Status::Ok();
  Status st = store_->Write([&](store::Db& db) { return store::AddUsage(db, pending.rows, pending.meters); });
  if (!st.ok()) {
    MutexLock lock(&mu_);
    ledger_.PutBack(std::move(pending));
  }
  return st;
}

Result<std::vector<store::UsageSum>> AccountingService::Query(const store::UsageQuery& query) {
  if (clock_->MonotonicMs() - last_flush_ms_ > 2000) {
    // The report then lacks the latest seconds; it is still right up to there.
    if (Status st = Flush(); !st.ok()) ROTA_LOG(WARNING) << "accounting: flush before a report failed: " << st.message();
  }
  std::vector<store::UsageSum> out;
  RETURN_IF_ERROR(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::QueryUsage(db, query));
    return Status::Ok();
  }));
  return out;
}

AccountingService::Totals AccountingService::TotalsSinceStart() const {
  MutexLock lock(&mu_);
  return Totals{ledger_.TotalsByUser(), ledger_.TotalsByGroup(), ledger_.TotalsByNode()};
}

}  // namespace rota::server
