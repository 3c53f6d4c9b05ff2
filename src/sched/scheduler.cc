#include "sched/scheduler.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "common/time_util.h"
#include "sched/free_map.h"
#include "sched/order.h"

namespace rota::sched {
namespace {

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

uint32_t GpusOf(const std::vector<TaskDemand>& d) {
  uint32_t n = 0;
  for (const auto& x : d) n += x.tasks * x.gpus_per_task;
  return n;
}

uint32_t GpusOf(const std::vector<TaskAlloc>& t) {
  uint32_t n = 0;
  for (const auto& x : t) n += static_cast<uint32_t>(x.gpus.size());
  return n;
}

std::string Plural(uint64_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// GPUs promised to a blocked job from `start` to `end` (kForever: no limit).
struct Hold {
  JobId id = 0;
  int64_t start = 0, end = kForever;
  bool protect = false;  // later jobs may not take these GPUs before `end`
  std::vector<TaskAlloc> tasks;
  std::vector<uint32_t> flat;  // the GPUs in the FreeMap's flat numbering
};

bool Overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return a0 < b1 && b0 < a1; }

bool SharesGpu(const std::vector<TaskAlloc>& a, const std::vector<TaskAlloc>& b) {
  for (const auto& x : a) {
    for (const auto& y : b) {
      if (x.node != y.node) continue;
      for (uint32_t g : x.gpus) {
        if (std::find(y.gpus.begin(), y.gpus.end(), g) != y.gpus.end()) return true;
      }
    }
  }
  return false;
}

// a - b, not below the smallest int64.
int64_t SubSat(int64_t a, int64_t b) {
  return a < std::numeric_limits<int64_t>::min() + b ? std::numeric_limits<int64_t>::min() : a - b;
}

// A key equal for jobs whose demands and placement mode are equal.
std::string ShapeKey(const PendingJob& j) {
  std::string k(1, j.spread ? 's' : 'p');
  auto add = [&k](const std::string& v) { k += std::to_string(v.size()) + ':' + v; };
  for (const auto& d : j.demands) {
    k += '|' + std::to_string(d.tasks) + ',' + std::to_string(d.gpus_per_task) + ',' +
         std::to_string(d.cpus_per_task) + ',' + std::to_string(d.memory_per_task) + ',';
    add(d.gpu_model);
    for (const auto& [name, value] : d.labels) {
      add(name);
      add(value);
    }
    k += ';';
    for (const auto& n : d.nodes) add(n);
  }
  return k;
}

// What one pass learns about all pending jobs of one shape (same demands,
// same placement mode). Free GPUs only shrink during a pass and preemption
// candidates only get fewer for jobs ordered later, so a shape that does not
// fit (ignoring reservations and kept GPUs) stays so for the rest of the pass.
struct Shape {
  uint32_t need = 0;  // GPUs
  std::vector<std::vector<uint8_t>>
      eligible;             // [demand][node]: schedulable and matching; empty until needed
  bool no_fit_now = false;  // does not fit the free GPUs, blocks ignored
  bool no_fit_preempting =
      false;  // does not fit even with every candidate victim stopped, blocks ignored
  bool no_fit_stopping = false;  // does not fit once the jobs being stopped end, blocks ignored
  bool defrag_tried = false;     // a defragmentation was looked for in this pass
  uint64_t fits_version = ~0ULL;   // free_version_ at which it was seen to fit (blocks ignored)
  uint64_t block_version = ~0ULL;  // free_version_ of largest_block
  std::string largest_block;       // WhyNot's text for "no node holds a task"
};

// One pass over one snapshot.
class Pass {
 public:
  explicit Pass(const Snapshot& s) : s_(s), free_(s.nodes), ranker_(s) {
    for (const auto& q : s.queues) queues_[q.name] = &q;
    node_of_flat_.resize(free_.FlatSize());
    for (size_t i = 0; i < free_.size(); ++i) {
      for (uint32_t g = 0; g < free_.node(i).gpus; ++g)
        node_of_flat_[free_.Offset(i) + g] = static_cast<uint32_t>(i);
    }
    for (const auto& r : s.reservations) {
      if (r.end_ms <= s.now_ms) continue;
      auto n = free_.Find(r.node);
      if (!n) continue;
      ActiveReservation a{&r, {}};
      for (uint32_t g : r.gpus) {
        if (g < free_.node(*n).gpus) a.flat.push_back(free_.Offset(*n) + g);
      }
      reservations_.push_back(std::move(a));
    }
    running_nodes_.resize(s.running.size());
    for (size_t i = 0; i < s.running.size(); ++i) {
      const RunningJob& r = s.running[i];
      for (const auto& t : r.tasks) {
        auto n = free_.Find(t.node);
        running_nodes_[i].push_back(n ? *n : kNoNode);
        if (!n) continue;
        free_.Take(*n, t);
        if (r.expected_end_ms > 0) releases_.push_back({r.expected_end_ms, *n, &t});
      }
      if (!r.stoppable) stopping_.push_back(i);
      const uint32_t gpus = GpusOf(r.tasks);
      user_gpus_[r.meta.user] += gpus;
      if (!r.meta.group.empty()) group_gpus_[r.meta.group] += gpus;
      queue_gpus_[r.meta.queue] += gpus;
    }
    std::stable_sort(releases_.begin(), releases_.end(),
                     [](const Release& a, const Release& b) { return a.end < b.end; });
    stopping_claimed_.assign(stopping_.size(), 0);
    mask_.assign(free_.FlatSize(), 0);
  }

