// The scheduler end to end: `rota server` and a real agent on a simulated
// node. A preemptible job is told (SIGTERM and ROTA_PREEMPT_NOTICE), stopped
// and requeued when a job of a higher-priority queue needs its GPUs, then runs
// again; a reservation its owner leaves idle lends its GPUs to a preemptible
// job, which is preempted when the owner starts a process there; queues are
// managed through the API and the CLI, and waiting jobs say why; a quota holds a
// job until raised; a drained node keeps its jobs and starts no new one.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <map>
#include <tuple>

#include "common/clock.h"
#include "common/file_util.h"
#include "common/process.h"
#include "common/time_util.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;

class SchedE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: jobs run as nobody, apart from processes by hand";
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    server_->SetEnv("ROTA_JOB_PORTS", "32000-32499");  // apart from other tests running at once
    server_->SetEnv("ROTA_PREEMPT_AFTER", "0s");
    server_->SetEnv("ROTA_JOB_STOP_GRACE", "3s");
    server_->SetEnv("ROTA_RESERVATION_IDLE", "2s");
    ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
    agent_ = std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = node_, .gpus = 2}, *server_);
    ASSERT_TRUE(agent_->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, node_); }, seconds(20)));
    Json extra{{"unix_user", "nobody"}};
    auto a = server_->CreateUser("alice", "user", extra);
    auto b = server_->CreateUser("bob", "user", extra);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    alice_ = *a;
    bob_ = *b;
    // Where preempted tasks leave what they were told.
    shared_ = dir_.path() + "/shared";
    ASSERT_TRUE(MakeDirs(shared_, 0777).ok());
    ::chmod(shared_.c_str(), 0777);
    ::chmod(dir_.path().c_str(), 0755);
  }

  Result<Json> Submit(const Json& spec, const std::string& token) {
    ASSIGN_OR_RETURN(auto r, server_->CallAs(token, "POST", "/api/v1/jobs", spec.dump()));
    if (r.status != 201) return Status::InvalidArgument(std::to_string(r.status) + " " + r.body);
    return Json::parse(r.body);
  }

  Json Job(int64_t id) {
    auto j = server_->GetJson("/api/v1/jobs/" + std::to_string(id));
    return j.ok() ? *j : Json::object();
  }

  bool WaitState(int64_t id, const std::string& state, int secs = 30) {
    return WaitFor([&] { return Job(id).value("state", "") == state; }, seconds(secs));
  }

  // A job whose tasks, when stopped, copy their notice to shared_/notice-NAME
  // (whole: renamed into place) and exit; run again after that, they succeed at once.
  // shared_/ready-NAME appears once the trap is set.
  // Bob reserves both GPUs of the node for an hour from a second from now, and
  // the reservation has begun when this returns.
  void BobReservesBothGpusNow() {
    const int64_t start = RealClock::Get().NowMs() + 1000;
    auto r = server_->CallAs(bob_, "POST", "/api/v1/reservations",
                             Json{{"node", node_},
                                  {"gpus", {0, 1}},
                                  {"start", FormatRfc3339(start)},
                                  {"end", FormatRfc3339(start + 3600'000)},
                                  {"title", "experiments"}}
                                 .dump());
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 201) << r->body;
    ASSERT_TRUE(WaitFor([&] { return RealClock::Get().NowMs() > start + 200; }, seconds(5)));
  }

  Json Preemptible(const std::string& name, int gpus) {
    const std::string notice = shared_ + "/notice-" + name;
    return Json{{"name", name},
                {"shell", true},
                {"command", {"if [ -e " + notice + " ]; then echo second run; exit 0; fi; "
                             "trap 'cat \"$ROTA_PREEMPT_NOTICE\" > " + notice + ".tmp; mv " + notice + ".tmp " + notice +
                             "; exit 143' TERM; "
                             "touch " + shared_ + "/ready-" + name + "; "
                             "while true; do sleep 0.1; done"}},
                {"workdir", "/tmp"},
                {"preemptible", true},
                {"groups", {{{"role", "worker"}, {"gpus_per_task", gpus}}}}};
  }

  TempDir dir_;
  // Simulated processes are attributed to a node by name (ROTA_SIM_NODE): a name
  // of this test process's own keeps a suite running beside it out of its GPUs.
  const std::string node_ = "gpu-s" + std::to_string(::getpid());
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<AgentProcess> agent_;
  std::string alice_, bob_, shared_;
};

