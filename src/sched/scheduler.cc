#include "sched/scheduler.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <set>
#include <string>

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
  std::vector<uint32_t> flat;  // the GPUs as indices into a Pass's flat GPU mask
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

// One pass over one snapshot.
class Pass {
 public:
  explicit Pass(const Snapshot& s) : s_(s), free_(s.nodes), ranker_(s) {
    for (const auto& q : s.queues) queues_[q.name] = &q;
    offset_.resize(free_.size() + 1);
    for (size_t i = 0; i < free_.size(); ++i) offset_[i + 1] = offset_[i] + free_.node(i).gpus;
    res_by_node_.resize(free_.size());
    for (const auto& r : s.reservations) {
      if (r.end_ms <= s.now_ms) continue;
      if (auto n = free_.Find(r.node)) res_by_node_[*n].push_back(&r);
    }
    for (size_t i = 0; i < s.running.size(); ++i) {
      const RunningJob& r = s.running[i];
      for (const auto& t : r.tasks) free_.Take(t);
      const uint32_t gpus = GpusOf(r.tasks);
      user_gpus_[r.meta.user] += gpus;
      if (!r.meta.group.empty()) group_gpus_[r.meta.group] += gpus;
      queue_gpus_[r.meta.queue] += gpus;
      releases_.emplace_back(r.expected_end_ms > 0 ? r.expected_end_ms : kForever, r.tasks);
    }
  }

  Decisions Run() {
    PreemptForReservations();
    if (s_.policy.preempt) CollectVictims();
    std::vector<std::pair<Rank, size_t>> order;
    order.reserve(s_.pending.size());
    for (size_t i = 0; i < s_.pending.size(); ++i) {
      const PendingJob& p = s_.pending[i];
      order.emplace_back(ranker_.Of(p.meta, GpusOf(p.demands), 0), i);
    }
    std::sort(order.begin(), order.end());
    uint32_t position = 0;
    for (const auto& [rank, i] : order) {
      ++position;
      const PendingJob& job = s_.pending[i];
      if (!s_.policy.explain && Exhausted(rank)) break;
      Consider(job, rank, position);
    }
    return std::move(out_);
  }

