#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include "sched/sched_test_util.h"

namespace rota::sched {
namespace {

using namespace testing;  // NOLINT

TEST(ScheduleTest, StartsWhatFitsAndExplainsTheRest) {
  Snapshot s = Base({MakeNode("gpu-a", 8), MakeNode("gpu-b", 8)});
  s.running.push_back(Running(1, "bob", {On("gpu-a", {0, 1, 2})}));
  s.running.push_back(Running(4, "bob", {On("gpu-b", {0, 1, 2, 3, 4})}));
  s.pending.push_back(Pending(2, "alice", {Demand(1, 2)}));  // the tightest fit: gpu-b
  s.pending.push_back(Pending(3, "alice", {Demand(1, 6)}));  // 6 free, but not on one node
  s.pending.push_back(Pending(5, "alice", {Demand(1, 7)}));
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 2);
  EXPECT_EQ(d.starts[0].tasks[0], On("gpu-b", {5, 6}));
  const Wait* w = WaitOf(d, 3);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->reason, "waiting for 6 free GPUs on one node (largest free block: 5 on gpu-a)");
  EXPECT_EQ(WaitOf(d, 5)->reason, "waiting for 7 GPUs (6 free); behind 1 earlier job in queue default");
  EXPECT_EQ(w->estimated_start_ms, 0);  // bob's job has no time limit
  EXPECT_EQ(w->position, 2u);
  // GPUs free elsewhere, none on the node it may use.
  s.running.push_back(Running(6, "bob", {On("gpu-b", {5, 6, 7})}));
  s.pending = {Pending(7, "alice", {Demand(1, 1)})};
  s.pending[0].demands[0].nodes = {"gpu-b"};
  EXPECT_EQ(WaitOf(Schedule(s), 7)->reason, "waiting for 1 free GPU on one node (none free on the nodes it may use)");
}

// A gang of tasks too big for the free blocks says the block is per task.
TEST(ScheduleTest, AGangTooBigForTheFreeBlocksSaysEachTaskNeedsOne) {
  Snapshot s = Base({MakeNode("a", 8), MakeNode("b", 8), MakeNode("c", 4)});
  s.running.push_back(Running(1, "bob", {On("a", {0, 1, 2, 3, 4})}));
  s.running.push_back(Running(2, "bob", {On("b", {0, 1, 2, 3, 4})}));
  s.running.push_back(Running(3, "bob", {On("c", {0, 1})}));
  s.pending.push_back(Pending(4, "alice", {Demand(2, 4)}));  // 8 free in all, 3 at most on a node
  EXPECT_EQ(WaitOf(Schedule(s), 4)->reason,
            "waiting for 4 free GPUs on one node for each of 2 tasks (largest free block: 3 on a)");
}

TEST(ScheduleTest, TheLargestFreeBlockSaysHowManyOfItAnotherUserReserved) {
  Snapshot s = Base({MakeNode("gpu-a", 8), MakeNode("gpu-b", 8)});
  s.running.push_back(Running(1, "bob", {On("gpu-a", {0, 1, 2})}));
  s.running.push_back(Running(4, "bob", {On("gpu-b", {0, 1, 2, 3, 4})}));
  s.reservations.push_back(Reservation{.id = 7, .user = "carol", .node = "gpu-a", .gpus = {3, 4},
                                       .start_ms = kNow - kHour, .end_ms = kNow + kHour});
  s.pending.push_back(Pending(3, "alice", {Demand(1, 6)}));
  Decisions d = Schedule(s);
  EXPECT_EQ(WaitOf(d, 3)->reason,
            "waiting for 6 free GPUs on one node (largest free block: 5 on gpu-a, 2 of them reserved by "
            "carol until 2027-01-15T09:00:00Z)");
  // A reservation later on another GPU that a job without a time limit would run into.
  s.reservations.push_back(Reservation{.id = 8, .user = "dave", .node = "gpu-a", .gpus = {5, 3},
                                       .start_ms = kNow + 2 * kHour, .end_ms = kNow + 3 * kHour});
  d = Schedule(s);
  EXPECT_EQ(WaitOf(d, 3)->reason,
            "waiting for 6 free GPUs on one node (largest free block: 5 on gpu-a, 3 of them reserved by others)");
  // Not for its owner; not for a job that ends before the reservation starts.
  s.reservations.pop_back();
  s.pending[0].meta.user = "carol";
  EXPECT_EQ(WaitOf(Schedule(s), 3)->reason, "waiting for 6 free GPUs on one node (largest free block: 5 on gpu-a)");
  s.pending[0].meta.user = "alice";
  s.reservations[0].start_ms = kNow + kHour;
  s.reservations[0].end_ms = kNow + 2 * kHour;
  s.pending[0].meta.time_limit_ms = kHour;
  EXPECT_EQ(WaitOf(Schedule(s), 3)->reason, "waiting for 6 free GPUs on one node (largest free block: 5 on gpu-a)");
  s.pending[0].meta.time_limit_ms = 0;
  EXPECT_EQ(WaitOf(Schedule(s), 3)->reason,
            "waiting for 6 free GPUs on one node (largest free block: 5 on gpu-a, 2 of them reserved by "
            "carol from 2027-01-15T09:00:00Z)");
}

TEST(ScheduleTest, TooFewFreeGpusSaysHowManyOfThemAnotherUserReserved) {
  Snapshot s = Base({MakeNode("gpu-a", 8), MakeNode("gpu-b", 8)});
  s.running.push_back(Running(1, "bob", {On("gpu-a", {0, 1, 2, 3, 4})}));
  s.running.push_back(Running(2, "bob", {On("gpu-b", {0, 1, 2, 3, 4})}));
  s.reservations.push_back(Reservation{.id = 7, .user = "carol", .node = "gpu-a", .gpus = {4, 5},
                                       .start_ms = kNow - kHour, .end_ms = kNow + kHour});
  s.pending.push_back(Pending(3, "alice", {Demand(2, 4)}));
  EXPECT_EQ(WaitOf(Schedule(s), 3)->reason,
            "waiting for 8 GPUs (6 free, 1 of them reserved by carol until 2027-01-15T09:00:00Z)");
  // Limited to gpu-a: of the GPUs where it may run.
  s.pending[0].demands[0].nodes = {"gpu-a"};
  EXPECT_EQ(WaitOf(Schedule(s), 3)->reason,
            "waiting for 8 GPUs (6 free, 3 of them where it may run, 1 of those reserved by carol until "
            "2027-01-15T09:00:00Z)");
  s.pending[0].demands[0].nodes = {"gpu-b"};
  EXPECT_EQ(WaitOf(Schedule(s), 3)->reason, "waiting for 8 GPUs (6 free, 3 of them where it may run)");
}

