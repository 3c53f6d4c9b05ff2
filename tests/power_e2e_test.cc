// Power policies end to end: `rota server` and a real agent on simulated GPUs
// whose draw follows the limit in force (as a driver's does). A cap is applied,
// seen in the readings and restored; a budget is re-divided when a GPU becomes
// busy; a limit the GPU refuses is reported and logged; bad policies are refused
// with 4xx and change nothing; an agent killed and restarted gets its limits
// again. Setting limits needs root, as with the real driver.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;

class PowerE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: setting a GPU power limit does";
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
  }

  void StartAgent(const Json& faults = Json::object()) {
    agent_ = std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = node_, .gpus = 2}, *server_,
                                            std::vector<std::string>{"--label", "rack=r7"});
    std::filesystem::create_directories(agent_->state_dir());
    ASSERT_TRUE(agent_->SetFaults(faults).ok());
    ASSERT_TRUE(agent_->Start().ok()) << agent_->child().Log();
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, node_); }, seconds(20)));
  }

  // A process using GPU `gpu` at 100 %.
  std::unique_ptr<Child> Burn(int gpu) {
    auto c = std::make_unique<Child>(
        std::vector<std::string>{"/bin/sleep", "300"},
        std::map<std::string, std::string>{{"ROTA_SIM_NODE", node_},
                                           {"CUDA_VISIBLE_DEVICES", std::to_string(gpu)},
                                           {"ROTA_SIM_GPU_UTIL", "100"}},
        dir_.path() + "/burn-" + std::to_string(gpu) + ".log");
    EXPECT_TRUE(c->Start().ok());
    return c;
  }

  Json Gpu(int index) {
    auto state = server_->GetJson("/api/v1/power");
    if (!state.ok()) return nullptr;
    for (const auto& g : (*state)["gpus"]) {
      if (g["node"] == node_ && g["index"] == index) return g;
    }
    return nullptr;
  }

  static double Num(const Json& g, const char* key) {
    return g.is_object() && g.contains(key) && g[key].is_number() ? g[key].get<double>() : -1;
  }

  // Waits until GPU `index` has `watts` in force, and its draw is at most that.
  bool WaitInForce(int index, double watts, bool busy = false) {
    return WaitFor(
        [&] {
          Json g = Gpu(index);
          return std::abs(Num(g, "in_force_w") - watts) < 0.5 &&
                 (!busy || std::abs(Num(g, "power_w") - watts) < 0.5);
        },
        seconds(20));
  }

  int64_t CreatePolicy(const Json& body) {
    auto r = server_->Call("POST", "/api/v1/power/policies", body.dump());
    EXPECT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    return r.ok() && r->status == 201 ? Json::parse(r->body)["id"].get<int64_t>() : 0;
  }

  std::vector<Json> Events(const std::string& action) {
    std::vector<Json> out;
    auto events = server_->GetJson("/api/v1/power/events?limit=1000");
    if (!events.ok()) return out;
    for (const auto& e : (*events)["events"]) {
      if (e["action"] == action) out.push_back(e);
    }
    return out;
  }

  TempDir dir_;
  const std::string node_ = "power-node-" + std::to_string(::getpid());
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(PowerE2E, ACapIsAppliedSeenInTheReadingsAndRestored) {
  StartAgent();
  auto burn = Burn(0);
  ASSERT_TRUE(WaitFor([&] { return Num(Gpu(0), "power_w") > 399; }, seconds(20)))
      << "a busy GPU draws its default limit: " << Gpu(0).dump();
  // The registered range and the default in force before any policy.
  Json before = Gpu(0);
  EXPECT_EQ(Num(before, "min_w"), 100);
  EXPECT_EQ(Num(before, "max_w"), 400);
  EXPECT_TRUE(before["target_w"].is_null());

  const int64_t id = CreatePolicy({{"name", "rack-cap"}, {"limit", "250W"}, {"scope", {{"labels", {{"rack", "r7"}}}}}});
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitInForce(0, 250, /*busy=*/true)) << Gpu(0).dump();
  ASSERT_TRUE(WaitInForce(1, 250)) << Gpu(1).dump();
  Json capped = Gpu(0);
  EXPECT_EQ(capped["outcome"], "set");
  EXPECT_EQ(capped["policies"], Json::array({"rack-cap"}));
  // The readings carry the limit in force too.
  auto gpus = server_->GetJson("/api/v1/gpus");
  ASSERT_TRUE(gpus.ok());
  Json row = FindGpu((*gpus)["gpus"], node_, 0);
  ASSERT_TRUE(row.is_object()) << gpus->dump();
  EXPECT_EQ(row["power_limit_mw"], 250'000) << row.dump();

  // The CLI shows the same.
  CliResult cli = RunCli({"power", "--node", node_}, server_->CliEnv());
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("250 W"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("rack-cap"), std::string::npos) << cli.out;

  // Deleting the policy gives the GPUs their default back, and the busy one its full draw.
  CliResult rm = RunCli({"power", "policy", "rm", "rack-cap"}, server_->CliEnv());
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  ASSERT_TRUE(WaitInForce(0, 400, /*busy=*/true)) << Gpu(0).dump();
  EXPECT_EQ(Gpu(0)["outcome"], "restored");
  EXPECT_TRUE(Gpu(0)["target_w"].is_null());

  // Every change is in the audit log, with who changed the policy (rows of
  // reported limits are written after the live state changes, asynchronously).
  ASSERT_TRUE(WaitFor([&] { return Events("restored").size() >= 2; }, seconds(20)));
  EXPECT_EQ(Events("set").size(), 2u);
  EXPECT_EQ(Events("restored").size(), 2u);
  auto created = Events("policy_created");
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0]["actor"], "admin");
  EXPECT_EQ(Events("policy_deleted").size(), 1u);
  Json set = Events("set")[0];
  EXPECT_EQ(set["limit_w"], 250);
  EXPECT_EQ(set["previous_w"], 400);
  EXPECT_EQ(set["policy"], "rack-cap");
}

