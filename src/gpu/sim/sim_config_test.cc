#include "gpu/sim/sim_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

namespace rota::gpu::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(SimConfigTest, ParsesFullConfig) {
  Config c;
  std::string error;
  ASSERT_TRUE(ParseConfig(R"({"node":"sim-a","default_node":true,
      "gpus":[{"model":"NVIDIA H100 80GB HBM3","memory_mib":81559,"power_limit_w":700,
               "idle_power_w":70,"max_sm_clock_mhz":1980,"max_mem_clock_mhz":2619},
              {}],
      "faults":{"1":"gpu_lost","0:fan":"not_supported","0:energy":"error"}})",
                          &c, &error))
      << error;
  EXPECT_EQ(c.node, "sim-a");
  EXPECT_TRUE(c.default_node);
  ASSERT_EQ(c.gpus.size(), 2u);
  EXPECT_EQ(c.gpus[0].model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c.gpus[0].memory_mib, 81559u);
  EXPECT_EQ(c.gpus[0].power_limit_w, 700u);
  EXPECT_EQ(c.gpus[0].idle_power_w, 70u);
  EXPECT_EQ(c.gpus[0].max_sm_clock_mhz, 1980u);
  EXPECT_EQ(c.gpus[0].max_mem_clock_mhz, 2619u);
  EXPECT_FALSE(c.gpus[0].lost);
  EXPECT_EQ(c.gpus[0].faults[static_cast<size_t>(Field::kFan)], FieldFault::kNotSupported);
  EXPECT_EQ(c.gpus[0].faults[static_cast<size_t>(Field::kEnergy)], FieldFault::kError);
  EXPECT_EQ(c.gpus[0].faults[static_cast<size_t>(Field::kPower)], FieldFault::kNone);
  // Defaults.
  EXPECT_EQ(c.gpus[1].model, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(c.gpus[1].memory_mib, 81920u);
  EXPECT_EQ(c.gpus[1].power_limit_w, 400u);
  EXPECT_EQ(c.gpus[1].idle_power_w, 60u);
  EXPECT_TRUE(c.gpus[1].lost);
  EXPECT_EQ(c.gpus[1].bus_id, "00000000:02:00.0");
  EXPECT_EQ(c.gpus[1].uuid, MakeUuid("sim-a", 1));
}

TEST(SimConfigTest, DefaultNodeIsFalseAndZeroGpusAllowed) {
  Config c;
  std::string error;
  ASSERT_TRUE(ParseConfig(R"({"node":"n1","gpus":[]})", &c, &error)) << error;
  EXPECT_FALSE(c.default_node);
  EXPECT_EQ(c.tasks_under, "");
  EXPECT_THAT(c.gpus, IsEmpty());
  ASSERT_TRUE(ParseConfig(R"({"node":"n1","tasks_under":"/var/lib/rota//","gpus":[]})", &c, &error)) << error;
  EXPECT_EQ(c.tasks_under, "/var/lib/rota");
}

TEST(SimConfigTest, UuidIsWellFormedStableAndDistinct) {
  const std::regex form("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  EXPECT_TRUE(std::regex_match(MakeUuid("sim-a", 0), form)) << MakeUuid("sim-a", 0);
  EXPECT_EQ(MakeUuid("sim-a", 3), MakeUuid("sim-a", 3));
  EXPECT_NE(MakeUuid("sim-a", 0), MakeUuid("sim-a", 1));
  EXPECT_NE(MakeUuid("sim-a", 0), MakeUuid("sim-b", 0));
  EXPECT_EQ(MakeBusId(0), "00000000:01:00.0");
  EXPECT_EQ(MakeBusId(15), "00000000:10:00.0");
}

// Each bad input and a fragment the error message must contain.
TEST(SimConfigTest, RejectsBadInputsNamingTheField) {
  const std::string kGpu = R"("gpus":[{}])";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not valid JSON"},
      {"{\"node\":", "not valid JSON"},
      {"[]", "top level"},
      {R"({"node":"a",)" + kGpu + R"(,"colour":1})", "colour: unknown key"},
      {"{" + kGpu + "}", "node: required"},
      {R"({"node":"",)" + kGpu + "}", "node:"},
      {R"({"node":"-a",)" + kGpu + "}", "node:"},
      {R"({"node":"a b",)" + kGpu + "}", "node:"},
      {R"({"node":")" + std::string(64, 'a') + R"(",)" + kGpu + "}", "node:"},
      {R"({"node":7,)" + kGpu + "}", "node:"},
      {R"({"node":"a","default_node":"yes",)" + kGpu + "}", "default_node"},
      {R"({"node":"a","tasks_under":"rel/dir",)" + kGpu + "}", "tasks_under: must be an absolute"},
      {R"({"node":"a","tasks_under":"",)" + kGpu + "}", "tasks_under: must be an absolute"},
      {R"({"node":"a","tasks_under":1,)" + kGpu + "}", "tasks_under: must be an absolute"},
      {R"({"node":"a"})", "gpus: required"},
      {R"({"node":"a","gpus":{}})", "gpus: required"},
      {R"({"node":"a","gpus":[)" + std::string(64 * 3, ' ') + "{}" +
           [] {
             std::string s;
             for (int i = 0; i < 64; ++i) s += ",{}";
             return s;
           }() +
           "]}",
       "at most 64"},
      {R"({"node":"a","gpus":[7]})", "gpus[0]: must be an object"},
      {R"({"node":"a","gpus":[{},{"mem":1}]})", "gpus[1].mem: unknown key"},
      {R"({"node":"a","gpus":[{"memory_mib":0}]})", "gpus[0].memory_mib"},
      {R"({"node":"a","gpus":[{"memory_mib":-5}]})", "gpus[0].memory_mib"},
      {R"({"node":"a","gpus":[{"memory_mib":1.5}]})", "gpus[0].memory_mib"},
      {R"({"node":"a","gpus":[{"memory_mib":"80G"}]})", "gpus[0].memory_mib"},
      {R"({"node":"a","gpus":[{"power_limit_w":0}]})", "gpus[0].power_limit_w"},
      {R"({"node":"a","gpus":[{"power_limit_w":300,"idle_power_w":301}]})", "gpus[0].idle_power_w"},
      {R"({"node":"a","gpus":[{"max_sm_clock_mhz":0}]})", "gpus[0].max_sm_clock_mhz"},
      {R"({"node":"a","gpus":[{"model":""}]})", "gpus[0].model"},
      {R"({"node":"a","gpus":[{"model":3}]})", "gpus[0].model"},
      {R"({"node":"a",)" + kGpu + R"(,"faults":[]})", "faults: must be an object"},
      {R"({"node":"a",)" + kGpu + R"(,"faults":{"0":1}})", "faults[\"0\"]: must be a string"},
      {R"({"node":"a",)" + kGpu + R"(,"faults":{"1":"gpu_lost"}})", "index < 1"},
      {R"({"node":"a",)" + kGpu + R"(,"faults":{"x":"gpu_lost"}})", "faults[\"x\"]"},
      {R"({"node":"a",)" + kGpu + R"(,"faults":{"-1":"gpu_lost"}})", "faults[\"-1\"]"},
      {R"({"node":"a",)" + kGpu + R"(,"faults":{"0":"not_supported"}})", "gpu_lost"},
      {R"({"node":"a",)" + kGpu + R"(,"faults":{"0:fans":"not_supported"}})",
       "unknown field \"fans\""},
      {R"({"node":"a",)" + kGpu + R"(,"faults":{"0:fan":"gpu_lost"}})",
       "\"not_supported\" or \"error\""},
  };
  for (const auto& [text, want] : cases) {
    Config c;
    std::string error;
    EXPECT_FALSE(ParseConfig(text, &c, &error)) << text;
    EXPECT_THAT(error, HasSubstr(want)) << text;
  }
}

class ResolveVisibleDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(ParseConfig(R"({"node":"vis","gpus":[{},{},{},{}]})", &config_, &error));
  }
  std::vector<unsigned> Resolve(const std::string& value) {
    std::vector<unsigned> out = {99};  // must be cleared
    ResolveVisibleDevices(value, config_, &out);
    return out;
  }
  Config config_;
};

