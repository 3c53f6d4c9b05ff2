#include "agent/sample_buffer.h"

#include <gtest/gtest.h>

namespace rota::agent {
namespace {

api::NodeSample At(int64_t t) {
  api::NodeSample s;
  s.time_ms = t;
  return s;
}

TEST(SampleBufferTest, AckDropsCommittedSamples) {
  SampleBuffer b(10);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(b.Push(At(i)), static_cast<uint64_t>(i));
  b.Ack(3);
  EXPECT_EQ(b.size(), 2u);
  EXPECT_EQ(b.first_seq(), 4u);
  uint64_t first = 0;
  auto rest = b.From(1, 10, &first);
  EXPECT_EQ(first, 4u);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].time_ms, 4);
}

TEST(SampleBufferTest, FullBufferDropsOldest) {
  SampleBuffer b(3);
  for (int i = 1; i <= 5; ++i) b.Push(At(i));
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(b.dropped(), 2u);
  uint64_t first = 0;
  auto all = b.From(0, 10, &first);
  EXPECT_EQ(first, 3u);
  EXPECT_EQ(all.front().time_ms, 3);
  EXPECT_EQ(all.back().time_ms, 5);
}

TEST(SampleBufferTest, FromRespectsMaxAndStaleAcks) {
  SampleBuffer b(100);
  for (int i = 1; i <= 50; ++i) b.Push(At(i));
  uint64_t first = 0;
  EXPECT_EQ(b.From(10, 8, &first).size(), 8u);
  EXPECT_EQ(first, 10u);
  b.Ack(0);  // stale ack: nothing happens
  EXPECT_EQ(b.size(), 50u);
  b.Ack(1000);  // ack beyond the end empties
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.next_seq(), 51u);
}

}  // namespace
}  // namespace rota::agent
