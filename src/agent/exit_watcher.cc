#include "agent/exit_watcher.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "common/log.h"

namespace rota::agent {
namespace {

int PidfdOpen(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

ExitWatcher::ExitWatcher(std::function<void(pid_t)> on_exit) : on_exit_(std::move(on_exit)) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || stop_fd_ < 0) {
    ROTA_LOG(WARNING) << "task ends are found by polling only: epoll/eventfd failed (errno "
                      << errno << ")";
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = UINT64_MAX;  // the stop event; pidfds carry (pid << 32 | fd)
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &ev);
  thread_ = std::thread([this] { Run(); });
}

ExitWatcher::~ExitWatcher() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    if (::write(stop_fd_, &one, sizeof one) < 0)
      ROTA_LOG(WARNING) << "exit watcher: cannot wake its thread";
    thread_.join();
  }
  MutexLock lock(&mu_);
  for (int fd : pidfds_) ::close(fd);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

bool ExitWatcher::Watch(pid_t pid) {
  if (pid <= 0 || !thread_.joinable()) return false;
  const int fd = PidfdOpen(pid);
  if (fd < 0) return false;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 =
      (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(fd);
  MutexLock lock(&mu_);
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    ::close(fd);
    return false;
  }
  pidfds_.insert(fd);
  return true;
}

void ExitWatcher::Run() {
  epoll_event events[32];
  for (;;) {
    const int n = ::epoll_wait(epoll_fd_, events, 32, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      ROTA_LOG(WARNING) << "exit watcher: epoll_wait failed (errno " << errno
                        << "); task ends are polled";
      return;
    }
    for (int i = 0; i < n; ++i) {
      const uint64_t data = events[i].data.u64;
      if (data == UINT64_MAX) return;
      const int fd = static_cast<int>(data & 0xffffffffu);
      const pid_t pid = static_cast<pid_t>(data >> 32);
      {
        MutexLock lock(&mu_);
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
        ::close(fd);
        pidfds_.erase(fd);
      }
      on_exit_(pid);
    }
  }
}

}  // namespace rota::agent
