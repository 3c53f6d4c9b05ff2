#include "agent/metrics_tail.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace rota::agent {
namespace {

using api::TaskMetricPoint;

TEST(MetricLine, PairsAndAStepAreReadOthersAreNotMetrics) {
  bool bad = false;
  auto p = ParseMetricLine("rota-metric loss=0.25 eval/acc=9.5e-1 step=12\r", &bad);
  EXPECT_FALSE(bad);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].name, "loss");
  EXPECT_DOUBLE_EQ(p[0].value, 0.25);
  EXPECT_EQ(p[0].step, 12);
  EXPECT_EQ(p[1].name, "eval/acc");
  EXPECT_DOUBLE_EQ(p[1].value, 0.95);
  EXPECT_EQ(p[1].step, 12);
  auto nostep = ParseMetricLine("rota-metric  lr=-3  ", &bad);
  ASSERT_EQ(nostep.size(), 1u);
  EXPECT_EQ(nostep[0].step, -1);
  // Not metric lines: not counted as malformed.
  for (const char* other : {"", "loss=1", " rota-metric loss=1", "rota-metrics loss=1", "epoch 3 loss=0.2"}) {
    EXPECT_TRUE(ParseMetricLine(other, &bad).empty()) << other;
    EXPECT_FALSE(bad) << other;
  }
  // Malformed: no point of the line is kept.
  for (const char* wrong : {"rota-metric ", "rota-metric loss", "rota-metric loss=", "rota-metric loss=abc",
                            "rota-metric loss=nan", "rota-metric loss=inf", "rota-metric 1x=2",
                            "rota-metric loss=1 step=-1", "rota-metric loss=1 step=1.5", "rota-metric step=3",
                            "rota-metric loss=1 step=1 step=2", "rota-metric a b=1"}) {
    EXPECT_TRUE(ParseMetricLine(wrong, &bad).empty()) << wrong;
    EXPECT_TRUE(bad) << wrong;
  }
  std::string many = "rota-metric";
  for (int i = 0; i < 33; ++i) many += " m" + std::to_string(i) + "=1";
  EXPECT_TRUE(ParseMetricLine(many, &bad).empty());
  EXPECT_TRUE(bad);
}

class MetricsTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / "rota-metrics-tail-XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir_.data()), nullptr);
    sources_ = {{dir_ + "/stdout.log", TaskMetricPoint::Source::kStdout},
                {dir_ + "/metrics", TaskMetricPoint::Source::kFile}};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Append(size_t source, const std::string& text) {
    std::ofstream(sources_[source].path, std::ios::app) << text;
  }
  std::string dir_;
  std::vector<MetricsTail::Source> sources_;
};

TEST_F(MetricsTailTest, CompleteLinesOnceCommittedAgainAfterARewind) {
  MetricsTail tail;
  EXPECT_TRUE(tail.Read("t", sources_, 1).empty());  // no files yet
  Append(0, "epoch 1\nrota-metric loss=2 step=1\nrota-metric loss=1");
  Append(1, "rota-metric acc=0.5\n");
  auto first = tail.Read("t", sources_, 100);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].name, "loss");
  EXPECT_EQ(first[0].source, TaskMetricPoint::Source::kStdout);
  EXPECT_EQ(first[0].seq, 8u);  // the line's offset
  EXPECT_EQ(first[0].time_ms, 100);
  EXPECT_EQ(first[1].name, "acc");
  EXPECT_EQ(first[1].source, TaskMetricPoint::Source::kFile);
  EXPECT_EQ(first[1].seq, 0u);
  // Not committed (the send failed): the same points again.
  EXPECT_EQ(tail.Read("t", sources_, 200).size(), 2u);
  tail.Commit("t");
  EXPECT_TRUE(tail.Read("t", sources_, 300).empty());  // "loss=1" is not finished
  Append(0, " step=2\n");
  auto second = tail.Read("t", sources_, 400);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].step, 2);
  EXPECT_EQ(second[0].seq, 34u);
  tail.Commit("t");
  tail.Rewind();  // a new registration: everything again, with the same identities
  auto again = tail.Read("t", sources_, 500);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[1].seq, 34u);
}

TEST_F(MetricsTailTest, ABacklogGoesOutInBoundedMessagesAndAHugeLineIsSkipped) {
  std::string lines;
  for (int i = 0; i < 1500; ++i) lines += "rota-metric loss=" + std::to_string(i) + " step=" + std::to_string(i) + "\n";
  Append(0, lines);
  MetricsTail tail;
  auto first = tail.Read("t", sources_, 1);
  ASSERT_EQ(first.size(), api::kMaxMetricPointsPerMessage);
  tail.Commit("t");
  auto rest = tail.Read("t", sources_, 2);
  ASSERT_EQ(rest.size(), 1500 - api::kMaxMetricPointsPerMessage);
  EXPECT_EQ(rest.front().step, static_cast<int64_t>(api::kMaxMetricPointsPerMessage));
  tail.Commit("t");
  // A line longer than a read is skipped up to its end; the next line counts.
  Append(1, "rota-metric big=" + std::string(kMaxMetricReadBytes + 10, '1') + "\nrota-metric small=1\n");
  std::vector<TaskMetricPoint> got;
  for (int i = 0; i < 4 && got.empty(); ++i) {
    got = tail.Read("t", sources_, 3);
    tail.Commit("t");
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name, "small");
  EXPECT_EQ(tail.malformed(), 0u);
}

}  // namespace
}  // namespace rota::agent
