#include "server/views.h"

#include <gtest/gtest.h>

namespace rota::server {
namespace {

NodeView View(int64_t t, uint32_t util, NodeState state = NodeState::kReady) {
  api::NodeInfo info;
  info.name = "n1";
  info.node_id = "id";
  info.gpus = {api::GpuInfo{0, "GPU-0", "Sim", "00:01", 1 << 30, 300000},
               api::GpuInfo{1, "GPU-1", "Sim", "00:02", 1 << 30, 300000}};
  NodeView v;
  v.info = std::make_shared<const api::NodeInfo>(std::move(info));
  v.state = state;
  auto s = std::make_shared<api::NodeSample>();
  s->time_ms = t;
  api::GpuSample g;
  g.index = 1;
  g.uuid = "GPU-1";
  g.util_gpu_pct = util;
  api::GpuProcess p;
  p.pid = 5;
  p.user = "bob";
  g.processes = {p};
  s->gpus = {g};
  v.latest = s;
  return v;
}

TEST(ViewsTest, GpuRowsMergeIdentityReadingsAndState) {
  GpuRowsCache cache;
  auto rows = api::Json::parse("[" + cache.Rows(View(1000, 77)) + "]");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["state"], "ok");
  EXPECT_FALSE(rows[0].contains("util_gpu_pct"));  // no reading for GPU 0
  EXPECT_EQ(rows[0]["processes"], api::Json::array());
  EXPECT_EQ(rows[1]["util_gpu_pct"], 77);
  EXPECT_EQ(rows[1]["users"], api::Json::array({"bob"}));
  EXPECT_EQ(rows[1]["memory_total_bytes"], 1 << 30);
  auto down = api::Json::parse("[" + cache.Rows(View(1000, 77, NodeState::kUnreachable)) + "]");
  EXPECT_EQ(down[1]["state"], "unreachable");
}

TEST(ViewsTest, CacheRendersAgainOnlyWhenTheSampleChanges) {
  GpuRowsCache cache;
  NodeView a = View(1000, 10);
  std::string first = cache.Rows(a);
  EXPECT_EQ(cache.Rows(a), first);
  NodeView b = View(2000, 90);
  std::string second = cache.Rows(b);
  EXPECT_NE(second, first);
  EXPECT_NE(second.find("\"util_gpu_pct\":90"), std::string::npos) << second;
}

}  // namespace
}  // namespace rota::server
