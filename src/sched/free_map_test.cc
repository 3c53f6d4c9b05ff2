#include "sched/free_map.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "sched/sched_test_util.h"

namespace rota::sched {
namespace {

using namespace testing;  // NOLINT

TEST(FreeMapTest, UnusableAndUnschedulableGpusAreNotFree) {
  std::vector<Node> nodes = {MakeNode("a", 4, {1}), MakeNode("b", 2)};
  nodes[1].schedulable = false;
  FreeMap m(nodes);
  EXPECT_EQ(m.TotalFree(), 3u);
  EXPECT_FALSE(m.Free(0, 1));
  m.Take(On("a", {0, 2}));
  EXPECT_EQ(m.FreeGpus(0), 1u);
  m.Give(On("a", {0, 1}));  // 1 is unusable: not given back
  EXPECT_EQ(m.FreeGpus(0), 2u);
  EXPECT_FALSE(m.Free(0, 1));
}

TEST(FreeMapTest, FlatGivesAndUnblockedCountsAgreeWithTheNodeRules) {
  std::vector<Node> nodes = {MakeNode("a", 4, {1}), MakeNode("b", 4)};
  nodes[1].schedulable = false;
  FreeMap m(nodes);
  EXPECT_TRUE(m.Givable(0, 0));
  EXPECT_FALSE(m.Givable(0, 1));  // unusable
  EXPECT_FALSE(m.Givable(0, 4));  // not on the node
  EXPECT_FALSE(m.Givable(1, 0));  // node not schedulable
  m.Take(On("a", {0, 2, 3}));
  EXPECT_EQ(m.FreeGpus(0), 0u);
  // GPU 0 again (already free once given) is reported once.
  std::vector<uint32_t> freed;
  const std::vector<uint32_t> flat = {m.Offset(0) + 0, m.Offset(0) + 2, m.Offset(0) + 0};
  m.GiveFlat(0, flat, 0, 0, [&](uint32_t f) { freed.push_back(f); });
  EXPECT_EQ(freed, (std::vector<uint32_t>{m.Offset(0) + 0, m.Offset(0) + 2}));
  EXPECT_EQ(m.FreeGpus(0), 2u);
  EXPECT_EQ(m.TotalFree(), 2u);
  GpuMask blocked(m.FlatSize(), 0);
  blocked[m.Offset(0) + 2] = 1;
  blocked[m.Offset(0) + 3] = 1;  // not free: changes nothing
  EXPECT_EQ(m.FreeUnblocked(0, blocked), 1u);
  EXPECT_EQ(m.FreeUnblocked(1, blocked), 0u);
}

TEST(PlaceGangTest, PackChoosesTheTightestNodeAndLowestGpus) {
  std::vector<Node> nodes = {MakeNode("a", 8), MakeNode("b", 8)};
  FreeMap m(nodes);
  m.Take(On("b", {0, 1, 2, 3, 4}));  // b has 3 free: the tightest fit for 2
  auto p = PlaceGang(m, {Demand(1, 2)}, false, nullptr);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0], On("b", {5, 6}));
}

TEST(PlaceGangTest, SpreadPutsTasksOnAsManyNodesAsItCan) {
  // 8, 4 and 2 free GPUs: "the emptiest node" alone would put all three tasks
  // on a; spread takes a node the job does not use yet first.
  std::vector<Node> nodes = {MakeNode("a", 8), MakeNode("b", 4), MakeNode("c", 2)};
  FreeMap m(nodes);
  auto p = PlaceGang(m, {Demand(3, 1)}, true, nullptr);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 3u);
  std::set<std::string> used;
  for (const auto& t : *p) used.insert(t.node);
  EXPECT_EQ(used, (std::set<std::string>{"a", "b", "c"}));
  // More tasks than nodes: then the emptiest (a: 7 left, b: 3, c: 1).
  p = PlaceGang(m, {Demand(4, 1)}, true, nullptr);
  ASSERT_TRUE(p);
  std::map<std::string, int> per_node;
  for (const auto& t : *p) ++per_node[t.node];
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"a", 2}, {"b", 1}, {"c", 1}}));
  // Packing puts the three on one node.
  p = PlaceGang(m, {Demand(3, 1)}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].node, (*p)[2].node);
}

