// Defragmentation and waiting for jobs being stopped (scheduler.h).
#include <gtest/gtest.h>

#include "sched/sched_test_util.h"
#include "sched/scheduler.h"

namespace rota::sched {
namespace {

using namespace testing;  // NOLINT

RunningJob Movable(JobId id, const std::string& node, std::vector<uint32_t> gpus) {
  const uint32_t n = static_cast<uint32_t>(gpus.size());
  RunningJob r = Running(id, "bob", {On(node, std::move(gpus))}, kNow - 2 * kHour);
  r.meta.preemptible = true;
  r.demands = {Demand(1, n)};
  return r;
}

RunningJob Fixed(JobId id, const std::string& node, std::vector<uint32_t> gpus) {
  RunningJob r = Running(id, "carol", {On(node, std::move(gpus))}, kNow - 2 * kHour);
  r.demands = {Demand(1, static_cast<uint32_t>(r.tasks[0].gpus.size()))};
  return r;
}

// FIFO: the running jobs order before the waiting one, so plain preemption
// never takes them; only a move can make room.
Snapshot Fragmented() {
  Snapshot s = Base({MakeNode("a", 8), MakeNode("b", 8)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kSkip;
  s.running = {Movable(1, "a", {0}), Movable(2, "b", {0, 1, 2})};  // 7 + 5 free
  s.pending = {Pending(10, "alice", {Demand(1, 8)}, kNow - 10 * kMin)};
  return s;
}

TEST(DefragmentTest, MovesTheSmallestJobOffTheFullestNodeSoAGangFits) {
  Decisions d = Schedule(Fragmented());
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 1) << "a has 7 free: one 1-GPU job to move";
  EXPECT_NE(d.preemptions[0].reason.find("moved to make room for job 10"), std::string::npos)
      << d.preemptions[0].reason;
  EXPECT_TRUE(d.starts.empty());
  const Wait* w = WaitOf(d, 10);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->reason, "moving job(s) 1 to other nodes to make room for it");
  EXPECT_EQ(w->estimated_start_ms, kNow);
}

TEST(DefragmentTest, KeepsWhereTheMovedJobRestartsFreeForIt) {
  // A later 5-GPU job could take b's 5 free GPUs; they are where job 1
  // restarts, so it waits.
  Snapshot s = Fragmented();
  s.pending.push_back(Pending(11, "alice", {Demand(1, 5)}, kNow - 9 * kMin));
  Decisions d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(StartOf(d, 11), nullptr);
  // A 4-GPU one fits beside it.
  s.pending.back().demands = {Demand(1, 4)};
  d = Schedule(s);
  ASSERT_NE(StartOf(d, 11), nullptr);
  EXPECT_EQ(StartOf(d, 11)->tasks[0].node, "b");
}

TEST(DefragmentTest, OnlyAfterTheWaitThresholdAndWithEnoughGpusFree) {
  Snapshot s = Fragmented();
  s.pending[0].meta.queued_ms = kNow - kMin;
  EXPECT_TRUE(Schedule(s).preemptions.empty()) << "waited 1 min < 5";
  s = Fragmented();
  s.running.push_back(Fixed(3, "b", {3, 4, 5, 6, 7}));  // 7 free in all < 8
  EXPECT_TRUE(Schedule(s).preemptions.empty());
  s = Fragmented();
  s.policy.defragment = false;
  EXPECT_TRUE(Schedule(s).preemptions.empty());
  s = Fragmented();
  s.policy.preempt = false;
  EXPECT_TRUE(Schedule(s).preemptions.empty());
}

TEST(DefragmentTest, NeverMovesWhatCannotMove) {
  // Not preemptible, no demands, or as large as the waiting job: not moved.
  Snapshot s = Fragmented();
  s.running[0].meta.preemptible = false;
  s.running[1].meta.preemptible = false;
  EXPECT_TRUE(Schedule(s).preemptions.empty());
  // Job 1 without demands: job 2 (3 GPUs on b) moves to a instead.
  s = Fragmented();
  s.running[0].demands.clear();
  Decisions d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 2);
  // As large as the waiting job: not moved (job 2 holds 8 GPUs of c).
  s = Base({MakeNode("a", 8), MakeNode("b", 8), MakeNode("c", 16)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kSkip;
  s.running = {Fixed(1, "a", {0, 1, 2, 3}), Fixed(3, "b", {0, 1, 2, 3}),
               Movable(2, "c", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})};
  s.pending = {Pending(10, "alice", {Demand(1, 12)}, kNow - 10 * kMin)};
  EXPECT_TRUE(Schedule(s).preemptions.empty());
}

TEST(DefragmentTest, AMoveInFlightKeepsItsPlaceAndStopsFurtherMoves) {
  // The pass after the move: job 1 is still stopping. Its place on b stays
  // free for it (job 11 may not take b's 5 GPUs), job 10 waits for it, and
  // no second job moves.
  Snapshot s = Fragmented();
  s.running[0].stoppable = false;
  s.running[0].moving = true;
  s.pending.push_back(Pending(11, "alice", {Demand(1, 5)}, kNow - 9 * kMin));
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.preemptions.empty());
  EXPECT_EQ(StartOf(d, 11), nullptr);
  EXPECT_EQ(WaitOf(d, 10)->reason, "waiting for job(s) 1 to stop");
  // Plainly preempted (not moving): no place is kept for it.
  s.running[0].moving = false;
  d = Schedule(s);
  ASSERT_NE(StartOf(d, 11), nullptr);
  EXPECT_EQ(StartOf(d, 11)->tasks[0].node, "b");
  // Two waiting gangs and one free GPU elsewhere: one move at a time.
  s = Base({MakeNode("a", 8), MakeNode("b", 8), MakeNode("c", 8)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kSkip;
  s.running = {Movable(1, "a", {0}), Movable(2, "b", {0}), Fixed(3, "c", {0, 1, 2, 3, 4, 5, 6})};
  s.pending = {Pending(10, "alice", {Demand(1, 8)}, kNow - 10 * kMin),
               Pending(11, "alice", {Demand(1, 8)}, kNow - 9 * kMin)};
  d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_TRUE(d.preemptions[0].move);
  s.running[0].stoppable = false;  // the next pass
  s.running[0].moving = true;
  d = Schedule(s);
  EXPECT_TRUE(d.preemptions.empty()) << d.preemptions[0].reason;
}

TEST(DefragmentTest, TheMovedJobsPlaceHasItsCpus) {
  // b's 16 CPUs all go to the waiting job's second task (2 GPUs free there,
  // one of them its): job 1 (1 GPU, 4 CPUs) would have a GPU but no CPU, so
  // it does not move.
  Snapshot s = Base({MakeNode("a", 8), MakeNode("b", 8)});
  s.nodes[1].cpus = 16;
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kSkip;
  RunningJob one = Movable(1, "a", {0});
  one.tasks[0].cpus = 4;
  one.demands[0].cpus_per_task = 4;
  s.running = {one, Fixed(2, "b", {0, 1, 2, 3, 4, 5})};
  TaskDemand big = Demand(1, 8);
  TaskDemand small = Demand(1, 1);
  small.cpus_per_task = 16;
  s.pending = {Pending(10, "alice", {big, small}, kNow - 10 * kMin)};
  EXPECT_TRUE(Schedule(s).preemptions.empty());
  s.pending[0].demands[1].cpus_per_task = 8;  // 8 CPUs left on b: it moves there
  Decisions d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 1);
}

TEST(DefragmentTest, NoMoveWhenTheMovedJobWouldNotFitElsewhere) {
  // Moving job 1 (2 GPUs on one node) completes a, but b and c have one free
  // GPU each: job 1 would wait, so nothing moves.
  Snapshot s = Base({MakeNode("a", 8), MakeNode("b", 8), MakeNode("c", 8)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kSkip;
  s.running = {Movable(1, "a", {0, 1}), Fixed(2, "b", {0, 1, 2, 3, 4, 5, 6}),
               Fixed(3, "c", {0, 1, 2, 3, 4, 5, 6})};
  s.pending = {Pending(10, "alice", {Demand(1, 8)}, kNow - 10 * kMin)};
  EXPECT_TRUE(Schedule(s).preemptions.empty());
  // Nor onto GPUs another user has reserved and is using.
  s.running[1] = Fixed(2, "b", {0, 1, 2, 3, 4, 5});
  s.reservations.push_back(Reservation{.id = 5, .user = "dave", .node = "b", .gpus = {6, 7},
                                       .start_ms = kNow - kHour, .end_ms = kNow + kHour});
  EXPECT_TRUE(Schedule(s).preemptions.empty());
  s.reservations[0].owner_idle = true;  // an idle owner's GPUs take preemptible jobs
  ASSERT_EQ(Schedule(s).preemptions.size(), 1u);
}

TEST(DefragmentTest, OneWaitingJobIsHelpedPerPass) {
  Snapshot s = Base({MakeNode("a", 8), MakeNode("b", 8), MakeNode("c", 8), MakeNode("d", 8)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kSkip;
  s.running = {Movable(1, "a", {0}), Movable(2, "b", {0}), Fixed(3, "c", {0, 1, 2, 3}),
               Fixed(4, "d", {0, 1, 2, 3})};
  s.pending = {Pending(10, "alice", {Demand(1, 8)}, kNow - 10 * kMin),
               Pending(11, "alice", {Demand(1, 8)}, kNow - 9 * kMin)};
  Decisions d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(WaitOf(d, 10)->reason, "moving job(s) 1 to other nodes to make room for it");
  EXPECT_EQ(WaitOf(d, 11)->reason.find("moving"), std::string::npos);
}

TEST(DefragmentTest, AMultiNodeGangGetsWholeNodes) {
  // 16 GPUs as two 8-GPU tasks: a (7 free) and b (6 free) are completed.
  Snapshot s = Base({MakeNode("a", 8), MakeNode("b", 8), MakeNode("c", 8)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kSkip;
  s.running = {Movable(1, "a", {0}), Movable(2, "b", {0, 1}), Movable(3, "c", {0, 1, 2, 3, 4})};
  s.pending = {Pending(10, "alice", {Demand(2, 8)}, kNow - 10 * kMin)};
  Decisions d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 2u);
  EXPECT_EQ(d.preemptions[0].id, 1);
  EXPECT_EQ(d.preemptions[1].id, 2);
}

// Job 1 on `stopping` (preempted in an earlier pass, being stopped) and
// job 2 on `other` (preemptible), both of user u, on node a.
std::vector<RunningJob> StoppingAndPreemptible(TaskAlloc stopping, TaskAlloc other) {
  auto r1 = Running(1, "u", {std::move(stopping)}, kNow - 3 * kHour);
  r1.meta.preemptible = true;
  r1.stoppable = false;
  auto r2 = Running(2, "u", {std::move(other)}, kNow - 3 * kHour);
  r2.meta.preemptible = true;
  return {r1, r2};
}

TEST(AwaitStoppingTest, AJobWaitsForItsVictimsInsteadOfTakingMore) {
  // Job 1 is being stopped (preempted for job 4 in an earlier pass). Job 4
  // fits once it ends, so job 2 (which orders after job 4) is left alone;
  // job 5, the next in line, may then preempt job 2.
  Snapshot s = Base({MakeNode("a", 4)});
  s.policy.preempt_after_ms = 5 * kMin;
  s.running = StoppingAndPreemptible(On("a", {0, 1}), On("a", {2, 3}));
  s.pending = {Pending(4, "v", {Demand(1, 2)}, kNow - 20 * kMin)};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.preemptions.empty());
  EXPECT_EQ(WaitOf(d, 4)->reason, "waiting for job(s) 1 to stop");
  s.pending.push_back(Pending(5, "v", {Demand(1, 2)}, kNow - 10 * kMin));
  d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 2);
  EXPECT_EQ(WaitOf(d, 5)->reason, "preempting job(s) 2 for it");
}

TEST(AwaitStoppingTest, TwoJobsShareTheGpusOfOneJobBeingStopped) {
  // Job 1 (4 GPUs) is being stopped. Jobs 4 and 5 need 2 GPUs each: both fit
  // on its GPUs once it ends, so neither preempts job 2.
  Snapshot s = Base({MakeNode("a", 8)});
  s.policy.preempt_after_ms = 5 * kMin;
  s.running = StoppingAndPreemptible(On("a", {0, 1, 2, 3}), On("a", {4, 5, 6, 7}));
  s.pending = {Pending(4, "v", {Demand(1, 2)}, kNow - 20 * kMin),
               Pending(5, "v", {Demand(1, 2)}, kNow - 10 * kMin)};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.preemptions.empty());
  EXPECT_EQ(WaitOf(d, 4)->reason, "waiting for job(s) 1 to stop");
  EXPECT_EQ(WaitOf(d, 5)->reason, "waiting for job(s) 1 to stop");
  // A third job finds job 1's GPUs counted on: it preempts job 2.
  s.pending.push_back(Pending(6, "v", {Demand(1, 2)}, kNow - 8 * kMin));
  d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 2);
  EXPECT_EQ(WaitOf(d, 6)->reason, "preempting job(s) 2 for it");
}

TEST(AwaitStoppingTest, AJobWithoutGpusWaitsForTheCpusOfAJobBeingStopped) {
  // Node a has 8 CPUs, all held: job 1 (being stopped) and job 2 hold 4 each.
  // Job 4 needs 4 CPUs and waits for job 1; job 5 cannot count on them too.
  Snapshot s = Base({MakeNode("a", 0)});
  s.nodes[0].cpus = 8;
  s.policy.preempt_after_ms = 5 * kMin;
  auto cpus = [](TaskAlloc t) {
    t.cpus = 4;
    return t;
  };
  s.running = StoppingAndPreemptible(cpus(On("a", {})), cpus(On("a", {})));
  TaskDemand d = Demand(1, 0);
  d.cpus_per_task = 4;
  s.pending = {Pending(4, "v", {d}, kNow - 20 * kMin), Pending(5, "v", {d}, kNow - 10 * kMin)};
  Decisions out = Schedule(s);
  EXPECT_EQ(WaitOf(out, 4)->reason, "waiting for job(s) 1 to stop");
  EXPECT_EQ(WaitOf(out, 5)->reason.find("job(s) 1"), std::string::npos) << WaitOf(out, 5)->reason;
  EXPECT_TRUE(out.preemptions.empty());  // job 2 orders no later than they do
}

}  // namespace
}  // namespace rota::sched