TEST(ScheduleTest, JobsWaitForAJobPortWhenTheNodeHasNoneLeft) {
  Snapshot s = Base({MakeNode("gpu-a", 8)});
  s.nodes[0].task_slots = 2;
  s.running.push_back(Running(1, "bob", {On("gpu-a", {})}));
  s.pending.push_back(Pending(2, "alice", {Demand(1, 0)}));
  s.pending.push_back(Pending(3, "alice", {Demand(1, 1)}));
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 2);
  const Wait* w = WaitOf(d, 3);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->reason, "waiting for a job port (gpu-a runs as many tasks as it has job ports)");
  // The same for a job without GPUs; with a port free, it starts.
  s.pending = {Pending(4, "alice", {Demand(2, 0)})};
  d = Schedule(s);
  EXPECT_TRUE(d.starts.empty());
  ASSERT_NE(WaitOf(d, 4), nullptr);
  EXPECT_EQ(WaitOf(d, 4)->reason, "waiting for a job port (gpu-a runs as many tasks as it has job ports)");
  s.nodes[0].task_slots = 3;
  EXPECT_EQ(Schedule(s).starts.size(), 1u);
}

TEST(ScheduleTest, SameSnapshotSameDecisions) {
  Snapshot s = Base({MakeNode("a", 8), MakeNode("b", 4)});
  for (int i = 0; i < 20; ++i) s.pending.push_back(Pending(100 - i, i % 2 ? "x" : "y", {Demand(1, 1 + i % 3)}));
  Decisions a = Schedule(s), b = Schedule(s);
  ASSERT_EQ(a.starts.size(), b.starts.size());
  for (size_t i = 0; i < a.starts.size(); ++i) {
    EXPECT_EQ(a.starts[i].id, b.starts[i].id);
    EXPECT_EQ(a.starts[i].tasks, b.starts[i].tasks);
  }
  ASSERT_EQ(a.waits.size(), b.waits.size());
}

TEST(ScheduleTest, HandUsedFailedAndUnschedulableGpusAreNotGiven) {
  Snapshot s = Base({MakeNode("a", 2, {0}), MakeNode("b", 2)});
  s.nodes[1].schedulable = false;  // unreachable or drained
  s.pending.push_back(Pending(1, "u", {Demand(1, 1)}));
  s.pending.push_back(Pending(2, "u", {Demand(1, 1)}));
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].tasks[0], On("a", {1}));
  EXPECT_EQ(WaitOf(d, 2)->reason, "waiting for 1 GPU (0 free)");
}

// A job whose matching nodes all take no new jobs names them, whatever is free
// elsewhere; one that may go elsewhere is placed there.
TEST(ScheduleTest, AJobForDrainedNodesOnlySaysSo) {
  Snapshot s = Base({MakeNode("a", 2), MakeNode("b", 2), MakeNode("c", 2)});
  s.nodes[0].schedulable = false;
  s.nodes[0].unschedulable_reason = "drained: disk swap";
  s.nodes[1].schedulable = false;
  s.nodes[1].unschedulable_reason = "unreachable";
  TaskDemand on_a = Demand(1, 1);
  on_a.nodes = {"a"};
  TaskDemand on_ab = Demand(1, 1);
  on_ab.nodes = {"a", "b"};
  TaskDemand anywhere = Demand(1, 2);
  s.pending.push_back(Pending(1, "u", {on_a}));
  s.pending.push_back(Pending(2, "u", {on_ab}));
  s.pending.push_back(Pending(3, "u", {anywhere}));
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 3);
  EXPECT_EQ(d.starts[0].tasks[0], On("c", {0, 1}));
  EXPECT_EQ(WaitOf(d, 1)->reason, "waiting for a (drained: disk swap)");
  EXPECT_EQ(WaitOf(d, 2)->reason,
            "waiting for a (drained: disk swap) or 1 more; behind 1 earlier job in queue default");
}

// The drained node is the only one big enough: said, though smaller nodes are
// open. A job limited to some nodes counts the free GPUs it may use.
TEST(ScheduleTest, AJobOnlyADrainedNodeCouldHoldSaysSoAndNodeLimitsCountTheirOwnFreeGpus) {
  Snapshot s = Base({MakeNode("a", 8), MakeNode("b", 4), MakeNode("c", 2)});
  s.nodes[0].schedulable = false;
  s.nodes[0].unschedulable_reason = "drained: disk swap";
  s.running.push_back(Running(1, "u", {On("b", {0, 1, 2, 3})}, kNow - kHour, kNow + kHour));
  TaskDemand on_b = Demand(1, 4);
  on_b.nodes = {"b"};
  s.pending.push_back(Pending(2, "u", {Demand(1, 8)}));
  s.pending.push_back(Pending(3, "u", {on_b}));
  Decisions d = Schedule(s);
  EXPECT_EQ(WaitOf(d, 2)->reason, "waiting for a (drained: disk swap)");
  EXPECT_EQ(WaitOf(d, 3)->reason, "waiting for 4 GPUs (2 free, 0 of them where it may run); behind 1 earlier job in queue default");
  // A GPU-less task of the job (a parameter server) may go anywhere: the count
  // is still of the GPUs its GPU tasks may use.
  s.pending = {Pending(3, "u", {on_b, Demand(1, 0)})};
  EXPECT_EQ(WaitOf(Schedule(s), 3)->reason, "waiting for 4 GPUs (2 free, 0 of them where it may run)");
}

