// Accounts end to end: the first admin, login, tokens, the CLI, and the
// authorisation matrix (every endpoint as anonymous, user, another user, admin).

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>

#include "common/file_util.h"
#include "common/strings.h"
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

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::string alice_, bob_;
};

// Every route as anonymous, alice (the subject where one applies), bob (another
// user) and the admin. Bodies are valid so that the status says who may do it.
TEST_F(AccountsE2E, AuthorisationMatrix) {
  struct Row {
    std::string method, path, body;
    int anon, owner, other, admin;
  };
  const std::string tok_body = R"({"name":"t"})";
  const std::vector<Row> rows = {
      {"GET", "/healthz", "", 200, 200, 200, 200},
      {"GET", "/readyz", "", 200, 200, 200, 200},
      {"GET", "/api/v1/openapi.json", "", 200, 200, 200, 200},
      {"GET", "/api/v1/nodes", "", 401, 200, 200, 200},
      {"GET", "/api/v1/gpus", "", 401, 200, 200, 200},
      {"GET", "/api/v1/nodes/none", "", 401, 404, 404, 404},
      {"GET", "/api/v1/nodes/none/metrics", "", 401, 404, 404, 404},
      {"GET", "/metrics", "", 401, 200, 200, 200},
      {"GET", "/api/v1/auth/whoami", "", 401, 200, 200, 200},
      {"GET", "/api/v1/users", "", 401, 403, 403, 200},
      {"POST", "/api/v1/users", R"({"username":"u1","password":"long-enough-1"})", 401, 403, 403, 201},
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

}  // namespace
}  // namespace rota::testing
