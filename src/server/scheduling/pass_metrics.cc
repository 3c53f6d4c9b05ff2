#include "server/scheduling/pass_metrics.h"

namespace rota::server::scheduling {
namespace {
// Pass durations: 0.5 ms to 2.5 s.
const std::vector<double> kPassBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                          0.05,   0.1,   0.25,   0.5,   1.0,  2.5};
}  // namespace

PassMetrics::PassMetrics() : explained_(kPassBuckets), between_(kPassBuckets) {}

void PassMetrics::Observe(const PassRecord& r) {
  MutexLock lock(&mu_);
  (r.explained ? explained_ : between_).Observe(r.snapshot_s + r.decide_s + r.act_s);
  last_ = r;
  starts_ += r.starts;
  preemptions_ += r.preemptions;
}

void PassMetrics::AppendText(std::string* out) const {
  MutexLock lock(&mu_);
  using metrics::Family;
  *out +=
      "# HELP rota_scheduler_pass_duration_seconds Scheduling pass time: snapshot, decisions, "
      "acting on them.\n"
      "# TYPE rota_scheduler_pass_duration_seconds histogram\n";
  explained_.AppendSamples("rota_scheduler_pass_duration_seconds", "explained=\"true\"", out);
  between_.AppendSamples("rota_scheduler_pass_duration_seconds", "explained=\"false\"", out);
  Family passes("rota_scheduler_passes_total", "counter",
                "Scheduling passes, by whether they explained every waiting job.");
  passes.Add("explained=\"true\"", static_cast<double>(explained_.count()));
  passes.Add("explained=\"false\"", static_cast<double>(between_.count()));
  Family phase("rota_scheduler_last_pass_seconds", "gauge",
               "The last scheduling pass's time, by phase.");
  phase.Add("phase=\"snapshot\"", last_.snapshot_s);
  phase.Add("phase=\"decide\"", last_.decide_s);
  phase.Add("phase=\"act\"", last_.act_s);
  Family pending("rota_scheduler_pending_jobs", "gauge", "Jobs waiting, as the last pass saw them.");
  pending.AddPlain(static_cast<double>(last_.pending));
  Family running("rota_scheduler_running_jobs", "gauge",
                 "Jobs holding resources, as the last pass saw them.");
  running.AddPlain(static_cast<double>(last_.running));
  Family starts("rota_scheduler_starts_total", "counter", "Jobs the scheduler started.");
  starts.AddPlain(static_cast<double>(starts_));
  Family preempts("rota_scheduler_preemptions_total", "counter",
                  "Jobs the scheduler preempted or moved.");
  preempts.AddPlain(static_cast<double>(preemptions_));
  for (const Family* f : {&passes, &phase, &pending, &running, &starts, &preempts}) f->AppendTo(out);
}

}  // namespace rota::server::scheduling
