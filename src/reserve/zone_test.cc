#include "reserve/zone.h"

#include <gtest/gtest.h>

#include "common/time_util.h"

namespace rota::reserve {
namespace {

int64_t S(const char* rfc3339) { return *ParseRfc3339(rfc3339) / 1000; }

TEST(CivilTest, RoundTripsAndWeekdays) {
  for (int64_t s : {0LL, 951'782'400LL, 1'700'000'000LL, -86'400LL, 4'102'444'800LL}) {
    EXPECT_EQ(SecondsFromCivil(CivilFromSeconds(s)), s) << s;
  }
  EXPECT_EQ(WeekdayOf(0), 3);                          // 1970-01-01 Thursday
  EXPECT_EQ(WeekdayOf(S("2026-11-23T10:00:00Z")), 0);  // Monday
  EXPECT_EQ(WeekdayOf(S("2026-11-29T23:59:59Z")), 6);  // Sunday
}

TEST(TimeZoneTest, UtcAndFixedOffsets) {
  EXPECT_EQ(TimeZone::Utc().OffsetAt(123), 0);
  auto z = TimeZone::Load("+05:30");
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->OffsetAt(0), 19800);
  EXPECT_EQ(z->ToUtc(19800), 0);
  EXPECT_EQ(TimeZone::Load("-02:00")->OffsetAt(0), -7200);
}

TEST(TimeZoneTest, RejectsBadNames) {
  for (const char* bad : {"", "../etc/passwd", "/etc/localtime", "+5", "+25:00", "Europe/Nowhere",
                          "a b"}) {
    EXPECT_FALSE(TimeZone::Load(bad).ok()) << bad;
  }
  EXPECT_EQ(TimeZone::Load("Europe/Nowhere").status().code(), StatusCode::kNotFound);
}

TEST(TimeZoneTest, PosixRuleFollowsEuropeanSummerTime) {
  auto z = TimeZone::FromPosix("cet", "CET-1CEST,M3.5.0,M10.5.0/3");
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  EXPECT_EQ(z->OffsetAt(S("2026-01-15T12:00:00Z")), 3600);
  EXPECT_EQ(z->OffsetAt(S("2026-07-15T12:00:00Z")), 7200);
  // 2026-03-29 01:00 UTC: clocks go from 02:00 CET to 03:00 CEST.
  EXPECT_EQ(z->OffsetAt(S("2026-03-29T00:59:59Z")), 3600);
  EXPECT_EQ(z->OffsetAt(S("2026-03-29T01:00:00Z")), 7200);
  // 2026-10-25 01:00 UTC: back from 03:00 CEST to 02:00 CET.
  EXPECT_EQ(z->OffsetAt(S("2026-10-25T00:59:59Z")), 7200);
  EXPECT_EQ(z->OffsetAt(S("2026-10-25T01:00:00Z")), 3600);
}

TEST(TimeZoneTest, PosixRuleSouthernHemisphere) {
  auto z = TimeZone::FromPosix("syd", "AEST-10AEDT,M10.1.0,M4.1.0/3");
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->OffsetAt(S("2026-01-15T00:00:00Z")), 11 * 3600);
  EXPECT_EQ(z->OffsetAt(S("2026-07-15T00:00:00Z")), 10 * 3600);
}

TEST(TimeZoneTest, ToUtcHandlesGapsAndFolds) {
  auto z = *TimeZone::FromPosix("cet", "CET-1CEST,M3.5.0,M10.5.0/3");
  const int64_t day = SecondsFromCivil(Civil{2026, 3, 29});
  // 01:30 local exists once (CET).
  EXPECT_EQ(z.ToUtc(day + 5400), S("2026-03-29T00:30:00Z"));
  // 02:30 does not exist: moved forward by the gap (03:30 CEST = 01:30 UTC).
  EXPECT_EQ(z.ToUtc(day + 9000), S("2026-03-29T01:30:00Z"));
  // 2026-10-25 02:30 happens twice: the earlier (CEST) instant.
  const int64_t fall = SecondsFromCivil(Civil{2026, 10, 25});
  EXPECT_EQ(z.ToUtc(fall + 9000), S("2026-10-25T00:30:00Z"));
}

TEST(TimeZoneTest, LoadsSystemZoneFiles) {
  auto z = TimeZone::Load("Europe/Berlin");
  if (!z.ok()) GTEST_SKIP() << "no tzdata: " << z.status().ToString();
  EXPECT_EQ(z->name(), "Europe/Berlin");
  EXPECT_EQ(z->OffsetAt(S("2026-01-15T12:00:00Z")), 3600);
  EXPECT_EQ(z->OffsetAt(S("2026-07-15T12:00:00Z")), 7200);
  EXPECT_EQ(z->OffsetAt(S("2050-07-15T12:00:00Z")), 7200);  // footer rule
  EXPECT_EQ(z->OffsetAt(S("1990-07-15T12:00:00Z")), 7200);  // table
  auto ny = TimeZone::Load("America/New_York");
  ASSERT_TRUE(ny.ok());
  EXPECT_EQ(ny->OffsetAt(S("2026-11-23T12:00:00Z")), -5 * 3600);
}

TEST(TimeZoneTest, RejectsGarbageTzif) {
  EXPECT_FALSE(TimeZone::FromTzif("x", "").ok());
  EXPECT_FALSE(TimeZone::FromTzif("x", "TZif2 garbage").ok());
  EXPECT_FALSE(TimeZone::FromPosix("x", "C").ok());
  EXPECT_FALSE(TimeZone::FromPosix("x", "CET-1CEST,M13.5.0,M10.5.0").ok());
}

}  // namespace
}  // namespace rota::reserve
