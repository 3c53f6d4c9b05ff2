#include "power/plan.h"

#include <gtest/gtest.h>

#include "common/time_util.h"

namespace rota::power {
namespace {

using api::Json;

// Monday 2026-11-23 10:00 UTC.
const int64_t kMonday10 = *ParseRfc3339("2026-11-23T10:00:00Z");

PowerPolicy Parse(const std::string& text) {
  auto p = PowerPolicyFromJson(Json::parse(text));
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : PowerPolicy{};
}

GpuFacts Gpu(const std::string& node, uint32_t index, bool busy = false,
             std::optional<PowerRange> range = PowerRange{100'000, 400'000, 400'000},
             std::string model = "NVIDIA A100") {
  GpuFacts g;
  g.node = node;
  g.index = index;
  g.uuid = "GPU-" + node + "-" + std::to_string(index);
  g.model = std::move(model);
  g.range = range;
  g.busy = busy;
  return g;
}

ClusterFacts Cluster(std::vector<GpuFacts> gpus) {
  ClusterFacts c;
  for (const auto& g : gpus) c.node_labels[g.node];
  c.gpus = std::move(gpus);
  return c;
}

TEST(PowerPolicyTest, DecodesLimitsBudgetsAndWatts) {
  auto p = Parse(R"({"name":"cap","limit":"250W","scope":{"gpu_models":["a100"],"labels":{"rack":"r1"}}})");
  EXPECT_EQ(p.kind, PolicyKind::kLimit);
  EXPECT_EQ(p.watts, 250u);
  EXPECT_EQ(p.scope.labels.at("rack"), "r1");
  auto b = Parse(R"({"name":"room","budget":"2.4 kW"})");
  EXPECT_EQ(b.kind, PolicyKind::kBudget);
  EXPECT_EQ(b.watts, 2400u);
  // Round trip through the API view.
  auto again = PowerPolicyFromJson(ToJson(p));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->watts, 250u);
  EXPECT_EQ(again->scope, p.scope);
}

TEST(PowerPolicyTest, RefusesBadInputNamingTheField) {
  struct Case {
    const char* json;
    const char* says;
  } cases[] = {
      {R"({"name":"x"})", "exactly one of limit"},
      {R"({"name":"x","limit":200,"budget":900})", "exactly one of limit"},
      {R"({"name":"x","limit":"200 horsepower"})", "policy.limit"},
      {R"({"name":"x","limit":-5})", "policy.limit"},
      {R"({"name":"x","limit":90000})", "not a GPU power limit"},
      {R"({"name":"bad name","limit":200})", "policy.name"},
      {R"({"name":"x","limit":200,"colour":"red"})", "colour"},
      {R"({"name":"x","limit":200,"scope":{"labels":{"rack":7}}})", "policy.scope.labels"},
      {R"({"name":"x","limit":200,"scope":{"nodes":["a b"]}})", "policy.scope.nodes[0]"},
      {R"({"name":"x","limit":200,"windows":{"allow":[{"days":["mon-fri"],"from":"09:00","to":"18:00"},{"days":["fri"],"from":"17:00","to":"20:00"}]}})",
       "windows overlap"},
      {R"({"name":"x","limit":200,"windows":{"allow":[{"days":["mon"],"from":"18:00","to":"09:00"}]}})",
       "cross midnight"},
      {R"({"name":"x","limit":200,"windows":{"zone":"Mars/Olympus","allow":[{"days":["mon"]}]}})",
       "policy.windows.zone"},
  };
  for (const auto& c : cases) {
    auto p = PowerPolicyFromJson(Json::parse(c.json));
    ASSERT_FALSE(p.ok()) << c.json;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(p.status().message().find(c.says), std::string::npos)
        << c.json << " -> " << p.status().message();
  }
}

TEST(PowerPlanTest, LowestActiveLimitWinsAndIsClampedIntoTheRange) {
  auto a = Parse(R"({"name":"a","limit":300})");
  auto b = Parse(R"({"name":"b","limit":250,"scope":{"nodes":["n1"]}})");
  auto low = Parse(R"({"name":"low","limit":50,"scope":{"nodes":["n2"]}})");
  auto plan = PlanLimits({a, b, low}, Cluster({Gpu("n1", 0), Gpu("n2", 0), Gpu("n3", 0, false, std::nullopt)}),
                         kMonday10);
  ASSERT_EQ(plan.gpus.size(), 3u);
  EXPECT_EQ(plan.gpus[0].limit_mw, 250'000u);
  EXPECT_EQ(plan.gpus[0].policies, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(plan.gpus[1].limit_mw, 100'000u);  // 50 W raised to the minimum
  EXPECT_NE(plan.gpus[1].reason.find("raised to the GPU's minimum 100 W"), std::string::npos)
      << plan.gpus[1].reason;
  EXPECT_EQ(plan.gpus[2].limit_mw, 300'000u);  // range unknown: the agent will say if it cannot
}

TEST(PowerPlanTest, PoliciesApplyOnlyInsideTheirWindows) {
  auto peak = Parse(
      R"({"name":"peak","limit":200,"windows":{"zone":"UTC","allow":[{"days":["mon-fri"],"from":"09:00","to":"12:00"}]}})");
  auto cluster = Cluster({Gpu("n1", 0)});
  EXPECT_EQ(PlanLimits({peak}, cluster, kMonday10).gpus[0].limit_mw, 200'000u);
  const auto later = PlanLimits({peak}, cluster, kMonday10 + 2 * 3'600'000);
  EXPECT_FALSE(later.gpus[0].limit_mw.has_value());
  EXPECT_TRUE(later.gpus[0].policies.empty());
  // Saturday: not a window day.
  EXPECT_FALSE(PlanLimits({peak}, cluster, kMonday10 + 5 * 86'400'000).gpus[0].limit_mw);
}

TEST(PowerPlanTest, BudgetGoesToBusyGpusFirstAndIdleOnesKeepTheirMinimum) {
  auto budget = Parse(R"({"name":"room","budget":600})");
  // min 100, max 400 each. Busy GPUs share 600 - 3*100 = 300 first.
  auto plan = PlanLimits({budget}, Cluster({Gpu("n1", 0, true), Gpu("n1", 1, true), Gpu("n1", 2, false)}),
                         kMonday10);
  EXPECT_EQ(plan.gpus[0].limit_mw, 250'000u);
  EXPECT_EQ(plan.gpus[1].limit_mw, 250'000u);
  EXPECT_EQ(plan.gpus[2].limit_mw, 100'000u);
  ASSERT_EQ(plan.budgets.size(), 1u);
  EXPECT_EQ(plan.budgets[0].assigned_mw, 600'000u);
  EXPECT_EQ(plan.budgets[0].busy, 2);
  EXPECT_TRUE(plan.budgets[0].feasible);
}

TEST(PowerPlanTest, WhatBusyGpusCannotUseGoesToIdleOnes) {
  auto budget = Parse(R"({"name":"room","budget":1000})");
  auto cap = Parse(R"({"name":"cap","limit":200,"scope":{"nodes":["n1"]}})");
  // GPU 0 busy but capped at 200 by a limit: it takes 100 of the 700 spare; the
  // idle GPUs share the remaining 600 up to their maximum of 400 each.
  auto plan = PlanLimits({budget, cap},
                         Cluster({Gpu("n1", 0, true), Gpu("n2", 0), Gpu("n2", 1)}), kMonday10);
  EXPECT_EQ(plan.gpus[0].limit_mw, 200'000u);
  EXPECT_EQ(plan.gpus[1].limit_mw, 400'000u);
  EXPECT_EQ(plan.gpus[2].limit_mw, 400'000u);
  EXPECT_EQ(plan.budgets[0].assigned_mw, 1000'000u);
}

TEST(PowerPlanTest, RedividesWhenLoadMovesAndNeverExceedsTheBudget) {
  auto budget = Parse(R"({"name":"rack","budget":"0.5kW"})");
  auto idle = PlanLimits({budget}, Cluster({Gpu("n1", 0), Gpu("n1", 1)}), kMonday10);
  EXPECT_EQ(idle.gpus[0].limit_mw, 250'000u);
  EXPECT_EQ(idle.gpus[1].limit_mw, 250'000u);
  auto one_busy = PlanLimits({budget}, Cluster({Gpu("n1", 0), Gpu("n1", 1, true)}), kMonday10);
  EXPECT_EQ(one_busy.gpus[0].limit_mw, 100'000u);
  EXPECT_EQ(one_busy.gpus[1].limit_mw, 400'000u);
  // Odd amounts: shares are whole watts, rounded down.
  auto odd = Parse(R"({"name":"odd","budget":1001})");
  auto three = PlanLimits({odd}, Cluster({Gpu("n1", 0, true), Gpu("n1", 1, true), Gpu("n1", 2, true)}),
                          kMonday10);
  uint64_t sum = 0;
  for (const auto& t : three.gpus) sum += *t.limit_mw;
  EXPECT_LE(sum, 1001'000u);
  EXPECT_GE(sum, 999'000u);
}

TEST(PowerPlanTest, InfeasibleBudgetsAndGpusLeftOutAreReported) {
  auto budget = Parse(R"({"name":"tiny","budget":150})");
  GpuFacts away = Gpu("n2", 0);
  away.reachable = false;
  auto plan = PlanLimits({budget}, Cluster({Gpu("n1", 0, true), Gpu("n1", 1), away}), kMonday10);
  EXPECT_EQ(plan.gpus[0].limit_mw, 100'000u);
  EXPECT_EQ(plan.gpus[1].limit_mw, 100'000u);
  EXPECT_FALSE(plan.gpus[2].limit_mw.has_value());
  EXPECT_NE(plan.gpus[2].reason.find("not divided"), std::string::npos);
  ASSERT_EQ(plan.budgets.size(), 1u);
  EXPECT_FALSE(plan.budgets[0].feasible);
  EXPECT_EQ(plan.budgets[0].left_out, 1);
  EXPECT_EQ(plan.budgets[0].min_total_mw, 200'000u);
}

TEST(PowerPlanTest, ScopeMatchesLabelsModelsAndNodes) {
  auto rack = Parse(R"({"name":"r1","limit":150,"scope":{"labels":{"rack":"r1"},"gpu_models":["h100"]}})");
  ClusterFacts c = Cluster({Gpu("n1", 0, false, PowerRange{100'000, 700'000, 700'000}, "NVIDIA H100 80GB"),
                            Gpu("n1", 1), Gpu("n2", 0, false, PowerRange{100'000, 700'000, 700'000}, "NVIDIA H100")});
  c.node_labels["n1"]["rack"] = "r1";
  c.node_labels["n2"]["rack"] = "r2";
  auto plan = PlanLimits({rack}, c, kMonday10);
  EXPECT_EQ(plan.gpus[0].limit_mw, 150'000u);
  EXPECT_FALSE(plan.gpus[1].limit_mw);  // an A100
  EXPECT_FALSE(plan.gpus[2].limit_mw);  // rack r2
}

TEST(PowerPlanTest, ValidationRefusesWhatTheClusterCannotHonour) {
  ClusterFacts c = Cluster({Gpu("n1", 0), Gpu("n1", 1)});
  c.node_labels["n1"]["rack"] = "r1";
  auto check = [&](const std::string& json, const std::vector<PowerPolicy>& others = {}) {
    return ValidateAgainstCluster(Parse(json), others, c, kMonday10);
  };
  EXPECT_TRUE(check(R"({"name":"ok","limit":250})").ok());
  Status st = check(R"({"name":"x","limit":50})");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("outside the power range of n1 GPU 0"), std::string::npos) << st.message();
  st = check(R"({"name":"x","limit":200,"scope":{"labels":{"rack":"r9"}}})");
  EXPECT_NE(st.message().find("no node has the label rack=r9 (known: rack=r1)"), std::string::npos)
      << st.message();
  st = check(R"({"name":"x","limit":200,"scope":{"labels":{"room":"b"}}})");
  EXPECT_NE(st.message().find("no node has a label room"), std::string::npos) << st.message();
  st = check(R"({"name":"x","limit":200,"scope":{"nodes":["ghost"]}})");
  EXPECT_NE(st.message().find("no node named 'ghost'"), std::string::npos) << st.message();
  st = check(R"({"name":"x","limit":200,"scope":{"gpu_models":["V100"]}})");
  EXPECT_NE(st.message().find("matches no GPU"), std::string::npos) << st.message();
  st = check(R"({"name":"x","budget":150})");
  EXPECT_NE(st.message().find("below the minimum total"), std::string::npos) << st.message();

  // Two budgets on the same GPUs at the same time conflict; at different times they do not.
  PowerPolicy day = Parse(
      R"({"name":"day","budget":500,"windows":{"allow":[{"days":["mon-fri"],"from":"08:00","to":"20:00"}]}})");
  day.id = 1;
  st = check(R"({"name":"always","budget":600})", {day});
  EXPECT_EQ(st.code(), StatusCode::kConflict) << st.message();
  EXPECT_TRUE(check(
      R"({"name":"night","budget":700,"windows":{"allow":[{"days":["mon-fri"],"from":"20:00","to":"24:00"},{"days":["sat-sun"]}]}})",
      {day}).ok());
  // Editing the policy itself is not a conflict with itself.
  PowerPolicy edited = day;
  edited.watts = 800;
  EXPECT_TRUE(ValidateAgainstCluster(edited, {day}, c, kMonday10).ok());
}

}  // namespace
}  // namespace rota::power
