#include "cli/format.h"

#include <gtest/gtest.h>

#include "cli/commands.h"

namespace rota::cli {
namespace {

TEST(FormatTest, TablePadsColumns) {
  Table t({"A", "LONGER"});
  t.Add({"xyz", "1"});
  EXPECT_EQ(t.Render(), "A    LONGER\nxyz  1\n");
}

TEST(FormatTest, MetricsKeepSixSignificantDigits) {
  EXPECT_EQ(FormatMetric(0.25), "0.25");
  EXPECT_EQ(FormatMetric(1234567.0), "1.23457e+06");
  EXPECT_EQ(FormatMetric(-3), "-3");
  EXPECT_EQ(FormatMetric(1.0 / 3), "0.333333");
}

TEST(FormatTest, UnitsAndAbsentValues) {
  EXPECT_EQ(Bytes(api::Json(80ull << 30)), "80.0GiB");
  EXPECT_EQ(Bytes(api::Json(512)), "512B");
  EXPECT_EQ(Bytes(api::Json()), "-");
  EXPECT_EQ(Percent(api::Json(87)), "87%");
  EXPECT_EQ(WithUnit(api::Json(250000), "W", 0.001), "250W");
  EXPECT_EQ(Age(api::Json("2026-01-01T00:00:00Z"), 1767225600000 + 5000), "5s ago");
  EXPECT_EQ(Age(api::Json(), 0), "never");
}

TEST(FormatTest, GpuTableShowsUsersAndProcesses) {
  api::Json gpus = api::Json::parse(R"([{"node":"n1","index":2,"name":"Sim A100","state":"ok",
    "util_gpu_pct":90,"memory_used_bytes":1073741824,"memory_total_bytes":85899345920,
    "users":["alice"],"processes":[{"pid":42,"command":"python train.py"}]}])");
  std::string out = RenderGpuTable(gpus, true);
  EXPECT_NE(out.find("alice"), std::string::npos);
  EXPECT_NE(out.find("42 python train.py"), std::string::npos);
  EXPECT_NE(out.find("90%"), std::string::npos);
}

}  // namespace
}  // namespace rota::cli
