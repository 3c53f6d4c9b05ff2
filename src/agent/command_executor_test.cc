// CommandExecutor against real processes and real pseudo-terminals. The tests that
// run a process as another user need root (CI runs as root) and skip otherwise.

#include "agent/command_executor.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utmpx.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/file_util.h"
#include "common/process.h"
#include "common/test_util.h"
#include "host/host_monitor.h"

namespace rota::agent {
namespace {

using api::CommandAction;
using api::CommandMsg;
using api::CommandResultMsg;
using api::CommandSignal;
using api::TargetOutcome;

constexpr char kTestUser[] = "rota-test-b";

// The start time the server sees for `pid`: computed by the agent's HostMonitor.
int64_t StartTimeOf(pid_t pid) {
  host::HostMonitor monitor;
  api::GpuProcess p;
  p.pid = static_cast<uint32_t>(pid);
  api::GpuProcess* ptr = &p;
  monitor.Describe(std::span<api::GpuProcess* const>(&ptr, 1));
  EXPECT_TRUE(p.start_time_ms.has_value()) << "no start time for pid " << pid;
  return p.start_time_ms.value_or(0);
}

std::string Comm(pid_t pid) {
  auto text = ReadFile("/proc/" + std::to_string(pid) + "/comm");
  return text.ok() ? *text : "";
}

// Waits until `pid` runs `sleep` (so a fork has done its setuid and exec).
bool WaitForExec(pid_t pid) {
  return testutil::WaitFor([&] { return Comm(pid) == "sleep\n"; });
}

// A child reaped (SIGKILL first) on destruction.
struct ChildGuard {
  pid_t pid = -1;
  ~ChildGuard() { Reap(); }
  void Reap() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    (void)WaitProcess(pid, -1);
    pid = -1;
  }
  // The wait status once the child has exited within timeout_ms; nullopt if still running.
  std::optional<int> WaitExit(int timeout_ms) {
    auto st = WaitProcess(pid, timeout_ms);
    if (!st.ok()) return std::nullopt;
    pid = -1;
    return *st;
  }
};

CommandMsg Command(CommandAction action, uint32_t uid, std::vector<std::pair<pid_t, int64_t>> targets) {
  CommandMsg m;
  m.id = 17;
  m.action = action;
  m.uid = uid;
  for (auto [pid, start] : targets) m.targets.push_back({static_cast<uint32_t>(pid), start, 0});
  return m;
}

CommandMsg SignalCmd(CommandSignal sig, uint32_t uid, pid_t pid, int64_t start) {
  CommandMsg m = Command(CommandAction::kSignal, uid, {{pid, start}});
  m.signal = sig;
  return m;
}

ChildGuard SpawnSleep() {
  ChildGuard c;
  SpawnOptions opts;
  opts.die_with_parent = true;
  auto pid = SpawnProcess({"sleep", "60"}, opts);
  EXPECT_TRUE(pid.ok()) << pid.status().ToString();
  c.pid = pid.ok() ? *pid : -1;
  return c;
}

bool IsRoot() { return ::geteuid() == 0; }

// The tests signal their own children (root's, in CI) and a system account's
// processes: an executor that may touch every uid.
CommandExecutor Executor() { return CommandExecutor(kDefaultUtmpPath, /*min_uid=*/0); }

// Creates (once) the unprivileged test user; its uid/gid, or nullopt.
std::optional<std::pair<uid_t, gid_t>> TestUser() {
  if (const passwd* pw = ::getpwnam(kTestUser)) return std::make_pair(pw->pw_uid, pw->pw_gid);
  auto pid = SpawnProcess({"useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                           kTestUser});
  if (pid.ok()) (void)WaitProcess(*pid, 30'000);
  if (const passwd* pw = ::getpwnam(kTestUser)) return std::make_pair(pw->pw_uid, pw->pw_gid);
  return std::nullopt;
}

// A `sleep 60` whose controlling terminal is the slave of a fresh pty, optionally
// running as another user; the test reads what is written to it from the master.
struct PtyChild {
  int master = -1;
  std::string slave_path;
  ChildGuard child;
  ~PtyChild() {
    child.Reap();
    if (master >= 0) ::close(master);
  }

  // tty_owner: chown the slave to it first (root only). run_as: setuid to it.
  ::testing::AssertionResult Start(std::optional<uid_t> tty_owner = std::nullopt,
                                   std::optional<std::pair<uid_t, gid_t>> run_as = std::nullopt) {
    int slave = -1;
    if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) {
      return ::testing::AssertionFailure() << "openpty: " << std::strerror(errno);
    }
    char name[256];
    if (::ttyname_r(slave, name, sizeof(name)) != 0) return ::testing::AssertionFailure() << "ttyname_r";
    slave_path = name;
    if (tty_owner && ::fchown(slave, *tty_owner, static_cast<gid_t>(-1)) != 0) {
      return ::testing::AssertionFailure() << "fchown: " << std::strerror(errno);
    }
    pid_t pid = ::fork();
    if (pid < 0) return ::testing::AssertionFailure() << "fork: " << std::strerror(errno);
    if (pid == 0) {
      // Only async-signal-safe calls between fork and exec.
      ::setsid();
      if (::ioctl(slave, TIOCSCTTY, 0) != 0) ::_exit(120);
      ::dup2(slave, 0);
      ::dup2(slave, 1);
      ::dup2(slave, 2);
      if (slave > 2) ::close(slave);
      ::close(master);
      if (run_as) {
        if (::setgroups(0, nullptr) != 0 || ::setgid(run_as->second) != 0 || ::setuid(run_as->first) != 0) {
          ::_exit(121);
        }
      }
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // after setuid, which clears it
      ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    child.pid = pid;
    ::close(slave);
    if (!WaitForExec(pid)) return ::testing::AssertionFailure() << "child did not exec sleep";
    return ::testing::AssertionSuccess();
  }

  // What arrives on the master within timeout_ms, stopping early once `until` is seen.
  std::string Read(int timeout_ms, const std::string& until = "\x01never") {
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (out.find(until) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{master, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[4096];
      ssize_t n = ::read(master, buf, sizeof(buf));
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
};

// ---- signal ----

TEST(CommandExecutorTest, TermKillsAVerifiedProcess) {
  ChildGuard c = SpawnSleep();
  ASSERT_GT(c.pid, 0);
  CommandExecutor ex = Executor();
  CommandResultMsg r = ex.Execute(SignalCmd(CommandSignal::kTerm, ::getuid(), c.pid, StartTimeOf(c.pid)));
  EXPECT_EQ(r.id, 17u);
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].pid, static_cast<uint32_t>(c.pid));
  EXPECT_EQ(r.outcomes[0].outcome, TargetOutcome::kSignalled) << r.outcomes[0].detail;
  auto st = c.WaitExit(5000);
  ASSERT_TRUE(st.has_value()) << "sleep survived SIGTERM";
  EXPECT_TRUE(WIFSIGNALED(*st) && WTERMSIG(*st) == SIGTERM);
}

TEST(CommandExecutorTest, WrongStartTimeIsAMismatchAndNothingIsSignalled) {
  ChildGuard c = SpawnSleep();
  ASSERT_GT(c.pid, 0);
  CommandExecutor ex = Executor();
  int64_t start = StartTimeOf(c.pid);
  // Just outside the tolerance, both ways: a reused pid.
  for (int64_t off : {CommandExecutor::kStartTimeToleranceMs + 100, -CommandExecutor::kStartTimeToleranceMs - 100,
                      int64_t{3'600'000}}) {
    CommandResultMsg r = ex.Execute(SignalCmd(CommandSignal::kKill, ::getuid(), c.pid, start + off));
    ASSERT_EQ(r.outcomes.size(), 1u);
    EXPECT_EQ(r.outcomes[0].outcome, TargetOutcome::kMismatch) << off;
    EXPECT_NE(r.outcomes[0].detail.find("started at"), std::string::npos) << r.outcomes[0].detail;
  }
  EXPECT_FALSE(c.WaitExit(200).has_value()) << "a mismatched process was signalled";
  // Within the tolerance it is the same process.
  CommandResultMsg ok = ex.Execute(SignalCmd(CommandSignal::kKill, ::getuid(), c.pid, start + 500));
  EXPECT_EQ(ok.outcomes.at(0).outcome, TargetOutcome::kSignalled) << ok.outcomes[0].detail;
  EXPECT_TRUE(c.WaitExit(5000).has_value());
}

TEST(CommandExecutorTest, WrongUidIsAMismatch) {
  ChildGuard c = SpawnSleep();
  ASSERT_GT(c.pid, 0);
  CommandExecutor ex = Executor();
  CommandResultMsg r = ex.Execute(SignalCmd(CommandSignal::kKill, ::getuid() + 4242, c.pid, StartTimeOf(c.pid)));
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].outcome, TargetOutcome::kMismatch);
  EXPECT_NE(r.outcomes[0].detail.find("belongs to uid"), std::string::npos) << r.outcomes[0].detail;
  EXPECT_FALSE(c.WaitExit(200).has_value());
}

TEST(CommandExecutorTest, ProcessIgnoringTermSurvivesItAndDiesOnKill) {
  ChildGuard c;
  SpawnOptions opts;
  opts.die_with_parent = true;
  auto pid = SpawnProcess({"/bin/sh", "-c", "trap '' TERM; exec sleep 60"}, opts);
  ASSERT_TRUE(pid.ok());
  c.pid = *pid;
  ASSERT_TRUE(WaitForExec(c.pid));  // the trap is set once sh has exec'd sleep
  CommandExecutor ex = Executor();
  int64_t start = StartTimeOf(c.pid);
  CommandResultMsg term = ex.Execute(SignalCmd(CommandSignal::kTerm, ::getuid(), c.pid, start));
  EXPECT_EQ(term.outcomes.at(0).outcome, TargetOutcome::kSignalled);
  EXPECT_FALSE(c.WaitExit(300).has_value()) << "SIGTERM was not ignored";
  CommandResultMsg kill = ex.Execute(SignalCmd(CommandSignal::kKill, ::getuid(), c.pid, start));
  EXPECT_EQ(kill.outcomes.at(0).outcome, TargetOutcome::kSignalled);
  EXPECT_EQ(kill.outcomes[0].detail, "SIGKILL sent");
  auto st = c.WaitExit(5000);
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(WIFSIGNALED(*st) && WTERMSIG(*st) == SIGKILL);
}

TEST(CommandExecutorTest, ExitedProcessesAreGone) {
  SpawnOptions opts;
  auto pid = SpawnProcess({"true"}, opts);
  ASSERT_TRUE(pid.ok());
  // Not reaped yet: a zombie.
  ASSERT_TRUE(testutil::WaitFor([&] {
    auto stat = ReadFile("/proc/" + std::to_string(*pid) + "/stat");
    return stat.ok() && stat->find(") Z ") != std::string::npos;
  }));
  CommandExecutor ex = Executor();
  CommandResultMsg r = ex.Execute(SignalCmd(CommandSignal::kKill, ::getuid(), *pid, 0));
  EXPECT_EQ(r.outcomes.at(0).outcome, TargetOutcome::kGone) << r.outcomes[0].detail;
  ASSERT_TRUE(WaitProcess(*pid, 5000).ok());
  r = ex.Execute(SignalCmd(CommandSignal::kKill, ::getuid(), *pid, 0));
  EXPECT_EQ(r.outcomes.at(0).outcome, TargetOutcome::kGone) << r.outcomes[0].detail;
}

TEST(CommandExecutorTest, RefusesPidOneAndItselfAndReportsEachTargetInOrder) {
  ChildGuard c = SpawnSleep();
  ASSERT_GT(c.pid, 0);
  CommandExecutor ex = Executor();
  CommandMsg m = Command(CommandAction::kSignal, ::getuid(),
                         {{1, StartTimeOf(1)}, {::getpid(), StartTimeOf(::getpid())}, {c.pid, 0},
                          {c.pid, StartTimeOf(c.pid)}});
  m.signal = CommandSignal::kTerm;
  CommandResultMsg r = ex.Execute(m);
  ASSERT_EQ(r.outcomes.size(), 4u);
  EXPECT_EQ(r.outcomes[0].outcome, TargetOutcome::kDenied);
  EXPECT_EQ(r.outcomes[1].outcome, TargetOutcome::kDenied);
  EXPECT_EQ(r.outcomes[2].outcome, TargetOutcome::kMismatch);
  EXPECT_EQ(r.outcomes[3].outcome, TargetOutcome::kSignalled);
  EXPECT_TRUE(c.WaitExit(5000).has_value());
}

TEST(CommandExecutorTest, InvalidCommandIsNotRun) {
  ChildGuard c = SpawnSleep();
  CommandExecutor ex = Executor();
  CommandMsg m = SignalCmd(CommandSignal::kKill, ::getuid(), c.pid, StartTimeOf(c.pid));
  m.targets.push_back({0, 0, 0});  // pid 0 would be the process group
  CommandResultMsg r = ex.Execute(m);
  EXPECT_EQ(r.id, 17u);
  EXPECT_NE(r.error.find("targets[1].pid"), std::string::npos) << r.error;
  EXPECT_TRUE(r.outcomes.empty());
  EXPECT_FALSE(c.WaitExit(200).has_value());
}

// ---- warn ----

TEST(CommandExecutorTest, WarnWritesToTheControllingTerminal) {
  PtyChild p;
  ASSERT_TRUE(p.Start());
  CommandExecutor ex = Executor();
  CommandMsg m = Command(CommandAction::kWarn, ::getuid(), {{p.child.pid, StartTimeOf(p.child.pid)}});
  m.message = "GPU 0 is reserved by alice.\n\x1b[2JPlease stop\x07 now.\x7f\tThanks";
  CommandResultMsg r = ex.Execute(m);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.outcomes.empty());
  ASSERT_EQ(r.terminals, std::vector<std::string>{p.slave_path});
  std::string got = p.Read(5000, "Thanks");
  EXPECT_NE(got.find("Message from rota (GPU reservation enforcement) at "), std::string::npos) << got;
  EXPECT_NE(got.find("GPU 0 is reserved by alice."), std::string::npos) << got;
  EXPECT_NE(got.find("[2JPlease stop now.\tThanks"), std::string::npos) << got;
  EXPECT_EQ(got.find('\x1b'), std::string::npos) << "escape sequence reached the terminal";
  EXPECT_EQ(got.find('\x07'), std::string::npos);
}

TEST(CommandExecutorTest, WarnSkipsATerminalOwnedByAnotherUid) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to chown a pty (CI runs as root)";
  PtyChild p;
  ASSERT_TRUE(p.Start(/*tty_owner=*/54321));
  CommandExecutor ex = Executor();
  CommandMsg m = Command(CommandAction::kWarn, ::getuid(), {{p.child.pid, StartTimeOf(p.child.pid)}});
  m.message = "should not arrive";
  CommandResultMsg r = ex.Execute(m);
  EXPECT_TRUE(r.terminals.empty());
  EXPECT_EQ(p.Read(300), "");
}

TEST(CommandExecutorTest, WarnOfAMismatchedTargetWritesNothing) {
  PtyChild p;
  ASSERT_TRUE(p.Start());
  CommandExecutor ex = Executor();
  CommandMsg m = Command(CommandAction::kWarn, ::getuid(), {{p.child.pid, StartTimeOf(p.child.pid) - 60'000}});
  m.message = "should not arrive";
  CommandResultMsg r = ex.Execute(m);
  EXPECT_TRUE(r.terminals.empty());
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].outcome, TargetOutcome::kMismatch);
  EXPECT_EQ(p.Read(300), "");
}

// A utmp file with one login of `user` on `tty` (path under /dev).
std::string WriteUtmp(const std::string& dir, const std::string& user, const std::string& tty) {
  utmpx u{};
  u.ut_type = USER_PROCESS;
  u.ut_pid = ::getpid();
  std::strncpy(u.ut_line, tty.substr(5).c_str(), sizeof(u.ut_line) - 1);
  std::strncpy(u.ut_user, user.c_str(), sizeof(u.ut_user) - 1);
  utmpx dead{};
  dead.ut_type = DEAD_PROCESS;
  std::strncpy(dead.ut_line, "pts/999", sizeof(dead.ut_line) - 1);
  std::string data(reinterpret_cast<const char*>(&dead), sizeof(dead));
  data.append(reinterpret_cast<const char*>(&u), sizeof(u));
  std::string path = dir + "/utmp";
  EXPECT_TRUE(WriteFileAtomic(path, data).ok());
  return path;
}

TEST(CommandExecutorTest, WarnReachesTheUsersLoginSessionsFromUtmp) {
  char tmpl[] = "/tmp/rota_cmd_XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  // A login terminal (no process of the target on it) and a target without a terminal.
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  char name[256];
  ASSERT_EQ(::ttyname_r(slave, name, sizeof(name)), 0);
  const passwd* pw = ::getpwuid(::getuid());
  ASSERT_NE(pw, nullptr);
  std::string utmp = WriteUtmp(dir, pw->pw_name, name);
  ChildGuard c;
  {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::setsid();  // no controlling terminal
      ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    c.pid = pid;
  }
  ASSERT_TRUE(WaitForExec(c.pid));
  CommandExecutor ex(utmp, /*min_uid=*/0);
  CommandMsg m = Command(CommandAction::kWarn, ::getuid(), {{c.pid, StartTimeOf(c.pid)}});
  m.user = pw->pw_name;
  m.message = "from utmp";
  CommandResultMsg r = ex.Execute(m);
  EXPECT_EQ(r.terminals, std::vector<std::string>{name});
  std::string got;
  pollfd p{master, POLLIN, 0};
  if (::poll(&p, 1, 5000) > 0) {
    char buf[4096];
    ssize_t n = ::read(master, buf, sizeof(buf));
    if (n > 0) got.assign(buf, static_cast<size_t>(n));
  }
  EXPECT_NE(got.find("from utmp"), std::string::npos) << got;
  // Another user's name finds no session.
  m.user = "nobody-rota-test";
  EXPECT_TRUE(ex.Execute(m).terminals.empty());
  ::close(slave);
  ::close(master);
  ::unlink(utmp.c_str());
  ::rmdir(dir.c_str());
}

// ---- across users (root only) ----

TEST(CommandExecutorTest, AnotherUsersProcessIsWarnedAndKilled) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to create user " << kTestUser << " and setuid (CI runs as root)";
  auto user = TestUser();
  ASSERT_TRUE(user.has_value()) << "cannot create user " << kTestUser << " with useradd";
  auto [uid, gid] = *user;
  PtyChild p;
  ASSERT_TRUE(p.Start(/*tty_owner=*/uid, /*run_as=*/*user));
  struct stat st;
  ASSERT_EQ(::stat(("/proc/" + std::to_string(p.child.pid)).c_str(), &st), 0);
  ASSERT_EQ(st.st_uid, uid);
  (void)gid;

  CommandExecutor ex = Executor();
  int64_t start = StartTimeOf(p.child.pid);
  CommandMsg warn = Command(CommandAction::kWarn, uid, {{p.child.pid, start}});
  warn.user = kTestUser;
  warn.message = "GPU 1 is reserved; your job will be stopped.";
  CommandResultMsg r = ex.Execute(warn);
  EXPECT_EQ(r.terminals, std::vector<std::string>{p.slave_path});
  std::string got = p.Read(5000, "stopped.");
  EXPECT_NE(got.find("your job will be stopped."), std::string::npos) << got;

  // As root's command: not root's process.
  CommandResultMsg wrong = ex.Execute(SignalCmd(CommandSignal::kKill, 0, p.child.pid, start));
  EXPECT_EQ(wrong.outcomes.at(0).outcome, TargetOutcome::kMismatch);
  EXPECT_FALSE(p.child.WaitExit(200).has_value());

  CommandResultMsg kill = ex.Execute(SignalCmd(CommandSignal::kKill, uid, p.child.pid, start));
  EXPECT_EQ(kill.outcomes.at(0).outcome, TargetOutcome::kSignalled) << kill.outcomes[0].detail;
  auto status = p.child.WaitExit(5000);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL);
}

