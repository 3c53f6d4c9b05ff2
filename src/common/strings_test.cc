#include "common/strings.h"

#include <gtest/gtest.h>

namespace rota {
namespace {

TEST(StringsTest, SplitKeepsOrSkipsEmptyParts) {
  EXPECT_EQ(Split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(Split("a,,b", ',', true), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Split("", ',', true).size(), 0u);
}

TEST(StringsTest, JoinTrimStartsWith) {
  EXPECT_EQ(Join({"x", "y", "z"}, ", "), "x, y, z");
  EXPECT_EQ(Trim("  a b \n"), "a b");
  EXPECT_EQ(Trim("   "), "");
  EXPECT_TRUE(StartsWith("/api/v1/nodes", "/api/"));
  EXPECT_FALSE(StartsWith("/a", "/api"));
}

TEST(StringsTest, ContainsIgnoringCase) {
  EXPECT_TRUE(ContainsIgnoringCase("NVIDIA A100-SXM4-80GB", "a100"));
  EXPECT_TRUE(ContainsIgnoringCase("Tesla V100-SXM2-32GB", "V100-sxm2"));
  EXPECT_FALSE(ContainsIgnoringCase("Tesla V100-SXM2-32GB", "A100"));
  EXPECT_FALSE(ContainsIgnoringCase("", "A100"));
  EXPECT_FALSE(ContainsIgnoringCase("T4", "Tesla T4"));
  EXPECT_TRUE(ContainsIgnoringCase("anything", ""));
}

}  // namespace
}  // namespace rota
