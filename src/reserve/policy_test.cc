#include "reserve/policy.h"

#include <gtest/gtest.h>

#include "common/time_util.h"

namespace rota::reserve {
namespace {

using api::Json;

int64_t T(const char* rfc3339) { return *ParseRfc3339(rfc3339); }
const int64_t kNow = T("2026-11-22T10:00:00Z");  // Sunday
const int64_t kHour = 3'600'000;

Policy P(Json j) {
  auto p = PolicyFromJson(j);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Policy{};
}

Requester Alice() { return Requester{1, "alice", {"ml"}, false}; }
Requester Bob() { return Requester{2, "bob", {}, false}; }

PolicyRequest Req(int64_t start, int64_t end, std::vector<uint32_t> gpus = {0},
                  const std::string& node = "gpu-a") {
  PolicyRequest r;
  r.node = node;
  for (uint32_t g : gpus) r.gpus.push_back({g, "GPU-" + std::to_string(g), "NVIDIA A100-SXM4-80GB"});
  r.start_ms = start;
  r.end_ms = end;
  return r;
}

Reservation Held(int64_t start, int64_t end, std::vector<uint32_t> gpus, const std::string& node = "gpu-a") {
  Reservation r;
  r.id = 9;
  r.owner = "alice";
  r.node = node;
  r.gpus = gpus;
  r.start_ms = start;
  r.end_ms = end;
  return r;
}

std::string ModelOf(const std::string& node, uint32_t) {
  return node == "gpu-v" ? "Tesla V100" : "NVIDIA A100-SXM4-80GB";
}

Status Eval(const std::vector<Policy>& ps, const Requester& who, const PolicyRequest& r,
            const std::vector<Reservation>& existing = {}) {
  return EvaluatePolicies(ps, who, r, existing, ModelOf, kNow);
}

TEST(PolicyCodecTest, RoundTripsThroughSpecJson) {
  Json j = {{"name", "ml-a100"},
            {"subjects", {{"groups", {"ml"}}}},
            {"targets", {{"nodes", {"gpu-a"}}, {"gpu_models", {"A100"}}}},
            {"windows", {{"zone", "+01:00"}, {"allow", {{{"days", {"mon-fri"}}, {"from", "09:00"}, {"to", "18:00"}}}}}},
            {"max_duration", "8h"},
            {"max_ahead", "14d"},
            {"max_gpus", 4},
            {"weekly_gpu_hours", 40},
            {"enforcement", {{"mode", "kill"}}},
            {"idle", {{"threshold_pct", 5}, {"after", "2h"}, {"release", true}}}};
  Policy p = P(j);
  EXPECT_EQ(p.windows.size(), 1u);
  EXPECT_EQ(p.windows[0].days, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(*p.max_duration_ms, 8 * kHour);
  Json spec = PolicySpecJson(p);
  spec["name"] = "ml-a100";
  Policy again = P(spec);
  EXPECT_EQ(PolicySpecJson(again), PolicySpecJson(p));
  EXPECT_EQ(spec["enforcement"]["mode"], "kill");
  EXPECT_EQ(spec["idle"]["after"], "2h");
}

TEST(PolicyCodecTest, RejectsBadSpecsNamingTheField) {
  struct Case {
    const char* what;
    Json j;
    const char* field;
  } cases[] = {
      {"not an object", Json::array(), "policy"},
      {"missing name", Json{{"max_gpus", 1}}, "policy.name"},
      {"bad name", Json{{"name", "a b"}}, "policy.name"},
      {"unknown field", Json{{"name", "x"}, {"max_gpu", 1}}, "max_gpu"},
      {"users not array", Json{{"name", "x"}, {"subjects", {{"users", "alice"}}}}, "policy.subjects.users"},
      {"bad node", Json{{"name", "x"}, {"targets", {{"nodes", {"a b"}}}}}, "policy.targets.nodes[0]"},
      {"unknown zone", Json{{"name", "x"}, {"windows", {{"zone", "Mars/Olympus"}, {"allow", {{{"days", {"mon"}}}}}}}}, "policy.windows.zone"},
      {"no windows", Json{{"name", "x"}, {"windows", {{"allow", Json::array()}}}}, "policy.windows.allow"},
      {"bad day", Json{{"name", "x"}, {"windows", {{"allow", {{{"days", {"funday"}}}}}}}}, "days[0]"},
      {"bad clock", Json{{"name", "x"}, {"windows", {{"allow", {{{"days", {"mon"}}, {"from", "9am"}}}}}}}, "from"},
      {"window backwards", Json{{"name", "x"}, {"windows", {{"allow", {{{"days", {"mon"}}, {"from", "18:00"}, {"to", "09:00"}}}}}}}, "allow[0]"},
      {"bad duration", Json{{"name", "x"}, {"max_duration", "forever"}}, "policy.max_duration"},
      {"zero max_gpus", Json{{"name", "x"}, {"max_gpus", 0}}, "policy.max_gpus"},
      {"negative quota", Json{{"name", "x"}, {"weekly_gpu_hours", -1}}, "policy.weekly_gpu_hours"},
      {"enforcement not object", Json{{"name", "x"}, {"enforcement", {1, 2}}}, "policy.enforcement"},
      {"idle without after", Json{{"name", "x"}, {"idle", {{"threshold_pct", 5}}}}, "policy.idle.after"},
      {"idle threshold > 100", Json{{"name", "x"}, {"idle", {{"threshold_pct", 101}, {"after", "1h"}}}}, "threshold_pct"},
  };
  for (const auto& c : cases) {
    auto p = PolicyFromJson(c.j);
    ASSERT_FALSE(p.ok()) << c.what;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(p.status().message().find(c.field), std::string::npos) << c.what << ": " << p.status().message();
  }
}

TEST(EvaluatePoliciesTest, NoPoliciesAllowsEverything) {
  EXPECT_TRUE(Eval({}, Bob(), Req(kNow, kNow + 100 * kHour, {0, 1, 2, 3})).ok());
}

TEST(EvaluatePoliciesTest, TargetedGpusAreOnlyForSubjects) {
  std::vector<Policy> ps = {P({{"name", "ml-only"}, {"subjects", {{"groups", {"ml"}}}}, {"targets", {{"nodes", {"gpu-a"}}}}})};
  EXPECT_TRUE(Eval(ps, Alice(), Req(kNow, kNow + kHour)).ok());
  Status st = Eval(ps, Bob(), Req(kNow, kNow + kHour));
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(st.message(), "policy 'ml-only' (subjects): gpu-a/0 may be reserved only by groups ml; bob is not among them");
  // Untargeted node: free for all.
  EXPECT_TRUE(Eval(ps, Bob(), Req(kNow, kNow + kHour, {0}, "gpu-b")).ok());
  // Admins are exempt.
  Requester admin = Bob();
  admin.admin = true;
  EXPECT_TRUE(Eval(ps, admin, Req(kNow, kNow + kHour)).ok());
}

TEST(EvaluatePoliciesTest, GpuModelTargets) {
  std::vector<Policy> ps = {P({{"name", "v100"}, {"subjects", {{"users", {"alice"}}}}, {"targets", {{"gpu_models", {"v100"}}}}})};
  EXPECT_TRUE(Eval(ps, Bob(), Req(kNow, kNow + kHour)).ok());  // A100 not targeted
  PolicyRequest v = Req(kNow, kNow + kHour, {0}, "gpu-v");
  for (auto& g : v.gpus) g.model = "Tesla V100";
  EXPECT_EQ(Eval(ps, Bob(), v).code(), StatusCode::kPermissionDenied);
}

TEST(EvaluatePoliciesTest, EachRuleRefusesNamingItself) {
  const int64_t mon9 = T("2026-11-23T09:00:00Z");
  struct Case {
    const char* what;
    Json policy;
    PolicyRequest req;
    std::vector<Reservation> existing;
    const char* refusal;  // "" = allowed
  } cases[] = {
      {"max_duration ok", {{"max_duration", "8h"}}, Req(mon9, mon9 + 8 * kHour), {}, ""},
      {"max_duration exceeded", {{"max_duration", "8h"}}, Req(mon9, mon9 + 9 * kHour), {}, "(max_duration): 9h is longer than the maximum 8h"},
      {"max_ahead exceeded", {{"max_ahead", "1d"}}, Req(kNow + 2 * kDayMs, kNow + 2 * kDayMs + kHour), {}, "(max_ahead)"},
      {"window ok", {{"windows", {{"allow", {{{"days", {"mon-fri"}}, {"from", "08:00"}, {"to", "18:00"}}}}}}}, Req(mon9, mon9 + 9 * kHour), {}, ""},
      {"window overrun", {{"windows", {{"allow", {{{"days", {"mon-fri"}}, {"from", "08:00"}, {"to", "18:00"}}}}}}}, Req(mon9, mon9 + 10 * kHour), {}, "(windows): 2026-11-23 18:00 (UTC) is outside"},
      {"window on sunday", {{"windows", {{"allow", {{{"days", {"mon-fri"}}}}}}}}, Req(kNow, kNow + kHour), {}, "(windows): 2026-11-22 10:00"},
      {"windows chain over midnight", {{"windows", {{"allow", {{{"days", {"mon"}}, {"from", "20:00"}}, {{"days", {"tue"}}, {"to", "06:00"}}}}}}}, Req(mon9 + 11 * kHour, mon9 + 21 * kHour), {}, ""},
      {"windows in a zone", {{"windows", {{"zone", "+02:00"}, {"allow", {{{"days", {"mon"}}, {"from", "09:00"}, {"to", "12:00"}}}}}}}, Req(mon9 - 2 * kHour, mon9 + kHour), {}, ""},
      {"max_gpus ok", {{"max_gpus", 3}}, Req(mon9, mon9 + kHour, {0}), {Held(mon9, mon9 + kHour, {1, 2})}, ""},
      {"max_gpus exceeded", {{"max_gpus", 3}}, Req(mon9, mon9 + kHour, {0, 3}), {Held(mon9, mon9 + kHour, {1, 2})}, "(max_gpus): you would hold 4 GPUs at once"},
      {"max_gpus back to back", {{"max_gpus", 2}}, Req(mon9, mon9 + kHour, {0, 1}), {Held(mon9 - kHour, mon9, {2, 3}), Held(mon9 + kHour, mon9 + 2 * kHour, {2, 3})}, ""},
      {"max_gpus other model not counted", {{"max_gpus", 1}, {"targets", {{"gpu_models", {"A100"}}}}}, Req(mon9, mon9 + kHour), {Held(mon9, mon9 + kHour, {0, 1}, "gpu-v")}, ""},
      {"weekly quota ok", {{"weekly_gpu_hours", 10}}, Req(mon9, mon9 + 4 * kHour, {0, 1}), {Held(mon9 + kDayMs, mon9 + kDayMs + 2 * kHour, {0})}, ""},
      {"weekly quota exceeded", {{"weekly_gpu_hours", 10}}, Req(mon9, mon9 + 5 * kHour, {0, 1}), {Held(mon9 + kDayMs, mon9 + kDayMs + 2 * kHour, {0})}, "(weekly_gpu_hours): week 2026-W48 would use 12.0 GPU-hours"},
      {"weekly quota other week", {{"weekly_gpu_hours", 10}}, Req(mon9, mon9 + 5 * kHour, {0, 1}), {Held(mon9 - 3 * kDayMs, mon9 - 3 * kDayMs + 9 * kHour, {0})}, ""},
  };
  for (auto& c : cases) {
    c.policy["name"] = "p";
    Status st = Eval({P(c.policy)}, Alice(), c.req, c.existing);
    if (std::string(c.refusal).empty()) {
      EXPECT_TRUE(st.ok()) << c.what << ": " << st.ToString();
    } else {
      EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << c.what;
      EXPECT_NE(st.message().find(std::string("policy 'p' ") + c.refusal), std::string::npos)
          << c.what << ": " << st.message();
    }
  }
}

TEST(EvaluatePoliciesTest, EveryApplyingPolicyMustPass) {
  std::vector<Policy> ps = {P({{"name", "loose"}, {"max_duration", "24h"}}),
                            P({{"name", "strict"}, {"subjects", {{"users", {"alice"}}}}, {"max_duration", "1h"}})};
  Status st = Eval(ps, Alice(), Req(kNow, kNow + 2 * kHour));
  EXPECT_NE(st.message().find("policy 'strict' (max_duration)"), std::string::npos) << st.message();
  // bob is covered only by "loose".
  EXPECT_TRUE(Eval(ps, Bob(), Req(kNow, kNow + 2 * kHour)).ok());
}

TEST(EvaluatePoliciesTest, EditOfRunningChecksWindowsFromNow) {
  std::vector<Policy> ps = {P({{"name", "sun"}, {"windows", {{"allow", {{{"days", {"sun"}}, {"from", "10:00"}, {"to", "12:00"}}}}}}})};
  PolicyRequest r = Req(kNow - 2 * kHour, kNow + kHour);
  EXPECT_EQ(Eval(ps, Alice(), r).code(), StatusCode::kPermissionDenied);
  r.windows_from_ms = kNow;
  EXPECT_TRUE(Eval(ps, Alice(), r).ok());
}

TEST(IdleRulesTest, PicksApplyingPolicies) {
  std::vector<Policy> ps = {P({{"name", "a"}, {"idle", {{"threshold_pct", 5}, {"after", "1h"}, {"release", true}}}}),
                            P({{"name", "b"}, {"subjects", {{"users", {"bob"}}}}, {"idle", {{"after", "2h"}}}}),
                            P({{"name", "c"}})};
  auto rules = IdleRulesFor(ps, "alice", {}, "gpu-a", Req(kNow, kNow + kHour).gpus);
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].policy, "a");
  EXPECT_TRUE(rules[0].rule.release);
  EXPECT_EQ(rules[0].rule.after_ms, kHour);
}

TEST(IsoWeekTest, StartsOnMondayUtc) {
  EXPECT_EQ(IsoWeekStart(T("2026-11-25T12:00:00Z")), T("2026-11-23T00:00:00Z"));
  EXPECT_EQ(IsoWeekStart(T("2026-11-23T00:00:00Z")), T("2026-11-23T00:00:00Z"));
  EXPECT_EQ(IsoWeekStart(T("2026-11-22T23:59:59Z")), T("2026-11-16T00:00:00Z"));
  EXPECT_EQ(IsoWeekLabel(T("2026-11-23T10:00:00Z")), "2026-W48");
  EXPECT_EQ(IsoWeekLabel(T("2027-01-01T10:00:00Z")), "2026-W53");
  EXPECT_EQ(IsoWeekLabel(T("2025-12-29T10:00:00Z")), "2026-W01");
}

}  // namespace
}  // namespace rota::reserve
