// The job service's core driven synchronously (JobServiceOptions::manual):
// a fake clock, a fake transport standing for the agents, real SQLite, real
// accounts, queues, quotas and reservations. Each Step() is one round of what
// the service thread does.
#include <functional>
#include <future>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/accounts/accounts.h"
#include "server/nodes/cluster_state.h"
#include "server/jobs/jobs.h"
#include "server/queues/queues.h"
#include "server/quotas/quotas.h"
#include "server/reservations/reservations.h"
#include "server/store/store_test_util.h"
#include "server/nodes/task_transport.h"

namespace rota::server {
namespace {

using api::Json;
using jobs::JobState;
using jobs::TaskState;

// Records what the service sends; tests play the agents' reports.
class FakeTransport : public TaskTransport {
 public:
  void SetTaskListeners(TaskStatusListener status, TaskLogListener) override {
    status_ = std::move(status);
  }
  Status SendTask(const std::string& node, const api::TaskStartMsg& m) override {
    if (on_send) on_send();
    if (refuse_starts_on == node) return Status::Unavailable("node " + node + " is not connected");
    starts.emplace_back(node, m);
    return Status::Ok();
  }
  Status SendTask(const std::string& node, const api::TaskSignalMsg& m) override {
    if (on_send) on_send();
    signals.emplace_back(node, m);
    return Status::Ok();
  }
  // Starts sent to this node fail (its agent cannot be reached).
  std::string refuse_starts_on;
  // Called on every send, on the sender's thread (the service's lock must not be held).
  std::function<void()> on_send;
  Status SendTask(const std::string&, const api::TaskLogsMsg&) override {
    return Status::Unavailable("no logs here");
  }
  // The agent of `node` reports one task.
  void Report(const std::string& node, const std::string& id, const std::string& state, int64_t pid,
              std::optional<int> exit_code = std::nullopt,
              std::optional<int> signal = std::nullopt, const std::string& error = "") {
    api::TaskReport r;
    r.id = id;
    r.error = error;
    r.state = state;
    r.pid = pid;
    r.exit_code = exit_code;
    r.signal = signal;
    api::TaskStatusMsg m;
    m.tasks.push_back(r);
    status_(node, m);
  }
  const TaskStatusListener& listener() const { return status_; }
  std::vector<std::pair<std::string, api::TaskStartMsg>> starts;
  std::vector<std::pair<std::string, api::TaskSignalMsg>> signals;

