#include "sim/replay.h"

#include <algorithm>

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <sstream>

#include "common/time_util.h"
#include "sim/simulate.h"

namespace rota::sim {
namespace {

constexpr int64_t kH = 3'600'000;

TraceJob Job(int64_t submit_s, int64_t duration_s, uint32_t gpus, const std::string& user = "u") {
  TraceJob j;
  j.submit_ms = submit_s * 1000;
  j.duration_ms = duration_s * 1000;
  j.gpus = gpus;
  j.user = user;
  return j;
}

ReplayResult RunPolicy(const std::vector<TraceJob>& jobs, const std::string& policy, ReplayOptions o) {
  auto spec = PolicyByName(policy);
  EXPECT_TRUE(spec.ok());
  auto r = Replay(jobs, *spec, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : ReplayResult{};
}

TEST(ReplayTest, AWindowOfCenturiesIsRefusedNotAllocated) {
  // Two jobs 317,000 years apart once made the hourly series ask for 22 GB.
  std::vector<TraceJob> jobs = {Job(0, 60, 1), Job(9'999'999'999'999 / 1000, 60, 1)};
  ReplayOptions o;
  o.pooled_gpus = 4;
  auto spec = PolicyByName("fifo");
  ASSERT_TRUE(spec.ok());
  auto r = Replay(jobs, *spec, o);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("at most 3,660"), std::string::npos) << r.status().message();
}

// A shell shows a long replay's progress from these calls.
TEST(ReplayTest, ProgressIsReportedUntilEveryJobHasArrivedAndLeft) {
  std::vector<TraceJob> jobs = {Job(0, 60, 2), Job(10, 60, 2), Job(20, 60, 1)};
  ReplayOptions o;
  o.pooled_gpus = 2;
  std::vector<std::pair<size_t, size_t>> seen;  // arrived, in the system
  o.progress = [&](size_t arrived, size_t total, size_t in_system) {
    EXPECT_EQ(total, 3u);
    seen.emplace_back(arrived, in_system);
  };
  RunPolicy(jobs, "fifo", o);
  ASSERT_GE(seen.size(), 4u);
  EXPECT_EQ(seen.front(), (std::pair<size_t, size_t>{1, 1}));
  EXPECT_EQ(seen.back(), (std::pair<size_t, size_t>{3, 0}));
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end(), [](auto a, auto b) { return a.first < b.first; }));
}

TEST(ReplayTest, FifoBlocksAndEasyBackfillsAroundTheHead) {
  // 4 GPUs. Job A holds 2 for 1 h; B wants 4; C wants 2 for 30 min.
  std::vector<TraceJob> jobs = {Job(0, 3600, 2), Job(1, 3600, 4), Job(2, 1800, 2)};
  ReplayOptions o;
  o.pooled_gpus = 4;
  ReplayResult fifo = RunPolicy(jobs, "fifo", o);
  ReplayResult easy = RunPolicy(jobs, "easy", o);
  // FIFO: A 0-1h, B 1-2h, C 2-2.5h. EASY: C backfills at once (ends before B).
  EXPECT_NEAR(fifo.jct_h.avg * 3, 1 + (2 - 1.0 / 3600) + (2.5 - 2.0 / 3600), 1e-6);
  EXPECT_NEAR(easy.jct_h.avg * 3, 1 + (2 - 1.0 / 3600) + 0.5, 1e-6);
  EXPECT_EQ(fifo.preemptions_per_job, 0);
  // Every pass saw one or two pending jobs: one bucket, queues up to 10.
  ASSERT_EQ(fifo.pass_ms_by_queue.size(), 1u);
  EXPECT_EQ(fifo.pass_ms_by_queue[0].queue_max, 10u);
  EXPECT_EQ(fifo.pass_ms_by_queue[0].passes, fifo.passes);
  EXPECT_GT(fifo.passes, 0u);
  // Busy GPUs while some job waits. FIFO: B waits [1 s, 1 h) beside A (2 of 4
  // busy), C waits [1 h, 2 h) behind B (4 busy). EASY: B waits [1 s, 1 h): A
  // alone for 1 s, A and C until 1802 s, then A alone.
  EXPECT_NEAR(fifo.utilisation_while_waiting, (2.0 * 3599 + 4.0 * 3600) / (4.0 * 7199), 1e-9);
  EXPECT_NEAR(easy.utilisation_while_waiting, (2.0 * 1 + 4.0 * 1800 + 2.0 * 1798) / (4.0 * 3599), 1e-9);
}

