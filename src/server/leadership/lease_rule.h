#pragma once
// The leader lease rule (docs/design-store.md, "Leader lease"): pure decisions, times as
// values. Several `rota server`s on one PostgreSQL share one lease row; the SQL that reads
// and changes it is server/store/lease.h, the loop that acts on these decisions
// replicated_server.h.
//
//  - A server holding an unexpired lease renews it every renew_interval_ms (to now + ttl_ms
//    on the database's clock); a server that does not hold it takes it once it has expired
//    (or was never held), with epoch + 1; else it follows the holder.
//  - A leader counts its lease from the moment it *sent* its last successful renewal (local
//    monotonic clock): the database set the expiry later than that, so the leader's own
//    deadline, sent + ttl - margin, passes before the database's expiry. From that deadline
//    on it does no leader-only work (MustStepDown) and exits (fail-stop).
//  - Safety does not rest on these clocks: every leader write transaction checks the lease
//    (holder, epoch, not expired) inside the transaction (store::CheckFence).

#include <cstdint>
#include <string>

namespace rota::server::leadership {

struct LeaseTiming {
  int64_t renew_interval_ms = 2'000;  // a leader renews this often
  int64_t retry_interval_ms = 500;    // ... or this soon after a failed renewal
  int64_t ttl_ms = 4'000;             // a renewal extends the lease to now + ttl
  int64_t margin_ms = 500;            // the leader's deadline is this much before expiry
  int64_t poll_interval_ms = 500;     // a follower reads the lease this often
};

// The timing for a lease of `ttl_ms` (a server's `leader_lease_ttl`): renew every ttl/2,
// retry after ttl/8, deadline ttl/8 before expiry, followers read every min(500 ms, ttl/8).
// The default ttl (4 s) gives exactly LeaseTiming's defaults. REQUIRES: ttl_ms >= 1000.
LeaseTiming TimingForTtl(int64_t ttl_ms);

// The lease row as read, with the database's clock in the same statement.
struct LeaseView {
  std::string holder;  // "" never held
  int64_t epoch = 0;
  int64_t expires_at_ms = 0;
  int64_t db_now_ms = 0;
};

enum class LeaseAction {
  kRenew,    // `me` holds it and it has not expired
  kAcquire,  // it has expired (or was never held): take it
  kFollow,   // another server holds it
};

// What server `me` does with the lease `row`. A row naming `me` that has expired is
// kAcquire: a server never renews an expired lease (the epoch changes).
LeaseAction Decide(const LeaseView& row, const std::string& me);

// True when a leader whose last successful renewal was sent at `last_renewal_sent_ms`
// (monotonic) must stop all leader-only work at `now_ms` (monotonic).
bool MustStepDown(int64_t last_renewal_sent_ms, int64_t now_ms, const LeaseTiming& timing);

// When a leader sends its next renewal: renew_interval after the last successful one, or
// retry_interval after a failed attempt (`failed_at_ms` >= 0), whichever is due.
int64_t NextRenewalMs(int64_t last_renewal_sent_ms, int64_t failed_at_ms, const LeaseTiming& timing);

// Checks that the timing keeps a leader safe and live: renewals fit before the deadline
// at least once again after a failure. Returns "" or what is wrong.
std::string CheckTiming(const LeaseTiming& timing);

}  // namespace rota::server::leadership
