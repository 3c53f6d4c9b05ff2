#pragma once
// Job specifications: what a user submits (rota run, POST /api/v1/jobs, a job
// file), as validated values. Pure: no store, no clock, no network.
// See docs/design-jobs.md.
//
// A job is one or more task groups (role, replicas, resources per task, where
// to run); a task is the unit of placement (it holds GPUs on one node and one
// port), a process is the unit of execution (launch_env.h expands tasks into
// processes: pytorch starts one process per GPU of a task by default).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"
#include "jobs/secret_ref.h"

namespace rota::jobs {

// Limits on specifications from outside.
inline constexpr size_t kMaxArgs = 4096;
inline constexpr size_t kMaxArgBytes = 128 * 1024;
inline constexpr size_t kMaxEnvVars = 1024;
inline constexpr size_t kMaxGroups = 16;
inline constexpr uint32_t kMaxReplicas = 1024;
inline constexpr uint32_t kMaxGpusPerTask = 64;
inline constexpr uint32_t kMaxRestarts = 1000;
inline constexpr int64_t kMaxTimeLimitMs = 366LL * 24 * 3600 * 1000;
inline constexpr int64_t kMaxStopAfterDisconnectMs = 7LL * 24 * 3600 * 1000;
inline constexpr int kMinPriority = -1000;
inline constexpr int kMaxPriority = 1000;

// Queue names (and other scheduler names): [a-z][a-z0-9_-]{0,31}.
bool ValidQueueName(const std::string& name);

enum class Framework { kGeneric, kTensorflow, kPytorch, kMpi, kJax };
const char* FrameworkName(Framework f);  // "generic", "tensorflow", ...
// InvalidArgument naming the known frameworks.
Result<Framework> ParseFramework(const std::string& text);

// Roles each framework accepts (generic: any name of [a-z][a-z0-9_-]{0,31}).
//   tensorflow: chief, master, worker, ps, evaluator
//   pytorch:    master, worker
//   mpi:        launcher, worker   (the launcher runs the command; workers hold GPUs)
//   jax:        worker
Status ValidateRole(Framework f, const std::string& role);

// A malleable task group: each task's CPU allotment changes while it runs
// (docs/design-malleable.md). It is placed with min_cpus (so a node's minimums
// never exceed its cores) and grows up to max_cpus when the node has room.
inline constexpr double kMaxMalleableCpus = 4096;
struct Malleable {
  double min_cpus = 1;  // (0, kMaxMalleableCpus], multiples of 0.001
  double max_cpus = 1;  // min_cpus..kMaxMalleableCpus
  bool operator==(const Malleable&) const = default;
};

struct TaskGroup {
  std::string role = "worker";
  uint32_t replicas = 1;       // 1..kMaxReplicas
  uint32_t gpus_per_task = 0;  // 0..kMaxGpusPerTask
  uint32_t cpus_per_task = 0;  // 0: no limit
  uint64_t memory_bytes_per_task = 0;  // 0: no limit
  std::map<std::string, std::string> node_labels;  // every label must match
  std::vector<std::string> nodes;                  // non-empty: only these nodes
  // Non-empty: only nodes whose GPU model contains it, any case ("A100"
  // matches "NVIDIA A100-SXM4-80GB"). Tasks without GPUs go anywhere.
  std::string gpu_model;
  // Replaces the job's command for this group (e.g. a parameter server script).
  std::vector<std::string> command;
  // Set: the group's tasks are malleable; cpus_per_task, when given, is their
  // request for the by-request policy (min_cpus <= cpus_per_task <= max_cpus).
  std::optional<Malleable> malleable;

  bool operator==(const TaskGroup&) const = default;
  // The CPU a task is placed with, in milli-cores (the unit of the scheduler's
  // and placement's CPU counts): min_cpus for a malleable group (so that
  // malleable minimums never oversubscribe a node), else cpus_per_task.
  uint32_t PlacementMilliCpus() const;
};

// The job's resize signal: its env's ROTA_RESIZE_SIGNAL (USR1, USR2, HUP,
// WINCH, URG or NONE), USR1 when unset.
inline constexpr const char* kResizeSignalVar = "ROTA_RESIZE_SIGNAL";

enum class RestartKind {
  kNever,      // a failed task fails the job
  kOnFailure,  // restart the gang after any failure, up to max_restarts
  kExitCode,   // as Kubeflow: exit codes 1..127 are permanent, 128..255 retryable
};
const char* RestartKindName(RestartKind k);  // "never", "on-failure", "exit-code"

struct RestartPolicy {
  RestartKind kind = RestartKind::kNever;
  uint32_t max_restarts = 3;
  int64_t backoff_initial_ms = 1000;  // doubled after each restart
  int64_t backoff_max_ms = 60'000;

