#include "common/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/clock.h"

extern char** environ;

namespace rota {

namespace {

// fork + exec for what posix_spawn cannot do (PR_SET_PDEATHSIG, nice). Between fork and exec
// the child only makes async-signal-safe calls; an exec failure is reported back
// through a close-on-exec pipe.
Result<pid_t> ForkExec(std::vector<char*>& args, std::vector<char*>& envp,
                       const SpawnOptions& options) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  const char* out_path = options.output_path.empty() ? nullptr : options.output_path.c_str();
  const char* err_path = options.error_path.empty() ? nullptr : options.error_path.c_str();
  const char* in_path = options.input_path.empty() ? nullptr : options.input_path.c_str();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return Status::Unavailable(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    if (options.die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent is already gone
    }
    ResetSignalsInChild();
    if (options.new_process_group) ::setpgid(0, 0);
    if (options.nice != 0) {
      errno = 0;
      if (::nice(options.nice) == -1 && errno != 0) ::_exit(127);
    }
    if (in_path != nullptr) {
      int fd = ::open(in_path, O_RDONLY);
      if (fd >= 0) {
        ::dup2(fd, STDIN_FILENO);
        ::close(fd);
      }
    }
    if (out_path != nullptr) {
      int fd = ::open(out_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, STDOUT_FILENO);
        if (err_path == nullptr) ::dup2(fd, STDERR_FILENO);
        ::close(fd);
      }
    }
    if (err_path != nullptr) {
      int fd = ::open(err_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, STDERR_FILENO);
        ::close(fd);
      }
    }
    // Only stdin/stdout/stderr (and the exec-error pipe, closed on exec) survive.
    ::close_range(3, static_cast<unsigned>(pipefd[1]) - 1, 0);
    ::close_range(static_cast<unsigned>(pipefd[1]) + 1, ~0U, 0);
    ::execvpe(args[0], args.data(), envp.data());
    int err = errno;
    ssize_t ignored = ::write(pipefd[1], &err, sizeof(err));
    (void)ignored;
    ::_exit(127);
  }
  ::close(pipefd[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(pipefd[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  ::close(pipefd[0]);
  if (n == sizeof(child_errno)) {
    ::waitpid(pid, nullptr, 0);
    return Status::Unavailable(std::string("cannot start ") + args[0] + ": " +
                               std::strerror(child_errno));
  }
  return pid;
}

}  // namespace

Result<pid_t> SpawnProcess(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("empty command");
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : options.env) env[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  if (options.die_with_parent || options.nice != 0) return ForkExec(args, envp, options);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!options.input_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, options.input_path.c_str(), O_RDONLY,
                                     0);
  }
  if (!options.output_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options.output_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (options.error_path.empty()) {
      posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    }
  }
  if (!options.error_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, options.error_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
  }
  // The child inherits stdin/stdout/stderr only: no sockets or files of ours
  // (an agent's server connection must not live on in its tasks).
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  InitChildSpawnAttr(&attr, options.new_process_group);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::Unavailable("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

void ResetSignalsInChild() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
}

void InitChildSpawnAttr(posix_spawnattr_t* attr, bool new_process_group) {
  posix_spawnattr_init(attr);
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  posix_spawnattr_setsigmask(attr, &empty);
  posix_spawnattr_setsigdefault(attr, &all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (new_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(attr, 0);
  }
  posix_spawnattr_setflags(attr, flags);
}

Result<int> WaitProcess(pid_t pid, int timeout_ms) {
  auto deadline = SteadyNow() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, timeout_ms < 0 ? 0 : WNOHANG);
    if (r == pid) return status;
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::NotFound("no child " + std::to_string(pid) + ": " + std::strerror(errno));
    }
    if (timeout_ms >= 0 && SteadyNow() >= deadline) {
      return Status::Unavailable("process " + std::to_string(pid) + " still running");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void StopProcess(pid_t pid, int grace_ms) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  if (WaitProcess(pid, grace_ms).ok()) return;
  ::kill(pid, SIGKILL);
  (void)WaitProcess(pid, -1);
}

Result<std::string> SelfExecutable() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return Status::IoError(std::string("readlink /proc/self/exe: ") + std::strerror(errno));
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace rota
