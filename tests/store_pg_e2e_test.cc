// `rota server` on a PostgreSQL store (issue 42): a real server with
// ROTA_STORE naming a database of the test PostgreSQL server
// (src/server/store/pg_test_instance.h), a real agent with simulated GPUs. What it
// was told (users, a reservation, a job and its run, samples) is in PostgreSQL and
// still there after a restart; a bad store URL stops the start saying why, never
// showing the URL's password.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>

#include "common/clock.h"
#include "common/time_util.h"
#include "server/store/store_test_backend.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;
using store::testing::Backend;
using store::testing::TestStoreLocation;

class StorePgE2E : public ::testing::Test {
 protected:
  void SetUp() override { ROTA_SKIP_WITHOUT_BACKEND(pg_); }

  std::unique_ptr<ServerProcess> StartServer() {
    auto s = std::make_unique<ServerProcess>(dir_.path() + "/server");
    s->SetEnv("ROTA_STORE", pg_.url());
    s->SetEnv("ROTA_JOB_PORTS", "31500-31599");  // apart from other tests running at once
    Status st = s->Start();
    EXPECT_TRUE(st.ok()) << st.ToString() << "\n" << s->child().Log();
    return st.ok() ? std::move(s) : nullptr;
  }
  int64_t Count(const std::string& table) {
    auto db = pg_.Connect();
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return -1;
    auto n = db->QueryInt("SELECT count(*) FROM " + table);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ok() ? *n : -1;
  }

  // A user alice who runs tasks as a Unix user that exists here.
  static Result<std::string> CreateAlice(ServerProcess& server) {
    Json extra = Json::object();
    extra["unix_user"] = ::geteuid() == 0 ? "nobody" : ::getpwuid(::geteuid())->pw_name;
    return server.CreateUser("alice", "user", extra);
  }
  // POST /api/v1/reservations of GPU 1 of node_ from `start` for `ms`, as `token`.
  Result<net::ClientResponse> Reserve(ServerProcess& server, const std::string& token,
                                      int64_t start, int64_t ms, const std::string& title) {
    return server.CallAs(token, "POST", "/api/v1/reservations",
                         Json{{"node", node_},
                              {"gpus", {1}},
                              {"start", FormatRfc3339(start)},
                              {"end", FormatRfc3339(start + ms)},
                              {"title", title}}
                             .dump());
  }

  TempDir dir_;
  TestStoreLocation pg_{Backend::kPostgres};
  // Simulated processes are found by node name: one of this test process's own.
  const std::string node_ = "gpu-pg" + std::to_string(::getpid());
};

TEST_F(StorePgE2E, WhatTheServerWasToldIsInPostgresAndSurvivesARestart) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  {
    AgentProcess agent(dir_.path(), SimGpuNode{.name = node_, .gpus = 2}, *server);
    ASSERT_TRUE(agent.Start().ok());
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server, node_); }, seconds(20)))
        << agent.child().Log();
    auto alice = CreateAlice(*server);
    ASSERT_TRUE(alice.ok()) << alice.status().ToString();

    const int64_t start = RealClock::Get().NowMs() + 2 * 3600'000;
    auto r = Reserve(*server, *alice, start, 3600'000, "on postgres");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 201) << r->body;
    // The same slot again: the overlap check runs in PostgreSQL's transaction.
    auto again = Reserve(*server, *alice, start + 600'000, 600'000, "overlapping");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->status, 409) << again->body;

    Json spec{{"name", "pg"},
              {"command", {"/bin/sh", "-c", "echo on-postgres"}},
              {"workdir", "/tmp"},
              {"groups", {{{"role", "worker"}}}}};
    auto job = server->CallAs(*alice, "POST", "/api/v1/jobs", spec.dump());
    ASSERT_TRUE(job.ok());
    ASSERT_EQ(job->status, 201) << job->body;
    const int64_t id = Json::parse(job->body)["id"];
    Json end = WaitJobEnd(*server, id, seconds(60));
    ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2);

    // Samples went to PostgreSQL and come back as history.
    ASSERT_TRUE(WaitFor([&] { return Count("node_gpu_samples") >= 4; }, seconds(20)));
    auto h = server->GetJson("/api/v1/nodes/" + node_ + "/gpus/0/metrics?step=1s");
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_FALSE((*h)["points"].empty()) << h->dump();
    agent.child().Stop();
  }
  EXPECT_EQ(Count("jobs"), 1);
  EXPECT_EQ(Count("reservations"), 1);
  EXPECT_EQ(Count("users WHERE username = 'alice'"), 1);
  EXPECT_EQ(Count("node_credentials"), 1);  // the agent enrolled
  ASSERT_EQ(server->child().Stop(), 0) << server->child().Log();
  server.reset();

  server = StartServer();  // the same data dir and database
  ASSERT_NE(server, nullptr);
  auto jobs = server->GetJson("/api/v1/jobs");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ((*jobs)["jobs"].size(), 1u) << jobs->dump();
  EXPECT_EQ((*jobs)["jobs"][0].value("state", ""), "succeeded");
  auto res = server->GetJson("/api/v1/reservations?limit=10");
  ASSERT_TRUE(res.ok());
  ASSERT_EQ((*res)["reservations"].size(), 1u) << res->dump();
  EXPECT_EQ((*res)["reservations"][0].value("title", ""), "on postgres");
  auto nodes = server->GetJson("/api/v1/nodes");
  ASSERT_TRUE(nodes.ok());
  EXPECT_NE(nodes->dump().find(node_), std::string::npos) << nodes->dump();
}

