// rota admin backup / restore end to end, and the usage and energy figures of a
// short window: a real server on SQLite with a real agent is told things (users, an
// API token, a reservation, a job that ran on a GPU and its usage), backed up while
// it runs, told more, stopped and restored (refused while it runs, and over the
// store unless --overwrite); the restarted server serves what the backup held and
// nothing after it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "common/clock.h"
#include "common/time_util.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;

class BackupE2E : public ::testing::Test {
 protected:
  void SetUp() override { ROTA_SKIP_UNLESS_ROOT("jobs run as nobody, in cgroups"); }

  std::unique_ptr<ServerProcess> StartServer() {
    auto s = std::make_unique<ServerProcess>(dir_.path() + "/server");
    s->SetEnv("ROTA_JOB_PORTS", "31700-31799");  // apart from other tests running at once
    s->SetEnv("ROTA_ACCOUNTING_FLUSH", "1s");
    Status st = s->Start();
    EXPECT_TRUE(st.ok()) << st.ToString() << "\n" << s->child().Log();
    return st.ok() ? std::move(s) : nullptr;
  }
  static Json Row(const Json& report, const std::string& key) {
    if (!report.is_object()) return Json::object();
    for (const auto& row : report.value("rows", Json::array())) {
      if (row.value("key", "") == key) return row;
    }
    return Json::object();
  }
  // What must come back the same: each item's id and these fields.
  static Json Project(const Json& items, std::initializer_list<const char*> fields) {
    Json out = Json::array();
    for (const auto& item : items) {
      Json p{{"id", item.value("id", 0)}};
      for (const char* f : fields) p[f] = item.contains(f) ? item[f] : Json();
      out.push_back(std::move(p));
    }
    return out;
  }
  static Result<Json> Get(ServerProcess& s, const std::string& token, const std::string& path) {
    auto r = s.CallAs(token, "GET", path);
    if (!r.ok()) return r.status();
    if (r->status != 200)
      return Status::Internal(path + ": " + std::to_string(r->status) + " " + r->body);
    return Json::parse(r->body);
  }

  TempDir dir_;
  const std::string node_ = "gpu-bk" + std::to_string(::getpid());
};

