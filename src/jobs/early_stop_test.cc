#include "jobs/early_stop.h"

#include <gtest/gtest.h>

#include "jobs/sweep.h"

namespace rota::jobs {
namespace {

using api::Json;

// A trial that reported `values` at steps 1, 2, 3, ... at times base + step.
TrialHistory Trial(int64_t id, std::vector<double> values, bool running, bool completed = false,
                   int64_t base_ms = 0) {
  TrialHistory t;
  t.job_id = id;
  t.running = running;
  t.completed = completed;
  for (size_t i = 0; i < values.size(); ++i) {
    const auto step = static_cast<int64_t>(i + 1);
    t.points.push_back({step, values[i], base_ms + step});
  }
  return t;
}

EarlyStopSpec Median(uint32_t min_trials = 3, int64_t min_step = 1) {
  EarlyStopSpec s;
  s.metric = "loss";
  s.min_trials = min_trials;
  s.min_step = min_step;
  return s;
}

EarlyStopSpec Asha(uint32_t reduction = 3, int64_t min_step = 1) {
  EarlyStopSpec s;
  s.rule = EarlyStopSpec::Rule::kAsha;
  s.metric = "loss";
  s.reduction = reduction;
  s.min_step = min_step;
  return s;
}

TEST(EarlyStopSpecTest, JsonRoundTripsAndRefusesWhatIsWrong) {
  auto m = EarlyStopSpecFromJson(Json{{"rule", "median"}, {"metric", "val_acc"}, {"goal", "max"}, {"min_trials", 5},
                                      {"min_step", "10"}});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->maximize);
  EXPECT_EQ(m->min_trials, 5u);
  EXPECT_EQ(m->min_step, 10);
  EXPECT_EQ(*EarlyStopSpecFromJson(ToJson(*m)), *m);
  auto a = EarlyStopSpecFromJson(Json{{"rule", "asha"}, {"metric", "loss"}, {"reduction", 4}, {"max_step", 64}});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->reduction, 4u);
  EXPECT_EQ(*EarlyStopSpecFromJson(ToJson(*a)), *a);
  struct Bad {
    Json j;
    const char* says;
  };
  for (const Bad& b : std::vector<Bad>{
           {Json::array(), "must be an object"},
           {Json{{"metric", "loss"}}, "early_stopping.rule"},
           {Json{{"rule", "hyperband"}, {"metric", "loss"}}, "median or asha"},
           {Json{{"rule", "asha"}}, "name the metric"},
           {Json{{"rule", "asha"}, {"metric", "bad name"}}, "early_stopping.metric"},
           {Json{{"rule", "asha"}, {"metric", "loss"}, {"reduction", 1}}, "early_stopping.reduction"},
           {Json{{"rule", "asha"}, {"metric", "loss"}, {"min_step", 0}}, "early_stopping.min_step"},
           {Json{{"rule", "asha"}, {"metric", "loss"}, {"min_trials", 3}}, "unknown field for rule asha"},
           {Json{{"rule", "median"}, {"metric", "loss"}, {"reduction", 3}}, "unknown field for rule median"},
           {Json{{"rule", "median"}, {"metric", "loss"}, {"goal", "lowest"}}, "min or max"},
           {Json{{"rule", "asha"}, {"metric", "loss"}, {"min_step", 8}, {"max_step", 4}}, "below min_step"},
           {Json{{"rule", "median"}, {"metric", "loss"}, {"min_trials", -1}}, "whole number"},
       }) {
    auto s = EarlyStopSpecFromJson(b.j);
    ASSERT_FALSE(s.ok()) << b.j.dump();
    EXPECT_NE(s.status().message().find(b.says), std::string::npos) << s.status().message();
  }
}

