#pragma once
// Helpers for unit tests under src/ (tests only; header-only, links nothing).

#include <chrono>
#include <functional>
#include <thread>

namespace rota::testutil {

// Calls `cond` every `poll` until it returns true or `timeout` has passed, and
// returns its last value. Tests wait for the condition they need (another
// thread or process got somewhere), never for a fixed time: the deadline is
// only how long a broken build may hang, so make it generous.
inline bool WaitFor(const std::function<bool()>& cond,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20),
                    std::chrono::milliseconds poll = std::chrono::milliseconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (cond()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return cond();
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace rota::testutil
