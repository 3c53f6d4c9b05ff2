#include "malleable/core_split.h"

#include <gtest/gtest.h>

#include <numeric>

namespace rota::malleable {
namespace {

Task T(std::string id, double min, double max, double request = 0, int priority = 0) {
  return Task{std::move(id), min, max, request, priority};
}

std::vector<double> Cpus(const std::vector<Allotment>& a) {
  std::vector<double> out;
  for (const auto& x : a) out.push_back(x.cpus);
  return out;
}

std::vector<std::string> Sets(const std::vector<Allotment>& a) {
  std::vector<std::string> out;
  for (const auto& x : a) out.push_back(x.cpuset);
  return out;
}

double Sum(const std::vector<Allotment>& a) {
  double s = 0;
  for (const auto& x : a) s += x.cpus;
  return s;
}

TEST(DivideCoresTest, EqualSplitsTheNodeAndGivesWholeCoresTheirOwnCpus) {
  auto a = DivideCores({0, 4}, {T("a", 1, 4), T("b", 1, 4)}, Policy::kEqual);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(Cpus(*a), (std::vector<double>{2, 2}));
  EXPECT_EQ(Sets(*a), (std::vector<std::string>{"0-1", "2-3"}));
  EXPECT_EQ((*a)[0].id, "a");
}

TEST(DivideCoresTest, OneTaskGetsTheWholeNodeUpToItsMax) {
  auto a = DivideCores({0, 8}, {T("solo", 1, 16)}, Policy::kEqual);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Cpus(*a), std::vector<double>{8});
  EXPECT_EQ(Sets(*a), std::vector<std::string>{"0-7"});
  auto capped = DivideCores({0, 8}, {T("solo", 1, 3)}, Policy::kEqual);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(Cpus(*capped), std::vector<double>{3});  // the rest stays idle
  EXPECT_EQ(Sets(*capped), std::vector<std::string>{"0-2"});
}

TEST(DivideCoresTest, EqualNeverGoesBelowAMinimumOrAboveAMaximum) {
  // 6 cores, equal would be 2 each: c needs 3 and a may take at most 1.
  auto a = DivideCores({0, 6}, {T("a", 0.5, 1), T("b", 1, 6), T("c", 3, 6)}, Policy::kEqual);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Cpus(*a), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(Sets(*a), (std::vector<std::string>{"0", "1-2", "3-5"}));
}

TEST(DivideCoresTest, FractionalSharesShareTheBoundaryCpu) {
  auto a = DivideCores({0, 2}, {T("a", 0.1, 2), T("b", 0.1, 2), T("c", 0.1, 2)}, Policy::kEqual);
  ASSERT_TRUE(a.ok());
  for (double c : Cpus(*a)) EXPECT_NEAR(c, 2.0 / 3, 0.001);
  EXPECT_LE(Sum(*a), 2.0);
  EXPECT_EQ(Sets(*a), (std::vector<std::string>{"0", "0-1", "1"}));
}

TEST(DivideCoresTest, ByRequestIsProportionalWithinBounds) {
  auto a = DivideCores({0, 8}, {T("a", 1, 8, 1), T("b", 1, 8, 3)}, Policy::kByRequest);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Cpus(*a), (std::vector<double>{2, 6}));
  // A request of 0 weighs as the minimum.
  auto b = DivideCores({0, 9}, {T("a", 1, 9, 0), T("b", 2, 9, 0)}, Policy::kByRequest);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Cpus(*b), (std::vector<double>{3, 6}));
}

TEST(DivideCoresTest, ByPriorityFillsTheHighestFirstAboveEveryonesMinimum) {
  auto a = DivideCores({0, 8}, {T("low", 1, 8, 0, 0), T("high", 1, 5, 0, 10), T("mid", 1, 8, 0, 5)},
                       Policy::kByPriority);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Cpus(*a), (std::vector<double>{1, 5, 2}));
  // Equal shares within one priority.
  auto b = DivideCores({0, 6}, {T("x", 1, 6, 0, 1), T("y", 1, 6, 0, 1), T("z", 1, 6, 0, 0)}, Policy::kByPriority);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Cpus(*b), (std::vector<double>{2.5, 2.5, 1}));
}