TEST(PlaceGangTest, ANodeRunsNoMoreTasksThanItHasSlots) {
  std::vector<Node> nodes = {MakeNode("a", 8), MakeNode("b", 8)};
  nodes[0].task_slots = 3;  // a: three job ports; b: not counted
  FreeMap m(nodes);
  m.Take(On("a", {0, 1, 2, 3, 4}));
  m.Take(On("a", {}));  // a CPU-only task takes a slot too
  // a (3 GPUs free, 1 slot) is the tightest fit for one task...
  auto one = PlaceGang(m, {Demand(1, 1)}, false, nullptr);
  ASSERT_TRUE(one);
  EXPECT_EQ((*one)[0].node, "a");
  // ... but holds only one more task: two go to b.
  auto two = PlaceGang(m, {Demand(2, 1)}, false, nullptr);
  ASSERT_TRUE(two);
  EXPECT_EQ((*two)[0].node, "b");
  EXPECT_EQ((*two)[1].node, "b");
  m.Take(On("a", {}));  // a's last slot
  auto next = PlaceGang(m, {Demand(1, 1)}, false, nullptr);
  ASSERT_TRUE(next);
  EXPECT_EQ((*next)[0].node, "b");
  m.Give(On("a", {}));
  EXPECT_EQ((*PlaceGang(m, {Demand(1, 1)}, false, nullptr))[0].node, "a");
  // Nodes with one address share its ports.
  std::vector<Node> shared = {MakeNode("s1", 8), MakeNode("s2", 8), MakeNode("own", 8)};
  for (auto& n : shared) n.task_slots = 3;
  shared[0].port_pool = shared[1].port_pool = "10.0.0.1";
  FreeMap pooled(shared);
  pooled.Take(On("s1", {}));
  pooled.Take(On("s2", {}));
  EXPECT_EQ(pooled.FreeSlots(0), 1);
  EXPECT_EQ(pooled.FreeSlots(1), 1);
  EXPECT_EQ(pooled.FreeSlots(2), 3);
  auto three = PlaceGang(pooled, {Demand(3, 1)}, false, nullptr);
  ASSERT_TRUE(three);  // one slot left on s1/s2 together: all three on "own"
  for (const auto& t : *three) EXPECT_EQ(t.node, "own");
  EXPECT_FALSE(PlaceGang(pooled, {Demand(5, 1)}, false, nullptr));  // 1 + 3 slots
  EXPECT_TRUE(PlaceGang(pooled, {Demand(4, 1)}, false, nullptr));
  // A node whose ports are all taken by other programs runs nothing new.
  std::vector<Node> full = {nodes[1]};  // FreeMap keeps pointers to its nodes
  full[0].task_slots = 0;
  FreeMap none(full);
  EXPECT_FALSE(PlaceGang(none, {Demand(1, 0)}, false, nullptr));
}

TEST(PlaceGangTest, MultiNodeJobUsesFewestNodes) {
  std::vector<Node> nodes = {MakeNode("a", 8), MakeNode("b", 8), MakeNode("c", 8)};
  FreeMap m(nodes);
  m.Take(On("a", {0, 1, 2, 3, 4, 5}));  // a: 2 free, b and c: 8 free
  auto p = PlaceGang(m, {Demand(10, 1)}, false, nullptr);
  ASSERT_TRUE(p);
  std::map<std::string, int> per_node;
  for (const auto& t : *p) per_node[t.node]++;
  // 8 on one empty node, then the rest on the tightest fit (a), not on c.
  EXPECT_EQ(per_node.size(), 2u);
  EXPECT_EQ(per_node["a"], 2);
}

