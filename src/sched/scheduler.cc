#include "sched/scheduler.h"

#include <algorithm>
#include <functional>
#include <set>

#include "common/time_util.h"
#include "sched/pass.h"

namespace rota::sched {
namespace detail {

Pass::Pass(const Snapshot& s) : s_(s), free_(s.nodes), trial_(free_), ranker_(s) {
  for (const auto& q : s.queues) queues_[q.name] = &q;
  node_of_flat_.resize(free_.FlatSize());
  for (size_t i = 0; i < free_.size(); ++i) {
    max_node_gpus_ = std::max(max_node_gpus_, free_.node(i).gpus);
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
    reservation_owners_.insert(r.user);
    reservations_.push_back(std::move(a));
  }
  comes_back_.assign(free_.FlatSize(), 0);
  // Each running task's node, found once. A GPU that two running jobs claim
  // (a snapshot should not hold one) is not free until both let go: it is
  // pinned before any release is made, so no end or preemption of one gives
  // it back.
  running_nodes_.resize(s.running.size());
  {
    constexpr size_t kNone = ~size_t{0};
    std::vector<size_t> holder(free_.FlatSize(), kNone);  // a running job that claims it
    for (size_t i = 0; i < s.running.size(); ++i) {
      for (const auto& t : s.running[i].tasks) {
        auto n = free_.Find(t.node);
        running_nodes_[i].push_back(n ? *n : kNoNode);
        if (!n) continue;
        for (uint32_t g : t.gpus) {
          if (g >= free_.node(*n).gpus) continue;
          size_t& h = holder[free_.Offset(*n) + g];
          if (h != kNone && h != i) free_.Pin(*n, g);
          h = i;
        }
      }
    }
  }
  for (size_t i = 0; i < s.running.size(); ++i) {
    const RunningJob& r = s.running[i];
    for (size_t ti = 0; ti < r.tasks.size(); ++ti) {
      const size_t n = running_nodes_[i][ti];
      if (n == kNoNode) continue;
      free_.Take(n, r.tasks[ti]);
      if (r.expected_end_ms > 0)
        releases_.push_back(MakeRelease(r.expected_end_ms, n, r.tasks[ti]));
    }
    if (!r.stoppable) stopping_.push_back(i);
    const uint32_t gpus = GpusOf(r.tasks);
    holdings_.push_back({r.expected_end_ms > 0 ? r.expected_end_ms : kForever, gpus, &r.meta});
    user_gpus_[r.meta.user] += gpus;
    if (!r.meta.group.empty()) group_gpus_[r.meta.group] += gpus;
    queue_gpus_[r.meta.queue] += gpus;
  }
  std::stable_sort(releases_.begin(), releases_.end(),
                   [](const Release& a, const Release& b) { return a.end < b.end; });
  claimed_gpus_.assign(free_.FlatSize(), 0);
  claimed_tasks_.resize(stopping_.size());
  for (size_t k = 0; k < stopping_.size(); ++k)
    claimed_tasks_[k].assign(s.running[stopping_[k]].tasks.size(), 0);
  mask_.assign(free_.FlatSize(), 0);
  now_blocked_.assign(free_.FlatSize(), 0);
}

Decisions Pass::Run() {
  for (const auto& r : s_.reservations) {
    if (r.owner_idle && r.start_ms <= s_.now_ms && s_.now_ms < r.end_ms) idle_owners_.insert(r.user);
  }
  PreemptForReservations();
  KeepPlacesOfMovedJobs();
  if (s_.policy.preempt || !idle_owners_.empty()) CollectVictims();  // victims_: TryPreempt's and ReclaimReservations'

  std::vector<Rank> ranks;
  ranks.reserve(s_.pending.size());
  shape_of_.resize(s_.pending.size());
  std::unordered_map<ShapeOf, size_t, ShapeHash> shapes;
  shapes.reserve(s_.pending.size());
  for (size_t i = 0; i < s_.pending.size(); ++i) {
    const PendingJob& p = s_.pending[i];
    const uint32_t need = GpusOf(p.demands);
    ranks.push_back(ranker_.Of(p.meta, need, 0));
    if (!idle_owners_.empty() && idle_owners_.count(p.meta.user)) ++idle_owner_jobs_left_;
    auto [it, added] = shapes.emplace(ShapeOf{&p}, shapes_.size());
    if (added) {
      shapes_.emplace_back();
      shapes_.back().need = need;
    }
    shape_of_[i] = it->second;
  }
  // Indices in rank order (ties by index: a strict order, so any way of
  // ordering gives the same sequence). Explaining considers every job: sort.
  // Otherwise the walk usually stops early (the cluster is full), so jobs are
  // taken from a heap as needed: O(n + k log n) for the k considered, where a
  // sort of a queue of 20,000 cost most of each pass.
  const auto before = [&ranks](uint32_t a, uint32_t b) {
    return ranks[a] < ranks[b] || (!(ranks[b] < ranks[a]) && a < b);
  };
  const auto after = [&before](uint32_t a, uint32_t b) { return before(b, a); };
  std::vector<uint32_t> order(s_.pending.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  if (s_.policy.explain) {
    std::sort(order.begin(), order.end(), before);
  } else {
    std::make_heap(order.begin(), order.end(), after);
  }
  auto heap_end = order.end();
  for (uint32_t position = 1; position <= order.size(); ++position) {
    uint32_t i;
    if (s_.policy.explain) {
      i = order[position - 1];
    } else {
      std::pop_heap(order.begin(), heap_end, after);
      i = *--heap_end;
    }
    const Rank& rank = ranks[i];
    const PendingJob& job = s_.pending[i];
    if (!s_.policy.explain && Exhausted(rank)) break;
    Consider(job, shapes_[shape_of_[i]], rank, position);
    if (idle_owner_jobs_left_ > 0 && idle_owners_.count(job.meta.user)) --idle_owner_jobs_left_;
  }
  return std::move(out_);
}

std::string Pass::ClosedReason(const PendingJob& job, Shape& shape) {
  const auto& matching = EligibleNodes(job, shape);
  // Whether a task of d fits node n were it idle (GPUs of its model).
  auto holds = [&](size_t n, const TaskDemand& d) { return UsableGpus(free_.node(n), d) >= d.gpus_per_task; };
  for (size_t d = 0; d < job.demands.size(); ++d) {
    bool open = false;  // a schedulable node that could ever hold a task of d
    for (size_t n = 0; n < free_.size() && !open; ++n) open = matching[d][n] && holds(n, job.demands[d]);
    if (open) continue;
    std::string closed;
    size_t more = 0;
    for (size_t n = 0; n < free_.size(); ++n) {
      const Node& node = free_.node(n);
      if (node.schedulable || !Eligible(node, job.demands[d]) || !holds(n, job.demands[d])) continue;
      if (closed.empty()) {
        closed = node.name + (node.unschedulable_reason.empty() ? "" : " (" + node.unschedulable_reason + ")");
      } else {
        ++more;
      }
    }
    if (!closed.empty()) {
      return "waiting for " + closed + (more > 0 ? " or " + std::to_string(more) + " more" : "");
    }
    // Nodes it could use but for its owner's missing Unix account.
    TaskDemand anywhere = job.demands[d];
    anywhere.not_nodes.clear();
    std::string barred;
    more = 0;
    for (size_t n = 0; n < free_.size(); ++n) {
      const Node& node = free_.node(n);
      if (!std::binary_search(job.demands[d].not_nodes.begin(), job.demands[d].not_nodes.end(), node.name) ||
          !Eligible(node, anywhere) || !holds(n, anywhere)) {
        continue;
      }
      if (barred.empty()) {
        barred = node.name;
      } else {
        ++more;
      }
    }
    if (!barred.empty()) {
      return "its owner has no Unix account on " + barred +
             (more > 0 ? " or " + Plural(more, "more node") : "") + " where it could run";
    }
  }
  return "";
}

std::string Pass::WhyNot(const PendingJob& job, Shape& shape) {
  const uint32_t need = shape.need;
  if (!shape.closed) shape.closed = ClosedReason(job, shape);
  if (!shape.closed->empty()) return *shape.closed;
  // Free GPUs it could use: on the nodes (and of the model) it may use when
  // it names nodes, labels or a model.
  const bool restricted = std::any_of(job.demands.begin(), job.demands.end(), [](const TaskDemand& d) {
    return !d.nodes.empty() || !d.not_nodes.empty() || !d.labels.empty() || !d.gpu_model.empty();
  });
  uint64_t usable = free_.TotalFree();
  // (Only when the whole cluster has too few: otherwise the text below, for
  // the largest free block of the nodes it may use, says more.)
  if (restricted && need > usable && usable > 0) {
    if (shape.usable_version != free_version_) {
      shape.usable_version = free_version_;
      const auto& eligible = EligibleNodes(job, shape);
      shape.usable_free = 0;
      for (size_t n = 0; n < free_.size(); ++n) {
        uint32_t most = 0;
        for (size_t d = 0; d < job.demands.size(); ++d) {  // demands with GPUs only
          if (eligible[d][n] && job.demands[d].gpus_per_task > 0)
            most = std::max(most, free_.FreeFor(n, job.demands[d]));
        }
        shape.usable_free += most;
      }
    }
    usable = shape.usable_free;
  }
  if (need > usable) {
    // The model, when every demand names the same one.
    const std::string& model = job.demands.front().gpu_model;
    const bool one_model = std::all_of(job.demands.begin(), job.demands.end(),
                                       [&](const TaskDemand& d) { return d.gpu_model == model; });
    const bool fewer = usable < free_.TotalFree();
    auto on = [&](size_t n) { return !fewer || GpuTaskMayUse(job, shape, n); };
    return "waiting for " + Plural(need, (one_model && !model.empty() ? model + " " : "") + "GPU") + " (" +
           std::to_string(free_.TotalFree()) + " free" +
           (fewer ? ", " + std::to_string(usable) + " of them where it may run" : "") +
           ReservedNote(job, on, one_model ? model : "", fewer ? "those" : "them") + ")";
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
        if (eligible[n] && (best == free_.size() || free_.FreeFor(n, b) > free_.FreeFor(best, b)))
          best = n;
      }
      const uint32_t block = best == free_.size() ? 0 : free_.FreeFor(best, b);
      shape.block_of.reset();
      // A node with the GPUs but too few job ports left (every task takes one).
      std::string portless;
      for (size_t n = 0; n < free_.size() && portless.empty(); ++n) {
        if (eligible[n] && free_.FreeFor(n, b) >= b.gpus_per_task && free_.FreeSlots(n) < b.tasks)
          portless = free_.node(n).name;
      }
      shape.largest_block =
          !portless.empty()
              ? "waiting for a job port (" + portless + " runs as many tasks as it has job ports)"
          : b.gpus_per_task == 0
              ? "waiting for CPUs or memory on a matching node"
              : "waiting for " +
                    Plural(b.gpus_per_task,
                           "free " + (b.gpu_model.empty() ? "" : b.gpu_model + " ") + "GPU") +
                    " on one node" + (b.tasks > 1 ? " for each of " + std::to_string(b.tasks) + " tasks" : "") +
                    (block == 0 ? " (none free on the nodes it may use)"
                                : " (largest free block: " + std::to_string(block) +
                                      (best == free_.size() ? ")" : " on " + free_.node(best).name));
      if (portless.empty() && b.gpus_per_task > 0 && best != free_.size() && block > 0) shape.block_of = {{best, big}};
    }
    if (!shape.block_of) return shape.largest_block;
    // The node's free GPUs another user has reserved: per job (its owner, its end).
    const auto [n, d] = *shape.block_of;
    return shape.largest_block +
           ReservedNote(job, [n = n](size_t k) { return k == n; }, job.demands[d].gpu_model, "them") + ")";
  }
  const int64_t end = EndOf(job, s_.now_ms);
  // The first reservation keeping free GPUs it may use from it.
  for (const auto& a : reservations_) {
    const Reservation* r = a.r;
    if (!HasFreeGpu(a) || !ReservationBlocks(*r, job, s_.now_ms, end) ||
        !GpuTaskMayUse(job, shape, node_of_flat_[a.flat.front()]))
      continue;
    return r->node + " reserved by " + r->user +
           (r->start_ms > s_.now_ms ? " from " + FormatRfc3339(r->start_ms) : "") + " until " +
           FormatRfc3339(r->end_ms);
  }
  // The first protected job holding GPUs on a node this job may use.
  auto on_eligible = [&](const Hold& h) {
    for (const auto& t : h.tasks) {
      auto n = free_.Find(t.node);
      if (n && !t.gpus.empty() && GpuTaskMayUse(job, shape, *n)) return true;
    }
    return false;
  };
  for (const auto& h : holds_) {
    if (h.protect && on_eligible(h)) {
      return "the free GPUs are kept for job " + std::to_string(h.id) + " (expected to start " +
             FormatRfc3339(h.start) + ")";
    }
  }
  return "waiting for free GPUs";
}

std::string Pass::QuotaReason(const PendingJob& job, uint32_t need) const {
  // `group`: whether `who` names a group (else a user), for the reason's text.
  auto kind = [](bool group, const std::string& who) {
    return group ? "group " + who : std::string("user");
  };
  auto at_once = [&](const std::map<std::string, Quota>& quotas,
                     const std::map<std::string, uint32_t>& used, const std::string& who,
                     bool group) -> std::string {
    if (quotas.empty()) return "";
    auto q = quotas.find(who);
    if (q == quotas.end() || q->second.max_gpus == 0) return "";
    auto u = used.find(who);
    const uint32_t in_use = u == used.end() ? 0 : u->second;
    if (in_use + need <= q->second.max_gpus) return "";
    if (need > q->second.max_gpus) {  // lowered below the job since it was submitted
      return kind(group, who) + " quota: the job needs " + Plural(need, "GPU") + " at once; " +
             (group ? "group " + who : "user " + job.meta.user) + " may hold " +
             std::to_string(q->second.max_gpus) + " (it starts only if the quota is raised)";
    }
    return kind(group, who) + " quota: " + Plural(in_use, "GPU") + " in use, limit " +
           std::to_string(q->second.max_gpus);
  };
  auto per_period = [&](const std::map<std::string, Quota>& quotas,
                        const std::map<std::string, double>& used, const std::string& who,
                        bool group) -> std::string {
    if (quotas.empty()) return "";
    auto q = quotas.find(who);
    if (q == quotas.end() || q->second.max_gpu_hours_per_period <= 0) return "";
    auto u = used.find(who);
    const double hours = u == used.end() ? 0 : u->second;
    if (hours < q->second.max_gpu_hours_per_period) return "";
    return kind(group, who) + " quota: " + Hours(hours) + " of " + Hours(q->second.max_gpu_hours_per_period) +
           " GPU-hours used this period";
  };
  std::string r = at_once(s_.user_quotas, user_gpus_, job.meta.user, false);
  if (r.empty() && !job.meta.group.empty())
    r = at_once(s_.group_quotas, group_gpus_, job.meta.group, true);
  if (r.empty()) r = per_period(s_.user_quotas, s_.user_period_gpu_hours, job.meta.user, false);
  if (r.empty() && !job.meta.group.empty())
    r = per_period(s_.group_quotas, s_.group_period_gpu_hours, job.meta.group, true);
  if (r.empty()) {
    auto q = queues_.find(job.meta.queue);
    if (q != queues_.end() && q->second->max_gpus > 0) {
      auto u = queue_gpus_.find(job.meta.queue);
      const uint32_t in_use = u == queue_gpus_.end() ? 0 : u->second;
      if (need > q->second->max_gpus) {
        r = "queue " + job.meta.queue + " limit: the job needs " + Plural(need, "GPU") + " at once; the queue holds " +
            std::to_string(q->second->max_gpus) + " (it starts only if the limit is raised)";
      } else if (in_use + need > q->second->max_gpus) {
        r = "queue " + job.meta.queue + " limit: " + Plural(in_use, "GPU") + " in use, limit " +
            std::to_string(q->second->max_gpus);
      }
    }
  }
  return r;
}

int64_t Pass::QuotaFreeAt(const PendingJob& job, uint32_t need) const {
  auto used_up = [](const std::map<std::string, Quota>& quotas, const std::map<std::string, double>& used,
                    const std::string& who) {
    auto q = quotas.find(who);
    if (q == quotas.end() || q->second.max_gpu_hours_per_period <= 0) return false;
    auto u = used.find(who);
    return u != used.end() && u->second >= q->second.max_gpu_hours_per_period;
  };
  if (used_up(s_.user_quotas, s_.user_period_gpu_hours, job.meta.user)) return kForever;
  if (!job.meta.group.empty() && used_up(s_.group_quotas, s_.group_period_gpu_hours, job.meta.group)) {
    return kForever;
  }
  // When enough of the GPUs held under one limit come back.
  auto freed_at = [&](uint32_t max, const std::map<std::string, uint32_t>& in_use, const std::string& who,
                      const std::function<bool(const JobMeta&)>& counts) -> int64_t {
    if (max == 0) return s_.now_ms;
    if (need > max) return kForever;
    auto u = in_use.find(who);
    const uint32_t held = u == in_use.end() ? 0 : u->second;
    if (held + need <= max) return s_.now_ms;
    uint32_t excess = held + need - max;
    std::vector<std::pair<int64_t, uint32_t>> ends;
    for (const Holding& h : holdings_) {
      if (counts(*h.meta)) ends.emplace_back(h.end, h.gpus);
    }
    std::sort(ends.begin(), ends.end());
    for (const auto& [end, gpus] : ends) {
      if (end == kForever) return kForever;
      excess -= std::min(excess, gpus);
      if (excess == 0) return end;
    }
    return kForever;
  };
  auto limit = [](const std::map<std::string, Quota>& quotas, const std::string& who) -> uint32_t {
    auto q = quotas.find(who);
    return q == quotas.end() ? 0 : q->second.max_gpus;
  };
  int64_t at = freed_at(limit(s_.user_quotas, job.meta.user), user_gpus_, job.meta.user,
                        [&](const JobMeta& m) { return m.user == job.meta.user; });
  if (!job.meta.group.empty()) {
    at = std::max(at, freed_at(limit(s_.group_quotas, job.meta.group), group_gpus_, job.meta.group,
                               [&](const JobMeta& m) { return m.group == job.meta.group; }));
  }
  auto q = queues_.find(job.meta.queue);
  if (q != queues_.end()) {
    at = std::max(at, freed_at(q->second->max_gpus, queue_gpus_, job.meta.queue,
                               [&](const JobMeta& m) { return m.queue == job.meta.queue; }));
  }
  return at;
}

std::string Pass::ReservedNote(const PendingJob& job, const std::function<bool(size_t)>& on,
                               const std::string& model, const std::string& them) {
  if (reservations_.empty() || free_.TotalFree() == 0) return "";
  if (reserved_free_version_ != free_version_) {
    reserved_free_version_ = free_version_;
    reserved_free_ = std::any_of(reservations_.begin(), reservations_.end(),
                                 [&](const ActiveReservation& a) { return HasFreeGpu(a); });
  }
  if (!reserved_free_) return "";
  const int64_t end = EndOf(job, s_.now_ms);
  std::set<uint32_t> counted;         // flat GPU indices
  const Reservation* only = nullptr;  // the one reservation they are in, if one
  bool several = false;
  for (const auto& a : reservations_) {
    // Cheapest first: most reservations have no free GPU (a pass explains
    // thousands of jobs).
    if (!HasFreeGpu(a)) continue;
    const Reservation& r = *a.r;
    const size_t n = node_of_flat_[a.flat.front()];
    if (!ReservationBlocks(r, job, s_.now_ms, end) || !on(n)) continue;
    const Node& node = free_.node(n);
    for (uint32_t f : a.flat) {
      if (!free_.FreeFlat(f)) continue;
      if (!model.empty() && !node.gpu_models.empty() && !ModelMatches(node, f - free_.Offset(n), model)) continue;
      if (!counted.insert(f).second) continue;
      several = several || (only != nullptr && only != &r);
      only = &r;
    }
  }
  if (counted.empty()) return "";
  const std::string head = ", " + std::to_string(counted.size()) + " of " + them + " reserved by ";
  if (several) return head + "others";
  return head + only->user +
         (only->start_ms > s_.now_ms ? " from " + FormatRfc3339(only->start_ms) : " until " + FormatRfc3339(only->end_ms));
}

void Pass::Consider(const PendingJob& job, Shape& shape, const Rank& rank, uint32_t position) {
  const Policy& p = s_.policy;
  if (!s_.queues.empty() && !queues_.count(job.meta.queue)) {
    return AddWait(job, position, "unknown queue '" + job.meta.queue + "'");
  }
  if (auto q = queues_.find(job.meta.queue); q != queues_.end()) {
    // The queue changed since the job was admitted: it waits until it admits it again.
    if (job.queue_refuses_owner) {
      return AddWait(job, position,
                     "queue " + job.meta.queue + " now admits " + q->second->Members() + " only, not " +
                         job.meta.user + " (it starts if the queue admits them again)");
    }
    const int64_t max = q->second->max_time_limit_ms;
    if (max > 0 && (job.meta.time_limit_ms <= 0 || job.meta.time_limit_ms > max)) {
      return AddWait(job, position,
                     (job.meta.time_limit_ms <= 0 ? std::string("no time limit")
                                                  : "time limit " + FormatExactDuration(job.meta.time_limit_ms)) +
                         ": queue " + job.meta.queue + " now allows at most " + FormatExactDuration(max) +
                         " (it starts if the maximum is raised)");
    }
  }
  if (job.not_before_ms > s_.now_ms) {
    return AddWait(job, position, "restarting after a back-off", job.not_before_ms);
  }
  if (std::string q = QuotaReason(job, shape.need); !q.empty()) {
    // Its estimate: where it fits from when its quotas let it (no hold: it
    // keeps nothing from the jobs behind it).
    int64_t estimate = 0;
    if (p.explain && planned_ < p.plan_depth) {
      if (const int64_t at = QuotaFreeAt(job, shape.need); at != kForever) {
        ++planned_;
        if (auto h = Plan(job, shape, at)) estimate = h->start;
      }
    }
    return AddWait(job, position, q, estimate);
  }
  if (strict_blocked_ != 0) {
    return AddWait(
        job, position,
        "behind job " + std::to_string(strict_blocked_) + " (first in line; no backfill)");
  }
  std::optional<std::vector<TaskAlloc>> placed;
  if (shape.need <= free_.TotalFree() && !shape.no_fit_now) {
    const bool any = FindBlockers(job);
    if (!any || !IncludesOneOf(shape.no_fit_now_blocked, blockers_bits_)) {
      const GpuMask* blocked = BlockerMask();
      placed = PlaceGang(free_, job.demands, job.spread, blocked, &EligibleNodes(job, shape));
      if (!placed && !blocked) shape.no_fit_now = true;
      if (!placed && blocked) shape.no_fit_now_blocked.push_back(blockers_bits_);
    }
  }
  if (placed) {
    Take(job, *placed);
    const int64_t end = EndOf(job, s_.now_ms);
    out_.starts.push_back({job.meta.id, std::move(*placed)});
    if (end != kForever) {
      for (const auto& t : out_.starts.back().tasks) {
        auto n = free_.Find(t.node);
        if (!n) continue;
        const Release r = MakeRelease(end, *n, t);
        started_.insert(
            std::upper_bound(started_.begin(), started_.end(), r,
                             [](const Release& a, const Release& b) { return a.end < b.end; }),
            r);
      }
    }
    return;
  }
  // Stopping borrowers of the owner's reservation is a reservation rule, as
  // PreemptForReservations is: it holds with policy preemption off too.
  if (std::string ids = AwaitStopping(job, shape); !ids.empty()) {
    return AddWait(job, position, "waiting for job(s) " + ids + " to stop", s_.now_ms);
  }
  if (std::string ids = ReclaimReservations(job, shape); !ids.empty()) {
    return AddWait(job, position, "stopping job(s) " + ids + " that borrow its owner's reservation", s_.now_ms);
  }
  if (p.preempt) {
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
  // Explaining: a job that will preempt once it has waited long enough says
  // so, and expects to start then (its victims still have to stop). As many
  // as get an estimate (plan_depth): each may look through every victim.
  int64_t preempts_at = 0;
  if (p.explain && p.preempt && planned_ < p.plan_depth && s_.now_ms - job.meta.queued_ms < p.preempt_after_ms) {
    if (std::string would = TryPreempt(job, shape, rank, /*dry=*/true); !would.empty()) {
      preempts_at = job.meta.queued_ms + p.preempt_after_ms;
      reason += "; it preempts job(s) " + would + " at " + FormatRfc3339(preempts_at) + " if still needed";
    }
  }
  auto queue_ahead = blocked_in_queue_[job.meta.queue]++;
  if (queue_ahead > 0 && p.explain) {
    reason += "; behind " + Plural(queue_ahead, "earlier job") + " in queue " + job.meta.queue;
  }
  const bool protect =
      (p.backfill == Backfill::kEasy && EasyProtects(job, shape)) || p.backfill == Backfill::kConservative;
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
    if (protect && p.backfill == Backfill::kEasy) EasyCover(job, shape);
  }
  if (preempts_at > 0 && (estimate == 0 || preempts_at < estimate)) estimate = preempts_at;
  AddWait(job, position, reason, estimate);
}

// Where a job's GPU tasks may run decides its part of the cluster: a task of
// no GPUs (a parameter server) may run anywhere and says nothing about it.
bool Pass::EasyProtects(const PendingJob& job, Shape& shape) {
  if (easy_covered_.empty()) {
    // Nodes no job may use now (drained, unreachable) are nobody's part.
    easy_covered_.assign(free_.size(), 0);
    easy_uncovered_ = 0;
    for (size_t n = 0; n < free_.size(); ++n) {
      easy_covered_[n] = free_.node(n).schedulable ? 0 : 1;
      easy_uncovered_ += easy_covered_[n] ? 0 : 1;
    }
  }
  if (easy_uncovered_ == 0) return false;
  const auto& eligible = EligibleNodes(job, shape);
  for (size_t n = 0; n < free_.size(); ++n) {
    if (easy_covered_[n]) continue;
    for (size_t d = 0; d < eligible.size(); ++d) {
      if (job.demands[d].gpus_per_task > 0 && eligible[d][n]) return true;
    }
  }
  return false;
}

void Pass::EasyCover(const PendingJob& job, Shape& shape) {
  const auto& eligible = EligibleNodes(job, shape);
  for (size_t n = 0; n < free_.size(); ++n) {
    if (easy_covered_[n]) continue;
    for (size_t d = 0; d < eligible.size(); ++d) {
      if (job.demands[d].gpus_per_task == 0 || !eligible[d][n]) continue;
      easy_covered_[n] = 1;
      --easy_uncovered_;
      break;
    }
  }
}

}  // namespace detail

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

Decisions Schedule(const Snapshot& snapshot) { return detail::Pass(snapshot).Run(); }

}  // namespace rota::sched
