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

TEST(CodecTest, CpuEnergyFieldsRoundTripAndStayAbsentWhenNotSent) {
  NodeSample s = MakeSample();
  s.host.cpu_energy_mj = 123'456'789'012ull;
  s.host.cpu_busy_usec = 9'000'000'000'000ull;
  s.host.cpu_tasks = {{"job-7.r0.worker-0", 7, 1'500'000}, {"job-9.r2.w", 9, 0}};
  auto back = NodeSampleFromJson(ToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->host.cpu_energy_mj, 123'456'789'012ull);
  EXPECT_EQ(back->host.cpu_busy_usec, 9'000'000'000'000ull);
  ASSERT_EQ(back->host.cpu_tasks.size(), 2u);
  EXPECT_EQ(back->host.cpu_tasks[0].id, "job-7.r0.worker-0");
  EXPECT_EQ(back->host.cpu_tasks[0].job_id, 7);
  EXPECT_EQ(back->host.cpu_tasks[0].usage_usec, 1'500'000u);
  EXPECT_EQ(back->host.cpu_tasks[1].usage_usec, 0u);

  // An older agent (or a node without RAPL) sends none of them.
  Json old = ToJson(MakeSample());
  EXPECT_FALSE(old["host"].contains("cpu_energy_mj"));
  EXPECT_FALSE(old["host"].contains("cpu_tasks"));
  back = NodeSampleFromJson(old);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->host.cpu_energy_mj.has_value());
  EXPECT_FALSE(back->host.cpu_busy_usec.has_value());
  EXPECT_TRUE(back->host.cpu_tasks.empty());
}

// The executable (what enforcement's exemptions match) travels with the process; an
// older agent sends none and is still accepted (the process's exe is then unknown).
TEST(CodecTest, GpuProcessExeRoundTripsAndOlderAgentsWithoutItAreAccepted) {
  NodeSample s = MakeSample();
  s.gpus[0].processes[0].command = "Xorg train.py";  // argv[0] as the process set it
  s.gpus[0].processes[0].exe = "/usr/bin/python3.11";
  Json j = ToJson(s);
  EXPECT_EQ(j["gpus"][0]["processes"][0]["exe"], "/usr/bin/python3.11");
  auto back = NodeSampleFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->gpus[0].processes[0].exe, "/usr/bin/python3.11");

  Json old = ToJson(MakeSample());
  EXPECT_FALSE(old["gpus"][0]["processes"][0].contains("exe"));
  back = NodeSampleFromJson(old);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->gpus[0].processes[0].exe, "");
  old["gpus"][0]["processes"][0]["exe"] = 7;
  EXPECT_FALSE(NodeSampleFromJson(old).ok());
}

TEST(CodecTest, NodeInfoCarriesWhyCpuEnergyIsUnavailable) {
  NodeInfo n{.name = "node-a", .node_id = "id-1"};
  n.cpu_energy_status = "RAPL not available: /sys/class/powercap does not exist";
  auto back = NodeInfoFromJson(ToJson(n));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->cpu_energy_status, n.cpu_energy_status);
  Json old = ToJson(NodeInfo{.name = "node-a", .node_id = "id-1"});
  EXPECT_FALSE(old.contains("cpu_energy_status"));
  EXPECT_EQ(NodeInfoFromJson(old)->cpu_energy_status, "");
  old["cpu_energy_status"] = 5;
  EXPECT_FALSE(NodeInfoFromJson(old).ok());
}

