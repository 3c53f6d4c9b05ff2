// Malleable tasks in the job service's core (JobServiceOptions::manual): the
// scheduler places them with their minimum, the node's cores are divided again
// as they start and end, each change goes out as a task start's allotment or a
// task_resize, and is recorded as a job event.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/accounts/accounts.h"
#include "server/jobs/jobs.h"
#include "server/nodes/cluster_state.h"
#include "server/nodes/task_transport.h"
#include "server/queues/queues.h"
#include "server/quotas/quotas.h"
#include "server/reservations/reservations.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

using api::Json;
using jobs::JobState;

class RecordingTransport : public TaskTransport {
 public:
  void SetTaskListeners(TaskStatusListener status, TaskLogListener) override { status_ = std::move(status); }
  Status SendTask(const std::string& node, const api::TaskStartMsg& m) override {
    starts.emplace_back(node, m);
    return Status::Ok();
  }
  Status SendTask(const std::string& node, const api::TaskSignalMsg& m) override {
    signals.emplace_back(node, m);
    return Status::Ok();
  }
  Status SendTask(const std::string&, const api::TaskLogsMsg&) override { return Status::Unavailable("none"); }
  Status SendResize(const std::string& node, const api::TaskResizeMsg& m) override {
    resizes.emplace_back(node, m);
    return Status::Ok();
  }
  void Report(const std::string& node, const std::string& id, const std::string& state,
              std::optional<int> exit_code = std::nullopt) {
    api::TaskReport r;
    r.id = id;
    r.state = state;
    r.pid = 4242;
    r.exit_code = exit_code;
    status_(node, api::TaskStatusMsg{{r}});
  }
  std::vector<std::pair<std::string, api::TaskStartMsg>> starts;
  std::vector<std::pair<std::string, api::TaskSignalMsg>> signals;
  std::vector<std::pair<std::string, api::TaskResizeMsg>> resizes;

 private:
  TaskStatusListener status_;
};

class JobsMalleableTest : public ::testing::Test {
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
    api::NodeInfo node;
    node.name = "cpu-a";
    node.node_id = "node-a";
    node.sample_interval_ms = 1000;
    node.cpus = 2;
    ASSERT_TRUE(cluster_.Connect(node, 1, clock_.NowMs()).ok());
  }

  void StartService(malleable::Policy policy = malleable::Policy::kEqual) {
    JobServiceOptions options;
    options.manual = true;
    options.malleable_policy = policy;
    jobs_ = std::make_unique<JobService>(store_.get(), &cluster_, &transport_, reservations_.get(),
                                         accounts_.get(), queues_.get(), quotas_.get(), &clock_, options);
    ASSERT_TRUE(jobs_->Start().ok());
  }

  int64_t Submit(double min, double max, Json extra = Json::object()) {
    Json spec{{"name", "train"},
              {"command", {"python3", "train.py"}},
              {"workdir", "/tmp"},
              {"groups", {{{"role", "worker"}, {"replicas", 1}, {"malleable", {{"min_cpus", min}, {"max_cpus", max}}}}}}};
    spec.update(extra);
    auto parsed = jobs::JobSpecFromJson(spec);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto job = jobs_->Submit(alice_id_, "alice", *parsed);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }

  std::vector<JobEvent> Events(int64_t id) {
    std::vector<JobEvent> events;
    EXPECT_TRUE(store_->Flush().ok());
    EXPECT_TRUE(jobs_->Get(id, &events).ok());
    return events;
  }

  store::testing::TempDir dir_;
  FakeClock clock_{1'800'000'000'000};
  std::unique_ptr<store::Store> store_;
  ClusterState cluster_{3};
  RecordingTransport transport_;
  std::unique_ptr<Accounts> accounts_;
  std::unique_ptr<Reservations> reservations_;
  std::unique_ptr<Queues> queues_;
  std::unique_ptr<Quotas> quotas_;
  std::unique_ptr<JobService> jobs_;
  int64_t alice_id_ = 0;
};

