#include "sched/order.h"

#include <gtest/gtest.h>

#include "sched/sched_test_util.h"

namespace rota::sched {
namespace {

using namespace testing;  // NOLINT

TEST(OrderTest, DecayHalvesUsageEachHalfLife) {
  EXPECT_DOUBLE_EQ(Decay(100, kHour, kHour), 50);
  EXPECT_DOUBLE_EQ(Decay(100, 2 * kHour, kHour), 25);
  EXPECT_DOUBLE_EQ(Decay(100, kHour, 0), 100);
}

TEST(OrderTest, FairShareFactorFallsWithUsageAndRisesWithShares) {
  Snapshot s = Base({});
  s.fairshare.user_usage = {{"alice", 300}, {"bob", 100}};
  Ranker r(s);
  EXPECT_DOUBLE_EQ(r.FairShareFactor("carol", ""), 1.0);
  EXPECT_LT(r.FairShareFactor("alice", ""), r.FairShareFactor("bob", ""));
  // Usage equal to share: 0.5.
  s.fairshare.user_usage = {{"alice", 100}, {"bob", 100}};
  Ranker even(s);
  EXPECT_DOUBLE_EQ(even.FairShareFactor("alice", ""), 0.5);
  s.fairshare.user_shares = {{"alice", 3}};
  Ranker weighted(s);
  EXPECT_GT(weighted.FairShareFactor("alice", ""), weighted.FairShareFactor("bob", ""));
}

TEST(OrderTest, RotaOrderIsQueueThenLevelThenScore) {
  Snapshot s = Base({});
  s.queues.push_back(Queue{.name = "urgent", .priority = 10});
  Ranker r(s);
  JobMeta fresh{.id = 1, .user = "a", .submitted_ms = kNow, .queued_ms = kNow};
  JobMeta urgent = fresh;
  urgent.id = 2;
  urgent.queue = "urgent";
  urgent.attained_gpu_ms = 1e9;  // high level, but a higher queue
  urgent.queued_ms = kNow;
  EXPECT_TRUE(r.Of(urgent, 1, kNow - kHour) < r.Of(fresh, 1, 0));
  JobMeta served = fresh;  // level 2, running: after fresh
  served.id = 3;
  served.attained_gpu_ms = 8e6;
  EXPECT_TRUE(r.Of(fresh, 1, 0) < r.Of(served, 1, kNow - kHour));
}

TEST(OrderTest, AgeEventuallyBeatsFairShareAndPriority) {
  Snapshot s = Base({});
  s.fairshare.user_usage = {{"heavy", 1e12}, {"light", 1}};
  s.queues[0].max_priority = 100;
  JobMeta light{.id = 1, .user = "light", .priority = 100, .submitted_ms = kNow, .queued_ms = kNow};
  JobMeta old{.id = 2, .user = "heavy", .submitted_ms = kNow, .queued_ms = kNow};
  Ranker r0(s);
  EXPECT_TRUE(r0.Of(light, 1, 0) < r0.Of(old, 1, 0));
  // Light's advantage is bounded (1000 + 1000 points); heavy's job ages 10/hour.
  old.submitted_ms = old.queued_ms = kNow - 250 * kHour;
  Ranker r1(s);
  EXPECT_TRUE(r1.Of(old, 1, 0) < r1.Of(light, 1, 0));
}

TEST(OrderTest, StarvedJobReturnsToLevelZero) {
  Snapshot s = Base({});
  JobMeta j{.id = 1, .user = "a", .submitted_ms = kNow - 10 * kHour, .queued_ms = kNow - kMin};
  j.attained_gpu_ms = 2.0 * kHour;  // 1 GPU, ran 2 h: level 2
  Ranker r(s);
  EXPECT_EQ(r.Of(j, 1, 0).k1, 2);
  j.queued_ms = kNow - 5 * kHour;  // waited more than twice its run time
  EXPECT_EQ(r.Of(j, 1, 0).k1, 0);
}

TEST(OrderTest, OraclePoliciesUseDurations) {
  Snapshot s = Base({});
  s.policy.order = Order::kSrtf;
  Ranker r(s);
  JobMeta longer{.id = 1, .submitted_ms = 0, .oracle_duration_ms = 10 * kHour};
  longer.attained_gpu_ms = 9.5 * kHour;  // 0.5 h left
  JobMeta shorter{.id = 2, .submitted_ms = 0, .oracle_duration_ms = kHour};
  EXPECT_TRUE(r.Of(longer, 1, 1) < r.Of(shorter, 1, 0));
  s.policy.order = Order::kSjf;
  Ranker sjf(s);
  EXPECT_TRUE(sjf.Of(shorter, 1, 0) < sjf.Of(longer, 1, 1));
}

}  // namespace
}  // namespace rota::sched
