#include "sim/replay.h"

#include "sched/usage.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <iterator>
#include <map>

#include "common/clock.h"
#include "sched/order.h"
#include "sched/scheduler.h"
#include "sched/usage.h"

namespace rota::sim {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr double kHourMs = 3.6e6;

struct SimJob {
  const TraceJob* trace = nullptr;
  uint32_t gpus = 0;
  int64_t done_ms = 0;         // progress kept (lost progress subtracted)
  double attained_prior = 0;   // GPU-ms of earlier runs
  int64_t start_ms = 0;        // of the current run
  int64_t end_ms = 0;
  uint32_t preemptions = 0;
  double lost_gpu_ms = 0;
  bool running = false;
  size_t slot = 0;             // index in the snapshot's pending or running list
  int64_t Remaining() const { return trace->duration_ms - done_ms; }
};

Percentiles Summarise(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  p.avg = sum / static_cast<double>(v.size());
  auto at = [&](double q) {  // linear interpolation between closest ranks
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  p.p50 = at(0.50);
  p.p95 = at(0.95);
  p.p99 = at(0.99);
  p.max = v.back();
  return p;
}

class Replayer {
 public:
  Replayer(const std::vector<TraceJob>& trace, const PolicySpec& spec, const ReplayOptions& o)
      : spec_(spec), o_(o) {
    s_.policy = spec.policy;
    s_.policy.explain = false;
    s_.queues = o.queues;
    if (!QueueNamed(kDefault)) s_.queues.insert(s_.queues.begin(), sched::Queue{});
    if (o.pooled_gpus > 0) {
      s_.nodes.push_back(sched::Node{.name = "pool", .gpus = o.pooled_gpus});
      total_gpus_ = o.pooled_gpus;
    } else {
      for (uint32_t i = 0; i < o.nodes; ++i) {
        s_.nodes.push_back(sched::Node{.name = "n" + std::to_string(i), .gpus = o.gpus_per_node});
      }
      total_gpus_ = o.nodes * o.gpus_per_node;
    }
    for (const auto& t : trace) {
      if (o.to_ms > o.from_ms && (t.submit_ms < o.from_ms || t.submit_ms >= o.to_ms)) continue;
      if (t.gpus > total_gpus_) {
        ++dropped_;
        continue;
      }
      const std::string& name = t.queue.empty() ? kDefault : t.queue;
      if (!QueueNamed(name)) {
        sched::Queue q = *QueueNamed(kDefault);
        q.name = name;
        s_.queues.push_back(std::move(q));
      }
      // More GPUs than its queue may hold at once: it would wait for ever.
      if (const uint32_t cap = QueueNamed(name)->max_gpus; cap > 0 && t.gpus > cap) {
        ++dropped_;
        continue;
      }
      SimJob j;
      j.trace = &t;
      j.gpus = t.gpus;
      jobs_.push_back(j);
    }
  }

  Result<ReplayResult> Run() {
    if (total_gpus_ == 0) return Status::InvalidArgument("the simulated cluster has no GPUs");
    if (jobs_.empty()) {
      return Status::InvalidArgument(dropped_ > 0 ? "every job of the trace in the window (" + std::to_string(dropped_) +
                                                        ") needs more GPUs than the cluster or its queue's cap has"
                                                  : "no job of the trace falls in the window");
    }
    const int64_t begin = jobs_.front().trace->submit_ms;
    // The window asked for, else the first to the last submission.
    const bool asked = o_.to_ms > o_.from_ms;
    window_from_ = asked ? o_.from_ms : begin;
    window_to_ = asked ? o_.to_ms : jobs_.back().trace->submit_ms;
    constexpr int64_t kMaxWindowMs = int64_t{3660} * 24 * 3'600'000;  // ten years (an hourly series)
    if (window_to_ - window_from_ > kMaxWindowMs) {
      return Status::InvalidArgument("the window replayed spans " +
                                     std::to_string((window_to_ - window_from_) / 86'400'000) +
                                     " days; at most 3,660 (choose a shorter window with --from and --to)");
    }
    const int64_t wall0 = MonotonicNs();
    size_t next = 0;
    int64_t now = begin;
    last_ms_ = begin;
    while (next < jobs_.size() || !s_.running.empty() || !s_.pending.empty()) {
      int64_t t = next < jobs_.size() ? jobs_[next].trace->submit_ms : kNever;
      t = std::min(t, NextRunningEvent());
      if (t == kNever) return Status::Internal("the replay stalled with jobs left pending");
      Advance(std::max(now, t));
      now = std::max(now, t);
      FinishDue(now);
      while (next < jobs_.size() && jobs_[next].trace->submit_ms <= now) Arrive(next++, now);
      for (int round = 0; round < 16; ++round) {
        if (!Pass(now)) break;
      }
      if (o_.progress) o_.progress(next, jobs_.size(), s_.running.size() + s_.pending.size());
    }
    ReplayResult r = Results();
    r.replay_s = static_cast<double>(MonotonicNs() - wall0) / 1e9;
    return r;
  }

 private:
  static inline const std::string kDefault = "default";

  const sched::Queue* QueueNamed(const std::string& name) const {
    auto it = std::find_if(s_.queues.begin(), s_.queues.end(), [&](const sched::Queue& q) { return q.name == name; });
    return it == s_.queues.end() ? nullptr : &*it;
  }

  sched::JobMeta Meta(const SimJob& j, size_t index) const {
    sched::JobMeta m;
    m.id = static_cast<sched::JobId>(index + 1);
    m.user = j.trace->user;
    m.group = j.trace->group;
    if (!j.trace->queue.empty()) m.queue = j.trace->queue;
    m.submitted_ms = j.trace->submit_ms;
    m.queued_ms = j.trace->submit_ms;
    m.preemptible = true;
    if (spec_.oracle) {
      m.oracle_duration_ms = j.trace->duration_ms;
      m.time_limit_ms = std::max<int64_t>(1, j.Remaining());
    }
    return m;
  }

  std::vector<sched::TaskDemand> DemandsOf(const SimJob& j) const {
    if (o_.pooled_gpus > 0 || j.gpus <= o_.gpus_per_node) {
      return {sched::TaskDemand{.tasks = 1, .gpus_per_task = j.gpus}};
    }
    std::vector<sched::TaskDemand> d = {sched::TaskDemand{.tasks = j.gpus / o_.gpus_per_node,
                                                          .gpus_per_task = o_.gpus_per_node}};
    if (j.gpus % o_.gpus_per_node) d.push_back(sched::TaskDemand{.tasks = 1, .gpus_per_task = j.gpus % o_.gpus_per_node});
    return d;
  }

  // Soonest completion; level crossing of a running job when a preemptive
  // LAS order could act on it; or the moment a pending job has waited
  // preempt_after and may preempt (the live server passes every tick, so it
  // acts then, not at the next arrival or end).
  int64_t NextRunningEvent() const {
    int64_t t = kNever;
    if (s_.policy.preempt && s_.policy.preempt_after_ms > 0) {
      for (const auto& p : s_.pending) {
        const int64_t may = p.meta.queued_ms + s_.policy.preempt_after_ms;
        if (may > s_.now_ms) t = std::min(t, may);
      }
    }
    const bool levels = s_.policy.preempt && !s_.pending.empty() &&
                        (s_.policy.order == sched::Order::kLas || s_.policy.order == sched::Order::kRota);
    for (const auto& r : s_.running) {
      const SimJob& j = jobs_[static_cast<size_t>(r.meta.id - 1)];
      t = std::min(t, j.start_ms + j.Remaining());
      // A run may be preempted for order once it has lasted preempt_after.
      if (s_.policy.preempt && !s_.pending.empty() && j.start_ms + s_.policy.preempt_after_ms > s_.now_ms)
        t = std::min(t, j.start_ms + s_.policy.preempt_after_ms);
      if (!levels) continue;
      const double attained_at_start = j.attained_prior;
      for (double th : s_.policy.las_thresholds_gpu_ms) {
        const double run_at_start_needed = (th - attained_at_start) / j.gpus;
        if (run_at_start_needed <= 0) continue;
        const int64_t cross = j.start_ms + static_cast<int64_t>(std::ceil(run_at_start_needed));
        if (cross > s_.now_ms) t = std::min(t, cross);
        break;
      }
    }
    return t;
  }

  // Busy GPU-time and fair-share usage from last_ms_ to t.
  void Advance(int64_t t) {
    if (t <= last_ms_) return;
    uint64_t busy = 0;
    for (const auto& r : s_.running) {
      const SimJob& j = jobs_[static_cast<size_t>(r.meta.id - 1)];
      busy += j.gpus;
    }
    if (!s_.pending.empty()) {
      waiting_ms_ += static_cast<double>(t - last_ms_);
      busy_waiting_gpu_ms_ += static_cast<double>(busy) * static_cast<double>(t - last_ms_);
    }
    // Utilisation over the submission window, by hour for the picture.
    const int64_t a = std::max(last_ms_, window_from_), b = std::min(t, window_to_);
    if (b > a) {
      busy_gpu_ms_ += static_cast<double>(busy) * static_cast<double>(b - a);
      if (!s_.pending.empty()) idle_waiting_gpu_ms_ += static_cast<double>(total_gpus_ - busy) * static_cast<double>(b - a);
    }
    for (int64_t x = last_ms_; x < t;) {
      const size_t hour = static_cast<size_t>((x - window_from_) / static_cast<int64_t>(kHourMs));
      const int64_t hour_end = window_from_ + static_cast<int64_t>((hour + 1) * kHourMs);
      const int64_t y = std::min(t, hour_end);
      if (hourly_.size() <= hour) hourly_.resize(hour + 1, 0);
      hourly_[hour] += static_cast<double>(busy) * static_cast<double>(y - x);
      x = y;
    }
    if (s_.policy.order == sched::Order::kRota) {
      // As the live server's passes (sched::AdvanceUsage); traces have no groups.
      std::vector<sched::UsageHolder>& holders = holders_;
      holders.clear();
      for (const auto& r : s_.running) {
        const SimJob& j = jobs_[static_cast<size_t>(r.meta.id - 1)];
        holders.push_back(sched::UsageHolder{j.trace->user, "", static_cast<double>(j.gpus)});
      }
      sched::Usage usage{std::move(s_.fairshare.user_usage), std::move(s_.fairshare.group_usage)};
      sched::AdvanceUsage(&usage, t - last_ms_, o_.fairshare_half_life_ms, holders);
      s_.fairshare.user_usage = std::move(usage.user);
      s_.fairshare.group_usage = std::move(usage.group);
    }
    last_ms_ = t;
  }

  void FinishDue(int64_t now) {
    for (size_t i = 0; i < s_.running.size();) {
      SimJob& j = jobs_[static_cast<size_t>(s_.running[i].meta.id - 1)];
      if (j.start_ms + j.Remaining() <= now) {
        j.end_ms = j.start_ms + j.Remaining();
        j.done_ms = j.trace->duration_ms;
        j.running = false;
        RemoveRunning(i);
      } else {
        ++i;
      }
    }
  }

  void Arrive(size_t index, int64_t now) {
    SimJob& j = jobs_[index];
    sched::PendingJob p;
    p.meta = Meta(j, index);
    p.demands = DemandsOf(j);
    (void)now;
    j.slot = s_.pending.size();
    s_.pending.push_back(std::move(p));
    max_queue_ = std::max(max_queue_, s_.pending.size());
  }

  void RemoveRunning(size_t i) {
    if (i + 1 != s_.running.size()) {
      s_.running[i] = std::move(s_.running.back());
      jobs_[static_cast<size_t>(s_.running[i].meta.id - 1)].slot = i;
    }
    s_.running.pop_back();
  }
  void RemovePending(size_t i) {
    if (i + 1 != s_.pending.size()) {
      s_.pending[i] = std::move(s_.pending.back());
      jobs_[static_cast<size_t>(s_.pending[i].meta.id - 1)].slot = i;
    }
    s_.pending.pop_back();
  }

  // One scheduling pass at `now`; true when it preempted (pass again).
  bool Pass(int64_t now) {
    if (s_.pending.empty()) return false;
    s_.now_ms = now;
    for (auto& r : s_.running) {
      const SimJob& j = jobs_[static_cast<size_t>(r.meta.id - 1)];
      r.meta.attained_gpu_ms = j.attained_prior + static_cast<double>(j.gpus) * static_cast<double>(now - j.start_ms);
      if (spec_.oracle) r.meta.oracle_duration_ms = j.trace->duration_ms;
    }
    for (auto& p : s_.pending) {
      const SimJob& j = jobs_[static_cast<size_t>(p.meta.id - 1)];
      p.meta.attained_gpu_ms = j.attained_prior;
    }
    const int64_t t0 = MonotonicNs();
    sched::Decisions d = sched::Schedule(s_);
    pass_ms_.push_back(static_cast<double>(MonotonicNs() - t0) / 1e6);
    queue_at_pass_.push_back(s_.pending.size());
    for (const auto& pre : d.preemptions) {
      SimJob& j = jobs_[static_cast<size_t>(pre.id - 1)];
      if (!j.running) continue;
      const int64_t ran = now - j.start_ms;
      const int64_t progress = j.done_ms + ran;
      const int64_t lost = std::min(o_.preempt_cost_ms, progress);
      j.done_ms = progress - lost;
      j.attained_prior += static_cast<double>(j.gpus) * static_cast<double>(ran);
      j.lost_gpu_ms += static_cast<double>(j.gpus) * static_cast<double>(lost);
      ++j.preemptions;
      j.running = false;
      sched::RunningJob r = std::move(s_.running[j.slot]);
      RemoveRunning(j.slot);
      sched::PendingJob p;
      p.meta = r.meta;
      p.meta.queued_ms = now;
      p.meta.attained_gpu_ms = j.attained_prior;
      if (spec_.oracle) p.meta.time_limit_ms = std::max<int64_t>(1, j.Remaining());
      p.demands = DemandsOf(j);
      j.slot = s_.pending.size();
      s_.pending.push_back(std::move(p));
    }
    for (auto& st : d.starts) {
      SimJob& j = jobs_[static_cast<size_t>(st.id - 1)];
      if (j.running) continue;
      sched::RunningJob r;
      r.meta = s_.pending[j.slot].meta;
      r.demands = std::move(s_.pending[j.slot].demands);
      RemovePending(j.slot);
      r.started_ms = now;
      r.expected_end_ms = spec_.oracle ? now + j.Remaining() : 0;
      r.tasks = std::move(st.tasks);
      j.running = true;
      j.start_ms = now;
      j.slot = s_.running.size();
      s_.running.push_back(std::move(r));
    }
    return !d.preemptions.empty();
  }

  ReplayResult Results() const {
    ReplayResult r;
    r.policy = spec_.name;
    r.jobs = jobs_.size();
    r.dropped = dropped_;
    r.gpus = total_gpus_;
    std::vector<double> jct, wait, slowdown;
    std::map<std::string, std::pair<double, int>> per_user;
    double preemptions = 0, lost = 0;
    for (const auto& j : jobs_) {
      const double c = static_cast<double>(j.end_ms - j.trace->submit_ms);
      const double dur = static_cast<double>(j.trace->duration_ms);
      jct.push_back(c / kHourMs);
      wait.push_back(std::max(0.0, c - dur) / kHourMs);
      const double sd = std::max(1.0, c / std::max(dur, 10'000.0));
      slowdown.push_back(sd);
      per_user[j.trace->user].first += sd;
      per_user[j.trace->user].second += 1;
      preemptions += j.preemptions;
      lost += j.lost_gpu_ms;
    }
    r.jct_h = Summarise(jct);
    r.wait_h = Summarise(wait);
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> per_queue;  // jct, wait
    for (size_t i = 0; i < jobs_.size(); ++i) {
      const std::string& q = jobs_[i].trace->queue;
      auto& [qj, qw] = per_queue[q.empty() ? kDefault : q];
      qj.push_back(jct[i]);
      qw.push_back(wait[i]);
    }
    if (per_queue.size() > 1) {
      for (auto& [name, v] : per_queue) {
        r.by_queue.push_back({name, v.first.size(), Summarise(v.first), Summarise(std::move(v.second))});
      }
    }
    r.bounded_slowdown = Summarise(slowdown);
    r.jct_sorted_h = jct;
    std::sort(r.jct_sorted_h.begin(), r.jct_sorted_h.end());
    // NaN where undefined: a window of no length, no moment with a job waiting.
    constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    const double window = static_cast<double>(window_to_ - window_from_);
    r.window_h = window / kHourMs;
    r.utilisation = window > 0 ? busy_gpu_ms_ / (window * total_gpus_) : kNone;
    r.idle_while_waiting = window > 0 ? idle_waiting_gpu_ms_ / (window * total_gpus_) : kNone;
    r.utilisation_while_waiting = waiting_ms_ > 0 ? busy_waiting_gpu_ms_ / (waiting_ms_ * total_gpus_) : kNone;
    r.preemptions_per_job = preemptions / static_cast<double>(jobs_.size());
    r.lost_gpu_hours = lost / kHourMs;
    double sum = 0, sq = 0;
    for (const auto& [u, v] : per_user) {
      const double x = v.first / v.second;
      sum += x;
      sq += x * x;
    }
    r.fairness_jain = per_user.empty() ? 1 : sum * sum / (static_cast<double>(per_user.size()) * sq);
    r.pass_ms = Summarise(pass_ms_);
    static constexpr size_t kBounds[] = {10, 100, 1'000, 10'000, 0};
    for (size_t b = 0; b < std::size(kBounds); ++b) {
      std::vector<double> in;
      const size_t lo = b == 0 ? 0 : kBounds[b - 1];
      for (size_t i = 0; i < pass_ms_.size(); ++i) {
        const size_t q = queue_at_pass_[i];
        if (q > lo && (kBounds[b] == 0 || q <= kBounds[b])) in.push_back(pass_ms_[i]);
      }
      if (!in.empty()) r.pass_ms_by_queue.push_back({kBounds[b], in.size(), Summarise(std::move(in))});
    }
    r.passes = pass_ms_.size();
    r.max_queue = max_queue_;
    for (size_t h = 0; h < hourly_.size(); ++h) {
      r.utilisation_series.emplace_back(static_cast<double>(h), hourly_[h] / (kHourMs * total_gpus_));
    }
    return r;
  }

  const PolicySpec spec_;
  const ReplayOptions o_;
  sched::Snapshot s_;
  std::vector<SimJob> jobs_;
  uint32_t total_gpus_ = 0;
  size_t dropped_ = 0, max_queue_ = 0;
  int64_t last_ms_ = 0, window_from_ = 0, window_to_ = 0;
  double busy_gpu_ms_ = 0;
  double waiting_ms_ = 0, busy_waiting_gpu_ms_ = 0;  // while some job waited
  double idle_waiting_gpu_ms_ = 0;  // in the window, while some job waited
  std::vector<sched::UsageHolder> holders_;  // Advance's, kept for its capacity
  std::vector<double> hourly_;
  std::vector<double> pass_ms_;
  std::vector<size_t> queue_at_pass_;
};

}  // namespace

std::vector<std::string> PolicyNames() { return {"rota", "fifo", "easy", "sjf", "srtf", "las"}; }

Result<PolicySpec> PolicyByName(const std::string& name) {
  PolicySpec p;
  p.name = name;
  sched::Policy& x = p.policy;
  x.preempt = false;
  x.preempt_after_ms = 0;
  x.defragment = false;  // rota's own; the baselines are as published
  if (name == "rota") {
    x = sched::Policy{};  // the live server's default
  } else if (name == "fifo") {
    x.order = sched::Order::kFifo;
    x.backfill = sched::Backfill::kNone;
  } else if (name == "easy") {
    x.order = sched::Order::kFifo;
    x.backfill = sched::Backfill::kEasy;
    p.oracle = true;
  } else if (name == "sjf") {
    x.order = sched::Order::kSjf;
    x.backfill = sched::Backfill::kNone;
    p.oracle = true;
  } else if (name == "srtf") {
    x.order = sched::Order::kSrtf;
    x.backfill = sched::Backfill::kSkip;
    x.preempt = true;
    p.oracle = true;
  } else if (name == "las") {
    x.order = sched::Order::kLas;
    x.backfill = sched::Backfill::kSkip;
    x.preempt = true;
  } else {
    std::string known;
    for (const auto& n : PolicyNames()) known += (known.empty() ? "" : ", ") + n;
    return Status::InvalidArgument("unknown policy '" + name + "' (known: " + known + ")");
  }
  return p;
}

Result<ReplayResult> Replay(const std::vector<TraceJob>& jobs, const PolicySpec& policy,
                            const ReplayOptions& options) {
  return Replayer(jobs, policy, options).Run();
}

}  // namespace rota::sim
