// End to end: a real server and agents with simulated GPUs on loopback; a
// process started with CUDA_VISIBLE_DEVICES shows up on its GPU with its user.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include "common/file_util.h"
#include "common/process.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::seconds;

class MonitoringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    ASSERT_TRUE(server_->Start().ok());
    a_ = std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = "node-a", .gpus = 8}, *server_);
    b_ = std::make_unique<AgentProcess>(
        dir_.path(), SimGpuNode{.name = "node-b", .gpus = 2, .model = "Tesla T4", .memory_mib = 15360},
        *server_);
    ASSERT_TRUE(a_->Start().ok());
    ASSERT_TRUE(b_->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, "node-a") && NodeReady(*server_, "node-b"); },
                        seconds(20)))
        << a_->child().Log() << b_->child().Log();
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<AgentProcess> a_, b_;
};

TEST_F(MonitoringTest, NodesAndGpusAreListedWithReadings) {
  auto nodes = server_->GetJson("/api/v1/nodes");
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ((*nodes)["nodes"].size(), 2u);
  api::Json a = NodeJson(*server_, "node-a");
  EXPECT_EQ(a["gpu_count"], 8);
  EXPECT_GT(a["cpus"].get<int>(), 0);
  EXPECT_EQ(a["node_id"].get<std::string>().size(), 32u);
  ASSERT_TRUE(WaitFor([&] { return !NodeJson(*server_, "node-b")["latest"].is_null(); }, seconds(10)));
  api::Json b = NodeJson(*server_, "node-b");
  EXPECT_GT(b["latest"]["host"]["mem_total_bytes"].get<uint64_t>(), 0u);

  auto gpus = server_->GetJson("/api/v1/gpus");
  ASSERT_TRUE(gpus.ok());
  EXPECT_EQ((*gpus)["gpus"].size(), 10u);
  api::Json t4 = FindGpu((*gpus)["gpus"], "node-b", 1);
  EXPECT_EQ(t4["name"], "Tesla T4");
  EXPECT_EQ(t4["memory_total_bytes"], 15360ull << 20);
  EXPECT_EQ(t4["state"], "ok");
  EXPECT_TRUE(t4.contains("temperature_c"));
  EXPECT_TRUE(t4.contains("power_mw"));
  // UUIDs differ between nodes.
  EXPECT_NE(FindGpu((*gpus)["gpus"], "node-a", 1)["uuid"], t4["uuid"]);
}

TEST_F(MonitoringTest, ProcessOnSimulatedGpuShowsWithUserAndCommand) {
  SpawnOptions opts;
  opts.env = {{"CUDA_VISIBLE_DEVICES", "1"}, {"ROTA_SIM_NODE", "node-b"}, {"ROTA_SIM_GPU_MEM_MIB", "3000"}};
  auto pid = SpawnProcess({"sleep", "300"}, opts);
  ASSERT_TRUE(pid.ok());
  api::Json gpu;
  bool seen = WaitFor([&] {
    auto gpus = server_->GetJson("/api/v1/gpus?node=node-b");
    if (!gpus.ok()) return false;
    gpu = FindGpu((*gpus)["gpus"], "node-b", 1);
    return gpu.is_object() && !gpu["processes"].empty();
  }, seconds(15));
  StopProcess(*pid, 1000);
  ASSERT_TRUE(seen) << b_->child().Log();
  const api::Json& p = gpu["processes"][0];
  EXPECT_EQ(p["pid"], *pid);
  EXPECT_EQ(p["gpu_memory_bytes"], 3000ull << 20);
  EXPECT_EQ(p["uid"], ::getuid());
  struct passwd* pw = ::getpwuid(::getuid());
  ASSERT_NE(pw, nullptr);
  EXPECT_EQ(p["user"], pw->pw_name);
  EXPECT_EQ(gpu["users"], api::Json::array({pw->pw_name}));
  EXPECT_NE(p["command"].get<std::string>().find("sleep 300"), std::string::npos);
  EXPECT_GT(gpu["util_gpu_pct"].get<int>(), 0);
  // The same process is not seen on the other node or on GPU 0.
  auto all = server_->GetJson("/api/v1/gpus");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(FindGpu((*all)["gpus"], "node-b", 0)["processes"].empty());
  for (int i = 0; i < 8; ++i) {
    const api::Json row = FindGpu((*all)["gpus"], "node-a", i);  // keep the row alive for the loop
    for (const auto& q : row["processes"]) EXPECT_NE(q["pid"], *pid);
  }
}

TEST_F(MonitoringTest, HistoryIsDownsampledServerSide) {
  // Wait for a few seconds of samples (0.5 s interval).
  ASSERT_TRUE(WaitFor([&] {
    auto j = server_->GetJson("/api/v1/nodes/node-a/gpus/0/metrics?step=1s");
    return j.ok() && (*j)["points"].size() >= 3;
  }, seconds(20)));
  auto j = server_->GetJson("/api/v1/nodes/node-a/gpus/0/metrics?step=1s");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["step_ms"], 1000);
  EXPECT_EQ((*j)["resolution"], "raw");
  const api::Json& pt = (*j)["points"][0];
  EXPECT_TRUE(pt["avg"].contains("power_mw")) << pt;
  EXPECT_TRUE(pt["max"].contains("util_gpu_pct")) << pt;
  EXPECT_TRUE(pt["last"].contains("energy_mj")) << pt;
  EXPECT_LE(pt["samples"].get<int>(), 3);  // 0.5 s samples, 1 s buckets
  auto node = server_->GetJson("/api/v1/nodes/node-a/metrics?step=2s");
  ASSERT_TRUE(node.ok());
  EXPECT_FALSE((*node)["points"].empty());
}