TEST_F(SchedE2E, AHigherQueuePreemptsAPreemptibleJobWhichIsToldRequeuedAndRunsAgain) {
  auto q = server_->Call("POST", "/api/v1/queues",
                         Json{{"name", "urgent"}, {"priority", 10}, {"users", {"bob"}}}.dump());
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->status, 201) << q->body;

  auto low = Submit(Preemptible("low", 2), alice_);
  ASSERT_TRUE(low.ok()) << low.status().ToString();
  const int64_t low_id = (*low)["id"];
  ASSERT_TRUE(WaitState(low_id, "running")) << Job(low_id).dump(2);
  // "running" means its process started, not that its shell set its trap yet.
  ASSERT_TRUE(WaitFor([&] { return ReadFile(shared_ + "/ready-low").ok(); }, seconds(30)));

  // Alice may not use bob's queue; bob's job there takes both GPUs.
  Json urgent{{"name", "urgent"}, {"command", {"sleep", "2"}}, {"workdir", "/tmp"}, {"queue", "urgent"},
              {"groups", {{{"role", "worker"}, {"gpus_per_task", 2}}}}};
  auto refused = Submit(urgent, alice_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("403"), std::string::npos) << refused.status().message();
  const int64_t before_requeue = RealClock::Get().NowMs() / 1000 * 1000;  // RFC 3339 times are in seconds
  auto high = Submit(urgent, bob_);
  ASSERT_TRUE(high.ok()) << high.status().ToString();
  const int64_t high_id = (*high)["id"];

  // Bob's job runs once alice's has stopped; alice's waits, saying why.
  ASSERT_TRUE(WaitState(high_id, "running")) << Job(high_id).dump(2) << Job(low_id).dump(2);
  Json waiting = Job(low_id);
  EXPECT_EQ(waiting.value("state", ""), "pending") << waiting.dump(2);
  EXPECT_EQ(waiting.value("preemptions", 0), 1) << waiting.dump(2);
  EXPECT_GT(waiting.value("lost_gpu_seconds", -1), -1);
  // It has waited since its requeue, not since its submission.
  ASSERT_TRUE(waiting.contains("queued")) << waiting.dump(2);
  EXPECT_GE(*ParseRfc3339(waiting["queued"].get<std::string>()), before_requeue) << waiting.dump(2);
  auto notice = ReadFile(shared_ + "/notice-low");
  ASSERT_TRUE(notice.ok()) << "the task was not told: " << notice.status().ToString();
  EXPECT_NE(notice->find("preempted"), std::string::npos) << *notice;
  EXPECT_NE(notice->find("job " + std::to_string(high_id)), std::string::npos) << *notice;
  auto queue = server_->GetJson("/api/v1/queue");
  ASSERT_TRUE(queue.ok());
  ASSERT_EQ((*queue)["jobs"].size(), 1u) << queue->dump(2);
  EXPECT_EQ((*queue)["jobs"][0].value("id", 0), low_id);
  EXPECT_EQ((*queue)["jobs"][0].value("position", 0), 1);
  EXPECT_NE((*queue)["jobs"][0].value("reason", "").find("GPU"), std::string::npos) << queue->dump(2);
  EXPECT_EQ((*queue).value("total", 0), 1);
  auto page = server_->GetJson("/api/v1/queue?offset=1&limit=10");
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE((*page)["jobs"].empty()) << page->dump(2);
  EXPECT_EQ((*page).value("total", 0), 1) << page->dump(2);
  // The queues count their jobs: the preempted one waits, the urgent one runs.
  auto queues = server_->GetJson("/api/v1/queues");
  ASSERT_TRUE(queues.ok());
  std::map<std::string, std::pair<int, int>> counts;  // name -> (pending, unfinished)
  for (const auto& q : (*queues)["queues"]) {
    counts[q.value("name", "")] = {q.value("pending", -1), q.value("unfinished", -1)};
  }
  EXPECT_EQ(counts["default"], std::make_pair(1, 1)) << queues->dump(2);
  EXPECT_EQ(counts["urgent"], std::make_pair(0, 1)) << queues->dump(2);

  // Bob's job ends; alice's runs again and succeeds.
  Json high_end = WaitJobEnd(*server_, high_id, seconds(60));
  EXPECT_EQ(high_end.value("state", ""), "succeeded") << high_end.dump(2);
  Json low_end = WaitJobEnd(*server_, low_id, seconds(60));
  EXPECT_EQ(low_end.value("state", ""), "succeeded") << low_end.dump(2);
  EXPECT_EQ(low_end.value("restart_count", -1), 0) << "a preemption is not a restart";
  EXPECT_NE(low_end["events"].dump().find("preempted: "), std::string::npos) << low_end.dump(2);

  // A queue with unfinished jobs cannot go; an empty one can, and the default never.
  EXPECT_EQ(server_->Call("DELETE", "/api/v1/queues/default")->status, 409);
  EXPECT_EQ(server_->CallAs(bob_, "DELETE", "/api/v1/queues/urgent")->status, 403);
  EXPECT_EQ(server_->Call("DELETE", "/api/v1/queues/urgent")->status, 204);
}