TEST_F(ResolveVisibleDevicesTest, Indices) {
  EXPECT_THAT(Resolve("1"), ElementsAre(1u));
  EXPECT_THAT(Resolve("2,0"), ElementsAre(2u, 0u));
  EXPECT_THAT(Resolve(" 1 , 3 "), ElementsAre(1u, 3u));
  EXPECT_THAT(Resolve("1,1"), ElementsAre(1u));
}

TEST_F(ResolveVisibleDevicesTest, Uuids) {
  const std::string u2 = config_.gpus[2].uuid;
  EXPECT_THAT(Resolve(u2), ElementsAre(2u));
  EXPECT_THAT(Resolve("0," + u2), ElementsAre(0u, 2u));
  std::string upper = u2;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_THAT(Resolve(upper), ElementsAre(2u));
  // A prefix that matches one GPU selects it (as in CUDA).
  size_t len = 5;
  auto unique = [&](size_t n) {
    int m = 0;
    for (const auto& g : config_.gpus) m += g.uuid.compare(0, n, u2, 0, n) == 0;
    return m == 1;
  };
  while (!unique(len)) ++len;
  EXPECT_THAT(Resolve(u2.substr(0, len)), ElementsAre(2u));
}

// Bad inputs tried: empty value, out-of-range index, negative index, junk word, MIG id,
// bare "GPU-", unknown UUID, empty entry in the middle. Like CUDA, parsing stops there.
TEST_F(ResolveVisibleDevicesTest, StopsAtFirstInvalidEntry) {
  EXPECT_THAT(Resolve(""), IsEmpty());
  EXPECT_THAT(Resolve("0,4,1"), ElementsAre(0u));
  EXPECT_THAT(Resolve("-1,0"), IsEmpty());
  EXPECT_THAT(Resolve("2,abc,1"), ElementsAre(2u));
  EXPECT_THAT(Resolve("MIG-1234,0"), IsEmpty());
  EXPECT_THAT(Resolve("GPU-,0"), IsEmpty());
  EXPECT_THAT(Resolve("1,GPU-00000000-0000-0000-0000-000000000000,2"), ElementsAre(1u));
  EXPECT_THAT(Resolve("1,,2"), ElementsAre(1u));
  EXPECT_THAT(Resolve("01,9999999999,2"), ElementsAre(1u));
}

}  // namespace
}  // namespace rota::gpu::sim