TEST_F(PowerE2E, ABudgetIsRedividedWhenAGpuBecomesBusy) {
  StartAgent();
  const int64_t id = CreatePolicy({{"name", "node-budget"}, {"budget", 500}, {"scope", {{"nodes", {node_}}}}});
  ASSERT_GT(id, 0);
  // Both idle: each keeps its 100 W minimum and they share the other 300 W.
  ASSERT_TRUE(WaitInForce(0, 250)) << Gpu(0).dump();
  ASSERT_TRUE(WaitInForce(1, 250)) << Gpu(1).dump();
  auto burn = Burn(1);
  // GPU 1 busy: it gets all it can use (400 W); GPU 0 its minimum.
  ASSERT_TRUE(WaitInForce(1, 400, /*busy=*/true)) << Gpu(1).dump();
  ASSERT_TRUE(WaitInForce(0, 100)) << Gpu(0).dump();
  auto state = server_->GetJson("/api/v1/power");
  ASSERT_TRUE(state.ok());
  ASSERT_EQ((*state)["budgets"].size(), 1u);
  const Json& b = (*state)["budgets"][0];
  EXPECT_EQ(b["policy"], "node-budget");
  EXPECT_EQ(b["assigned_w"], 500);
  EXPECT_EQ(b["busy"], 1);
  EXPECT_EQ(b["feasible"], true);
  auto metrics = server_->Call("GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("rota_power_budget_watts{policy=\"node-budget\"} 500"), std::string::npos);
  EXPECT_NE(metrics->body.find("rota_power_budget_assigned_watts{policy=\"node-budget\"} 500"), std::string::npos);
  // The draw of the node never exceeds the budget.
  EXPECT_LE(Num(Gpu(0), "power_w") + Num(Gpu(1), "power_w"), 500.5);
}

