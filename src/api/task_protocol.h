#pragma once
// Job task messages of the agent protocol (see protocol.h for the envelope).
//
// server -> agent
//   task_start  {"task": TaskSpec}            start one process of a job
//   task_signal {"id": ID, "signal": "TERM"|"KILL"}   to the task's process group
//   task_logs   {"req": N, "id": ID, "stream": "stdout"|"stderr", "offset": O,
//                "max_bytes": M}              read part of a task's log
//   task_resize {"id": ID, "cpus": C, "cpuset"?: "0-3,6", "generation": G}
//                                             change a running task's CPU allotment
//                                             (malleable tasks; docs/design-malleable.md)
// agent -> server
//   task_status {"tasks": [TaskReport]}       on every change, and all tasks after
//                                             each register (the server reconciles)
//   task_log    {"req": N, "data": "...", "offset": O, "size": S, "error": E}
//   task_resized {"id": ID, "generation": G, "error"?: E}   answer to task_resize
//   task_metrics {"id": ID, "points": [{"name": N, "value": V, "step"?: S,
//                "source": "stdout"|"file", "seq": O, "time_ms": T}]}
//                                             metrics the task reported (rota-metric lines)
//
// Task ids are "<job id>.<process name>" ([A-Za-z0-9._-]{1,128}), unique per node.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"

namespace rota::api {

inline constexpr size_t kMaxTaskArgs = 4096;
inline constexpr size_t kMaxTaskBytes = 1 << 20;  // argv + env + files
inline constexpr size_t kMaxTasksPerStatus = 4096;
inline constexpr uint64_t kMaxLogChunk = 1 << 20;
inline constexpr size_t kMaxTaskPorts = 64;
inline constexpr double kMaxTaskCpus = 4096;
inline constexpr size_t kMaxCpusetBytes = 1024;
inline constexpr uint32_t kMaxCpuIndex = 4095;
// In a start failure's error when a port of the task is taken on the node.
inline constexpr const char* kPortInUseError = "is in use on this node";
// In a start failure's error when the task's Unix user is unknown on the node.
inline constexpr const char* kNoUnixUserError = "does not exist on this node";
// A start failure's whole error for each: the server acts on these exact texts
// (an error that only contains them, e.g. naming a command, is another failure).
inline std::string PortInUseError(uint16_t port) {
  return "port " + std::to_string(port) + " " + kPortInUseError;
}
inline std::string NoUnixUserError(const std::string& user) {
  return "Unix user '" + user + "' " + kNoUnixUserError;
}

// A secret a task gets (docs/design-secrets.md): only in the task_start of the
// task that needs it, never logged or written to the agent's disk. The agent
// writes it to a file `name` (0400, the task's user) in a directory on a tmpfs
// named by ROTA_SECRETS_DIR, and also sets `env` to the value when it is not "".
inline constexpr size_t kMaxTaskSecrets = 32;
inline constexpr size_t kMaxTaskSecretBytes = 64 * 1024;
struct TaskSecret {
  std::string name;   // [A-Za-z0-9][A-Za-z0-9._-]{0,63}
  std::string value;  // 1..kMaxTaskSecretBytes bytes, any
  std::string env;    // "" or a variable name

