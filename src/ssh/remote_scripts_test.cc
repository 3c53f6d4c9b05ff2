#include "ssh/remote_scripts.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>

#include "common/file_util.h"
#include "common/run_command.h"
#include "common/test_util.h"

namespace rota::ssh {
namespace {

// Running and not a zombie (an orphan may wait for a reaper that never comes).
bool Alive(pid_t pid) {
  auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return false;
  size_t close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] != 'Z';
}

// Runs a script with sh -s, as the remote login shell would after RemoteShell.
std::string RunScript(const std::string& script) {
  RunOptions o;
  o.input = script;
  o.timeout_ms = 20'000;
  auto r = RunCommand({"/bin/sh", "-s"}, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return "";
  EXPECT_EQ(r->exit_code, 0) << r->err;
  return r->out;
}

// The scripts run here, locally, with HOME pointing at a temporary directory:
// the same scripts an ssh node runs, minus the transport.
class RemoteScriptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rota_remote_XXXXXX";
    home_ = ::mkdtemp(tmpl);
    const char* old = ::getenv("HOME");
    old_home_ = old != nullptr ? old : "";
    ::setenv("HOME", home_.c_str(), 1);
  }
  void TearDown() override {
    ::setenv("HOME", old_home_.c_str(), 1);
    (void)RunCommand({"rm", "-rf", home_}, {});
  }

  api::TaskReport WaitExited(const std::string& id) {
    api::TaskReport report;
    const bool ended = testutil::WaitFor([&] {
      auto reports = ParsePoll(RunScript(PollScript("c1", {id})));
      if (reports.count(id) == 0) return false;
      report = reports[id];
      return report.state != "running";
    }, std::chrono::seconds(20), std::chrono::milliseconds(25));
    if (!ended) ADD_FAILURE() << id << " did not end";
    return ended ? report : api::TaskReport{};
  }

  api::TaskSpec Task(const std::string& id, std::vector<std::string> argv) {
    api::TaskSpec t;
    t.id = id;
    t.job_id = "1";
    t.name = "worker-0";
    t.argv = std::move(argv);
    t.user = "someone";
    return t;
  }

  std::string home_, old_home_;
};

TEST(ShellQuoteTest, EveryByteSurvivesTheShell) {
  const std::string nasty = "it's $(touch /tmp/pwned) `id` \"q\" \\ * ; | & > \n\t end ünï";
  RunOptions o;
  o.input = "printf '%s' " + ShellQuote(nasty);
  auto r = RunCommand({"/bin/sh", "-s"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, nasty);
  EXPECT_EQ(ShellQuote(""), "''");
}

TEST_F(RemoteScriptsTest, LaunchKeepsArgvAndEnvExactAndRecordsTheExit) {
  api::TaskSpec t = Task("job-1.r0.worker-0", {"/bin/sh", "-c",
                                               "printf '%s|' \"$@\"; printf 'V=%s|' \"$V\"; "
                                               "printf 'F=%s|' \"$(cat \"$HOSTFILE\")\"; "
                                               "echo; env | grep -c . ; exit 7",
                                               "sh", "a b", "it's", "$(id)", ""});
  t.env = {{"V", "x'y\"z $HOME"}};
  t.files = {{"hostfile", "127.0.0.1 slots=2\n"}};
  t.file_env = {{"HOSTFILE", "hostfile"}};
  auto script = LaunchScript("c1", t);
  ASSERT_TRUE(script.ok()) << script.status().ToString();
  std::string out = RunScript(*script);
  ASSERT_EQ(out.compare(0, 8, "started "), 0) << out;

  api::TaskReport r = WaitExited(t.id);
  EXPECT_EQ(r.state, "exited");
  ASSERT_TRUE(r.exit_code.has_value());
  EXPECT_EQ(*r.exit_code, 7);
  EXPECT_GT(r.pid, 0);

  auto log = ParseLogs(3, 0, RunScript(*LogsScript("c1", {3, t.id, "stdout", 0, 65536})));
  EXPECT_EQ(log.error, "");
  // V, HOSTFILE, HOME, USER, LOGNAME, SHELL, PATH and the shell's own PWD/SHLVL/_:
  // nothing of the caller's environment beyond that.
  EXPECT_EQ(log.data.substr(0, log.data.find('\n')),
            "a b|it's|$(id)||V=x'y\"z $HOME|F=127.0.0.1 slots=2|");
  int vars = std::stoi(log.data.substr(log.data.find('\n') + 1));
  EXPECT_LE(vars, 10);
  EXPECT_EQ(log.size, log.data.size());

  // A second read from an offset, and a launch of the same id is idempotent.
  auto tail = ParseLogs(4, 4, RunScript(*LogsScript("c1", {4, t.id, "stdout", 4, 3})));
  EXPECT_EQ(tail.data, "it'");
  EXPECT_EQ(RunScript(*script).compare(0, 8, "started "), 0);
}

TEST_F(RemoteScriptsTest, SameTaskIdOfTwoClustersDoesNotMeet) {
  api::TaskSpec t = Task("job-1.r0.worker-0", {"echo", "hi"});
  std::string a = RunScript(*LaunchScript("c1", t));
  std::string b = RunScript(*LaunchScript("c2", t));
  ASSERT_EQ(a.compare(0, 8, "started "), 0) << a;
  ASSERT_EQ(b.compare(0, 8, "started "), 0) << b;
  EXPECT_NE(a, b);  // two processes, two pids
  EXPECT_EQ(ParsePoll(RunScript(PollScript("c3", {t.id})))[t.id].state, "lost");
}

// A port with a listener (here, this test's) is refused as an agent refuses it, and
// leaves no task directory; free ports start the task.
TEST_F(RemoteScriptsTest, PortWithAListenerIsRefused) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const uint16_t taken = ntohs(a.sin_port);
  api::TaskSpec t = Task("job-7.r0.w", {"true"});
  t.ports = {static_cast<uint16_t>(taken == 65535 ? 1 : taken + 1), taken};
  std::string out = RunScript(*LaunchScript("c1", t));
  EXPECT_EQ(out, "error: port " + std::to_string(taken) + " " + api::kPortInUseError + "\n");
  EXPECT_EQ(ParsePoll(RunScript(PollScript("c1", {"job-7.r0.w"})))["job-7.r0.w"].state, "lost");
  ::close(fd);  // free again
  out = RunScript(*LaunchScript("c1", t));
  EXPECT_EQ(out.compare(0, 8, "started "), 0) << out;
  EXPECT_EQ(WaitExited("job-7.r0.w").exit_code, 0);
}

