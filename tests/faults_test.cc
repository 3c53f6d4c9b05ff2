// Faults and bad input against real processes: malformed agent messages, wrong
// tokens, a server killed with SIGKILL, agents killed and restarted, a GPU lost
// mid-run, nodes that stop reporting, machines without NVML, bad API requests.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "api/protocol.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "common/time_util.h"
#include "net/ws_client.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string WsUrl(const ServerProcess& s) {
  return "ws://127.0.0.1:" + std::to_string(s.port()) + "/api/v1/agent/connect";
}

// A server and one agent on simulated GPUs, on loopback in a temporary directory.
struct OneNodeCluster {
  TempDir dir;
  ServerProcess server{dir.path() + "/server"};
  std::unique_ptr<AgentProcess> agent;

  // Starts the server and the agent and waits until the node is ready.
  ::testing::AssertionResult Start(SimGpuNode node, std::vector<std::string> extra_args = {}) {
    if (Status st = server.Start(); !st.ok()) return ::testing::AssertionFailure() << st.ToString();
    std::string name = node.name;
    agent = std::make_unique<AgentProcess>(dir.path(), std::move(node), server, std::move(extra_args));
    if (Status st = agent->Start(); !st.ok()) return ::testing::AssertionFailure() << st.ToString();
    if (!WaitFor([&] { return NodeReady(server, name); }, seconds(20))) {
      return ::testing::AssertionFailure() << name << " not ready; agent log:\n" << agent->child().Log();
    }
    return ::testing::AssertionSuccess();
  }
};