  bool operator==(const RestartPolicy&) const = default;
  // The delay before restart number `restart` (1-based), or nullopt when the job
  // must not restart after a task ended with `exit_code` (a signal counts as 128+n).
  std::optional<int64_t> DelayBefore(uint32_t restart, int exit_code) const;
};

struct JobSpec {
  std::string name;  // [A-Za-z0-9][A-Za-z0-9._-]{0,63}
  // argv, never joined into a shell string. With `shell`, exactly one string,
  // run as /bin/sh -c STRING.
  std::vector<std::string> command;
  bool shell = false;
  std::map<std::string, std::string> env;
  std::string workdir;  // absolute; "" = the user's home directory on the node
  Framework framework = Framework::kGeneric;
  std::vector<TaskGroup> groups;  // 1..kMaxGroups, distinct roles
  RestartPolicy restart;
  int64_t time_limit_ms = 0;  // 0: none
  // pytorch: one process per task holding all its GPUs (for torchrun) instead of
  // one process per GPU.
  bool process_per_node = false;
  // Scheduling. The queue ("" = the server's default queue) bounds the
  // priority and gives the defaults of time_limit_ms and preemptible; the
  // server fills them in at submit (a stored spec names its queue).
  std::string queue;
  // kMinPriority..kMaxPriority, within the queue's bounds. Unset: the queue's
  // bound nearest 0 (a stored spec always has one).
  std::optional<int> priority;
  // May be stopped and requeued for higher-ordered jobs and reservations
  // (told first: SIGTERM and ROTA_PREEMPT_NOTICE). Unset: the queue's default.
  std::optional<bool> preemptible;
  bool spread = false;  // tasks on as many nodes as possible instead of packing
  // Opt-in: a node cut off from the server this long stops the job's tasks
  // itself (SIGTERM, then SIGKILL after 10 s), so a lost node cannot leave a
  // copy running beside the restarted gang. 0: never (the default).
  int64_t stop_after_disconnect_ms = 0;
  // Secrets the tasks get (names only; the values stay in the server's store
  // until a task starts: docs/design-secrets.md).
  std::vector<SecretRef> secrets;

  bool operator==(const JobSpec&) const = default;
  uint32_t TaskCount() const;
  uint32_t GpuCount() const;
  // The queue the job is in: `queue`, or "default" when it names none.
  const std::string& QueueName() const;
  int Priority() const { return priority.value_or(0); }
};

// Checks every field and the framework's rules (roles; tensorflow: at most one
// chief/master; mpi: exactly one launcher replica, no GPUs for it; a command).
// InvalidArgument naming the field ("job.groups[1].replicas: must be 1..1024").
Status Validate(const JobSpec& spec);

// JSON form (API and job files):
// {name, command: [..], shell?, env?: {K: V}, workdir?, framework?,
//  groups: [{role, replicas, gpus_per_task, cpus_per_task?, memory?: "16GiB"|bytes,
//            node_labels?: {K: V}, nodes?: [..], gpu_model?, command?: [..],
//            malleable?: {min_cpus: X, max_cpus: Y}}],
//  restart?: {policy: never|on-failure|exit-code, max_restarts?, backoff?: "1s",
//             max_backoff?: "1m"},
//  time_limit?: "2h", process_per_node?, queue?, priority?, preemptible?, spread?,
//  stop_after_disconnect?: "5m", secrets?: ["NAME", "NAME:ENV_VAR", ..]}
// Unknown keys are refused. Result is Validate()d.
Result<JobSpec> JobSpecFromJson(const api::Json& j);
api::Json ToJson(const JobSpec& spec);

// "16GiB", "512MiB", "1.5G", "1000000" (bytes). InvalidArgument on junk.
Result<uint64_t> ParseBytes(const std::string& text);

}  // namespace rota::jobs