// Nodes where its owner has no Unix account are not the job's: it goes
// elsewhere, and says so when only they could hold it.
TEST(ScheduleTest, AJobAvoidsNodesWhereItsOwnerHasNoUnixAccount) {
  Snapshot s = Base({MakeNode("a", 8), MakeNode("b", 4), MakeNode("c", 4)});
  TaskDemand four = Demand(1, 4);
  four.not_nodes = {"a", "b"};
  TaskDemand eight = Demand(1, 8);
  eight.not_nodes = {"a"};
  s.pending.push_back(Pending(1, "u", {four}));
  s.pending.push_back(Pending(2, "u", {eight}));
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 1);
  EXPECT_EQ(d.starts[0].tasks[0], On("c", {0, 1, 2, 3}));
  EXPECT_EQ(WaitOf(d, 2)->reason, "its owner has no Unix account on a where it could run");
  // Without the account on b and c too: the other nodes are counted.
  four.not_nodes = {"a", "b", "c"};
  s.pending = {Pending(1, "u", {four})};
  EXPECT_EQ(WaitOf(Schedule(s), 1)->reason, "its owner has no Unix account on a or 2 more nodes where it could run");
}

TEST(ScheduleTest, StrictFifoStartsNothingBehindTheHead) {
  Snapshot s = Base({MakeNode("a", 4)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kNone;
  s.running.push_back(Running(1, "u", {On("a", {0, 1})}, kNow - kHour, kNow + kHour));
  s.pending.push_back(Pending(2, "u", {Demand(1, 4)}, kNow - 2 * kMin));
  s.pending.push_back(Pending(3, "u", {Demand(1, 1)}, kNow - kMin));
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(WaitOf(d, 2)->estimated_start_ms, kNow + kHour);
  EXPECT_EQ(WaitOf(d, 3)->reason, "behind job 2 (first in line; no backfill)");
}

TEST(ScheduleTest, EasyBackfillNeverDelaysTheHead) {
  // 4 GPUs; 2 busy until now+1h. Head wants 4 (starts at +1h). A short job
  // (30 min) may use the 2 free GPUs; a long one (2 h) may not.
  Snapshot s = Base({MakeNode("a", 4)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kEasy;
  s.running.push_back(Running(1, "u", {On("a", {0, 1})}, kNow - kHour, kNow + kHour));
  s.pending.push_back(Pending(2, "u", {Demand(1, 4)}, kNow - 3 * kMin));
  auto long_job = Pending(3, "u", {Demand(1, 2)}, kNow - 2 * kMin);
  long_job.meta.time_limit_ms = 2 * kHour;
  auto short_job = Pending(4, "u", {Demand(1, 2)}, kNow - kMin);
  short_job.meta.time_limit_ms = 30 * kMin;
  auto unlimited = Pending(5, "u", {Demand(1, 1)}, kNow - kMin / 2);
  s.pending.push_back(long_job);
  s.pending.push_back(short_job);
  s.pending.push_back(unlimited);
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 4);
  EXPECT_EQ(WaitOf(d, 2)->estimated_start_ms, kNow + kHour);
  EXPECT_NE(WaitOf(d, 3)->reason.find("kept for job 2"), std::string::npos) << WaitOf(d, 3)->reason;
  EXPECT_NE(WaitOf(d, 5), nullptr);  // no time limit: it could run past the head's start
  // Without backfill protection (skip), the long job takes the GPUs.
  s.policy.backfill = Backfill::kSkip;
  d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 3);
}

TEST(ScheduleTest, EasyProtectsTheFirstBlockedJobOfEachPartOfTheCluster) {
  // c (2 GPUs) is full until +5m; a (8 GPUs) has 4 busy until +3m. Job 2,
  // first in line, waits for c only; job 3 waits for all of a. Job 4 (2 GPUs
  // on a, no time limit) would delay job 3: job 2 waiting elsewhere must not
  // leave job 3 unprotected.
  Snapshot s = Base({MakeNode("a", 8), MakeNode("c", 2)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kEasy;
  s.running.push_back(Running(1, "u", {On("c", {0, 1})}, kNow - kHour, kNow + 5 * kMin));
  s.running.push_back(Running(9, "u", {On("a", {0, 1, 2, 3})}, kNow - kHour, kNow + 3 * kMin));
  auto on_c = Pending(2, "u", {Demand(1, 1)}, kNow - 3 * kMin);
  on_c.demands[0].nodes = {"c"};
  auto big = Pending(3, "u", {Demand(1, 8)}, kNow - 2 * kMin);
  big.demands[0].nodes = {"a"};
  big.meta.time_limit_ms = 5 * kMin;
  auto unlimited = Pending(4, "u", {Demand(1, 2)}, kNow - kMin);
  unlimited.demands[0].nodes = {"a"};
  auto short_job = Pending(5, "u", {Demand(1, 2)}, kNow - kMin / 2);
  short_job.demands[0].nodes = {"a"};
  short_job.meta.time_limit_ms = kMin;  // ends before job 3 can start
  s.pending = {on_c, big, unlimited, short_job};
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 5);
  EXPECT_EQ(WaitOf(d, 3)->estimated_start_ms, kNow + 3 * kMin);
  EXPECT_NE(WaitOf(d, 4)->reason.find("kept for job 3"), std::string::npos) << WaitOf(d, 4)->reason;
  // A parameter server (no GPUs) may run anywhere: it does not make job 2's
  // part of the cluster the whole of it.
  s.pending[0].demands.push_back(Demand(1, 0));
  d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 5);
  EXPECT_NE(WaitOf(d, 4)->reason.find("kept for job 3"), std::string::npos) << WaitOf(d, 4)->reason;
}

TEST(ScheduleTest, EasyProtectsOnlyTheFirstBlockedJobOfAPart) {
  // The classic rule where parts overlap: job 2 may use both nodes (planned on
  // a), so job 3, waiting for c only, is not protected, and job 4 (no time
  // limit) takes c's free GPU although job 3 then waits longer.
  Snapshot s = Base({MakeNode("a", 8), MakeNode("c", 2)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kEasy;
  s.running.push_back(Running(1, "u", {On("c", {0})}, kNow - kHour, kNow + 5 * kMin));
  s.running.push_back(Running(9, "u", {On("a", {0, 1, 2, 3})}, kNow - kHour, kNow + 3 * kMin));
  auto anywhere = Pending(2, "u", {Demand(1, 8)}, kNow - 3 * kMin);
  anywhere.meta.time_limit_ms = 5 * kMin;
  auto on_c = Pending(3, "u", {Demand(1, 2)}, kNow - 2 * kMin);
  on_c.demands[0].nodes = {"c"};
  auto unlimited = Pending(4, "u", {Demand(1, 1)}, kNow - kMin);
  unlimited.demands[0].nodes = {"c"};
  s.pending = {anywhere, on_c, unlimited};
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 4);
  // Conservative protects job 3 too.
  s.policy.backfill = Backfill::kConservative;
  EXPECT_TRUE(Schedule(s).starts.empty());
}

TEST(ScheduleTest, ConservativeBackfillProtectsEveryPlannedJob) {
  // a: 4 GPUs, 3 busy until +1h. Job 2 wants 4 (planned at +1h for 2 h), job 3
  // wants 4 (planned at +3h). One GPU is free now: a 4-hour job would delay
  // both, a 30-minute job delays neither.
  Snapshot s = Base({MakeNode("a", 4)});
  s.policy.order = Order::kFifo;
  s.policy.backfill = Backfill::kConservative;
  s.running.push_back(Running(1, "u", {On("a", {0, 1, 2})}, kNow - kHour, kNow + kHour));
  auto j2 = Pending(2, "u", {Demand(1, 4)}, kNow - 3 * kMin);
  j2.meta.time_limit_ms = 2 * kHour;
  auto j3 = Pending(3, "u", {Demand(1, 4)}, kNow - 2 * kMin);
  j3.meta.time_limit_ms = kHour;
  auto j4 = Pending(4, "u", {Demand(1, 1)}, kNow - kMin);
  j4.meta.time_limit_ms = 4 * kHour;  // would run into both
  auto j5 = Pending(5, "u", {Demand(1, 1)}, kNow - kMin / 2);
  j5.meta.time_limit_ms = 30 * kMin;  // ends before job 2 starts
  s.pending = {j2, j3, j4, j5};
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 5);
  EXPECT_EQ(WaitOf(d, 2)->estimated_start_ms, kNow + kHour);
  EXPECT_EQ(WaitOf(d, 3)->estimated_start_ms, kNow + 3 * kHour);
}

TEST(ScheduleTest, ReservedGpusFollowTheCalendarRules) {
  Snapshot s = Base({MakeNode("gpu-b", 2)});
  Reservation r{.id = 7, .user = "alice", .node = "gpu-b", .gpus = {0, 1},
                .start_ms = kNow + 2 * kHour, .end_ms = kNow + 4 * kHour};
  s.reservations.push_back(r);
  auto fits_before = Pending(1, "bob", {Demand(1, 1)});
  fits_before.meta.time_limit_ms = 2 * kHour;  // ends exactly at the start: allowed
  auto runs_into = Pending(2, "bob", {Demand(1, 1)});
  runs_into.meta.time_limit_ms = 3 * kHour;
  s.pending = {fits_before, runs_into};
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 1);
  EXPECT_EQ(WaitOf(d, 2)->reason, "gpu-b reserved by alice from " "2027-01-15T10:00:00Z until 2027-01-15T12:00:00Z");
  // Preemptible: allowed (it will be stopped when the reservation starts).
  s.pending[1].meta.preemptible = true;
  d = Schedule(s);
  EXPECT_EQ(d.starts.size(), 2u);
  // The owner's own job without a limit: allowed.
  s.pending = {Pending(3, "alice", {Demand(1, 2)})};
  d = Schedule(s);
  EXPECT_EQ(d.starts.size(), 1u);
}

TEST(ScheduleTest, AWaitNamesAReservationOnANodeTheJobMayUse) {
  Node a100 = MakeNode("gpu-a", 8), t4 = MakeNode("gpu-c", 2);
  a100.gpu_model = "NVIDIA A100-SXM4-80GB";
  t4.gpu_model = "Tesla T4";
  Snapshot s = Base({a100, t4});
  // admin's reservation on gpu-a now, another on gpu-c from an hour on.
  s.reservations.push_back(Reservation{.id = 1, .user = "admin", .node = "gpu-a", .gpus = {6, 7},
                                       .start_ms = kNow - kHour, .end_ms = kNow + kHour});
  s.reservations.push_back(Reservation{.id = 2, .user = "admin", .node = "gpu-c", .gpus = {0, 1},
                                       .start_ms = kNow + kHour, .end_ms = kNow + 4 * kHour});
  s.running.push_back(Running(1, "alice", {On("gpu-a", {0, 1, 2, 3, 4, 5})}));
  TaskDemand two_t4 = Demand(1, 2);
  two_t4.gpu_model = "T4";
  auto job = Pending(7, "bob", {two_t4});
  job.meta.time_limit_ms = 2 * kHour;  // runs into gpu-c's reservation
  s.pending.push_back(job);
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(WaitOf(d, 7)->reason, "gpu-c reserved by admin from 2027-01-15T09:00:00Z until 2027-01-15T12:00:00Z");
  EXPECT_EQ(WaitOf(d, 7)->estimated_start_ms, kNow + 4 * kHour);
}

TEST(ScheduleTest, ActiveReservationGpusGoToOthersOnlyWhenTheOwnerIsIdle) {
  Snapshot s = Base({MakeNode("gpu-b", 2)});
  Reservation r{.id = 7, .user = "alice", .node = "gpu-b", .gpus = {0, 1},
                .start_ms = kNow - kHour, .end_ms = kNow + kHour};
  s.reservations.push_back(r);
  auto j = Pending(1, "bob", {Demand(1, 1)});
  j.meta.preemptible = true;
  s.pending = {j};
  EXPECT_TRUE(Schedule(s).starts.empty());
  s.reservations[0].owner_idle = true;  // forgotten reservation
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  s.pending[0].meta.preemptible = false;  // only preemptible jobs may
  EXPECT_TRUE(Schedule(s).starts.empty());
}

TEST(ScheduleTest, OwnerReturningPreemptsJobsOnReservedGpus) {
  Snapshot s = Base({MakeNode("gpu-b", 4)});
  s.reservations.push_back(Reservation{.id = 7, .user = "alice", .node = "gpu-b", .gpus = {0, 1},
                                       .start_ms = kNow - kHour, .end_ms = kNow + kHour});
  auto on_reserved = Running(1, "bob", {On("gpu-b", {1})}, kNow - 30 * kMin);
  on_reserved.meta.preemptible = true;
  auto elsewhere = Running(2, "bob", {On("gpu-b", {2})}, kNow - 30 * kMin);
  elsewhere.meta.preemptible = true;
  s.running = {on_reserved, elsewhere};
  s.reservations[0].owner_idle = true;
  EXPECT_TRUE(Schedule(s).preemptions.empty());
  s.reservations[0].owner_idle = false;  // alice is back
  Decisions d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 1);
  EXPECT_EQ(d.preemptions[0].reason, "reservation 7 of alice on gpu-b: its owner is using the GPUs");
  // A job that started before the reservation is told it started.
  s.running[0].started_ms = kNow - 2 * kHour;
  EXPECT_EQ(Schedule(s).preemptions[0].reason, "reservation 7 of alice on gpu-b started");
}

