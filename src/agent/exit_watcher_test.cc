#include "agent/exit_watcher.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <set>

#include "common/mutex.h"
#include "common/test_util.h"

namespace rota::agent {
namespace {

// A child that exits when its pipe is closed.
struct Child {
  pid_t pid = -1;
  int write_fd = -1;
  Child() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid = ::fork();
    if (pid == 0) {
      ::close(fds[1]);
      char c;
      while (::read(fds[0], &c, 1) > 0) {
      }
      ::_exit(0);
    }
    ::close(fds[0]);
    write_fd = fds[1];
  }
  void End() {
    if (write_fd >= 0) ::close(write_fd);
    write_fd = -1;
  }
  void Reap() {
    End();
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    pid = -1;
  }
  ~Child() { Reap(); }
};

TEST(ExitWatcherTest, TellsWhenAWatchedProcessEnds) {
  Mutex mu;
  std::set<pid_t> ended;
  ExitWatcher w([&](pid_t pid) {
    MutexLock lock(&mu);
    ended.insert(pid);
  });
  Child a, b;
  ASSERT_TRUE(w.Watch(a.pid));
  ASSERT_TRUE(w.Watch(b.pid));
  b.End();
  ASSERT_TRUE(testutil::WaitFor([&] {
    MutexLock lock(&mu);
    return ended.count(b.pid) == 1;
  }));
  {
    MutexLock lock(&mu);
    EXPECT_EQ(ended.count(a.pid), 0u);  // still running
  }
  a.End();
  ASSERT_TRUE(testutil::WaitFor([&] {
    MutexLock lock(&mu);
    return ended.count(a.pid) == 1;
  }));
}

TEST(ExitWatcherTest, AProcessAlreadyGoneCannotBeWatched) {
  ExitWatcher w([](pid_t) {});
  Child c;
  const pid_t pid = c.pid;
  c.Reap();
  EXPECT_FALSE(w.Watch(pid));
  EXPECT_FALSE(w.Watch(0));
}

TEST(ExitWatcherTest, StopsWithProcessesStillWatched) {
  Child c;
  {
    ExitWatcher w([](pid_t) {});
    ASSERT_TRUE(w.Watch(c.pid));
  }  // must return although the child runs on
  c.Reap();
}

}  // namespace
}  // namespace rota::agent