TEST(ReplayTest, PreemptionCostsProgressAndIsCounted) {
  // 1 GPU: a long job, then a short one that LAS and SRTF run first.
  std::vector<TraceJob> jobs = {Job(0, 3 * 3600, 1), Job(3600, 600, 1)};
  ReplayOptions o;
  o.pooled_gpus = 1;
  o.preempt_cost_ms = 60'000;
  ReplayResult srtf = RunPolicy(jobs, "srtf", o);
  EXPECT_DOUBLE_EQ(srtf.preemptions_per_job, 0.5);
  EXPECT_NEAR(srtf.lost_gpu_hours, 60.0 / 3600, 1e-9);
  // The long job: 3 h of work + 10 min waiting + 1 min redone.
  EXPECT_NEAR(srtf.jct_h.max, 3 + 10.0 / 60 + 1.0 / 60, 1e-6);
  ReplayResult fifo = RunPolicy(jobs, "fifo", o);
  EXPECT_EQ(fifo.lost_gpu_hours, 0);
}

TEST(ReplayTest, RotaPreemptsOnceAJobHasWaitedItsThresholdEvenWithoutOtherEvents) {
  // 1 GPU. A 3 h job, then at 5,000 s (attained 5,000 GPU-s: LAS level 1,
  // crossing into level 2 at 7,200 s) a 10-minute job, which orders first.
  // Nothing else happens until 7,200 s: the short job preempts the moment it
  // has waited preempt_after, as on the live server's next tick.
  std::vector<TraceJob> jobs = {Job(0, 3 * 3600, 1), Job(5000, 600, 1)};
  ReplayOptions o;
  o.pooled_gpus = 1;
  o.preempt_cost_ms = 0;
  auto spec = PolicyByName("rota");
  ASSERT_TRUE(spec.ok());
  const int64_t after_s = spec->policy.preempt_after_ms / 1000;
  ASSERT_GT(after_s, 0);
  ASSERT_LT(5000 + after_s, 7200);
  auto r = Replay(jobs, *spec, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r->preemptions_per_job, 0.5);
  // The short job: waited after_s, ran 600 s. The long one: 3 h of work plus
  // the short job's run.
  EXPECT_NEAR(r->jct_h.avg * 2, (after_s + 600 + 3 * 3600 + 600) / 3600.0, 1e-9);
  // The GPU never idled; while the short job waited it was busy.
  EXPECT_DOUBLE_EQ(r->idle_while_waiting, 0);
}

TEST(ReplayTest, IdleWhileWaitingCountsFreeGpusOnlyWhileWorkWaits) {
  // 4 GPUs, FIFO. A holds 2 for 1 h; B (4 GPUs) waits behind it with 2 idle;
  // C (1 GPU, 1 h later) is the window's last submission. Window [0, 3600 s).
  std::vector<TraceJob> jobs = {Job(0, 3600, 2), Job(1, 3600, 4), Job(3600, 60, 1)};
  ReplayOptions o;
  o.pooled_gpus = 4;
  ReplayResult fifo = RunPolicy(jobs, "fifo", o);
  // [0, 1 s): A alone, nothing waits. [1 s, 3600 s): B waits, 2 GPUs idle.
  EXPECT_NEAR(fifo.idle_while_waiting, 2.0 * 3599 / (4.0 * 3600), 1e-9);
  EXPECT_NEAR(fifo.utilisation, 2.0 * 3600 / (4.0 * 3600), 1e-9);
}

TEST(ReplayTest, UtilisationCoversTheWindowAskedFor) {
  // One node of 8, FIFO: 8 GPUs for 2 h from 12:00, 1 GPU for 10 min from
  // 13:00 (it waits until 14:00). Asked for a day, the day is the window; not
  // the 1 h between the two submissions.
  std::vector<TraceJob> jobs = {Job(12 * 3600, 7200, 8), Job(13 * 3600, 600, 1)};
  ReplayOptions o;
  o.nodes = 1;
  o.from_ms = 0;
  o.to_ms = 24 * kH;
  ReplayResult day = RunPolicy(jobs, "fifo", o);
  EXPECT_DOUBLE_EQ(day.window_h, 24);
  EXPECT_NEAR(day.utilisation, (8.0 * 7200 + 600) / (8.0 * 24 * 3600), 1e-12);
  // From 13:00 to 14:00 the small job waited with every GPU busy.
  EXPECT_NEAR(day.idle_while_waiting, 0, 1e-12);
  EXPECT_NEAR(day.utilisation_while_waiting, 1, 1e-12);
  o.from_ms = o.to_ms = 0;
  ReplayResult between = RunPolicy(jobs, "fifo", o);
  EXPECT_DOUBLE_EQ(between.window_h, 1);
  EXPECT_NEAR(between.utilisation, 1, 1e-12);
}