// The owner of an idle reservation submits a job it needs: the borrowers on
// the reserved GPUs are stopped at once (no wait for the preemption threshold,
// whatever they order), only on nodes the job may use.
TEST(ScheduleTest, AnOwnersWaitingJobReclaimsAnIdleReservationAtOnce) {
  Snapshot s = Base({MakeNode("gpu-b", 2), MakeNode("gpu-c", 2)});
  s.reservations.push_back(Reservation{.id = 7, .user = "alice", .node = "gpu-b", .gpus = {0, 1},
                                       .start_ms = kNow - kHour, .end_ms = kNow + kHour, .owner_idle = true});
  auto borrower = Running(1, "bob", {On("gpu-b", {0, 1})}, kNow - 30 * kMin);
  borrower.meta.preemptible = true;
  auto other = Running(2, "bob", {On("gpu-c", {0, 1})}, kNow - 30 * kMin);
  other.meta.preemptible = true;
  s.running = {borrower, other};
  s.queues = {Queue{}, Queue{.name = "high", .priority = 10}};
  s.running[0].meta.queue = "high";  // orders before alice's job: plain preemption never takes it
  s.running[1].meta.queue = "high";
  auto mine = Pending(3, "alice", {Demand(1, 1)}, kNow - 1000);  // just submitted
  s.pending = {mine};
  Decisions d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 1);
  EXPECT_EQ(d.preemptions[0].reason, "reservation 7 of alice on gpu-b: its owner has a job waiting for the GPUs");
  EXPECT_EQ(WaitOf(d, 3)->reason, "stopping job(s) 1 that borrow its owner's reservation");
  EXPECT_EQ(d.reclaimed, std::vector<int64_t>{7});
  // A reservation rule: it holds with policy preemption off too.
  s.policy.preempt = false;
  Decisions off = Schedule(s);
  ASSERT_EQ(off.preemptions.size(), 1u);
  EXPECT_EQ(off.preemptions[0].id, 1);
  EXPECT_EQ(off.reclaimed, std::vector<int64_t>{7});
  // Passes that do not explain stop early once the cluster is full, but not
  // before an idle owner's job, whatever it orders.
  for (bool preempt : {true, false}) {
    s.policy.preempt = preempt;
    s.policy.explain = false;
    Decisions quick = Schedule(s);
    ASSERT_EQ(quick.preemptions.size(), 1u) << "preempt " << preempt;
    EXPECT_EQ(quick.reclaimed, std::vector<int64_t>{7});
  }
  s.policy.explain = true;
  s.policy.preempt = true;
  // A job of hers for other nodes only leaves the borrower alone.
  s.pending[0].demands[0].nodes = {"gpu-c"};
  EXPECT_TRUE(Schedule(s).preemptions.empty());
  // So does one that would not fit even without it (it would borrow the GPUs
  // again at the next pass).
  s.pending[0].demands[0] = Demand(1, 2);
  s.pending[0].demands[0].nodes = {"gpu-b"};
  s.running[0].tasks = {On("gpu-b", {0})};  // the other reserved GPU is free: fits
  EXPECT_EQ(Schedule(s).preemptions.size(), 1u);
  s.running.push_back(Running(4, "carl", {On("gpu-b", {1})}));  // not preemptible: GPU 1 stays taken
  s.reservations[0].gpus = {0};
  EXPECT_TRUE(Schedule(s).preemptions.empty());
  EXPECT_TRUE(Schedule(s).reclaimed.empty());
}

