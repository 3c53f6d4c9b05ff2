#pragma once
// The power planner: from the policies, the cluster's GPUs and the time, the
// power limit each GPU should have. Pure and deterministic (no I/O, no clock).
//
// Rules (docs/design-power.md):
//  - Only policies active at `now` count (inside their windows).
//  - Limit policies: a GPU in scope of several gets the lowest. A limit outside
//    the GPU's range is brought into it (clamped, and said so).
//  - Budget policies: the reachable GPUs in scope whose range is known share the
//    budget. Every GPU first gets its minimum; the rest goes to busy GPUs in
//    equal shares, none above its cap (its maximum, or a lower limit policy),
//    what they cannot use goes to the idle GPUs the same way, and what nobody
//    can use stays unassigned. A budget below the GPUs' minimum total leaves
//    every GPU at its minimum and says so. Shares are whole watts, rounded down,
//    so the GPUs never exceed the budget. Unreachable GPUs and GPUs without a
//    known range are not part of the division (reported).
//  - A GPU in scope of several budgets gets the smallest of its shares.
//  - A GPU no active policy covers has no target: its default limit applies.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "power/policy.h"

namespace rota::power {

struct PowerRange {
  uint32_t min_mw = 0;
  uint32_t max_mw = 0;
  uint32_t default_mw = 0;
};

struct GpuFacts {
  std::string node;
  uint32_t index = 0;
  std::string uuid;
  std::string model;
  std::optional<PowerRange> range;  // absent: the GPU did not say (cannot be divided)
  bool reachable = true;            // its agent is connected
  bool busy = false;                // a process or utilisation on it recently
};

struct ClusterFacts {
  std::vector<GpuFacts> gpus;
  std::map<std::string, std::map<std::string, std::string>> node_labels;  // every known node
};

struct GpuTarget {
  std::string node;
  uint32_t index = 0;
  std::string uuid;
  std::optional<uint32_t> limit_mw;  // absent: no active policy (the GPU's default)
  std::vector<std::string> policies;  // the active policies that cover it, by name
  std::string reason;                 // why this limit, in words
};

struct BudgetShare {
  std::string policy;
  uint64_t budget_mw = 0;
  int gpus = 0;             // GPUs in the division
  int busy = 0;             // of which busy
  int left_out = 0;         // in scope but unreachable or without a known range
  uint64_t min_total_mw = 0;  // the divided GPUs' minimum total
  uint64_t assigned_mw = 0;   // sum of the shares
  bool feasible = true;       // false: budget below min_total_mw
};

struct Plan {
  std::vector<GpuTarget> gpus;  // in the order of the facts
  std::vector<BudgetShare> budgets;  // active budgets, by policy name
};

Plan PlanLimits(const std::vector<PowerPolicy>& policies, const ClusterFacts& cluster,
                int64_t now_ms);

// Checks a new or edited policy `p` against the cluster and the other policies
// (the one being edited left out): InvalidArgument naming the field when its
// scope names an unknown node or label, matches no GPU, a limit lies outside the
// range of a GPU in scope, or a budget is below the minimum total of its GPUs;
// Conflict when another budget with the same scope may apply at the same time.
Status ValidateAgainstCluster(const PowerPolicy& p, const std::vector<PowerPolicy>& others,
                              const ClusterFacts& cluster, int64_t now_ms);

// Whether two policies' windows share a minute in the week from `now_ms`
// (always when either has none).
bool WindowsMayOverlap(const PowerPolicy& a, const PowerPolicy& b, int64_t now_ms);

}  // namespace rota::power
