#include "server/store/open_minutes.h"

#include <algorithm>

#include "server/store/gpu_pack.h"
#include "server/store/history.h"

namespace rota::store {

MinuteTotals* OpenMinutes::Slot(int64_t node, int64_t t_ms) {
  const int64_t minute = BucketStart(t_ms, kMinuteMs);
  auto m = minutes_.find(minute);
  if (m != minutes_.end()) {
    auto n = m->second.find(node);
    if (n != m->second.end()) return &n->second;
  }
  if (minute < floor_) return nullptr;
  if (m == minutes_.end()) m = minutes_.try_emplace(minute).first;
  return &m->second.try_emplace(node).first->second;
}

void OpenMinutes::AddHost(int64_t node, int64_t t_ms, const api::HostSample& h, int64_t mem_used) {
  // As MinuteAggregates reads the row back: the REAL columns hold no NaN (NULL in SQLite).
  auto real = [](double v) { return v == v ? std::optional<double>(v) : std::nullopt; };
  if (MinuteTotals* t = Slot(node, t_ms)) {
    t->AddHost(real(h.cpu_percent), mem_used, real(h.load1));
    ++additions_;
  }
}

void OpenMinutes::AddGpus(int64_t node, int64_t t_ms, std::span<const api::GpuSample> gpus) {
  MinuteTotals* t = Slot(node, t_ms);
  if (t == nullptr) return;
  for (const api::GpuSample& g : gpus) t->AddGpu(t_ms, ToStored(g));
  ++additions_;
}

std::optional<MinuteTotals> OpenMinutes::Take(int64_t node, int64_t minute_ms) {
  auto m = minutes_.find(minute_ms);
  if (m == minutes_.end()) return std::nullopt;
  auto n = m->second.find(node);
  if (n == m->second.end()) return std::nullopt;
  std::optional<MinuteTotals> out(std::move(n->second));
  m->second.erase(n);
  if (m->second.empty()) minutes_.erase(m);
  return out;
}

size_t OpenMinutes::tracked() const {
  size_t n = 0;
  for (const auto& [minute, nodes] : minutes_) n += nodes.size();
  return n;
}

void OpenMinutes::RaiseFloor(int64_t floor_ms) { floor_ = std::max(floor_, floor_ms); }

void OpenMinutes::Clear(int64_t floor_ms) {
  if (!minutes_.empty()) RaiseFloor(minutes_.rbegin()->first + kMinuteMs);
  minutes_.clear();
  RaiseFloor(floor_ms);
}

}  // namespace rota::store