// A workstation with two kinds of cards: GPUs 0 and 2 are 2080 Tis, 1 and 3
// are 1080 Tis.
Node Workstation() {
  Node n = MakeNode("ws", 4);
  n.gpu_model = "";
  n.gpu_models = {"NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce GTX 1080 Ti",
                  "NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce GTX 1080 Ti"};
  return n;
}

TEST(ScheduleTest, OnANodeOfMixedModelsJobsWaitPlanAndPreemptForTheirModel) {
  Snapshot s = Base({Workstation()});
  TaskDemand two_2080 = Demand(1, 2), one_1080 = Demand(1, 1);
  two_2080.gpu_model = "2080";
  one_1080.gpu_model = "1080";
  // A 2080 in use until an hour from now: two are free in all, one a 2080.
  s.running.push_back(Running(1, "bob", {On("ws", {0})}, kNow - kHour, kNow + kHour));
  s.pending.push_back(Pending(2, "alice", {two_2080}));
  s.pending.push_back(Pending(3, "alice", {one_1080}));
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 3);
  EXPECT_EQ(d.starts[0].tasks[0], On("ws", {1}));
  const Wait* w = WaitOf(d, 2);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->reason, "waiting for 2 free 2080 GPUs on one node (largest free block: 1 on ws)");
  EXPECT_EQ(w->estimated_start_ms, kNow + kHour);

  // Preemption frees GPUs of the model asked: job 6 ran longest (the first
  // victim) but holds the 1080s; job 7 holds the 2080 the waiting job needs.
  s = Base({Workstation()});
  s.policy.preempt_after_ms = kMin;
  auto r6 = Running(6, "bob", {On("ws", {1, 3})}, kNow - 5 * kHour);
  auto r7 = Running(7, "bob", {On("ws", {0})}, kNow - 2 * kHour);
  r6.meta.preemptible = r7.meta.preemptible = true;
  s.running = {r6, r7};
  s.pending = {Pending(2, "alice", {two_2080}, kNow - 10 * kMin)};
  d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 7);
  EXPECT_TRUE(d.starts.empty());
}

