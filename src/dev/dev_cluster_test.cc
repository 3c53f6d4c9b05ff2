#include "dev/dev_cluster.h"

#include <gtest/gtest.h>

#include <set>

namespace rota::dev {
namespace {

TEST(DevNodesTest, DefaultThenEightGpuNodesWithUniqueNames) {
  auto three = DevNodes(3);
  ASSERT_TRUE(three.ok());
  ASSERT_EQ(three->size(), 3u);
  EXPECT_EQ((*three)[0].name, "gpu-a");
  EXPECT_EQ((*three)[2].gpus, 2);

  auto one = DevNodes(1);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_TRUE((*one)[0].default_node);

  auto hundred = DevNodes(100);
  ASSERT_TRUE(hundred.ok());
  ASSERT_EQ(hundred->size(), 100u);
  EXPECT_EQ((*hundred)[3].name, "gpu-004");
  EXPECT_EQ((*hundred)[99].name, "gpu-100");
  std::set<std::string> names;
  int gpus = 0, defaults = 0;
  for (const auto& n : *hundred) {
    names.insert(n.name);
    gpus += n.gpus;
    defaults += n.default_node;
  }
  EXPECT_EQ(names.size(), 100u);
  EXPECT_EQ(gpus, 8 + 4 + 2 + 97 * 8);
  EXPECT_EQ(defaults, 1);  // only one node claims hand-started processes
}

TEST(DevNodesTest, RefusesCountsOutOfRange) {
  for (int bad : {0, -1, kMaxDevNodes + 1}) {
    auto r = DevNodes(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--nodes"), std::string::npos);
  }
}

}  // namespace
}  // namespace rota::dev
