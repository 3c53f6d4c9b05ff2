#include "accounting/meter.h"

#include <algorithm>

namespace rota::accounting {

const char* MethodName(Method method) {
  switch (method) {
    case Method::kCounter: return "counter";
    case Method::kIntegrated: return "integrated";
    case Method::kEstimated: return "estimated";
    case Method::kNone: return "none";
  }
  return "none";
}

Energy Between(const Reading& prev, const Reading& cur, int64_t max_gap_ms) {
  const double dt_ms = static_cast<double>(cur.time_ms - prev.time_ms);
  if (dt_ms <= 0) return {};
  if (prev.counter_mj && cur.counter_mj && *cur.counter_mj >= *prev.counter_mj) {
    const double delta = static_cast<double>(*cur.counter_mj - *prev.counter_mj);
    // mJ per ms is W.
    if (delta / dt_ms <= kMaxPlausibleWatts) return {delta, Method::kCounter};
  }
  if (!prev.power_mw && !cur.power_mw) return {};
  // One end without power (e.g. a read error): hold the other end's value.
  // Readings beyond what a GPU can draw are not believed either.
  constexpr double kMaxMw = kMaxPlausibleWatts * 1000;
  const double p0 = std::min<double>(prev.power_mw ? *prev.power_mw : *cur.power_mw, kMaxMw);
  const double p1 = std::min<double>(cur.power_mw ? *cur.power_mw : *prev.power_mw, kMaxMw);
  // mW * ms = uJ; / 1000 = mJ.
  const double mj = (p0 + p1) / 2 * dt_ms / 1000;
  return {mj, dt_ms <= static_cast<double>(max_gap_ms) ? Method::kIntegrated : Method::kEstimated};
}

}  // namespace rota::accounting