// A GPU that two running jobs claim (a snapshot should not hold one, but the
// server's view can lag) is free only when both have let go: preempting or
// ending one of them does not give it to anyone.
TEST(ScheduleTest, AGpuTwoRunningJobsClaimIsNotGivenWhenOneLetsGo) {
  Snapshot s = Base({MakeNode("a", 2)});
  s.policy.preempt_after_ms = 5 * kMin;
  auto victim = Running(1, "u", {On("a", {0, 1})}, kNow - 5 * kHour, kNow + kHour);
  victim.meta.preemptible = true;
  auto other = Running(2, "w", {On("a", {1})}, kNow - 6 * kHour, kNow + 3 * kHour);
  s.running = {victim, other};
  s.pending = {Pending(3, "v", {Demand(1, 2)}, kNow - 10 * kMin)};
  s.pending[0].meta.time_limit_ms = kHour;
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_TRUE(d.preemptions.empty());  // stopping job 1 alone frees one GPU
  // Nor does a sweep count on it: no estimate at job 1's end.
  ASSERT_NE(WaitOf(d, 3), nullptr);
  EXPECT_EQ(WaitOf(d, 3)->estimated_start_ms, 0) << WaitOf(d, 3)->reason;
  // Without the second claim job 1 is preempted for it.
  s.running = {victim};
  d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 1);
}

// A job that preempts holds its GPUs from now until its own end: a job planned
// after it is estimated at that end, not at its victim's expected end.
TEST(ScheduleTest, EstimatesWaitForTheEndOfAJobThatPreempts) {
  Snapshot s = Base({MakeNode("a", 4)});
  s.policy.preempt_after_ms = 0;
  auto r = Running(1, "u", {On("a", {0, 1, 2, 3})}, kNow - 3 * kHour, kNow + kHour);
  r.meta.preemptible = true;
  s.running = {r};
  auto a = Pending(2, "v", {Demand(1, 4)}, kNow - 10 * kMin);
  a.meta.time_limit_ms = 2 * kHour;
  auto b = Pending(3, "w", {Demand(1, 2)}, kNow - 5 * kMin);
  b.meta.time_limit_ms = kHour;
  s.pending = {a, b};
  const Decisions d = Schedule(s);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(WaitOf(d, 2)->reason, "preempting job(s) 1 for it");
  ASSERT_NE(WaitOf(d, 3), nullptr);
  EXPECT_EQ(WaitOf(d, 3)->estimated_start_ms, kNow + 2 * kHour);
}

TEST(ScheduleTest, QuotasAndQueueLimitsHoldJobsWithoutBlockingOthers) {
  Snapshot s = Base({MakeNode("a", 8)});
  s.user_quotas["alice"] = Quota{.max_gpus = 2};
  s.group_quotas["ml"] = Quota{.max_gpus = 0, .max_gpu_hours_per_period = 100};
  s.group_period_gpu_hours["ml"] = 120;
  s.running.push_back(Running(1, "alice", {On("a", {0})}));
  auto over = Pending(2, "alice", {Demand(1, 2)}, kNow - 3 * kMin);
  auto group = Pending(3, "carol", {Demand(1, 1)}, kNow - 2 * kMin);
  group.meta.group = "ml";
  auto ok = Pending(4, "bob", {Demand(1, 1)}, kNow - kMin);
  s.pending = {over, group, ok};
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 4);
  EXPECT_EQ(WaitOf(d, 2)->reason, "user quota: 1 GPU in use, limit 2");
  EXPECT_EQ(WaitOf(d, 3)->reason, "group ml quota: 120 of 100 GPU-hours used this period");
  // Fractions of an hour are shown, not rounded to 0.
  s.group_quotas["ml"].max_gpu_hours_per_period = 0.1;
  s.group_period_gpu_hours["ml"] = 0.594;
  EXPECT_EQ(WaitOf(Schedule(s), 3)->reason, "group ml quota: 0.59 of 0.1 GPU-hours used this period");
  // Small ones keep two significant digits: over the limit reads as over it.
  s.group_quotas["ml"].max_gpu_hours_per_period = 0.005;
  s.group_period_gpu_hours["ml"] = 0.00834;
  EXPECT_EQ(WaitOf(Schedule(s), 3)->reason, "group ml quota: 0.0083 of 0.005 GPU-hours used this period");
  s.queues[0].max_gpus = 1;
  s.pending = {ok};
  EXPECT_EQ(WaitOf(Schedule(s), 4)->reason, "queue default limit: 1 GPU in use, limit 1");
  // A quota or limit lowered below a waiting job says it cannot start as it is.
  s.queues[0].max_gpus = 0;
  s.user_quotas["alice"].max_gpus = 1;
  s.pending = {over};
  EXPECT_EQ(WaitOf(Schedule(s), 2)->reason,
            "user quota: the job needs 2 GPUs at once; user alice may hold 1 (it starts only if the quota is raised)");
  s.user_quotas.clear();
  s.group_quotas["ml"] = Quota{.max_gpus = 1};
  over.meta.group = "ml";
  s.pending = {over};
  EXPECT_EQ(WaitOf(Schedule(s), 2)->reason,
            "group ml quota: the job needs 2 GPUs at once; group ml may hold 1 (it starts only if the quota is raised)");
  s.group_quotas.clear();
  s.queues[0].max_gpus = 1;
  EXPECT_EQ(WaitOf(Schedule(s), 2)->reason,
            "queue default limit: the job needs 2 GPUs at once; the queue holds 1 (it starts only if the limit is raised)");
}

