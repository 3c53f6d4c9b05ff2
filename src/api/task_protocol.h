#pragma once
// Job task messages of the agent protocol (see protocol.h for the envelope).
//
// server -> agent
//   task_start  {"task": TaskSpec}            start one process of a job
//   task_signal {"id": ID, "signal": "TERM"|"KILL"}   to the task's process group
//   task_logs   {"req": N, "id": ID, "stream": "stdout"|"stderr", "offset": O,
//                "max_bytes": M}              read part of a task's log
// agent -> server
//   task_status {"tasks": [TaskReport]}       on every change, and all tasks after
//                                             each register (the server reconciles)
//   task_log    {"req": N, "data": "...", "offset": O, "size": S, "error": E}
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

}  // namespace rota::api
