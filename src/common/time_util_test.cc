#include "common/time_util.h"

#include <gtest/gtest.h>

namespace rota {
namespace {

TEST(TimeUtilTest, FloorDivRoundsTowardMinusInfinity) {
  EXPECT_EQ(FloorDiv(7, 2), 3);
  EXPECT_EQ(FloorDiv(-7, 2), -4);
  EXPECT_EQ(FloorDiv(-8, 2), -4);
  EXPECT_EQ(FloorDiv(7, -2), -4);
  EXPECT_EQ(FloorDiv(-1, 86400000), -1);  // the day before 1970-01-01
  EXPECT_EQ(FloorDiv(0, 86400000), 0);
}

TEST(TimeUtilTest, FormatsUtc) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339Ms(1'700'000'000'123), "2023-11-14T22:13:20.123Z");
}

TEST(TimeUtilTest, ParsesZuluOffsetsAndFractions) {
  EXPECT_EQ(*ParseRfc3339("2023-11-14T22:13:20Z"), 1'700'000'000'000);
  EXPECT_EQ(*ParseRfc3339("2023-11-14T22:13:20.123Z"), 1'700'000'000'123);
  EXPECT_EQ(*ParseRfc3339("2023-11-15T00:13:20+02:00"), 1'700'000'000'000);
  EXPECT_EQ(*ParseRfc3339("2024-02-29T00:00:00Z"), *ParseRfc3339("2024-02-28T00:00:00Z") + 86'400'000);
}

TEST(TimeUtilTest, RoundTrips) {
  for (int64_t t : {0LL, 951'782'400'000LL, 1'700'000'000'999LL, 253'402'300'799'000LL}) {
    EXPECT_EQ(*ParseRfc3339(FormatRfc3339Ms(t)), t) << t;
  }
}

TEST(TimeUtilTest, RejectsMalformedTimes) {
  for (const char* bad : {"", "yesterday", "2023-11-14", "2023-13-01T00:00:00Z",
                          "2023-02-30T00:00:00Z", "2023-11-14T25:00:00Z", "2023-11-14T22:13:20",
                          "2023-11-14T22:13:20Zjunk", "2023-11-14T22:13:20.Z", "1969-12-31T00:00:00Z",
                          "2023-11-14T22:13:20+2:00"}) {
    EXPECT_FALSE(ParseRfc3339(bad).ok()) << bad;
  }
}

TEST(TimeUtilTest, ParsesDurations) {
  EXPECT_EQ(*ParseDurationMs("500ms"), 500);
  EXPECT_EQ(*ParseDurationMs("2s"), 2000);
  EXPECT_EQ(*ParseDurationMs("2"), 2000);
  EXPECT_EQ(*ParseDurationMs("1.5m"), 90'000);
  EXPECT_EQ(*ParseDurationMs("24h"), 86'400'000);
  EXPECT_EQ(*ParseDurationMs("30d"), 2'592'000'000);
  // Parts added up, as FormatDurationMs ("1h 30m") and people ("1h30m") write them.
  EXPECT_EQ(*ParseDurationMs("1h30m"), 5'400'000);
  EXPECT_EQ(*ParseDurationMs("1h 30m"), 5'400'000);
  EXPECT_EQ(*ParseDurationMs("1d 1h"), 90'000'000);
  EXPECT_EQ(*ParseDurationMs("1m30s"), 90'000);
  EXPECT_EQ(*ParseDurationMs("1s500ms"), 1500);
  for (const char* bad : {"", "-1s", "abc", "2x", "nan", "1e300s", "inf", "1h30", "1h  30m", "1h -30m",
                          " 1h", "1h ", "1h,30m", "h"}) {
    EXPECT_FALSE(ParseDurationMs(bad).ok()) << bad;
  }
}

TEST(TimeUtilTest, ExactDurationsReadBack) {
  EXPECT_EQ(FormatExactDuration(5'400'000), "90m");
  EXPECT_EQ(FormatExactDuration(90'000'000), "25h");
  EXPECT_EQ(FormatExactDuration(172'800'000), "2d");
  EXPECT_EQ(FormatExactDuration(1500), "1500ms");
  EXPECT_EQ(FormatExactDuration(0), "0s");
  for (int64_t ms : {int64_t{1}, int64_t{999}, int64_t{90'000}, int64_t{5'400'000}, int64_t{90'061'001},
                     int64_t{86'400'000} * 400}) {
    EXPECT_EQ(*ParseDurationMs(FormatExactDuration(ms)), ms) << ms;
  }
}

}  // namespace
}  // namespace rota
