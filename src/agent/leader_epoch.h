#pragma once
// The agent's side of the leader fence (docs/design-ha.md, "Fencing"): several servers on
// one store take turns as leader, each with an epoch one higher than the last, and only the
// leader registers agents and sends them commands. An agent keeps the highest epoch it was
// registered under (in its state dir, across restarts) and refuses a registration from an
// older one: a server that lost the lease while paused, partitioned or slow to notice can
// then not start, stop or signal anything on this node even if the agent reaches it.

#include <cstdint>
#include <string>

namespace rota::agent {

struct EpochVerdict {
  bool accept = true;
  uint64_t highest = 0;  // what to keep from now on
};

// A registration under `epoch` (0: a server alone on its store, no lease: always accepted
// and nothing kept), the highest seen so far being `highest`.
EpochVerdict JudgeLeaderEpoch(uint64_t highest, uint64_t epoch);

// The epoch kept in `path` (a decimal number and a newline), 0 when there is none or it is
// unreadable (logged).
uint64_t LoadLeaderEpoch(const std::string& path);
// Keeps `epoch` in `path` (written atomically, 0600); a failure is logged, not fatal.
void StoreLeaderEpoch(const std::string& path, uint64_t epoch);

}  // namespace rota::agent