// rota store migrate end to end: a real server on SQLite is told things (users, a
// reservation, a job that ran, an agent's samples), stopped, its store migrated
// (refused while it runs), and a server on the PostgreSQL target, with the same data
// dir for its keys, serves the same data.
TEST_F(StorePgE2E, MigrateMovesAStoppedSqliteServerToPostgresWithEveryRow) {
  auto server = std::make_unique<ServerProcess>(dir_.path() + "/server");
  server->SetEnv("ROTA_JOB_PORTS", "31600-31699");
  ASSERT_TRUE(server->Start().ok()) << server->child().Log();
  const std::string from = "sqlite:" + dir_.path() + "/server/rota.db";
  int64_t job_id = 0;
  {
    AgentProcess agent(dir_.path(), SimGpuNode{.name = node_, .gpus = 2}, *server);
    ASSERT_TRUE(agent.Start().ok());
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server, node_); }, seconds(20)))
        << agent.child().Log();
    auto alice = CreateAlice(*server);
    ASSERT_TRUE(alice.ok()) << alice.status().ToString();
    const int64_t start = RealClock::Get().NowMs() + 2 * 3600'000;
    auto r = Reserve(*server, *alice, start, 3600'000, "moved");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 201) << r->body;
    Json spec{{"name", "before-move"},
              {"command", {"/bin/sh", "-c", "echo moved"}},
              {"workdir", "/tmp"},
              {"groups", {{{"role", "worker"}}}}};
    auto job = server->CallAs(*alice, "POST", "/api/v1/jobs", spec.dump());
    ASSERT_TRUE(job.ok());
    ASSERT_EQ(job->status, 201) << job->body;
    job_id = Json::parse(job->body)["id"];
    Json end = WaitJobEnd(*server, job_id, seconds(60));
    ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2);
    auto h = server->GetJson("/api/v1/nodes/" + node_ + "/gpus/0/metrics?step=1s");
    ASSERT_TRUE(WaitFor(
        [&] {
          h = server->GetJson("/api/v1/nodes/" + node_ + "/gpus/0/metrics?step=1s");
          return h.ok() && (*h)["points"].size() >= 3;
        },
        seconds(20)));
    // While the server runs, its store is not moved.
    auto busy = RunCli({"store", "migrate", "--from", from, "--to", pg_.url()});
    EXPECT_EQ(busy.exit_code, 1) << busy.err;
    EXPECT_NE(busy.err.find("a rota server is running on"), std::string::npos) << busy.err;
    agent.child().Stop();
  }
  EXPECT_EQ(Count("information_schema.tables WHERE table_schema = current_schema()"), 0);
  const std::string jobs_before = server->GetJson("/api/v1/jobs")->dump();
  const std::string reservations_before = server->GetJson("/api/v1/reservations?limit=10")->dump();
  auto usernames = [](const Json& users) {
    std::vector<std::string> names;
    for (const Json& u : users["users"]) names.push_back(u.value("username", ""));
    return names;
  };
  const std::vector<std::string> users_before = usernames(*server->GetJson("/api/v1/users"));
  ASSERT_EQ(users_before.size(), 2u);  // the admin and alice
  auto history_before = server->GetJson("/api/v1/nodes/" + node_ + "/gpus/0/metrics?step=1s");
  ASSERT_TRUE(history_before.ok());
  ASSERT_EQ(server->child().Stop(), 0) << server->child().Log();
  server.reset();

  auto moved = RunCli({"store", "migrate", "--from", from, "--to", pg_.url()});
  ASSERT_EQ(moved.exit_code, 0) << moved.err << moved.out;
  EXPECT_NE(moved.out.find("(all tables)"), std::string::npos) << moved.out;
  EXPECT_NE(moved.err.find("the counts match on both sides"), std::string::npos) << moved.err;
  for (const char* table : {"users", "jobs", "job_events", "reservations", "nodes",
                            "node_gpu_samples", "tokens", "node_credentials"}) {
    EXPECT_NE(moved.out.find(table), std::string::npos) << table << "\n" << moved.out;
  }
  EXPECT_EQ(Count("jobs"), 1);
  EXPECT_EQ(Count("reservations"), 1);
  // Again: the target holds a store now.
  auto twice = RunCli({"store", "migrate", "--from", from, "--to", pg_.url()});
  EXPECT_EQ(twice.exit_code, 1) << twice.err;
  EXPECT_NE(twice.err.find("--overwrite"), std::string::npos) << twice.err;

  server = std::make_unique<ServerProcess>(dir_.path() + "/server");
  server->SetEnv("ROTA_STORE", pg_.url());
  server->SetEnv("ROTA_JOB_PORTS", "31600-31699");
  ASSERT_TRUE(server->Start().ok()) << server->child().Log();
  EXPECT_EQ(server->GetJson("/api/v1/jobs")->dump(), jobs_before);
  EXPECT_EQ(server->GetJson("/api/v1/reservations?limit=10")->dump(), reservations_before);
  EXPECT_EQ(usernames(*server->GetJson("/api/v1/users")), users_before);
  auto history_after = server->GetJson("/api/v1/nodes/" + node_ + "/gpus/0/metrics?step=1s");
  ASSERT_TRUE(history_after.ok());
  EXPECT_EQ((*history_after)["points"], (*history_before)["points"]);
  // New rows get ids after the moved ones.
  Json spec{{"name", "after-move"},
            {"command", {"/bin/true"}},
            {"workdir", "/tmp"},
            {"groups", {{{"role", "worker"}}}}};
  auto job = server->Call("POST", "/api/v1/jobs", spec.dump());
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->status, 201) << job->body;
  EXPECT_GT(Json::parse(job->body)["id"].get<int64_t>(), job_id);
}

