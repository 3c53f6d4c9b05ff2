#include "server/reservations/reservation_usage.h"

#include <algorithm>

namespace rota::server {

void UsageTracker::Track(const TrackedReservation& r) {
  MutexLock lock(&mu_);
  auto it = entries_.find(r.id);
  if (it != entries_.end()) {
    if (it->second.r.node != r.node) by_node_[it->second.r.node].erase(r.id);
    it->second.r = r;
  } else {
    entries_[r.id].r = r;
  }
  by_node_[r.node].insert(r.id);
}

void UsageTracker::Forget(int64_t id) {
  MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  by_node_[it->second.r.node].erase(id);
  entries_.erase(it);
}

void UsageTracker::OnSample(const std::string& node, const api::NodeSample& sample) {
  MutexLock lock(&mu_);
  auto ids = by_node_.find(node);
  if (ids == by_node_.end()) return;
  for (int64_t id : ids->second) {
    Entry& e = entries_[id];
    if (sample.time_ms < e.r.start_ms || sample.time_ms >= e.r.end_ms) continue;
    if (sample.time_ms <= e.last_sample_ms) continue;  // replayed after a reconnect
    double gpu_sum = 0, mem_sum = 0, gpu_max = -1;
    int gpu_n = 0, mem_n = 0;
    for (const auto& g : sample.gpus) {
      if (!std::binary_search(e.r.gpus.begin(), e.r.gpus.end(), g.index) || g.failed) continue;
      if (g.util_gpu_pct) {
        gpu_sum += *g.util_gpu_pct;
        gpu_max = std::max(gpu_max, static_cast<double>(*g.util_gpu_pct));
        ++gpu_n;
      }
      if (g.util_memory_pct) {
        mem_sum += *g.util_memory_pct;
        ++mem_n;
      }
    }
    if (gpu_n > 0) {
      e.sum_gpu += gpu_sum / gpu_n;
      ++e.n_gpu;
      e.last_sample_ms = sample.time_ms;
      for (const auto& rule : e.r.idle_rules) {
        const double thr = rule.rule.threshold_pct;
        if (gpu_max < thr) {
          e.idle_since.emplace(thr, sample.time_ms);  // keeps an earlier start
          auto& [sum, n] = e.idle_util[thr];
          sum += gpu_sum / gpu_n;
          ++n;
        } else {
          e.idle_since.erase(thr);
          e.idle_util.erase(thr);
        }
      }
    }
    if (mem_n > 0) {
      e.sum_mem += mem_sum / mem_n;
      ++e.n_mem;
    }
  }
}

namespace {

LiveUsage UsageOf(double sum_gpu, int64_t n_gpu, double sum_mem, int64_t n_mem,
                  const std::map<double, int64_t>& idle_since) {
  LiveUsage u;
  u.samples = n_gpu;
  if (n_gpu > 0) u.avg_util_gpu = sum_gpu / static_cast<double>(n_gpu);
  if (n_mem > 0) u.avg_util_mem = sum_mem / static_cast<double>(n_mem);
  if (!idle_since.empty()) u.idle_since_ms = idle_since.begin()->second;
  return u;
}

}  // namespace

std::optional<LiveUsage> UsageTracker::Usage(int64_t id) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  const Entry& e = it->second;
  return UsageOf(e.sum_gpu, e.n_gpu, e.sum_mem, e.n_mem, e.idle_since);
}

std::vector<std::pair<TrackedReservation, LiveUsage>> UsageTracker::TakeEnded(int64_t now_ms) {
  MutexLock lock(&mu_);
  std::vector<std::pair<TrackedReservation, LiveUsage>> out;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Entry& e = it->second;
    if (e.r.end_ms > now_ms) {
      ++it;
      continue;
    }
    out.emplace_back(e.r, UsageOf(e.sum_gpu, e.n_gpu, e.sum_mem, e.n_mem, {}));
    by_node_[e.r.node].erase(e.r.id);
    it = entries_.erase(it);
  }
  return out;
}

std::vector<IdleDue> UsageTracker::DueIdle(int64_t now_ms) const {
  MutexLock lock(&mu_);
  std::vector<IdleDue> out;
  for (const auto& [id, e] : entries_) {
    if (e.r.idle_released || now_ms < e.r.start_ms || now_ms >= e.r.end_ms) continue;
    std::optional<IdleDue> best;
    for (const auto& rule : e.r.idle_rules) {
      // After a notice, a rule that only notifies has nothing to add; one that
      // releases (another policy's, or a longer wait) still may.
      if (e.r.idle_notified && !rule.rule.release) continue;
      auto since = e.idle_since.find(rule.rule.threshold_pct);
      if (since == e.idle_since.end()) continue;
      if (e.last_sample_ms - since->second < rule.rule.after_ms) continue;
      if (!best || (rule.rule.release && !best->rule.release)) {
        best = IdleDue{id, rule.policy, rule.rule, since->second, 0};
        auto util = e.idle_util.find(rule.rule.threshold_pct);
        if (util != e.idle_util.end() && util->second.second > 0) {
          best->avg_util_gpu = util->second.first / static_cast<double>(util->second.second);
        }
      }
    }
    if (best) out.push_back(*best);
  }
  return out;
}

void UsageTracker::MarkNotified(int64_t id, bool released) {
  MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second.r.idle_notified = true;
  it->second.r.idle_released = it->second.r.idle_released || released;
}

void UsageTracker::SetIdleRules(int64_t id, std::vector<reserve::AppliedIdleRule> rules) {
  MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it != entries_.end()) it->second.r.idle_rules = std::move(rules);
}

std::vector<TrackedReservation> UsageTracker::All() const {
  MutexLock lock(&mu_);
  std::vector<TrackedReservation> out;
  for (const auto& [id, e] : entries_) out.push_back(e.r);
  return out;
}

}  // namespace rota::server
