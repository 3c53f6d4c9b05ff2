#include "common/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/clock.h"
#include "common/process.h"

extern char** environ;

namespace rota {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  void Close(int end) {
    if (fd[end] >= 0) ::close(fd[end]);
    fd[end] = -1;
  }
};

int64_t NowMs() { return MonotonicNs() / 1'000'000; }

// write(2) to a pipe whose reader may be gone, without a process-wide SIGPIPE:
// the signal is blocked on this thread and a pending one is consumed.
ssize_t WriteNoSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t w = ::write(fd, data, size);
  int saved = errno;
  if (w < 0 && saved == EPIPE) {
    timespec zero{};
    ::sigtimedwait(&pipe_set, nullptr, &zero);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return w;
}

}  // namespace

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv, const RunOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("empty command");
  Pipe in, out, err;
  if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 ||
      ::pipe2(err.fd, O_CLOEXEC) != 0) {
    return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  InitChildSpawnAttr(&attr, /*new_process_group=*/true);
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& s : copy) args.push_back(s.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::Unavailable("cannot start " + argv[0] + ": " + std::strerror(rc));
  in.Close(0);
  out.Close(1);
  err.Close(1);
  ::fcntl(in.fd[1], F_SETFL, O_NONBLOCK);

  CommandOutput result;
  size_t written = 0;
  if (options.input.empty()) in.Close(1);
  const int64_t deadline = NowMs() + options.timeout_ms;
  bool timed_out = false;
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    int64_t left = deadline - NowMs();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[3];
    nfds_t n = 0;
    int* owners[3];
    std::string* sinks[3];
    auto add = [&](int& fd, short events, std::string* sink) {
      if (fd < 0) return;
      fds[n] = pollfd{fd, events, 0};
      owners[n] = &fd;
      sinks[n] = sink;
      ++n;
    };
    add(in.fd[1], POLLOUT, nullptr);
    add(out.fd[0], POLLIN, &result.out);
    add(err.fd[0], POLLIN, &result.err);
    int pr = ::poll(fds, n, static_cast<int>(left));
    if (pr < 0) {
      if (errno == EINTR) continue;
      timed_out = true;  // cannot wait any more: treat as out of time
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (sinks[i] == nullptr) {  // stdin
        ssize_t w = WriteNoSigpipe(*owners[i], options.input.data() + written,
                                   options.input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == options.input.size()) {
          ::close(*owners[i]);
          *owners[i] = -1;
        }
        continue;
      }
      ssize_t r = ::read(*owners[i], buf, sizeof buf);
      if (r > 0) {
        size_t room = options.max_output - std::min(options.max_output, sinks[i]->size());
        sinks[i]->append(buf, std::min(room, static_cast<size_t>(r)));
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        ::close(*owners[i]);
        *owners[i] = -1;
      }
    }
  }
  in.Close(1);
  if (timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status::DeadlineExceeded(argv[0] + " did not finish within " +
                                    std::to_string(options.timeout_ms) + " ms");
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace rota
