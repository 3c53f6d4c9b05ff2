#pragma once
// Task cgroups: every job task runs in a cgroup of its own, so that a cancel
// reaches every descendant (even one that left the task's process group with
// setsid) and CPU and memory limits hold. cgroup v2 (unified hierarchy, as on
// current GPU servers) and v1 (separate cpu and memory hierarchies) behind one
// interface:
//   v2: ROOT/rota/[plain/]<id>/    cpu.max, memory.max, cpuset.cpus, cgroup.procs
//   v1: ROOT/{cpu,cpuacct,memory,cpuset}/rota/<id>/   cpu.cfs_quota_us + cpu.cfs_period_us,
//                                      cpuset.cpus + cpuset.mems (a task with a CPU list),
//                                      cpuacct.usage (the task's CPU time, for
//                                      CPU energy), memory.limit_in_bytes, cgroup.procs
//       (one directory for cpu and cpuacct when they share a hierarchy)
// Creating cgroups needs root (or a delegated subtree); without, tasks run
// without one (the caller logs why).

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rota::agent {

// A running job task's cgroups, for its CPU time (host::ReadTaskCpuUsageUsec).
struct TaskCgroups {
  std::string id;       // task id
  int64_t job_id = 0;   // its rota job
  std::vector<std::string> dirs;
};

struct CgroupLimits {
  double cpus = 0;            // CPU time in cores (0.5 = half a core); 0: no limit
  uint64_t memory_bytes = 0;  // 0: no limit
  std::string cpuset;         // CPU list ("0-3,6"); "": any CPU (no cpuset cgroup on v1)
};

// Creates the cgroup(s) named `id` (unique on the host: several agents may
// share one) under `root` (e.g. /sys/fs/cgroup) with `limits` and returns their
// directories. A task pays only for the controllers it uses:
//   v2: ROOT/rota/<id> (cpu and memory controllers) for a task with a limit,
//       ROOT/rota/plain/<id> (no controller of its own) for one without;
//   v1: the cpuacct cgroup always (all its processes, its CPU time), the cpu
//       one for a CPU limit, the memory one for a memory limit, the cpuset one
//       for a CPU list (those of them that are mounted; cpu,cpuacct mounted
//       together make one directory; ROOT/cpuset/rota gets the root's CPUs and
//       memory nodes when it has none, as v1 requires before a task joins).
// Unavailable when `root` offers neither layout or cannot be written.
Result<std::vector<std::string>> CreateTaskCgroups(const std::string& root, const std::string& id,
                                                   const CgroupLimits& limits);

// Changes a running task's CPU allotment in its cgroups `dirs` (as made by
// CreateTaskCgroups): the CPU quota to `cpus` cores (> 0) in the one with a
// CPU controller (v2 cpu.max, v1 cpu.cfs_quota_us), and, when `cpuset` is not
// empty, the CPU list in the one with a cpuset controller (cpuset.cpus; a task
// without one keeps running on any CPU: the resources file tells it the list).
// Conflict when no dir has a CPU controller; Unavailable when the kernel
// refuses a value (e.g. CPUs the node does not have).
Status ResizeTaskCgroups(const std::vector<std::string>& dirs, double cpus, const std::string& cpuset);

// The processes in the cgroup directory `dir` (its cgroup.procs), empty when
// it is gone.
std::vector<pid_t> CgroupProcesses(const std::string& dir);

// Sends `sig` once to every process in `dirs` but those of process group
// `skip_group` (> 0: already signalled as a group). Returns how many were signalled.
int SignalCgroups(const std::vector<std::string>& dirs, int sig, pid_t skip_group = 0);

// SIGKILLs whatever is left in `dirs` (waiting up to ~2 s for them to go) and
// removes the directories. For when the task's main process has ended.
void KillAndRemoveCgroups(const std::vector<std::string>& dirs);

}  // namespace rota::agent
