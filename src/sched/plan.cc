// Estimated starts: where and when a blocked job first fits (Pass::Plan).

#include "sched/pass.h"

namespace rota::sched::detail {

void Pass::AddHold(Hold h) {
  for (const auto& task : h.tasks) {
    if (auto n = free_.Find(task.node)) {
      for (uint32_t g : task.gpus) {
        if (g >= free_.node(*n).gpus) continue;
        const uint32_t f = free_.Offset(*n) + g;
        if (free_.FreeFlat(f) || comes_back_[f]) h.flat.push_back(f);
      }
    }
  }
  const auto i = static_cast<uint32_t>(holds_.size());
  auto insert = [](std::vector<HoldTime>& v, HoldTime x) {
    v.insert(std::upper_bound(v.begin(), v.end(), x,
                              [](const HoldTime& a, const HoldTime& b) { return a.t < b.t; }),
             x);
  };
  if (h.start <= s_.now_ms) {
    for (uint32_t f : h.flat) ++now_blocked_[f];
    insert(now_hold_ends_, {h.end, i, h.id});
  } else {
    insert(later_hold_starts_, {h.start, i, h.id});
    insert(later_hold_ends_, {h.end, i, h.id});
  }
  if (h.protect && !h.kept) protect_holds_.push_back(i);
  holds_.push_back(std::move(h));
}

namespace {
int64_t LimitOf(const PendingJob& job) {
  return job.meta.time_limit_ms > 0 ? job.meta.time_limit_ms : std::numeric_limits<int64_t>::max();
}
}  // namespace

int64_t Pass::PlanBound(const PendingJob& job, const Shape& shape, int64_t t0) const {
  if (job.demands.size() != 1) return t0;
  const int64_t limit = LimitOf(job);
  const bool owner = reservation_owners_.count(job.meta.user) > 0;
  int64_t bound = t0;
  for (const auto& p : shape.planned) {
    if (p.t0 > t0 || p.limit > limit || (job.meta.preemptible && !p.preemptible) ||
        (owner && *p.user != job.meta.user))
      continue;
    bound = std::max(bound, p.start);
  }
  return bound;
}

std::optional<Hold> Pass::Plan(const PendingJob& job, Shape& shape, int64_t not_before) {
  const int64_t t0 = std::max({s_.now_ms, job.not_before_ms, not_before});
  const int64_t from = PlanBound(job, shape, t0);
  std::optional<Hold> h = from == kForever ? std::nullopt : Sweep(job, shape, t0, from);
  if (job.demands.size() == 1) {
    shape.planned.push_back({t0, LimitOf(job), job.meta.preemptible, &job.meta.user,
                             h ? h->start : kForever});
  }
  return h;
}

std::optional<Hold> Pass::Sweep(const PendingJob& job, Shape& shape, int64_t t0, int64_t from) {
  const auto& eligible = EligibleNodes(job, shape);
  // Reservations that keep the job off their GPUs for starts in [from, to),
  // by from and by to. Holds come sorted (AddHold); a hold keeps the job off
  // its GPUs for starts in [HoldBlockedFrom(start), end): from t0 on for one
  // begun by now.
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

  FreeMap& map = trial_;
  map = free_;
  GpuMask& blk = plan_mask_;  // per flat GPU: what blocks it at the sweep's time
  blk = now_blocked_;
  for (const HoldTime& h : now_hold_ends_) {  // its own holds do not keep a job off
    if (h.id != self) continue;
    for (uint32_t f : holds_[h.hold].flat) --blk[f];
  }
  // Streams of changes, each in time order (see advance below).
  size_t next_release = 0, next_started = 0, next_now_end = 0, next_later_start = 0,
         next_later_end = 0, next_res_from = 0, next_res_to = 0;
  auto later_from = [&](size_t i) { return HoldBlockedFrom(later_hold_starts_[i].t, job); };
  // Jumping to `from`: what happens up to it is applied at once (a block that
  // begins and ends by then changes nothing), and whether something became
  // available at `from` itself is what advance would have said.
  bool freed_at_from = false;
  if (from > t0) {
    auto give = [&](const Release& r) {
      freed_at_from = freed_at_from || r.end == from;
      map.GiveFlat(r.node,
                   std::span(release_gpus_.data() + r.gpus_begin, r.gpus_end - r.gpus_begin),
                   r.cpus, r.memory, [](uint32_t) {});
    };
    for (; next_release < releases_.size() && releases_[next_release].end <= from; ++next_release)
      give(releases_[next_release]);
    for (; next_started < started_.size() && started_[next_started].end <= from; ++next_started)
      give(started_[next_started]);
    for (; next_now_end < now_hold_ends_.size() && now_hold_ends_[next_now_end].t <= from;
         ++next_now_end) {
      const HoldTime& h = now_hold_ends_[next_now_end];
      if (h.id == self) continue;
      freed_at_from = freed_at_from || h.t == from;
      for (uint32_t f : holds_[h.hold].flat) --blk[f];
    }
    for (; next_later_start < later_hold_starts_.size() && later_from(next_later_start) <= from;
         ++next_later_start) {
      const HoldTime& h = later_hold_starts_[next_later_start];
      if (h.id == self || holds_[h.hold].end <= from) continue;
      for (uint32_t f : holds_[h.hold].flat) ++blk[f];
    }
    for (; next_later_end < later_hold_ends_.size() && later_hold_ends_[next_later_end].t <= from;
         ++next_later_end) {
      const HoldTime& h = later_hold_ends_[next_later_end];
      freed_at_from = freed_at_from || (h.id != self && h.t == from);
    }
    for (; next_res_from < res_from.size() && res_from[next_res_from].from <= from;
         ++next_res_from) {
      if (res_from[next_res_from].to <= from) continue;
      for (uint32_t f : *res_from[next_res_from].flat) ++blk[f];
    }
    for (; next_res_to < res_to.size() && res_to[next_res_to].to <= from; ++next_res_to)
      freed_at_from = freed_at_from || res_to[next_res_to].to == from;
  }
  std::vector<uint32_t> avail(map.size());  // free and not blocked, per node
  uint64_t total = 0;
  for (size_t n = 0; n < map.size(); ++n) total += avail[n] = map.FreeUnblocked(n, blk);
  // tasks_in[d][v]: tasks of demand d that v GPUs hold (v / gpus_per_task,
  // 0 for a demand without GPUs), v up to the most GPUs of a node.
  const size_t width = max_node_gpus_ + 1;
  std::vector<uint32_t>& tasks_in = tasks_in_;
  tasks_in.resize(job.demands.size() * width);
  for (size_t d = 0; d < job.demands.size(); ++d) {
    const uint32_t per = job.demands[d].gpus_per_task;
    for (uint32_t v = 0; v < width; ++v) tasks_in[d * width + v] = per > 0 ? v / per : 0;
  }
  // Capacity of each demand, from avail.
  std::vector<uint64_t> cap(job.demands.size());
  for (size_t d = 0; d < job.demands.size(); ++d) {
    if (job.demands[d].gpus_per_task == 0) {
      cap[d] = UINT64_MAX;
      continue;
    }
    for (size_t n = 0; n < map.size(); ++n)
      cap[d] += eligible[d][n] ? tasks_in[d * width + avail[n]] : 0;
  }
  auto set_avail = [&](size_t n, uint32_t value) {
    for (size_t d = 0; d < job.demands.size(); ++d) {
      if (eligible[d][n])
        cap[d] = cap[d] + tasks_in[d * width + value] - tasks_in[d * width + avail[n]];
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
      if (was != is && map.FreeFlat(f))
        set_avail(n, is ? avail[n] - 1 : avail[n] + 1);
    }
  };
  auto release = [&](const Release& r) {
    uint32_t k = 0;  // GPUs freed that are not blocked
    map.GiveFlat(r.node,
                 std::span(release_gpus_.data() + r.gpus_begin, r.gpus_end - r.gpus_begin),
                 r.cpus, r.memory, [&](uint32_t f) { k += blk[f] == 0; });
    if (k > 0) set_avail(r.node, avail[r.node] + k);
  };
  // advance(t) applies every change at or before t and says whether
  // something became available at t itself (a release or the end of a block).
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
    for (; next_later_start < later_hold_starts_.size() && later_from(next_later_start) <= t;
         ++next_later_start) {
      const HoldTime& h = later_hold_starts_[next_later_start];
      if (h.id != self) block(holds_[h.hold].flat, 1);
    }
    for (; next_res_from < res_from.size() && res_from[next_res_from].from <= t;
         ++next_res_from) {
      block(*res_from[next_res_from].flat, 1);
    }
    auto end_holds = [&](const std::vector<HoldTime>& ends, size_t& next) {
      for (; next < ends.size() && ends[next].t <= t; ++next) {
        const HoldTime& h = ends[next];
        if (h.id == self) continue;
        freed = freed || h.t == t;
        block(holds_[h.hold].flat, -1);
      }
    };
    end_holds(now_hold_ends_, next_now_end);
    end_holds(later_hold_ends_, next_later_end);
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
    if (next_now_end < now_hold_ends_.size()) t = std::min(t, now_hold_ends_[next_now_end].t);
    if (next_later_start < later_hold_starts_.size())
      t = std::min(t, later_from(next_later_start));
    if (next_later_end < later_hold_ends_.size())
      t = std::min(t, later_hold_ends_[next_later_end].t);
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
    auto placed = PlaceGang(map, job.demands, job.spread, &blk, &eligible);
    if (!placed) return std::nullopt;
    return Hold{job.meta.id, t, EndOf(job, t), false, false, std::move(*placed), {}};
  };
  if (from > t0) {
    if (freed_at_from) {
      if (auto h = fits(from)) return h;
    }
  } else {
    advance(t0);
    if (auto h = fits(t0)) return h;
  }
  for (;;) {
    const int64_t t = next_time();
    if (t == kForever) return std::nullopt;
    if (advance(t)) {
      if (auto h = fits(t)) return h;
    }
  }
}

}  // namespace rota::sched::detail
