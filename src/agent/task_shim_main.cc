// rota-task-shim SPEC_FILE: the task supervisor as a small program of its own.
// The agent starts one per job process and it lives as long as the process, so
// it links only what it needs (no HTTP, TLS, SQLite): it starts in about a
// millisecond and stays small. `rota task-shim` is the same code, used when
// this program is not installed beside `rota`.

#include <unistd.h>

#include "agent/task_shim.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    static const char kUsage[] = "usage: rota-task-shim SPEC_FILE (started by rota agent)\n";
    ssize_t ignored = ::write(STDERR_FILENO, kUsage, sizeof kUsage - 1);
    (void)ignored;
    return 2;
  }
  return rota::agent::RunTaskShim(argv[1]);
}
