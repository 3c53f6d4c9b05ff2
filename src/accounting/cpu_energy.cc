#include "accounting/cpu_energy.h"

#include <algorithm>

namespace rota::accounting {
namespace {

__extension__ typedef unsigned __int128 Uint128;

}  // namespace

CpuEnergyShares AttributeCpuEnergy(uint64_t energy_mj, uint64_t busy_usec,
                                   const std::map<std::string, uint64_t>& task_usec) {
  CpuEnergyShares out;
  Uint128 tasks_total = 0;
  for (const auto& [task, usec] : task_usec) tasks_total += usec;
  const Uint128 denominator = std::max<Uint128>(busy_usec, tasks_total);
  uint64_t given = 0;
  for (const auto& [task, usec] : task_usec) {
    // <= energy_mj because usec <= denominator; the sum stays <= energy_mj too.
    uint64_t share =
        denominator == 0
            ? 0
            : static_cast<uint64_t>(static_cast<Uint128>(energy_mj) * usec / denominator);
    out.tasks_mj[task] = share;
    given += share;
  }
  out.other_mj = energy_mj - given;
  return out;
}

}  // namespace rota::accounting
