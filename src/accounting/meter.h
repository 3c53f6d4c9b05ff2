#pragma once
// The energy one GPU used between two of its samples. Pure functions.
//
// How a figure was obtained (Method):
//  - counter:    NVML's total-energy counter, read at both ends, went forward by a
//                plausible amount: exact, whatever the gap between the samples
//                (an unreachable node's GPUs keep counting);
//  - integrated: both ends carry power and the interval is at most max_gap_ms:
//                trapezoid rule (used without a counter, and across a counter reset,
//                e.g. a driver reload, which starts it again from 0);
//  - estimated:  a longer interval without a usable counter (the node sent nothing
//                in between): the mean of the two readings' power times the interval;
//  - none:       no energy reading at all (time is still accounted).

#include <cstdint>
#include <optional>

namespace rota::accounting {

enum class Method { kCounter, kIntegrated, kEstimated, kNone };
const char* MethodName(Method method);

// What one sample says of one GPU's energy.
struct Reading {
  int64_t time_ms = 0;                 // the agent's sample time
  std::optional<uint64_t> counter_mj;  // total energy since the driver loaded
  std::optional<uint32_t> power_mw;    // instantaneous draw
};

struct Energy {
  double mj = 0;
  Method method = Method::kNone;
};

// A counter that advances faster than this (watts) is not believed: the GPU was
// swapped or the counter jumped; the interval falls back to power.
inline constexpr double kMaxPlausibleWatts = 5000;

// Energy between prev and cur; requires cur.time_ms > prev.time_ms.
Energy Between(const Reading& prev, const Reading& cur, int64_t max_gap_ms);

}  // namespace rota::accounting
