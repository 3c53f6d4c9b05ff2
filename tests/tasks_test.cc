// Job tasks over the agent protocol, end to end: the server (in this process)
// sends task_start / task_signal / task_logs to a real agent, which runs tasks
// through its task shim and reports task_status; a killed and restarted agent
// re-adopts its tasks and reports how they ended.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <map>
#include <mutex>

#include "api/protocol.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "server/nodes/agent_gateway.h"
#include "server/server.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kToken[] = "test-join-token-0123456789";

// What the agent reported, collected from the gateway's listeners.
struct Reports {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, api::TaskReport> latest;  // by task id
  std::map<uint64_t, api::TaskLogMsg> logs;       // by request

  std::optional<api::TaskReport> WaitFor(const std::string& id, const std::string& state,
                                         milliseconds timeout = milliseconds(20'000)) {
    std::unique_lock<std::mutex> lock(mu);
    bool ok = cv.wait_for(lock, timeout, [&] {
      auto it = latest.find(id);
      return it != latest.end() && it->second.state == state;
    });
    if (!ok) return std::nullopt;
    return latest[id];
  }
  std::optional<api::TaskLogMsg> WaitLog(uint64_t req) {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, seconds(20), [&] { return logs.count(req) > 0; })) return std::nullopt;
    return logs[req];
  }
};

class TasksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerConfig config;
    config.listen_address = "127.0.0.1";
    config.listen_port = 0;
    config.data_dir = dir_.path() + "/server";
    config.join_token = kToken;
    config.password_hash_cost = "min";
    config.admin_password = "admin-test-password";
    auto s = server::Server::Start(config, RealClock::Get());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    auto* reports = &reports_;
    server_->gateway()->SetTaskListeners(
        [reports](const std::string&, api::TaskStatusMsg m) {
          std::lock_guard<std::mutex> lock(reports->mu);
          for (auto& t : m.tasks) reports->latest[t.id] = t;
          reports->cv.notify_all();
        },
        [reports](const std::string&, api::TaskLogMsg m) {
          std::lock_guard<std::mutex> lock(reports->mu);
          reports->logs[m.req] = m;
          reports->cv.notify_all();
        });
    StartAgent();
  }

  void StartAgent() {
    auto agent = StartSimAgent(dir_.path(), "node-t", server_->url(), kToken);
    ASSERT_TRUE(agent.ok()) << agent.status().ToString();
    agent_ = std::move(*agent);
    // Connected once a message can be sent.
    ASSERT_TRUE(::rota::testing::WaitFor([&] {
      return server_->gateway()->SendTask("node-t", api::TaskSignalMsg{"probe", "TERM"}).ok();
    }, seconds(20))) << agent_.Log();
  }

  void TearDown() override {
    agent_.Kill();
    if (server_) server_->Stop();
  }

  // A task as the unprivileged `nobody` (when the agent runs as root).
  static api::TaskSpec Task(const std::string& id, std::vector<std::string> argv) {
    api::TaskSpec t;
    t.id = id;
    t.job_id = "j1";
    t.name = id;
    t.argv = std::move(argv);
    t.workdir = "/tmp";
    t.user = "nobody";
    return t;
  }

  Status Send(const api::TaskStartMsg& m) { return server_->gateway()->SendTask("node-t", m); }

  TempDir dir_;
  std::unique_ptr<server::Server> server_;
  Child agent_;
  Reports reports_;
};

TEST_F(TasksTest, StartsReportsExitAndServesLogs) {
  api::TaskSpec t = Task("j1.worker-0", {"sh", "-c", "echo hello $GREETING from $(id -un); exit 4"});
  t.env = {{"GREETING", "world"}};
  ASSERT_TRUE(Send({t}).ok());
  auto end = reports_.WaitFor(t.id, "exited");
  ASSERT_TRUE(end.has_value()) << agent_.Log();
  EXPECT_EQ(end->exit_code, 4);
  EXPECT_FALSE(end->signal.has_value());

  ASSERT_TRUE(server_->gateway()->SendTask("node-t", api::TaskLogsMsg{1, t.id, "stdout", 0, 4096}).ok());
  auto log = reports_.WaitLog(1);
  ASSERT_TRUE(log.has_value());
  const std::string me = ::geteuid() == 0 ? "nobody" : ::getpwuid(::geteuid())->pw_name;
  EXPECT_EQ(log->data, "hello world from " + me + "\n");
  EXPECT_EQ(log->size, log->data.size());
  // Reading on from an offset, and a task without a log.
  ASSERT_TRUE(server_->gateway()->SendTask("node-t", api::TaskLogsMsg{2, t.id, "stdout", 6, 5}).ok());
  EXPECT_EQ(reports_.WaitLog(2)->data, "world");
  ASSERT_TRUE(server_->gateway()->SendTask("node-t", api::TaskLogsMsg{3, "j9.none", "stdout", 0, 10}).ok());
  EXPECT_FALSE(reports_.WaitLog(3)->error.empty());
}