TEST(DivideCoresTest, MoreMinimumsThanCoresIsReportedNotOversubscribed) {
  auto a = DivideCores({0, 2}, {T("a", 1, 2), T("b", 1, 2), T("c", 0.5, 2)}, Policy::kEqual);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(a.status().message().find("need 2.5 cores; the node has 2"), std::string::npos) << a.status().message();
  // Exactly the node: each its minimum.
  auto full = DivideCores({0, 2}, {T("a", 1, 2), T("b", 1, 2)}, Policy::kByPriority);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(Cpus(*full), (std::vector<double>{1, 1}));
}

TEST(DivideCoresTest, TasksEndingGiveTheirCoresToTheOthers) {
  std::vector<Task> tasks = {T("a", 0.5, 2), T("b", 0.5, 2), T("c", 0.5, 2), T("d", 0.5, 2)};
  auto four = DivideCores({0, 2}, tasks, Policy::kEqual);
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(Cpus(*four), (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
  EXPECT_EQ(Sets(*four), (std::vector<std::string>{"0", "0", "1", "1"}));
  tasks.erase(tasks.begin(), tasks.begin() + 2);
  auto two = DivideCores({0, 2}, tasks, Policy::kEqual);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(Cpus(*two), (std::vector<double>{1, 1}));
  EXPECT_EQ(Sets(*two), (std::vector<std::string>{"0", "1"}));
  tasks.pop_back();
  auto one = DivideCores({0, 2}, tasks, Policy::kEqual);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Cpus(*one), std::vector<double>{2});
  EXPECT_TRUE(DivideCores({0, 2}, {}, Policy::kEqual)->empty());
}

TEST(DivideCoresTest, TheRangeStartsAtTheFirstCpu) {
  auto a = DivideCores({4, 4}, {T("a", 1, 4), T("b", 1, 4)}, Policy::kEqual);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Sets(*a), (std::vector<std::string>{"4-5", "6-7"}));
}

TEST(DivideCoresTest, BadInputIsRefusedByName) {
  EXPECT_EQ(DivideCores({0, 0}, {T("a", 1, 1)}, Policy::kEqual).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DivideCores({0, 2}, {T("a", 0, 1)}, Policy::kEqual).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DivideCores({0, 2}, {T("a", 2, 1)}, Policy::kEqual).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DivideCores({0, 2}, {T("a", 1, 1), T("a", 1, 1)}, Policy::kEqual).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(DivideCores({0, 2}, {T("", 1, 1)}, Policy::kEqual).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DivideCores({0, 2}, {T("a", 1, 1, -1)}, Policy::kByRequest).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePolicy("by-priority").value(), Policy::kByPriority);
  EXPECT_FALSE(ParsePolicy("fifo").ok());
}

// Over many shapes: within bounds, never above the node, and the node used
// whole unless every task is at its max.
TEST(DivideCoresTest, PropertiesHoldOverManyShapes) {
  for (uint32_t count = 1; count <= 9; ++count) {
    for (int n = 1; n <= 6; ++n) {
      for (Policy p : {Policy::kEqual, Policy::kByRequest, Policy::kByPriority}) {
        std::vector<Task> tasks;
        double max_sum = 0, min_sum = 0;
        for (int i = 0; i < n; ++i) {
          const double min = 0.25 * (1 + (i * 7 + count) % 4);
          const double max = min + (i * 3 + count) % 5;
          tasks.push_back(T("t" + std::to_string(i), min, max, 1 + i % 3, i % 2));
          max_sum += max;
          min_sum += min;
        }
        auto a = DivideCores({0, count}, tasks, p);
        if (min_sum > count) {
          EXPECT_FALSE(a.ok());
          continue;
        }
        ASSERT_TRUE(a.ok()) << a.status().ToString();
        for (size_t i = 0; i < tasks.size(); ++i) {
          EXPECT_GE((*a)[i].cpus, tasks[i].min_cpus);
          EXPECT_LE((*a)[i].cpus, tasks[i].max_cpus + 1e-9);
          EXPECT_FALSE((*a)[i].cpuset.empty());
        }
        EXPECT_LE(Sum(*a), count + 1e-6);
        EXPECT_GE(Sum(*a), std::min<double>(count, max_sum) - 0.001 * n - 1e-6) << count << " " << n;
      }
    }
  }
}

}  // namespace
}  // namespace rota::malleable
