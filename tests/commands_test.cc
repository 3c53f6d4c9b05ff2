// Commands from server to agent, end to end: the server runs in this process (so the
// test can call AgentGateway::SendCommand) and a real `rota agent` child on simulated
// GPUs signals real processes. A fake server checks that the agent answers commands it
// cannot run and keeps working.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <variant>

#include "api/protocol.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "common/process.h"
#include "common/strings.h"
#include "net/http_server.h"
#include "server/nodes/agent_gateway.h"
#include "server/server.h"
#include "tests/fake_agent_server.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kToken[] = "test-join-token-0123456789";

// Collects the answers of one SendCommand; counts calls to check "exactly once".
struct Answer {
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  std::optional<Result<api::CommandResultMsg>> result;

  server::AgentGateway::CommandCallback Callback() {
    return [this](Result<api::CommandResultMsg> r) {
      std::lock_guard<std::mutex> lock(mu);
      ++calls;
      result.emplace(std::move(r));
      cv.notify_all();
    };
  }
  // The answer, or Internal after `timeout`.
  Result<api::CommandResultMsg> Wait(milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, timeout, [&] { return result.has_value(); })) {
      return Status::Internal("no answer");
    }
    return *result;
  }
  int Calls() {
    std::lock_guard<std::mutex> lock(mu);
    return calls;
  }
};

// A spawned process, killed and reaped on destruction unless reaped before.
struct Victim {
  pid_t pid = -1;
  ~Victim() {
    if (pid > 0) StopProcess(pid, 0);
  }
  // The wait status once it exited within timeout_ms; nullopt if it still runs.
  std::optional<int> WaitExit(int timeout_ms) {
    auto st = WaitProcess(pid, timeout_ms);
    if (!st.ok()) return std::nullopt;
    pid = -1;
    return *st;
  }
};

api::CommandMsg SignalCommand(api::CommandSignal sig, const api::Json& process) {
  api::CommandMsg cmd;
  cmd.action = api::CommandAction::kSignal;
  cmd.signal = sig;
  cmd.uid = process.value("uid", 0u);
  cmd.user = process.value("user", "");
  cmd.targets = {{process["pid"].get<uint32_t>(), process["start_time_ms"].get<int64_t>(), 1}};
  return cmd;
}

// Starts `rota agent` for `node` against `server_url` with a 2-GPU simulated node.
class CommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerConfig config;
    config.listen_address = "127.0.0.1";
    config.listen_port = 0;
    config.data_dir = dir_.path() + "/server";
    config.join_token = kToken;
    config.anonymous_read = true;  // the test reads /api/v1/gpus without logging in
    config.password_hash_cost = "min";
    config.admin_password = "admin-password-for-tests";
    config.log_level = "warning";
    auto s = server::Server::Start(config, RealClock::Get());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    gateway_ = server_->gateway();
    ASSERT_NE(gateway_, nullptr);
    auto agent = StartSimAgent(dir_.path(), "node-a", server_->url(), kToken);
    ASSERT_TRUE(agent.ok()) << agent.status().ToString();
    agent_ = std::move(*agent);
    ASSERT_TRUE(WaitFor([&] {
      api::Json node = GetJson("/api/v1/nodes/node-a");
      return node.is_object() && node.value("state", "") == "ready";
    }, seconds(20)))
        << agent_.Log();
  }

  void TearDown() override {
    agent_.Kill();
    if (server_) server_->Stop();
    // No answer can come any more: each command was answered exactly once.
    for (const auto& a : answers_) EXPECT_EQ(a->Calls(), 1);
  }

  api::Json GetJson(const std::string& path) {
    auto r = net::HttpCall("GET", server_->url() + path, "", {}, 5000);
    if (!r.ok() || r->status != 200) return api::Json();
    auto j = api::ParseJson(r->body);
    return j.ok() ? *j : api::Json();
  }

  // Starts `sleep 300` on simulated GPU 1 of node-a and waits until the server's
  // latest sample shows it with its start time; returns its process row.
  api::Json StartVictim(Victim* v) {
    SpawnOptions opts;
    opts.env = {{"CUDA_VISIBLE_DEVICES", "1"}, {"ROTA_SIM_NODE", "node-a"}};
    opts.die_with_parent = true;
    auto pid = SpawnProcess({"sleep", "300"}, opts);
    EXPECT_TRUE(pid.ok());
    if (!pid.ok()) return api::Json();
    v->pid = *pid;
    api::Json found;
    WaitFor([&] {
      api::Json gpu = FindGpu(GetJson("/api/v1/gpus?node=node-a")["gpus"], "node-a", 1);
      if (!gpu.is_object()) return false;
      for (const auto& p : gpu["processes"]) {
        if (p["pid"] == *pid && p.contains("start_time_ms") && p.contains("uid")) found = p;
      }
      return found.is_object();
    }, seconds(15));
    return found;
  }

  // Sends and waits for the answer (TearDown checks that done ran exactly once).
  Result<api::CommandResultMsg> Run(const std::string& node, api::CommandMsg cmd,
                                    milliseconds timeout = milliseconds(15'000)) {
    auto answer = Send(node, std::move(cmd));
    return answer->Wait(timeout);
  }
  std::shared_ptr<Answer> Send(const std::string& node, api::CommandMsg cmd) {
    answers_.push_back(std::make_shared<Answer>());
    gateway_->SendCommand(node, std::move(cmd), answers_.back()->Callback());
    return answers_.back();
  }

  // SIGSTOPs the agent and waits until it is stopped: it answers nothing any more.
  bool StopAgent() {
    agent_.Signal(SIGSTOP);
    return WaitFor([&] { return ProcessStopped(agent_.pid()); }, seconds(10));
  }

  TempDir dir_;
  std::unique_ptr<server::Server> server_;
  server::AgentGateway* gateway_ = nullptr;
  Child agent_;
  std::vector<std::shared_ptr<Answer>> answers_;
};