TEST_F(JobsMalleableTest, CoresAreDividedAgainAsTasksStartAndEnd) {
  StartService();
  const int64_t first = Submit(0.5, 2, Json{{"env", {{"ROTA_RESIZE_SIGNAL", "USR2"}}}});
  jobs_->Step();
  ASSERT_EQ(transport_.starts.size(), 1u);
  const api::TaskSpec a = transport_.starts[0].second.task;
  // Alone on the node: its start carries the whole node.
  EXPECT_TRUE(a.malleable);
  EXPECT_DOUBLE_EQ(a.cpus, 2);
  EXPECT_EQ(a.cpuset, "0-1");
  EXPECT_EQ(a.resize_signal, "USR2");
  EXPECT_TRUE(transport_.resizes.empty());
  transport_.Report("cpu-a", a.id, "running");
  jobs_->Step();
  EXPECT_TRUE(transport_.resizes.empty()) << "nothing changed on the node";

  clock_.AdvanceMs(1000);
  const int64_t second = Submit(0.5, 2);
  jobs_->Step();
  ASSERT_EQ(transport_.starts.size(), 2u);
  const api::TaskSpec b = transport_.starts[1].second.task;
  EXPECT_DOUBLE_EQ(b.cpus, 1);
  EXPECT_EQ(b.cpuset, "1");
  EXPECT_EQ(b.resize_signal, "USR1");
  ASSERT_EQ(transport_.resizes.size(), 1u);
  const api::TaskResizeMsg shrink = transport_.resizes[0].second;
  EXPECT_EQ(shrink.id, a.id);
  EXPECT_DOUBLE_EQ(shrink.cpus, 1);
  EXPECT_EQ(shrink.cpuset, "0");
  EXPECT_GE(shrink.generation, 1u);

  transport_.Report("cpu-a", b.id, "running");
  jobs_->Step();
  transport_.Report("cpu-a", b.id, "exited", 0);
  clock_.AdvanceMs(1000);
  jobs_->Step();
  EXPECT_EQ(jobs_->Get(second)->state, JobState::kSucceeded);
  ASSERT_EQ(transport_.resizes.size(), 2u);
  const api::TaskResizeMsg grow = transport_.resizes[1].second;
  EXPECT_EQ(grow.id, a.id);
  EXPECT_DOUBLE_EQ(grow.cpus, 2);
  EXPECT_EQ(grow.cpuset, "0-1");
  EXPECT_GT(grow.generation, shrink.generation);

  // Each resize is an event of the job (rota job show lists them).
  int resized = 0;
  for (const auto& e : Events(first)) resized += e.reason.rfind("resized: ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(resized, 2);
  bool started = false;
  for (const auto& e : Events(second)) started = started || e.reason.find("malleable start: worker-0") == 0;
  EXPECT_TRUE(started);
}

TEST_F(JobsMalleableTest, TasksArePlacedWithTheirMinimumsSoTheNodeIsNeverOversubscribed) {
  StartService();
  const int64_t a = Submit(1, 2);
  const int64_t b = Submit(1, 2);
  const int64_t c = Submit(1, 2);
  jobs_->Step();
  EXPECT_EQ(transport_.starts.size(), 2u);
  EXPECT_NE(jobs_->Get(a)->state, JobState::kPending);
  EXPECT_NE(jobs_->Get(b)->state, JobState::kPending);
  EXPECT_EQ(jobs_->Get(c)->state, JobState::kPending);
  double sum = 0;
  for (const auto& [node, s] : transport_.starts) sum += s.task.cpus;
  EXPECT_DOUBLE_EQ(sum, 2);
}

TEST_F(JobsMalleableTest, ByPriorityGivesTheRestToTheHigherPriority) {
  auto queue = QueueFromJson(Json{{"name", "ml"}, {"min_priority", 0}, {"max_priority", 10}});
  ASSERT_TRUE(queue.ok()) << queue.status().ToString();
  ASSERT_TRUE(queues_->Create(*queue).ok());
  StartService(malleable::Policy::kByPriority);
  Submit(0.5, 2, Json{{"queue", "ml"}, {"priority", 0}});
  jobs_->Step();
  Submit(0.5, 2, Json{{"queue", "ml"}, {"priority", 5}});
  jobs_->Step();
  ASSERT_EQ(transport_.starts.size(), 2u);
  EXPECT_DOUBLE_EQ(transport_.starts[1].second.task.cpus, 1.5);
  ASSERT_EQ(transport_.resizes.size(), 1u);
  EXPECT_DOUBLE_EQ(transport_.resizes[0].second.cpus, 0.5);
}

TEST_F(JobsMalleableTest, ASpecWithBadBoundsIsRefusedByName) {
  auto bad = [](Json malleable, Json extra = Json::object()) {
    Json spec{{"name", "t"},
              {"command", {"x"}},
              {"groups", {{{"role", "worker"}, {"malleable", std::move(malleable)}}}}};
    spec.update(extra);
    auto r = jobs::JobSpecFromJson(spec);
    return r.ok() ? std::string("accepted") : r.status().message();
  };
  EXPECT_NE(bad(Json{{"min_cpus", 0}, {"max_cpus", 2}}).find("malleable.min_cpus"), std::string::npos);
  EXPECT_NE(bad(Json{{"min_cpus", 2}, {"max_cpus", 1}}).find("malleable.max_cpus"), std::string::npos);
  EXPECT_NE(bad(Json{{"min_cpus", 1}}).find("give min_cpus and max_cpus"), std::string::npos);
  EXPECT_NE(bad(Json{{"min_cpus", 1}, {"max_cpus", 2}, {"threads", 3}}).find("threads"), std::string::npos);
  EXPECT_NE(bad(Json{{"min_cpus", 0.0001}, {"max_cpus", 2}}).find("0.001"), std::string::npos);
  EXPECT_NE(bad("1:2").find("must be an object"), std::string::npos);
  EXPECT_NE(bad(Json{{"min_cpus", 1}, {"max_cpus", 2}}, Json{{"env", {{"ROTA_RESIZE_SIGNAL", "KILL"}}}})
                .find("ROTA_RESIZE_SIGNAL"),
            std::string::npos);
  Json request{{"name", "t"},
               {"command", {"x"}},
               {"groups", {{{"role", "worker"}, {"cpus_per_task", 4}, {"malleable", {{"min_cpus", 1}, {"max_cpus", 2}}}}}}};
  auto r = jobs::JobSpecFromJson(request);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cpus_per_task"), std::string::npos);
  // A good one round-trips and is placed with its minimum rounded up.
  Json good{{"name", "t"},
            {"command", {"x"}},
            {"groups", {{{"role", "worker"}, {"malleable", {{"min_cpus", 1.5}, {"max_cpus", 4}}}}}}};
  auto spec = jobs::JobSpecFromJson(good);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->groups[0].PlacementMilliCpus(), 1500u);
  auto back = jobs::JobSpecFromJson(jobs::ToJson(*spec));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, *spec);
}

}  // namespace
}  // namespace rota::server
