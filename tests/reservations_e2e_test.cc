// Reservations, policies and the violation log through a real `rota server`
// with a real agent: the authorisation matrix of their routes (anonymous, the
// owner, another user, admin), bad input that must store nothing, and the CLI.

#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <tuple>

#include "common/clock.h"
#include "common/process.h"
#include "common/time_util.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::seconds;

class ReservationsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
    agent_ = std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = node_, .gpus = 4},
                                            *server_);
    ASSERT_TRUE(agent_->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, node_); }, seconds(20)))
        << agent_->child().Log();
    auto a = server_->CreateUser("alice");
    auto b = server_->CreateUser("bob");
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    alice_ = *a;
    bob_ = *b;
  }

  int Status(const std::string& token, const std::string& method, const std::string& path,
             const std::string& body = "") {
    auto r = server_->CallAs(token, method, path, body);
    return r.ok() ? r->status : -1;
  }

  // A reservation body on the node starting `start_h` hours from now for `len_h` hours.
  std::string Body(int gpu, double start_h, double len_h, const std::string& title = "run") {
    const int64_t now = RealClock::Get().NowMs();
    const int64_t start = now + static_cast<int64_t>(start_h * 3600'000);
    return api::Json{{"node", node_},
                     {"gpus", {gpu}},
                     {"start", FormatRfc3339(start)},
                     {"end", FormatRfc3339(start + static_cast<int64_t>(len_h * 3600'000))},
                     {"title", title}}
        .dump();
  }

  size_t Count(const std::string& query = "?state=upcoming&limit=1000") {
    auto j = server_->GetJson("/api/v1/reservations" + query);
    return j.ok() ? (*j)["reservations"].size() : 999;
  }

  TempDir dir_;
  // Simulated processes are found by node name: one of this test process's own
  // keeps a suite running beside it off its GPUs.
  const std::string node_ = "gpu-r" + std::to_string(::getpid());
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<AgentProcess> agent_;
  std::string alice_, bob_;
};

TEST_F(ReservationsE2E, AuthorisationMatrix) {
  // alice owns reservation 1; the admin owns policy 1.
  auto made = server_->CallAs(alice_, "POST", "/api/v1/reservations", Body(0, 2, 1));
  ASSERT_TRUE(made.ok());
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string rid = std::to_string(api::Json::parse(made->body)["id"].get<int64_t>());
  auto pol = server_->Call("POST", "/api/v1/policies", R"({"name":"p1","max_duration":"8h"})");
  ASSERT_TRUE(pol.ok());
  ASSERT_EQ(pol->status, 201) << pol->body;
  const std::string pid = std::to_string(api::Json::parse(pol->body)["id"].get<int64_t>());
  const std::string res = "/api/v1/reservations/" + rid;
  const std::string policy = "/api/v1/policies/" + pid;

  struct Row {
    std::string method, path, body;
    int anon, owner, other, admin;
  };
  const std::vector<Row> rows = {
      {"GET", "/api/v1/reservations", "", 401, 200, 200, 200},
      {"GET", res, "", 401, 200, 200, 200},
      {"GET", "/api/v1/reservations/held?node=" + node_, "", 401, 200, 200, 200},
      {"PATCH", res, R"({"title":"renamed"})", 401, 200, 403, 200},
      {"POST", "/api/v1/reservations", Body(1, 3, 1), 401, 201, 409, 409},
      {"GET", "/api/v1/policies", "", 401, 200, 200, 200},
      {"GET", policy, "", 401, 200, 200, 200},
      {"POST", "/api/v1/policies", R"({"name":"p2"})", 401, 403, 403, 201},
      {"PUT", policy, R"({"name":"p1","max_duration":"9h"})", 401, 403, 403, 200},
      {"GET", "/api/v1/violations", "", 401, 200, 200, 200},
      {"GET", "/api/v1/violations/999", "", 401, 404, 404, 404},
      {"DELETE", policy, "", 401, 403, 403, 204},
      {"DELETE", res, "", 401, 200, 403, -2},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.method + " " + r.path);
    EXPECT_EQ(Status("", r.method, r.path, r.body), r.anon) << "anonymous";
    EXPECT_EQ(Status(alice_, r.method, r.path, r.body), r.owner) << "alice";
    EXPECT_EQ(Status(bob_, r.method, r.path, r.body), r.other) << "bob";
    if (r.admin != -2) {
      EXPECT_EQ(Status(server_->admin_token(), r.method, r.path, r.body), r.admin) << "admin";
    }
  }
  // After alice cancelled it, nobody changes it again: the past does not change.
  EXPECT_EQ(Status(server_->admin_token(), "DELETE", res), 409);
}

// Each bad request is refused with a status that fits and stores nothing.
TEST_F(ReservationsE2E, BadInputIsRefusedAndStoresNothing) {
  ASSERT_EQ(Status(alice_, "POST", "/api/v1/reservations", Body(0, 1, 1)), 201);
  const size_t before = Count();
  const int64_t now = RealClock::Get().NowMs();
  auto body = [&](const api::Json& patch) {
    api::Json j = api::Json::parse(Body(2, 1, 1));
    for (auto it = patch.begin(); it != patch.end(); ++it) {
      if (it.value().is_null()) j.erase(it.key());
      else j[it.key()] = it.value();
    }
    return j.dump();
  };
  struct Bad {
    std::string what, body;
    int status;
  };
  const std::vector<Bad> bad = {
      {"end before start", body({{"end", FormatRfc3339(now + 1800'000)}}), 400},
      {"zero length", body({{"end", FormatRfc3339(now + 3600'000)},
                            {"start", FormatRfc3339(now + 3600'000)}}), 400},
      {"unknown node", body({{"node", "nowhere"}}), 404},
      {"unknown gpu", body({{"gpus", {17}}}), 404},
      {"more gpus than exist", body({{"gpus", nullptr}, {"count", 5}}), 400},
      {"start in the past", body({{"start", FormatRfc3339(now - 3 * 3600'000)}}), 400},
      {"year 9999", body({{"start", "9999-01-01T00:00:00Z"}, {"end", "9999-01-02T00:00:00Z"}}), 400},
      {"absurd length", body({{"end", "2999-01-01T00:00:00Z"}}), 400},
      {"malformed time", body({{"start", "tomorrow-ish"}}), 400},
      {"time without zone", body({{"start", "2026-11-30T10:00:00"}}), 400},
      {"title too long", body({{"title", std::string(5000, 'x')}}), 400},
      {"empty title", body({{"title", ""}}), 400},
      {"control characters in title", body({{"title", "a\x07" "b"}}), 400},
      {"no gpu choice", body({{"gpus", nullptr}}), 400},
      {"two gpu choices", body({{"whole_node", true}}), 400},
      {"unknown field", body({{"colour", "red"}}), 400},
      {"not an object", "[1,2]", 400},
      {"truncated", "{\"node\":\"gpu-r\",", 400},
      {"overlap", Body(0, 1.5, 1), 409},
  };
  for (const auto& b : bad) {
    auto r = server_->CallAs(alice_, "POST", "/api/v1/reservations", b.body);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, b.status) << b.what << ": " << r->body;
    auto j = api::Json::parse(r->body, nullptr, false);
    EXPECT_TRUE(j.is_object() && j.contains("error")) << b.what << ": " << r->body;
  }
  EXPECT_EQ(Count(), before);
  // Quotes and unicode are fine.
  auto ok = server_->CallAs(alice_, "POST", "/api/v1/reservations",
                            Body(3, 1, 1, "\"quoted\" — ünïcødé 🚀 'single'"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 201) << ok->body;
  EXPECT_EQ(api::Json::parse(ok->body)["title"], "\"quoted\" — ünïcødé 🚀 'single'");
  // Bad tokens are 401, whatever the route.
  EXPECT_EQ(Status("rota_0123456789abcdef_" + std::string(48, '0'), "POST", "/api/v1/reservations",
                   Body(2, 1, 1)), 401);
  EXPECT_EQ(Count(), before + 1);
}

TEST_F(ReservationsE2E, CliReservesWithRelativeTimesAndListsMine) {
  auto env = server_->CliEnv();
  env["ROTA_TOKEN"] = alice_;
  CliResult made = RunCli({"reserve", "--node", node_, "--count", "2", "--start", "+1h",
                           "--duration", "2h", "--title", "cli run", "-o", "json"},
                          env);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto j = api::Json::parse(made.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << made.out;
  EXPECT_EQ(j["gpus"], api::Json({0, 1}));
  EXPECT_EQ(j["owner"], "alice");
  CliResult mine = RunCli({"reservations", "--mine"}, env);
  EXPECT_EQ(mine.exit_code, 0) << mine.err;
  EXPECT_NE(mine.out.find("cli run"), std::string::npos) << mine.out;
  // bob sees it in the calendar but cannot cancel it.
  env["ROTA_TOKEN"] = bob_;
  const std::string id = std::to_string(j["id"].get<int64_t>());
  CliResult cancel = RunCli({"reservation", "cancel", id}, env);
  EXPECT_EQ(cancel.exit_code, 1);
  EXPECT_NE(cancel.err.find("alice"), std::string::npos) << cancel.err;
  CliResult bad = RunCli({"reserve", "--node", node_, "--gpus", "0", "--start", "yesterday-ish",
                          "--duration", "1h", "--title", "x"},
                         env);
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  // No GPUs held now: rota exec says so.
  CliResult exec = RunCli({"exec", "--node", node_, "--", "/bin/true"}, env);
  EXPECT_EQ(exec.exit_code, 1);
  EXPECT_NE(exec.err.find(node_), std::string::npos) << exec.err;
}

// Titles of a reservation list (GET answer or `rota reservations -o json`).
std::set<std::string> Titles(const api::Json& list) {
  std::set<std::string> out;
  for (const auto& r : list) out.insert(r["title"].get<std::string>());
  return out;
}

// Refused edits leave the stored rows as they were: a reservation after a 403
// (another user) and a 409 (overlap), the policy list after refused creates
// and updates.
TEST_F(ReservationsE2E, RefusedEditsChangeNothing) {
  auto first = server_->CallAs(alice_, "POST", "/api/v1/reservations", Body(0, 1, 1, "first"));
  auto second = server_->CallAs(alice_, "POST", "/api/v1/reservations", Body(0, 3, 1, "second"));
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(first->status, 201) << first->body;
  ASSERT_EQ(second->status, 201) << second->body;
  const api::Json a = api::Json::parse(first->body);
  const std::string path =
      "/api/v1/reservations/" + std::to_string(api::Json::parse(second->body)["id"].get<int64_t>());
  auto before = server_->GetJson(path);
  ASSERT_TRUE(before.ok());

  const std::vector<std::pair<std::string, std::string>> refused = {
      {bob_, R"({"title":"mine now"})"},                                   // not his: 403
      {bob_, api::Json{{"start", a["start"]}, {"end", a["end"]}}.dump()},  // not his
      {alice_,
       api::Json{{"start", a["start"]}, {"end", a["end"]}, {"title", "moved"}}.dump()},  // 409
      {alice_, api::Json{{"end", a["start"]}, {"title", "moved"}}.dump()},  // end before start: 400
  };
  const std::vector<int> want = {403, 403, 409, 400};
  for (size_t i = 0; i < refused.size(); ++i) {
    SCOPED_TRACE(refused[i].second);
    EXPECT_EQ(Status(refused[i].first, "PATCH", path, refused[i].second), want[i]);
    auto after = server_->GetJson(path);
    ASSERT_TRUE(after.ok());
    EXPECT_EQ(*after, *before);
  }
  EXPECT_EQ(Status(bob_, "DELETE", path), 403);
  EXPECT_EQ(*server_->GetJson(path), *before);

  // Policies: refused creates and updates leave the list as it was.
  auto made = server_->Call("POST", "/api/v1/policies", R"({"name":"p1","max_duration":"8h"})");
  ASSERT_TRUE(made.ok());
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string policy =
      "/api/v1/policies/" + std::to_string(api::Json::parse(made->body)["id"].get<int64_t>());
  auto policies = server_->GetJson("/api/v1/policies");
  ASSERT_TRUE(policies.ok());
  const std::string admin = server_->admin_token();
  const std::vector<std::tuple<std::string, std::string, std::string, std::string, int>> writes = {
      {alice_, "POST", "/api/v1/policies", R"({"name":"p2"})", 403},
      {admin, "POST", "/api/v1/policies", R"({"name":"p1"})", 409},
      {admin, "POST", "/api/v1/policies", R"({"name":"p3","max_duration":"soon"})", 400},
      {admin, "POST", "/api/v1/policies", R"({"name":"p4","colour":"red"})", 400},
      {alice_, "PUT", policy, R"({"name":"p1","max_duration":"1h"})", 403},
      {admin, "PUT", policy, R"({"name":"p1","max_duration":"-1h"})", 400},
      {admin, "PUT", policy, R"({"name":"p1","idle":{"threshold_pct":500}})", 400},
      {alice_, "DELETE", policy, "", 403},
  };
  for (const auto& [token, method, where, body, status] : writes) {
    SCOPED_TRACE(method + " " + where + " " + body);
    EXPECT_EQ(Status(token, method, where, body), status);
    auto after = server_->GetJson("/api/v1/policies");
    ASSERT_TRUE(after.ok());
    EXPECT_EQ(*after, *policies);
  }
}

// While a reservation runs its live averages show in the API, from the samples
// of a process on its GPU; once it ends, the stored averages do.
TEST_F(ReservationsE2E, LiveUtilisationThenStoredAveragesAfterItEnds) {
  // carol's Unix user runs the GPU process (ours): no violation to enforce.
  const std::string me = ::getpwuid(::geteuid())->pw_name;
  auto carol = server_->CreateUser("carol", "user", {{"unix_user", me}});
  ASSERT_TRUE(carol.ok()) << carol.status().ToString();
  const int64_t now = RealClock::Get().NowMs();
  const api::Json body{{"node", node_},
                       {"gpus", {2}},
                       {"start", FormatRfc3339(now - now % 1000 + 1000)},
                       {"end", FormatRfc3339(now + 3600'000)},
                       {"title", "busy"}};
  auto made = server_->CallAs(*carol, "POST", "/api/v1/reservations", body.dump());
  ASSERT_TRUE(made.ok());
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string path =
      "/api/v1/reservations/" + std::to_string(api::Json::parse(made->body)["id"].get<int64_t>());
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = server_->GetJson(path);
        return r.ok() && (*r)["state"] == "running";
      },
      seconds(10)));

  // The simulated GPU runs at 40 % (memory 24 %) while the process lives.
  SpawnOptions opts;
  opts.env = {
      {"CUDA_VISIBLE_DEVICES", "2"}, {"ROTA_SIM_NODE", node_}, {"ROTA_SIM_GPU_UTIL", "40"}};
  opts.output_path = "/dev/null";
  auto pid = SpawnProcess({"sleep", "300"}, opts);
  ASSERT_TRUE(pid.ok());
  api::Json live;
  const bool busy = WaitFor(
      [&] {
        auto r = server_->GetJson(path);
        if (!r.ok() || !(*r).contains("live")) return false;
        live = (*r)["live"];
        return live["avg_util_gpu"].get<double>() >= 20;  // most samples have the process
      },
      seconds(30));
  EXPECT_TRUE(busy) << live.dump();
  EXPECT_LE(live["avg_util_gpu"].get<double>(), 40) << live.dump();
  EXPECT_GT(live["avg_util_mem"].get<double>(), 0) << live.dump();
  EXPECT_LE(live["avg_util_mem"].get<double>(), 24) << live.dump();
  EXPECT_GE(live["samples"].get<int64_t>(), 1) << live.dump();
  EXPECT_FALSE(live.contains("idle_since")) << live.dump();

  // Ending it now stores the averages with it.
  ASSERT_EQ(Status(*carol, "DELETE", path), 200);
  api::Json ended;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = server_->GetJson(path);
        if (!r.ok()) return false;
        ended = *r;
        return ended.contains("avg_util_gpu");
      },
      seconds(20)))
      << ended.dump();
  (void)StopProcess(*pid, 1000);
  EXPECT_EQ(ended["state"], "ended") << ended.dump();
  EXPECT_FALSE(ended.contains("live")) << ended.dump();
  EXPECT_GE(ended["avg_util_gpu"].get<double>(), live["avg_util_gpu"].get<double>() - 1e-9)
      << ended.dump();
  EXPECT_LE(ended["avg_util_gpu"].get<double>(), 40) << ended.dump();
  EXPECT_GT(ended["avg_util_mem"].get<double>(), 0) << ended.dump();
  EXPECT_LE(ended["avg_util_mem"].get<double>(), 24) << ended.dump();
}

// `rota reservations --node` and `--from/--to` send the filters and show only
// what matches.
TEST_F(ReservationsE2E, CliListFiltersByNodeAndTime) {
  AgentProcess other(dir_.path(), SimGpuNode{.name = "gpu-s", .gpus = 2}, *server_);
  ASSERT_TRUE(other.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, "gpu-s"); }, seconds(20)))
      << other.child().Log();
  ASSERT_EQ(Status(alice_, "POST", "/api/v1/reservations", Body(0, 1, 1, "r-early")), 201);
  ASSERT_EQ(Status(alice_, "POST", "/api/v1/reservations", Body(1, 5, 1, "r-late")), 201);
  api::Json on_s = api::Json::parse(Body(0, 1, 1, "s-early"));
  on_s["node"] = "gpu-s";
  ASSERT_EQ(Status(bob_, "POST", "/api/v1/reservations", on_s.dump()), 201);

  auto env = server_->CliEnv();
  env["ROTA_TOKEN"] = alice_;
  auto list = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "reservations");
    args.insert(args.end(), {"-o", "json"});
    CliResult r = RunCli(args, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    api::Json j = api::Json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_array()) << r.out;
    return j.is_array() ? Titles(j) : std::set<std::string>{};
  };
  using Set = std::set<std::string>;
  EXPECT_EQ(list({}), (Set{"r-early", "r-late", "s-early"}));
  EXPECT_EQ(list({"--node", "gpu-s"}), (Set{"s-early"}));
  EXPECT_EQ(list({"--node", node_}), (Set{"r-early", "r-late"}));
  EXPECT_EQ(list({"--from", "+4h", "--to", "+7h"}), (Set{"r-late"}));
  EXPECT_EQ(list({"--from", "+30m", "--to", "+3h"}), (Set{"r-early", "s-early"}));
  EXPECT_EQ(list({"--node", node_, "--from", "+4h"}), (Set{"r-late"}));
  EXPECT_EQ(list({"--from", "+8h"}), Set{});
  // The table shows the same selection.
  CliResult table = RunCli({"reservations", "--node", "gpu-s"}, env);
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("s-early"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("r-early"), std::string::npos) << table.out;
  // A bad time is a usage error.
  CliResult bad = RunCli({"reservations", "--from", "someday"}, env);
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
}

}  // namespace
}  // namespace rota::testing
