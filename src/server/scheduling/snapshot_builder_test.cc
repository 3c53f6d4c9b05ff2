#include "server/scheduling/snapshot_builder.h"

#include <gtest/gtest.h>

namespace rota::server::scheduling {
namespace {

NodeView Node(const std::string& name, uint32_t gpus, bool ready = true) {
  api::NodeInfo info;
  info.name = name;
  info.cpus = 32;
  info.memory_bytes = 1ULL << 36;
  info.labels = {{"rack", "r1"}};
  info.sample_interval_ms = 1000;
  for (uint32_t i = 0; i < gpus; ++i) info.gpus.push_back({.index = i, .name = "A100"});
  NodeView v;
  v.info = std::make_shared<const api::NodeInfo>(std::move(info));
  v.state = ready ? NodeState::kReady : NodeState::kUnreachable;
  v.connected = ready;
  return v;
}

// A sample of `v` at `t_ms` with one process per (gpu, user).
void Sample(NodeView& v, int64_t t_ms, const std::vector<std::pair<uint32_t, std::string>>& procs,
            std::vector<uint32_t> failed = {}) {
  auto s = std::make_shared<api::NodeSample>();
  s->time_ms = t_ms;
  for (const auto& g : v.info->gpus) {
    api::GpuSample gs;
    gs.index = g.index;
    gs.failed = std::find(failed.begin(), failed.end(), g.index) != failed.end();
    for (const auto& [gpu, user] : procs) {
      if (gpu == g.index) gs.processes.push_back({.pid = 100 + gpu, .user = user});
    }
    s->gpus.push_back(std::move(gs));
  }
  v.latest = s;
}

Job Running(int64_t id, const std::string& owner, const std::string& node, std::vector<uint32_t> gpus) {
  Job j;
  j.id = id;
  j.owner = owner;
  j.state = jobs::JobState::kRunning;
  j.created_ms = 1000;
  j.started_ms = 5000;
  j.spec.queue = "ml";
  j.spec.time_limit_ms = 60'000;
  j.spec.preemptible = true;
  j.spec.groups = {{.role = "worker", .replicas = 1, .gpus_per_task = static_cast<uint32_t>(gpus.size()),
                    .cpus_per_task = 4}};
  // pytorch: one process per GPU of the one task
  for (uint32_t g : gpus) {
    JobTask t;
    t.role = "worker";
    t.index = 0;
    t.node = node;
    t.gpus = {g};
    t.state = jobs::TaskState::kRunning;
    t.unix_user = owner;
    j.tasks.push_back(t);
  }
  j.run_open = true;
  return j;
}

TEST(SnapshotBuilder, JobsBecomeRunningAndPendingWithTheirMeta) {
  std::map<int64_t, Job> jobs;
  jobs[1] = Running(1, "alice", "a", {3, 1});
  jobs[1].attained_gpu_ms = 500;
  Job pending;
  pending.id = 2;
  pending.owner = "bob";
  pending.created_ms = 2000;
  pending.retry_at_ms = 9000;
  pending.spec.priority = -5;
  pending.spec.spread = true;
  pending.spec.groups = {{.role = "ps", .replicas = 1},
                         {.role = "worker", .replicas = 3, .gpus_per_task = 2,
                          .node_labels = {{"rack", "r1"}}, .nodes = {"a"}}};
  jobs[2] = pending;
  Job stopping = Running(3, "carol", "a", {0});
  stopping.state = jobs::JobState::kPending;  // being requeued: its task still runs
  stopping.stop_to = StopTo::kRequeue;
  stopping.moving = true;  // a defragmentation move
  jobs[3] = stopping;
  Job ended = Running(4, "dave", "a", {2});
  ended.state = jobs::JobState::kSucceeded;
  jobs[4] = ended;

  SchedulingInput in;
  in.now_ms = 15'000;
  in.nodes = {Node("a", 4)};
  in.jobs = &jobs;
  in.group_of = {{"alice", "vision"}};
  const sched::Snapshot s = BuildSnapshot(in);

  ASSERT_EQ(s.running.size(), 2u);
  const sched::RunningJob& r = s.running[0];
  EXPECT_EQ(r.meta.id, 1);
  EXPECT_EQ(r.meta.group, "vision");
  EXPECT_EQ(r.meta.queue, "ml");
  EXPECT_TRUE(r.meta.preemptible);
  EXPECT_EQ(r.expected_end_ms, 65'000);
  EXPECT_TRUE(r.stoppable);
  ASSERT_EQ(r.tasks.size(), 1u) << "processes of one task are one allocation";
  EXPECT_EQ(r.tasks[0].gpus, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(r.tasks[0].cpus, 4000u);  // milli-cores
  EXPECT_DOUBLE_EQ(r.meta.attained_gpu_ms, 500 + 2 * 10'000);
  ASSERT_EQ(r.demands.size(), 1u) << "what a moved job must get elsewhere";
  EXPECT_EQ(r.demands[0].gpus_per_task, 2u);
  EXPECT_EQ(r.demands[0].cpus_per_task, 4000u);
  EXPECT_FALSE(s.running[1].stoppable) << "a job being stopped is no preemption candidate";
  EXPECT_FALSE(r.moving);
  EXPECT_TRUE(s.running[1].moving);

  ASSERT_EQ(s.pending.size(), 1u);
  const sched::PendingJob& p = s.pending[0];
  EXPECT_EQ(p.meta.id, 2);
  EXPECT_EQ(p.meta.queue, "default");
  EXPECT_EQ(p.meta.priority, -5);
  EXPECT_EQ(p.meta.queued_ms, 2000) << "never requeued: queued when created";
  EXPECT_EQ(p.not_before_ms, 9000);
  EXPECT_TRUE(p.spread);
  ASSERT_EQ(p.demands.size(), 2u);
  EXPECT_EQ(p.demands[1].tasks, 3u);
  EXPECT_EQ(p.demands[1].gpus_per_task, 2u);
  EXPECT_EQ(p.demands[1].nodes, std::vector<std::string>{"a"});
  EXPECT_EQ(p.demands[1].labels.at("rack"), "r1");
}

TEST(SnapshotBuilder, NodesSayWhatIsUnusable) {
  std::map<int64_t, Job> jobs;
  jobs[1] = Running(1, "alice", "a", {0});
  NodeView a = Node("a", 4);
  // GPU 0: alice's job and someone else; GPU 1: by hand; GPU 2: failed;
  // GPU 3: the lingering process of a job that ended at 9,500.
  Sample(a, 10'000, {{0, "alice"}, {0, "mallory"}, {1, "bob"}, {3, "carol"}}, {2});
  NodeView b = Node("b", 2, /*ready=*/false);
  auto gapped = std::make_shared<api::NodeInfo>(*b.info);
  gapped->gpus.erase(gapped->gpus.begin());  // GPU indices with a gap: only 1
  b.info = gapped;
  SchedulingInput in;
  in.nodes = {a, b};
  in.jobs = &jobs;
  in.released_ms = {{{"a", 3}, 9'500}};
  sched::Snapshot s = BuildSnapshot(in);
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].gpus, 4u);
  EXPECT_EQ(s.nodes[0].gpu_model, "A100");
  EXPECT_TRUE(s.nodes[0].gpu_models.empty()) << "one model: no per-GPU list";
  EXPECT_EQ(s.nodes[0].unusable_gpus, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_TRUE(s.nodes[0].schedulable);
  EXPECT_FALSE(s.nodes[1].schedulable);
  EXPECT_EQ(s.nodes[1].unschedulable_reason, "unreachable");
  EXPECT_EQ(s.nodes[1].unusable_gpus, std::vector<uint32_t>{0});

  // A drained node, ready or not, takes no new job and says why.
  in.nodes[0].drain = NodeDrain{"disk swap", "admin", 1};
  in.nodes[1].drain = NodeDrain{"", "admin", 1};
  s = BuildSnapshot(in);
  EXPECT_FALSE(s.nodes[0].schedulable);
  EXPECT_EQ(s.nodes[0].unschedulable_reason, "drained: disk swap");
  EXPECT_EQ(s.nodes[1].unschedulable_reason, "drained");
  EXPECT_EQ(s.nodes[0].unusable_gpus, (std::vector<uint32_t>{0, 1, 2})) << "the readings still count";

  // A sample taken well after the release: carol's process is someone's by hand.
  Sample(a, 12'000, {{3, "carol"}});
  in.nodes = {a};
  s = BuildSnapshot(in);
  EXPECT_EQ(s.nodes[0].unusable_gpus, std::vector<uint32_t>{3});

  // GPUs of a task given up on while its node was away are not free, even with
  // no process seen there; an index beyond the node's GPUs is ignored.
  in.unconfirmed_gpus = {{"a", {2, 9}}};
  s = BuildSnapshot(in);
  EXPECT_EQ(s.nodes[0].unusable_gpus, (std::vector<uint32_t>{2, 3}));
}

TEST(SnapshotBuilder, ANodeOfMixedModelsNamesEachGpusModel) {
  std::map<int64_t, Job> jobs;
  NodeView ws = Node("ws", 0);
  auto info = std::make_shared<api::NodeInfo>(*ws.info);
  info->gpus = {{.index = 0, .name = "NVIDIA GeForce RTX 2080 Ti"},
                {.index = 2, .name = "NVIDIA GeForce GTX 1080 Ti"}};  // 1 is missing
  ws.info = info;
  SchedulingInput in;
  in.nodes = {ws};
  in.jobs = &jobs;
  sched::Snapshot s = BuildSnapshot(in);
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_EQ(s.nodes[0].gpus, 3u);
  EXPECT_EQ(s.nodes[0].gpu_models,
            (std::vector<std::string>{"NVIDIA GeForce RTX 2080 Ti", "", "NVIDIA GeForce GTX 1080 Ti"}));
  EXPECT_EQ(s.nodes[0].unusable_gpus, std::vector<uint32_t>{1});
}

TEST(SnapshotBuilder, AnOwnerUsesReservedGpusUnlessOnlyOthersJobsRunThere) {
  std::map<int64_t, Job> jobs;
  jobs[1] = Running(1, "alice", "a", {0});
  const JobGpus held = JobGpusByNode(jobs);
  NodeView a = Node("a", 2);
  Sample(a, 1, {{0, "alice"}});
  EXPECT_FALSE(OwnerUses(a, {0, 1}, held.at("a"), "bob")) << "only alice's job";
  EXPECT_TRUE(OwnerUses(a, {0, 1}, held.at("a"), "alice")) << "the owner's own job is use";
  Sample(a, 2, {{0, "alice"}, {1, "bob"}});
  EXPECT_TRUE(OwnerUses(a, {0, 1}, held.at("a"), "bob"));
  EXPECT_FALSE(OwnerUses(a, {0}, held.at("a"), "bob")) << "GPU 1 is not reserved";
  Sample(a, 3, {{0, "root"}});
  EXPECT_TRUE(OwnerUses(a, {0}, held.at("a"), "bob")) << "a process by hand beside the job";
}

TEST(SnapshotBuilder, ReservationsKeepTheCurrentAndUpcomingWithTheirIdleFlag) {
  std::vector<reserve::Reservation> rs(3);
  rs[0].id = 1, rs[0].owner = "bob", rs[0].node = "a", rs[0].gpus = {0}, rs[0].start_ms = 0, rs[0].end_ms = 20;
  rs[1].id = 2, rs[1].owner = "bob", rs[1].start_ms = 0, rs[1].end_ms = 10;  // over
  rs[2].id = 3, rs[2].owner = "eve", rs[2].start_ms = 50, rs[2].end_ms = 90;
  rs[2].cancelled_ms = 5;
  SchedulingInput in;
  in.now_ms = 10;
  in.reservations = rs;
  in.idle_reservations = {1};
  const sched::Snapshot s = BuildSnapshot(in);
  ASSERT_EQ(s.reservations.size(), 1u);
  EXPECT_EQ(s.reservations[0].id, 1);
  EXPECT_EQ(s.reservations[0].user, "bob");
  EXPECT_TRUE(s.reservations[0].owner_idle);
}

}  // namespace
}  // namespace rota::server::scheduling

namespace rota::server::scheduling {
namespace {

TEST(SnapshotBuilder, HeldJobsStayOutOfThePendingList) {
  std::map<int64_t, Job> jobs;
  for (int64_t id : {1, 2, 3}) {
    Job j;
    j.id = id;
    j.owner = "alice";
    j.created_ms = 1000;
    j.array_id = 9;
    j.array_cap = 1;
    j.spec.groups = {{.role = "worker", .replicas = 1}};
    jobs[id] = j;
  }
  SchedulingInput in;
  in.now_ms = 10'000;
  std::vector<NodeView> nodes{Node("a", 2)};
  in.nodes = nodes;
  in.jobs = &jobs;
  const std::set<int64_t> held{2, 3};
  in.held_jobs = &held;
  sched::Snapshot s = BuildSnapshot(in);
  ASSERT_EQ(s.pending.size(), 1u);
  EXPECT_EQ(s.pending[0].meta.id, 1);
  in.held_jobs = nullptr;
  EXPECT_EQ(BuildSnapshot(in).pending.size(), 3u);
}

}  // namespace
}  // namespace rota::server::scheduling
