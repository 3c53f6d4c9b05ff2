#include "server/nodes/cluster_state.h"

#include <gtest/gtest.h>

namespace rota::server {
namespace {

api::NodeInfo Info(const std::string& name, const std::string& id = "id-1") {
  api::NodeInfo n;
  n.name = name;
  n.node_id = id;
  n.sample_interval_ms = 1000;
  return n;
}

api::NodeSample Sample(int64_t t) {
  api::NodeSample s;
  s.time_ms = t;
  return s;
}

TEST(ClusterStateTest, ConnectMakesNodeReadyAndDisconnectUnreachable) {
  ClusterState cs(3);
  ASSERT_TRUE(cs.Connect(Info("a"), 1, 1000).ok());
  EXPECT_EQ(cs.Node("a")->state, NodeState::kReady);
  EXPECT_EQ(cs.ConnectedCount(), 1);
  cs.Disconnect("a", 1, 2000);
  EXPECT_EQ(cs.Node("a")->state, NodeState::kUnreachable);
  EXPECT_EQ(cs.Node("a")->unreachable_reason, "agent disconnected");
  EXPECT_EQ(cs.ConnectedCount(), 0);
}

TEST(ClusterStateTest, MissedHeartbeatsMarkUnreachableWithinThreeIntervals) {
  ClusterState cs(3);
  ASSERT_TRUE(cs.Connect(Info("a"), 1, 0).ok());
  cs.RecordSample("a", 1, Sample(1), 1000);
  EXPECT_EQ(cs.CheckLiveness(4000), 0);  // exactly 3 intervals: still ready
  EXPECT_EQ(cs.CheckLiveness(4001), 1);
  EXPECT_EQ(cs.Node("a")->state, NodeState::kUnreachable);
  // A new sample on the same session brings it back.
  cs.RecordSample("a", 1, Sample(2), 5000);
  EXPECT_EQ(cs.Node("a")->state, NodeState::kReady);
}

TEST(ClusterStateTest, ReplayedOldSamplesDoNotReplaceLatest) {
  ClusterState cs(3);
  ASSERT_TRUE(cs.Connect(Info("a"), 1, 0).ok());
  cs.RecordSample("a", 1, Sample(500), 10);
  cs.RecordSample("a", 1, Sample(100), 20);
  EXPECT_EQ(cs.Node("a")->latest->time_ms, 500);
}

TEST(ClusterStateTest, SameNameDifferentIdIsRefusedWhileLive) {
  ClusterState cs(3);
  ASSERT_TRUE(cs.Connect(Info("a", "id-1"), 1, 0).ok());
  Status st = cs.Connect(Info("a", "id-2"), 2, 10);
  EXPECT_EQ(st.code(), StatusCode::kConflict);
  // The same identity reconnecting (agent restart) takes over.
  EXPECT_TRUE(cs.Connect(Info("a", "id-1"), 3, 20).ok());
  // The old session's late disconnect does not mark the node unreachable.
  cs.Disconnect("a", 1, 30);
  EXPECT_EQ(cs.Node("a")->state, NodeState::kReady);
}

TEST(ClusterStateTest, ListenersSeeNodeAndSampleEvents) {
  ClusterState cs(3);
  std::vector<std::string> events;
  int id = cs.AddListener([&](const std::string& e, const NodeView&) { events.push_back(e); });
  ASSERT_TRUE(cs.Connect(Info("a"), 1, 0).ok());
  cs.RecordSample("a", 1, Sample(1), 1);
  cs.RemoveListener(id);
  cs.RecordSample("a", 1, Sample(2), 2);
  EXPECT_EQ(events, (std::vector<std::string>{"node", "sample"}));
}

TEST(ClusterStateTest, KnownNodesStartUnreachable) {
  ClusterState cs(3);
  cs.LoadKnown({Info("b")});
  ASSERT_TRUE(cs.Node("b").has_value());
  EXPECT_EQ(cs.Node("b")->state, NodeState::kUnreachable);
  EXPECT_FALSE(cs.Node("zzz").has_value());
}

}  // namespace
}  // namespace rota::server
