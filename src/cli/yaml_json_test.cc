#include "cli/yaml_json.h"

#include <gtest/gtest.h>

namespace rota::cli {
namespace {

using api::Json;

TEST(YamlJsonTest, ConvertsMapsSequencesAndPlainScalars) {
  auto j = YamlToJson(YAML::Load("a: 1\nb: [true, '2', ~, 1.5]\nc: {d: x}\n"), YamlNumbers::kIntegers);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(*j, Json::parse(R"({"a":1,"b":[true,"2",null,"1.5"],"c":{"d":"x"}})"));
  auto all = YamlToJson(YAML::Load("[1.5, -2, 1e3, '7']"), YamlNumbers::kAll);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, Json::parse(R"([1.5,-2,1000.0,"7"])"));
}

// Bad input tried: "billion laughs" (nine levels of aliases, each naming the
// one before nine times: 10^9 values from a few hundred bytes), and nesting
// deeper than JSON text may.
TEST(YamlJsonTest, RefusesHugeExpansionsAndDeepNesting) {
  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 9; ++k) laughs += ", " + prev;
    laughs += "]\n";
  }
  auto j = YamlToJson(YAML::Load(laughs), YamlNumbers::kIntegers);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message(), "more than 100000 values (aliases expanded)");
  std::string deep = "v: " + std::string(100, '[') + std::string(100, ']');
  auto d = YamlToJson(YAML::Load(deep), YamlNumbers::kAll);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), "nested deeper than 64 levels");
}

}  // namespace
}  // namespace rota::cli
