#pragma once
// The per-node co-scheduler of malleable tasks: divides a node's cores among
// the malleable tasks placed on it, never below a task's minimum nor above its
// maximum, and gives each a CPU list (cpuset) within the node's range. The
// server's job service calls it when a malleable task starts or ends on a node
// and sends the changed allotments as task_resize messages. Pure: no I/O, no
// clock, no locks. See docs/design-malleable.md.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rota::malleable {

enum class Policy {
  kEqual,       // max-min fair: every task the same cores, bounded by its min and max
  kByRequest,   // cores in proportion to each task's request (bounded likewise)
  kByPriority,  // every task its minimum; what is left to the highest priority first
                // (equal shares among tasks of the same priority)
};
const char* PolicyName(Policy p);  // "equal", "by-request", "by-priority"
// InvalidArgument naming the known policies.
Result<Policy> ParsePolicy(const std::string& text);

struct Task {
  std::string id;         // unique among the tasks given
  double min_cpus = 1;    // > 0
  double max_cpus = 1;    // >= min_cpus
  double request = 0;     // by-request weight; 0: min_cpus
  int priority = 0;       // by-priority: higher first
};

struct Allotment {
  std::string id;
  double cpus = 0;     // cores (quota); a multiple of kCpuStep, or the task's min
  std::string cpuset;  // CPUs it may run on ("2-3"); covers at least ceil(cpus) CPUs
};

// The smallest step of an allotment (the cgroup quota is written in
// microseconds per 100 ms: 0.001 core is 100 us).
inline constexpr double kStepsPerCore = 1000;
inline constexpr double kCpuStep = 1 / kStepsPerCore;

struct NodeCores {
  uint32_t first_cpu = 0;  // the CPUs malleable tasks get: first_cpu .. first_cpu+count-1
  uint32_t count = 0;      // >= 1
};

// The allotments of `tasks` (same order) on `cores`. Their sum never exceeds
// cores.count; it is below only when every task is at its maximum. CPU lists:
// the tasks' shares laid side by side in task order over the range, so tasks of
// whole cores get CPUs of their own and a fractional share shares the CPU at
// its boundary with the next. An empty task list gives an empty answer.
// InvalidArgument for a bad task (min <= 0, max < min, duplicate or empty id)
// or a node without CPUs; ResourceExhausted when the minimums together need
// more cores than the node has (the task that does not fit must not be placed).
Result<std::vector<Allotment>> DivideCores(const NodeCores& cores, const std::vector<Task>& tasks, Policy policy);

// The CPU list of first..last: "2-5", or "2" when first == last.
std::string CpuRange(uint32_t first, uint32_t last);

}  // namespace rota::malleable