TEST_F(CommandsTest, SignalStopsAProcessSeenOnASimulatedGpu) {
  Victim v;
  api::Json p = StartVictim(&v);
  ASSERT_TRUE(p.is_object()) << "victim never showed on node-a GPU 1; agent log:\n" << agent_.Log();
  EXPECT_EQ(p["uid"], ::getuid());

  // The start time the server saw, off by a minute: a reused pid. Nothing is signalled.
  api::CommandMsg wrong = SignalCommand(api::CommandSignal::kKill, p);
  wrong.targets[0].start_time_ms -= 60'000;
  auto mismatch = Run("node-a", wrong);
  ASSERT_TRUE(mismatch.ok()) << mismatch.status().ToString();
  ASSERT_EQ(mismatch->outcomes.size(), 1u);
  EXPECT_EQ(mismatch->outcomes[0].outcome, api::TargetOutcome::kMismatch) << mismatch->outcomes[0].detail;
  EXPECT_FALSE(v.WaitExit(200).has_value());

  // A warning: the victim has no terminal, so nothing is written and nothing fails.
  api::CommandMsg warn = SignalCommand(api::CommandSignal::kTerm, p);
  warn.action = api::CommandAction::kWarn;
  warn.message = "GPU 1 of node-a is reserved.";
  auto warned = Run("node-a", warn);
  ASSERT_TRUE(warned.ok()) << warned.status().ToString();
  EXPECT_TRUE(warned->outcomes.empty());
  EXPECT_FALSE(v.WaitExit(100).has_value());

  auto term = Run("node-a", SignalCommand(api::CommandSignal::kTerm, p));
  ASSERT_TRUE(term.ok()) << term.status().ToString();
  EXPECT_GT(term->id, 0u);
  ASSERT_EQ(term->outcomes.size(), 1u);
  EXPECT_EQ(term->outcomes[0].pid, p["pid"].get<uint32_t>());
  EXPECT_EQ(term->outcomes[0].outcome, api::TargetOutcome::kSignalled) << term->outcomes[0].detail;
  auto st = v.WaitExit(5000);
  ASSERT_TRUE(st.has_value()) << "victim survived SIGTERM";
  EXPECT_TRUE(WIFSIGNALED(*st) && WTERMSIG(*st) == SIGTERM);

  // Again: the process is gone now.
  auto again = Run("node-a", SignalCommand(api::CommandSignal::kKill, p));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->outcomes.at(0).outcome, api::TargetOutcome::kGone);
  EXPECT_EQ(gateway_->pending_commands(), 0u);
}