// ---- text ----

// Security review, issue 41: enforcement signalled root's and system accounts'
// processes (only pid 1 and the agent were refused). By default the agent refuses
// every uid below 1000, whatever the server asks: nothing is signalled or warned.
TEST(CommandExecutorTest, NeverSignalsRootOrSystemAccountsByDefault) {
  ChildGuard child = SpawnSleep();
  ASSERT_TRUE(WaitForExec(child.pid));
  const int64_t start = StartTimeOf(child.pid);
  const uint32_t uid = ::getuid();
  // As root (CI) the default executor; else one whose minimum is just above our uid.
  CommandExecutor ex = uid < api::kDefaultEnforcementMinUid
                           ? CommandExecutor()
                           : CommandExecutor(kDefaultUtmpPath, uid + 1);
  for (CommandSignal sig : {CommandSignal::kTerm, CommandSignal::kKill}) {
    CommandResultMsg r = ex.Execute(SignalCmd(sig, uid, child.pid, start));
    ASSERT_EQ(r.outcomes.size(), 1u);
    EXPECT_EQ(r.outcomes[0].outcome, TargetOutcome::kDenied) << r.outcomes[0].detail;
    EXPECT_NE(r.outcomes[0].detail.find("root or a system account"), std::string::npos)
        << r.outcomes[0].detail;
  }
  CommandMsg warn = Command(CommandAction::kWarn, uid, {{child.pid, start}});
  warn.message = "stop";
  CommandResultMsg w = ex.Execute(warn);
  ASSERT_EQ(w.outcomes.size(), 1u);
  EXPECT_EQ(w.outcomes[0].outcome, TargetOutcome::kDenied);
  EXPECT_TRUE(w.terminals.empty());
  EXPECT_FALSE(child.WaitExit(200).has_value()) << "the process was signalled";
  // At the minimum itself the process is fair game.
  CommandExecutor at_min(kDefaultUtmpPath, uid);
  CommandResultMsg r = at_min.Execute(SignalCmd(CommandSignal::kKill, uid, child.pid, start));
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].outcome, TargetOutcome::kSignalled) << r.outcomes[0].detail;
  EXPECT_TRUE(child.WaitExit(5000).has_value());
}

TEST(TerminalSafeTextTest, StripsControlCharacters) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plain text", "plain text"},
      {"line 1\nline 2\ttab", "line 1\nline 2\ttab"},
      {"\x1b]0;title\x07" "x", "]0;titlex"},  // OSC: ESC and BEL removed
      {"a\rb\bc\x7f" "d", "abcd"},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"c1:\xc2\x9b" "31m|\xc2\x85|", "c1:31m||"},  // CSI and NEL as C1 code points
      {"raw:\x9b" "31m", "raw:31m"},                 // a stray 8-bit CSI byte
      {"bad:\xc0\xaf\xed\xa0\x80\xf5\x80\x80\x80|", "bad:|"},  // overlong, surrogate, > U+10FFFF
      {"cut:\xe2\x82", "cut:"},
      {std::string("nul\0x", 5), "nulx"},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(TerminalSafeText(in), want) << in;
}

}  // namespace
}  // namespace rota::agent