// True once `pid` runs the program named `comm` (it has exec'd).
bool Runs(pid_t pid, const std::string& comm) {
  auto text = ReadFile("/proc/" + std::to_string(pid) + "/comm");
  return text.ok() && *text == comm + "\n";
}

TEST_F(TasksTest, SignalStopsARunningTaskAndFailuresAreReported) {
  api::TaskSpec t = Task("j1.worker-1", {"sleep", "600"});
  ASSERT_TRUE(Send({t}).ok());
  auto running = reports_.WaitFor(t.id, "running");
  ASSERT_TRUE(running.has_value()) << agent_.Log();
  ASSERT_GT(running->pid, 1);
  // "running" comes with the pid as soon as the shim has forked; the process has its
  // own group and default signal dispositions only once it execs: a TERM sent
  // before would be lost (no such group yet, or still ignored as by the shim).
  ASSERT_TRUE(::rota::testing::WaitFor([&] { return Runs(running->pid, "sleep"); }, seconds(20)))
      << "task " << t.id << " never exec'd sleep";
  ASSERT_TRUE(server_->gateway()->SendTask("node-t", api::TaskSignalMsg{t.id, "TERM"}).ok());
  auto end = reports_.WaitFor(t.id, "exited");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->signal, 15);

  api::TaskSpec missing = Task("j1.worker-2", {"no-such-command-rota"});
  ASSERT_TRUE(Send({missing}).ok());
  auto failed = reports_.WaitFor(missing.id, "exited");
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->exit_code, 127);
  EXPECT_NE(failed->error.find("no-such-command-rota"), std::string::npos) << failed->error;

  if (::geteuid() != 0) {
    EXPECT_FALSE(RootTestsRequired()) << "the task-user checks below need root";
  } else {
    api::TaskSpec as_root = Task("j1.worker-3", {"id"});
    as_root.user = "root";
    ASSERT_TRUE(Send({as_root}).ok());
    auto refused = reports_.WaitFor(as_root.id, "exited");
    ASSERT_TRUE(refused.has_value());
    EXPECT_NE(refused->error.find("root"), std::string::npos) << refused->error;
    api::TaskSpec ghost = Task("j1.worker-4", {"id"});
    ghost.user = "no-such-user-rota";
    ASSERT_TRUE(Send({ghost}).ok());
    auto unknown = reports_.WaitFor(ghost.id, "exited");
    ASSERT_TRUE(unknown.has_value());
    EXPECT_NE(unknown->error.find("does not exist"), std::string::npos) << unknown->error;
  }
  // A port of the task that something on the node already listens on.
  int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  api::TaskSpec taken = Task("j1.worker-5", {"true"});
  taken.ports = {ntohs(addr.sin_port)};
  ASSERT_TRUE(Send({taken}).ok());
  auto busy = reports_.WaitFor(taken.id, "exited");
  ::close(holder);
  ASSERT_TRUE(busy.has_value());
  EXPECT_NE(busy->error.find(api::kPortInUseError), std::string::npos) << busy->error;

  // Invalid messages never leave the server.
  api::TaskSpec bad = Task("../escape", {"id"});
  EXPECT_EQ(Send({bad}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(server_->gateway()->SendTask("nowhere", api::TaskSignalMsg{"x", "TERM"}).code(),
            StatusCode::kUnavailable);
}

TEST_F(TasksTest, RestartedAgentReadoptsItsTasks) {
  // The task runs until the test lets it end (a file appears), so it still runs
  // while its agent is killed and restarted, however slow the machine.
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0711), 0);  // the task's user may look in
  const std::string go = dir_.path() + "/go";
  api::TaskSpec t =
      Task("j1.worker-5", {"sh", "-c", "while [ ! -e " + go + " ]; do sleep 0.05; done; exit 3"});
  ASSERT_TRUE(Send({t}).ok());
  ASSERT_TRUE(reports_.WaitFor(t.id, "running").has_value()) << agent_.Log();
  agent_.Kill();  // SIGKILL: the task and its shim live on
  {
    std::lock_guard<std::mutex> lock(reports_.mu);
    reports_.latest.clear();
  }
  StartAgent();
  ASSERT_TRUE(reports_.WaitFor(t.id, "running").has_value()) << "not re-adopted\n" << agent_.Log();
  ASSERT_TRUE(WriteFileAtomic(go, "", 0644).ok());
  auto end = reports_.WaitFor(t.id, "exited");
  ASSERT_TRUE(end.has_value()) << agent_.Log();
  EXPECT_EQ(end->exit_code, 3);
}

}  // namespace
}  // namespace rota::testing
