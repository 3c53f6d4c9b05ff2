// Accounts end to end: the first admin, login, tokens, the CLI, and the
// authorisation matrix (every endpoint as anonymous, user, another user, admin).

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/file_util.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::seconds;

class AccountsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    ASSERT_TRUE(server_->Start().ok());
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

  // The status GET /api/v1/stream answers with (it streams: the first event
  // ends the read); -1 when it fails otherwise.
  int StreamStatus(const std::string& token) {
    std::vector<std::string> headers;
    if (!token.empty()) headers.push_back("Authorization: Bearer " + token);
    ::rota::Status st = net::ReadEventStream(
        server_->url() + "/api/v1/stream", headers,
        [](const std::string&, const std::string&) { return false; }, 5000, 10000);
    if (st.ok()) return 200;
    if (st.code() == StatusCode::kUnauthenticated) return 401;
    if (st.code() == StatusCode::kPermissionDenied) return 403;
    return -1;
  }

  // Submits a job of `token`'s user that runs until cancelled and waits until
  // it runs; its path ("/api/v1/jobs/ID"), or "" on failure.
  std::string RunningJob(const std::string& token) {
    const api::Json spec{{"name", "matrix"},
                         {"command", {"sleep", "600"}},
                         {"workdir", "/tmp"},
                         {"groups", {{{"role", "worker"}}}}};
    auto r = server_->CallAs(token, "POST", "/api/v1/jobs", spec.dump());
    if (!r.ok() || r->status != 201) {
      ADD_FAILURE() << (r.ok() ? r->body : r.status().ToString());
      return "";
    }
    const std::string path =
        "/api/v1/jobs/" + std::to_string(api::Json::parse(r->body)["id"].get<int64_t>());
    const bool running = WaitFor(
        [&] {
          auto j = server_->GetJson(path);
          return j.ok() && (*j).value("state", "") == "running";
        },
        seconds(30));
    if (!running) ADD_FAILURE() << path << " never ran: " << server_->GetJson(path)->dump();
    return path;
  }

  // An API token of `token`'s user; its id.
  std::string NewTokenId(const std::string& token) {
    auto r = server_->CallAs(token, "POST", "/api/v1/tokens", R"({"name":"m"})");
    if (!r.ok() || r->status != 201) return "none";
    return api::Json::parse(r->body)["id"];
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::string alice_, bob_;
};

