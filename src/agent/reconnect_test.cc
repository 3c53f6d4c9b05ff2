// The agent's reconnect rule (reconnect.h), table-driven over a failover.
#include "agent/reconnect.h"

#include <gtest/gtest.h>

namespace rota::agent {
namespace {

TEST(ReconnectTest, OneServerBacksOffExponentiallyToTheCap) {
  ReconnectPolicy p;
  ReconnectState s;
  std::vector<int64_t> got;
  for (int i = 0; i < 7; ++i) {
    auto d = AfterFailure(&s, 1, /*answered=*/i % 2 == 0, p);  // one server: answers change nothing
    EXPECT_TRUE(d.backoff);
    got.push_back(d.delay_ms);
  }
  EXPECT_EQ(got, (std::vector<int64_t>{500, 1000, 2000, 4000, 8000, 10000, 10000}));
  AfterRegistration(&s);
  EXPECT_EQ(AfterFailure(&s, 1, false, p).delay_ms, 500);
}

TEST(ReconnectTest, SeveralUnreachableServersAreTriedInTurnThenBackedOff) {
  ReconnectPolicy p;
  ReconnectState s;
  std::vector<int64_t> delays;
  std::vector<size_t> next;
  for (int i = 0; i < 9; ++i) {
    auto d = AfterFailure(&s, 3, false, p);
    delays.push_back(d.delay_ms);
    next.push_back(s.server_index);
  }
  EXPECT_EQ(delays, (std::vector<int64_t>{200, 200, 500, 200, 200, 1000, 200, 200, 2000}));
  EXPECT_EQ(next, (std::vector<size_t>{1, 2, 0, 1, 2, 0, 1, 2, 0}));
}

// The regression (HaLoadE2E.T3 measured agents coming back 2.5 s after the new leader):
// during a failover the dead leader is unreachable and the followers answer 503 (no leader
// yet). The agent backed off as if the whole cluster were down (0.5, 1, 2, 4, 8, 10 s +
// jitter), so the longer the failover, the later it came back: past ~17 s without a leader,
// up to 12.5 s after the new one, beyond that leader's 10 s grace before it declares the
// node's tasks lost. Now a round in which a follower answered is retried after 1 s, however
// long the failover.
TEST(ReconnectTest, ARoundWithAnAnsweringFollowerRetriesAfterASecondNeverLater) {
  ReconnectPolicy p;
  ReconnectState s;
  for (int round = 0; round < 20; ++round) {
    EXPECT_EQ(AfterFailure(&s, 3, false, p).delay_ms, 200);       // the dead leader
    EXPECT_EQ(AfterFailure(&s, 3, true, p).delay_ms, 200);        // a follower: 503
    auto end = AfterFailure(&s, 3, true, p);                      // the other follower
    EXPECT_EQ(end.delay_ms, 1000) << round;
    EXPECT_FALSE(end.backoff);
  }
  // Once nothing answers any more (the cluster went away), the backoff starts from its
  // shortest again and grows.
  for (int64_t want : {500, 1000, 2000}) {
    AfterFailure(&s, 3, false, p);
    AfterFailure(&s, 3, false, p);
    EXPECT_EQ(AfterFailure(&s, 3, false, p).delay_ms, want);
  }
}

}  // namespace
}  // namespace rota::agent