TEST(ReplayTest, UndefinedFiguresAreNaNNotZeroOrOne) {
  // Every job submitted at once, no window asked for: a window of no length.
  // Nothing ever waits: no utilisation while waiting either.
  std::vector<TraceJob> jobs = {Job(0, 3600, 4), Job(0, 1800, 4)};
  ReplayOptions o;
  o.nodes = 1;
  ReplayResult r = RunPolicy(jobs, "fifo", o);
  EXPECT_TRUE(std::isnan(r.utilisation)) << r.utilisation;
  EXPECT_TRUE(std::isnan(r.idle_while_waiting)) << r.idle_while_waiting;
  EXPECT_TRUE(std::isnan(r.utilisation_while_waiting)) << r.utilisation_while_waiting;
  EXPECT_NEAR(r.jct_h.avg, 0.75, 1e-12);
}

TEST(ReplayTest, NodeLayoutSplitsBigJobsAndDropsTooBigOnes) {
  std::vector<TraceJob> jobs = {Job(0, 60, 16), Job(0, 60, 64)};
  ReplayOptions o;
  o.nodes = 2;
  o.gpus_per_node = 8;
  ReplayResult r = RunPolicy(jobs, "fifo", o);
  EXPECT_EQ(r.jobs, 1u);
  EXPECT_EQ(r.dropped, 1u);
  EXPECT_NEAR(r.jct_h.avg, 60.0 / 3600, 1e-9);
}

TraceJob InQueue(TraceJob j, const std::string& queue) {
  j.queue = queue;
  return j;
}

TEST(ReplayTest, QueuesOfTheTraceOrderJobsAndCapTheirGpus) {
  // One GPU; at once: two jobs of queue "batch", then one of "urgent" (priority 10).
  std::vector<TraceJob> jobs = {InQueue(Job(0, 3600, 1), "batch"), InQueue(Job(0, 3600, 1), "batch"),
                                InQueue(Job(0, 3600, 1), "urgent")};
  ReplayOptions o;
  o.pooled_gpus = 1;
  o.queues = {sched::Queue{.name = "urgent", .priority = 10}};
  ReplayResult r = RunPolicy(jobs, "rota", o);
  ASSERT_EQ(r.by_queue.size(), 2u);
  EXPECT_EQ(r.by_queue[0].queue, "batch");  // "batch": not in the list, the default's settings
  EXPECT_EQ(r.by_queue[0].jobs, 2u);
  EXPECT_EQ(r.by_queue[1].queue, "urgent");
  EXPECT_NEAR(r.by_queue[1].jct_h.avg, 1.0, 1e-6);  // it went first
  EXPECT_GE(r.by_queue[0].jct_h.avg, (2 + 3) / 2.0 - 1e-6);  // after it (preemptions may add)
  // Without the queue list both queues are equal: the urgent job is not first.
  ReplayResult equal = RunPolicy(jobs, "rota", ReplayOptions{.pooled_gpus = 1});
  ASSERT_EQ(equal.by_queue.size(), 2u);
  EXPECT_GT(equal.by_queue[1].jct_h.avg, 1.5);

  // A queue capped at 1 GPU on 2 free GPUs: its jobs run one after the other.
  std::vector<TraceJob> capped = {InQueue(Job(0, 3600, 1), "small"), InQueue(Job(0, 3600, 1), "small"),
                                  Job(0, 60, 1)};
  o = ReplayOptions{.pooled_gpus = 2};
  o.queues = {sched::Queue{.name = "small", .max_gpus = 1}};
  r = RunPolicy(capped, "rota", o);
  ASSERT_EQ(r.by_queue.size(), 2u);
  EXPECT_EQ(r.by_queue[1].queue, "small");
  EXPECT_NEAR(r.by_queue[1].wait_h.avg, 0.5, 1e-6);
  EXPECT_NEAR(r.by_queue[0].jct_h.avg, 60.0 / 3600, 1e-6);  // "default" ran beside it
  // A job of more GPUs than its queue may hold would wait for ever: dropped, counted.
  capped.push_back(InQueue(Job(0, 60, 2), "small"));
  r = RunPolicy(capped, "rota", o);
  EXPECT_EQ(r.jobs, 3u);
  EXPECT_EQ(r.dropped, 1u);
  // One queue only: no breakdown.
  EXPECT_TRUE(RunPolicy({Job(0, 60, 1)}, "rota", ReplayOptions{.pooled_gpus = 1}).by_queue.empty());
}