// Every route as anonymous, alice (the subject where one applies), bob (another
// user) and the admin. Bodies are valid so that the status says who may do it.
TEST_F(AccountsE2E, AuthorisationMatrix) {
  // A real node, and alice's job running on it (as a Unix user that exists).
  AgentProcess agent(dir_.path(), SimGpuNode{.name = "node-m", .gpus = 2}, *server_);
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, "node-m"); }, seconds(20)))
      << agent.child().Log();
  const std::string runner = ::geteuid() == 0 ? "nobody" : ::getpwuid(::geteuid())->pw_name;
  ASSERT_EQ(Status(server_->admin_token(), "PATCH", "/api/v1/users/alice",
                   api::Json{{"unix_user", runner}}.dump()),
            200);
  const std::string job = RunningJob(alice_);
  const std::string admin_job = RunningJob(alice_);
  ASSERT_FALSE(job.empty());
  ASSERT_FALSE(admin_job.empty());
  const std::string job_body =
      R"({"name":"j","command":["true"],"workdir":"/tmp","groups":[{"role":"worker"}]})";

  struct Row {
    std::string method, path, body;
    int anon, owner, other, admin;
  };
  const std::string tok_body = R"({"name":"t"})";
  const std::vector<Row> rows = {
      {"GET", "/healthz", "", 200, 200, 200, 200},
      {"GET", "/readyz", "", 200, 200, 200, 200},
      {"GET", "/api/v1/openapi.json", "", 200, 200, 200, 200},
      {"GET", "/api/v1/docs", "", 200, 200, 200, 200},
      // The UI's files hold no data: anyone may load them; what they show comes from the API.
      {"GET", "/", "", 200, 200, 200, 200},
      {"GET", "/index.html", "", 200, 200, 200, 200},
      {"GET", "/api/v1/servers", "", 401, 200, 200, 200},
      {"GET", "/api/v1/nodes/node-m", "", 401, 200, 200, 200},
      {"GET", "/api/v1/nodes/node-m/metrics", "", 401, 200, 200, 200},
      {"GET", "/api/v1/nodes/node-m/gpus/1/metrics", "", 401, 200, 200, 200},
      {"GET", "/api/v1/nodes/node-m/gpus/x/metrics", "", 401, 400, 400, 400},
      {"GET", "/api/v1/jobs", "", 401, 200, 200, 200},
      {"GET", "/api/v1/jobs?mine=true", "", 401, 200, 200, 200},
      // Secrets: any user lists its own (metadata only); nobody deletes what it cannot see.
      {"GET", "/api/v1/secrets", "", 401, 200, 200, 200},
      {"DELETE", "/api/v1/secrets/none", "", 401, 404, 404, 404},
      {"POST", "/api/v1/secrets", R"({"name":"x y","value":"v"})", 401, 400, 400, 400},
      {"POST", "/api/v1/jobs", job_body, 401, 201, 201, 201},
      {"POST", "/api/v1/jobs/preview", job_body, 401, 200, 200, 200},
      {"GET", job, "", 401, 200, 200, 200},
      {"GET", job + "/logs", "", 401, 200, 403, 200},
      {"GET", "/api/v1/queues", "", 401, 200, 200, 200},
      {"GET", "/api/v1/queues/default", "", 401, 200, 200, 200},
      {"GET", "/api/v1/queue", "", 401, 200, 200, 200},
      {"POST", "/api/v1/queues", R"({"name":"qm"})", 401, 403, 403, 201},
      {"PUT", "/api/v1/queues/qm", R"({"priority":2})", 401, 403, 403, 200},
      {"DELETE", "/api/v1/queues/qm", "", 401, 403, 403, 204},
      {"GET", "/api/v1/quotas", "", 401, 200, 200, 200},
      {"GET", "/api/v1/usage?by=job", "", 401, 200, 200, 200},
      {"GET", "/api/v1/usage?user=alice", "", 401, 200, 403, 200},
      {"GET", "/api/v1/power", "", 401, 200, 200, 200},
      {"GET", "/api/v1/power/policies", "", 401, 200, 200, 200},
      {"GET", "/api/v1/power/events", "", 401, 200, 200, 200},
      {"POST", "/api/v1/power/policies", R"({"name":"pm","limit":300})", 401, 403, 403, 201},
      {"GET", "/api/v1/power/policies/1", "", 401, 200, 200, 200},
      {"PUT", "/api/v1/power/policies/1", R"({"name":"pm","limit":350})", 401, 403, 403, 200},
      {"DELETE", "/api/v1/power/policies/1", "", 401, 403, 403, 204},
      {"PUT", "/api/v1/quotas/user/alice", R"({"max_gpus":4})", 401, 403, 403, 200},
      {"GET", "/api/v1/quotas/user/alice", "", 401, 200, 200, 200},
      {"DELETE", "/api/v1/quotas/user/alice", "", 401, 403, 403, 204},
      {"GET", "/api/v1/nodes", "", 401, 200, 200, 200},
      {"GET", "/api/v1/gpus", "", 401, 200, 200, 200},
      {"GET", "/api/v1/nodes/none", "", 401, 404, 404, 404},
      {"GET", "/api/v1/nodes/none/metrics", "", 401, 404, 404, 404},
      {"GET", "/metrics", "", 401, 200, 200, 200},
      {"GET", "/api/v1/auth/whoami", "", 401, 200, 200, 200},
      {"GET", "/api/v1/users", "", 401, 403, 403, 200},
      {"POST", "/api/v1/users", R"({"username":"u1","password":"long-enough-1"})", 401, 403, 403,
       201},
      {"GET", "/api/v1/users/alice", "", 401, 200, 403, 200},
      {"PATCH", "/api/v1/users/alice", R"({"display_name":"Alice A."})", 401, 200, 403, 200},
      {"PATCH", "/api/v1/users/alice", R"({"email":"alice@new.test"})", 401, 200, 403, 200},
      {"PATCH", "/api/v1/users/alice", R"({"unix_user":"alice2"})", 401, 403, 403, 200},
      {"DELETE", "/api/v1/users/alice", "", 401, 403, 403, -2},
      {"GET", "/api/v1/groups", "", 401, 200, 200, 200},
      {"POST", "/api/v1/groups", R"({"name":"g1"})", 401, 403, 403, 201},
      {"DELETE", "/api/v1/groups/g1", "", 401, 403, 403, 204},
      {"GET", "/api/v1/tokens", "", 401, 200, 200, 200},
      {"POST", "/api/v1/tokens", tok_body, 401, 201, 201, 201},
      {"DELETE", "/api/v1/users/u1", "", 401, 403, 403, 204},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.method + " " + r.path);
    EXPECT_EQ(Status("", r.method, r.path, r.body), r.anon) << "anonymous";
    // Where the owner is the path's subject, "owner" is alice and "other" bob.
    EXPECT_EQ(Status(alice_, r.method, r.path, r.body), r.owner) << "alice";
    EXPECT_EQ(Status(bob_, r.method, r.path, r.body), r.other) << "bob";
    if (r.admin != -2) {  // -2: not tried as admin (it would end the walk)
      EXPECT_EQ(Status(server_->admin_token(), r.method, r.path, r.body), r.admin) << "admin";
    }
  }

  // The live stream: its status line only.
  EXPECT_EQ(StreamStatus(""), 401);
  EXPECT_EQ(StreamStatus(alice_), 200);
  EXPECT_EQ(StreamStatus(bob_), 200);
  EXPECT_EQ(StreamStatus(server_->admin_token()), 200);

  // Routes that change what the next caller would see, in an order that keeps
  // each answer meaningful. Cancel: only the owner or an admin.
  EXPECT_EQ(Status("", "POST", job + "/cancel"), 401);
  EXPECT_EQ(Status(bob_, "POST", job + "/cancel"), 403);
  EXPECT_EQ(server_->GetJson(job)->value("state", ""), "running");
  EXPECT_EQ(Status(alice_, "POST", job + "/cancel"), 200);
  EXPECT_EQ(Status(server_->admin_token(), "POST", admin_job + "/cancel"), 200);

  // Revoking a token: one's own (or any, as admin); another's is not found.
  const std::string alice_token = NewTokenId(alice_);
  EXPECT_EQ(Status("", "DELETE", "/api/v1/tokens/" + alice_token), 401);
  EXPECT_EQ(Status(bob_, "DELETE", "/api/v1/tokens/" + alice_token), 404);
  EXPECT_EQ(Status(alice_, "DELETE", "/api/v1/tokens/" + alice_token), 204);
  const std::string bob_token = NewTokenId(bob_);
  EXPECT_EQ(Status(server_->admin_token(), "DELETE", "/api/v1/tokens/" + bob_token), 204);

  // Logout ends the caller's own session only.
  EXPECT_EQ(Status("", "POST", "/api/v1/auth/logout", "{}"), 401);
  for (const char* user : {"alice", "bob", "admin"}) {
    SCOPED_TRACE(user);
    auto fresh = server_->Login(user, std::string(user) == "admin" ? ServerProcess::kAdminPassword
                                                                   : ServerProcess::kUserPassword);
    ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
    EXPECT_EQ(Status(*fresh, "POST", "/api/v1/auth/logout", "{}"), 200);
    EXPECT_EQ(Status(*fresh, "GET", "/api/v1/auth/whoami"), 401);
  }
  EXPECT_EQ(Status(alice_, "GET", "/api/v1/auth/whoami"), 200);
  EXPECT_EQ(Status(bob_, "GET", "/api/v1/auth/whoami"), 200);
}

