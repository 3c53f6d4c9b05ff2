#include "server/leadership/lease_rule.h"

#include <algorithm>

namespace rota::server::leadership {

LeaseAction Decide(const LeaseView& row, const std::string& me) {
  const bool expired = row.expires_at_ms <= row.db_now_ms;
  if (expired) return LeaseAction::kAcquire;
  return !me.empty() && row.holder == me ? LeaseAction::kRenew : LeaseAction::kFollow;
}

bool MustStepDown(int64_t last_renewal_sent_ms, int64_t now_ms, const LeaseTiming& timing) {
  return now_ms >= last_renewal_sent_ms + timing.ttl_ms - timing.margin_ms;
}

int64_t NextRenewalMs(int64_t last_renewal_sent_ms, int64_t failed_at_ms, const LeaseTiming& timing) {
  const int64_t regular = last_renewal_sent_ms + timing.renew_interval_ms;
  if (failed_at_ms < 0) return regular;
  return std::min(regular, failed_at_ms + timing.retry_interval_ms);
}

LeaseTiming TimingForTtl(int64_t ttl_ms) {
  LeaseTiming t;
  t.ttl_ms = ttl_ms;
  t.renew_interval_ms = ttl_ms / 2;
  t.retry_interval_ms = ttl_ms / 8;
  t.margin_ms = ttl_ms / 8;
  t.poll_interval_ms = std::min<int64_t>(500, ttl_ms / 8);
  return t;
}

std::string CheckTiming(const LeaseTiming& t) {
  if (t.renew_interval_ms <= 0 || t.retry_interval_ms <= 0 || t.poll_interval_ms <= 0 ||
      t.margin_ms < 0) {
    return "lease intervals must be positive";
  }
  // The renewal after the regular one fails must still be sent before the deadline.
  if (t.renew_interval_ms + t.retry_interval_ms >= t.ttl_ms - t.margin_ms) {
    return "lease ttl (" + std::to_string(t.ttl_ms) + " ms) must exceed renew interval + retry "
           "interval + margin (" + std::to_string(t.renew_interval_ms + t.retry_interval_ms + t.margin_ms) +
           " ms)";
  }
  return "";
}

}  // namespace rota::server::leadership
