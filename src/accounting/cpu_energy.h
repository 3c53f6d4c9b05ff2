#pragma once
// The split of a node's CPU package energy (RAPL) between its tasks by CPU time.
// Pure. The agent reads the counters (host/rapl.h); the ledger accounts intervals
// with this split (ledger.h). See docs/design-accounting.md, "CPU energy (RAPL)".

#include <cstdint>
#include <map>
#include <string>

namespace rota::accounting {

// Package energy of one interval split between tasks.
struct CpuEnergyShares {
  std::map<std::string, uint64_t> tasks_mj;  // task key -> energy; every key of the input
  uint64_t other_mj = 0;                     // idle, other processes, rounding
};

// Splits energy_mj, the package energy of an interval, pro rata to CPU time: a task
// gets energy_mj * task_usec / D, rounded down, where D is the node's busy CPU time
// over the same interval (busy_usec), or the tasks' sum when that is larger (the
// counters were read at slightly different moments). The rest goes to other_mj. So
// the shares always add up to exactly energy_mj; with no busy time and no task time,
// everything is other_mj.
CpuEnergyShares AttributeCpuEnergy(uint64_t energy_mj, uint64_t busy_usec,
                                   const std::map<std::string, uint64_t>& task_usec);

}  // namespace rota::accounting