// Bad inputs: malformed/forged/revoked tokens, wrong scheme, bad login bodies.
TEST_F(AccountsE2E, BadCredentialsAre401AndBadBodies400) {
  EXPECT_EQ(Status("rota_0123456789abcdef_" + std::string(48, '0'), "GET", "/api/v1/nodes"), 401);
  EXPECT_EQ(Status("not-a-token", "GET", "/api/v1/nodes"), 401);
  std::string forged = alice_;
  forged.back() = forged.back() == 'a' ? 'b' : 'a';
  EXPECT_EQ(Status(forged, "GET", "/api/v1/nodes"), 401);
  auto basic = net::HttpCall("GET", server_->url() + "/api/v1/nodes", "",
                             {"Authorization: Basic YWxpY2U6eA=="}, 5000);
  ASSERT_TRUE(basic.ok());
  EXPECT_EQ(basic->status, 401);

  EXPECT_EQ(Status("", "POST", "/api/v1/auth/login", R"({"username":"alice","password":"nope"})"),
            401);
  EXPECT_EQ(Status("", "POST", "/api/v1/auth/login", R"({"username":"ghost","password":"x"})"), 401);
  EXPECT_EQ(Status("", "POST", "/api/v1/auth/login", "{"), 400);
  EXPECT_EQ(Status("", "POST", "/api/v1/auth/login", R"({"username":5,"password":"x"})"), 400);
  EXPECT_EQ(Status("", "POST", "/api/v1/auth/login", R"({"username":"alice"})"), 400);
  EXPECT_EQ(Status("", "POST", "/api/v1/auth/login", R"(["alice"])"), 400);
  const std::string admin = server_->admin_token();
  EXPECT_EQ(Status(admin, "POST", "/api/v1/users", R"({"username":"Bad Name","password":"long-enough"})"), 400);
  EXPECT_EQ(Status(admin, "POST", "/api/v1/users", R"({"username":"alice","password":"long-enough"})"), 409);
  EXPECT_EQ(Status(admin, "POST", "/api/v1/users", R"({"username":"x1","passwd":"typo-field"})"), 400);
  EXPECT_EQ(Status(admin, "POST", "/api/v1/users", R"({"username":"x2","role":"root"})"), 400);
  EXPECT_EQ(Status(admin, "POST", "/api/v1/tokens", R"({"ttl":"forever"})"), 400);

  // Logout revokes the session; a revoked token is 401.
  EXPECT_EQ(Status(alice_, "POST", "/api/v1/auth/logout", "{}"), 200);
  EXPECT_EQ(Status(alice_, "GET", "/api/v1/nodes"), 401);
  auto users = server_->GetJson("/api/v1/users");
  ASSERT_TRUE(users.ok());
  EXPECT_EQ((*users)["users"].size(), 3u);  // admin, alice, bob: nothing else was created
}

