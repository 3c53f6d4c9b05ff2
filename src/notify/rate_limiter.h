#pragma once
// RateLimiter: at most `limit` events per key in any sliding window of `window_ms`.
// Pure logic: the caller passes the time (e.g. Clock::MonotonicMs()), so tests drive it
// with a FakeClock. Not thread-safe; the owner locks.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>

namespace rota::notify {

class RateLimiter {
 public:
  // limit <= 0: unlimited (Allow always true, nothing is tracked). REQUIRES: window_ms > 0.
  RateLimiter(int limit, int64_t window_ms);

  // True, and records the event, when `key` had fewer than `limit` events in
  // (now_ms - window_ms, now_ms]. False (nothing recorded) otherwise. Time going
  // backwards is treated as no time passing.
  bool Allow(const std::string& key, int64_t now_ms);

  // Keys with at least one event still inside the window (after pruning at the last call).
  size_t tracked_keys() const { return events_.size(); }

 private:
  void PruneAll(int64_t now_ms);

  int limit_;
  int64_t window_ms_;
  int64_t last_sweep_ms_ = 0;
  // Event times per key, oldest first; a key with no event in the window is erased.
  std::unordered_map<std::string, std::deque<int64_t>> events_;
};

}  // namespace rota::notify