TEST(PlaceGangTest, GangIsAllOrNothingUnderFragmentation) {
  std::vector<Node> nodes = {MakeNode("a", 8), MakeNode("b", 8)};
  FreeMap m(nodes);
  m.Take(On("a", {0, 1, 2, 3}));
  m.Take(On("b", {0, 1, 2, 3}));
  // 8 GPUs free in all, but no node holds a task of 8 GPUs.
  EXPECT_FALSE(PlaceGang(m, {Demand(1, 8)}, false, nullptr));
  // Two tasks of 4 fit.
  auto p = PlaceGang(m, {Demand(2, 4)}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->size(), 2u);
  // A gang of 4+4+1 does not: nothing is placed.
  EXPECT_FALSE(PlaceGang(m, {Demand(2, 4), Demand(1, 1)}, false, nullptr));
}

TEST(PlaceGangTest, SpreadPutsTasksOnTheEmptiestNodes) {
  std::vector<Node> nodes = {MakeNode("a", 4), MakeNode("b", 4)};
  FreeMap m(nodes);
  auto p = PlaceGang(m, {Demand(2, 1)}, true, nullptr);
  ASSERT_TRUE(p);
  EXPECT_NE((*p)[0].node, (*p)[1].node);
}

TEST(PlaceGangTest, ModelLabelsNodesAndCpusAreHonoured) {
  std::vector<Node> nodes = {MakeNode("a", 4), MakeNode("b", 4)};
  nodes[1].gpu_model = "V100";
  nodes[1].labels["rack"] = "r2";
  nodes[0].cpus = 4;
  FreeMap m(nodes);
  TaskDemand d = Demand(1, 1);
  d.gpu_model = "V100";
  auto p = PlaceGang(m, {d}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].node, "b");
  d.gpu_model = "v10";  // a part of the model, any case
  p = PlaceGang(m, {d}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].node, "b");
  d.gpu_model = "H100";  // a is an A100
  EXPECT_FALSE(PlaceGang(m, {d}, false, nullptr));
  d = Demand(1, 1);
  d.labels["rack"] = "r1";
  EXPECT_FALSE(PlaceGang(m, {d}, false, nullptr));
  d = Demand(1, 1);
  d.nodes = {"a"};
  d.cpus_per_task = 8;  // a has 4 CPUs
  EXPECT_FALSE(PlaceGang(m, {d}, false, nullptr));
  d.cpus_per_task = 2;
  p = PlaceGang(m, {Demand(1, 1), d}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[1].node, "a");
  EXPECT_EQ((*p)[1].cpus, 2u);
}

TEST(PlaceGangTest, BlockedGpusAreSkipped) {
  std::vector<Node> nodes = {MakeNode("a", 4)};
  FreeMap m(nodes);
  const GpuMask blocked = {1, 1, 0, 0};
  auto p = PlaceGang(m, {Demand(1, 2)}, false, &blocked);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].gpus, (std::vector<uint32_t>{2, 3}));
  EXPECT_FALSE(PlaceGang(m, {Demand(1, 3)}, false, &blocked));
}

// A workstation with two kinds of cards: GPUs 0 and 2 are 2080 Tis, 1 and 3
// are 1080 Tis (as NVML names them).
Node Workstation(const std::string& name) {
  Node n = MakeNode(name, 4);
  n.gpu_model = "";
  n.gpu_models = {"NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce GTX 1080 Ti",
                  "NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce GTX 1080 Ti"};
  return n;
}