 private:
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
            {job.meta.id, "reservation " + std::to_string(r.id) + " of " + r.user + " on " + r.node +
                              (job.started_ms < r.start_ms ? " started" : ": its owner is using the GPUs")});
      }
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
    std::sort(victims_.begin(), victims_.end(), [](const Victim& a, const Victim& b) { return b.rank < a.rank; });
  }

  // Whether reservation r keeps `job` off its GPUs for a run in [t, t + d).
  bool ReservationBlocks(const Reservation& r, const PendingJob& job, int64_t t, int64_t end) const {
    if (r.user == job.meta.user) return false;
    if (!Overlaps(t, end, r.start_ms, r.end_ms)) return false;
    if (!job.meta.preemptible) return true;
    if (r.start_ms > t) return false;              // stopped when it starts
    return !(r.owner_idle && t <= s_.now_ms);      // an idle owner's GPUs, now
  }

  int64_t EndOf(const PendingJob& job, int64_t t) const {
    return job.meta.time_limit_ms > 0 ? t + job.meta.time_limit_ms : kForever;
  }

  // The GPUs `job` may not use for a run starting at t: reservations, and the
  // holds of planned jobs (protected ones only, or all when planning).
  std::function<bool(size_t, uint32_t)> Blocked(const PendingJob& job, int64_t t, bool all_holds) const {
    const int64_t end = EndOf(job, t);
    std::shared_ptr<std::vector<uint8_t>> mask;
    auto mark = [&](uint32_t flat) {
      if (!mask) mask = std::make_shared<std::vector<uint8_t>>(offset_.back(), 0);
      (*mask)[flat] = 1;
    };
    for (size_t n = 0; n < res_by_node_.size(); ++n) {
      for (const Reservation* r : res_by_node_[n]) {
        if (!ReservationBlocks(*r, job, t, end)) continue;
        for (uint32_t g : r->gpus) {
          if (offset_[n] + g < offset_[n + 1]) mark(offset_[n] + g);
        }
      }
    }
    for (const auto& h : holds_) {
      if (!(h.protect || all_holds) || h.id == job.meta.id || !Overlaps(t, end, h.start, h.end)) continue;
      for (uint32_t f : h.flat) mark(f);
    }
    if (!mask) return {};
    return [mask, off = &offset_](size_t n, uint32_t g) { return (*mask)[(*off)[n] + g] != 0; };
  }

  void AddHold(Hold h) {
    for (const auto& task : h.tasks) {
      if (auto n = free_.Find(task.node)) {
        for (uint32_t g : task.gpus) h.flat.push_back(offset_[*n] + g);
      }
    }
    holds_.push_back(std::move(h));
  }

  // Why `job` does not fit now, for people.
  std::string WhyNot(const PendingJob& job) const {
    const uint32_t need = GpusOf(job.demands);
    if (need > free_.TotalFree()) {
      return "waiting for " + Plural(need, "GPU") + " (" + std::to_string(free_.TotalFree()) + " free)";
    }
    // Reservations: would it fit without them?
    if (!PlaceGang(free_, job.demands, job.spread, {})) {
      const TaskDemand* big = &job.demands.front();
      for (const auto& d : job.demands) {
        if (d.gpus_per_task > big->gpus_per_task) big = &d;
      }
      auto [node, block] = free_.LargestBlock(*big);
      if (big->gpus_per_task == 0) return "waiting for CPUs or memory on a matching node";
      return "waiting for " + Plural(big->gpus_per_task, "free GPU") + " on one node (largest free block: " +
             std::to_string(block) + (node.empty() ? "" : " on " + node) + ")";
    }
    const int64_t end = EndOf(job, s_.now_ms);
    for (size_t n = 0; n < res_by_node_.size(); ++n) {
      for (const Reservation* r : res_by_node_[n]) {
        if (!ReservationBlocks(*r, job, s_.now_ms, end)) continue;
        return r->node + " reserved by " + r->user + (r->start_ms > s_.now_ms ? " from " + FormatRfc3339(r->start_ms) : "") +
               " until " + FormatRfc3339(r->end_ms);
      }
    }
    for (const auto& h : holds_) {
      if (h.protect) {
        return "the free GPUs are kept for job " + std::to_string(h.id) + " (expected to start " +
               FormatRfc3339(h.start) + ")";
      }
    }
    return "waiting for free GPUs";
  }

  std::string QuotaReason(const PendingJob& job) const {
    const uint32_t need = GpusOf(job.demands);
    auto at_once = [&](const std::map<std::string, Quota>& quotas, const std::map<std::string, uint32_t>& used,
                       const std::string& who, const std::string& kind) -> std::string {
      auto q = quotas.find(who);
      if (q == quotas.end() || q->second.max_gpus == 0) return "";
      auto u = used.find(who);
      const uint32_t in_use = u == used.end() ? 0 : u->second;
      if (in_use + need <= q->second.max_gpus) return "";
      return kind + " quota: " + Plural(in_use, "GPU") + " in use, limit " + std::to_string(q->second.max_gpus);
    };
    auto per_period = [&](const std::map<std::string, Quota>& quotas, const std::map<std::string, double>& used,
                          const std::string& who, const std::string& kind) -> std::string {
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
    if (r.empty() && !job.meta.group.empty()) r = at_once(s_.group_quotas, group_gpus_, job.meta.group, "group " + job.meta.group);
    if (r.empty()) r = per_period(s_.user_quotas, s_.user_period_gpu_hours, job.meta.user, "user");
    if (r.empty() && !job.meta.group.empty()) {
      r = per_period(s_.group_quotas, s_.group_period_gpu_hours, job.meta.group, "group " + job.meta.group);
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
    const uint32_t gpus = GpusOf(tasks);
    user_gpus_[job.meta.user] += gpus;
    if (!job.meta.group.empty()) group_gpus_[job.meta.group] += gpus;
    queue_gpus_[job.meta.queue] += gpus;
  }

  // Preempts running jobs ordered after `rank`, worst first, until `job` fits.
  // Returns the victims' ids ("" when it cannot fit even so).
  std::string TryPreempt(const PendingJob& job, const Rank& rank) {
    if (s_.now_ms - job.meta.queued_ms < s_.policy.preempt_after_ms) return "";
    const uint32_t need = GpusOf(job.demands);
    uint32_t could = free_.TotalFree();
    for (const auto& v : victims_) {
      if (!v.taken && rank < v.rank) could += GpusOf(s_.running[v.running].tasks);
    }
    if (could < need) return "";
    FreeMap trial = free_;
    std::vector<size_t> added;
    std::optional<std::vector<TaskAlloc>> placed;
    const auto blocked = Blocked(job, s_.now_ms, false);
    const TaskDemand* big = &job.demands.front();
    for (const auto& d : job.demands) {
      if (d.gpus_per_task > big->gpus_per_task) big = &d;
    }
    for (size_t k = 0; k < victims_.size(); ++k) {
      const Victim& v = victims_[k];
      if (v.taken || !(rank < v.rank)) continue;
      bool useful = false;  // frees a GPU a task of this job could use
      for (const auto& t : s_.running[v.running].tasks) {
        trial.Give(t);
        auto n = trial.Find(t.node);
        useful = useful || (n && Eligible(trial.node(*n), *big));
      }
      if (!useful) continue;
      added.push_back(k);
      if (trial.TotalFree() < need) continue;
      bool can = true;
      for (const auto& d : job.demands) can = can && trial.RoughCapacity(d) >= d.tasks;
      if (!can) continue;
      placed = PlaceGang(trial, job.demands, job.spread, blocked);
      if (placed) break;
    }
    if (!placed) return "";
    std::string ids;
    for (size_t k : added) {
      Victim& v = victims_[k];
      const RunningJob& r = s_.running[v.running];
      if (!SharesGpu(r.tasks, *placed)) continue;
      v.taken = true;
      preempted_.insert(r.meta.id);
      out_.preemptions.push_back({r.meta.id, "for job " + std::to_string(job.meta.id) + ", which orders first"});
      ids += (ids.empty() ? "" : ", ") + std::to_string(r.meta.id);
    }
    // The GPUs stay held by the victims until they stop; the free ones the job
    // will use are kept for it in this pass.
    for (const auto& t : *placed) {
      if (auto n = free_.Find(t.node)) {
        for (uint32_t g : t.gpus) free_.TakeGpu(*n, g);
      }
    }
    AddHold({job.meta.id, s_.now_ms, EndOf(job, s_.now_ms), true, *placed, {}});
    return ids;
  }

  // The earliest time `job` fits, and where, given what is known of the future.
  std::optional<Hold> Plan(const PendingJob& job) const {
    const uint32_t need = GpusOf(job.demands);
    std::vector<std::pair<int64_t, const std::vector<TaskAlloc>*>> rel;
    for (const auto& [end, tasks] : releases_) {
      if (end != kForever) rel.emplace_back(end, &tasks);
    }
    for (const auto& [end, tasks] : started_) {
      if (end != kForever) rel.emplace_back(end, &tasks);
    }
    std::sort(rel.begin(), rel.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<int64_t> times = {std::max(s_.now_ms, job.not_before_ms)};
    for (const auto& [t, tasks] : rel) times.push_back(t);
    for (const auto& h : holds_) {
      if (h.end != kForever) times.push_back(h.end);
    }
    for (const auto& r : s_.reservations) times.push_back(r.end_ms);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    FreeMap map = free_;
    size_t next = 0;
    for (int64_t t : times) {
      if (t < s_.now_ms || t < job.not_before_ms) continue;
      while (next < rel.size() && rel[next].first <= t) {
        for (const auto& task : *rel[next].second) map.Give(task);
        ++next;
      }
      if (map.TotalFree() < need) continue;
      bool can = true;
      for (const auto& d : job.demands) can = can && map.RoughCapacity(d) >= d.tasks;
      if (!can) continue;
      auto placed = PlaceGang(map, job.demands, job.spread, Blocked(job, t, true));
      if (placed) return Hold{job.meta.id, t, EndOf(job, t), false, std::move(*placed), {}};
    }
    return std::nullopt;
  }

  void Consider(const PendingJob& job, const Rank& rank, uint32_t position) {
    const Policy& p = s_.policy;
    if (!s_.queues.empty() && !queues_.count(job.meta.queue)) {
      return AddWait(job, position, "unknown queue '" + job.meta.queue + "'");
    }
    if (job.not_before_ms > s_.now_ms) {
      return AddWait(job, position, "restarting after a back-off", job.not_before_ms);
    }
    if (std::string q = QuotaReason(job); !q.empty()) return AddWait(job, position, q);
    if (strict_blocked_ != 0) {
      return AddWait(job, position, "behind job " + std::to_string(strict_blocked_) + " (first in line; no backfill)");
    }
    std::optional<std::vector<TaskAlloc>> placed;
    if (GpusOf(job.demands) <= free_.TotalFree()) {
      placed = PlaceGang(free_, job.demands, job.spread, Blocked(job, s_.now_ms, false));
    }
    if (placed) {
      Take(job, *placed);
      started_.emplace_back(EndOf(job, s_.now_ms), *placed);
      out_.starts.push_back({job.meta.id, std::move(*placed)});
      return;
    }
    if (p.preempt) {
      if (std::string victims = TryPreempt(job, rank); !victims.empty()) {
        return AddWait(job, position, "preempting job(s) " + victims + " for it", s_.now_ms);
      }
    }
    // Blocked.
    std::string reason = WhyNot(job);
    auto queue_ahead = blocked_in_queue_[job.meta.queue]++;
    if (queue_ahead > 0) {
      reason += "; behind " + Plural(queue_ahead, "earlier job") + " in queue " + job.meta.queue;
    }
    const bool protect = (p.backfill == Backfill::kEasy && !head_planned_) || p.backfill == Backfill::kConservative;
    if (p.backfill == Backfill::kNone) strict_blocked_ = job.meta.id;
    const bool plan = planned_ < p.plan_depth && (protect || p.explain);
    int64_t estimate = 0;
    if (plan) {
      ++planned_;
      if (auto h = Plan(job)) {
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
  Ranker ranker_;
  std::map<std::string, const Queue*> queues_;
  std::vector<std::vector<const Reservation*>> res_by_node_;
  std::vector<uint32_t> offset_;  // node i's GPUs are [offset_[i], offset_[i+1]) of a flat mask
  std::map<std::string, uint32_t> user_gpus_, group_gpus_, queue_gpus_;
  std::vector<std::pair<int64_t, std::vector<TaskAlloc>>> releases_;  // running jobs' expected ends
  std::vector<std::pair<int64_t, std::vector<TaskAlloc>>> started_;   // started in this pass
  std::vector<Victim> victims_;
  std::set<JobId> preempted_;
  std::vector<Hold> holds_;
  std::map<std::string, uint32_t> blocked_in_queue_;
  JobId strict_blocked_ = 0;
  bool head_planned_ = false;
  uint32_t planned_ = 0;
  Decisions out_;
};

}  // namespace

const char* OrderName(Order o) {
  switch (o) {
    case Order::kRota: return "rota";
    case Order::kFifo: return "fifo";
    case Order::kSjf: return "sjf";
    case Order::kSrtf: return "srtf";
    case Order::kLas: return "las";
  }
  return "?";
}

const char* BackfillName(Backfill b) {
  switch (b) {
    case Backfill::kNone: return "none";
    case Backfill::kSkip: return "skip";
    case Backfill::kEasy: return "easy";
    case Backfill::kConservative: return "conservative";
  }
  return "?";
}

Decisions Schedule(const Snapshot& snapshot) { return Pass(snapshot).Run(); }

}  // namespace rota::sched
