#include "notify/rate_limiter.h"

#include <algorithm>
#include <cassert>

namespace rota::notify {

RateLimiter::RateLimiter(int limit, int64_t window_ms) : limit_(limit), window_ms_(window_ms) {
  assert(window_ms > 0);
}

bool RateLimiter::Allow(const std::string& key, int64_t now_ms) {
  if (limit_ <= 0) return true;
  // Forget keys whose events all left the window, at most once per window, so memory is
  // bounded by the keys seen in the last two windows.
  if (now_ms - last_sweep_ms_ >= window_ms_) PruneAll(now_ms);
  std::deque<int64_t>& times = events_[key];
  while (!times.empty() && times.front() <= now_ms - window_ms_) times.pop_front();
  if (times.size() >= static_cast<size_t>(limit_)) return false;
  // Clamp so times stay sorted even if the caller's clock stepped back.
  times.push_back(times.empty() ? now_ms : std::max(now_ms, times.back()));
  return true;
}

void RateLimiter::PruneAll(int64_t now_ms) {
  last_sweep_ms_ = now_ms;
  for (auto it = events_.begin(); it != events_.end();) {
    std::deque<int64_t>& times = it->second;
    while (!times.empty() && times.front() <= now_ms - window_ms_) times.pop_front();
    it = times.empty() ? events_.erase(it) : std::next(it);
  }
}

}  // namespace rota::notify