TEST(ReplayTest, SameTraceSameResults) {
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 300; ++i) jobs.push_back(Job(i * 37, 100 + (i * 7919) % 5000, 1 + (i % 9 == 0 ? 7 : 0), "u" + std::to_string(i % 5)));
  ReplayOptions o;
  o.nodes = 3;
  for (const auto& p : PolicyNames()) {
    ReplayResult a = RunPolicy(jobs, p, o), b = RunPolicy(jobs, p, o);
    EXPECT_EQ(a.jct_sorted_h, b.jct_sorted_h) << p;
    EXPECT_EQ(a.preemptions_per_job, b.preemptions_per_job) << p;
  }
}

TEST(ReplayTest, BadInputIsRefused) {
  EXPECT_FALSE(PolicyByName("best").ok());
  ReplayOptions o;
  o.pooled_gpus = 4;
  o.from_ms = 10 * kH;
  o.to_ms = 11 * kH;
  auto spec = PolicyByName("fifo");
  EXPECT_EQ(Replay({Job(0, 1, 1)}, *spec, o).status().code(), StatusCode::kInvalidArgument);
  // Every job too big for the cluster: said so, not "no job in the window".
  ReplayOptions small;
  small.nodes = 2;
  small.gpus_per_node = 8;
  auto too_big = Replay({Job(0, 60, 1000)}, *spec, small);
  EXPECT_EQ(too_big.status().message(),
            "every job of the trace in the window (1) needs more GPUs than the cluster or its queue's cap has");
}

// The replayer's correctness test: the pooled-GPU reference table of
// traces/README (from shared/traces), same window and rules, no preemption cost.
// One test per row, so that each stays short in the sanitizer build.
struct Row {
  uint32_t gpus;
  const char* policy;
  double avg, p50, p99, wait;
};
class ReferenceTest : public ::testing::TestWithParam<Row> {};

