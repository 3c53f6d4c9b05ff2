#include "notify/rate_limiter.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace rota::notify {
namespace {

constexpr int64_t kHour = 3'600'000;

TEST(RateLimiterTest, AllowsUpToLimitPerKeyThenRefuses) {
  FakeClock clock;
  RateLimiter limiter(3, kHour);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Allow("a", clock.MonotonicMs())) << i;
  EXPECT_FALSE(limiter.Allow("a", clock.MonotonicMs()));
  EXPECT_TRUE(limiter.Allow("b", clock.MonotonicMs())) << "keys are independent";
}

TEST(RateLimiterTest, WindowSlides) {
  FakeClock clock;
  RateLimiter limiter(2, kHour);
  EXPECT_TRUE(limiter.Allow("a", clock.MonotonicMs()));  // t=0
  clock.AdvanceMs(30 * 60'000);
  EXPECT_TRUE(limiter.Allow("a", clock.MonotonicMs()));  // t=30m
  clock.AdvanceMs(29 * 60'000);
  EXPECT_FALSE(limiter.Allow("a", clock.MonotonicMs()));  // t=59m: 2 in the last hour
  clock.AdvanceMs(60'000 - 1);
  EXPECT_FALSE(limiter.Allow("a", clock.MonotonicMs()));  // t=1h-1ms: the first still counts
  clock.AdvanceMs(1);
  EXPECT_TRUE(limiter.Allow("a", clock.MonotonicMs()));  // t=1h: the first left the window
  EXPECT_FALSE(limiter.Allow("a", clock.MonotonicMs()));
  clock.AdvanceMs(30 * 60'000);
  EXPECT_TRUE(limiter.Allow("a", clock.MonotonicMs()));  // t=1h30m: the 30m one left
}

TEST(RateLimiterTest, RefusedAttemptsDoNotCount) {
  FakeClock clock;
  RateLimiter limiter(1, kHour);
  EXPECT_TRUE(limiter.Allow("a", clock.MonotonicMs()));
  for (int i = 0; i < 10; ++i) {
    clock.AdvanceMs(60'000);
    EXPECT_FALSE(limiter.Allow("a", clock.MonotonicMs()));
  }
  clock.AdvanceMs(50 * 60'000);  // one hour after the only accepted event
  EXPECT_TRUE(limiter.Allow("a", clock.MonotonicMs()));
}

TEST(RateLimiterTest, ZeroMeansUnlimitedAndTracksNothing) {
  RateLimiter limiter(0, kHour);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(limiter.Allow("a", 0));
  EXPECT_EQ(limiter.tracked_keys(), 0u);
}

TEST(RateLimiterTest, ForgetsIdleKeys) {
  FakeClock clock;
  RateLimiter limiter(5, kHour);
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(limiter.Allow("user" + std::to_string(i), clock.MonotonicMs()));
  }
  EXPECT_EQ(limiter.tracked_keys(), 100u);
  clock.AdvanceMs(kHour);
  EXPECT_TRUE(limiter.Allow("late", clock.MonotonicMs()));
  EXPECT_EQ(limiter.tracked_keys(), 1u);
}

TEST(RateLimiterTest, ClockSteppingBackDoesNotBreakOrdering) {
  RateLimiter limiter(2, kHour);
  EXPECT_TRUE(limiter.Allow("a", 10 * kHour));
  EXPECT_TRUE(limiter.Allow("a", 9 * kHour));  // recorded as 10h
  EXPECT_FALSE(limiter.Allow("a", 10 * kHour + kHour - 1));
  EXPECT_TRUE(limiter.Allow("a", 11 * kHour));
}

}  // namespace
}  // namespace rota::notify
