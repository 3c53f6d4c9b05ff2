#include "jobs/placement.h"

#include <gtest/gtest.h>

namespace rota::jobs {
namespace {

JobSpec Job(std::vector<TaskGroup> groups, Framework f = Framework::kGeneric) {
  JobSpec s;
  s.name = "j";
  s.command = {"true"};
  s.framework = f;
  s.groups = std::move(groups);
  return s;
}

TaskGroup Group(const std::string& role, uint32_t replicas, uint32_t gpus) {
  TaskGroup g;
  g.role = role;
  g.replicas = replicas;
  g.gpus_per_task = gpus;
  return g;
}

NodeOffer Node(const std::string& name, std::vector<uint32_t> free, uint32_t total,
               std::string address = "") {
  NodeOffer n;
  n.name = name;
  n.address = address.empty() ? name + ".lan" : address;
  n.free_gpus = std::move(free);
  n.total_gpus = total;
  return n;
}

TEST(PlaceJobTest, FirstFitFillsNodesInOrderWithDistinctPorts) {
  auto placed = PlaceJob(Job({Group("worker", 3, 2)}),
                         {Node("a", {0, 1, 2, 3}, 4), Node("b", {1, 3}, 4)});
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  ASSERT_EQ(placed->size(), 3u);
  EXPECT_EQ((*placed)[0], (PlacedTask{"worker", 0, "a", "a.lan", {0, 1}, 29500}));
  EXPECT_EQ((*placed)[1], (PlacedTask{"worker", 1, "a", "a.lan", {2, 3}, 29501}));
  EXPECT_EQ((*placed)[2], (PlacedTask{"worker", 2, "b", "b.lan", {1, 3}, 29500}));
  EXPECT_EQ((*placed)[2].Name(), "worker-2");
}

TEST(PlaceJobTest, SpreadGoesRoundRobin) {
  PlacementOptions o;
  o.spread = true;
  auto placed = PlaceJob(Job({Group("worker", 4, 1)}),
                         {Node("a", {0, 1}, 2), Node("b", {0, 1}, 2)}, o);
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  std::vector<std::string> nodes;
  for (const auto& t : *placed) nodes.push_back(t.node);
  EXPECT_EQ(nodes, (std::vector<std::string>{"a", "b", "a", "b"}));
}

TEST(PlaceJobTest, PortsAreUniquePerAddressAndSkipUsedOnes) {
  // Two simulated nodes on one machine share 127.0.0.1: their tasks' ports differ.
  PlacementOptions o;
  o.used_ports["127.0.0.1"] = {29500, 29502};
  auto placed = PlaceJob(Job({Group("worker", 3, 1)}),
                         {Node("a", {0}, 1, "127.0.0.1"), Node("b", {0, 1}, 2, "127.0.0.1")}, o);
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ((*placed)[0].port, 29501);
  EXPECT_EQ((*placed)[1].port, 29503);
  EXPECT_EQ((*placed)[2].port, 29504);
  o.ports = {29500, 29503};
  auto full = PlaceJob(Job({Group("worker", 3, 1)}),
                       {Node("a", {0}, 1, "127.0.0.1"), Node("b", {0, 1}, 2, "127.0.0.1")}, o);
  EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(full.status().message().find("no free port"), std::string::npos);
}

TEST(PlaceJobTest, LabelsAndExplicitNodesRestrictPlacement) {
  TaskGroup g = Group("worker", 1, 1);
  g.node_labels = {{"rack", "r2"}};
  NodeOffer a = Node("a", {0}, 1), b = Node("b", {0}, 1);
  b.labels = {{"rack", "r2"}};
  auto placed = PlaceJob(Job({g}), {a, b});
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ((*placed)[0].node, "b");

  TaskGroup pinned = Group("worker", 1, 1);
  pinned.nodes = {"a"};
  placed = PlaceJob(Job({pinned}), {a, b});
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ((*placed)[0].node, "a");

  pinned.nodes = {"zz"};
  auto unknown = PlaceJob(Job({pinned}), {a, b});
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'zz'"), std::string::npos);
  g.node_labels = {{"rack", "r9"}};
  auto nolabel = PlaceJob(Job({g}), {a, b});
  EXPECT_EQ(nolabel.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(nolabel.status().message().find("rack=r9"), std::string::npos);
}

TEST(PlaceJobTest, AGpuModelRestrictsPlacementAndNamesItWhenNoNodeHasIt) {
  NodeOffer a = Node("a", {0}, 1), b = Node("b", {0}, 1);
  a.gpu_model = "Tesla T4";
  b.gpu_model = "NVIDIA A100-SXM4-80GB";
  TaskGroup g = Group("worker", 1, 1);
  g.gpu_model = "a100";
  auto placed = PlaceJob(Job({g}), {a, b});
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ((*placed)[0].node, "b");
  TaskGroup cpu = Group("ps", 1, 0);
  cpu.gpu_model = "H100";  // a task without GPUs goes anywhere
  EXPECT_TRUE(PlaceJob(Job({cpu}), {a}).ok());
  g.gpu_model = "H100";
  g.node_labels = {{"rack", "r1"}};
  a.labels = b.labels = {{"rack", "r1"}};
  auto none = PlaceJob(Job({g}), {a, b});
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("labels rack=r1 and GPU model H100"), std::string::npos)
      << none.status().message();
}

// A workstation with two 2080 Tis (GPUs 0 and 2) and two 1080 Tis (1 and 3).
TEST(PlaceJobTest, OnANodeOfMixedModelsATaskGetsOnlyItsModelsGpus) {
  NodeOffer ws = Node("ws", {0, 1, 2, 3}, 4);
  ws.gpu_model = "NVIDIA GeForce RTX 2080 Ti";
  ws.gpu_models = {"NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce GTX 1080 Ti",
                   "NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce GTX 1080 Ti"};
  TaskGroup g = Group("worker", 1, 2);
  g.gpu_model = "1080";
  auto placed = PlaceJob(Job({g}), {ws});
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ((*placed)[0].gpus, (std::vector<uint32_t>{1, 3}));
  // A second group takes what the first left of its own model.
  TaskGroup h = Group("ps", 2, 1);
  h.gpu_model = "2080";
  placed = PlaceJob(Job({g, h}), {ws});
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ((*placed)[1].gpus, std::vector<uint32_t>{0});
  EXPECT_EQ((*placed)[2].gpus, std::vector<uint32_t>{2});
  // Three of one model can never run there: refused, naming what it has.
  g.gpus_per_task = 3;
  auto never = PlaceJob(Job({g}), {ws});
  EXPECT_EQ(never.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(never.status().message().find("needs 3 1080 GPUs; the largest node, ws, has 2"),
            std::string::npos)
      << never.status().message();
  g.gpu_model = "A100";
  EXPECT_NE(PlaceJob(Job({g}), {ws}).status().message().find("GPU model A100"), std::string::npos);
  // Two of a model, one of them busy: not now, but not never.
  g.gpu_model = "1080";
  g.gpus_per_task = 2;
  ws.free_gpus = {0, 1, 2};
  EXPECT_EQ(PlaceJob(Job({g}), {ws}).status().code(), StatusCode::kResourceExhausted);
}

TEST(PlaceJobTest, TooManyGpusPerTaskNamesTheLargestNode) {
  auto placed = PlaceJob(Job({Group("worker", 1, 16)}),
                         {Node("small", {0, 1}, 2), Node("big", {}, 8), Node("mid", {0}, 4)});
  EXPECT_EQ(placed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(placed.status().message().find("needs 16 GPUs"), std::string::npos)
      << placed.status().message();
  EXPECT_NE(placed.status().message().find("big, has 8"), std::string::npos)
      << placed.status().message();
}

TEST(PlaceJobTest, AJobTheWholeClusterCouldNeverHoldIsRefusedNamingWhy) {
  const std::vector<NodeOffer> cluster = {Node("a", {}, 8), Node("b", {}, 4), Node("c", {}, 2)};
  // More tasks than the nodes hold, though each task fits one.
  auto placed = PlaceJob(Job({Group("worker", 1000, 1)}), cluster);
  EXPECT_EQ(placed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(placed.status().message().find("the 1000 worker tasks need 1 GPU each; the nodes hold 14"),
            std::string::npos)
      << placed.status().message();
  // Two 3-GPU tasks on the two nodes named: only b holds one.
  TaskGroup named = Group("worker", 2, 3);
  named.nodes = {"b", "c"};
  placed = PlaceJob(Job({named}), cluster);
  EXPECT_EQ(placed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(placed.status().message().find("the nodes allowed hold 1 such tasks"), std::string::npos)
      << placed.status().message();
  // A group after one that fits is checked too.
  placed = PlaceJob(Job({Group("ps", 1, 0), Group("worker", 1, 16)}), cluster);
  EXPECT_EQ(placed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(placed.status().message().find("a worker task needs 16 GPUs"), std::string::npos)
      << placed.status().message();
  // Each group fits alone, not both together: 12 + 4 GPUs on 14.
  placed = PlaceJob(Job({Group("a", 3, 4), Group("b", 4, 1)}), cluster);
  EXPECT_EQ(placed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(placed.status().message().find("needs 16 GPUs at once; the cluster has 14"), std::string::npos)
      << placed.status().message();
}

TEST(PlaceJobTest, GangIsAllOrNothingWhenGpusAreBusy) {
  auto placed = PlaceJob(Job({Group("worker", 3, 2)}), {Node("a", {0, 1, 2}, 4), Node("b", {0}, 4)});
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(placed.status().message().find("worker-1 needs 2"), std::string::npos)
      << placed.status().message();
}

TEST(PlaceJobTest, UnreachableNodesAreNotUsed) {
  NodeOffer down = Node("a", {0, 1}, 2);
  down.ready = false;
  auto placed = PlaceJob(Job({Group("worker", 1, 1)}), {down, Node("b", {1}, 2)});
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ((*placed)[0].node, "b");
  EXPECT_EQ(PlaceJob(Job({Group("worker", 1, 1)}), {down}).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(PlaceJobTest, CpusAndMemoryAreAccountedWhenKnown) {
  TaskGroup g = Group("worker", 2, 0);
  g.cpus_per_task = 3;
  NodeOffer a = Node("a", {}, 0), b = Node("b", {}, 0);
  a.cpus = 4000;  // milli-cores
  b.cpus = 4000;
  auto placed = PlaceJob(Job({g}), {a, b});
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ((*placed)[0].node, "a");
  EXPECT_EQ((*placed)[1].node, "b");  // a has 1 CPU left
  g.cpus_per_task = 8;
  EXPECT_EQ(PlaceJob(Job({g}), {a, b}).status().code(), StatusCode::kInvalidArgument);
}

TEST(PlaceJobTest, GroupsArePlacedInOrder) {
  auto placed = PlaceJob(Job({Group("ps", 1, 0), Group("worker", 2, 1)}, Framework::kTensorflow),
                         {Node("a", {0, 1}, 2)});
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ((*placed)[0].Name(), "ps-0");
  EXPECT_TRUE((*placed)[0].gpus.empty());
  EXPECT_EQ((*placed)[1].Name(), "worker-0");
  EXPECT_EQ((*placed)[2].Name(), "worker-1");
  EXPECT_EQ((*placed)[2].gpus, std::vector<uint32_t>{1});
}

}  // namespace
}  // namespace rota::jobs