TEST(AgentProtocolFaultTest, BadMessagesAreRejectedAndNothingStoredChanges) {
  TempDir dir;
  ServerProcess server(dir.path() + "/server");
  ASSERT_TRUE(server.Start().ok());

  // A wrong token is refused with 401 and counted.
  {
    net::BlockingWsClient c;
    Status st = c.Connect(WsUrl(server), {{"Authorization", "Bearer wrong-token-0000000000"}});
    EXPECT_EQ(st.code(), StatusCode::kUnauthenticated) << st.ToString();
    net::BlockingWsClient none;
    EXPECT_EQ(none.Connect(WsUrl(server)).code(), StatusCode::kUnauthenticated);
  }

  net::BlockingWsClient c;
  ASSERT_TRUE(c.Connect(WsUrl(server), {{"Authorization", "Bearer " + server.token()}}).ok());
  auto expect_error = [&](const std::string& text, const std::string& fragment) {
    ASSERT_TRUE(c.Send(text));
    auto reply = c.Receive(seconds(5));
    ASSERT_TRUE(reply.ok()) << "no reply to " << text.substr(0, 80);
    auto msg = api::DecodeServerMessage(*reply);
    ASSERT_TRUE(msg.ok()) << *reply;
    auto* err = std::get_if<api::ErrorMsg>(&*msg);
    ASSERT_NE(err, nullptr) << *reply;
    EXPECT_NE(err->message.find(fragment), std::string::npos) << err->message;
  };
  // Bad inputs tried: truncated JSON, not an object, unknown type, invalid node name,
  // wrong field types.
  api::RegisterMsg reg;
  reg.node.name = "probe";
  reg.node.node_id = "probe-id";
  std::string good = api::Encode(reg);
  expect_error(good.substr(0, good.size() - 7), "malformed JSON");
  expect_error("[]", "must be a JSON object");
  expect_error(R"({"v":1,"type":"launch"})", "unknown message type");
  expect_error(R"({"v":1,"type":"register","node":{"name":"../x","node_id":"1"}})", "not a valid node name");
  expect_error(R"({"v":1,"type":"register","node":{"name":"x","node_id":7}})", "node_id must be a string");
  // Samples before register: fatal, the server answers and closes.
  expect_error(R"({"v":1,"type":"samples","seq":1,"samples":[{"time_ms":1700000000000,"host":{"cpu_percent":1,"mem_total_bytes":1,"mem_available_bytes":1}}]})",
               "send register before samples");
  EXPECT_TRUE(c.WaitClosed(seconds(5)).has_value());

  auto nodes = server.GetJson("/api/v1/nodes");
  ASSERT_TRUE(nodes.ok());
  EXPECT_TRUE((*nodes)["nodes"].empty()) << "a refused message stored a node";

  // Wrong protocol version: error, then the server closes the connection.
  net::BlockingWsClient v;
  ASSERT_TRUE(v.Connect(WsUrl(server), {{"Authorization", "Bearer " + server.token()}}).ok());
  ASSERT_TRUE(v.Send(R"({"v":99,"type":"register","node":{}})"));
  auto reply = v.Receive(seconds(5));
  ASSERT_TRUE(reply.ok());
  EXPECT_NE(reply->find("unsupported protocol version 99"), std::string::npos);
  EXPECT_TRUE(v.WaitClosed(seconds(5)).has_value());

  // Oversized message (5 MiB > 4 MiB limit): connection closed, server keeps serving.
  net::BlockingWsClient big;
  ASSERT_TRUE(big.Connect(WsUrl(server), {{"Authorization", "Bearer " + server.token()}}).ok());
  big.Send(std::string(5 << 20, 'x'));
  EXPECT_TRUE(big.WaitClosed(seconds(10)).has_value());

  auto health = server.Call("GET", "/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200);
  auto metrics = server.Call("GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("rota_server_agent_auth_failures_total 2"), std::string::npos);
  EXPECT_NE(server.child().Log().find("missing or wrong join token"), std::string::npos);
}

TEST(ServerCrashTest, HistorySurvivesSigkillAndAgentsBackfillTheGap) {
  OneNodeCluster c;
  ASSERT_TRUE(c.Start(SimGpuNode{.name = "node-a", .gpus = 2}));
  ServerProcess& server = c.server;
  AgentProcess& agent = *c.agent;
  // Let history accumulate (3 seconds of it), remember what was committed, then
  // SIGKILL the server.
  int64_t t0 = RealClock::Get().NowMs() - 60'000;
  std::string q = "/api/v1/nodes/node-a/metrics?step=1s&from=" + FormatRfc3339(t0) + "&to=";
  std::string before_to;
  size_t points_before = 0;
  ASSERT_TRUE(WaitFor([&] {
    before_to = FormatRfc3339(RealClock::Get().NowMs() + 1000);
    auto before = server.GetJson(q + before_to);
    points_before = before.ok() ? (*before)["points"].size() : 0;
    return points_before >= 3;
  }, seconds(20))) << points_before << " points; agent log:\n" << agent.child().Log();
  const auto killed = std::chrono::steady_clock::now();
  int64_t kill_ms = RealClock::Get().NowMs();
  server.child().Kill();
  // The outage under test: the agent notices it, then buffers through a few
  // seconds of it (8 sampling intervals), which must all reach the new server.
  ASSERT_TRUE(WaitFor([&] { return agent.child().Log().find("buffering samples") != std::string::npos; },
                      seconds(20))) << agent.child().Log();
  constexpr auto kOutage = seconds(4);
  std::this_thread::sleep_until(killed + kOutage);
  int64_t restart_ms = RealClock::Get().NowMs();
  ServerProcess again(server.data_dir(), server.port());
  ASSERT_TRUE(again.Start().ok()) << again.child().Log();
  ASSERT_TRUE(WaitFor([&] { return NodeReady(again, "node-a"); }, seconds(30))) << agent.child().Log();
  // Every second of the outage gets its samples once the buffer is replayed.
  bool filled = WaitFor([&] {
    auto j = again.GetJson("/api/v1/nodes/node-a/metrics?step=1s&from=" + FormatRfc3339(kill_ms / 1000 * 1000 + 1000) +
                           "&to=" + FormatRfc3339(restart_ms / 1000 * 1000));
    return j.ok() && (*j)["points"].size() >= static_cast<size_t>((restart_ms - kill_ms) / 1000 - 1);
  }, seconds(20));
  EXPECT_TRUE(filled) << agent.child().Log();
  auto after = again.GetJson(q + before_to);
  ASSERT_TRUE(after.ok());
  EXPECT_GE((*after)["points"].size(), points_before) << "history committed before the kill was lost";
}

TEST(AgentRestartTest, NodeComesBackUnderTheSameIdentity) {
  OneNodeCluster c;
  ASSERT_TRUE(c.Start(SimGpuNode{.name = "node-a", .gpus = 2}));
  TempDir& dir = c.dir;
  ServerProcess& server = c.server;
  AgentProcess& agent = *c.agent;
  std::string id = NodeJson(server, "node-a")["node_id"];
  agent.child().Kill();
  ASSERT_TRUE(WaitFor([&] { return NodeJson(server, "node-a")["state"] == "unreachable"; }, seconds(10)));
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(server, "node-a"); }, seconds(20)));
  EXPECT_EQ(NodeJson(server, "node-a")["node_id"], id);
  auto nodes = server.GetJson("/api/v1/nodes");
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ((*nodes)["nodes"].size(), 1u);
  // Another agent claiming the same name with another identity is refused.
  AgentProcess impostor(dir.path() + "/other", SimGpuNode{.name = "node-a", .gpus = 1}, server);
  ASSERT_TRUE(impostor.Start().ok());
  EXPECT_TRUE(WaitFor([&] { return impostor.child().Log().find("registration refused") != std::string::npos; },
                      seconds(10)))
      << impostor.child().Log();
  EXPECT_EQ(NodeJson(server, "node-a")["node_id"], id);
}

