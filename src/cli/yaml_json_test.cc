#include "cli/yaml_json.h"

#include <gtest/gtest.h>

#include "common/strings.h"

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

// Regression (found by fuzz/config_fuzz, issue 41): a job or policy file holding a byte that
// is not UTF-8 (a "café" saved as Latin-1) became a JSON string that dump() throws on, so
// `rota run -f` and `rota policy create -f` aborted (std::terminate) instead of saying what
// is wrong with the file. Keys and values, plain and quoted, in both number modes.
TEST(YamlJsonTest, NonUtf8TextAbortedTheCli) {
  for (const char* yaml : {"name: caf\xe9\n", "name: ok\ncaf\xe9: 1\n", "- x\n- 'caf\xe9'\n",
                           "env: {A: \"\xff\"}\n"}) {
    for (YamlNumbers numbers : {YamlNumbers::kIntegers, YamlNumbers::kAll}) {
      auto j = YamlToJson(YAML::Load(yaml), numbers);
      ASSERT_FALSE(j.ok()) << yaml;
      EXPECT_NE(j.status().message().find("is not UTF-8 (save the file as UTF-8)"), std::string::npos)
          << j.status().message();
      EXPECT_TRUE(IsValidUtf8(j.status().message())) << j.status().message();
    }
  }
  auto second = YamlToJson(YAML::Load("name: ok\ncaf\xe9: 1\n"), YamlNumbers::kAll);
  EXPECT_EQ(second.status().message(), "line 2: 'caf\\xe9' is not UTF-8 (save the file as UTF-8)");
  auto fine = YamlToJson(YAML::Load("name: caf\xc3\xa9 \xe2\x82\xac\n"), YamlNumbers::kIntegers);
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ(fine->dump(), "{\"name\":\"caf\xc3\xa9 \xe2\x82\xac\"}");
}

}  // namespace
}  // namespace rota::cli
