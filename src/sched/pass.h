#pragma once
// One scheduling pass over one snapshot (Schedule, scheduler.h): internal to
// rota_sched. Its members are defined in scheduler.cc (the pass, waits and
// their reasons), blockers.cc (what keeps a job off GPUs now), plan.cc
// (estimated starts) and preempt.cc (preemption, jobs being stopped,
// defragmentation).

#include <array>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/free_map.h"
#include "sched/order.h"
#include "sched/snapshot.h"

namespace rota::sched::detail {

inline constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

inline uint32_t GpusOf(const std::vector<TaskDemand>& d) {
  uint32_t n = 0;
  for (const auto& x : d) n += x.tasks * x.gpus_per_task;
  return n;
}

inline uint32_t GpusOf(const std::vector<TaskAlloc>& t) {
  uint32_t n = 0;
  for (const auto& x : t) n += static_cast<uint32_t>(x.gpus.size());
  return n;
}

inline std::string Plural(uint64_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// Hours for a reason: two decimals, or two significant digits below 1, none
// that are zeros ("120", "1.5", "0.59", "0.0083").
inline std::string Hours(double h) {
  int decimals = 2;
  if (h > 0 && h < 1) decimals = std::min(6, 1 - static_cast<int>(std::floor(std::log10(h))));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, h);  // "0.590000"
  std::string out = buf;
  if (out.find('.') != std::string::npos) {
    out.erase(out.find_last_not_of('0') + 1);
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

// GPUs promised to a blocked job from `start` to `end` (kForever: no limit).
struct Hold {
  JobId id = 0;
  int64_t start = 0, end = kForever;
  bool protect = false;  // later jobs may not take these GPUs before `end`
  // Made by Keep: its GPUs are taken from the free map for the pass, or held
  // by jobs being stopped for it that no other placement in this pass gives
  // back (victims taken, GPUs claimed). No placement now can use them, so it
  // blocks only in Plan's sweeps, not in FindBlockers.
  bool kept = false;
  std::vector<TaskAlloc> tasks;
  // Its GPUs in the FreeMap's flat numbering, those that can be free in
  // this pass (AddHold): blocking the others changes nothing.
  std::vector<uint32_t> flat;
};

inline bool Overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return a0 < b1 && b0 < a1; }

inline bool SharesGpu(const std::vector<TaskAlloc>& a, const std::vector<TaskAlloc>& b) {
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
inline int64_t SubSat(int64_t a, int64_t b) {
  return a < std::numeric_limits<int64_t>::min() + b ? std::numeric_limits<int64_t>::min() : a - b;
}

// Pending jobs of one shape: equal demands and placement mode (a hash map
// key that points at the job).
struct ShapeOf {
  const PendingJob* job;
  bool operator==(const ShapeOf& o) const {
    return job->spread == o.job->spread && job->demands == o.job->demands;
  }
};
struct ShapeHash {
  size_t operator()(const ShapeOf& k) const {
    uint64_t h = k.job->spread ? 0x9e3779b97f4a7c15ULL : 0;
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ULL + (h >> 29); };
    for (const auto& d : k.job->demands) {
      mix(d.tasks);
      mix(d.gpus_per_task);
      mix(d.cpus_per_task);
      mix(d.memory_per_task);
      mix(std::hash<std::string>{}(d.gpu_model));
      mix(d.labels.size());
      mix(d.nodes.size());
      mix(d.not_nodes.size());
    }
    return static_cast<size_t>(h);
  }
};

// A set of blockers (Pass::blockers_) as bits, by blocker index.
using BlockerBits = std::vector<uint64_t>;

// Whether `bits` includes one of the sets in `failed` (a set may be shorter
// than `bits`: blockers are only added during a pass).
inline bool IncludesOneOf(const std::vector<BlockerBits>& failed, const BlockerBits& bits) {
  for (const auto& f : failed) {
    bool included = true;
    for (size_t w = 0; w < f.size() && included; ++w)
      included = (f[w] & ~(w < bits.size() ? bits[w] : 0)) == 0;
    if (included) return true;
  }
  return false;
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
  // Does not fit even with every candidate victim stopped, blocks ignored; by
  // class: [0] jobs that may not stop the jobs of users over their share, [1]
  // jobs that may (Pass::MayStopOverShare). A class-1 failure is a class-0 one
  // too (class 0 may stop fewer jobs).
  std::array<bool, 2> no_fit_preempting = {false, false};
  bool no_fit_stopping = false;  // does not fit once the jobs being stopped end, blocks ignored
  bool defrag_tried = false;     // a defragmentation was looked for in this pass
  // Sets of blockers (Pass::blockers_) with which the shape did not fit the
  // free GPUs now / even preempting: free GPUs only shrink and victims only
  // get fewer, and more blockers keep more GPUs away, so a later job of the
  // shape whose blockers include such a set fails as well.
  std::vector<BlockerBits> no_fit_now_blocked;
  std::array<std::vector<BlockerBits>, 2> no_fit_preempting_blocked;  // by class, as no_fit_preempting
  uint64_t fits_version = ~0ULL;   // free_version_ at which it was seen to fit (blocks ignored)
  uint64_t block_version = ~0ULL;  // free_version_ of largest_block
  std::string largest_block;       // WhyNot's text for "no node holds a task"
  // When largest_block names a node's free GPUs (its closing ")" left off):
  // the node and the demand they were counted for.
  std::optional<std::pair<size_t, size_t>> block_of;
  uint64_t usable_version = ~0ULL;  // free_version_ of usable_free
  uint64_t usable_free = 0;         // free GPUs on nodes (and of the model) it may use
  // WhyNot's text when a task group's matching nodes all take no jobs ("" when
  // every group has one); set at the first WhyNot: nodes do not change in a pass.
  std::optional<std::string> closed;
  // What Plan found for jobs of the shape in this pass, in order (one-demand
  // shapes only): the earliest start of a later job that is kept off at
  // least as much (PlanBound).
  struct Planned {
    int64_t t0;           // the sweep's first time
    int64_t limit;        // time limit; INT64_MAX for none
    bool preemptible;
    const std::string* user;
    int64_t start;        // kForever: it never fits
  };
  std::vector<Planned> planned;
};

// One pass over one snapshot: built, Run once, dropped.
class Pass {
 public:
  explicit Pass(const Snapshot& s);

  Decisions Run();

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
    uint32_t node;
    uint32_t gpus_begin, gpus_end;  // its Givable GPUs, flat: release_gpus_[begin, end)
    int64_t cpus;
    uint64_t memory;
  };
  Release MakeRelease(int64_t end, size_t node, const TaskAlloc& task) {
    Release r{end, static_cast<uint32_t>(node), static_cast<uint32_t>(release_gpus_.size()), 0,
              task.cpus, task.memory_bytes};
    for (uint32_t g : task.gpus) {
      if (!free_.Givable(node, g)) continue;
      release_gpus_.push_back(free_.Offset(node) + g);
      comes_back_[free_.Offset(node) + g] = 1;
    }
    r.gpus_end = static_cast<uint32_t>(release_gpus_.size());
    return r;
  }

  // Nothing from `rank` on in the order can start, preempt or reclaim a
  // reservation: stop looking (passes that do not explain).
  bool Exhausted(const Rank& rank) {
    if (strict_blocked_ != 0 && !s_.policy.preempt) return true;
    if (free_.TotalFree() > 0) return false;
    // An idle reservation's owner reclaims its GPUs whatever the order.
    if (idle_owner_jobs_left_ > 0) return false;
    if (!s_.policy.preempt) return true;
    // Worst first: the first run that may still be stopped for order decides
    // (a young one may not: TryPreempt skips it).
    while (first_untaken_ < victims_.size() &&
           (victims_[first_untaken_].taken || victims_[first_untaken_].young))
      ++first_untaken_;
    if (first_untaken_ == victims_.size()) return true;
    const Rank& worst = victims_[first_untaken_].rank;
    if (!(rank < worst)) return true;
    // kRota (StopsForOrder): from the worst one's tier and level on, only a
    // run of that tier and level whose owner is over share may be stopped.
    if (s_.policy.order != Order::kRota || rank.k0 < worst.k0 || (rank.k0 == worst.k0 && rank.k1 < worst.k1))
      return false;
    return !OverShareVictimAtWorstKey();
  }
  // Whether a victim not taken nor young, of the tier and level of the worst
  // one not taken, has an owner over share (remembered per worst one: victims
  // taken since only make the answer conservative).
  bool OverShareVictimAtWorstKey() {
    if (over_share_at_ != first_untaken_) {
      over_share_at_ = first_untaken_;
      over_share_ = false;
      const Rank& worst = victims_[first_untaken_].rank;
      for (size_t k = first_untaken_;
           k < victims_.size() && victims_[k].rank.k0 == worst.k0 && victims_[k].rank.k1 == worst.k1 && !over_share_;
           ++k) {
        const JobMeta& m = s_.running[victims_[k].running].meta;
        over_share_ = !victims_[k].taken && !victims_[k].young &&
                      ranker_.FairShareFactor(m.user, m.group) <= kOverShare;
      }
    }
    return over_share_;
  }

  void AddWait(const PendingJob& job, uint32_t position, std::string reason, int64_t estimate = 0) {
    if (!s_.policy.explain) return;
    out_.waits.push_back(sched::Wait{job.meta.id, std::move(reason), estimate, position});
  }

  // Which nodes may run each demand of a shape (computed once per pass).
  // Whether a task of `job` that holds GPUs may use node n.
  bool GpuTaskMayUse(const PendingJob& job, Shape& shape, size_t n) const {
    const auto& eligible = EligibleNodes(job, shape);
    for (size_t d = 0; d < eligible.size(); ++d) {
      if (job.demands[d].gpus_per_task > 0 && eligible[d][n]) return true;
    }
    return false;
  }
  // Whether one of reservation a's GPUs is free now.
  bool HasFreeGpu(const ActiveReservation& a) const {
    return std::any_of(a.flat.begin(), a.flat.end(), [&](uint32_t f) { return free_.FreeFlat(f); });
  }

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

  // Free GPUs of node n in `map` that `blocked` (may be null) leaves usable.
  static uint32_t FreeUnblocked(const FreeMap& map, size_t n, const GpuMask* blocked) {
    return blocked ? map.FreeUnblocked(n, *blocked) : map.FreeGpus(n);
  }

  // Tasks of demand d that fit `map` by GPU count alone, on eligible nodes,
  // on GPUs `blocked` (may be null) leaves usable: PlaceGang cannot place
  // more.
  static uint64_t Capacity(const FreeMap& map, const TaskDemand& d,
                           const std::vector<uint8_t>& eligible, const GpuMask* blocked = nullptr) {
    if (d.gpus_per_task == 0) return UINT64_MAX;
    uint64_t n = 0;
    for (size_t i = 0; i < map.size(); ++i) {
      if (eligible[i] && map.FreeGpus(i) >= d.gpus_per_task)
        n += FreeUnblocked(map, i, blocked) / d.gpus_per_task;
    }
    return n;
  }

  // Preempts others' preemptible jobs on reserved GPUs whose owner is there.
  void PreemptForReservations();

  // Jobs being moved (RunningJob::moving) get a place by their demands, kept
  // from every job of this pass; while one is in flight nothing else moves.
  void KeepPlacesOfMovedJobs();

  struct Victim {
    Rank rank;
    size_t running;  // index in s_.running
    uint32_t gpus;   // it holds
    bool taken = false;
    // Its run began less than preempt_after_ms ago: not stopped for order (a
    // queue of many jobs would stop each run before it made any progress).
    bool young = false;
  };
  void CollectVictims();
  // Whether a job ranked `rank` may stop victim `v` (that it orders before)
  // for order. Any such victim for every policy but kRota. Under kRota
  // ordering first is not enough, else jobs of one tier and level whose
  // owners' fair-share factors drift past each other as they run take turns
  // stopping each other: a job stops another only from a higher queue tier or
  // a lower LAS level (the level 0 a long wait lends included), and in the
  // same tier and level only when the victim's owner is clearly over share
  // (factor <= kOverShare: it used twice its share) and the job may stop such
  // jobs (`may_stop_over_share`). Job priority only orders: a user cannot
  // stop others' jobs by raising their own; queues are the admins' tool.
  bool StopsForOrder(const Rank& rank, bool may_stop_over_share, const Victim& v) const;
  // The rule by which StopsForOrder let a job ranked `rank` stop `v`, for the
  // preemption's reason: ", of a higher-priority queue than Q", ", which has
  // used less GPU time", ": U has used at least twice their fair share"; for
  // other policies ", which orders first".
  std::string WhyStopped(const Rank& rank, const Victim& v) const;
  static constexpr double kOverShare = 0.25;
  // kRota: whether the job's owner is not over its share (factor >= 0.5), so
  // it may stop same-level jobs of users clearly over theirs. True for the
  // other policies (the class has no meaning there).
  bool MayStopOverShare(const PendingJob& job) const;

  // The GPUs of the victims not taken that are ordered after `rank`: those a
  // job of that rank may preempt. Amortised O(1) while the ranks asked come
  // in order, as the pass considers jobs.
  uint64_t VictimGpusAfter(const Rank& rank) {
    while (victims_after_ < victims_.size() && rank < victims_[victims_after_].rank) {
      if (!victims_[victims_after_].taken) victim_gpus_after_ += victims_[victims_after_].gpus;
      ++victims_after_;
    }
    while (victims_after_ > 0 && !(rank < victims_[victims_after_ - 1].rank)) {
      --victims_after_;
      if (!victims_[victims_after_].taken) victim_gpus_after_ -= victims_[victims_after_].gpus;
    }
    return victim_gpus_after_;
  }

  // Marks victim k as preempted (or moved) in this pass.
  void TakeVictim(size_t k) {
    victims_[k].taken = true;
    if (k < victims_after_) victim_gpus_after_ -= victims_[k].gpus;
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

  // What keeps `job` off GPUs for a run starting now: reservations, and the
  // GPUs kept for protected planned jobs. Sets blockers_ (see there), so that
  // callers can look up what failed with these blocks before they ask for the
  // mask. Returns whether anything blocks.
  bool FindBlockers(const PendingJob& job);

  // The GPUs blockers_ cover; null when none. Valid until the next call.
  const GpuMask* BlockerMask();

  // The GPUs `job` may not use for a run starting now (FindBlockers, then
  // BlockerMask).
  const GpuMask* BlockedNow(const PendingJob& job) {
    FindBlockers(job);
    return BlockerMask();
  }

  // Adds a hold of this pass (plan.cc).
  void AddHold(Hold h);

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
  std::string WhyNot(const PendingJob& job, Shape& shape);
  // "waiting for NODE (why) or N more" when a task group of the job matches only
  // nodes that take no jobs now (drained, unreachable); "" otherwise.
  std::string ClosedReason(const PendingJob& job, Shape& shape);

  std::string QuotaReason(const PendingJob& job, uint32_t need) const;
  // When `job` (`need` GPUs) would be within its user's, group's and queue's
  // GPUs-at-once limits, counting the ends expected of their running jobs
  // (those started in this pass included); now when it is; kForever when a
  // job without a time limit must end first, the job needs more than a limit,
  // or a GPU-hours quota is used up (its period's end is not known here).
  int64_t QuotaFreeAt(const PendingJob& job, uint32_t need) const;

  // ", N of <them> reserved by U until T" (or "by others") for the free GPUs
  // that others' reservations keep from `job` now, on the nodes `on` accepts
  // and of `model` ("": any); "" when none.
  std::string ReservedNote(const PendingJob& job, const std::function<bool(size_t)>& on,
                           const std::string& model, const std::string& them);

  void Take(const PendingJob& job, const std::vector<TaskAlloc>& tasks) {
    for (const auto& t : tasks) free_.Take(t);
    ++free_version_;
    const uint32_t gpus = GpusOf(tasks);
    holdings_.push_back({EndOf(job, s_.now_ms), gpus, &job.meta});
    user_gpus_[job.meta.user] += gpus;
    if (!job.meta.group.empty()) group_gpus_[job.meta.group] += gpus;
    queue_gpus_[job.meta.queue] += gpus;
  }

  // A reservation owner's job that does not fit: the preemptible jobs of
  // others on the GPUs of the owner's idle running reservations, on nodes the
  // job may use, are stopped at once (the owner is back, as when they start a
  // process there), whatever they order. Returns their ids ("" none).
  std::string ReclaimReservations(const PendingJob& job, Shape& shape);

  // Preempts running jobs ordered after `rank`, worst first, until `job` fits.
  // Returns the victims' ids ("" when it cannot fit even so).
  // `dry`: whatever the job's wait, only find the victims (nothing is taken or
  // kept): whom it would stop now, had it waited preempt_after_ms.
  std::string TryPreempt(const PendingJob& job, Shape& shape, const Rank& rank, bool dry = false);

  // Gives back, in `map`, the GPUs of running job i.
  void GiveRunning(FreeMap& map, size_t i) const;

  // Gives back, in `trial`, the GPUs of running job i, keeping `cap` (per
  // demand of `job`: Capacity of the trial with `blocked`) up to date.
  // Returns whether a GPU came back on a node eligible for demand `big`.
  bool GiveCounted(FreeMap& trial, size_t i, const PendingJob& job,
                   const std::vector<std::vector<uint8_t>>& eligible, const GpuMask* blocked,
                   std::vector<uint64_t>& cap, size_t big) const;

  // Keeps for `job`, in this pass, the free GPUs of a placement it will get
  // once others have stopped.
  void Keep(const PendingJob& job, const std::vector<TaskAlloc>& placed);

  // A job that fits once the jobs being stopped (preempted or cancelled) have
  // let go of their GPUs waits for them, and the free GPUs it will use are
  // kept for it: it does not pick a second set of victims while the first one
  // stops. What it will use of theirs is claimed GPU by GPU: another waiting
  // job may count on the rest (a task's CPUs, memory and job port only while
  // none of it is claimed). Returns the ids of the jobs it waits for ("" when
  // it does not fit).
  std::string AwaitStopping(const PendingJob& job, Shape& shape);

  // The GPUs a moved job may not restart on: reservations of others that run
  // now with their owner there, and GPUs kept for protected planned jobs.
  void MovedJobBlocked(const RunningJob& r, GpuMask& mask) const;

  // Defragmentation: `job` has waited although enough GPUs are free in
  // total, because they are scattered over nodes. Looks, nodes with the most
  // free GPUs first, for smaller preemptible jobs whose moving lets the gang
  // fit now; moves them only when every one of them fits at once on GPUs free
  // elsewhere. At most one job per pass is helped this way. Returns the moved
  // jobs' ids ("" when no move helps).
  std::string TryDefragment(const PendingJob& job, Shape& shape);

  // The earliest time `job` fits, and where, given what is known of the
  // future: running jobs' expected ends, reservations and every planned job's
  // GPUs. One sweep over the times something changes, keeping per node the
  // GPUs free and not blocked at that time; PlaceGang runs only where the
  // counts allow the gang. Not before `not_before` (a quota's release).
  std::optional<Hold> Plan(const PendingJob& job, Shape& shape, int64_t not_before = 0);

  // The earliest time `job` can fit, known from the jobs of its shape
  // planned before it in this pass (Shape::planned), or t0; kForever when it
  // never fits. A job planned later sees every hold the earlier one saw
  // (holds are only added), fewer free GPUs, CPUs and memory at every time
  // (they are only taken), and is kept off at least as long by each hold and
  // reservation when its time limit is no shorter, it is preemptible only if
  // the earlier one was, and it owns a reservation only if it has the
  // earlier one's user. Then whatever fits it at a time fits the earlier
  // one there, whose sweep looked at every time something was freed and
  // found nothing before its start. That needs placement to succeed on more
  // whenever it succeeds on less, which holds for one demand (each node
  // takes what it can); shapes of several demands get no bound.
  int64_t PlanBound(const PendingJob& job, const Shape& shape, int64_t t0) const;

  // Plan's sweep, from t0 or, when `from` is later, from `from` on (nothing
  // fits before it: PlanBound).
  std::optional<Hold> Sweep(const PendingJob& job, Shape& shape, int64_t t0, int64_t from);

  void Consider(const PendingJob& job, Shape& shape, const Rank& rank, uint32_t position);

  const Snapshot& s_;
  FreeMap free_;
  FreeMap trial_;  // scratch: a copy of free_ to try things on (reuses its storage)
  uint64_t free_version_ = 0;  // bumped whenever free_ shrinks
  Ranker ranker_;
  std::map<std::string, const Queue*> queues_;
  std::vector<ActiveReservation> reservations_;  // not ended, on known nodes
  std::set<std::string> reservation_owners_;     // users of reservations_
  std::vector<uint32_t> node_of_flat_;
  // ReservedNote: whether a reservation has a free GPU, at free_version_ reserved_free_version_.
  uint64_t reserved_free_version_ = ~0ULL;
  bool reserved_free_ = false;
  std::map<std::string, uint32_t> user_gpus_, group_gpus_, queue_gpus_;
  // The GPUs of each running job (and each started in this pass) and when it
  // is expected to end (kForever: unknown), for QuotaFreeAt.
  struct Holding {
    int64_t end;
    uint32_t gpus;
    const JobMeta* meta;
  };
  std::vector<Holding> holdings_;
  std::vector<std::vector<size_t>> running_nodes_;  // [running job][task]: node index or kNoNode
  std::vector<Release> releases_;  // tasks of running jobs with an expected end, by end
  std::vector<Release> started_;   // tasks started in this pass with a time limit, by end
  std::vector<uint32_t> release_gpus_;  // GPUs of releases_ and started_
  // Per flat GPU: in release_gpus_. A GPU neither free nor coming back stays
  // taken for the whole pass, in free_ and in every sweep of Plan.
  std::vector<uint8_t> comes_back_;
  std::vector<Shape> shapes_;
  std::vector<size_t> shape_of_;  // per pending job
  std::vector<Victim> victims_;  // worst first
  size_t first_untaken_ = 0;
  size_t over_share_at_ = SIZE_MAX;  // OverShareVictimAtWorstKey's memo
  bool over_share_ = false;      // Exhausted: no victim before it is left
  // VictimGpusAfter: victims_[0, victims_after_) are ordered after the last
  // rank asked; victim_gpus_after_ counts the GPUs of those not taken.
  size_t victims_after_ = 0;
  uint64_t victim_gpus_after_ = 0;
  std::set<JobId> preempted_;
  // Owners of running reservations lent out as idle (ReclaimReservations looks
  // no further for anyone else's job).
  std::set<std::string> idle_owners_;
  size_t idle_owner_jobs_left_ = 0;  // pending jobs of idle owners not yet considered
  std::vector<size_t> stopping_;           // running jobs being stopped (indices)
  // Of the jobs being stopped, what a waiting job counts on (AwaitStopping):
  // per flat GPU, and per [stopping_ index][task] (any of the task).
  std::vector<uint8_t> claimed_gpus_;
  std::vector<std::vector<uint8_t>> claimed_tasks_;
  static constexpr uint32_t kDefragTriesPerPass = 4;
  uint32_t defrag_tries_ = 0;
  bool defragmented_ = false;
  std::vector<Hold> holds_;
  // The holds as Plan sweeps them. One begun by now (start <= now_ms) keeps
  // every planned job off its GPUs from the job's first possible start on:
  // its block is counted once, in now_blocked_ (per flat GPU), and only its
  // end is an event. A later one has a start and an end.
  struct HoldTime {
    int64_t t;
    uint32_t hold;  // index in holds_
    JobId id;
  };
  std::vector<HoldTime> now_hold_ends_;                          // by t (the end)
  std::vector<HoldTime> later_hold_starts_, later_hold_ends_;    // by t
  GpuMask now_blocked_;
  std::map<std::string, uint32_t> blocked_in_queue_;
  // What keeps the job of the last BlockedNow call off GPUs: indices into
  // reservations_, then reservations_.size() + indices into holds_ (holds are
  // only added during a pass, so an index names one hold for the whole pass).
  std::vector<uint32_t> blockers_;
  BlockerBits blockers_bits_;  // blockers_ as bits
  bool blockers_found_ = false;
  JobId blockers_job_ = 0;     // whose blockers_ they are
  size_t blockers_holds_ = 0;  // protect_holds_.size() when they were found
  // Indices into holds_ of the protected holds not made by Keep, ascending.
  std::vector<uint32_t> protect_holds_;
  GpuMask mask_;  // BlockedNow's mask: per flat GPU, the blockers of mask_blockers_ on it
  std::vector<uint32_t> mask_blockers_;
  uint32_t max_node_gpus_ = 0;
  std::vector<uint32_t> tasks_in_;  // scratch: Sweep
  GpuMask plan_mask_;  // scratch: a sweep's blocks per flat GPU (Sweep)
  JobId strict_blocked_ = 0;
  // EASY: the nodes a protected (planned) blocked job may use. A blocked job
  // is protected when it may use a node no earlier one may: the first blocked
  // job of each part of the cluster, so a job waiting on one node (or GPU
  // model) does not leave a big job waiting on others unprotected.
  std::vector<uint8_t> easy_covered_;
  size_t easy_uncovered_ = 0;
  bool EasyProtects(const PendingJob& job, Shape& shape);
  void EasyCover(const PendingJob& job, Shape& shape);
  uint32_t planned_ = 0;
  Decisions out_;
};

}  // namespace rota::sched::detail
