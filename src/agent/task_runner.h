#pragma once
// TaskRunner: the agent's side of job processes. Each task runs under a task
// shim (task_shim.h) in <state_dir>/tasks/<id>/ (spec.json, pid, status.json,
// stdout.log, stderr.log), so tasks survive an agent restart and a restarted
// agent re-adopts them from that directory (Adopt).
//
// Only the task's owner and root read a task's files: the directory belongs to
// the agent, mode 0711 (the owner's task opens its files by name, nobody lists
// them; the owner cannot replace the agent's records in it), and every file in it
// is 0600: the logs, the request's files and the preemption notice owned by the
// task's user, spec.json, pid and status.json by the agent. The agent reads the
// logs as root.
//
// The pid alone never identifies a task: the shim records this boot's id and the
// process's start time with it (TaskProcess), and both are checked before any
// signal and whenever an adopted task is looked at. A pid that after a reboot, or
// after the task ended, names another process makes the task "lost" (with why) and
// nothing is signalled; so does a record without them (a task directory of an
// older agent: rota cannot tell).
//
// Thread-compatible: one thread at a time (the agent's task thread).

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/task_cgroup.h"
#include "agent/task_secrets.h"
#include "agent/task_shim.h"
#include "api/task_protocol.h"
#include "common/status.h"

namespace rota::agent {

enum class TaskState { kRunning, kExited, kLost };
const char* TaskStateName(TaskState s);  // "running", "exited", "lost"

struct TaskStatus {
  std::string id;
  TaskState state = TaskState::kRunning;
  pid_t pid = 0;                // the task's process (and process group)
  std::optional<TaskExit> exit; // kExited
  std::string error;            // kLost: why (e.g. the node rebooted since it started)
};

// The launch of one task, before paths are filled in by the runner.
struct TaskRequest {
  std::string id;  // unique on this node: [A-Za-z0-9._-]{1,128}
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string workdir;
  std::optional<uint32_t> uid, gid;
  std::string user;
  std::vector<uint32_t> groups;  // supplementary groups (with uid)
  // Files written into the task directory first (name -> content); each
  // variable of file_env (variable -> file name) is set to the file's path and
  // "{file:NAME}" in argv replaced by it.
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> file_env;
  // Limits of the task's cgroup (task_cgroup.h).
  CgroupLimits limits;
  // A malleable task (Resize): its allotment (limits.cpus, limits.cpuset, gpus) is
  // written to kResourcesFile (generation 0) before it starts, the file's path
  // set in ROTA_RESOURCES_FILE and `resize_signal`'s name in ROTA_RESIZE_SIGNAL.
  bool malleable = false;
  std::vector<uint32_t> gpus;
  std::string resize_signal = "USR1";  // api::ResizeSignalNumber's names
  // Written to the task's secrets directory on a tmpfs (task_secrets.h), named by
  // ROTA_SECRETS_DIR; those with `env` also set that variable (read by the shim,
  // never written into spec.json). The directory goes when the task ends.
  std::vector<api::TaskSecret> secrets;
};

// The resources file's text: {"cpus":C,"cpuset":"0-3","gpus":[..],"generation":N}.
std::string ResourcesJson(double cpus, const std::string& cpuset, const std::vector<uint32_t>& gpus,
                          uint64_t generation);

class TaskRunner {
 public:
  // `shim_argv`: how to run the shim, e.g. {"/usr/bin/rota", "task-shim"} (the
  // spec file is appended).
  TaskRunner(std::vector<std::string> shim_argv, std::string state_dir);
  ~TaskRunner();

