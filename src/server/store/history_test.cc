#include "server/store/history.h"

#include <gtest/gtest.h>

namespace rota::store {
namespace {

using Pairs = std::vector<std::pair<std::string, double>>;

TEST(HistoryTest, BucketStartFloors) {
  EXPECT_EQ(BucketStart(0, 1000), 0);
  EXPECT_EQ(BucketStart(999, 1000), 0);
  EXPECT_EQ(BucketStart(1000, 1000), 1000);
  EXPECT_EQ(BucketStart(-1, 1000), -1000);
  EXPECT_EQ(BucketStart(-1000, 1000), -1000);
  EXPECT_EQ(BucketCount(0, 1000, 1000), 1);
  EXPECT_EQ(BucketCount(500, 1001, 1000), 2);
  EXPECT_EQ(BucketCount(0, 10'000'000, 1000), 10'000);
}

TEST(HistoryTest, ResolveStepAcceptsValidArguments) {
  EXPECT_EQ(*ResolveStep(0, 10'000'000, 1000), 1000);  // exactly 10,000 points
  EXPECT_EQ(*ResolveStep(5, 6, 1000), 1000);
  EXPECT_EQ(*ResolveStep(0, 3'600'000, 60'000), 60'000);
}

TEST(HistoryTest, ResolveStepAutoPicksRoundStepsForAbout1000Points) {
  EXPECT_EQ(*ResolveStep(0, 1000, 0), 1000);                             // tiny range: minimum step
  EXPECT_EQ(*ResolveStep(0, 3'600'000, 0), 5000);                        // 1 h -> 5 s (720 points)
  EXPECT_EQ(*ResolveStep(0, 86'400'000, 0), 120'000);                    // 1 d -> 2 min (720)
  EXPECT_EQ(*ResolveStep(0, 30LL * 86'400'000, 0), 3'600'000);           // 30 d -> 1 h (720)
  EXPECT_EQ(*ResolveStep(0, 5000LL * 86'400'000, 0), 7LL * 86'400'000);  // 5000 d -> 7 d
  EXPECT_EQ(*ResolveStep(0, 100'000LL * 86'400'000, 0), 100LL * 86'400'000);  // whole days
  for (int64_t span : {1'000LL, 59'999LL, 3'600'001LL, 7LL * 86'400'000, 400LL * 86'400'000}) {
    auto step = ResolveStep(1'700'000'000'123, 1'700'000'000'123 + span, 0);
    ASSERT_TRUE(step.ok());
    EXPECT_LE(span / *step, kAutoHistoryPoints) << span;
    EXPECT_LE(BucketCount(1'700'000'000'123, 1'700'000'000'123 + span, *step),
              kAutoHistoryPoints + 1);
  }
}

// Bad inputs: negative from, from == to, from > to, negative step, step below
// 1 s, too many points.
TEST(HistoryTest, ResolveStepRejectsBadArguments) {
  struct Case {
    int64_t from, to, step;
    const char* message_part;
  };
  const Case cases[] = {
      {-5, 1000, 1000, "from: must be >= 0"},
      {1000, 1000, 1000, "must be before to"},
      {2000, 1000, 1000, "from (2000) must be before to (1000)"},
      {0, 1000, -1, "step: must be 0 (auto) or at least 1000 ms, got -1"},
      {0, 1000, 999, "got 999"},
      {0, 10'000'001, 1000, "gives 10001 points; at most 10000"},
      {0, 86'400'000, 1000, "use step >= 8641 ms"},
  };
  for (const Case& c : cases) {
    auto r = ResolveStep(c.from, c.to, c.step);
    ASSERT_FALSE(r.ok()) << c.from << " " << c.to << " " << c.step;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.message_part), std::string::npos) << r.status().message();
  }
  // The suggested step is indeed accepted.
  EXPECT_TRUE(ResolveStep(0, 86'400'000, 8641).ok());
}

TEST(HistoryTest, BuilderAveragesAndMaxesPerBucket) {
  SeriesBuilder b(10, {"a", "b"}, {"e"});
  b.Row(0, 1);
  b.Metric(0, 2, 1, 2);
  b.Metric(1, 7, 1, 7);
  b.Counter(0, 100, 0);
  b.Row(5, 1);
  b.Metric(0, 4, 1, 4);  // b absent in this row
  b.Counter(0, 105, 5);
  b.Row(12, 3);  // a pre-aggregated row: 3 samples, 2 readings of a
  b.Metric(0, 10, 2, 9);
  b.Metric(1, 0, 0, std::nullopt);
  b.Row(30, 1);  // bucket 20 is empty and omitted
  b.Metric(1, 1, 1, 1);
  auto pts = b.Finish();
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(pts[0].t_ms, 0);
  EXPECT_EQ(pts[0].samples, 2);
  EXPECT_EQ(pts[0].avg, (Pairs{{"a", 3}, {"b", 7}}));
  EXPECT_EQ(pts[0].max, (Pairs{{"a", 4}, {"b", 7}}));
  EXPECT_EQ(pts[0].last, (Pairs{{"e", 105}}));
  EXPECT_EQ(pts[1].t_ms, 10);
  EXPECT_EQ(pts[1].samples, 3);
  EXPECT_EQ(pts[1].avg, (Pairs{{"a", 5}}));
  EXPECT_EQ(pts[1].max, (Pairs{{"a", 9}}));
  EXPECT_TRUE(pts[1].last.empty());
  EXPECT_EQ(pts[2].t_ms, 30);
  EXPECT_EQ(pts[2].avg, (Pairs{{"b", 1}}));
  EXPECT_TRUE(b.Finish().empty());
}

}  // namespace
}  // namespace rota::store
