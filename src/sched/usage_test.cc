#include "sched/usage.h"

#include <gtest/gtest.h>

namespace rota::sched {
namespace {

constexpr int64_t kHour = 3'600'000;

TEST(UsageTest, DecaysThenAccruesWhatHoldersHeld) {
  Usage u;
  u.user = {{"alice", 1000}};
  u.group = {{"ml", 1000}};
  AdvanceUsage(&u, kHour, kHour, {{"alice", "ml", 2}, {"bob", "", 1}});
  EXPECT_DOUBLE_EQ(u.user["alice"], 500 + 2.0 * kHour);
  EXPECT_DOUBLE_EQ(u.user["bob"], 1.0 * kHour);
  EXPECT_DOUBLE_EQ(u.group["ml"], 500 + 2.0 * kHour);
  EXPECT_EQ(u.group.count(""), 0u);  // no group: nothing accrues to one
}

TEST(UsageTest, DropsWhatDecayedBelowOneGpuMillisecond) {
  Usage u;
  u.user = {{"alice", 1.5}, {"bob", 100}};
  AdvanceUsage(&u, kHour, kHour, {});
  EXPECT_EQ(u.user.count("alice"), 0u);
  EXPECT_DOUBLE_EQ(u.user["bob"], 50);
}

TEST(UsageTest, NoTimeChangesNothing) {
  Usage u;
  u.user = {{"alice", 0.5}};
  AdvanceUsage(&u, 0, kHour, {{"alice", "", 4}});
  EXPECT_DOUBLE_EQ(u.user["alice"], 0.5);
}

TEST(UsageTest, DecayedValuesKeepEveryName) {
  auto d = Decayed({{"a", 8}, {"b", 0.5}}, 2 * kHour, kHour);
  EXPECT_DOUBLE_EQ(d["a"], 2);
  EXPECT_DOUBLE_EQ(d["b"], 0.125);
}

TEST(UsageTest, ReservationIdleCountsFromItsStartOrFromWhenWatchingBegan) {
  std::set<int64_t> idle;
  // Started 40 min ago, watched for 40 min, never used: idle after 30.
  auto last = TrackReservationUse({{1, -40 * 60'000, kHour, false}}, {}, -50 * 60'000, 0, 30 * 60'000, &idle);
  EXPECT_EQ(idle, std::set<int64_t>{1});
  EXPECT_EQ(last[1], -40 * 60'000);
  // A server watching for 10 min only has not seen it idle long enough.
  idle.clear();
  TrackReservationUse({{1, -40 * 60'000, kHour, false}}, {}, -10 * 60'000, 0, 30 * 60'000, &idle);
  EXPECT_TRUE(idle.empty());
}

TEST(UsageTest, ReservationUsedNowIsNotIdleAndEndedOnesAreDropped) {
  std::set<int64_t> idle;
  std::map<int64_t, int64_t> prev{{1, -kHour}, {2, -kHour}};
  auto last = TrackReservationUse({{1, -2 * kHour, kHour, true}, {2, -2 * kHour, -1, false}}, prev, -3 * kHour, 0,
                                  30 * 60'000, &idle);
  EXPECT_TRUE(idle.empty());
  EXPECT_EQ(last, (std::map<int64_t, int64_t>{{1, 0}}));
  // Unused since the last use an hour ago: idle; 0 (never) lends nothing.
  idle.clear();
  TrackReservationUse({{1, -2 * kHour, kHour, false}}, prev, -3 * kHour, 0, 30 * 60'000, &idle);
  EXPECT_EQ(idle, std::set<int64_t>{1});
  idle.clear();
  TrackReservationUse({{1, -2 * kHour, kHour, false}}, prev, -3 * kHour, 0, 0, &idle);
  EXPECT_TRUE(idle.empty());
}

}  // namespace
}  // namespace rota::sched
