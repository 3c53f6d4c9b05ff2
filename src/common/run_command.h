#pragma once
// Running a short-lived command to completion: argv (never a shell string), bytes
// fed to its stdin, stdout and stderr captured, a deadline.

#include <string>
#include <vector>

#include "common/status.h"

namespace rota {

struct CommandOutput {
  int exit_code = -1;  // exit status; -1 when killed by a signal
  int signal = 0;      // the signal that ended it, 0 when it exited
  std::string out;     // stdout
  std::string err;     // stderr
};

struct RunOptions {
  std::string input;            // written to the command's stdin, then stdin is closed
  int timeout_ms = 30'000;      // then SIGKILL (to its process group) and DeadlineExceeded
  size_t max_output = 16 << 20; // bytes kept of stdout and of stderr each; the rest is dropped
};

// Runs argv[0] (searched in PATH) with the parent's environment in its own
// process group, and waits for it. Returns its output whatever its exit status;
// Unavailable when it cannot be started; DeadlineExceeded (naming the command)
// when it ran out of time — it and its process group are killed and reaped.
// Thread-safe; blocks the calling thread.
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv, const RunOptions& options);

}  // namespace rota