  Decisions Run() {
    PreemptForReservations();
    KeepPlacesOfMovedJobs();
    if (s_.policy.preempt) CollectVictims();
    std::vector<std::pair<Rank, size_t>> order;
    order.reserve(s_.pending.size());
    shape_of_.resize(s_.pending.size());
    std::unordered_map<std::string, size_t> shapes;
    for (size_t i = 0; i < s_.pending.size(); ++i) {
      const PendingJob& p = s_.pending[i];
      const uint32_t need = GpusOf(p.demands);
      order.emplace_back(ranker_.Of(p.meta, need, 0), i);
      auto [it, added] = shapes.emplace(ShapeKey(p), shapes_.size());
      if (added) {
        shapes_.emplace_back();
        shapes_.back().need = need;
      }
      shape_of_[i] = it->second;
    }
    std::sort(order.begin(), order.end());
    uint32_t position = 0;
    for (const auto& [rank, i] : order) {
      ++position;
      const PendingJob& job = s_.pending[i];
      if (!s_.policy.explain && Exhausted(rank)) break;
      Consider(job, shapes_[shape_of_[i]], rank, position);
    }
    return std::move(out_);
  }

 private:
  struct ActiveReservation {
    const Reservation* r;
    std::vector<uint32_t> flat;  // its GPUs, flat
  };
  static constexpr size_t kNoNode = ~size_t{0};
  // A task of a running job, or of one started in this pass, that gives its
  // GPUs back at `end`.
  struct Release {
    int64_t end;
    size_t node;
    const TaskAlloc* task;
  };

  // Nothing later in the order can start or preempt: stop looking (simulator).
  bool Exhausted(const Rank& rank) const {
    if (strict_blocked_ != 0 && !s_.policy.preempt) return true;
    if (free_.TotalFree() > 0) return false;
    if (!s_.policy.preempt) return true;
    for (const auto& v : victims_) {
      if (!v.taken && rank < v.rank) return false;
    }
    return true;
  }

  void AddWait(const PendingJob& job, uint32_t position, std::string reason, int64_t estimate = 0) {
    if (!s_.policy.explain) return;
    out_.waits.push_back(sched::Wait{job.meta.id, std::move(reason), estimate, position});
  }

  // Which nodes may run each demand of a shape (computed once per pass).
  const std::vector<std::vector<uint8_t>>& EligibleNodes(const PendingJob& job,
                                                         Shape& shape) const {
    if (shape.eligible.empty()) {
      shape.eligible.resize(job.demands.size());
      for (size_t d = 0; d < job.demands.size(); ++d) {
        auto& e = shape.eligible[d];
        e.resize(free_.size());
        for (size_t n = 0; n < free_.size(); ++n) {
          e[n] = free_.node(n).schedulable && Eligible(free_.node(n), job.demands[d]) ? 1 : 0;
        }
      }
    }
    return shape.eligible;
  }

  // Tasks of demand d that fit `map` by GPU count alone, on eligible nodes.
  static uint64_t Capacity(const FreeMap& map, const TaskDemand& d,
                           const std::vector<uint8_t>& eligible) {
    if (d.gpus_per_task == 0) return UINT64_MAX;
    uint64_t n = 0;
    for (size_t i = 0; i < map.size(); ++i) {
      if (eligible[i]) n += map.FreeGpus(i) / d.gpus_per_task;
    }
    return n;
  }

  // Preempts others' preemptible jobs on reserved GPUs whose owner is there.
  void PreemptForReservations() {
    for (const auto& r : s_.reservations) {
      if (r.start_ms > s_.now_ms || r.end_ms <= s_.now_ms || r.owner_idle) continue;
      for (const auto& job : s_.running) {
        if (job.meta.user == r.user || !job.meta.preemptible || !job.stoppable) continue;
        if (preempted_.count(job.meta.id)) continue;
        bool on_it = false;
        for (const auto& t : job.tasks) {
          if (t.node != r.node) continue;
          for (uint32_t g : t.gpus) {
            on_it = on_it || std::find(r.gpus.begin(), r.gpus.end(), g) != r.gpus.end();
          }
        }
        if (!on_it) continue;
        preempted_.insert(job.meta.id);
        out_.preemptions.push_back(
            {job.meta.id,
             "reservation " + std::to_string(r.id) + " of " + r.user + " on " + r.node +
                 (job.started_ms < r.start_ms ? " started" : ": its owner is using the GPUs")});
      }
    }
  }

  // Jobs being moved (RunningJob::moving) get a place by their demands, kept
  // from every job of this pass; while one is in flight nothing else moves.
  void KeepPlacesOfMovedJobs() {
    GpuMask mask;
    for (const auto& r : s_.running) {
      if (r.stoppable || !r.moving || r.demands.empty()) continue;
      defragmented_ = true;
      MovedJobBlocked(r, mask);
      auto home = PlaceGang(free_, r.demands, false, &mask);
      if (!home) continue;
      for (const auto& t : *home) free_.Take(t);
      ++free_version_;
    }
  }

  struct Victim {
    Rank rank;
    size_t running;  // index in s_.running
    bool taken = false;
  };
  void CollectVictims() {
    for (size_t i = 0; i < s_.running.size(); ++i) {
      const RunningJob& r = s_.running[i];
      if (!r.meta.preemptible || !r.stoppable || preempted_.count(r.meta.id)) continue;
      victims_.push_back({ranker_.Of(r.meta, GpusOf(r.tasks), r.started_ms), i});
    }
    // Worst first.
    std::sort(victims_.begin(), victims_.end(),
              [](const Victim& a, const Victim& b) { return b.rank < a.rank; });
  }

  // Whether reservation r keeps `job` off its GPUs for a run in [t, end).
  bool ReservationBlocks(const Reservation& r, const PendingJob& job, int64_t t,
                         int64_t end) const {
    if (r.user == job.meta.user) return false;
    if (!Overlaps(t, end, r.start_ms, r.end_ms)) return false;
    if (!job.meta.preemptible) return true;
    if (r.start_ms > t) return false;          // stopped when it starts
    return !(r.owner_idle && t <= s_.now_ms);  // an idle owner's GPUs, now
  }