TEST_P(ReferenceTest, ReproducesThePhillyReferenceRow) {
  static const auto* trace = new Result<Trace>(ReadTrace(std::string(ROTA_TRACES_DIR) + "/philly-2017-10-01_to_10-22.csv"));
  ASSERT_TRUE(trace->ok()) << trace->status().message();
  const Row& row = GetParam();
  ReplayOptions o;
  o.from_ms = *ParseRfc3339("2017-10-09T00:00:00Z");
  o.to_ms = *ParseRfc3339("2017-10-16T00:00:00Z");
  o.preempt_cost_ms = 0;
  o.pooled_gpus = row.gpus;
  // Within 0.1 % (0.002 h for small waits); EASY within 1 %: its tie-breaking
  // among jobs that end at the same time differs slightly from the reference's.
  const double rel = std::string(row.policy) == "easy" ? 0.01 : 0.001;
  auto near = [rel](double got, double want) { return std::abs(got - want) <= std::max(rel * want, 0.002); };
  ReplayResult r = RunPolicy((*trace)->jobs, row.policy, o);
  EXPECT_EQ(r.jobs, 12'751u);
  EXPECT_TRUE(near(r.jct_h.avg, row.avg)) << r.jct_h.avg << " vs " << row.avg;
  EXPECT_TRUE(near(r.jct_h.p50, row.p50)) << r.jct_h.p50 << " vs " << row.p50;
  EXPECT_TRUE(near(r.jct_h.p99, row.p99)) << r.jct_h.p99 << " vs " << row.p99;
  EXPECT_TRUE(near(r.wait_h.avg, row.wait)) << r.wait_h.avg << " vs " << row.wait;
}

std::string RowName(const ::testing::TestParamInfo<Row>& info) {
  return std::string(info.param.policy) + "_" + std::to_string(info.param.gpus);
}

INSTANTIATE_TEST_SUITE_P(Philly, ReferenceTest,
                         ::testing::Values(Row{512, "fifo", 4.005, 1.287, 33.98, 1.902},
                                           Row{512, "easy", 3.974, 1.243, 33.98, 1.871},
                                           Row{512, "sjf", 2.903, 0.775, 32.12, 0.800},
                                           Row{512, "las", 2.322, 0.701, 35.77, 0.219},
                                           Row{512, "srtf", 2.163, 0.701, 30.86, 0.061}),
                         RowName);

// The congested rows (384 GPUs: queues of thousands of jobs) take minutes each under
// the sanitizers and exercise no code the rows above do not: scripts/test.sh runs
// them in the release configuration only.
INSTANTIATE_TEST_SUITE_P(PhillyCongested, ReferenceTest,
                         ::testing::Values(Row{384, "fifo", 15.963, 14.089, 50.70, 13.861},
                                           Row{384, "easy", 15.383, 13.006, 50.66, 13.281},
                                           Row{384, "sjf", 4.123, 1.165, 46.81, 2.020},
                                           Row{384, "las", 4.572, 0.701, 53.13, 2.469},
                                           Row{384, "srtf", 2.314, 0.701, 35.65, 0.211}),
                         RowName);

TEST(SimulateTest, SizesTheClusterToTheLoad) {
  // 100 GPU-hours offered over 10 hours at load 0.5 on 8-GPU nodes: 20 GPUs -> 3 nodes.
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(Job(i * 3600, 3 * 3600 + 450, 8));  // 4 x 8 GPUs x 3.125 h
  EXPECT_EQ(NodesForLoad(jobs, 0, 10 * kH, 0.5, 8), 3u);
  // Never more nodes than run every job at once: two 1-GPU jobs a second apart
  // (a window of one second) need one node, not thousands.
  std::vector<TraceJob> brief = {Job(0, 3600, 1), Job(1, 3600, 1)};
  EXPECT_EQ(NodesForLoad(brief, 0, 0, 0.9, 8), 1u);
  std::vector<TraceJob> big = {Job(0, 3600, 8), Job(1, 3600, 16)};
  EXPECT_EQ(NodesForLoad(big, 0, 0, 0.9, 8), 3u);
}

TEST(SimulateTest, PlotIsAnSvgWithOneCurvePerPolicy) {
  ReplayResult a, b;
  a.policy = "rota";
  a.jct_sorted_h = {0.1, 1, 10};
  a.utilisation_series = {{0, 0.5}, {1, 0.9}};
  b.policy = "fifo";
  b.jct_sorted_h = {0.5, 5};
  a.window_h = 1;
  std::string svg = PlotSvg({a, b}, "t");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  // Both axes of both panels are labelled; the window's end is marked; each
  // hour is a step (its start and end at the same height).
  EXPECT_NE(svg.find(">0.50</text>"), std::string::npos);
  EXPECT_NE(svg.find("window end"), std::string::npos);
  EXPECT_NE(svg.find("hours from the window's start"), std::string::npos);
  // In the busy panel (after its caption), hour 0 at 0.5 busy (y 190: 40 + 300
  // - 0.5 * 300) from its start to its end, then hour 1 at 0.9 (y 70).
  const std::string panel = svg.substr(svg.find("share of GPUs busy"));
  EXPECT_NE(panel.find(",190.0 "), std::string::npos) << panel;
  const size_t at = panel.find("points='");
  ASSERT_NE(at, std::string::npos) << panel;
  std::istringstream points(panel.substr(at + 8, panel.find('\'', at + 8) - at - 8));
  std::vector<std::string> p{std::istream_iterator<std::string>(points), {}};
  ASSERT_EQ(p.size(), 4u) << panel;  // two points per hour: a step each
  EXPECT_EQ(p[0].substr(p[0].find(',')), ",190.0");
  EXPECT_EQ(p[1].substr(p[1].find(',')), ",190.0");
  EXPECT_EQ(p[2].substr(p[2].find(',')), ",70.0");
  EXPECT_EQ(p[1].substr(0, p[1].find(',')), p[2].substr(0, p[2].find(',')));
  EXPECT_NE(svg.find("rota (avg"), std::string::npos);
  EXPECT_NE(svg.find("fifo (avg"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace rota::sim
