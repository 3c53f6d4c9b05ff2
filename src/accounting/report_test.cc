#include "accounting/report.h"

#include <gtest/gtest.h>

namespace rota::accounting {
namespace {

constexpr double kMjPerKwh = 3'600'000'000;

TEST(ReportTest, CpuEnergyIsShownApartAndCostAndCo2CountGpuPlusCpu) {
  ReportLine line;
  line.key = "alice";
  line.amounts.gpu_ms = 3'600'000;             // 1 GPU-hour
  line.amounts.energy_mj = 2 * kMjPerKwh;      // 2 kWh on the GPUs
  line.amounts.counter_mj = 2 * kMjPerKwh;
  line.amounts.cpu_mj = 0.5 * kMjPerKwh;       // 0.5 kWh on the CPUs
  Prices prices;
  prices.price_per_kwh = 0.2;
  prices.price_per_gpu_hour = 1;
  prices.co2_g_per_kwh = 400;
  api::Json j = FiguresJson(line, prices);
  EXPECT_DOUBLE_EQ(j["energy_kwh"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(j["cpu_energy_kwh"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["total_energy_kwh"].get<double>(), 2.5);
  EXPECT_EQ(j["energy_method"], "counter");  // of the GPU energy
  EXPECT_DOUBLE_EQ(j["cost"].get<double>(), 2.5 * 0.2 + 1);
  EXPECT_DOUBLE_EQ(j["co2_kg"].get<double>(), 1.0);

  api::Json report = ReportJson("user", 0, 3'600'000, {line, line}, {});
  EXPECT_DOUBLE_EQ(report["total"]["cpu_energy_kwh"].get<double>(), 1);
  EXPECT_FALSE(report["total"].contains("cost"));
}

TEST(ReportTest, CpuEnergyAddsUpByArea) {
  ReportLine a{"n1", {}, 0, 0}, b{"n2", {}, 0, 0};
  a.amounts.cpu_mj = 100;
  b.amounts.cpu_mj = 50;
  auto areas = ByArea({a, b}, {{"n1", "r1"}, {"n2", "r1"}});
  ASSERT_EQ(areas.size(), 1u);
  EXPECT_DOUBLE_EQ(areas[0].amounts.cpu_mj, 150);
}

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kMin = 60'000;

// `rota usage --from 10m`: a window inside one hour bucket counts the bucket's share.
TEST(ReportTest, BucketShareCountsPartialHoursProRata) {
  // The current bucket, 45 minutes old: a 10-minute window takes 10/45 of it.
  EXPECT_DOUBLE_EQ(BucketShare(0, kHour, 35 * kMin, 45 * kMin, 45 * kMin), 10.0 / 45);
  // A window reaching past now takes only what has passed.
  EXPECT_DOUBLE_EQ(BucketShare(0, kHour, 35 * kMin, 50 * kMin, 45 * kMin), 10.0 / 45);
  // A bucket that has ended: 10 of its 60 minutes.
  EXPECT_DOUBLE_EQ(BucketShare(0, kHour, 20 * kMin, 30 * kMin, 5 * kHour), 1.0 / 6);
  // The window covers it, or starts before it and ends inside it.
  EXPECT_DOUBLE_EQ(BucketShare(kHour, kHour, 0, 3 * kHour, 5 * kHour), 1);
  EXPECT_DOUBLE_EQ(BucketShare(kHour, kHour, 0, kHour + 15 * kMin, 5 * kHour), 0.25);
  // Outside: before, after, or in the part of the bucket still to come.
  EXPECT_DOUBLE_EQ(BucketShare(kHour, kHour, 0, kHour, 5 * kHour), 0);
  EXPECT_DOUBLE_EQ(BucketShare(0, kHour, kHour, 2 * kHour, 5 * kHour), 0);
  EXPECT_DOUBLE_EQ(BucketShare(0, kHour, 50 * kMin, 55 * kMin, 45 * kMin), 0);
  Amounts a;
  a.gpu_ms = 600;
  a.energy_mj = 90;
  a.cpu_mj = 30;
  const Amounts half = Scaled(a, 0.5);
  EXPECT_DOUBLE_EQ(half.gpu_ms, 300);
  EXPECT_DOUBLE_EQ(half.energy_mj, 45);
  EXPECT_DOUBLE_EQ(half.cpu_mj, 15);
}

// `rota energy --by node` showed 0.0 W for a node that drew 60 W: the average is over
// the time the node was measured (its GPU time / its GPUs), not the 30-day window.
TEST(ReportTest, NodePowerIsAveragedOverTheTimeTheNodeWasMeasured) {
  ReportLine node;
  node.key = "gpu-a";
  node.gpus = 2;
  node.amounts.gpu_ms = 2 * 10.0 * kMin;   // both GPUs, 10 minutes
  node.amounts.energy_mj = 50.0 * 600 * 1000;  // 50 W for 600 s
  node.amounts.cpu_mj = 10.0 * 600 * 1000;     // and 10 W of CPU
  api::Json j = FiguresJson(node, {});
  ASSERT_TRUE(j.contains("avg_power_w")) << j.dump();
  EXPECT_NEAR(j["avg_power_w"].get<double>(), 60, 1e-9);
  EXPECT_NEAR(j["measured_hours"].get<double>(), 10.0 / 60, 1e-6);

  ReportLine other = node;
  other.key = "gpu-b";
  other.amounts.energy_mj /= 2;
  other.amounts.cpu_mj = 0;
  api::Json r = ReportJson("node", 0, 30LL * 24 * kHour, {node, other}, {});
  EXPECT_NEAR(r["rows"][1]["avg_power_w"].get<double>(), 25, 1e-9);
  EXPECT_NEAR(r["total"]["avg_power_w"].get<double>(), 85, 1e-9);  // the nodes together

  auto areas = ByArea({node, other}, {{"gpu-a", "r1"}, {"gpu-b", "r1"}});
  ASSERT_EQ(areas.size(), 1u);
  EXPECT_NEAR(*AveragePowerW(areas[0]), 85, 1e-9);

  // A user's row has no node to be measured: no average power of its own.
  ReportLine user = node;
  user.gpus = 0;
  EXPECT_FALSE(FiguresJson(user, {}).contains("avg_power_w"));
  EXPECT_FALSE(ReportJson("user", 0, kHour, {user}, {})["total"].contains("avg_power_w"));
  // A node that was not measured in the window (no GPU time) has none either.
  ReportLine idle;
  idle.gpus = 4;
  EXPECT_FALSE(AveragePowerW(idle).has_value());
}

}  // namespace
}  // namespace rota::accounting