  // The starts t (as [from, to)) for which reservation r keeps `job` off its
  // GPUs: ReservationBlocks as an interval; from >= to when never.
  std::pair<int64_t, int64_t> ReservationBlockedStarts(const Reservation& r,
                                                       const PendingJob& job) const {
    if (r.user == job.meta.user) return {0, 0};
    if (!job.meta.preemptible) return {HoldBlockedFrom(r.start_ms, job), r.end_ms};
    return {r.owner_idle ? std::max(r.start_ms, s_.now_ms + 1) : r.start_ms, r.end_ms};
  }

  // The first start t at which a run of `job` overlaps something beginning at `start`.
  static int64_t HoldBlockedFrom(int64_t start, const PendingJob& job) {
    if (job.meta.time_limit_ms <= 0) return std::numeric_limits<int64_t>::min();
    return SubSat(start, job.meta.time_limit_ms) + 1;
  }

  int64_t EndOf(const PendingJob& job, int64_t t) const {
    return job.meta.time_limit_ms > 0 ? t + job.meta.time_limit_ms : kForever;
  }

  // The GPUs `job` may not use for a run starting now: reservations, and the
  // GPUs kept for protected planned jobs. Null when none; else valid until the
  // next call.
  const GpuMask* BlockedNow(const PendingJob& job) {
    const int64_t t = s_.now_ms;
    const int64_t end = EndOf(job, t);
    bool any = false;
    std::fill(mask_.begin(), mask_.end(), 0);
    for (const auto& a : reservations_) {
      if (!ReservationBlocks(*a.r, job, t, end)) continue;
      for (uint32_t f : a.flat) mask_[f] = 1;
      any = any || !a.flat.empty();
    }
    for (const auto& h : holds_) {
      if (!h.protect || h.id == job.meta.id || !Overlaps(t, end, h.start, h.end)) continue;
      for (uint32_t f : h.flat) mask_[f] = 1;
      any = any || !h.flat.empty();
    }
    return any ? &mask_ : nullptr;
  }

  void AddHold(Hold h) {
    for (const auto& task : h.tasks) {
      if (auto n = free_.Find(task.node)) {
        for (uint32_t g : task.gpus) {
          if (g < free_.node(*n).gpus) h.flat.push_back(free_.Offset(*n) + g);
        }
      }
    }
    const size_t i = holds_.size();
    holds_.push_back(std::move(h));
    auto by = [this](int64_t Hold::*field) {
      return [this, field](size_t a, size_t b) { return holds_[a].*field < holds_[b].*field; };
    };
    holds_by_start_.insert(
        std::upper_bound(holds_by_start_.begin(), holds_by_start_.end(), i, by(&Hold::start)), i);
    holds_by_end_.insert(
        std::upper_bound(holds_by_end_.begin(), holds_by_end_.end(), i, by(&Hold::end)), i);
  }

  // Whether the job's gang fits the free GPUs now, reservations and kept GPUs
  // ignored. Remembered per shape.
  bool FitsIgnoringBlocks(const PendingJob& job, Shape& shape) {
    if (shape.no_fit_now) return false;
    if (shape.fits_version == free_version_) return true;
    if (shape.need > free_.TotalFree() ||
        !PlaceGang(free_, job.demands, job.spread, nullptr, &EligibleNodes(job, shape))) {
      shape.no_fit_now = true;
      return false;
    }
    shape.fits_version = free_version_;
    return true;
  }

  // Why `job` does not fit now, for people.
  std::string WhyNot(const PendingJob& job, Shape& shape) {
    const uint32_t need = shape.need;
    if (need > free_.TotalFree()) {
      return "waiting for " + Plural(need, "GPU") + " (" + std::to_string(free_.TotalFree()) +
             " free)";
    }
    // Reservations: would it fit without them?
    if (!FitsIgnoringBlocks(job, shape)) {
      if (shape.block_version != free_version_) {
        shape.block_version = free_version_;
        size_t big = 0;
        for (size_t d = 1; d < job.demands.size(); ++d) {
          if (job.demands[d].gpus_per_task > job.demands[big].gpus_per_task) big = d;
        }
        const TaskDemand& b = job.demands[big];
        const auto& eligible = EligibleNodes(job, shape)[big];
        size_t best = free_.size();
        for (size_t n = 0; n < free_.size(); ++n) {
          if (eligible[n] && (best == free_.size() || free_.FreeGpus(n) > free_.FreeGpus(best)))
            best = n;
        }
        const uint32_t block = best == free_.size() ? 0 : free_.FreeGpus(best);
        shape.largest_block =
            b.gpus_per_task == 0
                ? "waiting for CPUs or memory on a matching node"
                : "waiting for " + Plural(b.gpus_per_task, "free GPU") +
                      " on one node (largest free block: " + std::to_string(block) +
                      (best == free_.size() ? "" : " on " + free_.node(best).name) + ")";
      }
      return shape.largest_block;
    }
    const int64_t end = EndOf(job, s_.now_ms);
    for (const auto& a : reservations_) {
      const Reservation* r = a.r;
      if (!ReservationBlocks(*r, job, s_.now_ms, end)) continue;
      return r->node + " reserved by " + r->user +
             (r->start_ms > s_.now_ms ? " from " + FormatRfc3339(r->start_ms) : "") + " until " +
             FormatRfc3339(r->end_ms);
    }
    for (const auto& h : holds_) {
      if (h.protect) {
        return "the free GPUs are kept for job " + std::to_string(h.id) + " (expected to start " +
               FormatRfc3339(h.start) + ")";
      }
    }
    return "waiting for free GPUs";
  }