// A queue changed after a job's submission holds the job to its new rules: a
// user it no longer admits, a time limit over its new maximum. The job waits,
// saying why, and starts once the queue allows it again.
TEST_F(SchedE2E, AQueueChangedSinceASubmissionHoldsTheJobToItsNewRules) {
  auto as_admin = [&](const char* method, const std::string& path, const Json& body) {
    auto r = server_->Call(method, path, body.dump());
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->status : 0;
  };
  ASSERT_EQ(as_admin("POST", "/api/v1/queues", Json{{"name", "lab"}, {"users", {"alice", "bob"}}}), 201);
  Json busy{{"name", "busy"}, {"command", {"sleep", "60"}}, {"workdir", "/tmp"},
            {"groups", {{{"role", "worker"}, {"gpus_per_task", 2}}}}};
  auto hold = Submit(busy, bob_);
  ASSERT_TRUE(hold.ok()) << hold.status().ToString();
  const int64_t hold_id = (*hold)["id"];
  ASSERT_TRUE(WaitState(hold_id, "running"));
  Json mine{{"name", "mine"}, {"command", {"sleep", "1"}}, {"workdir", "/tmp"}, {"queue", "lab"},
            {"time_limit", "10m"}, {"groups", {{{"role", "worker"}, {"gpus_per_task", 1}}}}};
  auto job = Submit(mine, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const int64_t id = (*job)["id"];
  auto reason = [&] { return Job(id).value("reason", ""); };
  ASSERT_EQ(as_admin("PUT", "/api/v1/queues/lab", Json{{"users", {"bob"}}}), 200);
  EXPECT_TRUE(WaitFor([&] { return reason().find("queue lab now admits users bob only, not alice") == 0; },
                      seconds(10)))
      << reason();
  ASSERT_EQ(as_admin("PUT", "/api/v1/queues/lab", Json{{"users", {"alice", "bob"}}, {"max_time_limit", "5m"}}), 200);
  EXPECT_TRUE(WaitFor([&] { return reason() == "time limit 10m: queue lab now allows at most 5m (it starts if the "
                                              "maximum is raised)"; },
                      seconds(10)))
      << reason();
  // Free GPUs do not start it while the queue says no.
  ASSERT_EQ(server_->Call("POST", "/api/v1/jobs/" + std::to_string(hold_id) + "/cancel", "")->status, 200);
  ASSERT_TRUE(WaitFor([&] { return Job(hold_id).value("state", "") == "cancelled"; }, seconds(30)));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(Job(id).value("state", ""), "pending") << Job(id).dump(2);
  ASSERT_EQ(as_admin("PUT", "/api/v1/queues/lab", Json{{"users", {"alice", "bob"}}, {"max_time_limit", "1h"}}), 200);
  EXPECT_TRUE(WaitFor([&] { return Job(id).value("state", "") == "succeeded"; }, seconds(30))) << Job(id).dump(2);
}

TEST_F(SchedE2E, AnIdleReservationLendsItsGpusToAPreemptibleJobUntilItsOwnerComesBack) {
  // (Before it starts, a preemptible job could run there, and would be stopped
  // when it starts: the owner's time has come, idle or not.)
  ASSERT_NO_FATAL_FAILURE(BobReservesBothGpusNow());

  // Alice's ordinary job waits behind the reservation, saying so.
  Json plain{{"name", "plain"}, {"command", {"true"}}, {"workdir", "/tmp"},
             {"groups", {{{"role", "worker"}, {"gpus_per_task", 1}}}}};
  auto p = Submit(plain, alice_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const int64_t plain_id = (*p)["id"];
  // Her preemptible job runs on a GPU bob leaves idle.
  auto lent = Submit(Preemptible("lent", 1), alice_);
  ASSERT_TRUE(lent.ok()) << lent.status().ToString();
  const int64_t lent_id = (*lent)["id"];
  ASSERT_TRUE(WaitState(lent_id, "running")) << Job(lent_id).dump(2);
  ASSERT_TRUE(WaitFor([&] { return ReadFile(shared_ + "/ready-lent").ok(); }, seconds(30)));
  Json wait = Job(plain_id);
  EXPECT_EQ(wait.value("state", ""), "pending") << wait.dump(2);
  EXPECT_NE(wait.value("reason", "").find("reserved"), std::string::npos) << wait.dump(2);

  // Bob comes back: a process of his on the GPU alice's job holds.
  const int gpu = Job(lent_id)["tasks"][0]["gpus"][0];
  Child mine({"/bin/sleep", "120"}, {{"ROTA_SIM_NODE", node_}, {"CUDA_VISIBLE_DEVICES", std::to_string(gpu)}},
             dir_.path() + "/bob.log");
  ASSERT_TRUE(mine.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return Job(lent_id).value("preemptions", 0) == 1; }, seconds(30)))
      << Job(lent_id).dump(2);
  ASSERT_TRUE(WaitFor([&] { return ReadFile(shared_ + "/notice-lent").ok(); }, seconds(30)));
  auto notice = ReadFile(shared_ + "/notice-lent");
  EXPECT_NE(notice->find("reserv"), std::string::npos) << *notice;
  ASSERT_TRUE(WaitState(lent_id, "pending")) << Job(lent_id).dump(2);
  // Bob is still there: nothing of alice's starts on his GPUs.
  EXPECT_EQ(Job(plain_id).value("state", ""), "pending");
  mine.Kill();
}

// The owner of an idle reservation submits a job for its GPUs: the borrower
// is stopped at once (not after the preemption threshold) and the owner's job
// runs; the borrower does not come back while the owner is there.
TEST_F(SchedE2E, AnOwnersJobTakesAnIdleReservationBackAtOnce) {
  ASSERT_NO_FATAL_FAILURE(BobReservesBothGpusNow());
  auto lent = Submit(Preemptible("lent", 2), alice_);
  ASSERT_TRUE(lent.ok()) << lent.status().ToString();
  const int64_t lent_id = (*lent)["id"];
  ASSERT_TRUE(WaitState(lent_id, "running")) << Job(lent_id).dump(2);

  Json own{{"name", "own"}, {"command", {"sleep", "60"}}, {"workdir", "/tmp"},
           {"groups", {{{"role", "worker"}, {"gpus_per_task", 2}, {"nodes", {node_}}}}}};
  const auto submitted = std::chrono::steady_clock::now();
  auto mine = Submit(own, bob_);
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  const int64_t own_id = (*mine)["id"];
  ASSERT_TRUE(WaitState(own_id, "running")) << Job(own_id).dump(2) << Job(lent_id).dump(2);
  EXPECT_LT(std::chrono::steady_clock::now() - submitted, seconds(60));  // the threshold is 2 min
  const Json back = Job(lent_id);
  EXPECT_EQ(back.value("preemptions", 0), 1) << back.dump(2);
  EXPECT_EQ(back.value("state", ""), "pending") << back.dump(2);
  (void)server_->CallAs(bob_, "POST", "/api/v1/jobs/" + std::to_string(own_id) + "/cancel", "");
  (void)server_->CallAs(alice_, "POST", "/api/v1/jobs/" + std::to_string(lent_id) + "/cancel", "");
}