TEST_F(RemoteScriptsTest, MissingCommandAndWorkdirAreReported) {
  auto missing = LaunchScript("c1", Task("job-2.r0.w", {"rota-no-such-command-xyz", "arg"}));
  ASSERT_TRUE(missing.ok());
  ASSERT_EQ(RunScript(*missing).compare(0, 8, "started "), 0);
  api::TaskReport r = WaitExited("job-2.r0.w");
  ASSERT_TRUE(r.exit_code.has_value());
  EXPECT_EQ(*r.exit_code, 127);
  EXPECT_NE(r.error.find("rota-no-such-command-xyz"), std::string::npos) << r.error;

  api::TaskSpec t = Task("job-3.r0.w", {"true"});
  t.workdir = "/nonexistent/dir it's";
  std::string out = RunScript(*LaunchScript("c1", t));
  EXPECT_EQ(out, "error: cannot change to directory /nonexistent/dir it's (missing, or no permission)\n");
  auto unknown = ParsePoll(RunScript(PollScript("c1", {"job-3.r0.w"})));
  EXPECT_EQ(unknown["job-3.r0.w"].state, "lost");
}

TEST_F(RemoteScriptsTest, SignalReachesTheWholeGroupAndIsReportedAsSignal) {
  // The task starts a child in its group; TERM ends both.
  api::TaskSpec t = Task("job-4.r0.w", {"/bin/sh", "-c", "sleep 300 & echo $! > child; wait"});
  t.workdir = home_;
  ASSERT_EQ(RunScript(*LaunchScript("c1", t)).compare(0, 8, "started "), 0);
  auto running = ParsePoll(RunScript(PollScript("c1", {"job-4.r0.w"})));
  EXPECT_EQ(running["job-4.r0.w"].state, "running");
  std::string child;
  ASSERT_TRUE(testutil::WaitFor([&] {
    auto c = ReadFile(home_ + "/child");
    child = c.ok() ? *c : "";
    return !child.empty();
  }));
  EXPECT_EQ(RunScript(*SignalScript("c1", "job-4.r0.w", "TERM")), "ok\n");
  api::TaskReport r = WaitExited("job-4.r0.w");
  ASSERT_TRUE(r.signal.has_value()) << r.state;
  EXPECT_EQ(*r.signal, SIGTERM);
  pid_t child_pid = std::stoi(child);
  EXPECT_TRUE(testutil::WaitFor([&] { return !Alive(child_pid); })) << "the task's child survived";
}