  bool operator==(const TaskSecret&) const = default;
};

struct TaskSpec {
  std::string id;
  std::string job_id;
  std::string name;  // process name within the job ("worker-1.0")
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string workdir;
  std::string user;  // Unix account to run as (the agent refuses root)
  std::map<std::string, std::string> files;     // written into the task directory
  std::map<std::string, std::string> file_env;  // variable -> file name
  std::vector<uint16_t> ports;  // ports it will listen on: the agent checks they are free
  double cpus = 0;            // CPU limit in cores (its cgroup); 0: none
  uint64_t memory_bytes = 0;  // memory limit (its cgroup); 0: none
  // The agent stops the task (TERM, then KILL) once it has been cut off from
  // the server this long; 0: never. The job's stop_after_disconnect.
  int64_t stop_after_disconnect_ms = 0;
  // Malleable tasks (their CPU allotment changes while they run: task_resize).
  // The agent writes the allotment to a file named by ROTA_RESOURCES_FILE before
  // the start (generation 0) and on every resize, then sends the task's process
  // group `resize_signal`.
  bool malleable = false;
  std::string cpuset;                // initial CPU list ("0-3,6"); "" any CPU
  std::vector<uint32_t> gpus;        // node GPU indices, for the resources file
  std::string resize_signal = "USR1";  // USR1, USR2, HUP, WINCH, URG or NONE
  std::vector<TaskSecret> secrets;
};

struct TaskStartMsg {
  TaskSpec task;
};
struct TaskSignalMsg {
  std::string id;
  std::string signal;  // "TERM" or "KILL"
  // Before the signal, written to the file named by the task's
  // ROTA_PREEMPT_NOTICE (why it is stopped; preemption). "" none.
  std::string notice;
};
// A new CPU allotment for a running malleable task. Generations grow: the agent
// refuses one not newer than the task's current one (a late message).
struct TaskResizeMsg {
  std::string id;
  double cpus = 0;          // (0, kMaxTaskCpus]: the cgroup's CPU quota in cores
  std::string cpuset;       // CPU list ("0-3,6"); "" leaves the cpuset as it is
  uint64_t generation = 0;  // >= 1
};
// The agent's answer to a task_resize; error "" when it was applied.
struct TaskResizedMsg {
  std::string id;
  uint64_t generation = 0;
  std::string error;
};

// One value a task reported: a `rota-metric NAME=VALUE [step=N]` line of its
// stdout or of its ROTA_METRICS_FILE (agent/metrics_tail.h). (id, source, seq,
// name) names a point once: the agent sends a point again after a reconnect or
// a restart and the server keeps it once.
inline constexpr size_t kMaxMetricName = 64;
inline constexpr size_t kMaxMetricPointsPerMessage = 1024;
inline constexpr int64_t kMaxMetricStep = int64_t{1} << 53;
struct TaskMetricPoint {
  std::string name;   // [A-Za-z_][A-Za-z0-9_.:/-]*, 1..kMaxMetricName bytes, not "step"
  double value = 0;   // finite
  int64_t step = -1;  // 0..kMaxMetricStep; -1: the line gave none
  enum class Source { kStdout, kFile } source = Source::kStdout;
  uint64_t seq = 0;      // the line's byte offset in its source
  int64_t time_ms = 0;   // when the agent read it (its clock)
  bool operator==(const TaskMetricPoint&) const = default;
};
struct TaskMetricsMsg {
  std::string id;  // the task
  std::vector<TaskMetricPoint> points;  // 1..kMaxMetricPointsPerMessage
};
// InvalidArgument naming what is wrong with a metric's name ("" when valid).
Status ValidateMetricName(const std::string& name);
const char* MetricSourceName(TaskMetricPoint::Source s);  // "stdout", "file"

struct TaskLogsMsg {
  uint64_t req = 0;
  std::string id;
  std::string stream = "stdout";
  uint64_t offset = 0;
  uint64_t max_bytes = 65536;  // 1..kMaxLogChunk
};

struct TaskReport {
  std::string id;
  std::string state;  // "running", "exited", "lost"
  int64_t pid = 0;
  std::optional<int> exit_code;  // exited normally
  std::optional<int> signal;     // killed by a signal
  std::string error;             // could not start, or lost
  int64_t ended_ms = 0;
};
struct TaskStatusMsg {
  std::vector<TaskReport> tasks;
};
struct TaskLogMsg {
  uint64_t req = 0;
  std::string data;
  uint64_t offset = 0;  // of `data` in the file
  uint64_t size = 0;    // the file's size now
  std::string error;
  // offset + the bytes read: where the next read starts. The JSON encoding replaces invalid
  // UTF-8 in `data`, so its length there is not the byte count. 0 when the sender is an older
  // agent (then offset + data.size()).
  uint64_t next_offset = 0;
};

// InvalidArgument naming the field. Shared by the decoders and the senders.
Status ValidateTaskId(const std::string& id);
// The number of the rota job a task id belongs to: N of "job-N.<rest>" (N > 0);
// nullopt for an id of another form.
std::optional<int64_t> JobNumberOfTaskId(const std::string& id);
Status Validate(const TaskSpec& t);
// A CPU list as cgroups write it ("0-3,6,8-9": ascending, no overlap, indices
// 0..kMaxCpuIndex). InvalidArgument naming `field`.
Status ValidateCpuset(const std::string& field, const std::string& cpuset);
// The CPUs of a valid CPU list (nullopt for an invalid one).
std::optional<std::vector<uint32_t>> ParseCpuset(const std::string& cpuset);
// The signal number of a resize_signal name (0 for NONE); nullopt for others.
std::optional<int> ResizeSignalNumber(const std::string& name);
Status Validate(const TaskResizeMsg& m);

Json ToJson(const TaskSpec& t);
Result<TaskSpec> TaskSpecFromJson(const Json& j);
Json ToJson(const TaskReport& r);
Result<TaskReport> TaskReportFromJson(const Json& j);

// Body codecs without the envelope (protocol.cc wraps them).
Result<TaskStartMsg> TaskStartFromJson(const Json& j);
Result<TaskSignalMsg> TaskSignalFromJson(const Json& j);
Result<TaskLogsMsg> TaskLogsFromJson(const Json& j);
Result<TaskStatusMsg> TaskStatusFromJson(const Json& j);
Result<TaskLogMsg> TaskLogFromJson(const Json& j);
Result<TaskResizeMsg> TaskResizeFromJson(const Json& j);
Result<TaskResizedMsg> TaskResizedFromJson(const Json& j);
Json ToJson(const TaskMetricsMsg& m);  // the body, without the envelope
Result<TaskMetricsMsg> TaskMetricsFromJson(const Json& j);

}  // namespace rota::api
