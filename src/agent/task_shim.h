#pragma once
// The task shim: a small supervisor process (`rota task-shim SPEC_FILE`) the agent
// starts for every job process. It
//  - starts the process in a process group of its own, as the job owner (setgid,
//    initgroups, setuid when running as root; never as root), with exactly the
//    given environment, working directory and stdout/stderr log files;
//  - writes the process's pid to `pid_path` with what identifies it beyond the pid
//    (TaskProcess: this boot's id and the process's start time), waits for it, and
//    writes how it ended to `status_path` (atomically; both files 0600);
//  - survives the agent: an agent restarted later re-adopts the task from these
//    files (its exit status is not lost, as it would be for a non-child).
// Signals to the task go to its process group (-pid), never to the shim, and only
// while the pid is still the task's (TaskRunner checks the TaskProcess first).

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "common/status.h"

namespace rota::agent {

struct ShimSpec {
  std::vector<std::string> argv;           // argv[0]: absolute, or searched in env's PATH
  std::map<std::string, std::string> env;  // the whole environment of the process
  std::string workdir;                     // "" = stay in the shim's directory
  std::optional<uint32_t> uid;             // run as this user (REQUIRES root); unset: as the shim
  std::optional<uint32_t> gid;             // its primary group (with uid)
  std::string user;                        // its name (informational)
  // Its supplementary groups (with uid), resolved by the agent (getgrouplist): the
  // shim needs no user database, so it can be linked statically (starts faster).
  std::vector<uint32_t> groups;
  // Appended; created 0600 and owned by uid (only the owner and root read them).
  std::string stdout_path, stderr_path;
  std::string pid_path, status_path;
  // cgroup directories the process joins before it drops privileges (task_cgroup.h);
  // whatever is left in them when it ends is killed and they are removed.
  std::vector<std::string> cgroups;
  // Signals the process starts with ignored (SIG_IGN survives exec): a malleable
  // task's resize signal, so that one arriving before the task installs its
  // handler (or at a task that never does) does not end it. 1..64.
  std::vector<int> ignore_signals;
  // Variables whose values the shim reads from files (as root, before the start):
  // secrets asked for as variables, whose values never sit in this spec (which is
  // on disk). Variable -> absolute path.
  std::map<std::string, std::string> env_files;
  // The task's secrets directory (task_secrets.h), removed when the task ends; "" none.
  std::string secrets_dir;
};

api::Json ToJson(const ShimSpec& s);
// InvalidArgument naming the field.
Result<ShimSpec> ShimSpecFromJson(const api::Json& j);

// How a task ended (the status file).
struct TaskExit {
  int exit_code = -1;   // 0..255 when it exited, -1 when killed by a signal
  int signal = 0;       // the signal that killed it, 0 when it exited
  int64_t ended_ms = 0;
  std::string error;    // the process could not be started (exec failed, bad user, ...)

  // Kubeflow-style code: exit status, or 128 + signal.
  int Code() const { return signal != 0 ? 128 + signal : exit_code; }
};
api::Json ToJson(const TaskExit& e);
Result<TaskExit> TaskExitFromJson(const api::Json& j);

// The task's process as the shim recorded it (the pid file): a pid alone may name
// another process after the task ended, or after a reboot.
struct TaskProcess {
  pid_t pid = 0;
  std::string boot_id;  // /proc/sys/kernel/random/boot_id when it started; "" unknown
  std::optional<uint64_t> start_ticks;  // field 22 of /proc/PID/stat (ticks after boot)

  // False for a record of an older shim (a pid alone): nothing tells whether the
  // pid is still the task.
  bool identified() const { return !boot_id.empty() && start_ticks.has_value(); }
};

// "PID\nboot_id ID\nstart_ticks N\n" (the first line alone is the old format; tools
// that read the pid from the first line keep working).
std::string FormatPidFile(const TaskProcess& p);
// nullopt when the first line is not a pid > 1; unknown or bad later lines leave
// the identity unset.
std::optional<TaskProcess> ParsePidFile(std::string_view text);

inline constexpr char kBootIdPath[] = "/proc/sys/kernel/random/boot_id";
// The id of this boot (trimmed); "" when it cannot be read.
std::string ReadBootId(const char* path = kBootIdPath);
// Field 22 of /proc/<pid>/stat (start time in ticks after boot); nullopt when the
// process is gone or the file cannot be parsed.
std::optional<uint64_t> ReadStartTicks(pid_t pid);

// `rota task-shim SPEC_FILE`: runs the task and returns the shim's exit status
// (0 when the status file was written, whatever the task did).
int RunTaskShim(const std::string& spec_file);

}  // namespace rota::agent
