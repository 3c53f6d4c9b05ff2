#pragma once
// The order of jobs: which pending job goes first, and which running job is
// preempted last. Pure.
//
// kRota (the default; docs/design-sched.md):
//   1. queue priority, higher first (strict tiers set by admins);
//   2. LAS level by attained GPU-time (thresholds in Policy), lower first; a job
//      that waited longer than twice its run time so far is back at level 0;
//   3. score, higher first:
//        weight_fairshare * F + weight_job * job priority
//        + weight_age_per_hour * hours waited
//      F = 2^-(u/s) averaged over user and group, u = the user's (group's)
//      share of all decayed usage, s = its share of all shares of the users
//      (groups) with usage, a share set or a job pending or running (Slurm's
//      classic fair-share factor). Age is unbounded, so a job that waits long
//      enough passes any job of its level and tier: no starvation within them;
//   4. submission time, then id.
// kFifo: submission time. kSjf: oracle duration. kSrtf: oracle remaining time.
// kLas: Tiresias' level, then submission time.

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/snapshot.h"

namespace rota::sched {

// Sort key: smaller orders first.
struct Rank {
  double k0 = 0, k1 = 0, k2 = 0;
  int64_t submitted_ms = 0;
  JobId id = 0;
  bool operator<(const Rank& o) const {
    if (k0 != o.k0) return k0 < o.k0;
    if (k1 != o.k1) return k1 < o.k1;
    if (k2 != o.k2) return k2 < o.k2;
    if (submitted_ms != o.submitted_ms) return submitted_ms < o.submitted_ms;
    return id < o.id;
  }
};

// Usage decayed over `elapsed_ms` with `half_life_ms` (0: no decay).
double Decay(double usage, int64_t elapsed_ms, int64_t half_life_ms);

// Ranks jobs of one snapshot. Totals of usage and shares are computed once,
// factors once per user and group. One thread at a time (it memoises).
class Ranker {
 public:
  explicit Ranker(const Snapshot& s);
  // `gpus`: what the job holds or asks; `running_since_ms`: when its current
  // run started (running jobs), else 0.
  Rank Of(const JobMeta& m, uint32_t gpus, int64_t running_since_ms) const;
  // Fair-share factor in (0, 1]: 1 without usage, 0.5 when usage equals share.
  double FairShareFactor(const std::string& user, const std::string& group) const;
  // The LAS level of a job with this attained GPU-time.
  int Level(double attained_gpu_ms) const;

 private:
  // The factor of `name` in `usage` and `shares`, remembered in `memo` (many
  // jobs share an owner).
  static double Memo(std::unordered_map<std::string, double>& memo,
                     const std::map<std::string, double>& usage,
                     const std::map<std::string, double>& shares, double total_usage,
                     double total_shares, const std::string& name);

  const Snapshot& s_;
  mutable std::unordered_map<std::string, double> user_factor_, group_factor_;
  double total_user_usage_ = 0, total_group_usage_ = 0;
  double total_user_shares_ = 0, total_group_shares_ = 0;
  std::map<std::string, int> queue_priority_;
};

}  // namespace rota::sched
