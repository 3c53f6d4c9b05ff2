#include "server/leadership/lease_rule.h"

#include <gtest/gtest.h>

namespace rota::server::leadership {
namespace {

TEST(LeaseRuleTest, HolderRenewsAnUnexpiredLeaseOthersFollowIt) {
  LeaseView row{.holder = "a", .epoch = 3, .expires_at_ms = 10'000, .db_now_ms = 9'999};
  EXPECT_EQ(Decide(row, "a"), LeaseAction::kRenew);
  EXPECT_EQ(Decide(row, "b"), LeaseAction::kFollow);
}

TEST(LeaseRuleTest, AnExpiredLeaseIsTakenByAnyoneEvenItsOldHolder) {
  LeaseView row{.holder = "a", .epoch = 3, .expires_at_ms = 10'000, .db_now_ms = 10'000};
  EXPECT_EQ(Decide(row, "b"), LeaseAction::kAcquire);
  EXPECT_EQ(Decide(row, "a"), LeaseAction::kAcquire);  // never renewed once expired
  LeaseView never{.holder = "", .epoch = 0, .expires_at_ms = 0, .db_now_ms = 5};
  EXPECT_EQ(Decide(never, "b"), LeaseAction::kAcquire);
  EXPECT_EQ(Decide(LeaseView{.holder = "", .expires_at_ms = 50, .db_now_ms = 5}, ""), LeaseAction::kFollow);
}

TEST(LeaseRuleTest, LeaderStepsDownBeforeTheDatabaseExpiresItsLease) {
  LeaseTiming t;  // ttl 4 s, margin 0.5 s
  EXPECT_FALSE(MustStepDown(1'000, 1'000, t));
  EXPECT_FALSE(MustStepDown(1'000, 4'499, t));
  EXPECT_TRUE(MustStepDown(1'000, 4'500, t));
  // A process paused for longer than the lease wakes up past its deadline.
  EXPECT_TRUE(MustStepDown(1'000, 60'000, t));
}

TEST(LeaseRuleTest, RenewalsAreRegularAndRetriedSoonAfterAFailure) {
  LeaseTiming t;
  EXPECT_EQ(NextRenewalMs(1'000, -1, t), 3'000);
  EXPECT_EQ(NextRenewalMs(1'000, 3'000, t), 3'000);  // regular one already due
  EXPECT_EQ(NextRenewalMs(1'000, 2'000, t), 2'500);
}

TEST(LeaseRuleTest, TimingMustLeaveRoomForOneRetryBeforeTheDeadline) {
  EXPECT_EQ(CheckTiming(LeaseTiming{}), "");
  LeaseTiming tight;
  tight.ttl_ms = 2'500;
  EXPECT_NE(CheckTiming(tight).find("must exceed"), std::string::npos) << CheckTiming(tight);
  LeaseTiming zero;
  zero.renew_interval_ms = 0;
  EXPECT_NE(CheckTiming(zero), "");
}

TEST(LeaseRuleTest, TimingForATtlScalesEveryIntervalAndKeepsTheDefaults) {
  const LeaseTiming def = TimingForTtl(4'000);
  const LeaseTiming want;
  EXPECT_EQ(def.renew_interval_ms, want.renew_interval_ms);
  EXPECT_EQ(def.retry_interval_ms, want.retry_interval_ms);
  EXPECT_EQ(def.margin_ms, want.margin_ms);
  EXPECT_EQ(def.poll_interval_ms, want.poll_interval_ms);
  for (int64_t ttl : {1'000, 1'500, 2'000, 4'000, 15'000, 60'000}) {
    const LeaseTiming t = TimingForTtl(ttl);
    EXPECT_EQ(CheckTiming(t), "") << ttl;
    EXPECT_EQ(t.ttl_ms, ttl);
    EXPECT_LE(t.poll_interval_ms, 500) << ttl;
  }
  EXPECT_EQ(TimingForTtl(1'000).renew_interval_ms, 500);
  EXPECT_EQ(TimingForTtl(1'000).poll_interval_ms, 125);
}

}  // namespace
}  // namespace rota::server::leadership
