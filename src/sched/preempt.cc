// Preemption, waiting for jobs being stopped, and defragmentation (pass.h).

#include "sched/pass.h"

namespace rota::sched::detail {
namespace {

// Whether a task of `job` holds a GPU of reservation `r`.
bool OnReservedGpu(const RunningJob& job, const Reservation& r) {
  for (const auto& t : job.tasks) {
    if (t.node != r.node) continue;
    for (uint32_t g : t.gpus) {
      if (std::find(r.gpus.begin(), r.gpus.end(), g) != r.gpus.end()) return true;
    }
  }
  return false;
}

}  // namespace

void Pass::PreemptForReservations() {
  for (const auto& r : s_.reservations) {
    if (r.start_ms > s_.now_ms || r.end_ms <= s_.now_ms || r.owner_idle) continue;
    for (const auto& job : s_.running) {
      if (job.meta.user == r.user || !job.meta.preemptible || !job.stoppable) continue;
      if (preempted_.count(job.meta.id) || !OnReservedGpu(job, r)) continue;
      preempted_.insert(job.meta.id);
      out_.preemptions.push_back(
          {job.meta.id,
           "reservation " + std::to_string(r.id) + " of " + r.user + " on " + r.node +
               (job.started_ms < r.start_ms ? " started" : ": its owner is using the GPUs")});
    }
  }
}

std::string Pass::ReclaimReservations(const PendingJob& job, Shape& shape) {
  if (!idle_owners_.count(job.meta.user)) return "";
  const auto& eligible = EligibleNodes(job, shape);
  std::vector<size_t> taken;  // victims_ indices
  std::vector<const Reservation*> reclaimed;
  for (const auto& r : s_.reservations) {
    if (r.user != job.meta.user || !r.owner_idle || r.start_ms > s_.now_ms || r.end_ms <= s_.now_ms) continue;
    const auto n = free_.Find(r.node);
    if (!n) continue;
    bool may = false;
    for (size_t d = 0; d < job.demands.size(); ++d)
      may = may || (job.demands[d].gpus_per_task > 0 && eligible[d][*n]);
    if (!may) continue;
    const size_t before = taken.size();
    for (size_t k = 0; k < victims_.size(); ++k) {
      const RunningJob& run = s_.running[victims_[k].running];
      if (!victims_[k].taken && run.meta.user != r.user && OnReservedGpu(run, r) &&
          std::find(taken.begin(), taken.end(), k) == taken.end())
        taken.push_back(k);
    }
    if (taken.size() > before) reclaimed.push_back(&r);
  }
  if (taken.empty()) return "";
  // Only when the job fits once they are gone: else they would be stopped for
  // nothing, and borrow the GPUs again at the next pass.
  const GpuMask* blocked = BlockedNow(job);
  FreeMap& trial = trial_;
  trial = free_;
  for (size_t k : taken) GiveRunning(trial, victims_[k].running);
  auto placed = PlaceGang(trial, job.demands, job.spread, blocked, &eligible);
  if (!placed) return "";
  std::string ids;
  for (size_t k : taken) {
    const RunningJob& run = s_.running[victims_[k].running];
    const Reservation* r = nullptr;
    for (const Reservation* c : reclaimed) {
      if (r == nullptr && OnReservedGpu(run, *c)) r = c;
    }
    TakeVictim(k);
    preempted_.insert(run.meta.id);
    out_.preemptions.push_back({run.meta.id, "reservation " + std::to_string(r->id) + " of " + r->user + " on " +
                                                 r->node + ": its owner has a job waiting for the GPUs"});
    ids += (ids.empty() ? "" : ", ") + std::to_string(run.meta.id);
  }
  for (const Reservation* r : reclaimed) out_.reclaimed.push_back(r->id);
  Keep(job, *placed);  // the free GPUs it will use wait for it in this pass
  return ids;
}

void Pass::KeepPlacesOfMovedJobs() {
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

void Pass::CollectVictims() {
  for (size_t i = 0; i < s_.running.size(); ++i) {
    const RunningJob& r = s_.running[i];
    if (!r.meta.preemptible || !r.stoppable || preempted_.count(r.meta.id)) continue;
    const uint32_t gpus = GpusOf(r.tasks);
    victims_.push_back({ranker_.Of(r.meta, gpus, r.started_ms), i, gpus, false,
                        s_.now_ms - r.started_ms < s_.policy.preempt_after_ms});
  }
  // Worst first.
  std::sort(victims_.begin(), victims_.end(),
            [](const Victim& a, const Victim& b) { return b.rank < a.rank; });
}

std::string Pass::WhyStopped(const Rank& rank, const Victim& v) const {
  if (s_.policy.order != Order::kRota) return ", which orders first";
  const JobMeta& victim = s_.running[v.running].meta;
  if (rank.k0 != v.rank.k0) return ", of a higher-priority queue than " + victim.queue;
  if (rank.k1 != v.rank.k1) return ", which has used less GPU time";
  return ": " + victim.user + " has used at least twice their fair share";
}

bool Pass::MayStopOverShare(const PendingJob& job) const {
  return s_.policy.order != Order::kRota || ranker_.FairShareFactor(job.meta.user, job.meta.group) >= 0.5;
}

bool Pass::StopsForOrder(const Rank& rank, bool may_stop_over_share, const Victim& v) const {
  if (s_.policy.order != Order::kRota) return true;
  if (rank.k0 != v.rank.k0) return rank.k0 < v.rank.k0;  // queue tier
  if (rank.k1 != v.rank.k1) return rank.k1 < v.rank.k1;  // LAS level (a long wait's 0 too)
  const JobMeta& victim = s_.running[v.running].meta;
  return may_stop_over_share && ranker_.FairShareFactor(victim.user, victim.group) <= kOverShare;
}

std::string Pass::TryPreempt(const PendingJob& job, Shape& shape, const Rank& rank, bool dry) {
  if (!dry && s_.now_ms - job.meta.queued_ms < s_.policy.preempt_after_ms) return "";
  // What a job may stop depends on its rank and on whether it may stop jobs
  // of users over their share: failures are kept per class (see Shape).
  const bool over_share = MayStopOverShare(job);
  const size_t cls = over_share ? 1 : 0;
  if (shape.no_fit_preempting[cls]) return "";
  const uint32_t need = shape.need;
  if (free_.TotalFree() + VictimGpusAfter(rank) < need) {
    shape.no_fit_preempting = {true, true};
    return "";
  }
  const auto& eligible = EligibleNodes(job, shape);
  size_t big = 0;
  for (size_t d = 1; d < job.demands.size(); ++d) {
    if (job.demands[d].gpus_per_task > job.demands[big].gpus_per_task) big = d;
  }
  if (FindBlockers(job) && IncludesOneOf(shape.no_fit_preempting_blocked[cls], blockers_bits_))
    return "";
  const GpuMask* blocked = BlockerMask();
  FreeMap& trial = trial_;
  trial = free_;
  std::vector<uint64_t> cap(job.demands.size());
  for (size_t d = 0; d < job.demands.size(); ++d)
    cap[d] = Capacity(trial, job.demands[d], eligible[d], blocked);
  std::vector<size_t> added;
  std::optional<std::vector<TaskAlloc>> placed;
  for (size_t k = 0; k < victims_.size(); ++k) {
    const Victim& v = victims_[k];
    if (!(rank < v.rank)) break;
    if (v.taken || v.young || !StopsForOrder(rank, over_share, v)) continue;
    // Only a victim that frees a GPU the job's largest task could use.
    if (!GiveCounted(trial, v.running, job, eligible, blocked, cap, big)) continue;
    added.push_back(k);
    if (trial.TotalFree() < need) continue;
    bool can = true;
    for (size_t d = 0; d < job.demands.size(); ++d) can = can && cap[d] >= job.demands[d].tasks;
    if (!can) continue;
    placed = PlaceGang(trial, job.demands, job.spread, blocked, &eligible);
    if (placed) break;
  }
  if (!placed) {
    // Later jobs of this shape and class, or of a class that may stop fewer
    // jobs, have no more victims and no more free GPUs.
    const bool unblocked_fails = !blocked || !PlaceGang(trial, job.demands, job.spread, nullptr, &eligible);
    for (size_t c = 0; c <= cls; ++c) {
      if (unblocked_fails) {
        shape.no_fit_preempting[c] = true;
      } else {
        shape.no_fit_preempting_blocked[c].push_back(blockers_bits_);
      }
    }
    return "";
  }
  std::string ids;
  for (size_t k : added) {
    const RunningJob& r = s_.running[victims_[k].running];
    if (!SharesGpu(r.tasks, *placed)) continue;
    if (dry) {
      ids += (ids.empty() ? "" : ", ") + std::to_string(r.meta.id);
      continue;
    }
    TakeVictim(k);
    preempted_.insert(r.meta.id);
    out_.preemptions.push_back({r.meta.id, "for job " + std::to_string(job.meta.id) + WhyStopped(rank, victims_[k])});
    ids += (ids.empty() ? "" : ", ") + std::to_string(r.meta.id);
  }
  // The GPUs stay held by the victims until they stop; the free ones the job
  // will use are kept for it in this pass.
  if (!dry) Keep(job, *placed);
  return ids;
}

void Pass::GiveRunning(FreeMap& map, size_t i) const {
  const auto& tasks = s_.running[i].tasks;
  for (size_t ti = 0; ti < tasks.size(); ++ti) {
    if (const size_t n = running_nodes_[i][ti]; n != kNoNode) map.Give(n, tasks[ti]);
  }
}

bool Pass::GiveCounted(FreeMap& trial, size_t i, const PendingJob& job,
                       const std::vector<std::vector<uint8_t>>& eligible, const GpuMask* blocked,
                       std::vector<uint64_t>& cap, size_t big) const {
  bool on_big = false;
  const auto& tasks = s_.running[i].tasks;
  for (size_t ti = 0; ti < tasks.size(); ++ti) {
    const size_t n = running_nodes_[i][ti];
    if (n == kNoNode) continue;
    const uint32_t before = FreeUnblocked(trial, n, blocked);
    trial.Give(n, tasks[ti]);
    const uint32_t after = FreeUnblocked(trial, n, blocked);
    for (size_t d = 0; d < job.demands.size(); ++d) {
      const uint32_t per = job.demands[d].gpus_per_task;
      if (per > 0 && eligible[d][n]) cap[d] += after / per - before / per;
    }
    on_big = on_big || eligible[big][n];
  }
  return on_big;
}

void Pass::Keep(const PendingJob& job, const std::vector<TaskAlloc>& placed) {
  for (const auto& t : placed) {
    if (auto n = free_.Find(t.node)) {
      for (uint32_t g : t.gpus) free_.TakeGpu(*n, g);
    }
  }
  ++free_version_;
  AddHold({job.meta.id, s_.now_ms, EndOf(job, s_.now_ms), true, true, placed, {}});
}

std::string Pass::AwaitStopping(const PendingJob& job, Shape& shape) {
  if (stopping_.empty() || shape.no_fit_stopping) return "";
  // The free GPUs and what the jobs being stopped hold and no waiting job
  // counts on yet.
  FreeMap trial = free_;
  bool any = false;
  for (size_t k = 0; k < stopping_.size(); ++k) {
    const size_t i = stopping_[k];
    const auto& tasks = s_.running[i].tasks;
    for (size_t ti = 0; ti < tasks.size(); ++ti) {
      const size_t n = running_nodes_[i][ti];
      if (n == kNoNode) continue;
      if (!claimed_tasks_[k][ti]) {
        trial.Give(n, tasks[ti]);
        any = true;
        continue;
      }
      for (uint32_t g : tasks[ti].gpus) {
        if (g >= free_.node(n).gpus || claimed_gpus_[free_.Offset(n) + g]) continue;
        trial.GiveGpu(n, g);
        any = true;
      }
    }
  }
  if (!any || shape.need > trial.TotalFree()) return "";
  const GpuMask* blocked = BlockedNow(job);
  auto placed = PlaceGang(trial, job.demands, job.spread, blocked, &EligibleNodes(job, shape));
  if (!placed) {
    if (!blocked) shape.no_fit_stopping = true;
    return "";
  }
  // Claims what the placement uses of each job being stopped.
  std::string ids;
  for (size_t k = 0; k < stopping_.size(); ++k) {
    const size_t i = stopping_[k];
    const RunningJob& r = s_.running[i];
    bool uses = false;
    for (size_t ti = 0; ti < r.tasks.size(); ++ti) {
      const size_t n = running_nodes_[i][ti];
      if (n == kNoNode) continue;
      for (const TaskAlloc& p : *placed) {
        if (p.node != r.tasks[ti].node) continue;
        // A task without GPUs is counted on by a placed task without GPUs on
        // its node (what they share is CPUs, memory and job ports).
        bool shares = r.tasks[ti].gpus.empty() && p.gpus.empty() && !claimed_tasks_[k][ti];
        for (uint32_t g : r.tasks[ti].gpus) {
          if (g >= free_.node(n).gpus || claimed_gpus_[free_.Offset(n) + g]) continue;
          if (std::find(p.gpus.begin(), p.gpus.end(), g) == p.gpus.end()) continue;
          claimed_gpus_[free_.Offset(n) + g] = 1;
          shares = true;
        }
        if (shares) claimed_tasks_[k][ti] = 1;
        uses = uses || shares;
      }
    }
    if (uses) ids += (ids.empty() ? "" : ", ") + std::to_string(r.meta.id);
  }
  if (!ids.empty()) Keep(job, *placed);
  return ids;
}

void Pass::MovedJobBlocked(const RunningJob& r, GpuMask& mask) const {
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

std::string Pass::TryDefragment(const PendingJob& job, Shape& shape) {
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
  auto gpus_of_victim = [this](size_t k) { return victims_[k].gpus; };
  FreeMap trial = free_;
  // Tasks of each demand the trial's free GPUs hold by count: PlaceGang
  // runs only where the counts allow the gang.
  std::vector<uint64_t> cap(job.demands.size());
  for (size_t d = 0; d < job.demands.size(); ++d)
    cap[d] = Capacity(trial, job.demands[d], eligible[d], job_blocked);
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
      GiveCounted(trial, victims_[k].running, job, eligible, job_blocked, cap, 0);
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
  if (moving.empty()) return "";
  std::vector<std::vector<TaskAlloc>> homes;
  GpuMask mask;
  for (size_t k : moving) {
    const RunningJob& r = s_.running[victims_[k].running];
    MovedJobBlocked(r, mask);
    auto home = PlaceGang(rest, r.demands, false, &mask);
    if (!home) return "";
    for (const auto& t : *home) rest.Take(t);
    homes.push_back(std::move(*home));
  }
  defragmented_ = true;
  std::string ids;
  for (size_t k : moving) {
    const RunningJob& r = s_.running[victims_[k].running];
    TakeVictim(k);
    preempted_.insert(r.meta.id);
    out_.preemptions.push_back({r.meta.id,
                                "moved to make room for job " + std::to_string(job.meta.id) +
                                    " (the free GPUs are scattered over nodes); it fits at once "
                                    "elsewhere",
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

}  // namespace rota::sched::detail
