// Preemption for order: when a waiting job may stop a running preemptible one,
// and what it says while it waits to.
#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/time_util.h"
#include "sched/sched_test_util.h"

namespace rota::sched {
namespace {

using namespace testing;  // NOLINT

// A run must last preempt_after before a job ordering first may stop it: else
// a long queue stops every run seconds after it began and none progresses.
TEST(ScheduleTest, ARunJustBegunIsNotPreemptedForOrder) {
  Snapshot s = Base({MakeNode("a", 1)});
  s.policy.preempt_after_ms = 2 * kMin;
  auto r = Running(1, "u", {On("a", {0})}, kNow - kMin);  // ran for one minute
  r.meta.preemptible = true;
  r.meta.attained_gpu_ms = 5 * kHour;  // orders last
  s.running = {r};
  s.pending = {Pending(2, "v", {Demand(1, 1)}, kNow - 10 * kMin)};
  EXPECT_TRUE(Schedule(s).preemptions.empty());
  s.running[0].started_ms = kNow - 2 * kMin;
  Decisions d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 1);
}

// Ordering first is not enough to stop a run: only a higher queue tier, a lower
// LAS level or a user not over share against one clearly over does (else jobs
// of one level whose users' fair-share factors drift past each other take
// turns stopping each other: 26 preemptions per job on an overloaded replay).
// Job priority only orders.
TEST(ScheduleTest, OnlyAClearLeadStopsARunForOrder) {
  struct Case {
    const char* name;
    std::string pending_user, pending_queue = "default";
    int pending_priority = 0, running_priority = 0;
    double running_attained_h = 0.25;  // one GPU: level 0 below 0.9 h
    std::map<std::string, double> usage;
    bool preempts;
    std::string why = "";  // the reason's rule
  };
  const std::vector<Case> cases = {
      {.name = "same level, the victim's user under twice its share (of three active users)",
       .pending_user = "new", .usage = {{"run", 1e6}, {"b", 1e6}}, .preempts = false},
      {.name = "two users, all the usage the victim's owner's (twice its share: the job's owner counts)",
       .pending_user = "new", .usage = {{"run", 1e6}}, .preempts = true,
       .why = ": run has used at least twice their fair share"},
      {.name = "same level, the victim's user twice over its share",
       .pending_user = "new", .usage = {{"run", 1e9}, {"b", 1e6}, {"c", 1e6}}, .preempts = true,
       .why = ": run has used at least twice their fair share"},
      {.name = "same level, both users over their share",
       .pending_user = "b", .usage = {{"run", 6e8}, {"b", 3e8}, {"c", 5e7}, {"d", 5e7}},
       .preempts = false},
      {.name = "a lower LAS level", .pending_user = "new", .running_attained_h = 1.5,
       .usage = {{"run", 1e6}}, .preempts = true, .why = ", which has used less GPU time"},
      {.name = "a higher queue tier", .pending_user = "new", .pending_queue = "high",
       .usage = {{"run", 1e6}}, .preempts = true, .why = ", of a higher-priority queue than default"},
      {.name = "the same user's higher priority", .pending_user = "run", .pending_priority = 5,
       .usage = {{"run", 1e6}}, .preempts = false},
      {.name = "the same user's equal priority", .pending_user = "run", .pending_priority = 5,
       .running_priority = 5, .usage = {{"run", 1e6}}, .preempts = false},
      {.name = "another user's higher priority", .pending_user = "new", .pending_priority = 5,
       .usage = {{"run", 1e6}, {"b", 1e6}}, .preempts = false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Snapshot s = Base({MakeNode("a", 1)});
    s.queues = {Queue{}, Queue{.name = "high", .priority = 10}};
    s.policy.preempt_after_ms = 5 * kMin;
    auto r = Running(1, "run", {On("a", {0})}, kNow - 15 * kMin);
    r.meta.preemptible = true;
    r.meta.priority = c.running_priority;
    r.meta.attained_gpu_ms = c.running_attained_h * kHour;
    s.running = {r};
    auto p = Pending(2, c.pending_user, {Demand(1, 1)}, kNow - 10 * kMin);
    p.meta.queue = c.pending_queue;
    p.meta.priority = c.pending_priority;
    s.pending = {p};
    s.fairshare.user_usage = c.usage;
    const Decisions d = Schedule(s);
    ASSERT_EQ(d.preemptions.size(), c.preempts ? 1u : 0u);
    if (c.preempts) {
      EXPECT_EQ(d.preemptions[0].reason, "for job 2" + c.why);
    }
  }
}

// Whether a job may stop jobs of users over their share depends on its owner,
// not its shape: a job of one shape that may not (its owner is over share
// too, ordered first by age) does not make a later one that may give up.
TEST(ScheduleTest, AFailedPreemptionOfOneOwnerDoesNotStopAnotherOwnersJobOfTheSameShape) {
  Snapshot s = Base({MakeNode("a", 1)});
  s.policy.preempt_after_ms = 5 * kMin;
  auto r = Running(1, "run", {On("a", {0})}, kNow - 15 * kMin);
  r.meta.preemptible = true;
  s.running = {r};
  s.fairshare.user_usage = {{"run", 6e8}, {"b", 3e8}, {"c", 5e7}, {"d", 5e7}};
  s.pending = {Pending(2, "b", {Demand(1, 1)}, kNow - 100 * kHour),  // first by age; b is over share
               Pending(3, "new", {Demand(1, 1)}, kNow - 10 * kMin)};
  s.policy.explain = false;
  Decisions d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 1);
  EXPECT_NE(d.preemptions[0].reason.find("for job 3"), std::string::npos) << d.preemptions[0].reason;
  s.policy.explain = true;
  d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_NE(d.preemptions[0].reason.find("for job 3"), std::string::npos) << d.preemptions[0].reason;
}

// A job that will preempt once it has waited preempt_after says so, and
// expects to start then, not when the jobs it will stop would have ended.
TEST(ScheduleTest, AJobAboutToPreemptSaysWhenAndExpectsToStartThen) {
  Snapshot s = Base({MakeNode("a", 1)});
  s.queues = {Queue{}, Queue{.name = "high", .priority = 10}};
  s.policy.preempt_after_ms = 5 * kMin;
  auto r = Running(1, "bob", {On("a", {0})}, kNow - 30 * kMin, kNow + 3 * kHour);  // LAS level 0
  r.meta.preemptible = true;
  s.running = {r};
  auto p = Pending(2, "alice", {Demand(1, 1)}, kNow - 2 * kMin);
  p.meta.queue = "high";
  s.pending = {p};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.preemptions.empty());
  EXPECT_EQ(WaitOf(d, 2)->reason, "waiting for 1 GPU (0 free); it preempts job(s) 1 at " +
                                      FormatRfc3339(kNow + 3 * kMin) + " if still needed");
  EXPECT_EQ(WaitOf(d, 2)->estimated_start_ms, kNow + 3 * kMin);
  // A job it may not stop: no such promise, the estimate is the victim's end.
  s.pending[0].meta.queue = "default";
  s.fairshare.user_usage = {{"bob", 1e6}, {"carl", 1e6}};
  d = Schedule(s);
  EXPECT_EQ(WaitOf(d, 2)->reason.find("preempts"), std::string::npos) << WaitOf(d, 2)->reason;
  EXPECT_EQ(WaitOf(d, 2)->estimated_start_ms, kNow + 3 * kHour);
  // Once it has waited, it preempts.
  s.pending[0].meta.queue = "high";
  s.now_ms += 3 * kMin;
  d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].reason, "for job 2, of a higher-priority queue than default");
}

