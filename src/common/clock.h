#pragma once
// Clock: the one seam for time. Production code takes a Clock&; tests pass a
// FakeClock and advance it instead of sleeping.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace rota {

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time in milliseconds since the Unix epoch (UTC).
  virtual int64_t NowMs() const = 0;
  // Monotonic time in milliseconds from an arbitrary origin.
  virtual int64_t MonotonicMs() const = 0;
};

// Monotonic nanoseconds from an arbitrary origin, for measuring how long code
// runs (benchmarks, the simulator's scheduler pass latency). Not a seam.
int64_t MonotonicNs();

// Now on the steady clock, for the deadlines of waits and timers (condition
// variables, poll loops, stuck-connection checks): plumbing, not decisions,
// which take a Clock. With MonotonicNs and RealClock, the only reads of the
// system's clocks (test `no_direct_clock_reads` keeps it so).
using SteadyTime = std::chrono::steady_clock::time_point;
SteadyTime SteadyNow();

// The system clock. Thread-safe.
class RealClock final : public Clock {
 public:
  int64_t NowMs() const override;
  int64_t MonotonicMs() const override;
  // A process-wide instance.
  static RealClock& Get();
};

// A clock that moves only when told. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t now_ms = 1'700'000'000'000) : now_(now_ms) {}
  int64_t NowMs() const override { return now_.load(); }
  int64_t MonotonicMs() const override { return now_.load(); }
  void AdvanceMs(int64_t ms) { now_ += ms; }
  void SetMs(int64_t ms) { now_ = ms; }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace rota