  std::string QuotaReason(const PendingJob& job, uint32_t need) const {
    auto at_once = [&](const std::map<std::string, Quota>& quotas,
                       const std::map<std::string, uint32_t>& used, const std::string& who,
                       const std::string& kind) -> std::string {
      auto q = quotas.find(who);
      if (q == quotas.end() || q->second.max_gpus == 0) return "";
      auto u = used.find(who);
      const uint32_t in_use = u == used.end() ? 0 : u->second;
      if (in_use + need <= q->second.max_gpus) return "";
      return kind + " quota: " + Plural(in_use, "GPU") + " in use, limit " +
             std::to_string(q->second.max_gpus);
    };
    auto per_period = [&](const std::map<std::string, Quota>& quotas,
                          const std::map<std::string, double>& used, const std::string& who,
                          const std::string& kind) -> std::string {
      auto q = quotas.find(who);
      if (q == quotas.end() || q->second.max_gpu_hours_per_period <= 0) return "";
      auto u = used.find(who);
      const double hours = u == used.end() ? 0 : u->second;
      if (hours < q->second.max_gpu_hours_per_period) return "";
      return kind + " quota: " + std::to_string(static_cast<int64_t>(hours)) + " of " +
             std::to_string(static_cast<int64_t>(q->second.max_gpu_hours_per_period)) +
             " GPU-hours used this period";
    };
    std::string r = at_once(s_.user_quotas, user_gpus_, job.meta.user, "user");
    if (r.empty() && !job.meta.group.empty())
      r = at_once(s_.group_quotas, group_gpus_, job.meta.group, "group " + job.meta.group);
    if (r.empty()) r = per_period(s_.user_quotas, s_.user_period_gpu_hours, job.meta.user, "user");
    if (r.empty() && !job.meta.group.empty()) {
      r = per_period(s_.group_quotas, s_.group_period_gpu_hours, job.meta.group,
                     "group " + job.meta.group);
    }
    if (r.empty()) {
      auto q = queues_.find(job.meta.queue);
      if (q != queues_.end() && q->second->max_gpus > 0) {
        auto u = queue_gpus_.find(job.meta.queue);
        const uint32_t in_use = u == queue_gpus_.end() ? 0 : u->second;
        if (in_use + need > q->second->max_gpus) {
          r = "queue " + job.meta.queue + " limit: " + Plural(in_use, "GPU") + " in use, limit " +
              std::to_string(q->second->max_gpus);
        }
      }
    }
    return r;
  }

  void Take(const PendingJob& job, const std::vector<TaskAlloc>& tasks) {
    for (const auto& t : tasks) free_.Take(t);
    ++free_version_;
    const uint32_t gpus = GpusOf(tasks);
    user_gpus_[job.meta.user] += gpus;
    if (!job.meta.group.empty()) group_gpus_[job.meta.group] += gpus;
    queue_gpus_[job.meta.queue] += gpus;
  }

  // Preempts running jobs ordered after `rank`, worst first, until `job` fits.
  // Returns the victims' ids ("" when it cannot fit even so).
  std::string TryPreempt(const PendingJob& job, Shape& shape, const Rank& rank) {
    if (s_.now_ms - job.meta.queued_ms < s_.policy.preempt_after_ms) return "";
    if (shape.no_fit_preempting) return "";
    const uint32_t need = shape.need;
    uint32_t could = free_.TotalFree();
    for (const auto& v : victims_) {
      if (!v.taken && rank < v.rank) could += GpusOf(s_.running[v.running].tasks);
    }
    if (could < need) {
      shape.no_fit_preempting = true;
      return "";
    }
    const auto& eligible = EligibleNodes(job, shape);
    size_t big = 0;
    for (size_t d = 1; d < job.demands.size(); ++d) {
      if (job.demands[d].gpus_per_task > job.demands[big].gpus_per_task) big = d;
    }
    FreeMap trial = free_;
    std::vector<uint64_t> cap(job.demands.size());
    for (size_t d = 0; d < job.demands.size(); ++d)
      cap[d] = Capacity(trial, job.demands[d], eligible[d]);
    std::vector<size_t> added;
    std::optional<std::vector<TaskAlloc>> placed;
    const GpuMask* blocked = BlockedNow(job);
    for (size_t k = 0; k < victims_.size(); ++k) {
      const Victim& v = victims_[k];
      if (v.taken || !(rank < v.rank)) continue;
      // Only a victim that frees a GPU the job's largest task could use.
      if (!GiveCounted(trial, v.running, job, eligible, cap, big)) continue;
      added.push_back(k);
      if (trial.TotalFree() < need) continue;
      bool can = true;
      for (size_t d = 0; d < job.demands.size(); ++d) can = can && cap[d] >= job.demands[d].tasks;
      if (!can) continue;
      placed = PlaceGang(trial, job.demands, job.spread, blocked, &eligible);
      if (placed) break;
    }
    if (!placed) {
      // Later jobs of this shape have no more victims and no more free GPUs.
      if (!blocked || !PlaceGang(trial, job.demands, job.spread, nullptr, &eligible))
        shape.no_fit_preempting = true;
      return "";
    }
    std::string ids;
    for (size_t k : added) {
      Victim& v = victims_[k];
      const RunningJob& r = s_.running[v.running];
      if (!SharesGpu(r.tasks, *placed)) continue;
      v.taken = true;
      preempted_.insert(r.meta.id);
      out_.preemptions.push_back(
          {r.meta.id, "for job " + std::to_string(job.meta.id) + ", which orders first"});
      ids += (ids.empty() ? "" : ", ") + std::to_string(r.meta.id);
    }
    // The GPUs stay held by the victims until they stop; the free ones the job
    // will use are kept for it in this pass.
    Keep(job, *placed);
    return ids;
  }