TEST_F(PowerE2E, RefusedLimitsAreReportedAndBadPoliciesChangeNothing) {
  StartAgent(Json{{"1:set_power_limit", "not_supported"}});
  ASSERT_GT(CreatePolicy({{"name", "cap"}, {"limit", 200}}), 0);
  ASSERT_TRUE(WaitInForce(0, 200)) << Gpu(0).dump();
  ASSERT_TRUE(WaitFor([&] { return Gpu(1)["outcome"] == "refused"; }, seconds(20))) << Gpu(1).dump();
  EXPECT_NE(Gpu(1)["detail"].get<std::string>().find("does not support"), std::string::npos) << Gpu(1).dump();
  EXPECT_EQ(Num(Gpu(1), "in_force_w"), 400);
  // The audit row is written after the live state changes (asynchronously).
  ASSERT_TRUE(WaitFor([&] { return !Events("refused").empty(); }, seconds(20)));
  auto refused = Events("refused");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0]["gpu"], 1);
  EXPECT_EQ(refused[0]["requested_w"], 200);

  // Bad input: clear 4xx, nothing stored.
  struct Case {
    Json body;
    int status;
    const char* says;
  } cases[] = {
      {{{"name", "low"}, {"limit", 50}}, 400, "outside the power range"},
      {{{"name", "high"}, {"limit", 450}}, 400, "outside the power range"},
      {{{"name", "nolabel"}, {"limit", 200}, {"scope", {{"labels", {{"rack", "r9"}}}}}}, 400, "rack=r9"},
      {{{"name", "ghost"}, {"limit", 200}, {"scope", {{"nodes", {"ghost"}}}}}, 400, "no node named"},
      {{{"name", "both"}, {"limit", 200}, {"budget", 900}}, 400, "exactly one"},
      {{{"name", "overlap"},
        {"limit", 200},
        {"windows", {{"allow", {{{"days", {"mon-fri"}}, {"from", "09:00"}, {"to", "17:00"}},
                                {{"days", {"wed"}}, {"from", "16:00"}, {"to", "18:00"}}}}}}},
       400, "overlap"},
      {{{"name", "tiny"}, {"budget", 150}}, 400, "below the minimum total"},
      {{{"name", "cap"}, {"limit", 300}}, 409, "exists already"},
  };
  for (const auto& c : cases) {
    auto r = server_->Call("POST", "/api/v1/power/policies", c.body.dump());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, c.status) << c.body.dump() << " -> " << r->body;
    EXPECT_NE(r->body.find(c.says), std::string::npos) << c.body.dump() << " -> " << r->body;
  }
  ASSERT_GT(CreatePolicy({{"name", "budget-a"}, {"budget", 600}}), 0);
  auto twice = server_->Call("POST", "/api/v1/power/policies", Json{{"name", "budget-b"}, {"budget", 700}}.dump());
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->status, 409) << twice->body;
  auto list = server_->GetJson("/api/v1/power/policies");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["policies"].size(), 2u) << list->dump();
  EXPECT_EQ(Events("policy_created").size(), 2u);

  // Who may do what.
  auto user = server_->CreateUser("carol", "user");
  ASSERT_TRUE(user.ok());
  auto post = server_->CallAs(*user, "POST", "/api/v1/power/policies", Json{{"name", "x"}, {"limit", 200}}.dump());
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(post->status, 403);
  auto read = server_->CallAs(*user, "GET", "/api/v1/power");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->status, 200);
  auto anonymous = server_->CallAs("", "GET", "/api/v1/power/policies");
  ASSERT_TRUE(anonymous.ok());
  EXPECT_EQ(anonymous->status, 401);
  for (const char* q : {"limit=0", "to=2026-01-01T00:00:00Z&from=2026-02-01T00:00:00Z", "node=a%20b", "colour=red"}) {
    auto r = server_->Call("GET", std::string("/api/v1/power/events?") + q);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 400) << q << " -> " << r->body;
  }
  auto missing = server_->Call("DELETE", "/api/v1/power/policies/999");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
}

TEST_F(PowerE2E, AnAgentKilledAndRestartedGetsItsLimitsAgainAndAStoppedOneRestoresThem) {
  StartAgent();
  ASSERT_GT(CreatePolicy({{"name", "cap"}, {"limit", 300}}), 0);
  ASSERT_TRUE(WaitInForce(0, 300)) << Gpu(0).dump();
  // kill -9: the next agent restores what the killed one left (its state file)
  // and the server sends the limits again on the new session.
  agent_->child().Kill();
  ASSERT_TRUE(agent_->child().Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, node_); }, seconds(20)));
  ASSERT_TRUE(WaitFor([&] { return Events("set").size() == 4; }, seconds(20)))
      << agent_->child().Log();
  ASSERT_TRUE(WaitInForce(0, 300)) << Gpu(0).dump();
  // A clean stop gives the defaults back before the agent exits.
  agent_->child().Stop();
  EXPECT_NE(agent_->child().Log().find("power limit at stop: GPU 0: restored"), std::string::npos)
      << agent_->child().Log();
  EXPECT_NE(::access((agent_->state_dir() + "/power-limits.json").c_str(), F_OK), 0)
      << "nothing is left to restore";
}

}  // namespace
}  // namespace rota::testing
