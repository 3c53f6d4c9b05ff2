// Estimated starts: where and when a blocked job first fits (Pass::Plan).

#include "sched/pass.h"

namespace rota::sched::detail {

std::optional<Hold> Pass::Plan(const PendingJob& job, Shape& shape) {
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
  plan_mask_.assign(map.FlatSize(), 0);
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
      plan_mask_[f] = is ? 1 : 0;
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
    auto placed = PlaceGang(map, job.demands, job.spread, &plan_mask_, &eligible);
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

}  // namespace rota::sched::detail