TEST(LivenessTest, SilentNodeBecomesUnreachableThenReadyAgain) {
  OneNodeCluster c;
  ASSERT_TRUE(c.Start(SimGpuNode{.name = "node-a", .gpus = 1}));
  ServerProcess& server = c.server;
  AgentProcess& agent = *c.agent;
  agent.child().Signal(SIGSTOP);  // connection stays open, reports stop
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return NodeJson(server, "node-a")["state"] == "unreachable"; }, seconds(10)));
  auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  // 3 intervals of 0.5 s, plus the liveness check period and one interval of slack.
  EXPECT_LT(took.count(), 3 * 500 + 250 + 500 + 1000);
  EXPECT_NE(NodeJson(server, "node-a")["unreachable_reason"].get<std::string>().find("no report"),
            std::string::npos);
  agent.child().Signal(SIGCONT);
  EXPECT_TRUE(WaitFor([&] { return NodeReady(server, "node-a"); }, seconds(10)));
}

TEST(GpuFaultTest, LostGpuIsShownFailedWhileOthersKeepReporting) {
  OneNodeCluster c;
  ASSERT_TRUE(c.Start(SimGpuNode{.name = "node-a", .gpus = 4}));
  ServerProcess& server = c.server;
  AgentProcess& agent = *c.agent;
  ASSERT_TRUE(agent.SetFaults({{"2", "gpu_lost"}}).ok());
  api::Json gpus;
  ASSERT_TRUE(WaitFor([&] {
    auto j = server.GetJson("/api/v1/gpus");
    if (!j.ok()) return false;
    gpus = (*j)["gpus"];
    return FindGpu(gpus, "node-a", 2)["state"] == "failed";
  }, seconds(15))) << agent.child().Log();
  EXPECT_FALSE(FindGpu(gpus, "node-a", 2).contains("util_gpu_pct"));
  for (int i : {0, 1, 3}) {
    api::Json g = FindGpu(gpus, "node-a", i);
    EXPECT_EQ(g["state"], "ok") << i;
    EXPECT_TRUE(g.contains("util_gpu_pct")) << i;
  }
  EXPECT_EQ(NodeJson(server, "node-a")["failed_gpu_count"], 1);
  EXPECT_TRUE(agent.child().running());
}

TEST(GpuListTest, PagesCountGpusAcrossNodesAndSayTheTotal) {
  OneNodeCluster c;
  ASSERT_TRUE(c.Start(SimGpuNode{.name = "node-a", .gpus = 4}));
  ServerProcess& server = c.server;
  auto all = server.GetJson("/api/v1/gpus");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ((*all)["gpus"].size(), 4u) << all->dump(2);
  EXPECT_EQ((*all)["total"], 4);
  // Pages of 3: rows 0-2, then row 3; past the end, none; the total on every page.
  auto p1 = server.GetJson("/api/v1/gpus?limit=3");
  auto p2 = server.GetJson("/api/v1/gpus?offset=3&limit=3");
  auto p3 = server.GetJson("/api/v1/gpus?offset=9");
  ASSERT_TRUE(p1.ok() && p2.ok() && p3.ok());
  ASSERT_EQ((*p1)["gpus"].size(), 3u);
  ASSERT_EQ((*p2)["gpus"].size(), 1u);
  EXPECT_TRUE((*p3)["gpus"].empty());
  for (const auto* p : {&*p1, &*p2, &*p3}) EXPECT_EQ((*p)["total"], 4);
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*p1)["gpus"][i]["index"], (*all)["gpus"][i]["index"]);
  EXPECT_EQ((*p2)["gpus"][0]["index"], (*all)["gpus"][3]["index"]);
  auto one = server.GetJson("/api/v1/gpus?node=node-a&offset=1&limit=2");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ((*one)["gpus"].size(), 2u);
  EXPECT_EQ((*one)["gpus"][0]["index"], 1);
}

// The soft open-file limit of `pid` (/proc/PID/limits), or -1.
long long SoftFileLimit(pid_t pid) {
  auto text = ReadFile("/proc/" + std::to_string(pid) + "/limits");
  if (!text.ok()) return -1;
  const size_t at = text->find("Max open files");
  if (at == std::string::npos) return -1;
  return std::atoll(text->c_str() + at + std::strlen("Max open files"));
}

