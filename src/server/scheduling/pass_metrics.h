#pragma once
// PassMetrics: what the live server's scheduling passes cost and decided, for
// GET /metrics. Per pass the job service records how long it took to build
// the snapshot, to decide (sched::Schedule) and to act on the decisions, how
// many jobs it saw, and what it started and preempted. Exposed as
//   rota_scheduler_pass_duration_seconds{explained}   histogram, whole pass
//   rota_scheduler_last_pass_seconds{phase}           gauge: snapshot, decide, act
//   rota_scheduler_passes_total{explained}            counter
//   rota_scheduler_pending_jobs, _running_jobs        gauges: what the last pass saw
//   rota_scheduler_starts_total, _preemptions_total   counters
// `explained`: whether the pass gave every waiting job a reason and an
// estimate (every pass while the queue is short, full ticks otherwise).
// Thread-safe.

#include <cstdint>
#include <string>

#include "common/mutex.h"
#include "server/metrics/prometheus_text.h"

namespace rota::server::scheduling {

struct PassRecord {
  bool explained = false;
  uint64_t pending = 0, running = 0;  // jobs the pass saw
  uint64_t starts = 0, preemptions = 0;
  double snapshot_s = 0, decide_s = 0, act_s = 0;
};

class PassMetrics {
 public:
  PassMetrics();
  void Observe(const PassRecord& r);
  // Appends the Prometheus text of these metrics to `out`.
  void AppendText(std::string* out) const;

 private:
  mutable Mutex mu_;
  metrics::Histogram explained_ ROTA_GUARDED_BY(mu_), between_ ROTA_GUARDED_BY(mu_);
  PassRecord last_ ROTA_GUARDED_BY(mu_);
  uint64_t starts_ ROTA_GUARDED_BY(mu_) = 0, preemptions_ ROTA_GUARDED_BY(mu_) = 0;
};

}  // namespace rota::server::scheduling
