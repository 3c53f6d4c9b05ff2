#pragma once
// The POSIX sh scripts rota runs on an agentless (ssh) node, and parsers for
// what they print. Pure: nothing here runs a process. Every value that comes
// from a job (argv, environment, directory, file contents) enters a script only
// through ShellQuote, so a command stays an argv on the node exactly as given.
//
// Layout on the node, per task, owned by the task's user:
//   $HOME/.rota/<cluster>/tasks/<id>/  wpid, pid, exit, stdout.log, stderr.log, job files
// <cluster> is the server's cluster id (CheckClusterId), so task ids of two
// clusters (or of a server started afresh) never meet on a node. Finished task
// directories older than 7 days are removed when a task starts.
// The task runs in its own session (setsid) with exactly the environment of its
// spec (env -i); a small sh supervisor waits for it and writes its exit status,
// so the status survives the ssh connection and the server.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/task_protocol.h"
#include "api/types.h"
#include "common/status.h"

namespace rota::ssh {

// InvalidArgument unless `cluster` is 1..64 of [A-Za-z0-9_-].
Status CheckClusterId(const std::string& cluster);

// 'text' with every ' written as '\''. Safe for any byte but NUL.
std::string ShellQuote(const std::string& text);

// The remote command that runs the script fed on stdin as `task_user`:
// directly when the login is that user, through setpriv (dropping to the user's
// uid, gid and groups, with its HOME) when the login is root. The script then
// refuses root. PermissionDenied when login is neither root nor task_user.
Result<std::string> RemoteShell(const std::string& login_user, const std::string& task_user);

// Starts the task. Prints "started PID" or "error: WHY" ("port N is in use on this
// node" when one of task.ports has a listener, as an agent reports it). Extra variables a task
// needs from its user's account (HOME, USER, LOGNAME, SHELL, PATH) are added when
// the spec does not set them. InvalidArgument for NUL bytes in any value.
Result<std::string> LaunchScript(const std::string& cluster, const api::TaskSpec& task);

// Prints one line per id: ID\tSTATE\tEXIT\tPID\tERROR with STATE running,
// exited, lost (its supervisor is gone without an exit status) or missing.
std::string PollScript(const std::string& cluster, const std::vector<std::string>& ids);
// Reports by id. An exit status 129..192 is a signal (128 + n), as sh reports it.
// "missing" becomes "lost". Lines that do not parse are skipped.
std::map<std::string, api::TaskReport> ParsePoll(const std::string& output);

// Signals the task's process group ("TERM" or "KILL"; `kill -SIG -PGID`, the form
// dash and bash both take). Prints "ok" or "error: WHY".
Result<std::string> SignalScript(const std::string& cluster, const std::string& id,
                                 const std::string& signal);

// Prints "size N\n" then up to max_bytes of the stream's log from offset, or
// "error: WHY".
Result<std::string> LogsScript(const std::string& cluster, const api::TaskLogsMsg& request);
api::TaskLogMsg ParseLogs(uint64_t req, uint64_t offset, const std::string& output);

// What a node says of itself: hostname, CPUs, memory, load, the CPU counters of
// /proc/stat, and its GPUs when nvidia-smi is there.
std::string ProbeScript();
struct Probe {
  std::string hostname;
  uint32_t cpus = 0;
  uint64_t mem_total_bytes = 0, mem_available_bytes = 0;
  double load1 = 0, load5 = 0, load15 = 0;
  uint64_t cpu_busy = 0, cpu_total = 0;  // jiffies since boot
  std::vector<api::GpuInfo> gpu_infos;   // from nvidia-smi; empty without it
  std::vector<api::GpuSample> gpus;
};
// InvalidArgument when the output lacks the hostname or CPU count.
Result<Probe> ParseProbe(const std::string& output);

}  // namespace rota::ssh
