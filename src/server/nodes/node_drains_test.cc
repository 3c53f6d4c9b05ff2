#include "server/nodes/node_drains.h"

#include <gtest/gtest.h>

#include "server/store/node_drains.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

api::NodeInfo Info(const std::string& name) {
  api::NodeInfo n;
  n.name = name;
  n.node_id = "id-" + name;
  n.sample_interval_ms = 1000;
  return n;
}

class NodeDrainsTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  // A server's start: the store, the known nodes, then the drains.
  void Open() {
    drains_.reset();
    store_.reset();
    auto s = store::Store::Open(dir_.path(), store::StoreOptions{}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    cluster_ = std::make_unique<ClusterState>(3);
    cluster_->LoadKnown({Info("gpu-a"), Info("gpu-b")});
    drains_ = std::make_unique<NodeDrains>(store_.get(), cluster_.get(), &clock_);
    ASSERT_TRUE(drains_->Start().ok());
  }

  std::vector<store::NodeDrainRow> StoredDrains() {
    std::vector<store::NodeDrainRow> rows;
    EXPECT_TRUE(store_->Read([&](store::Db& db) -> Status {
      ASSIGN_OR_RETURN(rows, store::LoadNodeDrains(db));
      return Status::Ok();
    }).ok());
    return rows;
  }

  store::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ClusterState> cluster_;
  std::unique_ptr<NodeDrains> drains_;
};

TEST_F(NodeDrainsTest, ADrainIsShownStoredAndOutlivesARestartUntilResumed) {
  const int64_t t0 = clock_.NowMs();
  int events = 0;
  cluster_->AddListener([&](const std::string& event, const NodeView&) { events += event == "node"; });
  auto v = drains_->Drain("gpu-a", "disk swap", "admin");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_TRUE(v->drain.has_value());
  EXPECT_EQ(*v->drain, (NodeDrain{"disk swap", "admin", t0}));
  EXPECT_EQ(events, 1) << "a drain is a node event (it wakes the scheduler)";
  EXPECT_FALSE(cluster_->Node("gpu-b")->drain.has_value());

  // Draining again replaces the reason and who, and keeps since when.
  clock_.AdvanceMs(60'000);
  v = drains_->Drain("gpu-a", "", "root2");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v->drain, (NodeDrain{"", "root2", t0}));

  Open();
  ASSERT_TRUE(cluster_->Node("gpu-a")->drain.has_value()) << "lost across a restart";
  EXPECT_EQ(*cluster_->Node("gpu-a")->drain, (NodeDrain{"", "root2", t0}));
  v = drains_->Resume("gpu-a");
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->drain.has_value());
  EXPECT_TRUE(drains_->Resume("gpu-a").ok()) << "resuming a node that is not drained is no error";
  Open();
  EXPECT_FALSE(cluster_->Node("gpu-a")->drain.has_value());
}

TEST_F(NodeDrainsTest, BadInputIsRefusedAndNothingIsStored) {
  auto unknown = drains_->Drain("nope", "", "admin");
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(drains_->Resume("nope").status().code(), StatusCode::kNotFound);
  auto control = drains_->Drain("gpu-a", "bad\nreason", "admin");
  EXPECT_EQ(control.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(control.status().message().find("reason"), std::string::npos) << control.status().message();
  auto long_reason = drains_->Drain("gpu-a", std::string(kMaxDrainReasonChars + 1, 'x'), "admin");
  EXPECT_EQ(long_reason.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(cluster_->Node("gpu-a")->drain.has_value());
  EXPECT_TRUE(StoredDrains().empty());
}

TEST_F(NodeDrainsTest, TheStoredDrainOfANodeNoLongerKnownIsRemovedAtStart) {
  ASSERT_TRUE(store_->Write([](store::Db& db) {
    return store::PutNodeDrain(db, {"gone", "old", "admin", 1});
  }).ok());
  Open();
  EXPECT_TRUE(StoredDrains().empty());
}

}  // namespace
}  // namespace rota::server