 private:
  TaskStatusListener status_;
};

class JobsCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), store::StoreOptions{}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    accounts_ = std::make_unique<Accounts>(store_.get(), std::string(32, 'k'), "min");
    UserPatch alice;
    alice.username = "alice";
    alice.role = Role::kUser;
    alice.password = "alice-password";
    alice.unix_user = "nobody";
    auto u = accounts_->CreateUser(alice, clock_.NowMs());
    ASSERT_TRUE(u.ok()) << u.status().ToString();
    alice_id_ = u->id;
    reservations_ = std::make_unique<Reservations>(store_.get(), &cluster_, &clock_);
    ASSERT_TRUE(reservations_->Start().ok());
    queues_ = std::make_unique<Queues>(store_.get(), &clock_);
    ASSERT_TRUE(queues_->Start().ok());
    quotas_ = std::make_unique<Quotas>(store_.get(), &clock_);
    ASSERT_TRUE(quotas_->Start().ok());
    api::NodeInfo& node = node_;
    node.name = "gpu-a";
    node.node_id = "node-a";
    node.sample_interval_ms = 1000;
    for (uint32_t g = 0; g < 2; ++g)
      node.gpus.push_back(api::GpuInfo{g, "GPU-" + std::to_string(g), "A100", "", {}, {}});
    ASSERT_TRUE(cluster_.Connect(node, 1, clock_.NowMs()).ok());
    StartService(JobServiceOptions{});
  }

  // (Re)starts the service, manual, with these options.
  void StartService(JobServiceOptions options) {
    options.manual = true;
    jobs_.reset();
    jobs_ = std::make_unique<JobService>(store_.get(), &cluster_, &transport_, reservations_.get(),
                                         accounts_.get(), queues_.get(), quotas_.get(), &clock_,
                                         options);
    ASSERT_TRUE(jobs_->Start().ok());
  }

  // (Re)starts the service on its own thread, with a full tick that never comes
  // (the fake clock stands still): a pass runs only when an event wakes it.
  void StartThreadedService() {
    JobServiceOptions options;
    options.tick_ms = 3'600'000;
    jobs_.reset();
    jobs_ = std::make_unique<JobService>(store_.get(), &cluster_, &transport_, reservations_.get(),
                                         accounts_.get(), queues_.get(), quotas_.get(), &clock_,
                                         options);
    ASSERT_TRUE(jobs_->Start().ok());
  }
  // Polls `done` for up to 2 s (the threaded service's passes).
  template <typename F>
  static bool WaitFor(F done) {
    for (int i = 0; i < 400 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return done();
  }

  int64_t Submit(Json extra = Json::object()) {
    Json spec{{"name", "train"},
              {"command", {"sleep", "600"}},
              {"workdir", "/tmp"},
              {"groups", {{{"role", "worker"}, {"replicas", 1}, {"gpus_per_task", 1}}}}};
    spec.update(extra);
    auto parsed = jobs::JobSpecFromJson(spec);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto job = jobs_->Submit(alice_id_, "alice", *parsed);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  Job Get(int64_t id) {
    auto j = jobs_->Get(id);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    return j.ok() ? *j : Job{};
  }
  // Alice's quota: GPUs at once and GPU-hours per period.
  void LimitAlice(uint32_t gpus, double gpu_hours) {
    QuotaDef q;
    q.kind = "user";
    q.name = "alice";
    q.limits.max_gpus = gpus;
    q.limits.max_gpu_hours_per_period = gpu_hours;
    ASSERT_TRUE(quotas_->Set(q).ok());
  }
  // Submits, starts and reports running; returns the job id and its task id.
  std::pair<int64_t, std::string> Running(Json extra = Json::object()) {
    const int64_t id = Submit(std::move(extra));
    jobs_->Step();
    EXPECT_EQ(transport_.starts.size(), 1u);
    if (transport_.starts.empty()) return {id, ""};
    const std::string task = transport_.starts.back().second.task.id;
    transport_.Report("gpu-a", task, "running", 4242);
    jobs_->Step();
    EXPECT_EQ(Get(id).state, JobState::kRunning) << Get(id).reason;
    return {id, task};
  }

  api::NodeInfo node_;  // gpu-a: 2 GPUs
  store::testing::TempDir dir_;
  FakeClock clock_{1'800'000'000'000};
  std::unique_ptr<store::Store> store_;
  ClusterState cluster_{3};
  FakeTransport transport_;
  std::unique_ptr<Accounts> accounts_;
  std::unique_ptr<Reservations> reservations_;
  std::unique_ptr<Queues> queues_;
  std::unique_ptr<Quotas> quotas_;
  std::unique_ptr<JobService> jobs_;
  int64_t alice_id_ = 0;
};

// GET /api/v1/queue writes its rows directly; they must read as ToJson's
// document without the spec and the tasks, plus what the job asks for.
TEST(QueueRowTest, IsTheJobsDocumentWithoutSpecAndTasks) {
  Job base;
  base.id = 41;
  base.owner = "ana";
  base.spec.name = "train \"big\"\n\tmodel-\u00e9";  // quotes, control bytes, UTF-8
  base.spec.groups.resize(2);
  base.spec.groups[0].replicas = 3;
  base.spec.groups[0].gpus_per_task = 2;
  base.spec.groups[1].gpus_per_task = 1;
  base.created_ms = 1'800'000'000'123;
  base.updated_ms = 1'800'000'100'000;
  base.reason = "submitted";
  base.attained_gpu_ms = 7'200'500;
  base.lost_gpu_ms = 1'999;
  base.restart_count = 2;
  base.preemptions = 1;
  std::vector<Job> cases;
  Job waiting = base;  // pending with why, where and when
  waiting.wait_reason = "waiting for 7 free GPUs on one node";
  waiting.position = 12;
  waiting.estimated_start_ms = 1'800'003'600'000;
  cases.push_back(waiting);
  Job requeued = waiting;  // pending again since a preemption
  requeued.queued_ms = 1'800'000'050'000;
  cases.push_back(requeued);
  Job plain = base;  // pending, no pass yet
  plain.spec.queue = "ml";
  plain.spec.priority = -3;
  plain.spec.preemptible = true;
  cases.push_back(plain);
  Job stopping = base;
  stopping.state = JobState::kRunning;
  stopping.wait_reason = "left from a pass";  // not shown: it runs
  stopping.stop_to = StopTo::kRequeue;
  cases.push_back(stopping);
  Job running = base;  // its run's start, and when its time limit ends it
  running.state = JobState::kRunning;
  running.started_ms = 1'800'000'150'000;
  running.spec.time_limit_ms = 3'600'000;
  cases.push_back(running);
  running.spec.time_limit_ms = 0;
  cases.push_back(running);
  Job ended = base;
  ended.state = JobState::kFailed;
  ended.ended_ms = 1'800'000'200'000;
  cases.push_back(ended);
  for (const Job& j : cases) {
    std::string text;
    api::JsonWriter w(&text);
    AppendQueueRow(w, j);
    Json expected = ToJson(j);
    expected.erase("spec");
    expected.erase("tasks");
    expected["gpus"] = 7;
    EXPECT_EQ(text, expected.dump()) << "job in state " << jobs::StateName(j.state);
  }
}

TEST_F(JobsCoreTest, AJobGoesFromPendingToSucceededThroughTheTransport) {
  const int64_t id = Submit();
  EXPECT_EQ(Get(id).state, JobState::kPending);
  jobs_->Step();
  ASSERT_EQ(transport_.starts.size(), 1u);
  const auto& [node, start] = transport_.starts[0];
  EXPECT_EQ(node, "gpu-a");
  EXPECT_EQ(start.task.user, "nobody");
  EXPECT_EQ(start.task.argv, (std::vector<std::string>{"sleep", "600"}));
  EXPECT_EQ(Get(id).state, JobState::kStarting);
  transport_.Report("gpu-a", start.task.id, "running", 4242);
  jobs_->Step();
  EXPECT_EQ(Get(id).state, JobState::kRunning);
  EXPECT_EQ(Get(id).tasks[0].state, TaskState::kRunning);
  EXPECT_EQ(Get(id).tasks[0].pid, 4242);
  transport_.Report("gpu-a", start.task.id, "exited", 4242, 0);
  jobs_->Step();
  EXPECT_EQ(Get(id).state, JobState::kSucceeded) << Get(id).reason;
}

// An agent that finds no Unix account for the job's owner: the job is placed
// again on other nodes (not a restart) and, where none is left, waits saying
// why; mapping the owner to another Unix user lets it go there again.
TEST_F(JobsCoreTest, AJobAvoidsNodesWithoutItsOwnersUnixAccount) {
  api::NodeInfo b = node_;
  b.name = "gpu-b";
  b.node_id = "node-b";
  ASSERT_TRUE(cluster_.Connect(b, 1, clock_.NowMs()).ok());
  const int64_t id = Submit();
  auto refuse = [&](const std::string& node) {
    ASSERT_FALSE(transport_.starts.empty());
    const auto& [at, start] = transport_.starts.back();
    EXPECT_EQ(at, node);
    transport_.Report(at, start.task.id, "exited", 0, std::nullopt, std::nullopt,
                      "Unix user 'nobody' " + std::string(api::kNoUnixUserError));
    jobs_->Step();
  };
  jobs_->Step();
  refuse("gpu-a");
  jobs_->Step();
  EXPECT_EQ(transport_.starts.size(), 2u);
  refuse("gpu-b");
  jobs_->Step();
  EXPECT_EQ(transport_.starts.size(), 2u);
  Job j = Get(id);
  EXPECT_EQ(j.state, JobState::kPending);
  EXPECT_EQ(j.restart_count, 0u);
  EXPECT_EQ(j.wait_reason, "its owner has no Unix account on gpu-a or 1 more node where it could run");
  UserPatch remap;
  remap.unix_user = "daemon";
  ASSERT_TRUE(accounts_->UpdateUser(alice_id_, remap, clock_.NowMs()).ok());
  jobs_->Step(true);
  ASSERT_EQ(transport_.starts.size(), 3u);
  EXPECT_EQ(transport_.starts.back().second.task.user, "daemon");
}

// A gang refused on several nodes notes each of them, the refusals that come
// while it stops too: one launch finds them all.
TEST_F(JobsCoreTest, AGangRefusedOnSeveralNodesAvoidsEachOfThem) {
  for (const char* name : {"gpu-b", "gpu-c"}) {
    api::NodeInfo n = node_;
    n.name = name;
    n.node_id = std::string("node-") + name;
    ASSERT_TRUE(cluster_.Connect(n, 1, clock_.NowMs()).ok());
  }
  const int64_t id = Submit(Json{{"groups", {{{"role", "worker"}, {"replicas", 2}, {"gpus_per_task", 2}}}}});
  jobs_->Step();
  ASSERT_EQ(transport_.starts.size(), 2u);
  const auto first = transport_.starts;
  for (const auto& [node, start] : first) {
    transport_.Report(node, start.task.id, "exited", 0, std::nullopt, std::nullopt,
                      api::NoUnixUserError("nobody"));
  }
  for (int round = 0; round < 3; ++round) jobs_->Step(true);
  EXPECT_EQ(transport_.starts.size(), 2u);  // only gpu-c is left: the gang waits
  Job j = Get(id);
  EXPECT_EQ(j.state, JobState::kPending);
  EXPECT_EQ(j.restart_count, 0u);
  EXPECT_EQ(j.wait_reason, "waiting for 2 free GPUs on one node for each of 2 tasks (largest free block: 2 on gpu-c)");
}

// A task whose error only contains the words (a command named so) is a failure
// like any other, not a missing account.
TEST_F(JobsCoreTest, AnErrorThatOnlyMentionsAMissingAccountIsAFailure) {
  const int64_t id = Submit();
  jobs_->Step();
  ASSERT_EQ(transport_.starts.size(), 1u);
  transport_.Report("gpu-a", transport_.starts.back().second.task.id, "exited", 0, std::nullopt,
                    std::nullopt, "cannot run '" + api::NoUnixUserError("nobody") + "'");
  jobs_->Step(true);
  EXPECT_EQ(Get(id).state, JobState::kFailed) << Get(id).reason;
}

// Without a remap, a node without the owner's account is tried again after ten
// minutes (an admin may have made the account by hand).
TEST_F(JobsCoreTest, ANodeWithoutTheOwnersAccountIsTriedAgainAfterTenMinutes) {
  const int64_t id = Submit();
  jobs_->Step();
  ASSERT_EQ(transport_.starts.size(), 1u);
  transport_.Report("gpu-a", transport_.starts.back().second.task.id, "exited", 0, std::nullopt,
                    std::nullopt, "Unix user 'nobody' " + std::string(api::kNoUnixUserError));
  jobs_->Step(true);
  clock_.AdvanceMs(10 * 60'000 - 1000);
  jobs_->Step(true);
  EXPECT_EQ(transport_.starts.size(), 1u);
  EXPECT_EQ(Get(id).wait_reason, "its owner has no Unix account on gpu-a where it could run");
  clock_.AdvanceMs(1000);
  jobs_->Step(true);
  ASSERT_EQ(transport_.starts.size(), 2u);
  EXPECT_EQ(transport_.starts.back().first, "gpu-a");
}

// The GPU time people see counts the current run so far, and a run once.
TEST_F(JobsCoreTest, ARunningJobsGpuTimeCountsItsCurrentRun) {
  auto [id, task] = Running();
  const double before = Get(id).attained_gpu_ms;
  clock_.AdvanceMs(60'000);
  EXPECT_DOUBLE_EQ(Get(id).attained_gpu_ms - before, 60'000);  // 1 GPU for a minute
  auto listed = jobs_->List({.limit = 10});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_DOUBLE_EQ((*listed)[0].attained_gpu_ms, Get(id).attained_gpu_ms);
  transport_.Report("gpu-a", task, "exited", 4242, 0);
  jobs_->Step();
  ASSERT_EQ(Get(id).state, JobState::kSucceeded);
  clock_.AdvanceMs(60'000);  // ended: no longer grows
  EXPECT_DOUBLE_EQ(Get(id).attained_gpu_ms - before, 60'000);
}

// A server restart does not restart a running job's clock: its GPU time (and
// time limit) count from when it was placed, and a task that ended while the
// server was away counts up to its end.
TEST_F(JobsCoreTest, ARunningJobKeepsItsRunStartAcrossAServerRestart) {
  auto [id, task] = Running();
  clock_.AdvanceMs(60'000);
  const int64_t ended = clock_.NowMs();
  clock_.AdvanceMs(30'000);  // the server is away
  StartService(JobServiceOptions{});
  jobs_->Step();
  EXPECT_NEAR(Get(id).attained_gpu_ms, 90'000, 1'000);
  api::TaskReport r;
  r.id = task;
  r.state = "exited";
  r.pid = 4242;
  r.exit_code = 0;
  r.ended_ms = ended;
  api::TaskStatusMsg m;
  m.tasks.push_back(r);
  transport_.listener()("gpu-a", m);
  jobs_->Step();
  ASSERT_EQ(Get(id).state, JobState::kSucceeded) << Get(id).reason;
  EXPECT_NEAR(Get(id).attained_gpu_ms, 60'000, 1'000);
}

// A node whose clock is behind the server's reports an end before the run
// began: the run is charged up to when the report came, not nothing.
TEST_F(JobsCoreTest, AnEndFromANodeWhoseClockIsBehindCountsUntilTheReportCame) {
  auto [id, task] = Running();
  clock_.AdvanceMs(180'000);
  api::TaskReport r;
  r.id = task;
  r.state = "exited";
  r.pid = 4242;
  r.exit_code = 0;
  r.ended_ms = clock_.NowMs() - 300'000;  // the node's clock: 5 minutes behind
  api::TaskStatusMsg m;
  m.tasks.push_back(r);
  transport_.listener()("gpu-a", m);
  jobs_->Step();
  ASSERT_EQ(Get(id).state, JobState::kSucceeded) << Get(id).reason;
  EXPECT_NEAR(Get(id).attained_gpu_ms, 180'000, 1'000);
}

// A job above its owner's GPUs-at-once quota could never start: refused at
// submission, naming the limit (a job within it waits while others hold GPUs).
TEST_F(JobsCoreTest, AJobAboveItsOwnersGpuQuotaIsRefusedAtSubmission) {
  QuotaDef q;
  q.kind = "user";
  q.name = "alice";
  q.limits.max_gpus = 1;
  ASSERT_TRUE(quotas_->Set(q).ok());
  auto spec = jobs::JobSpecFromJson(Json{{"name", "two"}, {"command", {"true"}}, {"workdir", "/tmp"},
                                         {"groups", {{{"role", "worker"}, {"gpus_per_task", 2}}}}});
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto job = jobs_->Submit(alice_id_, "alice", *spec);
  EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(job.status().message(), "user quota: the job needs 2 GPUs at once; user alice may hold 1");
  q.limits.max_gpus = 2;
  ASSERT_TRUE(quotas_->Set(q).ok());
  EXPECT_TRUE(jobs_->Submit(alice_id_, "alice", *spec).ok());
}

// The GPU time of a job that just ended still counts against the GPU-hours
// quota: the job waiting for its GPU does not start over the limit.
TEST_F(JobsCoreTest, AJobThatJustEndedStillCountsAgainstTheGpuHoursQuota) {
  LimitAlice(1, 0.01);  // 36 GPU-seconds
  auto [first, task] = Running();
  const int64_t second = Submit();
  jobs_->Step();
  EXPECT_EQ(Get(second).state, JobState::kPending);
  clock_.AdvanceMs(40'000);
  transport_.Report("gpu-a", task, "exited", 4242, 0);
  for (int round = 0; round < 3; ++round) {
    jobs_->Step();
    ASSERT_EQ(Get(second).state, JobState::kPending) << "round " << round << ": " << Get(second).reason;
  }
  EXPECT_EQ(Get(first).state, JobState::kSucceeded);
  EXPECT_NE(Get(second).wait_reason.find("GPU-hours"), std::string::npos) << Get(second).wait_reason;
}

// The once-a-minute read of ended jobs can run after a job ended but before its
// end is committed: the job counts from memory then, once.
TEST_F(JobsCoreTest, AJobEndingJustBeforeTheQuotaReadCountsOnce) {
  LimitAlice(1, 0.01);  // 36 GPU-seconds
  auto [first, task] = Running();
  const int64_t second = Submit();
  jobs_->Step(true);
  clock_.AdvanceMs(40'000);
  // The writer waits: the end is not committed when the next read runs.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  store_->WriteAsync([released](store::Db&) { released.wait(); return Status::Ok(); }, [](Status) {});
  transport_.Report("gpu-a", task, "exited", 4242, 0);
  jobs_->Step();
  clock_.AdvanceMs(30'000);  // past the minute: this full pass reads ended jobs again
  jobs_->Step(true);
  EXPECT_EQ(Get(second).state, JobState::kPending) << Get(second).reason;
  EXPECT_NE(Get(second).wait_reason.find("GPU-hours"), std::string::npos) << Get(second).wait_reason;
  release.set_value();
  ASSERT_TRUE(store_->Write([](store::Db&) { return Status::Ok(); }).ok());  // the end is committed
  for (int round = 0; round < 3; ++round) {
    jobs_->Step(true);
    ASSERT_EQ(Get(second).state, JobState::kPending) << "round " << round << ": " << Get(second).reason;
  }
  EXPECT_NEAR(jobs_->UsageNow().user_period["alice"] * 3600'000, 40'000, 1);  // counted once
}

// Disabling an account holds its pending jobs (they keep their place in the
// store, start when it is enabled again) and says why.
TEST_F(JobsCoreTest, ADisabledOwnersPendingJobsWait) {
  UserPatch off;
  off.disabled = true;
  ASSERT_TRUE(accounts_->UpdateUser(alice_id_, off, clock_.NowMs()).ok());
  const int64_t id = Submit();
  jobs_->Step(true);
  EXPECT_TRUE(transport_.starts.empty());
  EXPECT_EQ(Get(id).state, JobState::kPending);
  EXPECT_EQ(Get(id).wait_reason, "its owner's account is disabled");
  UserPatch on;
  on.disabled = false;
  ASSERT_TRUE(accounts_->UpdateUser(alice_id_, on, clock_.NowMs()).ok());
  jobs_->Step(true);
  EXPECT_EQ(transport_.starts.size(), 1u);
}

// More tasks than the cluster has job ports could never run at once: refused.
TEST_F(JobsCoreTest, AJobWithMoreTasksThanJobPortsIsRefusedAtSubmission) {
  JobServiceOptions options;
  options.ports = {31000, 31002};
  StartService(options);
  auto spec = jobs::JobSpecFromJson(Json{{"name", "wide"}, {"command", {"true"}}, {"workdir", "/tmp"},
                                         {"groups", {{{"role", "worker"}, {"replicas", 4}, {"gpus_per_task", 0}}}}});
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto job = jobs_->Submit(alice_id_, "alice", *spec);
  EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(job.status().message(),
            "the job's 4 tasks need a job port each; the cluster has 3 (31000-31002 on each of 1 address)");
  spec->groups[0].replicas = 3;
  EXPECT_TRUE(jobs_->Submit(alice_id_, "alice", *spec).ok());
  // Only the addresses of the nodes it may use count.
  api::NodeInfo b = node_;
  b.name = "gpu-b";
  b.node_id = "node-b";
  b.addresses = {"10.0.0.2"};
  ASSERT_TRUE(cluster_.Connect(b, 1, clock_.NowMs()).ok());
  spec->groups[0].replicas = 4;
  EXPECT_TRUE(jobs_->Submit(alice_id_, "alice", *spec).ok());
  spec->groups[0].nodes = {"gpu-a"};
  job = jobs_->Submit(alice_id_, "alice", *spec);
  EXPECT_EQ(job.status().message(),
            "the job's 4 tasks need a job port each; the nodes it may use have 3 (31000-31002 on each of 1 address)");
}

TEST_F(JobsCoreTest, ACancelledPendingJobNamesWhoCancelledIt) {
  const int64_t id = Submit(Json{{"groups", {{{"role", "worker"}, {"gpus_per_task", 2}}}}});
  auto job = jobs_->Cancel(alice_id_, false, id);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(Get(id).state, JobState::kCancelled);
  EXPECT_EQ(Get(id).reason, "cancelled by alice");
}

TEST_F(JobsCoreTest, ACancelledRunningJobNamesWhoCancelledItToo) {
  auto [id, task] = Running();
  auto job = jobs_->Cancel(alice_id_, false, id);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(Get(id).reason, "stopping: cancelled by alice");
  ASSERT_EQ(transport_.signals.size(), 1u);
  transport_.Report("gpu-a", task, "exited", 4242, std::nullopt, 15);
  jobs_->Step();
  EXPECT_EQ(Get(id).state, JobState::kCancelled);
  EXPECT_EQ(Get(id).reason, "cancelled by alice");
}

// Waits are explained in every pass up to a queue length, beyond it only at
// full ticks; what starts does not depend on it.
TEST_F(JobsCoreTest, ALongQueueIsExplainedAtFullTicks) {
  JobServiceOptions options;
  options.explain_every_pass_up_to = 2;
  StartService(options);
  Running();  // one of the two GPUs
  const Json two = {{"groups", {{{"role", "worker"}, {"replicas", 1}, {"gpus_per_task", 2}}}}};
  const int64_t a = Submit(two);
  const int64_t b = Submit(two);
  jobs_->Step(/*full=*/false);  // two pending: explained
  EXPECT_NE(Get(a).wait_reason.find("2 GPUs"), std::string::npos) << Get(a).wait_reason;
  EXPECT_EQ(Get(b).position, 2u);
  const int64_t c = Submit(two);
  const int64_t fits = Submit();
  jobs_->Step(/*full=*/false);  // four pending: not explained, still placed
  EXPECT_EQ(Get(c).wait_reason, "");
  EXPECT_EQ(Get(c).position, 0u);
  ASSERT_EQ(transport_.starts.size(), 2u);
  EXPECT_EQ(transport_.starts[1].second.task.job_id, "job-" + std::to_string(fits));
  jobs_->Step(/*full=*/true);
  EXPECT_NE(Get(c).wait_reason.find("2 GPUs"), std::string::npos) << Get(c).wait_reason;
  EXPECT_EQ(Get(c).position, 3u);
}

// The value of `series` (name and labels, as printed) in Prometheus text; -1 when absent.
double Sample(const std::string& text, const std::string& series) {
  const std::string prefix = series + " ";
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(prefix.size()));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return -1;
}

TEST_F(JobsCoreTest, PassesAreMeasuredForMetrics) {
  JobServiceOptions options;
  options.explain_every_pass_up_to = 1;
  StartService(options);
  Running();  // one of the two GPUs
  auto text = [&] {
    std::string t;
    jobs_->pass_metrics().AppendText(&t);
    return t;
  };
  const std::string explained = "rota_scheduler_passes_total{explained=\"true\"}";
  const std::string between = "rota_scheduler_passes_total{explained=\"false\"}";
  const std::string before = text();
  ASSERT_GE(Sample(before, explained), 1) << before;
  const Json two = {{"groups", {{{"role", "worker"}, {"replicas", 1}, {"gpus_per_task", 2}}}}};
  Submit(two);
  Submit(two);
  jobs_->Step(/*full=*/false);  // two waiting, more than explained between full ticks
  Submit();
  jobs_->Step(/*full=*/false);  // starts the one-GPU job
  jobs_->Step(/*full=*/true);
  const std::string after = text();
  EXPECT_EQ(Sample(after, "rota_scheduler_starts_total"),
            Sample(before, "rota_scheduler_starts_total") + 1) << after;
  EXPECT_EQ(Sample(after, between), Sample(before, between) + 2) << after;
  EXPECT_EQ(Sample(after, explained), Sample(before, explained) + 1) << after;
  EXPECT_EQ(Sample(after, "rota_scheduler_pass_duration_seconds_count{explained=\"false\"}"),
            Sample(after, between));
  EXPECT_EQ(Sample(after, "rota_scheduler_pass_duration_seconds_bucket{explained=\"true\",le=\"+Inf\"}"),
            Sample(after, explained));
  EXPECT_EQ(Sample(after, "rota_scheduler_pending_jobs"), 2) << after;  // as the last pass saw it
  EXPECT_EQ(Sample(after, "rota_scheduler_running_jobs"), 2) << after;
  EXPECT_GT(Sample(after, "rota_scheduler_last_pass_seconds{phase=\"decide\"}"), 0) << after;
}

TEST_F(JobsCoreTest, ATimeLimitSendsTermThenKillOnTheServiceClock) {
  auto [id, task] = Running(Json{{"time_limit", "1m"}});
  clock_.AdvanceMs(59'000);
  jobs_->Step();
  EXPECT_TRUE(transport_.signals.empty()) << "stopped before its time limit";
  clock_.AdvanceMs(2'000);
  jobs_->Step();
  ASSERT_EQ(transport_.signals.size(), 1u);
  EXPECT_EQ(transport_.signals[0].second.id, task);
  EXPECT_EQ(transport_.signals[0].second.signal, "TERM");
  clock_.AdvanceMs(9'000);  // the grace is 10 s
  jobs_->Step();
  EXPECT_EQ(transport_.signals.size(), 1u) << "killed before the grace ended";
  clock_.AdvanceMs(1'500);
  jobs_->Step();
  ASSERT_EQ(transport_.signals.size(), 2u);
  EXPECT_EQ(transport_.signals[1].second.signal, "KILL");
  transport_.Report("gpu-a", task, "exited", 4242, std::nullopt, 9);
  jobs_->Step();
  const Job j = Get(id);
  EXPECT_EQ(j.state, JobState::kFailed);
  EXPECT_NE(j.reason.find("time limit 1m reached"), std::string::npos) << j.reason;
}

TEST_F(JobsCoreTest, AFailedGangRestartsOnlyAfterItsBackoff) {
  auto [id, task] = Running(Json{{"restart", {{"policy", "on-failure"}, {"backoff", "10s"}}}});
  transport_.Report("gpu-a", task, "exited", 4242, 3);
  jobs_->Step();
  Job j = Get(id);
  EXPECT_EQ(j.state, JobState::kPending) << j.reason;
  EXPECT_EQ(j.restart_count, 1u);
  clock_.AdvanceMs(9'000);
  jobs_->Step();
  EXPECT_EQ(transport_.starts.size(), 1u) << "restarted before the backoff";
  clock_.AdvanceMs(1'500);
  jobs_->Step();
  ASSERT_EQ(transport_.starts.size(), 2u);
  EXPECT_NE(transport_.starts[1].second.task.id.find(".r1."), std::string::npos)
      << transport_.starts[1].second.task.id;
  EXPECT_EQ(Get(id).state, JobState::kStarting);
}

TEST_F(JobsCoreTest, ATaskOnANodeUnreachableForTenSecondsIsLost) {
  auto [id, task] = Running();
  cluster_.Disconnect("gpu-a", 1, clock_.NowMs());
  clock_.AdvanceMs(9'000);
  jobs_->Step();
  EXPECT_EQ(Get(id).state, JobState::kRunning) << "lost too early";
  clock_.AdvanceMs(2'000);
  jobs_->Step();
  const Job j = Get(id);
  EXPECT_EQ(j.state, JobState::kFailed) << j.reason;
  EXPECT_NE(j.reason.find("unreachable"), std::string::npos) << j.reason;
}

// A node coming back wakes a pass at once: the service's own thread, with a
// clock that never reaches the next full tick, still starts the waiting job.
TEST_F(JobsCoreTest, ANodeThatComesBackIsUsedWithoutWaitingForATick) {
  cluster_.Disconnect("gpu-a", 1, clock_.NowMs());
  StartThreadedService();
  const int64_t id = Submit();
  ASSERT_TRUE(WaitFor([&] { return Get(id).position > 0; })) << "no pass after the submission";
  EXPECT_EQ(Get(id).state, JobState::kPending);
  ASSERT_TRUE(cluster_.Connect(node_, 2, clock_.NowMs()).ok());
  EXPECT_TRUE(WaitFor([&] { return Get(id).state == JobState::kStarting; })) << Get(id).wait_reason;
  jobs_.reset();  // its thread ends before the fixture's transport
}

// A drained node starts no new job, keeps its running one, and says so in the
// waiting job's reason; its resume wakes a pass at once (a node event).
TEST_F(JobsCoreTest, ADrainedNodeKeepsItsJobsAndItsResumeStartsTheWaitingOne) {
  StartThreadedService();
  const int64_t first = Submit();
  ASSERT_TRUE(WaitFor([&] { return Get(first).state == JobState::kStarting; }));
  ASSERT_TRUE(cluster_.SetDrain("gpu-a", NodeDrain{"disk swap", "admin", clock_.NowMs()}).ok());
  const int64_t second = Submit();
  ASSERT_TRUE(WaitFor([&] { return Get(second).position > 0; })) << "no pass after the submission";
  EXPECT_EQ(Get(second).state, JobState::kPending);
  EXPECT_NE(Get(second).wait_reason.find("drained: disk swap"), std::string::npos) << Get(second).wait_reason;
  EXPECT_EQ(Get(first).state, JobState::kStarting) << "a drain stops nothing";
  ASSERT_TRUE(cluster_.SetDrain("gpu-a", std::nullopt).ok());
  EXPECT_TRUE(WaitFor([&] { return Get(second).state == JobState::kStarting; })) << Get(second).wait_reason;
  jobs_.reset();  // its thread ends before the fixture's transport
}

// A reservation's change reaches the scheduler at once (the change hook, as the
// server wires it), read again, not at the next full tick or cache refresh.
TEST_F(JobsCoreTest, AReservationChangeWakesAPassThatReadsItAgain) {
  UserPatch bob;
  bob.username = "bob";
  bob.role = Role::kUser;
  bob.password = "bob-password";
  auto b = accounts_->CreateUser(bob, clock_.NowMs());
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  reserve::CreateRequest req;
  req.node = "gpu-a";
  req.gpus = {0, 1};
  req.start_ms = clock_.NowMs();
  req.end_ms = clock_.NowMs() + 3'600'000;
  req.title = "experiments";
  auto r = reservations_->Create(reserve::Requester{b->id, "bob", {}, true}, req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();

  StartThreadedService();
  reservations_->SetChangeHook([this] { jobs_->OnPolicyChange(); });
  const int64_t id = Submit();
  ASSERT_TRUE(WaitFor([&] { return Get(id).position > 0; })) << "no pass after the submission";
  EXPECT_NE(Get(id).wait_reason.find("gpu-a reserved by bob"), std::string::npos) << Get(id).wait_reason;
  clock_.AdvanceMs(1000);  // a running reservation cancelled ends now
  ASSERT_TRUE(reservations_->Cancel(reserve::Requester{b->id, "bob", {}, false}, r->id).ok());
  EXPECT_TRUE(WaitFor([&] { return Get(id).state == JobState::kStarting; })) << Get(id).wait_reason;
  reservations_->SetChangeHook(nullptr);
  jobs_.reset();  // its thread ends before the fixture's transport
}

// When the node answers again, the lost task's process may still run: it is
// stopped (TERM, then KILL after the grace), and its GPU is not given to
// another job until then, although no sample shows the process yet.
TEST_F(JobsCoreTest, TheGpuOfALostTaskIsNotFreeUntilItsProcessIsStopped) {
  auto [id, task] = Running();
  cluster_.Disconnect("gpu-a", 1, clock_.NowMs());
  clock_.AdvanceMs(11'000);
  jobs_->Step();
  ASSERT_EQ(Get(id).state, JobState::kFailed) << Get(id).reason;
  ASSERT_TRUE(cluster_.Connect(node_, 2, clock_.NowMs()).ok());
  const Json two = {{"groups", {{{"role", "worker"}, {"replicas", 1}, {"gpus_per_task", 2}}}}};
  const int64_t next = Submit(two);
  jobs_->Step();
  ASSERT_EQ(transport_.signals.size(), 1u);
  EXPECT_EQ(transport_.signals[0].second.id, task);
  EXPECT_EQ(transport_.signals[0].second.signal, "TERM");
  EXPECT_EQ(transport_.starts.size(), 1u) << "placed on the lost task's GPU";
  EXPECT_EQ(Get(next).state, JobState::kPending);
  clock_.AdvanceMs(10'500);  // the grace is 10 s
  jobs_->Step();
  ASSERT_EQ(transport_.signals.size(), 2u);
  EXPECT_EQ(transport_.signals[1].second.signal, "KILL");
  jobs_->Step();
  ASSERT_EQ(transport_.starts.size(), 2u);
  EXPECT_EQ(transport_.starts[1].second.task.job_id, "job-" + std::to_string(next));
}

}  // namespace
}  // namespace rota::server

namespace rota::server {
namespace {

// The Launcher sends after the round released the service's lock: a transport
// that reads the service while sending (as an API thread would meanwhile)
// does not deadlock on it.
TEST_F(JobsCoreTest, TaskMessagesAreSentWithoutTheServiceLock) {
  int reads = 0;
  transport_.on_send = [&] {
    jobs_->CountsIn("default");  // takes the service's lock
    ++reads;
  };
  auto [id, task] = Running();
  ASSERT_FALSE(task.empty());
  ASSERT_TRUE(jobs_->Cancel(alice_id_, false, id).ok());  // SIGTERM, sent by Cancel's own thread
  EXPECT_EQ(reads, 2);
  ASSERT_EQ(transport_.signals.size(), 1u);
  EXPECT_EQ(transport_.signals[0].second.signal, "TERM");
}

// A start that cannot be sent undoes the whole launch: what went out is killed,
// the job waits again (no restart counted) and is placed again later.
TEST_F(JobsCoreTest, AStartThatCannotBeSentPutsTheGangBackToPending) {
  api::NodeInfo b = node_;
  b.name = "gpu-b";
  b.node_id = "node-b";
  ASSERT_TRUE(cluster_.Connect(b, 2, clock_.NowMs()).ok());
  transport_.refuse_starts_on = "gpu-b";
  // Three one-GPU workers: two fit on gpu-a, the third lands on gpu-b.
  const int64_t id = Submit(Json{{"groups", {{{"role", "worker"}, {"replicas", 3}, {"gpus_per_task", 1}}}}});
  jobs_->Step();
  Job j = Get(id);
  EXPECT_EQ(j.state, JobState::kPending) << j.reason;
  EXPECT_NE(j.reason.find("cannot start worker-"), std::string::npos) << j.reason;
  EXPECT_NE(j.reason.find("gpu-b is not connected"), std::string::npos) << j.reason;
  EXPECT_EQ(j.restart_count, 0u);
  for (const auto& t : j.tasks) {
    if (t.runs) {
      EXPECT_EQ(t.state, TaskState::kUnstarted) << t.name;
    }
  }
  // Every start that went out (those before the one refused) is killed.
  std::set<std::string> killed;
  for (const auto& [node, m] : transport_.signals) {
    if (m.signal == "KILL") killed.insert(m.id);
  }
  for (const auto& [node, m] : transport_.starts) EXPECT_TRUE(killed.count(m.task.id)) << m.task.id;
  // Its run never began: no GPU time, no holdings.
  EXPECT_EQ(j.attained_gpu_ms, 0);
  EXPECT_TRUE(jobs_->Holdings(0).empty());
  // Stored as it is: pending with the reason (one write for the round).
  ASSERT_TRUE(store_->Flush().ok());
  std::vector<JobEvent> events;
  auto stored = jobs_->Get(id, &events);
  ASSERT_TRUE(stored.ok());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().state, JobState::kPending);
  EXPECT_EQ(events.back().reason, j.reason);
  // Retried after 2 s once the node takes starts again.
  transport_.refuse_starts_on.clear();
  const size_t sent = transport_.starts.size();
  clock_.AdvanceMs(2500);
  jobs_->Step();
  EXPECT_EQ(Get(id).state, JobState::kStarting) << Get(id).reason;
  EXPECT_EQ(transport_.starts.size(), sent + 3);
}

}  // namespace
}  // namespace rota::server
