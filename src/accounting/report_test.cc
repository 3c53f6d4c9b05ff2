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

}  // namespace
}  // namespace rota::accounting