TEST(PlaceGangTest, OnANodeOfMixedModelsATaskGetsOnlyGpusOfItsModel) {
  std::vector<Node> nodes = {Workstation("ws")};
  EXPECT_TRUE(Eligible(nodes[0], [] { TaskDemand d = Demand(1, 1); d.gpu_model = "1080"; return d; }()));
  EXPECT_FALSE(Eligible(nodes[0], [] { TaskDemand d = Demand(1, 1); d.gpu_model = "A100"; return d; }()));
  FreeMap m(nodes);
  TaskDemand d = Demand(1, 2);
  d.gpu_model = "1080 ti";
  auto p = PlaceGang(m, {d}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].gpus, (std::vector<uint32_t>{1, 3}));
  d.gpu_model = "2080";
  p = PlaceGang(m, {d}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].gpus, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(m.FreeFor(0, d), 4u - 2u);  // free 2080s: 2 of 4 GPUs
  // Three of one model: never, though four GPUs are free.
  d.tasks = 1;
  d.gpus_per_task = 3;
  EXPECT_FALSE(PlaceGang(m, {d}, false, nullptr));
  // Two one-GPU tasks of each model in one gang: each gets its own model.
  TaskDemand a = Demand(2, 1), b = Demand(2, 1);
  a.gpu_model = "2080";
  b.gpu_model = "1080";
  p = PlaceGang(m, {a, b}, false, nullptr);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 4u);
  EXPECT_EQ((*p)[0].gpus, std::vector<uint32_t>{0});
  EXPECT_EQ((*p)[1].gpus, std::vector<uint32_t>{2});
  EXPECT_EQ((*p)[2].gpus, std::vector<uint32_t>{1});
  EXPECT_EQ((*p)[3].gpus, std::vector<uint32_t>{3});
  a.tasks = 3;  // a third 2080: no
  EXPECT_FALSE(PlaceGang(m, {a, b}, false, nullptr));
}

TEST(PlaceGangTest, OnANodeOfMixedModelsATaskNamingNoneGetsOneModelWhenItCan) {
  std::vector<Node> nodes = {Workstation("ws")};
  FreeMap m(nodes);
  // Two GPUs naming no model: both 2080s (the model of the lowest free GPU
  // with enough), not GPUs 0 and 1.
  auto p = PlaceGang(m, {Demand(1, 2)}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].gpus, (std::vector<uint32_t>{0, 2}));
  // With GPU 2 taken, the two 1080s.
  m.TakeGpu(0, 2);
  p = PlaceGang(m, {Demand(1, 2)}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].gpus, (std::vector<uint32_t>{1, 3}));
  // Three: no model has three free; any three.
  p = PlaceGang(m, {Demand(1, 3)}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].gpus, (std::vector<uint32_t>{0, 1, 3}));
  // Blocked GPUs are not handed out on such a node either.
  GpuMask blocked(m.FlatSize(), 0);
  blocked[1] = 1;
  TaskDemand d = Demand(1, 2);
  d.gpu_model = "1080";
  EXPECT_FALSE(PlaceGang(m, {d}, false, &blocked));
  d.gpus_per_task = 1;
  p = PlaceGang(m, {d}, false, &blocked);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].gpus, std::vector<uint32_t>{3});
}

TEST(PlaceGangTest, OnANodeOfMixedModelsATaskNamingNoneLeavesTheModelALaterDemandAsks) {
  std::vector<Node> nodes = {Workstation("ws")};
  FreeMap m(nodes);
  // The task naming no model is placed first (same GPUs per task, caller's
  // order); the lowest model with enough is the 2080, which the second
  // demand asks for: it takes the 1080s, and the gang fits.
  TaskDemand any = Demand(1, 2), model = Demand(1, 2);
  model.gpu_model = "2080";
  auto p = PlaceGang(m, {any, model}, false, nullptr);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].gpus, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ((*p)[1].gpus, (std::vector<uint32_t>{0, 2}));
  // Asked in the other order, the same GPUs for the same demands.
  p = PlaceGang(m, {model, any}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].gpus, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ((*p)[1].gpus, (std::vector<uint32_t>{1, 3}));
  // The model asked is a part of the name, any case.
  model.gpu_model = "gtx 1080";
  p = PlaceGang(m, {any, model}, false, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)[0].gpus, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ((*p)[1].gpus, (std::vector<uint32_t>{1, 3}));
}

}  // namespace
}  // namespace rota::sched