TEST_F(RemoteScriptsTest, BadRequestsAreRefused) {
  EXPECT_FALSE(SignalScript("c1", "job-1.r0.w", "HUP").ok());
  EXPECT_FALSE(SignalScript("../c", "job-1.r0.w", "TERM").ok());
  EXPECT_FALSE(PollScript("c1", {}).empty());
  EXPECT_FALSE(LaunchScript("a b", Task("job-1.r0.w", {"true"})).ok());
  EXPECT_FALSE(SignalScript("c1", "../etc", "TERM").ok());
  EXPECT_FALSE(LogsScript("c1", {1, "job-1.r0.w", "../../etc/passwd", 0, 10}).ok());
  EXPECT_FALSE(LogsScript("c1", {1, "../x", "stdout", 0, 10}).ok());
  EXPECT_FALSE(LogsScript("c1", {1, "job-1.r0.w", "stdout", 0, 0}).ok());
  EXPECT_FALSE(LaunchScript("c1", Task("job-1.r0.w", {std::string("a\0b", 3)})).ok());
  EXPECT_FALSE(LaunchScript("c1", Task("job-1.r0.w", {"A=B", "x"})).ok());
  auto no_log = ParseLogs(1, 0, RunScript(*LogsScript("c1", {1, "job-9.r0.w", "stdout", 0, 10})));
  EXPECT_NE(no_log.error, "");
}

TEST(RemoteShellTest, DropsToTheOwnerOnlyFromRoot) {
  EXPECT_EQ(*RemoteShell("alice", "alice"), "exec /bin/sh -s");
  auto from_root = RemoteShell("root", "alice");
  ASSERT_TRUE(from_root.ok());
  EXPECT_NE(from_root->find("setpriv"), std::string::npos);
  EXPECT_EQ(RemoteShell("bob", "alice").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(RemoteShell("root", "root").status().code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(RemoteShell("root", "").ok());
}

TEST(ParsePollTest, ExitCodesSignalsAndJunk) {
  auto r = ParsePoll(
      "a.1\texited\t0\t10\t\n"
      "a.2\texited\t137\t11\t\n"
      "a.3\texited\t127\t12\tsh: x: not found\n"
      "a.4\trunning\t\t13\t\n"
      "a.5\tmissing\t\t\t\n"
      "garbage line\n"
      "../x\trunning\t\t1\t\n"
      "a.6\texited\tnope\t1\t\n");
  EXPECT_EQ(r.size(), 5u);
  EXPECT_EQ(*r["a.1"].exit_code, 0);
  EXPECT_EQ(*r["a.2"].signal, 9);
  EXPECT_NE(r["a.3"].error.find("not found"), std::string::npos);
  EXPECT_EQ(r["a.4"].state, "running");
  EXPECT_EQ(r["a.4"].pid, 13);
  EXPECT_EQ(r["a.5"].state, "lost");
}

TEST(ParseProbeTest, ReadsHostAndNvidiaSmiRows) {
  auto p = ParseProbe(
      "hostname gpu-9\ncpus 32\nMemTotal:       263856900 kB\nMemAvailable:   200000000 kB\n"
      "load 1.50 0.75 0.25\ncpu  100 0 50 800 50 0 0 0 0 0\n"
      "gpu 0, GPU-abc, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, 81920, 1024, 35, 10, 40, 65.23, 400.00\n"
      "gpu 1, GPU-def, NVIDIA A100-SXM4-80GB, 00000000:0B:00.0, 81920, [N/A], [Not Supported], 0, 41, [N/A], 400.00\n"
      "gpu broken row\n");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->hostname, "gpu-9");
  EXPECT_EQ(p->cpus, 32u);
  EXPECT_EQ(p->mem_total_bytes, 263856900ull * 1024);
  EXPECT_DOUBLE_EQ(p->load1, 1.5);
  EXPECT_EQ(p->cpu_total, 1000u);
  EXPECT_EQ(p->cpu_busy, 150u);
  ASSERT_EQ(p->gpus.size(), 2u);
  EXPECT_EQ(p->gpu_infos[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(*p->gpus[0].memory_used_bytes, 1024ull << 20);
  EXPECT_EQ(*p->gpus[0].power_mw, 65230u);
  EXPECT_FALSE(p->gpus[1].memory_used_bytes.has_value());
  EXPECT_FALSE(p->gpus[1].util_gpu_pct.has_value());
  EXPECT_FALSE(ParseProbe("cpus 4\n").ok());
  EXPECT_FALSE(ParseProbe("hostname x\ncpus -1\n").ok());
}

TEST(ParseProbeTest, TheProbeScriptRunsHere) {
  RunOptions o;
  o.input = ProbeScript();
  auto r = RunCommand({"/bin/sh", "-s"}, o);
  ASSERT_TRUE(r.ok());
  auto p = ParseProbe(r->out);
  ASSERT_TRUE(p.ok()) << r->out;
  EXPECT_GT(p->cpus, 0u);
  EXPECT_GT(p->mem_total_bytes, 0u);
  EXPECT_GT(p->cpu_total, 0u);
}

}  // namespace
}  // namespace rota::ssh