// An API token works until it is revoked, then is 401; another user cannot
// revoke it (404: not theirs to see).
TEST_F(AccountsE2E, RevokedApiTokenIs401) {
  auto made = server_->CallAs(alice_, "POST", "/api/v1/tokens", R"({"name":"ci"})");
  ASSERT_TRUE(made.ok());
  ASSERT_EQ(made->status, 201) << made->body;
  const api::Json token = api::Json::parse(made->body);
  const std::string secret = token["token"], id = token["id"];
  EXPECT_EQ(Status(secret, "GET", "/api/v1/nodes"), 200);
  EXPECT_EQ(Status(bob_, "DELETE", "/api/v1/tokens/" + id), 404);
  EXPECT_EQ(Status(secret, "GET", "/api/v1/nodes"), 200);  // bob's attempt changed nothing
  EXPECT_EQ(Status(alice_, "DELETE", "/api/v1/tokens/" + id), 204);
  EXPECT_EQ(Status(secret, "GET", "/api/v1/nodes"), 401);
  EXPECT_EQ(Status(secret, "GET", "/api/v1/auth/whoami"), 401);
  EXPECT_EQ(Status(alice_, "DELETE", "/api/v1/tokens/" + id), 404);  // gone
  EXPECT_EQ(Status(alice_, "GET", "/api/v1/nodes"), 200);            // her session lives on
}

TEST_F(AccountsE2E, CliCreatesListsAndRevokesApiTokens) {
  TempDir home;
  const std::map<std::string, std::string> env = {
      {"ROTA_SERVER", server_->url()}, {"ROTA_TOKEN", alice_}, {"XDG_CONFIG_HOME", home.path()}};
  CliResult made = RunCli({"token", "create", "--name", "from-cli", "-o", "json"}, env);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const api::Json token = api::Json::parse(made.out, nullptr, false);
  ASSERT_TRUE(token.is_object()) << made.out;
  const std::string secret = token.value("token", ""), id = token.value("id", "");
  ASSERT_FALSE(secret.empty()) << made.out;
  EXPECT_EQ(Status(secret, "GET", "/api/v1/nodes"), 200);

  CliResult listed = RunCli({"tokens"}, env);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(id), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("from-cli"), std::string::npos) << listed.out;
  EXPECT_EQ(listed.out.find(secret), std::string::npos) << "the secret is shown only once";

  // bob's CLI cannot revoke alice's token.
  auto bob_env = env;
  bob_env["ROTA_TOKEN"] = bob_;
  CliResult refused = RunCli({"token", "revoke", id}, bob_env);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_EQ(Status(secret, "GET", "/api/v1/nodes"), 200);

  CliResult revoked = RunCli({"token", "revoke", id}, env);
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_NE(revoked.out.find("revoked token " + id), std::string::npos) << revoked.out;
  EXPECT_EQ(Status(secret, "GET", "/api/v1/nodes"), 401);
  CliResult after = RunCli({"tokens", "-o", "json"}, env);
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out.find(id), std::string::npos) << after.out;
  // The revoked token itself cannot drive the CLI.
  auto revoked_env = env;
  revoked_env["ROTA_TOKEN"] = secret;
  CliResult with_revoked = RunCli({"whoami"}, revoked_env);
  EXPECT_EQ(with_revoked.exit_code, 1) << with_revoked.out;
}