TEST(ScheduleTest, PreemptsWorstOrderedJobsAfterTheThreshold) {
  Snapshot s = Base({MakeNode("a", 4)});
  s.policy.preempt_after_ms = 5 * kMin;
  // Two preemptible jobs that ran long (LAS level 2) and one protected one.
  auto r1 = Running(1, "u", {On("a", {0, 1})}, kNow - 3 * kHour);
  r1.meta.preemptible = true;
  auto r2 = Running(2, "u", {On("a", {2})}, kNow - 5 * kHour);
  r2.meta.preemptible = true;
  auto r3 = Running(3, "u", {On("a", {3})}, kNow - 6 * kHour);  // not preemptible
  s.running = {r1, r2, r3};
  s.pending = {Pending(4, "v", {Demand(1, 2)}, kNow - kMin)};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.preemptions.empty());  // waited 1 min < 5
  s.pending[0].meta.queued_ms = kNow - 10 * kMin;
  d = Schedule(s);
  // Job 2 orders last (most attained), then job 1: both are needed for 2 GPUs
  // on one node? No: 2 GPUs = job 1's two; job 2 alone gives 1. Worst first
  // adds job 2, then job 1; only those whose GPUs are used are preempted.
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 1);
  EXPECT_EQ(WaitOf(d, 4)->reason, "preempting job(s) 1 for it");
  // A non-preemptible job is never a victim.
  s.running[0].meta.preemptible = false;
  s.running[1].meta.preemptible = false;
  EXPECT_TRUE(Schedule(s).preemptions.empty());
}

}  // namespace
}  // namespace rota::sched
