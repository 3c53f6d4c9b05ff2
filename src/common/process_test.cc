#include "common/process.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "common/file_util.h"
#include "common/test_util.h"

namespace rota {
namespace {

// Running and not a zombie (a killed orphan may wait a moment for its reaper).
bool Alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return false;
  size_t close = stat->rfind(')');
  return close == std::string::npos || close + 2 >= stat->size() || (*stat)[close + 2] != 'Z';
}

TEST(ProcessTest, SpawnWaitAndOutput) {
  char tmpl[] = "/tmp/rota_process_XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  for (bool die_with_parent : {false, true}) {
    SpawnOptions o;
    o.env = {{"ROTA_PROCESS_TEST", "hello world"}};
    o.output_path = dir + "/out" + std::to_string(die_with_parent);
    o.die_with_parent = die_with_parent;
    auto pid = SpawnProcess({"printenv", "ROTA_PROCESS_TEST"}, o);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    auto st = WaitProcess(*pid, 10000);
    ASSERT_TRUE(st.ok());
    EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0);
    EXPECT_EQ(*ReadFile(o.output_path), "hello world\n");
  }
}

// The child (and what it starts) runs at the given niceness on top of ours.
TEST(ProcessTest, NiceIsAppliedToTheChildAndItsChildren) {
  char tmpl[] = "/tmp/rota_process_XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  errno = 0;
  const int ours = ::getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  for (bool die_with_parent : {false, true}) {
    SpawnOptions o;
    o.nice = 5;
    o.die_with_parent = die_with_parent;
    o.output_path = dir + "/nice" + std::to_string(die_with_parent);
    // Field 19 of stat is the niceness: the shell's own and its child's.
    auto pid = SpawnProcess({"/bin/sh", "-c", "cut -d' ' -f19 /proc/$$/stat; cut -d' ' -f19 /proc/self/stat"}, o);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    auto st = WaitProcess(*pid, 10000);
    ASSERT_TRUE(st.ok());
    EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0);
    const std::string want = std::to_string(std::min(ours + 5, 19));
    EXPECT_EQ(*ReadFile(o.output_path), want + "\n" + want + "\n");
  }
  errno = 0;
  EXPECT_EQ(::getpriority(PRIO_PROCESS, 0), ours);  // ours is unchanged
}

// Bad inputs tried: empty argv, a command that does not exist (both spawn paths).
// Regression: an agent's server connection lived on in its job tasks (and the
// server saw the agent leave only when they exited). Children get 0-2 only.
TEST(ProcessTest, ChildrenInheritOnlyStandardDescriptors) {
  int fd = ::open("/dev/null", O_RDONLY);  // not close-on-exec
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, 57), 57);
  for (bool die_with_parent : {false, true}) {
    SpawnOptions o;
    o.die_with_parent = die_with_parent;
    auto pid = SpawnProcess({"/bin/sh", "-c", "[ -e /proc/self/fd/0 ] && [ ! -e /proc/self/fd/57 ]"}, o);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    auto st = WaitProcess(*pid, 10000);
    ASSERT_TRUE(st.ok());
    EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << "fd 57 leaked (die_with_parent "
                                                          << die_with_parent << ")";
  }
  ::close(57);
  ::close(fd);
}

TEST(ProcessTest, BadCommandsAreErrors) {
  EXPECT_EQ(SpawnProcess({}).status().code(), StatusCode::kInvalidArgument);
  for (bool die_with_parent : {false, true}) {
    SpawnOptions o;
    o.die_with_parent = die_with_parent;
    auto pid = SpawnProcess({"/nonexistent/rota-no-such-command"}, o);
    ASSERT_FALSE(pid.ok());
    EXPECT_NE(pid.status().message().find("cannot start"), std::string::npos);
  }
}

TEST(ProcessTest, ChildDiesWithItsParent) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t middle = ::fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    SpawnOptions o;
    o.die_with_parent = true;
    auto pid = SpawnProcess({"sleep", "60"}, o);
    pid_t v = pid.ok() ? *pid : -1;
    ssize_t ignored = ::write(fds[1], &v, sizeof(v));
    (void)ignored;
    ::_exit(0);  // the "parent" dies without stopping its child
  }
  pid_t grandchild = -1;
  ASSERT_EQ(::read(fds[0], &grandchild, sizeof(grandchild)), static_cast<ssize_t>(sizeof(grandchild)));
  ::waitpid(middle, nullptr, 0);
  ASSERT_GT(grandchild, 0);
  // The grandchild is reparented to init (or a subreaper) which reaps it.
  const bool gone = testutil::WaitFor([&] { return !Alive(grandchild); });
  if (!gone) ::kill(grandchild, SIGKILL);
  EXPECT_TRUE(gone) << "child outlived its parent";
}

}  // namespace
}  // namespace rota