TEST_F(CommandsTest, UnknownNodeAndInvalidCommandFailAtOnce) {
  api::CommandMsg cmd;
  cmd.action = api::CommandAction::kSignal;
  cmd.targets = {{12345, 1, 0}};
  Answer unknown;
  gateway_->SendCommand("node-x", cmd, unknown.Callback());
  EXPECT_EQ(unknown.Calls(), 1) << "done must run before SendCommand returns";
  auto r = unknown.Wait(milliseconds(0));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "node node-x is not connected");

  api::CommandMsg invalid = cmd;
  invalid.action = api::CommandAction::kWarn;  // without a message
  auto bad = Run("node-a", invalid);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("message is required"), std::string::npos) << bad.status().message();
  EXPECT_EQ(gateway_->pending_commands(), 0u);
}

TEST_F(CommandsTest, SilentAgentTimesOutAndItsLateAnswerIsIgnored) {
  gateway_->set_command_timeout_ms(1000);
  ASSERT_TRUE(StopAgent());
  api::CommandMsg cmd;
  cmd.action = api::CommandAction::kSignal;
  cmd.uid = ::getuid();
  cmd.targets = {{999'999, 1, 0}};
  auto start = std::chrono::steady_clock::now();
  auto r = Run("node-a", cmd);
  auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  EXPECT_GE(took.count(), 1000);
  EXPECT_LT(took.count(), 1000 + 250 + 1000);
  EXPECT_EQ(gateway_->pending_commands(), 0u);
  agent_.Signal(SIGCONT);
  // The late answer is dropped (TearDown counts the calls); the agent keeps answering.
  gateway_->set_command_timeout_ms(10'000);
  auto next = Run("node-a", cmd);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->outcomes.at(0).outcome, api::TargetOutcome::kGone);
}

TEST_F(CommandsTest, AgentDisconnectFailsPendingCommands) {
  ASSERT_TRUE(StopAgent());
  api::CommandMsg cmd;
  cmd.action = api::CommandAction::kSignal;
  cmd.uid = ::getuid();
  cmd.targets = {{999'999, 1, 0}};
  auto answer = Send("node-a", cmd);
  EXPECT_EQ(answer->Calls(), 0);  // the agent is stopped: nothing can answer yet
  EXPECT_EQ(gateway_->pending_commands(), 1u);
  agent_.Kill();  // the kernel closes its socket
  auto r = answer->Wait(seconds(10));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find("disconnected before answering"), std::string::npos) << r.status().message();
  // Forgotten, so no timeout check can answer it again (TearDown counts the calls).
  EXPECT_EQ(gateway_->pending_commands(), 0u);
  auto after = Run("node-a", cmd);
  EXPECT_EQ(after.status().code(), StatusCode::kUnavailable);
}

// ---- the agent against a fake server: commands it cannot run ----

// Accepts one agent, answers its register, and records everything it sends.
TEST(AgentCommandTest, MalformedCommandsAreAnsweredWithAnErrorAndTheAgentKeepsWorking) {
  TempDir dir;
  auto fake = std::make_shared<FakeAgentServer>();
  auto url = fake->Start(fake);
  ASSERT_TRUE(url.ok());
  auto agent = StartSimAgent(dir.path(), "node-f", *url, kToken);
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE(fake->WaitRegistered(seconds(20))) << agent->Log();

  // Bad inputs tried: unknown action, pid 0 (a process group), too many targets, a
  // command without an id (no answer possible), then a valid command.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"v":1,"type":"command","id":5,"action":"reboot","uid":0,"targets":[{"pid":2,"start_time_ms":1,"gpu":0}]})",
       "action must be"},
      {R"({"v":1,"type":"command","id":6,"action":"signal","signal":"KILL","uid":0,"targets":[{"pid":0,"start_time_ms":1,"gpu":0}]})",
       "targets[0].pid"},
  };
  for (const auto& [text, fragment] : bad) {
    ASSERT_TRUE(fake->Send(text));
    auto r = fake->NextResult(seconds(10));
    ASSERT_TRUE(r.has_value()) << "no answer to " << text << "\n" << agent->Log();
    EXPECT_EQ(r->id, api::Json::parse(text)["id"].get<uint64_t>());
    EXPECT_NE(r->error.find(fragment), std::string::npos) << r->error;
    EXPECT_TRUE(r->outcomes.empty());
  }
  api::Json many = api::Json::parse(bad[1].first);
  many["id"] = 7;
  many["targets"] = api::Json::array();
  for (int i = 0; i < 1025; ++i) many["targets"].push_back({{"pid", 100000 + i}, {"start_time_ms", 1}, {"gpu", 0}});
  ASSERT_TRUE(fake->Send(many.dump()));
  auto r = fake->NextResult(seconds(10));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->id, 7u);
  EXPECT_NE(r->error.find("more than 1024"), std::string::npos) << r->error;
  ASSERT_TRUE(fake->Send(R"({"v":1,"type":"command","action":"signal"})"));

  api::CommandMsg ok;
  ok.id = 8;
  ok.action = api::CommandAction::kSignal;
  ok.uid = ::getuid();
  ok.targets = {{999'999, 1, 0}};
  ASSERT_TRUE(fake->Send(api::Encode(ok)));
  r = fake->NextResult(seconds(10));
  ASSERT_TRUE(r.has_value()) << agent->Log();
  EXPECT_EQ(r->id, 8u) << "the command without an id must get no answer";
  EXPECT_TRUE(r->error.empty()) << r->error;
  EXPECT_EQ(r->outcomes.at(0).outcome, api::TargetOutcome::kGone);
  EXPECT_TRUE(agent->running());
  agent->Kill();
  fake->Stop();
}

// Servers taking turns as leader (docs/design-ha.md, "Fencing"): the agent registers under
// epoch 5 with the first; when it goes away, a replaced leader (epoch 3) registers the agent:
// it is refused, nothing it sends runs, and the agent moves on to the leader of epoch 6. The
// epoch is kept in the state dir: a restarted agent refuses the replaced leader again.
TEST(AgentLeaderEpochTest, AReplacedLeaderIsRefusedAndNothingItSendsRuns) {
  TempDir dir;
  auto first = std::make_shared<FakeAgentServer>(5);
  auto replaced = std::make_shared<FakeAgentServer>(3);
  auto newest = std::make_shared<FakeAgentServer>(6);
  auto first_url = first->Start(first);
  auto replaced_url = replaced->Start(replaced);
  auto newest_url = newest->Start(newest);
  ASSERT_TRUE(first_url.ok() && replaced_url.ok() && newest_url.ok());
  const std::string kept = dir.path() + "/agent-node-e/leader-epoch";
  auto kept_epoch = [&] {
    auto t = ReadFile(kept);
    return t.ok() ? std::string(Trim(*t)) : std::string();
  };
  auto agent = StartSimAgent(dir.path(), "node-e", *first_url + "," + *replaced_url + "," + *newest_url, kToken);
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE(first->WaitRegistered(seconds(20))) << agent->Log();
  ASSERT_TRUE(WaitFor([&] { return kept_epoch() == "5"; }, seconds(5))) << kept_epoch();

  first->Stop();  // the leader goes; the agent tries the next server, a replaced leader
  ASSERT_TRUE(replaced->WaitRegistered(seconds(20))) << agent->Log();
  api::CommandMsg signal;
  signal.id = 9;
  signal.action = api::CommandAction::kSignal;
  signal.uid = ::getuid();
  signal.targets = {{999'999, 1, 0}};
  replaced->Send(api::Encode(signal));  // refused or dropped: never answered
  EXPECT_TRUE(replaced->WaitClosed(seconds(10))) << agent->Log();
  ASSERT_TRUE(newest->WaitRegistered(seconds(20))) << agent->Log();
  EXPECT_FALSE(replaced->NextResult(milliseconds(500)).has_value());
  EXPECT_NE(agent->Log().find("as leader epoch 3, older than epoch 5"), std::string::npos) << agent->Log();
  EXPECT_TRUE(WaitFor([&] { return kept_epoch() == "6"; }, seconds(5))) << kept_epoch();
  agent->Kill();

  // Restarted, the agent remembers epoch 6: the replaced leader is refused first thing.
  const int before = replaced->registrations();
  auto again = StartSimAgent(dir.path(), "node-e", *replaced_url + "," + *newest_url, kToken);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(newest->WaitRegistrations(2, seconds(20))) << again->Log();
  EXPECT_EQ(replaced->registrations(), before + 1);
  EXPECT_NE(again->Log().find("as leader epoch 3, older than epoch 6"), std::string::npos) << again->Log();
  again->Kill();
  replaced->Stop();
  newest->Stop();
}

}  // namespace
}  // namespace rota::testing
