#pragma once
// Starting and stopping child processes (argv, never a shell string).

#include <spawn.h>
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace rota {

struct SpawnOptions {
  // Variables set (or overridden) on top of the parent's environment.
  std::map<std::string, std::string> env;
  // stdout and stderr are appended to this file when set; else inherited.
  std::string output_path;
  // When set, stderr goes to this file instead (stdout still to output_path).
  std::string error_path;
  // When set, stdin is read from this file; else inherited.
  std::string input_path;
  // Start in a new process group (so a signal to -pid reaches its children).
  bool new_process_group = false;
  // The child gets SIGKILL when the spawning *thread* exits (PR_SET_PDEATHSIG), so
  // helpers started by a test or by `rota dev` never outlive a crashed parent. Spawn
  // from a long-lived thread (e.g. main) when this is set.
  bool die_with_parent = false;
  // Added to the child's niceness before it runs anything (all its threads and
  // descendants inherit it). 0: unchanged.
  int nice = 0;
};

// Starts argv[0] (searched in PATH when it has no '/') with argv. The child
// starts with an empty signal mask and default signal dispositions, and with no
// file descriptors of the parent but stdin, stdout and stderr.
Result<pid_t> SpawnProcess(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// posix_spawn attributes for a child that starts with an empty signal mask and
// default signal dispositions, in a process group of its own when asked.
// The caller destroys them (posix_spawnattr_destroy).
void InitChildSpawnAttr(posix_spawnattr_t* attr, bool new_process_group);

// In a forked child before exec: every signal to its default action, then an
// empty mask (so what arrived since the fork is delivered with default actions,
// never to a handler of the parent). Async-signal-safe.
void ResetSignalsInChild();

// Waits for `pid` up to timeout_ms (-1: forever). Returns the wait status, or
// Unavailable on timeout (the child keeps running).
Result<int> WaitProcess(pid_t pid, int timeout_ms);

// SIGTERM, then SIGKILL after grace_ms if still running; reaps the child.
void StopProcess(pid_t pid, int grace_ms);

// The absolute path of the running executable (/proc/self/exe).
Result<std::string> SelfExecutable();

}  // namespace rota