// Whether GET /readyz answers `status` within 5 s.
bool ReadyzAnswers(const ServerProcess& server, int status) {
  for (int i = 0; i < 50; ++i) {
    auto r = server.Call("GET", "/readyz");
    if (r.ok() && r->status == status) return true;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return false;
}

// A server started with a low open-file limit raises it to fit max_connections; past
// max_connections a new connection is answered 503, and served again once others close.
TEST(ConnectionLimitTest, ServerRaisesItsFileLimitAndAnswers503PastTheMax) {
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 2048) {
    GTEST_SKIP() << "hard open-file limit " << saved.rlim_max << " is below 2048";
  }
  TempDir dir;
  ServerProcess server(dir.path() + "/server");
  server.SetEnv("ROTA_MAX_CONNECTIONS", "24");
  rlimit low = saved;
  low.rlim_cur = 256;  // inherited by the server
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  const Status started = server.Start();
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_TRUE(started.ok()) << started.ToString();
  EXPECT_GE(SoftFileLimit(server.child().pid()), 24 + 1024);

  // Hold more connections than the server takes.
  std::vector<int> held;
  for (int i = 0; i < 30; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server.port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    held.push_back(fd);
  }
  EXPECT_TRUE(ReadyzAnswers(server, 503)) << "no 503 with 30 connections open and max_connections 24";
  for (int fd : held) ::close(fd);
  EXPECT_TRUE(ReadyzAnswers(server, 200)) << "not served again once the held connections closed";
}

TEST(NoNvmlTest, NodeWithoutNvmlReportsHostAndSaysWhy) {
  OneNodeCluster c;
  ASSERT_TRUE(c.Start(SimGpuNode{.name = "cpu-only", .gpus = 1}, {"--nvml-lib", "/nonexistent/libnvidia-ml.so.1"}));
  ServerProcess& server = c.server;
  AgentProcess& agent = *c.agent;
  ASSERT_TRUE(WaitFor([&] { return !NodeJson(server, "cpu-only")["latest"].is_null(); }, seconds(20)))
      << agent.child().Log();
  api::Json n = NodeJson(server, "cpu-only");
  EXPECT_EQ(n["gpu_count"], 0);
  EXPECT_NE(n["gpu_status"].get<std::string>().find("not found"), std::string::npos) << n["gpu_status"];
  EXPECT_GE(n["latest"]["host"]["cpu_percent"].get<double>(), 0.0);
}

// Bad inputs tried: unknown route, wrong method, unknown node, bad GPU index, malformed and
// reversed time ranges, bad step, too many points, oversized body.
TEST(ApiBadInputTest, ErrorsAreJsonWithFittingStatus) {
  OneNodeCluster c;
  ASSERT_TRUE(c.Start(SimGpuNode{.name = "node-a", .gpus = 1}));
  ServerProcess& server = c.server;
  struct Case {
    std::string method, path;
    int status;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"GET", "/api/v1/nope", 404, ""},
      {"DELETE", "/api/v1/nodes", 405, ""},
      {"GET", "/api/v1/nodes/ghost", 404, "ghost"},
      {"GET", "/api/v1/nodes/ghost/metrics", 404, "ghost"},
      {"GET", "/api/v1/nodes/node-a/gpus/abc/metrics", 400, "GPU index"},
      {"GET", "/api/v1/nodes/node-a/gpus/99999/metrics", 400, "GPU index"},
      {"GET", "/api/v1/nodes/node-a/metrics?from=yesterday", 400, "from"},
      {"GET", "/api/v1/nodes/node-a/metrics?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", 400, "before"},
      {"GET", "/api/v1/nodes/node-a/metrics?step=-5s", 400, "step"},
      {"GET", "/api/v1/nodes/node-a/metrics?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&step=1s", 400, "points"},
      {"GET", "/api/v1/gpus?node=ghost", 404, "ghost"},
      {"GET", "/api/v1/gpus?limit=0", 400, "limit"},
      {"GET", "/api/v1/gpus?offset=-1", 400, "offset"},
      {"GET", "/api/v1/gpus?limit=many", 400, "limit"},
      {"GET", "/api/v1/gpus?page=2", 400, "page"},
  };
  for (const auto& c : cases) {
    auto r = server.Call(c.method, c.path);
    ASSERT_TRUE(r.ok()) << c.path;
    EXPECT_EQ(r->status, c.status) << c.method << " " << c.path << ": " << r->body;
    auto j = api::ParseJson(r->body);
    ASSERT_TRUE(j.ok()) << r->body;
    ASSERT_TRUE(j->contains("error")) << r->body;
    EXPECT_NE((*j)["error"]["message"].get<std::string>().find(c.fragment), std::string::npos) << r->body;
  }
  auto big = server.Call("POST", "/api/v1/nodes", std::string(2 << 20, 'x'));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->status, 413);
  auto spec = server.GetJson("/api/v1/openapi.json");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ((*spec)["openapi"], "3.0.3");
  EXPECT_TRUE((*spec)["paths"].contains("/api/v1/gpus"));
  auto docs = server.Call("GET", "/api/v1/docs");
  ASSERT_TRUE(docs.ok());
  EXPECT_NE(docs->body.find("openapi.json"), std::string::npos);
  EXPECT_TRUE(NodeReady(server, "node-a"));  // still serving
}

}  // namespace
}  // namespace rota::testing