  // Gives back, in `map`, the GPUs of running job i.
  void GiveRunning(FreeMap& map, size_t i) const {
    const auto& tasks = s_.running[i].tasks;
    for (size_t ti = 0; ti < tasks.size(); ++ti) {
      if (const size_t n = running_nodes_[i][ti]; n != kNoNode) map.Give(n, tasks[ti]);
    }
  }

  // Gives back, in `trial`, the GPUs of running job i, keeping `cap` (per
  // demand of `job`: tasks the trial's free GPUs hold by count, on eligible
  // nodes) up to date. Returns whether a GPU came back on a node eligible for
  // demand `big`.
  bool GiveCounted(FreeMap& trial, size_t i, const PendingJob& job,
                   const std::vector<std::vector<uint8_t>>& eligible, std::vector<uint64_t>& cap,
                   size_t big) const {
    bool on_big = false;
    const auto& tasks = s_.running[i].tasks;
    for (size_t ti = 0; ti < tasks.size(); ++ti) {
      const size_t n = running_nodes_[i][ti];
      if (n == kNoNode) continue;
      const uint32_t before = trial.FreeGpus(n);
      trial.Give(n, tasks[ti]);
      const uint32_t after = trial.FreeGpus(n);
      for (size_t d = 0; d < job.demands.size(); ++d) {
        const uint32_t per = job.demands[d].gpus_per_task;
        if (per > 0 && eligible[d][n]) cap[d] += after / per - before / per;
      }
      on_big = on_big || eligible[big][n];
    }
    return on_big;
  }

  // Keeps for `job`, in this pass, the free GPUs of a placement it will get
  // once others have stopped.
  void Keep(const PendingJob& job, const std::vector<TaskAlloc>& placed) {
    for (const auto& t : placed) {
      if (auto n = free_.Find(t.node)) {
        for (uint32_t g : t.gpus) free_.TakeGpu(*n, g);
      }
    }
    ++free_version_;
    AddHold({job.meta.id, s_.now_ms, EndOf(job, s_.now_ms), true, placed, {}});
  }

  // A job that fits once the jobs being stopped (preempted or cancelled) have
  // let go of their GPUs waits for them, and the free GPUs it will use are
  // kept for it: it does not pick a second set of victims while the first one
  // stops. Returns the ids of the jobs it waits for ("" when it does not fit).
  std::string AwaitStopping(const PendingJob& job, Shape& shape) {
    if (stopping_.empty() || shape.no_fit_stopping) return "";
    FreeMap trial = free_;
    bool any = false;
    for (size_t k = 0; k < stopping_.size(); ++k) {
      if (stopping_claimed_[k]) continue;
      any = true;
      GiveRunning(trial, stopping_[k]);
    }
    if (!any || shape.need > trial.TotalFree()) return "";
    const GpuMask* blocked = BlockedNow(job);
    auto placed = PlaceGang(trial, job.demands, job.spread, blocked, &EligibleNodes(job, shape));
    if (!placed) {
      if (!blocked) shape.no_fit_stopping = true;
      return "";
    }
    std::string ids;
    for (size_t k = 0; k < stopping_.size(); ++k) {
      const RunningJob& r = s_.running[stopping_[k]];
      if (stopping_claimed_[k] || !SharesGpu(r.tasks, *placed)) continue;
      stopping_claimed_[k] = 1;
      ids += (ids.empty() ? "" : ", ") + std::to_string(r.meta.id);
    }
    if (!ids.empty()) Keep(job, *placed);
    return ids;
  }

  // The GPUs a moved job may not restart on: reservations of others that run
  // now with their owner there, and GPUs kept for protected planned jobs.
  void MovedJobBlocked(const RunningJob& r, GpuMask& mask) const {
    mask.assign(free_.FlatSize(), 0);
    for (const auto& a : reservations_) {
      const Reservation& res = *a.r;
      if (res.user == r.meta.user || res.owner_idle) continue;
      if (res.start_ms > s_.now_ms || res.end_ms <= s_.now_ms) continue;
      for (uint32_t f : a.flat) mask[f] = 1;
    }
    for (const auto& h : holds_) {
      if (!h.protect) continue;
      for (uint32_t f : h.flat) mask[f] = 1;
    }
  }