  // Starts the task and returns once its process exists (or the shim reported
  // that it could not start: then the status is kExited with `error`). With
  // set_wait_for_start(false) it returns as soon as the shim is spawned (state
  // kRunning, pid 0 until Poll sees it), so many starts overlap.
  // AlreadyExists for a known id; InvalidArgument for a bad id or request.
  Result<TaskStatus> Start(const TaskRequest& request);
  // The task's current state (reaps its shim when it ended).
  Result<TaskStatus> Poll(const std::string& id);
  // Where task cgroups are made (default /sys/fs/cgroup; "" = none). Only a root
  // agent makes them; without one a task has no limits and a cancel reaches its
  // process group only.
  void set_cgroup_root(std::string root) { cgroup_root_ = std::move(root); }
  // Where tasks' secrets directories are made (default kDefaultSecretsRoot; must be
  // on a tmpfs).
  void set_secrets_root(std::string root) { secrets_root_ = std::move(root); }
  const std::string& secrets_root() const { return secrets_root_; }
  void set_wait_for_start(bool wait) { wait_for_start_ = wait; }

  // Sends `sig` to the task's process group and to every process in its
  // cgroup (descendants that left the group too), once its pid is shown to be
  // still the task's process (boot id and start time). NotFound for an unknown id;
  // Conflict when it already ended, is lost, or its pid is not the task's any
  // more (then nothing is signalled).
  Status Signal(const std::string& id, int sig);
  // Writes `text` to the task's notice file, whose path the task has in
  // ROTA_PREEMPT_NOTICE (the file appears only when rota is about to stop it).
  Status Notify(const std::string& id, const std::string& text);
  static constexpr const char* kNoticeFile = "preempt-notice";
  // Gives a running malleable task a new CPU allotment: its cgroups' quota and
  // CPU list (ResizeTaskCgroups; none without cgroups), then its resources file
  // (atomically replaced), then the resize signal to its process group (none
  // while it has no process yet: it reads the file when it starts). NotFound for
  // an unknown task; Conflict when it is not running, not malleable, or
  // `generation` is not newer than the file's.
  Status Resize(const std::string& id, double cpus, const std::string& cpuset, uint64_t generation);
  static constexpr const char* kResourcesFile = "resources.json";
  // Forgets a task that ended and removes its directory (logs included).
  Status Remove(const std::string& id);
  // Finds the tasks in the state directory (after an agent restart) and returns
  // their ids; their shims are not this agent's children, so their end is seen
  // through the status file.
  std::vector<std::string> Adopt();
  // The pid of a task's shim while it is this runner's child and not reaped
  // (it ends right after recording how the task ended); 0 otherwise.
  pid_t ShimPid(const std::string& id) const;
  // The ids of every known task, sorted.
  std::vector<std::string> Ids() const;
  // The cgroup directories of a task (made at its start; for an adopted task, read
  // from its spec), empty when it has none or is not known.
  std::vector<std::string> Cgroups(const std::string& id) const;
  // Paths of a task's logs.
  std::string StdoutPath(const std::string& id) const;
  std::string StderrPath(const std::string& id) const;
  // The file a task may write metric lines to (agent/metrics_tail.h), made empty
  // and the task's at its start; its path is in the task's ROTA_METRICS_FILE.
  std::string MetricsPath(const std::string& id) const;
  static constexpr const char* kMetricsFile = "metrics";

 private:
  // Whether a recorded process is still the task's.
  enum class ProcessCheck { kTask, kGone, kNotTheTask };
  // *why says why for kNotTheTask.
  ProcessCheck CheckTaskProcess(const TaskProcess& p, std::string* why) const;

  std::string Dir(const std::string& id) const;
  // This runner's key among agents sharing a host (from its state directory).
  std::string Key() const;
  // Removes the secrets directory of task `id` if it has one.
  void DropSecrets(const std::string& id);
  const std::string boot_id_;  // this boot's, read once ("" unreadable)
  std::vector<std::string> shim_argv_;
  std::string state_dir_;
  std::string cgroup_root_ = "/sys/fs/cgroup";
  std::string secrets_root_ = kDefaultSecretsRoot;
  std::set<std::string> with_secrets_;  // ids of tasks whose secrets directory may exist
  bool wait_for_start_ = true;
  std::map<std::string, pid_t> shims_;  // id -> shim pid (0: adopted, not our child)
  std::map<std::string, std::vector<std::string>> cgroups_;  // id -> its cgroup directories
};

}  // namespace rota::agent