// A job held by a GPUs-at-once limit gets an estimate: where it fits from when
// enough of its owner's (group's, queue's) running jobs are expected to end.
TEST(ScheduleTest, AJobOverAQuotaIsEstimatedFromWhenItsOwnersJobsEnd) {
  Snapshot s = Base({MakeNode("a", 4)});
  s.user_quotas["alice"] = Quota{.max_gpus = 3};
  s.running.push_back(Running(1, "alice", {On("a", {0, 1})}, kNow - kHour, kNow + kHour));
  s.pending = {Pending(2, "alice", {Demand(1, 2)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(WaitOf(d, 2)->reason, "user quota: 2 GPUs in use, limit 3");
  EXPECT_EQ(WaitOf(d, 2)->estimated_start_ms, kNow + kHour);
  // The GPUs count too: bob holds the other two for three hours.
  s.running.push_back(Running(3, "bob", {On("a", {2, 3})}, kNow - kHour, kNow + 3 * kHour));
  s.pending[0].demands = {Demand(1, 3)};
  EXPECT_EQ(WaitOf(Schedule(s), 2)->estimated_start_ms, kNow + 3 * kHour);
  // The same for a queue limit and a group quota.
  s.user_quotas.clear();
  s.queues[0].max_gpus = 3;
  EXPECT_EQ(WaitOf(Schedule(s), 2)->reason, "queue default limit: 4 GPUs in use, limit 3");
  EXPECT_EQ(WaitOf(Schedule(s), 2)->estimated_start_ms, kNow + 3 * kHour);
  s.queues[0].max_gpus = 0;
  s.group_quotas["ml"] = Quota{.max_gpus = 3};
  s.running[0].meta.group = "ml";
  s.pending[0].meta.group = "ml";
  EXPECT_EQ(WaitOf(Schedule(s), 2)->estimated_start_ms, kNow + 3 * kHour);
  // No estimate when a job of hers has no time limit, or the GPU-hours are used up.
  s.running[0].expected_end_ms = 0;
  EXPECT_EQ(WaitOf(Schedule(s), 2)->estimated_start_ms, 0);
  s.running[0].expected_end_ms = kNow + kHour;
  s.group_quotas["ml"].max_gpu_hours_per_period = 10;
  s.group_period_gpu_hours["ml"] = 12;
  d = Schedule(s);
  EXPECT_EQ(WaitOf(d, 2)->reason, "group ml quota: 2 GPUs in use, limit 3");
  EXPECT_EQ(WaitOf(d, 2)->estimated_start_ms, 0);
}

// A queue changed since a job's submission: the job waits while the queue no
// longer admits its owner (the shell says so) or allows its time limit.
TEST(ScheduleTest, AJobWaitsWhileItsQueueNoLongerAllowsIt) {
  Snapshot s = Base({MakeNode("a", 2)});
  s.queues = {Queue{}, Queue{.name = "lab", .users = {"bob"}, .groups = {"ml"}, .max_time_limit_ms = 5 * kMin}};
  auto p = Pending(1, "alice", {Demand(1, 1)});
  p.meta.queue = "lab";
  p.meta.time_limit_ms = 10 * kMin;
  p.queue_refuses_owner = true;
  s.pending = {p};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(WaitOf(d, 1)->reason,
            "queue lab now admits users bob and groups ml only, not alice (it starts if the queue admits them again)");
  s.pending[0].queue_refuses_owner = false;
  d = Schedule(s);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(WaitOf(d, 1)->reason, "time limit 10m: queue lab now allows at most 5m (it starts if the maximum is raised)");
  s.pending[0].meta.time_limit_ms = 0;
  EXPECT_EQ(WaitOf(Schedule(s), 1)->reason, "no time limit: queue lab now allows at most 5m (it starts if the maximum is raised)");
  s.pending[0].meta.time_limit_ms = 5 * kMin;
  EXPECT_EQ(Schedule(s).starts.size(), 1u);
  // Who a queue admits.
  EXPECT_TRUE(s.queues[1].Admits("bob", {}));
  EXPECT_TRUE(s.queues[1].Admits("carl", {"vision", "ml"}));
  EXPECT_FALSE(s.queues[1].Admits("carl", {"vision"}));
  EXPECT_TRUE(s.queues[0].Admits("anyone", {}));
}

TEST(ScheduleTest, BadInputWaitsWithAReason) {
  Snapshot s = Base({MakeNode("a", 8)});
  auto p = Pending(1, "u", {Demand(1, 1)});
  p.meta.queue = "nope";
  auto backoff = Pending(2, "u", {Demand(1, 1)});
  backoff.not_before_ms = kNow + 5000;
  s.pending = {p, backoff};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(WaitOf(d, 1)->reason, "unknown queue 'nope'");
  EXPECT_EQ(WaitOf(d, 2)->estimated_start_ms, kNow + 5000);
}

TEST(ScheduleTest, FairShareOrdersTheLighterUserFirst) {
  Snapshot s = Base({MakeNode("a", 1)});
  s.fairshare.user_usage = {{"heavy", 1e9}, {"light", 1e6}};
  s.pending = {Pending(1, "heavy", {Demand(1, 1)}, kNow - 2 * kMin), Pending(2, "light", {Demand(1, 1)}, kNow - kMin)};
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 2);
  EXPECT_NE(WaitOf(d, 1)->reason.find("waiting for 1 GPU"), std::string::npos);
}

TEST(ScheduleTest, ManyPendingJobsGetPositionsAndBoundedPlanning) {
  Snapshot s = Base({MakeNode("a", 8)});
  s.policy.plan_depth = 3;
  s.running.push_back(Running(1, "u", {On("a", {0, 1, 2, 3, 4, 5, 6, 7})}, kNow - kHour, kNow + kHour));
  for (int i = 0; i < 10; ++i) {
    auto p = Pending(10 + i, "u", {Demand(1, 8)}, kNow - kHour + i);
    p.meta.time_limit_ms = kHour;
    s.pending.push_back(p);
  }
  Decisions d = Schedule(s);
  ASSERT_EQ(d.waits.size(), 10u);
  EXPECT_EQ(d.waits[0].estimated_start_ms, kNow + kHour);
  EXPECT_EQ(d.waits[1].estimated_start_ms, kNow + 2 * kHour);
  EXPECT_EQ(d.waits[2].estimated_start_ms, kNow + 3 * kHour);
  EXPECT_EQ(d.waits[3].estimated_start_ms, 0);  // past plan_depth
  EXPECT_EQ(d.waits[9].position, 10u);
  EXPECT_NE(d.waits[9].reason.find("behind 9 earlier jobs in queue default"), std::string::npos);
}

}  // namespace
}  // namespace rota::sched