TEST_F(MonitoringTest, PrometheusExpositionPassesPromtool) {
  SpawnOptions opts;
  opts.env = {{"CUDA_VISIBLE_DEVICES", "0"}, {"ROTA_SIM_NODE", "node-a"}};
  auto pid = SpawnProcess({"sleep", "300"}, opts);
  ASSERT_TRUE(pid.ok());
  std::string text;
  bool seen = WaitFor([&] {
    auto r = server_->Call("GET", "/metrics");
    if (!r.ok()) return false;
    text = r->body;
    return text.find("rota_gpu_processes{node=\"node-a\",index=\"0\"") != std::string::npos &&
           text.find("users=\"root\"") != std::string::npos;
  }, seconds(15));
  StopProcess(*pid, 1000);
  ASSERT_TRUE(seen) << text;
  EXPECT_NE(text.find("rota_gpu_utilization_percent{node=\"node-b\""), std::string::npos);
  EXPECT_NE(text.find("rota_server_connected_agents 2"), std::string::npos);
  EXPECT_NE(text.find("rota_store_transactions_total{outcome=\"committed\"} "), std::string::npos);
  EXPECT_NE(text.find("rota_store_minute_aggregates_written_total{source=\"memory\"} "), std::string::npos);
  EXPECT_NE(text.find("rota_http_request_duration_seconds_bucket"), std::string::npos);
  EXPECT_NE(text.find("rota_scheduler_pass_duration_seconds_bucket{explained=\"true\",le=\"+Inf\"}"),
            std::string::npos);
  EXPECT_NE(text.find("rota_scheduler_passes_total{explained=\"false\"}"), std::string::npos);
  TempDir tmp;
  ASSERT_TRUE(WriteFileAtomic(tmp.path() + "/metrics.txt", text).ok());
  if (::access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool not installed";
  SpawnOptions po;
  po.output_path = tmp.path() + "/promtool.out";
  // promtool reads the exposition on stdin; the file name is passed as $0, not pasted in.
  auto check = SpawnProcess({"/bin/sh", "-c", "exec /usr/bin/promtool check metrics < \"$0\"",
                             tmp.path() + "/metrics.txt"}, po);
  ASSERT_TRUE(check.ok());
  auto st = WaitProcess(*check, 30000);
  ASSERT_TRUE(st.ok());
  auto out = ReadFile(po.output_path);
  EXPECT_EQ(WEXITSTATUS(*st), 0) << (out.ok() ? *out : "");
}

TEST_F(MonitoringTest, LiveStreamDeliversSamples) {
  int samples = 0;
  std::set<std::string> nodes;
  Status st = net::ReadEventStream(server_->url() + "/api/v1/stream",
                                   {"Authorization: Bearer " + server_->admin_token()},
                                   [&](const std::string& event, const std::string& data) {
                                     auto j = api::ParseJson(data);
                                     if (!j.ok()) return false;
                                     if (event == "sample") {
                                       ++samples;
                                       nodes.insert((*j)["node"].get<std::string>());
                                     }
                                     return samples < 6;
                                   });
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(samples, 6);
  EXPECT_EQ(nodes.size(), 2u);
}

TEST_F(MonitoringTest, CliCommandsShowTheCluster) {
  std::map<std::string, std::string> env = server_->CliEnv();
  CliResult nodes = RunCli({"nodes"}, env);
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  EXPECT_NE(nodes.out.find("node-a"), std::string::npos);
  EXPECT_NE(nodes.out.find("ready"), std::string::npos);

  CliResult gpus = RunCli({"gpus", "-o", "json", "--node", "node-b"}, env);
  ASSERT_EQ(gpus.exit_code, 0) << gpus.err;
  auto j = api::ParseJson(gpus.out);
  ASSERT_TRUE(j.ok()) << gpus.out;
  EXPECT_EQ(j->size(), 2u);

  CliResult table = RunCli({"gpus"}, env);
  ASSERT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("Tesla T4"), std::string::npos);

  CliResult top = RunCli({"top", "--frames", "2", "--refresh", "0.1"}, env);
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find("rota top"), std::string::npos);
  EXPECT_NE(top.out.find("node-b"), std::string::npos);
  // Regression: the first frame shows every node, not the first one the stream replays.
  CliResult first = RunCli({"top", "--frames", "1", "--refresh", "0.1"}, env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("node-a"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("node-b"), std::string::npos) << first.out;

  CliResult top_json = RunCli({"top", "-o", "json", "--frames", "3"}, env);
  ASSERT_EQ(top_json.exit_code, 0) << top_json.err;
  EXPECT_NE(top_json.out.find("\"event\""), std::string::npos);

  // --server overrides the environment; an unreachable server is a clear error.
  CliResult down = RunCli({"nodes", "--server", "http://127.0.0.1:1"}, env);
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_NE(down.err.find("cannot reach the rota server at http://127.0.0.1:1"), std::string::npos);
  CliResult bad_fmt = RunCli({"nodes", "-o", "yaml"}, env);
  EXPECT_EQ(bad_fmt.exit_code, 2);
  CliResult unknown = RunCli({"gpus", "--node", "nope"}, env);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("node 'nope' not found"), std::string::npos);
}

}  // namespace
}  // namespace rota::testing
