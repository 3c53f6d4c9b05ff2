#include "sched/order.h"

#include <cmath>

namespace rota::sched {
namespace {

double ShareOf(const std::map<std::string, double>& shares, const std::string& name) {
  auto it = shares.find(name);
  return it == shares.end() ? 1.0 : std::max(0.0, it->second);
}

double UsageOf(const std::map<std::string, double>& usage, const std::string& name) {
  auto it = usage.find(name);
  return it == usage.end() ? 0.0 : std::max(0.0, it->second);
}

// 2^-(u/s) for normalised usage u and shares s.
double Factor(double usage, double total_usage, double share, double total_shares) {
  if (total_usage <= 0 || usage <= 0) return 1.0;
  if (share <= 0 || total_shares <= 0) return 0.0;
  return std::exp2(-(usage / total_usage) / (share / total_shares));
}

}  // namespace

double Decay(double usage, int64_t elapsed_ms, int64_t half_life_ms) {
  if (half_life_ms <= 0 || elapsed_ms <= 0) return usage;
  return usage * std::exp2(-static_cast<double>(elapsed_ms) / static_cast<double>(half_life_ms));
}

Ranker::Ranker(const Snapshot& s) : s_(s) {
  const FairShare& fs = s.fairshare;
  for (const auto& [u, v] : fs.user_usage) total_user_usage_ += std::max(0.0, v);
  for (const auto& [g, v] : fs.group_usage) total_group_usage_ += std::max(0.0, v);
  // Shares are normalised over the users (groups) that have usage, a share
  // set, or a job pending or running: one without usage has factor 1 whatever
  // the total, and accounts nobody uses do not dilute the others' shares.
  std::map<std::string, bool> users, groups;
  for (const auto& [u, v] : fs.user_usage) users[u] = true;
  for (const auto& [u, v] : fs.user_shares) users[u] = true;
  for (const auto& [g, v] : fs.group_usage) groups[g] = true;
  for (const auto& [g, v] : fs.group_shares) groups[g] = true;
  auto active = [&](const JobMeta& m) {
    users[m.user] = true;
    if (!m.group.empty()) groups[m.group] = true;
  };
  for (const auto& p : s.pending) active(p.meta);
  for (const auto& r : s.running) active(r.meta);
  for (const auto& [u, b] : users) total_user_shares_ += ShareOf(fs.user_shares, u);
  for (const auto& [g, b] : groups) total_group_shares_ += ShareOf(fs.group_shares, g);
  for (const auto& q : s.queues) queue_priority_[q.name] = q.priority;
}

int Ranker::Level(double attained_gpu_ms) const {
  int level = 0;
  for (double t : s_.policy.las_thresholds_gpu_ms) {
    if (attained_gpu_ms >= t) ++level;
  }
  return level;
}

double Ranker::Memo(std::unordered_map<std::string, double>& memo,
                    const std::map<std::string, double>& usage,
                    const std::map<std::string, double>& shares, double total_usage,
                    double total_shares, const std::string& name) {
  auto [it, added] = memo.try_emplace(name, 0.0);
  if (added) {
    it->second = Factor(UsageOf(usage, name), total_usage, ShareOf(shares, name), total_shares);
  }
  return it->second;
}

double Ranker::FairShareFactor(const std::string& user, const std::string& group) const {
  const FairShare& fs = s_.fairshare;
  const double fu = Memo(user_factor_, fs.user_usage, fs.user_shares, total_user_usage_,
                         total_user_shares_, user);
  if (group.empty()) return fu;
  return (fu + Memo(group_factor_, fs.group_usage, fs.group_shares, total_group_usage_,
                    total_group_shares_, group)) /
         2;
}

Rank Ranker::Of(const JobMeta& m, uint32_t gpus, int64_t running_since_ms) const {
  Rank r;
  r.submitted_ms = m.submitted_ms;
  r.id = m.id;
  const Policy& p = s_.policy;
  const double run_ms = gpus > 0 ? m.attained_gpu_ms / gpus : 0;
  switch (p.order) {
    case Order::kFifo:
      break;
    case Order::kSjf:
      r.k0 = static_cast<double>(m.oracle_duration_ms);
      break;
    case Order::kSrtf:
      r.k0 = static_cast<double>(m.oracle_duration_ms) - run_ms;
      break;
    case Order::kLas:
      r.k0 = Level(m.attained_gpu_ms);
      break;
    case Order::kRota: {
      auto q = queue_priority_.find(m.queue);
      r.k0 = -(q == queue_priority_.end() ? 0 : q->second);
      int level = Level(m.attained_gpu_ms);
      const int64_t waited = running_since_ms == 0 ? s_.now_ms - m.queued_ms : 0;
      if (running_since_ms == 0 && level > 0 && static_cast<double>(waited) >= 2 * run_ms) level = 0;
      r.k1 = level;
      const double age_h = static_cast<double>(s_.now_ms - m.submitted_ms) / 3.6e6;
      r.k2 = -(p.weight_fairshare * FairShareFactor(m.user, m.group) + p.weight_job * m.priority +
               p.weight_age_per_hour * std::max(0.0, age_h));
      break;
    }
  }
  return r;
}

}  // namespace rota::sched
