#pragma once
// A deterministic discrete-event replay of a trace through the scheduling core
// (sched::Schedule) with a simulated clock. Jobs run for their trace duration
// once started; a preempted job loses `preempt_cost_ms` of progress and goes
// back to the queue. Events: arrivals, completions and (for preemptive
// least-attained-service orders) the times a running job crosses a level;
// every event time gets one pass (repeated while it preempts).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sched/snapshot.h"
#include "sim/trace.h"

namespace rota::sim {

// The policies `rota simulate` knows: rota's default and the baselines.
//   rota  - rota's order (LAS levels, fair share, age), EASY backfill with what
//           is known (no durations), preemption of preemptible jobs
//   fifo  - strict first come first served
//   easy  - FIFO + EASY backfill with oracle durations as time limits
//   sjf   - shortest job first (oracle), non-preemptive, strict (no backfill)
//   srtf  - shortest remaining time first (oracle), preemptive
//   las   - Tiresias discretised 2D-LAS (3,250 and 7,200 GPU-seconds), preemptive
struct PolicySpec {
  std::string name;
  sched::Policy policy;
  bool oracle = false;  // durations known to the scheduler
};
// InvalidArgument naming the known policies.
Result<PolicySpec> PolicyByName(const std::string& name);
std::vector<std::string> PolicyNames();

struct ReplayOptions {
  // Cluster: `nodes` x `gpus_per_node`, or one pool of `pooled_gpus` (no node
  // layout; a job's GPUs are one task) when pooled_gpus > 0.
  uint32_t nodes = 64;
  uint32_t gpus_per_node = 8;
  uint32_t pooled_gpus = 0;
  int64_t from_ms = 0, to_ms = 0;  // window of submissions [from, to); 0 0: all
  int64_t preempt_cost_ms = 30'000;
  int64_t fairshare_half_life_ms = 7LL * 24 * 3600 * 1000;
  // The queues jobs name in the trace's `queue` column (none or empty: the
  // job's queue is "default"). Empty: the built-in default only. A queue the
  // trace names that is not here runs with the default queue's settings (its
  // own copy: max_gpus is not shared with the default). A job of more GPUs than
  // its queue's max_gpus is dropped (counted in ReplayResult::dropped).
  // Queue priority and max_gpus apply; jobs stay preemptible and get no time
  // limit from their queue (the trace has neither).
  std::vector<sched::Queue> queues;
  // Called at every event of the replay with the jobs arrived so far, the
  // jobs replayed in all, and those in the system (pending or running): a
  // shell may show progress of a long replay. Must not throw.
  std::function<void(size_t arrived, size_t total, size_t in_system)> progress;
};

struct Percentiles {
  double avg = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
};

struct ReplayResult {
  std::string policy;
  // dropped: more GPUs than the cluster has, or than their queue's max_gpus
  size_t jobs = 0, dropped = 0;
  uint32_t gpus = 0;
  Percentiles jct_h, wait_h, bounded_slowdown;
  // The window: [from, to) when asked for, else the first to the last
  // submission replayed. Figures that are undefined are NaN: the utilisations
  // of a window of no length, utilisation_while_waiting when no job waited.
  double window_h = 0;
  double utilisation = 0;  // busy GPU-time in the window / (GPUs x window)
  // Busy GPU-time / (GPUs x time) over the whole replay's moments when some job
  // waited: how much a policy leaves GPUs idle while there is work (GPUs too
  // fragmented for the waiting jobs count as idle). Not biased by the window's
  // end, where policies that finish short jobs first leave long ones running.
  double utilisation_while_waiting = 0;
  // Idle GPU-time while some job waited, in the submission window, over GPUs x
  // window: the share of the window's capacity a policy wasted with work in
  // the queue. utilisation + idle_while_waiting + the idle share while nothing
  // waited = 1; a policy that keeps fewer jobs in the system (short ones
  // first) has less utilisation without wasting more.
  double idle_while_waiting = 0;
  double preemptions_per_job = 0;
  double lost_gpu_hours = 0;  // progress lost to preemptions
  double fairness_jain = 0;   // Jain's index of per-user average slowdown (1 = fair)
  Percentiles pass_ms;        // scheduler pass wall time
  // Pass wall time by the number of pending jobs the pass saw: one entry per
  // bucket that had passes, queues of up to 10, 100, 1,000, 10,000, then more
  // (queue_max 0).
  struct PassBucket {
    size_t queue_max = 0;
    size_t passes = 0;
    Percentiles ms;
  };
  std::vector<PassBucket> pass_ms_by_queue;
  // Per queue of the trace, by name (filled only when jobs name more than one).
  struct QueueResult {
    std::string queue;
    size_t jobs = 0;
    Percentiles jct_h, wait_h;
  };
  std::vector<QueueResult> by_queue;
  size_t passes = 0, max_queue = 0;
  double replay_s = 0;        // wall time of the whole replay
  std::vector<double> jct_sorted_h;  // for the CDF picture
  std::vector<std::pair<double, double>> utilisation_series;  // (hours from start, busy fraction)
};

// InvalidArgument for a cluster without GPUs or a window with no job.
Result<ReplayResult> Replay(const std::vector<TraceJob>& jobs, const PolicySpec& policy,
                            const ReplayOptions& options);

}  // namespace rota::sim
