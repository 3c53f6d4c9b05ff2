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
  auto rendered = cache.Rows(View(1000, 77));
  auto rows = api::Json::parse("[" + rendered->text + "]");
  ASSERT_EQ(rendered->size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {  // each row alone, and every run of rows, is its JSON
    EXPECT_EQ(api::Json::parse(rendered->Slice(i, i + 1)), rows[i]) << i;
    EXPECT_EQ(api::Json::parse("[" + std::string(rendered->Slice(0, i + 1)) + "]").size(), i + 1);
  }
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["state"], "ok");
  EXPECT_FALSE(rows[0].contains("util_gpu_pct"));  // no reading for GPU 0
  EXPECT_EQ(rows[0]["processes"], api::Json::array());
  EXPECT_EQ(rows[1]["util_gpu_pct"], 77);
  EXPECT_EQ(rows[1]["users"], api::Json::array({"bob"}));
  EXPECT_EQ(rows[1]["memory_total_bytes"], 1 << 30);
  auto down = api::Json::parse("[" + cache.Rows(View(1000, 77, NodeState::kUnreachable))->text + "]");
  EXPECT_EQ(down[1]["state"], "unreachable");
}

TEST(ViewsTest, CacheRendersAgainOnlyWhenTheSampleChanges) {
  GpuRowsCache cache;
  NodeView a = View(1000, 10);
  auto first_rows = cache.Rows(a);
  EXPECT_EQ(cache.Rows(a), first_rows) << "the same rendering, not a new one";
  const std::string first = first_rows->text;
  NodeView b = View(2000, 90);
  std::string second = cache.Rows(b)->text;
  EXPECT_NE(second, first);
  EXPECT_NE(second.find("\"util_gpu_pct\":90"), std::string::npos) << second;
}

}  // namespace
}  // namespace rota::server