TEST_F(BackupE2E, ABackupTakenWhileTheServerRunsRestoresJobsReservationsUsageAndTokens) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::string data = dir_.path() + "/server";
  std::string alice, api_token;
  int64_t job_id = 0;
  Json usage_before, jobs_before, reservations_before;
  const std::string file = dir_.path() + "/backup.db";
  {
    AgentProcess agent(dir_.path(), SimGpuNode{.name = node_, .gpus = 2}, *server);
    ASSERT_TRUE(agent.Start().ok());
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server, node_); }, seconds(20)))
        << agent.child().Log();
    auto a = server->CreateUser("alice", "user", Json{{"unix_user", "nobody"}});
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    alice = *a;
    auto t = server->CallAs(alice, "POST", "/api/v1/tokens", R"({"name":"ci"})");
    ASSERT_TRUE(t.ok());
    ASSERT_EQ(t->status, 201) << t->body;
    api_token = Json::parse(t->body)["token"];
    const int64_t start = RealClock::Get().NowMs() + 2 * 3600'000;
    auto r = server->CallAs(alice, "POST", "/api/v1/reservations",
                            Json{{"node", node_},
                                 {"gpus", {1}},
                                 {"start", FormatRfc3339(start)},
                                 {"end", FormatRfc3339(start + 3600'000)},
                                 {"title", "kept"}}
                                .dump());
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 201) << r->body;
    Json spec{{"name", "backed-up"},
              {"command", {"/bin/sh", "-c", "sleep 4"}},
              {"workdir", "/tmp"},
              {"groups", {{{"role", "worker"}, {"gpus_per_task", 1}}}}};
    auto job = server->CallAs(api_token, "POST", "/api/v1/jobs", spec.dump());
    ASSERT_TRUE(job.ok());
    ASSERT_EQ(job->status, 201) << job->body;
    job_id = Json::parse(job->body)["id"];
    Json end = WaitJobEnd(*server, job_id, seconds(60));
    ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2);

    // The last two minutes lie inside one hour of usage: they count their share of it.
    const std::string recent = "from=" + FormatRfc3339(RealClock::Get().NowMs() - 120'000);
    ASSERT_TRUE(WaitFor(
        [&] {
          auto u = Get(*server, server->admin_token(), "/api/v1/usage?by=user&" + recent);
          return u.ok() && Row(*u, "alice").value("gpu_hours", 0.0) > 0;
        },
        seconds(20)))
        << Get(*server, server->admin_token(), "/api/v1/usage?by=user&" + recent)->dump();
    CliResult cli = RunCli({"usage", "--from", "2m", "--by", "user"}, server->CliEnv());
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    EXPECT_NE(cli.out.find("alice"), std::string::npos) << cli.out;
    // A node's average power is over the time it was measured, not the 30 days asked for.
    auto energy = Get(*server, server->admin_token(), "/api/v1/usage?by=node");
    ASSERT_TRUE(energy.ok()) << energy.status().ToString();
    const Json node = Row(*energy, node_);
    ASSERT_TRUE(node.contains("avg_power_w")) << energy->dump(2);
    EXPECT_GT(node["avg_power_w"].get<double>(), 1.0) << node.dump();
    EXPECT_LT(node["measured_hours"].get<double>(), 1.0) << node.dump();
    CliResult by_node = RunCli({"energy", "--by", "node"}, server->CliEnv());
    ASSERT_EQ(by_node.exit_code, 0) << by_node.err;
    EXPECT_EQ(by_node.out.find(" 0.0 "), std::string::npos) << by_node.out;

    // The job's usage is final once it has ended and been flushed.
    ASSERT_TRUE(WaitFor(
        [&] {
          auto u = Get(*server, server->admin_token(), "/api/v1/usage?by=job");
          if (!u.ok()) return false;
          const double h = Row(*u, std::to_string(job_id)).value("gpu_hours", 0.0);
          const bool same =
              h > 0 && h == Row(usage_before, std::to_string(job_id)).value("gpu_hours", -1.0);
          usage_before = *u;
          return same;
        },
        seconds(20)));
    jobs_before = Project((*Get(*server, server->admin_token(), "/api/v1/jobs"))["jobs"],
                          {"name", "owner", "state", "submitted"});
    reservations_before = Project(
        (*Get(*server, server->admin_token(), "/api/v1/reservations?limit=10"))["reservations"],
        {"title", "owner", "start", "end", "node", "gpus"});
    ASSERT_EQ(jobs_before.size(), 1u);
    ASSERT_EQ(reservations_before.size(), 1u);

    // Online: the server and its agent keep running and writing samples meanwhile.
    CliResult backup = RunCli({"admin", "backup", file, "--data-dir", data});
    ASSERT_EQ(backup.exit_code, 0) << backup.err << backup.out;
    EXPECT_NE(backup.out.find("schema version"), std::string::npos) << backup.out;
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_TRUE(server->CreateUser("bob").ok());  // after the backup

    CliResult busy = RunCli({"admin", "restore", file, "--data-dir", data, "--overwrite"});
    EXPECT_EQ(busy.exit_code, 1) << busy.err;
    EXPECT_NE(busy.err.find("a rota server is running on"), std::string::npos) << busy.err;
    agent.child().Stop();
  }
  ASSERT_EQ(server->child().Stop(), 0) << server->child().Log();
  server.reset();

  CliResult unasked = RunCli({"admin", "restore", file, "--data-dir", data});
  EXPECT_EQ(unasked.exit_code, 1) << unasked.err;
  EXPECT_NE(unasked.err.find("--overwrite"), std::string::npos) << unasked.err;
  CliResult restored = RunCli({"admin", "restore", file, "--data-dir", data, "--overwrite"});
  ASSERT_EQ(restored.exit_code, 0) << restored.err << restored.out;
  EXPECT_NE(restored.out.find("restored"), std::string::npos) << restored.out;

  server = StartServer();
  ASSERT_NE(server, nullptr);
  auto jobs = Get(*server, server->admin_token(), "/api/v1/jobs");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_EQ(Project((*jobs)["jobs"], {"name", "owner", "state", "submitted"}), jobs_before);
  auto res = Get(*server, server->admin_token(), "/api/v1/reservations?limit=10");
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(Project((*res)["reservations"], {"title", "owner", "start", "end", "node", "gpus"}),
            reservations_before);
  auto users = Get(*server, server->admin_token(), "/api/v1/users");
  ASSERT_TRUE(users.ok());
  EXPECT_NE(users->dump().find("\"alice\""), std::string::npos);
  EXPECT_EQ(users->dump().find("\"bob\""), std::string::npos) << "bob came after the backup";
  // alice's API token and session still sign her in.
  auto who = Get(*server, api_token, "/api/v1/auth/whoami");
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(who->value("username", ""), "alice");
  EXPECT_TRUE(Get(*server, alice, "/api/v1/auth/whoami").ok());
  auto usage = Get(*server, server->admin_token(), "/api/v1/usage?by=job");
  ASSERT_TRUE(usage.ok());
  EXPECT_DOUBLE_EQ(Row(*usage, std::to_string(job_id)).value("gpu_hours", -1.0),
                   Row(usage_before, std::to_string(job_id)).value("gpu_hours", -2.0))
      << usage->dump(2);
}

}  // namespace
}  // namespace rota::testing
