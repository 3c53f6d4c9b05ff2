#include "accounting/cpu_energy.h"

#include <gtest/gtest.h>

namespace rota::accounting {
namespace {

TEST(CpuEnergyTest, ProRataByCpuTimeRestToOther) {
  auto s = AttributeCpuEnergy(1'000, 1'000'000, {{"job-1/0", 500'000}, {"job-2/0", 250'000}});
  EXPECT_EQ(s.tasks_mj.at("job-1/0"), 500u);
  EXPECT_EQ(s.tasks_mj.at("job-2/0"), 250u);
  EXPECT_EQ(s.other_mj, 250u);
}

TEST(CpuEnergyTest, RoundingRemainderGoesToOther) {
  auto s = AttributeCpuEnergy(10, 3, {{"a", 1}, {"b", 1}, {"c", 1}});
  EXPECT_EQ(s.tasks_mj.at("a"), 3u);
  EXPECT_EQ(s.tasks_mj.at("b"), 3u);
  EXPECT_EQ(s.tasks_mj.at("c"), 3u);
  EXPECT_EQ(s.other_mj, 1u);
}

TEST(CpuEnergyTest, TasksAboveBusyTimeNeverGetMoreThanTheEnergy) {
  auto s = AttributeCpuEnergy(1'000, 100, {{"a", 150}, {"b", 50}});
  EXPECT_EQ(s.tasks_mj.at("a"), 750u);
  EXPECT_EQ(s.tasks_mj.at("b"), 250u);
  EXPECT_EQ(s.other_mj, 0u);
}

TEST(CpuEnergyTest, ZeroTotals) {
  auto none = AttributeCpuEnergy(0, 1'000, {{"a", 500}});
  EXPECT_EQ(none.tasks_mj.at("a"), 0u);
  EXPECT_EQ(none.other_mj, 0u);

  auto idle = AttributeCpuEnergy(400, 0, {{"a", 0}});
  EXPECT_EQ(idle.tasks_mj.at("a"), 0u);
  EXPECT_EQ(idle.other_mj, 400u);

  auto no_tasks = AttributeCpuEnergy(400, 1'000, {});
  EXPECT_TRUE(no_tasks.tasks_mj.empty());
  EXPECT_EQ(no_tasks.other_mj, 400u);
}

TEST(CpuEnergyTest, LargeValuesDoNotOverflow) {
  const uint64_t e = 4'000'000'000'000;     // 4 GJ
  const uint64_t busy = 9'000'000'000'000;  // 104 CPU-days
  auto s = AttributeCpuEnergy(e, busy, {{"a", busy / 3}, {"b", busy / 3}});
  EXPECT_EQ(s.tasks_mj.at("a"), 1'333'333'333'333u);
  EXPECT_EQ(s.tasks_mj.at("b"), 1'333'333'333'333u);
  EXPECT_EQ(s.other_mj, e - 2 * 1'333'333'333'333u);
}

}  // namespace
}  // namespace rota::accounting