// Groups from the CLI: an admin adds one, puts a user in it and removes it;
// a user lists them but may not add one.
TEST_F(AccountsE2E, CliAddsListsAndRemovesGroups) {
  const std::map<std::string, std::string> admin = {{"ROTA_SERVER", server_->url()},
                                                    {"ROTA_TOKEN", server_->admin_token()}};
  CliResult added = RunCli({"group", "add", "vision", "--description", "vision team"}, admin);
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_NE(added.out.find("vision team"), std::string::npos) << added.out;
  CliResult again = RunCli({"group", "add", "vision"}, admin);
  EXPECT_EQ(again.exit_code, 1) << again.out;
  CliResult member = RunCli({"user", "set", "alice", "--group", "vision"}, admin);
  ASSERT_EQ(member.exit_code, 0) << member.err;
  // The quota README's example names the group now that it exists.
  CliResult quota = RunCli({"quotas", "set", "group", "vision", "--max-gpus", "32"}, admin);
  EXPECT_EQ(quota.exit_code, 0) << quota.err;

  auto user = admin;
  user["ROTA_TOKEN"] = alice_;
  CliResult listed = RunCli({"groups", "-o", "json"}, user);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto groups = api::ParseJson(listed.out);
  ASSERT_TRUE(groups.ok()) << listed.out;
  ASSERT_EQ(groups->size(), 1u) << listed.out;
  EXPECT_EQ((*groups)[0]["name"], "vision");
  EXPECT_EQ((*groups)[0]["members"], api::Json::array({"alice"}));
  CliResult table = RunCli({"groups"}, user);
  EXPECT_NE(table.out.find("alice"), std::string::npos) << table.out;
  CliResult refused = RunCli({"group", "add", "mine"}, user);
  EXPECT_EQ(refused.exit_code, 1);
  CliResult bad = RunCli({"group", "add", "Not A Name"}, admin);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_FALSE(bad.err.empty());

  CliResult removed = RunCli({"group", "rm", "vision"}, admin);
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_NE(removed.out.find("deleted group vision"), std::string::npos) << removed.out;
  listed = RunCli({"groups", "-o", "json"}, user);
  auto after = api::ParseJson(listed.out);
  ASSERT_TRUE(after.ok()) << listed.out;
  EXPECT_EQ(*after, api::Json::array()) << listed.out;
}

