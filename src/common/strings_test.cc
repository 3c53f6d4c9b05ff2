#include "common/strings.h"

#include <gtest/gtest.h>

#include "common/gpu_model.h"

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

TEST(StringsTest, ToLowerChangesOnlyAsciiLetters) {
  EXPECT_EQ(ToLower("Content-Type: X-Ä 80GB"), "content-type: x-Ä 80gb");
  EXPECT_EQ(ToLower(""), "");
}

TEST(GpuModelTest, AGpusModelIsItsOwnElseTheNodesAndAskedAsAPart) {
  const std::vector<std::string> mixed = {"NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce GTX 1080 Ti"};
  const std::string node = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(ModelOfGpu(mixed, node, 1), "NVIDIA GeForce GTX 1080 Ti");
  EXPECT_EQ(ModelOfGpu({}, node, 1), node);
  EXPECT_TRUE(ModelWanted(ModelOfGpu(mixed, node, 1), "gtx 1080"));
  EXPECT_FALSE(ModelWanted(ModelOfGpu(mixed, node, 0), "1080"));
  EXPECT_TRUE(ModelWanted(node, ""));  // naming none: any model
  EXPECT_FALSE(ModelWanted("", "h100"));  // an unknown model is not the one asked
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