// Bad inputs: a server that does not answer, a scheme rota does not know; the
// printed configuration hides the password.
TEST_F(StorePgE2E, BadStoreUrlsStopTheStartSayingWhy) {
  const std::string data = dir_.path() + "/bad";
  auto unreachable = RunCli({"server", "--listen", "127.0.0.1:0", "--data-dir", data, "--store",
                             "postgresql://rota:s3cret@127.0.0.1:1/rota"});
  EXPECT_EQ(unreachable.exit_code, 1) << unreachable.err;
  EXPECT_NE(unreachable.err.find("cannot connect to the store postgresql://rota@127.0.0.1:1/rota"),
            std::string::npos)
      << unreachable.err;
  EXPECT_EQ(unreachable.err.find("s3cret"), std::string::npos) << unreachable.err;

  auto scheme = RunCli({"server", "--data-dir", data, "--store", "mysql://rota:s3cret@h/rota"});
  EXPECT_EQ(scheme.exit_code, 2) << scheme.err;
  EXPECT_NE(scheme.err.find("store (flag)"), std::string::npos) << scheme.err;
  EXPECT_EQ(scheme.err.find("s3cret"), std::string::npos) << scheme.err;

  auto printed = RunCli({"server", "--data-dir", data, "--store",
                         "postgresql://rota:s3cret@db1,db2/rota", "--print-config"});
  EXPECT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_NE(printed.out.find("store: postgresql://rota:***@db1,db2/rota"), std::string::npos)
      << printed.out;
  EXPECT_EQ(printed.out.find("s3cret"), std::string::npos) << printed.out;
}

}  // namespace
}  // namespace rota::testing