TEST(EarlyStopSpecTest, FlagAndSweepField) {
  auto f = ParseEarlyStopFlag("median:accuracy:max");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->rule, EarlyStopSpec::Rule::kMedian);
  EXPECT_EQ(f->metric, "accuracy");
  EXPECT_TRUE(f->maximize);
  for (const char* bad : {"asha", "asha:loss:up", "fast:loss", "asha::min", "a:b:c:d"}) {
    auto p = ParseEarlyStopFlag(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_NE(p.status().message().find("--early-stopping"), std::string::npos) << p.status().message();
  }
  // In a sweep: kept through the stored JSON, errors named from the sweep.
  auto sweep = SweepSpecFromJson(Json{{"parameters", {{"lr", {"1e-3", "1e-4"}}}},
                                      {"early_stopping", {{"rule", "asha"}, {"metric", "loss"}}}});
  ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
  ASSERT_TRUE(sweep->early_stopping.has_value());
  auto again = SweepSpecFromJson(ToJson(*sweep));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *sweep);
  auto bad = SweepSpecFromJson(Json{{"parameters", {{"lr", {"1e-3"}}}}, {"early_stopping", {{"rule", "asha"}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sweep.early_stopping.metric"), std::string::npos) << bad.status().message();
}

TEST(MedianRuleTest, StopsARunningTrialWorseThanTheMedianOfCompletedOnes) {
  std::vector<TrialHistory> trials = {
      Trial(1, {1.0, 0.8, 0.6, 0.4}, false, true),  // running averages to step 2: 0.9
      Trial(2, {0.9, 0.7, 0.5, 0.3}, false, true),  // 0.8
      Trial(3, {0.8, 0.6, 0.4, 0.2}, false, true),  // 0.7 -> median 0.8
      Trial(4, {1.2, 0.95}, true),                  // best 0.95 > 0.8: stopped
      Trial(5, {0.7, 0.5}, true),                   // best 0.5: goes on
  };
  auto stops = DecideEarlyStops(Median(), trials);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].job_id, 4);
  EXPECT_EQ(stops[0].reason.rfind(kStoppedEarly, 0), 0u) << stops[0].reason;
  EXPECT_NE(stops[0].reason.find("best loss 0.95 by step 2"), std::string::npos) << stops[0].reason;
  EXPECT_NE(stops[0].reason.find("median of 3 completed"), std::string::npos) << stops[0].reason;

  // Not before min_trials completed trials, nor before min_step.
  EXPECT_TRUE(DecideEarlyStops(Median(4), trials).empty());
  EXPECT_TRUE(DecideEarlyStops(Median(3, 3), trials).empty());
  // Trials stopped early or failed (completed = false) do not count.
  trials[0].completed = false;
  EXPECT_TRUE(DecideEarlyStops(Median(), trials).empty());
  // A trial that is not running is never "stopped".
  trials[0].completed = true;
  trials[3].running = false;
  EXPECT_TRUE(DecideEarlyStops(Median(), trials).empty());
}

TEST(MedianRuleTest, MaximizeTurnsTheComparisonAround) {
  EarlyStopSpec s = Median(2);
  s.maximize = true;
  std::vector<TrialHistory> trials = {
      Trial(1, {0.5, 0.6}, false, true),
      Trial(2, {0.7, 0.8}, false, true),  // median of averages 0.55, 0.75: 0.65
      Trial(3, {0.2, 0.6}, true),          // best 0.6 < 0.65: stopped
      Trial(4, {0.1, 0.7}, true),          // best 0.7: goes on
  };
  auto stops = DecideEarlyStops(s, trials);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].job_id, 3);
}

TEST(AshaRuleTest, KeepsTheTopThirdOfEachRungInTheOrderTrialsReachIt) {
  // Rungs at steps 1, 3, 9. Trials reach rung 1 in id order (their base times).
  std::vector<TrialHistory> trials;
  trials.push_back(Trial(1, {0.5}, true, false, 0));
  trials.push_back(Trial(2, {0.9}, true, false, 100));
  // Fewer than eta trials at the rung: nobody is stopped yet.
  EXPECT_TRUE(DecideEarlyStops(Asha(), trials).empty());
  trials.push_back(Trial(3, {0.7}, true, false, 200));  // 3rd at rung 1: best 1 of 3 go on; 0.7 is not
  auto stops = DecideEarlyStops(Asha(), trials);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].job_id, 3);
  EXPECT_NE(stops[0].reason.find("not among the best 1 of the 3 trials that reached rung 1"), std::string::npos)
      << stops[0].reason;
  // Trial 2 reached the rung second (n = 2 < eta): the later, better trial
  // does not revisit that decision.
  trials.push_back(Trial(4, {0.1}, true, false, 300));  // n = 4, keep 1: 0.1 is the best
  stops = DecideEarlyStops(Asha(), trials);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].job_id, 3);
}

TEST(AshaRuleTest, LaterRungsDecideAgainAndMaxStepEndsThem) {
  std::vector<TrialHistory> trials;
  // Three trials pass rung 1 (n = 1, 2 below eta... the third is best).
  trials.push_back(Trial(1, {0.9, 0.8, 0.7}, false, false, 0));
  trials.push_back(Trial(2, {0.8, 0.6, 0.4}, false, false, 100));
  trials.push_back(Trial(3, {0.3, 0.5, 0.6}, true, false, 200));  // rung 1: best; rung 3: 0.6 worse than 0.4
  auto stops = DecideEarlyStops(Asha(), trials);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].job_id, 3);
  EXPECT_NE(stops[0].reason.find("at step 3"), std::string::npos) << stops[0].reason;
  EarlyStopSpec capped = Asha();
  capped.max_step = 2;  // no rung at 3
  EXPECT_TRUE(DecideEarlyStops(capped, trials).empty());
  // A trial reporting every 4 steps meets rung 3 at its step 4.
  TrialHistory sparse;
  sparse.job_id = 9;
  sparse.running = true;
  sparse.points = {{4, 0.9, 300}};
  trials.push_back(sparse);
  stops = DecideEarlyStops(Asha(2), trials);  // rungs 1, 2, 4
  bool nine = false;
  for (const auto& s : stops) nine = nine || s.job_id == 9;
  EXPECT_TRUE(nine);
}

TEST(AshaRuleTest, PointsWithoutStepsOrNotFiniteAreLeftOut) {
  std::vector<TrialHistory> trials;
  for (int64_t id = 1; id <= 3; ++id) {
    TrialHistory t;
    t.job_id = id;
    t.running = true;
    t.points = {{-1, 0.1 * static_cast<double>(id), id}, {1, std::nan(""), id}};
    trials.push_back(t);
  }
  EXPECT_TRUE(DecideEarlyStops(Asha(), trials).empty());
  EXPECT_TRUE(DecideEarlyStops(Median(1), trials).empty());
}

}  // namespace
}  // namespace rota::jobs
