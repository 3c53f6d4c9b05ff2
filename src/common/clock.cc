#include "common/clock.h"

#include <chrono>

namespace rota {

int64_t RealClock::NowMs() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t RealClock::MonotonicMs() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

int64_t MonotonicNs() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
}

SteadyTime SteadyNow() { return std::chrono::steady_clock::now(); }

RealClock& RealClock::Get() {
  static RealClock clock;
  return clock;
}

}  // namespace rota
