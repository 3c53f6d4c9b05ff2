#pragma once
// Power policies: GPU power caps an organisation applies through rota. Pure
// values: a codec and matching; the planner is in plan.h.
//
// A policy has a scope (nodes, GPU models, node labels; all empty: every GPU
// of the cluster), optional weekly windows (when it applies; none: always),
// and one of:
//  - limit:  every GPU in scope is capped at this many watts;
//  - budget: the GPUs in scope together get at most this many watts, divided
//            among them by demand (plan.h).
// JSON form (API and CLI):
//   {name, description?, scope?: {nodes?: [..], gpu_models?: [..],
//    labels?: {"rack": "r1"}}, limit?: 250 | "250W", budget?: "2.4kW",
//    windows?: {zone?, allow: [{days, from, to}]}}
// Exactly one of limit and budget. Watts as a number or a string with W or kW.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"
#include "reserve/windows.h"

namespace rota::power {

enum class PolicyKind { kLimit, kBudget };
const char* PolicyKindName(PolicyKind k);  // "limit" / "budget"

// Bounds of the values a policy may hold (the GPU's own range is checked
// against the cluster, see ValidateAgainstCluster).
inline constexpr uint32_t kMaxLimitWatts = 5000;
inline constexpr uint64_t kMaxBudgetWatts = 100'000'000;

struct Scope {
  std::vector<std::string> nodes;       // exact names; empty: any node
  std::vector<std::string> gpu_models;  // case-insensitive substrings; empty: any model
  std::map<std::string, std::string> labels;  // every one must be on the node
  bool operator==(const Scope&) const = default;
};

struct PowerPolicy {
  int64_t id = 0;
  std::string name;  // [A-Za-z0-9._-]{1,64}, unique
  std::string description;
  Scope scope;
  PolicyKind kind = PolicyKind::kLimit;
  uint64_t watts = 0;  // per GPU (limit) or in total (budget)
  reserve::WeeklyWindows windows;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;

  // The GPU (of `node` with those labels, model `gpu_model`) is in scope.
  bool Matches(const std::string& node, const std::map<std::string, std::string>& labels,
               const std::string& gpu_model) const;
  // The policy applies at `t_ms` (inside its windows, or it has none).
  bool ActiveAt(int64_t t_ms) const;
  // "limit 250 W" / "budget 2400 W".
  std::string Describe() const;
};

// Decodes a policy from its API form. InvalidArgument naming the field for
// unknown fields, bad types, both or neither of limit and budget, watts out of
// bounds, bad names, and windows that overlap each other.
Result<PowerPolicy> PowerPolicyFromJson(const api::Json& j);
// What is stored: everything but id, name and times.
api::Json PowerPolicySpecJson(const PowerPolicy& p);
// The API view: the spec plus id, name, kind, watts, created and updated.
api::Json ToJson(const PowerPolicy& p);

// Watts from 250, "250", "250W", "2.4kW", "2.4 kW". InvalidArgument naming
// `field` otherwise (negative, not finite, other units).
Result<double> ParseWatts(const api::Json& v, const std::string& field);

}  // namespace rota::power
