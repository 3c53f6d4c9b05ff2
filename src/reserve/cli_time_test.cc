#include "reserve/cli_time.h"

#include <gtest/gtest.h>

#include "common/time_util.h"
#include "reserve/reservation.h"

namespace rota::reserve {
namespace {

int64_t T(const char* rfc3339) { return *ParseRfc3339(rfc3339); }

const int64_t kNow = T("2026-11-22T10:17:42Z");  // a Sunday

TEST(CliTimeTest, ParsesForms) {
  const TimeZone utc;
  const TimeZone plus2 = *TimeZone::Load("+02:00");
  struct Case {
    const char* text;
    const TimeZone* zone;
    int64_t want;
  } cases[] = {
      {"now", &utc, kNow},
      {"+2h", &utc, kNow + 7'200'000},
      {"+30m", &utc, kNow + 1'800'000},
      {"+1h30m", &utc, kNow + 5'400'000},
      {"+1d", &utc, kNow + 86'400'000},
      {"today 14:00", &utc, T("2026-11-22T14:00:00Z")},
      {"tomorrow 09:00", &utc, T("2026-11-23T09:00:00Z")},
      {"tomorrow", &utc, T("2026-11-23T00:00:00Z")},
      {"tomorrow 09:00", &plus2, T("2026-11-23T07:00:00Z")},
      {"2026-11-23 14:00", &utc, T("2026-11-23T14:00:00Z")},
      {"2026-11-23 14:00", &plus2, T("2026-11-23T12:00:00Z")},
      {"2026-11-23T14:00:30", &plus2, T("2026-11-23T12:00:30Z")},
      {"2026-11-23", &utc, T("2026-11-23T00:00:00Z")},
      {"2026-11-23T14:00:00Z", &plus2, T("2026-11-23T14:00:00Z")},
      {"2026-11-23T14:00:00+01:00", &utc, T("2026-11-23T13:00:00Z")},
      {"  now ", &utc, kNow},
  };
  for (const auto& c : cases) {
    auto got = ParseCliTime(c.text, kNow, *c.zone);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().ToString();
    EXPECT_EQ(*got, c.want) << c.text;
  }
}

TEST(CliTimeTest, TodayUsesTheZonesDate) {
  // 23:30 UTC on the 22nd is already the 23rd in +02:00.
  const TimeZone plus2 = *TimeZone::Load("+02:00");
  EXPECT_EQ(*ParseCliTime("today 09:00", T("2026-11-22T23:30:00Z"), plus2), T("2026-11-23T07:00:00Z"));
}

TEST(CliTimeTest, RejectsMalformedTimes) {
  for (const char* bad : {"", "yesterday", "+", "+2x", "+-2h", "tomorrow 9", "tomorrow 25:00",
                          "2026-13-01 10:00", "2026-02-30", "2026-11-23 14", "2026-11-23X14:00",
                          "2026-11-23T14:00:00+2", "next week", "1700000000"}) {
    auto got = ParseCliTime(bad, kNow, TimeZone());
    EXPECT_FALSE(got.ok()) << bad;
    if (!got.ok()) {
      EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(CliTimeTest, ParsesDurations) {
  EXPECT_EQ(*ParseCliDuration("2h"), 7'200'000);
  EXPECT_EQ(*ParseCliDuration("90m"), 5'400'000);
  EXPECT_EQ(*ParseCliDuration("1h30m"), 5'400'000);
  EXPECT_EQ(*ParseCliDuration("1.5h"), 5'400'000);
  EXPECT_EQ(*ParseCliDuration("1d"), 86'400'000);
  EXPECT_EQ(*ParseCliDuration("45s"), 45'000);
  // What FormatDurationMs writes reads back.
  EXPECT_EQ(*ParseCliDuration("1d 4h"), 100'800'000);
  EXPECT_EQ(*ParseCliDuration(FormatDurationMs(5'400'000)), 5'400'000);
  for (const char* bad : {"", "0h", "h", "2", "2x", "-1h", "1e300h", "99999999999d", "1h  30m", "1h 30"}) {
    EXPECT_FALSE(ParseCliDuration(bad).ok()) << bad;
  }
}

TEST(CliTimeTest, ParsesClockTimes) {
  EXPECT_EQ(*ParseClock("00:00"), 0);
  EXPECT_EQ(*ParseClock("09:30"), 570);
  EXPECT_EQ(*ParseClock("24:00"), 1440);
  for (const char* bad : {"", "9:30", "24:01", "12:60", "ab:cd", "12:00:00"}) {
    EXPECT_FALSE(ParseClock(bad).ok()) << bad;
  }
}

TEST(CliTimeTest, FormatsLocalTime) {
  EXPECT_EQ(FormatLocal(T("2026-11-23T12:00:00Z"), *TimeZone::Load("+02:00")), "2026-11-23 14:00");
}

}  // namespace
}  // namespace rota::reserve