  // Defragmentation: `job` has waited although enough GPUs are free in
  // total, because they are scattered over nodes. Looks, nodes with the most
  // free GPUs first, for smaller preemptible jobs whose moving lets the gang
  // fit now; moves them only when every one of them fits at once on GPUs free
  // elsewhere. At most one job per pass is helped this way. Returns the moved
  // jobs' ids ("" when no move helps).
  std::string TryDefragment(const PendingJob& job, Shape& shape) {
    const Policy& p = s_.policy;
    if (!p.defragment || defragmented_ || shape.defrag_tried) return "";
    if (s_.now_ms - job.meta.queued_ms < p.preempt_after_ms) return "";
    const uint32_t need = shape.need;
    if (need > free_.TotalFree() || defrag_tries_ >= kDefragTriesPerPass) return "";
    ++defrag_tries_;
    const auto& eligible = EligibleNodes(job, shape);
    GpuMask blocked;
    if (const GpuMask* b = BlockedNow(job)) blocked = *b;
    const GpuMask* job_blocked = blocked.empty() ? nullptr : &blocked;
    // What fails without blocks fails for every job of the shape in this pass.
    if (!job_blocked) shape.defrag_tried = true;
    // The movable jobs on each node, smallest first.
    std::vector<std::vector<size_t>> on_node(free_.size());  // indices into victims_
    for (size_t k = 0; k < victims_.size(); ++k) {
      const RunningJob& r = s_.running[victims_[k].running];
      if (victims_[k].taken || r.demands.empty() || GpusOf(r.tasks) >= need) continue;
      for (size_t n : running_nodes_[victims_[k].running]) {
        if (n != kNoNode && (on_node[n].empty() || on_node[n].back() != k)) on_node[n].push_back(k);
      }
    }
    std::vector<size_t> nodes;
    for (size_t n = 0; n < free_.size(); ++n) {
      bool useful = false;
      for (const auto& e : eligible) useful = useful || e[n];
      if (useful && !on_node[n].empty()) nodes.push_back(n);
    }
    std::stable_sort(nodes.begin(), nodes.end(),
                     [this](size_t a, size_t b) { return free_.FreeGpus(a) > free_.FreeGpus(b); });
    auto gpus_of_victim = [this](size_t k) { return GpusOf(s_.running[victims_[k].running].tasks); };
    FreeMap trial = free_;
    // Tasks of each demand the trial's free GPUs hold by count: PlaceGang
    // runs only where the counts allow the gang.
    std::vector<uint64_t> cap(job.demands.size());
    for (size_t d = 0; d < job.demands.size(); ++d)
      cap[d] = Capacity(trial, job.demands[d], eligible[d]);
    auto counts_allow = [&] {
      if (trial.TotalFree() < need) return false;
      for (size_t d = 0; d < job.demands.size(); ++d) {
        if (cap[d] < job.demands[d].tasks) return false;
      }
      return true;
    };
    std::vector<uint8_t> added(victims_.size(), 0);
    std::vector<size_t> tried;
    std::optional<std::vector<TaskAlloc>> placed;
    for (size_t n : nodes) {
      auto& list = on_node[n];
      std::stable_sort(list.begin(), list.end(),
                       [&](size_t a, size_t b) { return gpus_of_victim(a) < gpus_of_victim(b); });
      for (size_t k : list) {
        if (added[k]) continue;
        added[k] = 1;
        tried.push_back(k);
        GiveCounted(trial, victims_[k].running, job, eligible, cap, 0);
        if (counts_allow()) placed = PlaceGang(trial, job.demands, job.spread, job_blocked, &eligible);
        if (placed) break;
      }
      if (placed) break;
    }
    if (!placed) return "";
    // The jobs to move, and where each restarts: on GPUs free now and not
    // given to the waiting job.
    std::vector<size_t> moving;
    for (size_t k : tried) {
      if (SharesGpu(s_.running[victims_[k].running].tasks, *placed)) moving.push_back(k);
    }
    // GPUs, CPUs and memory once the moved jobs have left and the waiting job
    // has its place; not the GPUs the moved jobs leave.
    FreeMap rest = free_;
    for (size_t k : moving) GiveRunning(rest, victims_[k].running);
    for (const auto& t : *placed) rest.Take(t);
    for (size_t k : moving) {
      const size_t i = victims_[k].running;
      for (size_t ti = 0; ti < s_.running[i].tasks.size(); ++ti) {
        const size_t n = running_nodes_[i][ti];
        if (n == kNoNode) continue;
        for (uint32_t g : s_.running[i].tasks[ti].gpus) rest.TakeGpu(n, g);
      }
    }
    std::vector<size_t> moved;
    std::vector<std::vector<TaskAlloc>> homes;
    GpuMask mask;
    for (size_t k : moving) {
      const RunningJob& r = s_.running[victims_[k].running];
      MovedJobBlocked(r, mask);
      auto home = PlaceGang(rest, r.demands, false, &mask);
      if (!home) return "";
      for (const auto& t : *home) rest.Take(t);
      moved.push_back(k);
      homes.push_back(std::move(*home));
    }
    if (moved.empty()) return "";
    defragmented_ = true;
    std::string ids;
    for (size_t k : moved) {
      Victim& v = victims_[k];
      const RunningJob& r = s_.running[v.running];
      v.taken = true;
      preempted_.insert(r.meta.id);
      out_.preemptions.push_back({r.meta.id,
                                  "moved to make room for job " + std::to_string(job.meta.id) +
                                      " (the free GPUs are scattered over nodes); it is "
                                      "requeued and fits at once elsewhere",
                                  /*move=*/true});
      ids += (ids.empty() ? "" : ", ") + std::to_string(r.meta.id);
    }
    Keep(job, *placed);
    // Where the moved jobs restart stays free for them in this pass.
    for (const auto& home : homes) {
      for (const auto& t : home) free_.Take(t);
    }
    return ids;
  }

