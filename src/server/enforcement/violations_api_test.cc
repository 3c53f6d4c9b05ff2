// GET /api/v1/violations[/{id}] through a real HTTP server on port 0.

#include <gtest/gtest.h>

#include "common/clock.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "server/api_context.h"
#include "server/audit.h"
#include "server/config.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

class ViolationsApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), {}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    audit_ = std::make_unique<AuditLog>(store_.get());
    config_.anonymous_read = true;
    ctx_.config = &config_;
    ctx_.store = store_.get();
    ctx_.clock = &clock_;
    ctx_.audit = audit_.get();
    enforce::Offence o;
    o.node = "node-a";
    o.gpu = 1;
    o.uid = 1002;
    o.unix_user = "bob";
    o.processes = {{10, 1000, "python steal.py"}};
    auto id = audit_->OpenViolation(o, "strict", false, kT0);
    ASSERT_TRUE(id.ok());
    id_ = *id;
    ASSERT_TRUE(audit_->AddEvent(id_, kT0 + 1, "warn", "sent", "stop").ok());
    ASSERT_TRUE(RegisterViolationRoutes(http_, ctx_).ok());
    auto port = http_.Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }

  std::pair<int, api::Json> Get(const std::string& path) {
    auto r = net::HttpCall("GET", "http://127.0.0.1:" + std::to_string(port_) + path);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {0, api::Json()};
    return {r->status, api::Json::parse(r->body, nullptr, false)};
  }

  store::testing::TempDir dir_;
  FakeClock clock_{kT0};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<AuditLog> audit_;
  ServerConfig config_;
  ApiContext ctx_;
  net::HttpServer http_;
  uint16_t port_ = 0;
  int64_t id_ = 0;
};

TEST_F(ViolationsApiTest, ListsAndFilters) {
  auto [status, body] = Get("/api/v1/violations?node=node-a&state=open&limit=10");
  ASSERT_EQ(status, 200) << body.dump();
  ASSERT_EQ(body["violations"].size(), 1u);
  EXPECT_EQ(body["violations"][0]["unix_user"], "bob");
  EXPECT_EQ(body["violations"][0]["last_action"], "warn");
  EXPECT_FALSE(body["violations"][0].contains("events"));
  EXPECT_EQ(body["limit"], 10);
  EXPECT_EQ(Get("/api/v1/violations?state=resolved").second["violations"].size(), 0u);
  EXPECT_EQ(Get("/api/v1/violations?user=carol").second["violations"].size(), 0u);
}

TEST_F(ViolationsApiTest, OneWithEvents) {
  auto [status, body] = Get("/api/v1/violations/" + std::to_string(id_));
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body["id"], id_);
  EXPECT_EQ(body["mode"], "strict");
  ASSERT_EQ(body["events"].size(), 2u);
  EXPECT_EQ(body["events"][0]["action"], "open");
  EXPECT_EQ(body["events"][1]["detail"], "stop");
}

TEST_F(ViolationsApiTest, BadRequestsNameTheParameter) {
  struct Case {
    std::string path;
    int status;
    std::string message;
  };
  std::vector<Case> cases = {
      {"/api/v1/violations?state=closed", 400, "state: must be open or resolved"},
      {"/api/v1/violations?limit=5000", 400, "limit: must be in [1, 1000]"},
      {"/api/v1/violations?from=noon", 400, "from: "},
      {"/api/v1/violations?sort=id", 400, "sort: unknown parameter"},
      {"/api/v1/violations/abc", 400, "violation id 'abc'"},
      {"/api/v1/violations/0", 400, "violation id '0'"},
      {"/api/v1/violations/999", 404, "violation 999 not found"},
  };
  for (const auto& c : cases) {
    auto [status, body] = Get(c.path);
    EXPECT_EQ(status, c.status) << c.path;
    std::string message = body["error"].value("message", "");
    EXPECT_NE(message.find(c.message), std::string::npos) << c.path << ": " << message;
  }
}

TEST_F(ViolationsApiTest, AnonymousRefusedUnlessAnonymousRead) {
  config_.anonymous_read = false;
  EXPECT_EQ(Get("/api/v1/violations").first, 401);
  EXPECT_EQ(Get("/api/v1/violations/" + std::to_string(id_)).first, 401);
}

}  // namespace
}  // namespace rota::server