// GPUs a job of someone else holds with no end in sight are not on offer in the
// calendar: the reservation would start on GPUs that never come free.
TEST_F(SchedE2E, AReservationIsNotBookedOnGpusAnotherUsersJobHoldsPastItsStart) {
  Json forever{{"name", "forever"}, {"command", {"sleep", "600"}}, {"workdir", "/tmp"},
               {"groups", {{{"role", "worker"}, {"gpus_per_task", 1}}}}};
  auto held = Submit(forever, bob_);
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  const int64_t held_id = (*held)["id"];
  ASSERT_TRUE(WaitState(held_id, "running")) << Job(held_id).dump(2);
  const int gpu = Job(held_id)["tasks"][0]["gpus"][0];
  const int64_t start = RealClock::Get().NowMs() + 3600'000;
  auto reserve = [&](const std::string& token, const Json& gpus) {
    Json body{{"node", node_}, {"start", FormatRfc3339(start)}, {"end", FormatRfc3339(start + 3600'000)},
              {"title", "mine"}};
    body[gpus.is_array() ? "gpus" : "count"] = gpus;
    auto r = server_->CallAs(token, "POST", "/api/v1/reservations", body.dump());
    return r.ok() ? std::make_pair(r->status, r->body) : std::make_pair(0, r.status().ToString());
  };
  auto [code, body] = reserve(alice_, Json::array({gpu}));
  EXPECT_EQ(code, 409) << body;
  EXPECT_NE(body.find("is held by job " + std::to_string(held_id) + " of bob, which is not preemptible and runs "
                      "with no time limit"),
            std::string::npos)
      << body;
  // Asked for a number of GPUs, she gets the other one.
  std::tie(code, body) = reserve(alice_, 1);
  ASSERT_EQ(code, 201) << body;
  EXPECT_EQ(Json::parse(body)["gpus"], Json::array({1 - gpu})) << body;
  const int64_t mine = Json::parse(body)["id"];
  // A job of bob's ending before her start may use her GPU; moving her start
  // before its end is refused.
  Json limited = forever;
  limited["time_limit"] = "30m";
  auto before = Submit(limited, bob_);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  const int64_t before_id = (*before)["id"];
  ASSERT_TRUE(WaitState(before_id, "running")) << Job(before_id).dump(2);
  {  // When its run began and when its limit stops it: API and CLI.
    const Json j = Job(before_id);
    ASSERT_TRUE(j.contains("started") && j.contains("deadline")) << j.dump(2);
    auto started = ParseRfc3339(j["started"].get<std::string>());
    auto deadline = ParseRfc3339(j["deadline"].get<std::string>());
    ASSERT_TRUE(started.ok() && deadline.ok()) << j.dump(2);
    EXPECT_EQ(*deadline - *started, 30 * 60'000) << j.dump(2);
    auto env = server_->CliEnv();
    env["ROTA_TOKEN"] = bob_;
    CliResult show = RunCli({"job", "show", std::to_string(before_id)}, env);
    EXPECT_NE(show.out.find("its time limit stops it at " + j["deadline"].get<std::string>()), std::string::npos)
        << show.out;
  }
  auto moved = server_->CallAs(alice_, "PATCH", "/api/v1/reservations/" + std::to_string(mine),
                               Json{{"start", FormatRfc3339(RealClock::Get().NowMs() + 600'000)}}.dump());
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->status, 409) << moved->body;
  EXPECT_NE(moved->body.find("is held by job " + std::to_string(before_id) + " of bob, which is not preemptible "
                             "and runs until"),
            std::string::npos)
      << moved->body;
  (void)server_->CallAs(bob_, "POST", "/api/v1/jobs/" + std::to_string(before_id) + "/cancel", "");
  // Bob's own job is no obstacle to bob.
  std::tie(code, body) = reserve(bob_, Json::array({gpu}));
  EXPECT_EQ(code, 201) << body;
  (void)server_->CallAs(bob_, "POST", "/api/v1/jobs/" + std::to_string(held_id) + "/cancel", "");
}

TEST_F(SchedE2E, AGangWaitingOnScatteredGpusMovesAPreemptibleJobToAnotherNode) {
  const std::string other = node_ + "-b";
  AgentProcess second(dir_.path(), SimGpuNode{.name = other, .gpus = 2}, *server_);
  ASSERT_TRUE(second.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, other); }, seconds(20)));
  // Bob's queue orders after alice's: plain preemption never stops her jobs for his.
  auto q = server_->Call("POST", "/api/v1/queues",
                         Json{{"name", "batch"}, {"priority", -1}, {"users", {"bob"}}}.dump());
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->status, 201) << q->body;

  // x and a short job fill one node (tightest fit); z goes to the other; the
  // short job ends: one free GPU on each node.
  auto x = Submit(Preemptible("x", 1), alice_);
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  const int64_t x_id = (*x)["id"];
  ASSERT_TRUE(WaitState(x_id, "running")) << Job(x_id).dump(2);
  Json brief{{"name", "brief"}, {"command", {"sleep", "4"}}, {"workdir", "/tmp"},
             {"groups", {{{"role", "worker"}, {"gpus_per_task", 1}}}}};
  auto b = Submit(brief, alice_);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const int64_t brief_id = (*b)["id"];
  ASSERT_TRUE(WaitState(brief_id, "running")) << Job(brief_id).dump(2);
  auto z = Submit(Preemptible("z", 1), alice_);
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  const int64_t z_id = (*z)["id"];
  ASSERT_TRUE(WaitState(z_id, "running")) << Job(z_id).dump(2);
  const std::string x_node = Job(x_id)["tasks"][0].value("node", "");
  ASSERT_EQ(Job(brief_id)["tasks"][0].value("node", ""), x_node) << "the tightest fit";
  ASSERT_NE(Job(z_id)["tasks"][0].value("node", ""), x_node);
  ASSERT_TRUE(WaitFor([&] { return ReadFile(shared_ + "/ready-x").ok() && ReadFile(shared_ + "/ready-z").ok(); },
                      seconds(30)));
  ASSERT_EQ(WaitJobEnd(*server_, brief_id, seconds(60)).value("state", ""), "succeeded");

  // Bob's 2-GPU job: 2 GPUs free, on two nodes. One of alice's jobs moves.
  Json pair{{"name", "pair"}, {"command", {"true"}}, {"workdir", "/tmp"}, {"queue", "batch"},
            {"groups", {{{"role", "worker"}, {"gpus_per_task", 2}}}}};
  auto big = Submit(pair, bob_);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  const int64_t big_id = (*big)["id"];
  Json big_end = WaitJobEnd(*server_, big_id, seconds(60));
  EXPECT_EQ(big_end.value("state", ""), "succeeded") << big_end.dump(2);
  const int moved = Job(x_id).value("preemptions", 0) + Job(z_id).value("preemptions", 0);
  EXPECT_EQ(moved, 1) << Job(x_id).dump(2) << Job(z_id).dump(2);
  const bool x_moved = Job(x_id).value("preemptions", 0) == 1;
  const int64_t moved_id = x_moved ? x_id : z_id;
  auto notice = ReadFile(shared_ + (x_moved ? "/notice-x" : "/notice-z"));
  ASSERT_TRUE(notice.ok()) << "the moved job was not told: " << notice.status().ToString();
  EXPECT_NE(notice->find("moved to make room for job " + std::to_string(big_id)), std::string::npos)
      << *notice;
  // It ran again at once elsewhere (its second run succeeds), never as a restart.
  Json moved_end = WaitJobEnd(*server_, moved_id, seconds(60));
  EXPECT_EQ(moved_end.value("state", ""), "succeeded") << moved_end.dump(2);
  EXPECT_EQ(moved_end.value("restart_count", -1), 0);
  const int64_t stayed = x_moved ? z_id : x_id;
  EXPECT_EQ(Job(stayed).value("state", ""), "running") << Job(stayed).dump(2);
  EXPECT_EQ(Job(stayed).value("preemptions", -1), 0);
  ASSERT_EQ(server_->CallAs(alice_, "POST", "/api/v1/jobs/" + std::to_string(stayed) + "/cancel", "")->status,
            200);
}

TEST_F(SchedE2E, QueuesAreManagedWithTheCliAndBadInputIsRefused) {
  auto env = server_->CliEnv();
  CliResult made = RunCli({"queues", "create", "ml", "--priority", "5", "--min-priority", "-10",
                           "--max-priority", "10", "--default-time-limit", "2h", "--preemptible", "true"},
                          env);
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  CliResult list = RunCli({"queues"}, env);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("ml"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("-10..10"), std::string::npos) << list.out;
  CliResult set = RunCli({"queues", "set", "ml", "--max-gpus", "1"}, env);
  ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  auto ml = server_->GetJson("/api/v1/queues/ml");
  ASSERT_TRUE(ml.ok());
  EXPECT_EQ((*ml).value("max_gpus", 0), 1);
  EXPECT_EQ((*ml).value("priority", 0), 5) << "set keeps what it was not told to change";
  // Lists are trimmed; a time limit of any length reads back; "0" clears one.
  set = RunCli({"queues", "set", "ml", "--users", "alice, bob", "--max-time-limit", "150m"}, env);
  ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  ml = server_->GetJson("/api/v1/queues/ml");
  ASSERT_TRUE(ml.ok());
  EXPECT_EQ((*ml)["users"], Json({"alice", "bob"}));
  EXPECT_EQ((*ml).value("max_time_limit", ""), "150m");
  set = RunCli({"queues", "set", "ml", "--users", "", "--max-time-limit", "0"}, env);
  ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  ml = server_->GetJson("/api/v1/queues/ml");
  ASSERT_TRUE(ml.ok());
  EXPECT_FALSE((*ml).contains("max_time_limit")) << ml->dump();
  EXPECT_TRUE((*ml)["users"].empty()) << ml->dump();
  // Members must exist: a typo would lock out the members meant.
  auto as_admin = [&](const std::string& method, const std::string& path, const std::string& body) {
    auto r = server_->CallAs(server_->admin_token(), method, path, body);
    return r.ok() ? std::make_pair(r->status, r->body) : std::make_pair(0, r.status().ToString());
  };
  auto [st, msg] = as_admin("POST", "/api/v1/queues", R"({"name": "typo", "users": ["alcie"]})");
  EXPECT_EQ(st, 400) << msg;
  EXPECT_NE(msg.find("queue.users: no user 'alcie'"), std::string::npos) << msg;
  std::tie(st, msg) = as_admin("POST", "/api/v1/queues", R"({"name": "typo", "groups": ["vision"]})");
  EXPECT_EQ(st, 400) << msg;
  EXPECT_NE(msg.find("queue.groups: no group 'vision'"), std::string::npos) << msg;
  std::tie(st, msg) = as_admin("DELETE", "/api/v1/queues/default", "");
  EXPECT_EQ(st, 409) << msg;
  EXPECT_NE(msg.find("built in"), std::string::npos) << msg;
  // A deleted member leaves the queues and its quota goes: whoever gets the
  // name later inherits neither.
  ASSERT_TRUE(server_->CreateUser("temp", "user", Json{{"unix_user", "nobody"}}).ok());
  std::tie(st, msg) = as_admin("POST", "/api/v1/queues", R"({"name": "keep", "users": ["temp", "alice"]})");
  ASSERT_EQ(st, 201) << msg;
  std::tie(st, msg) = as_admin("PUT", "/api/v1/quotas/user/temp", R"({"max_gpus": 8})");
  ASSERT_EQ(st, 200) << msg;
  std::tie(st, msg) = as_admin("DELETE", "/api/v1/users/temp", "");
  ASSERT_EQ(st / 100, 2) << msg;
  auto kept = server_->GetJson("/api/v1/queues/keep");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ((*kept)["users"], Json({"alice"})) << kept->dump();
  std::tie(st, msg) = as_admin("GET", "/api/v1/quotas/user/temp", "");
  EXPECT_EQ(st, 404) << msg;
  CliResult keep = RunCli({"queues", "set", "keep", "--max-gpus", "1"}, env);
  EXPECT_EQ(keep.exit_code, 0) << keep.out << keep.err;
  std::tie(st, msg) = as_admin("PUT", "/api/v1/queues/keep", R"({"users": ["alice", "nobody2"]})");
  EXPECT_EQ(st, 400) << msg;
  EXPECT_NE(msg.find("no user 'nobody2'"), std::string::npos) << msg;
  std::tie(st, msg) = as_admin("DELETE", "/api/v1/queues/keep", "");
  EXPECT_EQ(st, 204) << msg;
  // What GET gives PUTs back.
  auto put = server_->CallAs(server_->admin_token(), "PUT", "/api/v1/queues/ml", ml->dump());
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->status, 200) << put->body;
  // Bad numbers are refused by the CLI before anything is sent.
  CliResult zero = RunCli({"run", "--workers", "0", "--", "true"}, env);
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_NE(zero.err.find("--workers: must be a whole number of 1 or more"), std::string::npos) << zero.err;
  CliResult nan = RunCli({"quotas", "set", "user", "alice", "--share", "nan"}, env);
  EXPECT_NE(nan.exit_code, 0);
  EXPECT_NE(nan.err.find("--share: must be a finite number >= 0"), std::string::npos) << nan.err;

  // A job in ml gets the queue's defaults; a priority outside its bounds is refused.
  Json spec{{"name", "q"}, {"command", {"true"}}, {"workdir", "/tmp"}, {"queue", "ml"},
            {"groups", {{{"role", "worker"}, {"gpus_per_task", 1}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ((*job)["spec"].value("time_limit", ""), "2h");
  EXPECT_TRUE((*job).value("preemptible", false));
  // The CLI opts out of the queue's default, or in.
  auto alice_env = env;
  alice_env["ROTA_TOKEN"] = alice_;
  for (const auto& [flag, want] : std::vector<std::pair<std::string, bool>>{
           {"--no-preemptible", false}, {"--preemptible=false", false}, {"--preemptible", true}}) {
    CliResult r = RunCli({"run", "--queue", "ml", "--gpus-per-task", "0", flag, "-o", "json", "--", "true"},
                         alice_env);
    ASSERT_EQ(r.exit_code, 0) << flag << ": " << r.err;
    auto j = api::ParseJson(r.out);
    ASSERT_TRUE(j.ok()) << r.out;
    EXPECT_EQ((*j).value("preemptible", !want), want) << flag << ": " << r.out;
  }
  spec["priority"] = 11;
  auto high = Submit(spec, alice_);
  ASSERT_FALSE(high.ok());
  EXPECT_NE(high.status().message().find("-10..10"), std::string::npos) << high.status().message();
  spec["queue"] = "nope";
  spec.erase("priority");
  auto unknown = Submit(spec, alice_);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("no queue 'nope'"), std::string::npos);
  // The preview (the web form's inline check) answers what submitting would.
  auto preview = [&](const Json& body) {
    auto r = server_->CallAs(alice_, "POST", "/api/v1/jobs/preview", body.dump());
    return r.ok() ? std::make_pair(r->status, r->body) : std::make_pair(0, r.status().ToString());
  };
  auto [code, body] = preview(spec);
  EXPECT_EQ(code, 400) << body;
  EXPECT_NE(body.find("no queue 'nope'"), std::string::npos) << body;
  Json in_ml = spec;
  in_ml["queue"] = "ml";
  in_ml["priority"] = 11;
  std::tie(code, body) = preview(in_ml);
  EXPECT_EQ(code, 400) << body;
  EXPECT_NE(body.find("-10..10"), std::string::npos) << body;
  in_ml.erase("priority");
  in_ml["groups"][0]["gpus_per_task"] = 64;
  std::tie(code, body) = preview(in_ml);
  EXPECT_EQ(code, 400) << body;
  in_ml["groups"][0]["gpus_per_task"] = 1;
  std::tie(code, body) = preview(in_ml);
  EXPECT_EQ(code, 200) << body;
  spec["queue"] = "Bad Name";
  EXPECT_NE(Submit(spec, alice_).status().message().find("400"), std::string::npos);

  auto status = [&](const std::string& method, const std::string& path, const std::string& body,
                    const std::string& token) {
    auto r = server_->CallAs(token, method, path, body);
    return r.ok() ? r->status : -1;
  };
  EXPECT_EQ(status("POST", "/api/v1/queues", R"({"name":"x"})", alice_), 403);
  EXPECT_EQ(status("POST", "/api/v1/queues", R"({"name":"x","bogus":1})", server_->admin_token()), 400);
  EXPECT_EQ(status("POST", "/api/v1/queues", R"({"name":"x","min_priority":5,"max_priority":1})",
                   server_->admin_token()), 400);
  EXPECT_EQ(status("POST", "/api/v1/queues", R"({"name":"ml"})", server_->admin_token()), 409);
  EXPECT_EQ(status("PUT", "/api/v1/queues/nope", R"({"priority":1})", server_->admin_token()), 404);
  EXPECT_EQ(status("PUT", "/api/v1/queues/ml", R"({"name":"other"})", server_->admin_token()), 400);
  EXPECT_EQ(status("POST", "/api/v1/queues", R"({"name":"y","users":["no such/user"]})", server_->admin_token()), 400);
  EXPECT_EQ(status("GET", "/api/v1/queue?queue=nope", "", alice_), 404);
  EXPECT_EQ(status("GET", "/api/v1/queue?bogus=1", "", alice_), 400);
  EXPECT_EQ(status("GET", "/api/v1/queue?limit=0", "", alice_), 400);
  EXPECT_EQ(status("GET", "/api/v1/queue?offset=-1", "", alice_), 400);
  EXPECT_EQ(status("GET", "/api/v1/queues", "", ""), 401);

  // The queue listing in order, as the CLI shows it.
  CliResult queue = RunCli({"queue"}, env);
  EXPECT_EQ(queue.exit_code, 0) << queue.err;
  EXPECT_NE(queue.out.find("POS"), std::string::npos) << queue.out;
}

// A user quota of one GPU holds alice's second job with the reason; raising it
// lets the job start. Quotas are managed with the CLI; bad input is refused.
TEST_F(SchedE2E, AUserQuotaHoldsAJobUntilItIsRaised) {
  auto env = server_->CliEnv();
  CliResult set = RunCli({"quotas", "set", "user", "alice", "--max-gpus", "1", "--share", "2"}, env);
  ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  Json sleeper{{"name", "q1"}, {"command", {"sleep", "600"}}, {"workdir", "/tmp"},
               {"groups", {{{"role", "worker"}, {"gpus_per_task", 1}}}}};
  auto first = Submit(sleeper, alice_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const int64_t first_id = (*first)["id"];
  ASSERT_TRUE(WaitState(first_id, "running"));
  sleeper["name"] = "q2";
  auto second = Submit(sleeper, alice_);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  const int64_t second_id = (*second)["id"];
  ASSERT_TRUE(WaitFor([&] { return Job(second_id).value("reason", "") == "user quota: 1 GPU in use, limit 1"; },
                      seconds(30)))
      << Job(second_id).dump();
  EXPECT_EQ(Job(second_id).value("state", ""), "pending");
  // bob has no quota: his job takes the other GPU.
  sleeper["name"] = "b1";
  auto bobs = Submit(sleeper, bob_);
  ASSERT_TRUE(bobs.ok()) << bobs.status().ToString();
  const int64_t bob_id = (*bobs)["id"];
  ASSERT_TRUE(WaitState(bob_id, "running"));
  CliResult cancel = RunCli({"cancel", std::to_string(bob_id)}, env);
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;

  CliResult list = RunCli({"quotas"}, env);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("alice"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("GPU-HOURS/30d"), std::string::npos) << list.out;
  CliResult raise = RunCli({"quotas", "set", "user", "alice", "--max-gpus", "2"}, env);
  ASSERT_EQ(raise.exit_code, 0) << raise.out << raise.err;
  auto stored = server_->GetJson("/api/v1/quotas/user/alice");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored).value("max_gpus", 0), 2);
  EXPECT_EQ((*stored).value("share", 0.0), 2.0) << "set keeps what it was not told to change";
  EXPECT_TRUE(WaitState(second_id, "running")) << Job(second_id).dump();

  auto status = [&](const std::string& method, const std::string& path, const std::string& body,
                    const std::string& token) {
    auto r = server_->CallAs(token, method, path, body);
    return r.ok() ? r->status : -1;
  };
  const std::string admin = server_->admin_token();
  EXPECT_EQ(status("PUT", "/api/v1/quotas/user/alice", R"({"max_gpus":8})", alice_), 403);
  EXPECT_EQ(status("PUT", "/api/v1/quotas/robot/alice", R"({"max_gpus":8})", admin), 400);
  EXPECT_EQ(status("GET", "/api/v1/quotas/robot/alice", "", admin), 400);
  EXPECT_EQ(status("DELETE", "/api/v1/quotas/robot/alice", "", admin), 400);
  EXPECT_EQ(status("PUT", "/api/v1/quotas/user/nobody-here", R"({"max_gpus":8})", admin), 404);
  EXPECT_EQ(status("PUT", "/api/v1/quotas/group/nogroup", R"({"max_gpus":8})", admin), 404);
  EXPECT_EQ(status("PUT", "/api/v1/quotas/user/alice", R"({"max_gpus":-1})", admin), 400);
  EXPECT_EQ(status("PUT", "/api/v1/quotas/user/alice", R"({"share":0})", admin), 400);
  EXPECT_EQ(status("PUT", "/api/v1/quotas/user/alice", R"({"bogus":1})", admin), 400);
  EXPECT_EQ(status("PUT", "/api/v1/quotas/user/alice", R"({"name":"bob"})", admin), 400);
  EXPECT_EQ(status("PUT", "/api/v1/quotas/user/alice", "not json", admin), 400);
  EXPECT_EQ(status("DELETE", "/api/v1/quotas/user/bob", "", admin), 404);
  EXPECT_EQ(status("GET", "/api/v1/quotas", "", ""), 401);
  EXPECT_EQ(RunCli({"quotas", "set", "robot", "alice"}, env).exit_code, 2);
  CliResult del = RunCli({"quotas", "delete", "user", "alice"}, env);
  EXPECT_EQ(del.exit_code, 0) << del.err;
  EXPECT_EQ(status("GET", "/api/v1/quotas/user/alice", "", alice_), 404);
  for (int64_t id : {first_id, second_id}) (void)RunCli({"cancel", std::to_string(id)}, env);
  ASSERT_TRUE(WaitState(second_id, "cancelled"));

  // Usage: alice's jobs count in her fair share and quota period, and her
  // fair-share usage survives a restart of the server.
  auto usage_of = [](const Json& quotas, const std::string& name, const char* key) {
    for (const auto& u : quotas["usage"]) {
      if (u.value("kind", "") == "user" && u.value("name", "") == name) return u.value(key, 0.0);
    }
    return 0.0;
  };
  auto before = server_->GetJson("/api/v1/quotas");
  ASSERT_TRUE(before.ok());
  const double fairshare = usage_of(*before, "alice", "fairshare_gpu_hours");
  EXPECT_GT(fairshare, 0) << before->dump();
  EXPECT_GT(usage_of(*before, "alice", "period_gpu_hours"), 0) << before->dump();
  CliResult shown = RunCli({"quotas"}, env);
  EXPECT_NE(shown.out.find("FAIR-SHARE GPU-HOURS"), std::string::npos) << shown.out;
  agent_.reset();
  const std::string data_dir = server_->data_dir();
  const uint16_t port = server_->port();
  EXPECT_EQ(server_->child().Stop(), 0) << server_->child().Log();
  server_ = std::make_unique<ServerProcess>(data_dir, port);
  ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
  auto after = server_->GetJson("/api/v1/quotas");
  ASSERT_TRUE(after.ok());
  EXPECT_NEAR(usage_of(*after, "alice", "fairshare_gpu_hours"), fairshare, fairshare * 0.01) << after->dump();
  EXPECT_GT(usage_of(*after, "alice", "period_gpu_hours"), 0) << "ended jobs count in the period";
}

// An admin drains the node with the CLI: alice's running job goes on, her next
// job waits saying for what, across a restart of the server; resuming starts it.
TEST_F(SchedE2E, ADrainedNodeKeepsItsJobsAndStartsNoNewOneUntilResumed) {
  auto env = server_->CliEnv();
  Json sleeper{{"name", "d1"}, {"command", {"sleep", "600"}}, {"workdir", "/tmp"},
               {"groups", {{{"role", "worker"}, {"gpus_per_task", 1}}}}};
  auto first = Submit(sleeper, alice_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const int64_t first_id = (*first)["id"];
  ASSERT_TRUE(WaitState(first_id, "running"));

  CliResult drain = RunCli({"nodes", "drain", node_, "--reason", "disk swap"}, env);
  ASSERT_EQ(drain.exit_code, 0) << drain.out << drain.err;
  CliResult nodes = RunCli({"nodes"}, env);
  EXPECT_NE(nodes.out.find("ready, drained"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("drained by admin: disk swap"), std::string::npos) << nodes.out;
  sleeper["name"] = "d2";
  auto second = Submit(sleeper, alice_);
  ASSERT_TRUE(second.ok()) << second.status().ToString() << ": a drain refuses no submission";
  const int64_t second_id = (*second)["id"];
  const std::string why = "waiting for " + node_ + " (drained: disk swap)";
  ASSERT_TRUE(WaitFor([&] { return Job(second_id).value("reason", "") == why; }, seconds(30)))
      << Job(second_id).dump();

  // The drain outlives a restart of the server; the running job goes on.
  const std::string data_dir = server_->data_dir();
  const uint16_t port = server_->port();
  EXPECT_EQ(server_->child().Stop(), 0) << server_->child().Log();
  server_ = std::make_unique<ServerProcess>(data_dir, port);
  ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
  env = server_->CliEnv();
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, node_); }, seconds(30)));
  auto node = server_->GetJson("/api/v1/nodes/" + node_);
  ASSERT_TRUE(node.ok());
  EXPECT_EQ((*node)["drain"].value("reason", ""), "disk swap") << node->dump();
  EXPECT_EQ((*node)["drain"].value("by", ""), "admin");
  ASSERT_TRUE(WaitFor([&] { return Job(second_id).value("reason", "") == why; }, seconds(30)))
      << Job(second_id).dump();
  EXPECT_EQ(Job(first_id).value("state", ""), "running");
  EXPECT_EQ(Job(second_id).value("state", ""), "pending");

  auto status = [&](const std::string& method, const std::string& path, const std::string& body,
                    const std::string& token) {
    auto r = server_->CallAs(token, method, path, body);
    return r.ok() ? r->status : -1;
  };
  const std::string admin = server_->admin_token();
  const std::string path = "/api/v1/nodes/" + node_ + "/drain";
  EXPECT_EQ(status("PUT", path, "", alice_), 403);
  EXPECT_EQ(status("DELETE", path, "", alice_), 403);
  EXPECT_EQ(status("PUT", path, "", ""), 401);
  EXPECT_EQ(status("PUT", "/api/v1/nodes/nope/drain", "", admin), 404);
  EXPECT_EQ(status("DELETE", "/api/v1/nodes/nope/drain", "", admin), 404);
  EXPECT_EQ(status("PUT", path, R"({"bogus":1})", admin), 400);
  EXPECT_EQ(status("PUT", path, R"({"reason":"a\u0007b"})", admin), 400);
  EXPECT_EQ(status("PUT", path, R"({"reason":7})", admin), 400);
  EXPECT_EQ(status("PUT", path, "not json", admin), 400);
  EXPECT_EQ(Job(second_id).value("reason", ""), why) << "a refused change changed nothing";

  CliResult resume = RunCli({"nodes", "resume", node_}, env);
  ASSERT_EQ(resume.exit_code, 0) << resume.out << resume.err;
  EXPECT_TRUE(WaitState(second_id, "running")) << Job(second_id).dump();
  node = server_->GetJson("/api/v1/nodes/" + node_);
  ASSERT_TRUE(node.ok());
  EXPECT_TRUE((*node)["drain"].is_null()) << node->dump();
  for (int64_t id : {first_id, second_id}) (void)RunCli({"cancel", std::to_string(id)}, env);
}

}  // namespace
}  // namespace rota::testing
