#include "jobs/sweep.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "jobs/array.h"

namespace rota::jobs {
namespace {

using api::Json;

TEST(SweepFlagTest, ListsAndRanges) {
  auto list = ParseSweepFlag("lr=1e-3,1e-4");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->name, "lr");
  EXPECT_EQ(list->values, (std::vector<std::string>{"1e-3", "1e-4"}));
  auto log = ParseSweepFlag("lr=loguniform:1e-5:1e-1");
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->kind, SweepParam::Kind::kLogUniform);
  EXPECT_DOUBLE_EQ(log->lo, 1e-5);
  for (const char* bad : {"lr", "=1", "lr=", "LR=1", "index=1", "lr=loguniform:0:1", "lr=uniform:2:1",
                          "n=int:1.5:3", "lr=uniform:a:1"}) {
    auto p = ParseSweepFlag(bad);
    EXPECT_FALSE(p.ok()) << bad;
    EXPECT_NE(p.status().message().find("--sweep"), std::string::npos) << p.status().message();
  }
}

TEST(SweepTrialsTest, GridIsTheProductLastParameterFastest) {
  SweepSpec s;
  s.params = {*ParseSweepFlag("lr=1e-3,1e-4"), *ParseSweepFlag("bs=32,64,128")};
  ASSERT_TRUE(CheckSweep(s).ok());
  auto t = Trials(s);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[0], (std::map<std::string, std::string>{{"lr", "1e-3"}, {"bs", "32"}}));
  EXPECT_EQ(t[1], (std::map<std::string, std::string>{{"lr", "1e-3"}, {"bs", "64"}}));
  EXPECT_EQ(t[5], (std::map<std::string, std::string>{{"lr", "1e-4"}, {"bs", "128"}}));
  s.max_trials = 4;  // the budget cuts the grid
  EXPECT_EQ(Trials(s).size(), 4u);
}

TEST(SweepTrialsTest, RandomDrawsAreSeededAndInRange) {
  auto s = SweepSpecFromJson(Json{{"method", "random"},
                                  {"count", 200},
                                  {"seed", 7},
                                  {"parameters",
                                   {{"lr", {{"loguniform", Json::array({1e-5, 1e-1})}}},
                                    {"dropout", {{"uniform", Json::array({0, 0.5})}}},
                                    {"layers", {{"int", Json::array({2, 4})}}},
                                    {"opt", Json::array({"adam", "sgd"})}}}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto t = Trials(*s);
  ASSERT_EQ(t.size(), 200u);
  EXPECT_EQ(Trials(*s), t);  // the same seed, the same trials
  std::set<std::string> layers, opts;
  int low_lr = 0;
  for (const auto& trial : t) {
    const double lr = std::stod(trial.at("lr")), d = std::stod(trial.at("dropout"));
    EXPECT_GE(lr, 1e-5 * 0.9999);
    EXPECT_LE(lr, 1e-1);
    EXPECT_GE(d, 0);
    EXPECT_LE(d, 0.5);
    low_lr += lr < 1e-3 ? 1 : 0;  // log-uniform: half the draws below the geometric middle
    layers.insert(trial.at("layers"));
    opts.insert(trial.at("opt"));
  }
  EXPECT_GT(low_lr, 70);
  EXPECT_LT(low_lr, 130);
  EXPECT_EQ(layers, (std::set<std::string>{"2", "3", "4"}));
  EXPECT_EQ(opts, (std::set<std::string>{"adam", "sgd"}));
  SweepSpec other = *s;
  other.seed = 8;
  EXPECT_NE(Trials(other), t);
  // Round trip.
  auto again = SweepSpecFromJson(ToJson(*s));
  ASSERT_TRUE(again.ok()) << again.status().ToString() << ToJson(*s).dump();
  EXPECT_EQ(*again, *s);
}

TEST(SweepSpecTest, RefusesWhatCannotRunWithTheField) {
  struct Case {
    Json j;
    std::string why;
  };
  for (const Case& c : std::vector<Case>{
           {Json{{"parameters", Json::object()}}, "sweep.parameters: give 1.."},
           {Json{{"parameters", {{"lr", {{"uniform", Json::array({0, 1})}}}}}}, "ranges need method random"},
           {Json{{"method", "random"}, {"parameters", {{"lr", Json::array({1, 2})}}}}, "sweep.count"},
           {Json{{"method", "bayes"}, {"parameters", {{"lr", Json::array({1})}}}}, "sweep.method"},
           {Json{{"parameters", {{"lr", Json::array({1})}}}, {"budget", 3}}, "sweep.budget: unknown field"},
           {Json{{"parameters", {{"a", Json::array()}}}}, "give 1.."},
           {Json{{"parameters", {{"lr", {{"normal", Json::array({0, 1})}}}}}}, "use [values]"},
           {Json{{"parameters", {{"index", Json::array({1})}}}}, "not 'index'"}}) {
    auto s = SweepSpecFromJson(c.j);
    ASSERT_FALSE(s.ok()) << c.j.dump();
    EXPECT_NE(s.status().message().find(c.why), std::string::npos) << c.j.dump() << ": " << s.status().message();
  }
  // A grid over 100,000 trials needs a budget.
  Json big{{"parameters", Json::object()}};
  for (const char* n : {"a", "b", "c"}) {
    Json values = Json::array();
    for (int i = 0; i < 50; ++i) values.push_back(i);
    big["parameters"][n] = values;
  }
  EXPECT_FALSE(SweepSpecFromJson(big).ok());
  big["max_trials"] = 1000;
  auto bounded = SweepSpecFromJson(big);
  ASSERT_TRUE(bounded.ok()) << bounded.status().ToString();
  EXPECT_EQ(Trials(*bounded).size(), 1000u);
}

}  // namespace
}  // namespace rota::jobs
