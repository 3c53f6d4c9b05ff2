#include "api/power_protocol.h"

#include <gtest/gtest.h>

#include "api/protocol.h"

namespace rota::api {
namespace {

TEST(PowerProtocolTest, LimitsAndReportsRoundTrip) {
  PowerLimitsMsg m;
  m.gpus.push_back({0, "GPU-a", 250'000, "limit 'cap' 250 W"});
  m.gpus.push_back({1, "GPU-b", std::nullopt, ""});
  auto decoded = DecodeServerMessage(Encode(m));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  const auto& back = std::get<PowerLimitsMsg>(*decoded);
  ASSERT_EQ(back.gpus.size(), 2u);
  EXPECT_EQ(back.gpus[0].limit_mw, 250'000u);
  EXPECT_EQ(back.gpus[0].reason, "limit 'cap' 250 W");
  EXPECT_FALSE(back.gpus[1].limit_mw.has_value());

  PowerReportMsg r;
  PowerGpuReport g;
  g.index = 3;
  g.uuid = "GPU-c";
  g.requested_mw = 100'000;
  g.limit_mw = 100'000;
  g.previous_mw = 300'000;
  g.min_mw = 75'000;
  g.max_mw = 300'000;
  g.default_mw = 300'000;
  g.outcome = PowerOutcome::kSet;
  g.detail = "set to 100 W";
  r.gpus.push_back(g);
  auto agent = DecodeAgentMessage(Encode(r));
  ASSERT_TRUE(agent.ok()) << agent.status().message();
  const auto& rb = std::get<PowerReportMsg>(*agent);
  ASSERT_EQ(rb.gpus.size(), 1u);
  EXPECT_EQ(rb.gpus[0].outcome, PowerOutcome::kSet);
  EXPECT_EQ(rb.gpus[0].previous_mw, 300'000u);
  EXPECT_EQ(rb.gpus[0].min_mw, 75'000u);
}

TEST(PowerProtocolTest, RefusesMalformedMessagesNamingTheField) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {R"({"v":1,"type":"power_limits"})", "gpus"},
      {R"({"v":1,"type":"power_limits","gpus":[{"index":0}]})", "gpus[0].uuid"},
      {R"({"v":1,"type":"power_limits","gpus":[{"index":99,"uuid":"x"}]})", "gpus[0].index"},
      {R"({"v":1,"type":"power_limits","gpus":[{"index":0,"uuid":"x","limit_mw":-1}]})", "limit_mw"},
      {R"({"v":1,"type":"power_limits","gpus":[{"index":0,"uuid":"x","limit_mw":0}]})", "positive"},
      {R"({"v":1,"type":"power_limits","gpus":[{"index":0,"uuid":"x"},{"index":0,"uuid":"y"}]})",
       "listed twice"},
  };
  for (const auto& c : cases) {
    auto m = DecodeServerMessage(c.text);
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_NE(m.status().message().find(c.says), std::string::npos) << m.status().message();
  }
  auto bad = DecodeAgentMessage(R"({"v":1,"type":"power_report","gpus":[{"index":0,"outcome":"maybe"}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a power outcome"), std::string::npos);
}

TEST(PowerProtocolTest, GpuInfoCarriesThePowerRange) {
  GpuInfo g;
  g.index = 0;
  g.uuid = "GPU-a";
  g.power_min_mw = 100'000;
  g.power_max_mw = 400'000;
  g.power_default_mw = 350'000;
  auto back = GpuInfoFromJson(ToJson(g));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->power_min_mw, 100'000u);
  EXPECT_EQ(back->power_default_mw, 350'000u);
  g.power_min_mw = 500'000;
  EXPECT_FALSE(GpuInfoFromJson(ToJson(g)).ok());
}

}  // namespace
}  // namespace rota::api