  // The earliest time `job` fits, and where, given what is known of the
  // future: running jobs' expected ends, reservations and every planned job's
  // GPUs. One sweep over the times something changes, keeping per node the
  // GPUs free and not blocked at that time; PlaceGang runs only where the
  // counts allow the gang.
  std::optional<Hold> Plan(const PendingJob& job, Shape& shape) {
    const int64_t t0 = std::max(s_.now_ms, job.not_before_ms);
    const auto& eligible = EligibleNodes(job, shape);
    // Reservations that keep the job off their GPUs for starts in [from, to),
    // by from and by to. Holds come sorted (holds_by_start_, holds_by_end_);
    // a hold keeps the job off its GPUs for starts in [HoldBlockedFrom(start), end).
    struct Block {
      int64_t from, to;
      const std::vector<uint32_t>* flat;
    };
    std::vector<Block> res_from, res_to;
    for (const auto& a : reservations_) {
      auto [from, to] = ReservationBlockedStarts(*a.r, job);
      if (from < to) res_from.push_back({from, to, &a.flat});
    }
    std::sort(res_from.begin(), res_from.end(),
              [](const Block& a, const Block& b) { return a.from < b.from; });
    res_to = res_from;
    std::sort(res_to.begin(), res_to.end(),
              [](const Block& a, const Block& b) { return a.to < b.to; });
    const JobId self = job.meta.id;

    FreeMap map = free_;
    std::vector<uint16_t>& blk = blocked_count_;
    blk.assign(map.FlatSize(), 0);
    std::fill(mask_.begin(), mask_.end(), 0);
    std::vector<uint32_t> avail(map.size());  // free and not blocked, per node
    uint64_t total = 0;
    for (size_t n = 0; n < map.size(); ++n) total += avail[n] = map.FreeGpus(n);
    std::vector<uint64_t> cap(job.demands.size());
    for (size_t d = 0; d < job.demands.size(); ++d)
      cap[d] = Capacity(map, job.demands[d], eligible[d]);
    auto set_avail = [&](size_t n, uint32_t value) {
      for (size_t d = 0; d < job.demands.size(); ++d) {
        const uint32_t per = job.demands[d].gpus_per_task;
        if (per > 0 && eligible[d][n]) cap[d] = cap[d] + value / per - avail[n] / per;
      }
      total = total + value - avail[n];
      avail[n] = value;
    };
    auto block = [&](const std::vector<uint32_t>& flat, int delta) {
      for (uint32_t f : flat) {
        const uint32_t n = node_of_flat_[f];
        const bool was = blk[f] > 0;
        blk[f] = static_cast<uint16_t>(blk[f] + delta);
        const bool is = blk[f] > 0;
        mask_[f] = is ? 1 : 0;
        if (was != is && map.Free(n, f - map.Offset(n)))
          set_avail(n, is ? avail[n] - 1 : avail[n] + 1);
      }
    };
    auto usable = [&](size_t n, const TaskAlloc& t) {
      uint32_t k = 0;
      for (uint32_t g : t.gpus)
        k += g < map.node(n).gpus && map.Free(n, g) && blk[map.Offset(n) + g] == 0;
      return k;
    };
    auto release = [&](const Release& r) {
      const uint32_t before = usable(r.node, *r.task);
      map.Give(r.node, *r.task);
      set_avail(r.node, avail[r.node] + usable(r.node, *r.task) - before);
    };
    // Streams of changes, each in time order; advance(t) applies every change
    // at or before t and says whether something became available at t itself
    // (a release or the end of a block).
    size_t next_release = 0, next_started = 0, next_hold_start = 0, next_hold_end = 0,
           next_res_from = 0, next_res_to = 0;
    auto hold_from = [&](size_t i) {
      return HoldBlockedFrom(holds_[holds_by_start_[i]].start, job);
    };
    auto hold_to = [&](size_t i) { return holds_[holds_by_end_[i]].end; };
    auto advance = [&](int64_t t) {
      bool freed = false;
      for (; next_release < releases_.size() && releases_[next_release].end <= t; ++next_release) {
        freed = freed || releases_[next_release].end == t;
        release(releases_[next_release]);
      }
      for (; next_started < started_.size() && started_[next_started].end <= t; ++next_started) {
        freed = freed || started_[next_started].end == t;
        release(started_[next_started]);
      }
      // Blocks begin before ends at the same time are applied, so a count
      // never goes below zero.
      for (; next_hold_start < holds_by_start_.size() && hold_from(next_hold_start) <= t;
           ++next_hold_start) {
        const Hold& h = holds_[holds_by_start_[next_hold_start]];
        if (h.id != self) block(h.flat, 1);
      }
      for (; next_res_from < res_from.size() && res_from[next_res_from].from <= t;
           ++next_res_from) {
        block(*res_from[next_res_from].flat, 1);
      }
      for (; next_hold_end < holds_by_end_.size() && hold_to(next_hold_end) <= t; ++next_hold_end) {
        const Hold& h = holds_[holds_by_end_[next_hold_end]];
        if (h.id == self) continue;
        freed = freed || h.end == t;
        block(h.flat, -1);
      }
      for (; next_res_to < res_to.size() && res_to[next_res_to].to <= t; ++next_res_to) {
        freed = freed || res_to[next_res_to].to == t;
        block(*res_to[next_res_to].flat, -1);
      }
      return freed;
    };
    auto next_time = [&] {
      int64_t t = kForever;
      if (next_release < releases_.size()) t = std::min(t, releases_[next_release].end);
      if (next_started < started_.size()) t = std::min(t, started_[next_started].end);
      if (next_hold_start < holds_by_start_.size()) t = std::min(t, hold_from(next_hold_start));
      if (next_hold_end < holds_by_end_.size()) t = std::min(t, hold_to(next_hold_end));
      if (next_res_from < res_from.size()) t = std::min(t, res_from[next_res_from].from);
      if (next_res_to < res_to.size()) t = std::min(t, res_to[next_res_to].to);
      return t;
    };
    const uint32_t need = shape.need;
    auto fits = [&](int64_t t) -> std::optional<Hold> {
      if (total < need) return std::nullopt;
      for (size_t d = 0; d < job.demands.size(); ++d) {
        if (cap[d] < job.demands[d].tasks) return std::nullopt;
      }
      auto placed = PlaceGang(map, job.demands, job.spread, &mask_, &eligible);
      if (!placed) return std::nullopt;
      return Hold{job.meta.id, t, EndOf(job, t), false, std::move(*placed), {}};
    };
    advance(t0);
    if (auto h = fits(t0)) return h;
    for (;;) {
      const int64_t t = next_time();
      if (t == kForever) return std::nullopt;
      if (advance(t)) {
        if (auto h = fits(t)) return h;
      }
    }
  }

