#include "api/codec.h"

#include <gtest/gtest.h>

namespace rota::api {
namespace {

NodeSample MakeSample() {
  NodeSample s;
  s.time_ms = 1'700'000'000'000;
  s.host.cpu_percent = 12.5;
  s.host.per_core_percent = {10, 15};
  s.host.mem_total_bytes = 1 << 30;
  s.host.mem_available_bytes = 1 << 29;
  GpuSample g;
  g.index = 1;
  g.uuid = "GPU-1";
  g.util_gpu_pct = 90;
  g.memory_used_bytes = 123;
  GpuProcess p;
  p.pid = 42;
  p.user = "alice";
  p.gpu_memory_bytes = 100;
  g.processes.push_back(p);
  s.gpus.push_back(g);
  return s;
}

TEST(CodecTest, NodeSampleRoundTrips) {
  NodeSample s = MakeSample();
  auto back = NodeSampleFromJson(ToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->time_ms, s.time_ms);
  ASSERT_EQ(back->gpus.size(), 1u);
  EXPECT_EQ(back->gpus[0].util_gpu_pct, 90u);
  EXPECT_FALSE(back->gpus[0].temperature_c.has_value());  // absent stays absent
  ASSERT_EQ(back->gpus[0].processes.size(), 1u);
  EXPECT_EQ(back->gpus[0].processes[0].user, "alice");
}

TEST(CodecTest, NodeInfoRoundTrips) {
  NodeInfo n;
  n.name = "node-a";
  n.node_id = "id-1";
  n.labels["rack"] = "r1";
  n.gpus.push_back(GpuInfo{0, "GPU-0", "Sim A100", "00000000:01:00.0", 80ull << 30, 400000});
  auto back = NodeInfoFromJson(ToJson(n));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->labels.at("rack"), "r1");
  EXPECT_EQ(back->gpus[0].power_limit_mw, 400000u);
}

// Bad inputs tried: wrong types, out-of-range numbers, missing required fields,
// oversized arrays, bad node names, non-objects.
TEST(CodecTest, RejectsBadSamplesNamingTheField) {
  std::vector<std::pair<std::function<void(Json&)>, std::string>> cases = {
      {[](Json& j) { j["time_ms"] = "yesterday"; }, "time_ms must be an integer"},
      {[](Json& j) { j["time_ms"] = 5; }, "time_ms must be in"},
      {[](Json& j) { j.erase("host"); }, "host is required"},
      {[](Json& j) { j["host"]["cpu_percent"] = 250; }, "host: cpu_percent must be a number"},
      {[](Json& j) { j["gpus"][0]["index"] = -1; }, "gpus[0]: index must be in"},
      {[](Json& j) { j["gpus"][0]["util_gpu_pct"] = 101; }, "gpus[0]: util_gpu_pct"},
      {[](Json& j) { j["gpus"][0]["processes"][0]["pid"] = "x"; }, "gpus[0]: processes[0]: pid"},
      {[](Json& j) { j["gpus"] = Json::array(); for (int i = 0; i < 65; ++i) j["gpus"].push_back(Json::object()); },
       "gpus has more than 64"},
      {[](Json& j) { j["gpus"] = 3; }, "gpus must be an array"},
      {[](Json& j) { j = Json::array(); }, "must be an object"},
  };
  for (auto& [mutate, expected] : cases) {
    Json j = ToJson(MakeSample());
    mutate(j);
    auto r = NodeSampleFromJson(j);
    ASSERT_FALSE(r.ok()) << expected;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(expected), std::string::npos)
        << r.status().message() << " does not contain " << expected;
  }
}

TEST(CodecTest, NodeNamesAreValidated) {
  EXPECT_TRUE(IsValidNodeName("gpu-node-01.lab"));
  for (const char* bad : {"", "-x", "a b", "a/b", "../etc", "x\n"}) {
    EXPECT_FALSE(IsValidNodeName(bad)) << bad;
  }
  Json j = ToJson(NodeInfo{.name = "ok", .node_id = "1"});
  j["name"] = "../../etc";
  EXPECT_FALSE(NodeInfoFromJson(j).ok());
}

TEST(CodecTest, ParseJsonReportsMalformedText) {
  EXPECT_TRUE(ParseJson("{\"a\":1}").ok());
  for (const char* bad : {"", "{", "{\"a\":}", "nul", "{\"a\":1} x"}) {
    auto r = ParseJson(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("malformed JSON"), std::string::npos);
  }
}

}  // namespace
}  // namespace rota::api
