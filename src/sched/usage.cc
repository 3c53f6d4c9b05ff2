#include "sched/usage.h"

#include <algorithm>

#include "sched/order.h"

namespace rota::sched {

void AdvanceUsage(Usage* usage, int64_t elapsed_ms, int64_t half_life_ms, const std::vector<UsageHolder>& holders) {
  if (elapsed_ms <= 0) return;
  for (auto* m : {&usage->user, &usage->group}) {
    for (auto it = m->begin(); it != m->end();) {
      it->second = Decay(it->second, elapsed_ms, half_life_ms);
      it = it->second < 1 ? m->erase(it) : std::next(it);
    }
  }
  const auto dt = static_cast<double>(elapsed_ms);
  for (const auto& h : holders) {
    usage->user[std::string(h.user)] += h.gpus * dt;
    if (!h.group.empty()) usage->group[std::string(h.group)] += h.gpus * dt;
  }
}

std::map<std::string, double> Decayed(const std::map<std::string, double>& usage, int64_t elapsed_ms,
                                      int64_t half_life_ms) {
  std::map<std::string, double> out;
  for (const auto& [name, ms] : usage) out.emplace_hint(out.end(), name, Decay(ms, elapsed_ms, half_life_ms));
  return out;
}

std::map<int64_t, int64_t> TrackReservationUse(const std::vector<ReservationUse>& reservations,
                                               const std::map<int64_t, int64_t>& last_used,
                                               int64_t tracking_since_ms, int64_t now_ms, int64_t idle_ms,
                                               std::set<int64_t>* idle) {
  std::map<int64_t, int64_t> out;
  for (const auto& r : reservations) {
    if (r.start_ms > now_ms || r.end_ms <= now_ms) continue;
    auto prev = last_used.find(r.id);
    int64_t last = std::max(r.start_ms, prev == last_used.end() ? tracking_since_ms : prev->second);
    if (r.used_now) last = now_ms;
    out[r.id] = last;
    if (idle_ms > 0 && now_ms - last >= idle_ms) idle->insert(r.id);
  }
  return out;
}

}  // namespace rota::sched