namespace rota::sched {
namespace {

using namespace testing;  // NOLINT

TEST(ScheduleTest, JobsOfOneShapeShareWhatFailedButNotTheirReservations) {
  // Both jobs ask the same (1 GPU); the only GPUs are reserved by bob now.
  // Alice's job may not use them; bob's, ordered after it, still starts.
  Snapshot s = Base({MakeNode("a", 2)});
  s.policy.order = Order::kFifo;
  s.reservations.push_back(Reservation{.id = 3, .user = "bob", .node = "a", .gpus = {0, 1},
                                       .start_ms = kNow - kHour, .end_ms = kNow + kHour});
  s.pending = {Pending(1, "alice", {Demand(1, 1)}, kNow - 2 * kMin), Pending(2, "bob", {Demand(1, 1)}, kNow - kMin)};
  Decisions d = Schedule(s);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].id, 2);
  EXPECT_NE(WaitOf(d, 1)->reason.find("a reserved by bob"), std::string::npos) << WaitOf(d, 1)->reason;
  // A shape that does not fit at all tells every job of it so; the GPUs
  // reserved by others are named per job.
  s.pending = {Pending(4, "alice", {Demand(1, 3)}, kNow - 2 * kMin), Pending(5, "bob", {Demand(1, 3)}, kNow - kMin)};
  d = Schedule(s);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(WaitOf(d, 4)->reason, "waiting for 3 GPUs (2 free, 2 of them reserved by bob until 2027-01-15T09:00:00Z)");
  EXPECT_EQ(WaitOf(d, 5)->reason, "waiting for 3 GPUs (2 free); behind 1 earlier job in queue default");
}

TEST(ScheduleTest, JobsOfOneShapeShareFailedPreemptionsOnlyWithTheSameBlocks) {
  // Carol's preemptible job holds both GPUs; bob's reservation begins in an
  // hour. Alice's 2-hour job may not run on the reserved GPUs, so preempting
  // carol does not help it; bob's job of the same shape, after it, may.
  Snapshot s = Base({MakeNode("a", 2)});
  s.policy.preempt_after_ms = 5 * kMin;
  auto carol = Running(9, "carol", {On("a", {0, 1})}, kNow - 5 * kHour);
  carol.meta.preemptible = true;
  s.running = {carol};
  s.reservations.push_back(Reservation{.id = 3, .user = "bob", .node = "a", .gpus = {0, 1},
                                       .start_ms = kNow + kHour, .end_ms = kNow + 3 * kHour});
  auto alice = Pending(1, "alice", {Demand(1, 2)}, kNow - 20 * kMin);
  auto bob = Pending(2, "bob", {Demand(1, 2)}, kNow - 10 * kMin);
  alice.meta.time_limit_ms = bob.meta.time_limit_ms = 2 * kHour;
  s.pending = {alice, bob};
  Decisions d = Schedule(s);
  ASSERT_EQ(WaitOf(d, 1)->position, 1u);  // alice's is tried first
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].id, 9);
  EXPECT_EQ(WaitOf(d, 2)->reason, "preempting job(s) 9 for it");
  EXPECT_EQ(WaitOf(d, 1)->reason.find("preempting"), std::string::npos) << WaitOf(d, 1)->reason;
}

TEST(ScheduleTest, EstimatesPlanAroundReservationsAndEarlierPlans) {
  // a: 4 GPUs busy until +1h; carol reserved GPUs 0-1 from +1h to +3h.
  //  - job 1 (4 GPUs, 1 h) cannot start before the reservation ends: +3h;
  //  - job 2 (2 GPUs, 1 h) fits GPUs 2-3 at +1h and ends before job 1 starts;
  //  - job 3 (2 GPUs, no limit) would run into job 1's plan: after it, +4h.
  Snapshot s = Base({MakeNode("a", 4)});
  s.policy.order = Order::kFifo;
  s.running.push_back(Running(9, "dave", {On("a", {0, 1, 2, 3})}, kNow - kHour, kNow + kHour));
  s.reservations.push_back(Reservation{.id = 4, .user = "carol", .node = "a", .gpus = {0, 1},
                                       .start_ms = kNow + kHour, .end_ms = kNow + 3 * kHour});
  auto j1 = Pending(1, "alice", {Demand(1, 4)}, kNow - 3 * kMin);
  j1.meta.time_limit_ms = kHour;
  auto j2 = Pending(2, "alice", {Demand(1, 2)}, kNow - 2 * kMin);
  j2.meta.time_limit_ms = kHour;
  auto j3 = Pending(3, "alice", {Demand(1, 2)}, kNow - kMin);
  s.pending = {j1, j2, j3};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(WaitOf(d, 1)->estimated_start_ms, kNow + 3 * kHour);
  EXPECT_EQ(WaitOf(d, 2)->estimated_start_ms, kNow + kHour);
  EXPECT_EQ(WaitOf(d, 3)->estimated_start_ms, kNow + 4 * kHour);
  // A 30-minute preemptible job: at +1h GPUs 0-1 are reserved (it may use
  // them only before the reservation starts) and 2-3 are job 2's; at +2h
  // 2-3 are free and it ends before job 1 starts.
  auto j4 = Pending(5, "bob", {Demand(1, 2)}, kNow);
  j4.meta.time_limit_ms = 30 * kMin;
  j4.meta.preemptible = true;
  s.pending.push_back(j4);
  d = Schedule(s);
  EXPECT_EQ(WaitOf(d, 5)->estimated_start_ms, kNow + 2 * kHour);
}

}  // namespace
}  // namespace rota::sched