  void Consider(const PendingJob& job, Shape& shape, const Rank& rank, uint32_t position) {
    const Policy& p = s_.policy;
    if (!s_.queues.empty() && !queues_.count(job.meta.queue)) {
      return AddWait(job, position, "unknown queue '" + job.meta.queue + "'");
    }
    if (job.not_before_ms > s_.now_ms) {
      return AddWait(job, position, "restarting after a back-off", job.not_before_ms);
    }
    if (std::string q = QuotaReason(job, shape.need); !q.empty()) return AddWait(job, position, q);
    if (strict_blocked_ != 0) {
      return AddWait(
          job, position,
          "behind job " + std::to_string(strict_blocked_) + " (first in line; no backfill)");
    }
    std::optional<std::vector<TaskAlloc>> placed;
    if (shape.need <= free_.TotalFree() && !shape.no_fit_now) {
      const GpuMask* blocked = BlockedNow(job);
      placed = PlaceGang(free_, job.demands, job.spread, blocked, &EligibleNodes(job, shape));
      if (!placed && !blocked) shape.no_fit_now = true;
    }
    if (placed) {
      Take(job, *placed);
      const int64_t end = EndOf(job, s_.now_ms);
      out_.starts.push_back({job.meta.id, std::move(*placed)});
      if (end != kForever) {
        started_tasks_.push_back(out_.starts.back().tasks);
        for (const auto& t : started_tasks_.back()) {
          auto n = free_.Find(t.node);
          if (!n) continue;
          const Release r{end, *n, &t};
          started_.insert(
              std::upper_bound(started_.begin(), started_.end(), r,
                               [](const Release& a, const Release& b) { return a.end < b.end; }),
              r);
        }
      }
      return;
    }
    if (p.preempt) {
      if (std::string ids = AwaitStopping(job, shape); !ids.empty()) {
        return AddWait(job, position, "waiting for job(s) " + ids + " to stop", s_.now_ms);
      }
      if (std::string victims = TryPreempt(job, shape, rank); !victims.empty()) {
        return AddWait(job, position, "preempting job(s) " + victims + " for it", s_.now_ms);
      }
      if (std::string moved = TryDefragment(job, shape); !moved.empty()) {
        return AddWait(job, position,
                       "moving job(s) " + moved + " to other nodes to make room for it",
                       s_.now_ms);
      }
    }
    // Blocked.
    std::string reason = p.explain ? WhyNot(job, shape) : std::string();
    auto queue_ahead = blocked_in_queue_[job.meta.queue]++;
    if (queue_ahead > 0 && p.explain) {
      reason += "; behind " + Plural(queue_ahead, "earlier job") + " in queue " + job.meta.queue;
    }
    const bool protect =
        (p.backfill == Backfill::kEasy && !head_planned_) || p.backfill == Backfill::kConservative;
    if (p.backfill == Backfill::kNone) strict_blocked_ = job.meta.id;
    const bool plan = planned_ < p.plan_depth && (protect || p.explain);
    int64_t estimate = 0;
    if (plan) {
      ++planned_;
      if (auto h = Plan(job, shape)) {
        estimate = h->start;
        h->protect = protect;
        AddHold(std::move(*h));
      }
      if (p.backfill == Backfill::kEasy) head_planned_ = true;
    }
    AddWait(job, position, reason, estimate);
  }

  const Snapshot& s_;
  FreeMap free_;
  uint64_t free_version_ = 0;  // bumped whenever free_ shrinks
  Ranker ranker_;
  std::map<std::string, const Queue*> queues_;
  std::vector<ActiveReservation> reservations_;  // not ended, on known nodes
  std::vector<uint32_t> node_of_flat_;
  std::map<std::string, uint32_t> user_gpus_, group_gpus_, queue_gpus_;
  std::vector<std::vector<size_t>> running_nodes_;  // [running job][task]: node index or kNoNode
  std::vector<Release> releases_;  // tasks of running jobs with an expected end, by end
  std::vector<Release> started_;   // tasks started in this pass with a time limit, by end
  std::deque<std::vector<TaskAlloc>> started_tasks_;  // what started_ points to
  std::vector<Shape> shapes_;
  std::vector<size_t> shape_of_;  // per pending job
  std::vector<Victim> victims_;
  std::set<JobId> preempted_;
  std::vector<size_t> stopping_;           // running jobs being stopped (indices)
  std::vector<uint8_t> stopping_claimed_;  // per stopping_: a pending job waits for it
  static constexpr uint32_t kDefragTriesPerPass = 4;
  uint32_t defrag_tries_ = 0;
  bool defragmented_ = false;
  std::vector<Hold> holds_;
  std::vector<size_t> holds_by_start_, holds_by_end_;  // indices into holds_
  std::map<std::string, uint32_t> blocked_in_queue_;
  GpuMask mask_;                         // scratch: BlockedNow, Plan
  std::vector<uint16_t> blocked_count_;  // scratch: Plan
  JobId strict_blocked_ = 0;
  bool head_planned_ = false;
  uint32_t planned_ = 0;
  Decisions out_;
};

}  // namespace

const char* OrderName(Order o) {
  switch (o) {
    case Order::kRota:
      return "rota";
    case Order::kFifo:
      return "fifo";
    case Order::kSjf:
      return "sjf";
    case Order::kSrtf:
      return "srtf";
    case Order::kLas:
      return "las";
  }
  return "?";
}

const char* BackfillName(Backfill b) {
  switch (b) {
    case Backfill::kNone:
      return "none";
    case Backfill::kSkip:
      return "skip";
    case Backfill::kEasy:
      return "easy";
    case Backfill::kConservative:
      return "conservative";
  }
  return "?";
}

Decisions Schedule(const Snapshot& snapshot) { return Pass(snapshot).Run(); }

}  // namespace rota::sched