// A user may edit their own profile but not their role.
TEST_F(AccountsE2E, UserCannotMakeThemselvesAdmin) {
  auto r = server_->CallAs(alice_, "PATCH", "/api/v1/users/alice", R"({"role":"admin"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403) << r->body;
  r = server_->CallAs(alice_, "PATCH", "/api/v1/users/alice",
                      R"({"role":"admin","display_name":"Boss"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403) << r->body;
  auto alice = server_->GetJson("/api/v1/users/alice");
  ASSERT_TRUE(alice.ok());
  EXPECT_EQ((*alice)["role"], "user");
  EXPECT_NE((*alice).value("display_name", ""), "Boss");  // nothing of a refused edit is kept
  auto who = server_->CallAs(alice_, "GET", "/api/v1/auth/whoami");
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(api::Json::parse(who->body)["role"], "user") << who->body;
  EXPECT_EQ(Status(alice_, "GET", "/api/v1/users"), 403);  // still no admin rights
}

// A session token expires after session_ttl: 401 from then on, while an API
// token made with it lives on.
TEST(AccountsSessionTest, ExpiredSessionTokenIs401) {
  TempDir dir;
  ServerProcess server(dir.path() + "/server");
  server.SetEnv("ROTA_SESSION_TTL", "4s");
  ASSERT_TRUE(server.Start().ok()) << server.child().Log();
  auto session = server.Login("admin", ServerProcess::kAdminPassword);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const auto issued = std::chrono::steady_clock::now();
  auto status = [&](const std::string& token) {
    auto r = server.CallAs(token, "GET", "/api/v1/auth/whoami");
    return r.ok() ? r->status : -1;
  };
  ASSERT_EQ(status(*session), 200);
  auto made = server.CallAs(*session, "POST", "/api/v1/tokens", R"({"name":"long"})");
  ASSERT_TRUE(made.ok());
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string api_token = api::Json::parse(made->body)["token"];

  ASSERT_TRUE(WaitFor([&] { return status(*session) == 401; }, seconds(20)));
  EXPECT_GE(std::chrono::steady_clock::now() - issued, std::chrono::milliseconds(3500))
      << "refused before its time";
  EXPECT_EQ(status(api_token), 200);
  // A new sign-in works again.
  auto again = server.Login("admin", ServerProcess::kAdminPassword);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(status(*again), 200);
}

TEST_F(AccountsE2E, FirstAdminIsCreatedOnceAndCliLoginSavesAPrivateToken) {
  EXPECT_NE(server_->child().Log().find("created the first admin 'admin'"), std::string::npos);
  TempDir home;
  std::map<std::string, std::string> env = {{"ROTA_SERVER", server_->url()},
                                            {"XDG_CONFIG_HOME", home.path()},
                                            {"ROTA_TOKEN", ""}};
  CliResult bad = RunCli({"login", "--user", "alice"}, env, "wrong-password\n");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("invalid username or password"), std::string::npos) << bad.err;

  CliResult ok = RunCli({"login", "--user", "alice"}, env,
                        std::string(ServerProcess::kUserPassword) + "\n");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const std::string cfg = home.path() + "/rota/cli.yaml";
  struct stat st {};
  ASSERT_EQ(::stat(cfg.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  CliResult who = RunCli({"whoami"}, {{"XDG_CONFIG_HOME", home.path()}, {"ROTA_TOKEN", ""}});
  EXPECT_EQ(who.exit_code, 0) << who.err;
  EXPECT_NE(who.out.find("alice (user)"), std::string::npos) << who.out;
  CliResult nodes = RunCli({"nodes", "-o", "json"}, {{"XDG_CONFIG_HOME", home.path()}});
  EXPECT_EQ(nodes.exit_code, 0) << nodes.err;
  CliResult users = RunCli({"users"}, {{"XDG_CONFIG_HOME", home.path()}, {"ROTA_TOKEN", ""}});
  EXPECT_EQ(users.exit_code, 1);
  EXPECT_NE(users.err.find("only admins"), std::string::npos) << users.err;

  CliResult out = RunCli({"logout"}, {{"XDG_CONFIG_HOME", home.path()}, {"ROTA_TOKEN", ""}});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  CliResult after = RunCli({"whoami"}, {{"XDG_CONFIG_HOME", home.path()}, {"ROTA_TOKEN", ""},
                                        {"ROTA_SERVER", server_->url()}});
  EXPECT_EQ(after.exit_code, 1);

  // Admin CLI: create a user with a generated password, who can then sign in.
  CliResult add = RunCli({"user", "add", "dave", "--email", "dave@example.test", "--unix-user",
                          "dwho"}, server_->CliEnv());
  ASSERT_EQ(add.exit_code, 0) << add.err;
  const auto pos = add.out.find("password: ");
  ASSERT_NE(pos, std::string::npos) << add.out;
  const std::string password(Trim(add.out.substr(pos + 10)));
  EXPECT_TRUE(server_->Login("dave", password).ok());
  CliResult list = RunCli({"users", "-o", "json"}, server_->CliEnv());
  EXPECT_NE(list.out.find("\"dwho\""), std::string::npos) << list.out;

  // Restart: no second admin, the same key verifies old tokens.
  const std::string admin_token = server_->admin_token();
  server_->child().Stop();
  ASSERT_TRUE(server_->Start().ok());
  EXPECT_EQ(Status(admin_token, "GET", "/api/v1/nodes"), 200);
  auto all = server_->GetJson("/api/v1/users");
  ASSERT_TRUE(all.ok());
  int admins = 0;
  for (const auto& u : (*all)["users"]) admins += u["role"] == "admin";
  EXPECT_EQ(admins, 1);
  ASSERT_EQ(::stat((server_->data_dir() + "/auth-key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(AccountsBootstrapTest, GeneratedAdminPasswordIsWrittenPrivately) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  Child server({RotaBinary(), "server", "--listen", "127.0.0.1:0", "--data-dir", data},
               {{"ROTA_PASSWORD_HASH_COST", "min"}, {"ROTA_ADMIN_PASSWORD", ""}},
               dir.path() + "/server.log");
  ASSERT_TRUE(server.Start().ok());
  std::string url;
  ASSERT_TRUE(WaitFor([&] {
    auto u = ReadFile(data + "/server.url");
    if (!u.ok()) return false;
    url = std::string(Trim(*u));
    return !url.empty();
  }, seconds(20))) << server.Log();
  auto password = ReadFile(data + "/initial-admin-password");
  ASSERT_TRUE(password.ok()) << server.Log();
  struct stat st {};
  ASSERT_EQ(::stat((data + "/initial-admin-password").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(server.Log().find(std::string(Trim(*password))), std::string::npos)
      << "the password must not be logged";
  api::Json body{{"username", "admin"}, {"password", std::string(Trim(*password))}};
  auto r = net::HttpCall("POST", url + "/api/v1/auth/login", body.dump(),
                         {"Content-Type: application/json"}, 5000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200) << r->body;
}

// ---- issue 41: accounts and authentication hardening ----

// Finding: 64 clients sending wrong passwords got 524 tries in 25 s, every one a 401.
TEST_F(AccountsE2E, FailedLoginsAreUnlimitedFixed_FloodIsAnswered429WithRetryAfter) {
  int first_429 = 0;
  net::ClientResponse refused;
  for (int i = 1; i <= 20 && first_429 == 0; ++i) {
    auto r = server_->CallAs("", "POST", "/api/v1/auth/login",
                             api::Json{{"username", "mallory" + std::to_string(i)},
                                       {"password", "guess-" + std::to_string(i)}}.dump());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (r->status == 429) {
      first_429 = i;
      refused = *r;
    } else {
      EXPECT_EQ(r->status, 401) << r->body;
    }
  }
  EXPECT_EQ(first_429, 6) << "the 5 free failures, then 429";
  EXPECT_EQ(refused.headers["retry-after"], "1") << refused.body;
  EXPECT_NE(refused.body.find("too many failed sign-ins from 127.0.0.1"), std::string::npos)
      << refused.body;
  // Even the right password waits (no hash is spent on a throttled attempt).
  EXPECT_EQ(Status("", "POST", "/api/v1/auth/login",
                   api::Json{{"username", "alice"}, {"password", ServerProcess::kUserPassword}}.dump()),
            429);
  // Signed-in clients are not concerned.
  EXPECT_EQ(Status(alice_, "GET", "/api/v1/nodes"), 200);
  // Counted for Prometheus and recorded once in the accounts trail.
  auto metrics = server_->Call("GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("rota_login_throttled_total{scope=\"address\"} 2"), std::string::npos)
      << metrics->body.substr(0, 2000);
  EXPECT_NE(metrics->body.find("rota_login_failures_total 5"), std::string::npos);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto trail = server_->GetJson("/api/v1/auth/events");
        return trail.ok() && (*trail)["events"].size() == 1;
      },
      seconds(10)));
  auto trail = server_->GetJson("/api/v1/auth/events");
  ASSERT_TRUE(trail.ok());
  const api::Json e = (*trail)["events"][0];
  EXPECT_EQ(e["action"], "login_throttled");
  EXPECT_EQ(e["address"], "127.0.0.1");
  EXPECT_EQ(e["username"], "mallory6");
  EXPECT_EQ(Status(alice_, "GET", "/api/v1/auth/events"), 403);
  // The wait ends.
  ASSERT_TRUE(WaitFor(
      [&] {
        return Status("", "POST", "/api/v1/auth/login",
                      api::Json{{"username", "alice"}, {"password", ServerProcess::kUserPassword}}
                          .dump()) == 200;
      },
      seconds(10)));
}

// Finding: argon2id ran on the network threads, so failed logins slowed every request
// (/healthz p50 3.9 s under 64 clients). With a costly hash, two concurrent sign-ins
// held both network threads for seconds; now /healthz answers meanwhile.
TEST(AccountsHashingTest, Argon2idOnTheNetworkThreadsFixed_HealthzAnswersWhileSignInsHash) {
  TempDir dir;
  ServerProcess server(dir.path() + "/server");
  server.SetEnv("ROTA_PASSWORD_HASH_COST", "moderate");  // ~1 s and 256 MiB per hash
  server.SetEnv("ROTA_HTTP_THREADS", "2");
  ASSERT_TRUE(server.Start().ok()) << server.child().Log();
  std::vector<std::thread> logins;
  std::atomic<int> answered{0};
  for (int i = 0; i < 4; ++i) {
    logins.emplace_back([&, i] {
      auto r = server.CallAs("", "POST", "/api/v1/auth/login",
                             api::Json{{"username", "admin"}, {"password", "wrong-" + std::to_string(i)}}.dump());
      if (r.ok()) ++answered;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the hashes are running
  int64_t worst_ms = 0;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = server.CallAs("", "GET", "/healthz");
    const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200);
    worst_ms = std::max(worst_ms, ms);
  }
  for (auto& t : logins) t.join();
  EXPECT_EQ(answered.load(), 4);
  EXPECT_LT(worst_ms, 500) << "a /healthz waited behind password hashing";
}

// Finding: a password change did not ask for the current password and revoked only
// session tokens.
TEST_F(AccountsE2E, PasswordChangeWithoutCurrentPasswordAndSessionsOnlyFixed) {
  const std::string api_token = [&] {
    auto r = server_->CallAs(alice_, "POST", "/api/v1/tokens", R"({"name":"ci"})");
    return r.ok() && r->status == 201 ? api::Json::parse(r->body)["token"].get<std::string>() : "";
  }();
  ASSERT_FALSE(api_token.empty());
  const std::string path = "/api/v1/users/alice";
  EXPECT_EQ(Status(alice_, "PATCH", path, R"({"password":"stolen-session-pw"})"), 400);
  EXPECT_EQ(Status(alice_, "PATCH", path,
                   R"({"password":"stolen-session-pw","current_password":"not-it"})"),
            403);
  EXPECT_EQ(Status(alice_, "GET", "/api/v1/auth/whoami"), 200) << "a wrong current password is not 401";
  EXPECT_EQ(Status(alice_, "PATCH", path,
                   api::Json{{"password", "alice-new-password"},
                             {"current_password", ServerProcess::kUserPassword}}.dump()),
            200);
  // Every token of alice ends, the API token too; bob's live on.
  EXPECT_EQ(Status(alice_, "GET", "/api/v1/nodes"), 401);
  EXPECT_EQ(Status(api_token, "GET", "/api/v1/nodes"), 401);
  EXPECT_EQ(Status(bob_, "GET", "/api/v1/nodes"), 200);
  EXPECT_FALSE(server_->Login("alice", ServerProcess::kUserPassword).ok());
  EXPECT_TRUE(server_->Login("alice", "alice-new-password").ok());
  // An admin resets another user's password without it; the user's tokens end.
  EXPECT_EQ(Status(server_->admin_token(), "PATCH", "/api/v1/users/bob",
                   R"({"password":"bob-reset-password"})"),
            200);
  EXPECT_EQ(Status(bob_, "GET", "/api/v1/nodes"), 401);
  EXPECT_EQ(Status(server_->admin_token(), "GET", "/api/v1/nodes"), 200);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto trail = server_->GetJson("/api/v1/auth/events");
        return trail.ok() && (*trail)["events"].size() == 2;
      },
      seconds(10)));
  auto trail = server_->GetJson("/api/v1/auth/events");
  EXPECT_EQ((*trail)["events"][0]["action"], "password_reset");
  EXPECT_EQ((*trail)["events"][0]["username"], "bob");
  EXPECT_EQ((*trail)["events"][0]["actor"], "admin");
  EXPECT_EQ((*trail)["events"][1]["action"], "password_changed");
  EXPECT_EQ((*trail)["events"][1]["actor"], "alice");
}

TEST_F(AccountsE2E, CliPasswdAsksTheCurrentPasswordAndForgetsTheRevokedToken) {
  TempDir home;
  std::map<std::string, std::string> env = {{"ROTA_SERVER", server_->url()}, {"XDG_CONFIG_HOME", home.path()}};
  if (!server_->ca_file().empty()) env["ROTA_CA_FILE"] = server_->ca_file();
  CliResult login = RunCli({"login", "--user", "alice"}, env, std::string(ServerProcess::kUserPassword) + "\n");
  ASSERT_EQ(login.exit_code, 0) << login.err;
  CliResult wrong = RunCli({"passwd"}, env, "not-the-password\nalice-cli-password\n");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("current_password is wrong"), std::string::npos) << wrong.err;
  CliResult changed =
      RunCli({"passwd"}, env, std::string(ServerProcess::kUserPassword) + "\nalice-cli-password\n");
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_NE(changed.err.find("sign in again with rota login"), std::string::npos) << changed.err;
  EXPECT_TRUE(server_->Login("alice", "alice-cli-password").ok());
  CliResult whoami = RunCli({"whoami"}, env);
  EXPECT_NE(whoami.exit_code, 0) << "the saved token was revoked and forgotten";
}

// Finding: API tokens never expired by default.
TEST_F(AccountsE2E, ApiTokensNeverExpireByDefaultFixed_90DaysAndNoLonger) {
  auto r = server_->CallAs(alice_, "POST", "/api/v1/tokens", R"({"name":"ci"})");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 201) << r->body;
  const api::Json t = api::Json::parse(r->body);
  ASSERT_TRUE(t["expires_at"].is_string()) << r->body;
  auto created = ParseRfc3339(t["created_at"].get<std::string>());
  auto expires = ParseRfc3339(t["expires_at"].get<std::string>());
  ASSERT_TRUE(created.ok() && expires.ok());
  EXPECT_EQ(*expires - *created, 90LL * 86'400'000);
  EXPECT_EQ(Status(alice_, "POST", "/api/v1/tokens", R"({"name":"long","ttl":"91d"})"), 400);
  EXPECT_EQ(Status(alice_, "POST", "/api/v1/tokens", R"({"name":"short","ttl":"30d"})"), 201);
}

