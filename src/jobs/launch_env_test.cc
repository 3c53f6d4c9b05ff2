#include "jobs/launch_env.h"

#include <gtest/gtest.h>

#include <set>

#include "api/codec.h"

namespace rota::jobs {
namespace {

using api::Json;

TaskGroup Group(const std::string& role, uint32_t replicas, uint32_t gpus) {
  TaskGroup g;
  g.role = role;
  g.replicas = replicas;
  g.gpus_per_task = gpus;
  return g;
}

std::vector<NodeOffer> TwoNodes() {
  NodeOffer a{"gpu-a", "10.0.0.1", {}, {0, 1, 2, 3}, 4};
  NodeOffer b{"gpu-b", "10.0.0.2", {}, {0, 1, 2, 3}, 4};
  return {a, b};
}

std::vector<ProcessLaunch> Launch(const JobSpec& spec, std::vector<NodeOffer> nodes,
                                  PlacementOptions o = {}) {
  auto placed = PlaceJob(spec, nodes, o);
  EXPECT_TRUE(placed.ok()) << placed.status().ToString();
  if (!placed.ok()) return {};
  auto launch = BuildLaunch(spec, *placed, {"job-7", 2});
  EXPECT_TRUE(launch.ok()) << launch.status().ToString();
  return launch.ok() ? *launch : std::vector<ProcessLaunch>{};
}

TEST(BuildLaunchTest, TensorflowConfigAndLegacyFlagsDescribeOneCluster) {
  JobSpec s;
  s.name = "tf";
  s.framework = Framework::kTensorflow;
  s.command = {"python", "train.py", "--ps_hosts={ps_hosts}", "--worker_hosts={worker_hosts}",
               "--job_name={job_name}", "--task_index={task_index}"};
  s.env = {{"TF_CONFIG", "user value loses"}, {"MY_VAR", "kept"}};
  s.groups = {Group("chief", 1, 0), Group("ps", 1, 0), Group("worker", 2, 1),
              Group("evaluator", 1, 0)};
  PlacementOptions o;
  o.spread = true;
  auto procs = Launch(s, TwoNodes(), o);
  ASSERT_EQ(procs.size(), 5u);
  // chief-0 on a, ps-0 on b, worker-0 on a, worker-1 on b, evaluator-0 on a.
  const ProcessLaunch& w1 = procs[3];
  EXPECT_EQ(w1.name, "worker-1");
  EXPECT_EQ(w1.node, "gpu-b");
  auto tf = api::ParseJson(w1.env.at("TF_CONFIG"));
  ASSERT_TRUE(tf.ok()) << w1.env.at("TF_CONFIG");
  EXPECT_EQ((*tf)["task"], (Json{{"type", "worker"}, {"index", 1}}));
  EXPECT_EQ((*tf)["cluster"]["chief"], Json({"10.0.0.1:29500"}));
  EXPECT_EQ((*tf)["cluster"]["ps"], Json({"10.0.0.2:29500"}));
  EXPECT_EQ((*tf)["cluster"]["worker"], Json({"10.0.0.1:29501", "10.0.0.2:29501"}));
  EXPECT_FALSE((*tf)["cluster"].contains("evaluator"));
  EXPECT_EQ(w1.argv, (std::vector<std::string>{"python", "train.py", "--ps_hosts=10.0.0.2:29500",
                                               "--worker_hosts=10.0.0.1:29501,10.0.0.2:29501",
                                               "--job_name=worker", "--task_index=1"}));
  EXPECT_EQ(w1.env.at("MY_VAR"), "kept");
  EXPECT_EQ(w1.env.at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(w1.env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  EXPECT_EQ(procs[1].env.at("CUDA_VISIBLE_DEVICES"), "");  // ps: no GPUs
  EXPECT_EQ(procs[4].name, "evaluator-0");
  // Every task's TF_CONFIG names the same cluster.
  for (const auto& p : procs) {
    EXPECT_EQ((*api::ParseJson(p.env.at("TF_CONFIG")))["cluster"], (*tf)["cluster"]) << p.name;
  }
}

// The preview's example placement gives a launch plan the framework code accepts: one
// node per task, GPUs from 0, and the framework's variables naming those nodes.
TEST(ExamplePlacementTest, PytorchPreviewNamesOneNodePerTask) {
  JobSpec spec;
  spec.name = "ddp";
  spec.command = {"python", "train.py"};
  spec.framework = Framework::kPytorch;
  spec.groups = {Group("master", 1, 2), Group("worker", 2, 2)};
  const std::vector<PlacedTask> placed = ExamplePlacement(spec);
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_EQ(placed[0].Name(), "master-0");
  EXPECT_EQ(placed[2].Name(), "worker-1");
  EXPECT_EQ(placed[2].node, "node-3");
  EXPECT_EQ(placed[1].gpus, (std::vector<uint32_t>{0, 1}));
  auto launch = BuildLaunch(spec, placed, {"0", 0});
  ASSERT_TRUE(launch.ok()) << launch.status().ToString();
  ASSERT_EQ(launch->size(), 6u);  // one process per GPU
  EXPECT_EQ(launch->front().env.at("MASTER_ADDR"), "node-1");
  EXPECT_EQ(launch->front().env.at("WORLD_SIZE"), "6");
  EXPECT_EQ(launch->back().env.at("RANK"), "5");
  EXPECT_EQ(launch->back().env.at("CUDA_VISIBLE_DEVICES"), "1");
}

TEST(BuildLaunchTest, GenericVariables) {
  JobSpec s;
  s.name = "g";
  s.command = {"./run"};
  s.groups = {Group("worker", 2, 2)};
  auto procs = Launch(s, TwoNodes());
  ASSERT_EQ(procs.size(), 2u);
  const auto& env = procs[1].env;
  EXPECT_EQ(env.at("ROTA_JOB_ID"), "job-7");
  EXPECT_EQ(env.at("ROTA_TASK_ROLE"), "worker");
  EXPECT_EQ(env.at("ROTA_TASK_INDEX"), "1");
  EXPECT_EQ(env.at("ROTA_TASK_NAME"), "worker-1");
  EXPECT_EQ(env.at("ROTA_HOSTS"), "10.0.0.1,10.0.0.1");
  EXPECT_EQ(env.at("ROTA_PORTS"), "29500,29501");
  EXPECT_EQ(env.at("ROTA_PORT"), "29501");
  EXPECT_EQ(env.at("ROTA_RESTART_COUNT"), "2");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "2,3");
}

TEST(BuildLaunchTest, PytorchOneProcessPerGpuWithConsistentRanks) {
  JobSpec s;
  s.name = "ddp";
  s.framework = Framework::kPytorch;
  s.command = {"/usr/bin/python3", "train.py"};
  s.groups = {Group("worker", 2, 2)};  // 2 nodes x 2 GPUs
  PlacementOptions o;
  o.spread = true;
  auto procs = Launch(s, TwoNodes(), o);
  ASSERT_EQ(procs.size(), 4u);
  std::set<std::string> ranks;
  for (const auto& p : procs) {
    EXPECT_EQ(p.env.at("WORLD_SIZE"), "4") << p.name;
    EXPECT_EQ(p.env.at("MASTER_ADDR"), "10.0.0.1") << p.name;
    EXPECT_EQ(p.env.at("MASTER_PORT"), "29500") << p.name;
    EXPECT_EQ(p.env.at("LOCAL_WORLD_SIZE"), "2") << p.name;
    EXPECT_EQ(p.env.at("PET_NNODES"), "2") << p.name;
    EXPECT_EQ(p.env.at("TORCHELASTIC_RESTART_COUNT"), "2") << p.name;
    EXPECT_EQ(p.gpus.size(), 1u) << p.name;
    ranks.insert(p.env.at("RANK"));
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(procs[3].name, "worker-1.1");
  EXPECT_EQ(procs[3].task, "worker-1");
  EXPECT_EQ(procs[3].env.at("RANK"), "3");
  EXPECT_EQ(procs[3].env.at("LOCAL_RANK"), "1");
  EXPECT_EQ(procs[3].env.at("NODE_RANK"), "1");
  EXPECT_EQ(procs[3].env.at("CUDA_VISIBLE_DEVICES"), "1");
}

TEST(BuildLaunchTest, PytorchProcessPerNodeForTorchrun) {
  JobSpec s;
  s.name = "ddp";
  s.framework = Framework::kPytorch;
  s.process_per_node = true;
  s.command = {"torchrun", "train.py"};
  s.groups = {Group("worker", 2, 4)};
  PlacementOptions o;
  o.spread = true;
  auto procs = Launch(s, TwoNodes(), o);
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[1].env.at("PET_NODE_RANK"), "1");
  EXPECT_EQ(procs[1].env.at("PET_NPROC_PER_NODE"), "4");
  EXPECT_EQ(procs[1].env.at("PET_MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(procs[1].env.at("PET_MASTER_PORT"), "29500");
  EXPECT_EQ(procs[1].env.at("WORLD_SIZE"), "8");
  EXPECT_EQ(procs[1].env.at("RANK"), "4");
  EXPECT_EQ(procs[1].env.at("CUDA_VISIBLE_DEVICES"), "0,1,2,3");
}

TEST(BuildLaunchTest, MpiHostfileForTheLauncherWorkersHoldGpus) {
  JobSpec s;
  s.name = "hvd";
  s.framework = Framework::kMpi;
  TaskGroup launcher = Group("launcher", 1, 0);
  launcher.command = {"mpirun", "--hostfile", "{hostfile}", "-np", "{num_procs}", "python", "t.py"};
  s.groups = {launcher, Group("worker", 3, 2)};
  auto procs = Launch(s, TwoNodes());
  ASSERT_EQ(procs.size(), 4u);
  const ProcessLaunch& l = procs[0];
  EXPECT_TRUE(l.runs);
  EXPECT_EQ(l.files.at("hostfile"), "10.0.0.1 slots=4\n10.0.0.2 slots=2\n");
  EXPECT_EQ(l.file_env.at("ROTA_HOSTFILE"), "hostfile");
  EXPECT_EQ(l.env.at("ROTA_MPI_HOSTS"), "10.0.0.1:4,10.0.0.2:2");
  EXPECT_EQ(l.argv, (std::vector<std::string>{"mpirun", "--hostfile", "{file:hostfile}", "-np",
                                              "6", "python", "t.py"}));
  for (size_t i = 1; i < procs.size(); ++i) {
    EXPECT_FALSE(procs[i].runs) << procs[i].name;
    EXPECT_TRUE(procs[i].argv.empty()) << procs[i].name;
    EXPECT_EQ(procs[i].gpus.size(), 2u) << procs[i].name;
  }
}

TEST(BuildLaunchTest, JaxCoordinator) {
  JobSpec s;
  s.name = "jax";
  s.framework = Framework::kJax;
  s.command = {"python", "j.py"};
  s.groups = {Group("worker", 3, 1)};
  PlacementOptions o;
  o.spread = true;
  auto procs = Launch(s, TwoNodes(), o);
  ASSERT_EQ(procs.size(), 3u);
  for (size_t i = 0; i < procs.size(); ++i) {
    EXPECT_EQ(procs[i].env.at("COORDINATOR_ADDRESS"), "10.0.0.1:29500");
    EXPECT_EQ(procs[i].env.at("NUM_PROCESSES"), "3");
    EXPECT_EQ(procs[i].env.at("PROCESS_ID"), std::to_string(i));
  }
}

TEST(BuildLaunchTest, ShellJobsRunThroughShAndArgvIsNeverJoined) {
  JobSpec s;
  s.name = "sh";
  s.command = {"echo $HOME; rm -rf \"$(pwd)/x\""};
  s.shell = true;
  s.groups = {Group("worker", 1, 0)};
  auto procs = Launch(s, TwoNodes());
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].argv, (std::vector<std::string>{"/bin/sh", "-c", s.command[0]}));
  s.shell = false;
  s.command = {"echo", "a b; c", "$(x)"};
  procs = Launch(s, TwoNodes());
  EXPECT_EQ(procs[0].argv, s.command);  // as given: no shell involved
}

TEST(BuildLaunchTest, RejectsPlacementsThatDoNotMatchTheSpec) {
  JobSpec s;
  s.name = "g";
  s.command = {"./run"};
  s.groups = {Group("worker", 2, 1)};
  auto placed = PlaceJob(s, TwoNodes());
  ASSERT_TRUE(placed.ok());
  std::vector<PlacedTask> missing = {(*placed)[0]};
  EXPECT_EQ(BuildLaunch(s, missing, {}).status().code(), StatusCode::kInvalidArgument);
  std::vector<PlacedTask> bad_address = *placed;
  bad_address[1].address = "x;rm -rf /";
  auto r = BuildLaunch(s, bad_address, {});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("not a host name"), std::string::npos);
  std::vector<PlacedTask> wrong_gpus = *placed;
  wrong_gpus[0].gpus = {0, 1};
  EXPECT_EQ(BuildLaunch(s, wrong_gpus, {}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rota::jobs