// Bad CPU energy fields: negative, too large, wrong types, bad or repeated task ids,
// non-positive job ids, too many tasks.
TEST(CodecTest, RejectsBadCpuEnergyFieldsNamingTheField) {
  auto task = [](const std::string& id, Json job, Json usage) {
    return Json{{"id", id}, {"job_id", job}, {"usage_usec", usage}};
  };
  std::vector<std::pair<std::function<void(Json&)>, std::string>> cases = {
      {[](Json& j) { j["host"]["cpu_energy_mj"] = -1; }, "host: cpu_energy_mj must be in [0, "},
      {[](Json& j) { j["host"]["cpu_energy_mj"] = 18'446'744'073'709'551'615ull; },
       "host: cpu_energy_mj is too large"},
      {[](Json& j) { j["host"]["cpu_energy_mj"] = 1.5; }, "host: cpu_energy_mj must be an integer"},
      {[](Json& j) { j["host"]["cpu_busy_usec"] = "lots"; }, "host: cpu_busy_usec must be an integer"},
      {[](Json& j) { j["host"]["cpu_busy_usec"] = -5; }, "host: cpu_busy_usec must be in [0, "},
      {[](Json& j) { j["host"]["cpu_tasks"] = Json::object(); }, "host: cpu_tasks must be an array"},
      {[&](Json& j) { j["host"]["cpu_tasks"] = Json::array({task("job-1.w", 1, -1)}); },
       "host: cpu_tasks[0]: usage_usec must be in [0, "},
      {[&](Json& j) { j["host"]["cpu_tasks"] = Json::array({task("job-1.w", 0, 5)}); },
       "host: cpu_tasks[0]: job_id must be in [1, "},
      {[&](Json& j) { j["host"]["cpu_tasks"] = Json::array({task("job-1.w", 2, 5)}); },
       "host: cpu_tasks[0]: job_id 2 is not the job of task job-1.w"},
      {[&](Json& j) { j["host"]["cpu_tasks"] = Json::array({task("job-1.w", 1, 5), task("../x", 1, 5)}); },
       "host: cpu_tasks[1]: id: '../x' must match"},
      {[&](Json& j) { j["host"]["cpu_tasks"] = Json::array({task("", 1, 5)}); }, "host: cpu_tasks[0]: id: '' must match"},
      {[&](Json& j) { j["host"]["cpu_tasks"] = Json::array({task(std::string(129, 'a'), 1, 5)}); },
       "host: cpu_tasks[0]: id is longer than 128 bytes"},
      {[&](Json& j) { j["host"]["cpu_tasks"] = Json::array({Json{{"id", "job-1.w"}, {"job_id", 1}}}); },
       "host: cpu_tasks[0]: usage_usec is required"},
      {[&](Json& j) { j["host"]["cpu_tasks"] = Json::array({task("job-1.w", 1, 5), task("job-1.w", 1, 6)}); },
       "host: cpu_tasks[1]: task job-1.w is listed twice"},
      {[&](Json& j) {
         j["host"]["cpu_tasks"] = Json::array();
         for (size_t i = 0; i <= kMaxCpuTasks; ++i) {
           j["host"]["cpu_tasks"].push_back(task("job-1.t" + std::to_string(i), 1, 5));
         }
       },
       "host: cpu_tasks has more than 4096 elements"},
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

// Bad input tried: 100,000 nested arrays in a field (it crashed the server:
// copying the value recursed once per level).
TEST(CodecTest, ParseJsonRefusesDeepNesting) {
  const std::string ok = R"({"a":)" + std::string(kMaxJsonDepth - 1, '[') + std::string(kMaxJsonDepth - 1, ']') + "}";
  EXPECT_TRUE(ParseJson(ok).ok());
  EXPECT_TRUE(ParseStrictJson(ok).ok());
  // Brackets inside strings (escaped quotes too) are text.
  EXPECT_TRUE(ParseJson(R"({"a":"\")" + std::string(100, '[') + R"("})").ok());
  const std::string deep = R"({"a":)" + std::string(100'000, '[') + std::string(100'000, ']') + "}";
  for (const auto& r : {ParseJson(deep), ParseStrictJson(deep)}) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "malformed JSON: nested deeper than 64 levels");
  }
}

TEST(CodecTest, ParseStrictJsonRefusesAKeyNamedTwiceInOneObject) {
  for (const char* bad : {R"({"gpus":1,"gpus":2})", R"({"a":{"b":1,"c":[{"d":1,"d":1}]}})",
                          R"([{"x":1},{"y":{"z":1,"z":2}}])"}) {
    auto r = ParseStrictJson(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("appears twice in one object"), std::string::npos) << bad;
  }
  EXPECT_EQ(ParseStrictJson(R"({"gpus":1,"gpus":2})").status().message(),
            R"(key "gpus" appears twice in one object)");
  // The same key in sibling or nested objects is not a duplicate.
  auto ok = ParseStrictJson(R"({"a":{"n":1},"b":{"n":2},"n":[{"n":3},{"n":4}]})");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)["n"][1]["n"], 4);
  // Malformed text reads as ParseJson says.
  auto junk = ParseStrictJson("{\"a\":");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find("malformed JSON"), std::string::npos);
}

}  // namespace
}  // namespace rota::api