// Finding: an existing data dir was not tightened to 0700 and rota.db and its WAL got the
// umask (password hashes, job env secrets readable by local users).
TEST(AccountsDataDirTest, DataDirAndDatabaseGetTheUmaskFixed_ServerStartMakesThemPrivate) {
  TempDir dir;
  const std::string data = dir.path() + "/server";
  ASSERT_EQ(::mkdir(data.c_str(), 0755), 0);
  auto mode = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 0777) : -1;
  };
  {
    ServerProcess server(data);
    ASSERT_TRUE(server.Start().ok()) << server.child().Log();
    EXPECT_EQ(mode(data), 0700);
    for (const char* f : {"/rota.db", "/rota.db-wal", "/rota.db-shm"}) EXPECT_EQ(mode(data + f), 0600) << f;
  }
  // Loosened while it was down: tightened at the next start.
  ASSERT_EQ(::chmod(data.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((data + "/rota.db").c_str(), 0644), 0);
  ServerProcess again(data);
  ASSERT_TRUE(again.Start().ok()) << again.child().Log();
  EXPECT_EQ(mode(data), 0700);
  EXPECT_EQ(mode(data + "/rota.db"), 0600);
  EXPECT_NE(again.child().Log().find("made " + data + " private: mode 0755 -> 0700"), std::string::npos)
      << again.child().Log();
}

TEST(AccountsDataDirTest, DataDirThatCannotBeMadePrivateIsRefusedAtStart) {
  // procfs refuses chmod even to root: the server must stop, saying what to do.
  CliResult r = RunCli({"server", "--listen", "127.0.0.1:0", "--data-dir", "/proc/self/net",
                        "--join-token", "test-join-token-0123456789"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE((r.out + r.err).find("cannot be made 0700"), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("chmod 700"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace rota::testing
