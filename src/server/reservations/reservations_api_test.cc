// The reservation and policy routes through a real HTTP server on port 0.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <latch>
#include <thread>

#include "cli/commands.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "common/run_command.h"
#include "common/time_util.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "server/accounts/accounts.h"
#include "server/api_context.h"
#include "server/config.h"
#include "server/enforcement/enforcement_binding.h"
#include "server/reservations/reservations.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

using api::Json;

class ReservationsApiTest : public ::testing::Test {
 protected:
  ReservationsApiTest() : clock_(*ParseRfc3339("2026-11-22T10:00:00Z")), cluster_(3), http_(Options()) {}

  static net::HttpServerOptions Options() {
    net::HttpServerOptions o;
    o.threads = 4;
    return o;
  }

  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), {}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    auto info = store::testing::MakeNode("gpu-a", 4);
    ASSERT_TRUE(store_->UpsertNode(info, clock_.NowMs()).ok());
    ASSERT_TRUE(cluster_.Connect(info, 1, clock_.NowMs()).ok());
    accounts_ = std::make_unique<Accounts>(store_.get(), std::string(32, 'k'), "min");
    alice_ = Token("alice", Role::kUser);
    bob_ = Token("bob", Role::kUser);
    admin_ = Token("root", Role::kAdmin);
    reservations_ = std::make_unique<Reservations>(store_.get(), &cluster_, &clock_);
    reservations_->SetEnforcementCheck(MakeEnforcementCheck(ctx_.enforcement_defaults));
    ASSERT_TRUE(reservations_->Start().ok());
    config_.anonymous_read = true;
    ctx_.config = &config_;
    ctx_.store = store_.get();
    ctx_.cluster = &cluster_;
    ctx_.clock = &clock_;
    ctx_.accounts = accounts_.get();
    ctx_.reservations = reservations_.get();
    ASSERT_TRUE(RegisterReservationRoutes(http_, ctx_).ok());
    ASSERT_TRUE(RegisterPolicyRoutes(http_, ctx_).ok());
    auto port = http_.Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    base_ = "http://127.0.0.1:" + std::to_string(*port);
  }

  void TearDown() override { http_.Stop(); }

  std::string Token(const std::string& name, Role role) {
    UserPatch p;
    p.username = name;
    p.role = role;
    p.email = name + "@example.com";
    auto u = accounts_->CreateUser(p, clock_.NowMs());
    EXPECT_TRUE(u.ok()) << u.status().ToString();
    auto t = accounts_->IssueToken(u->id, "api", "test", 0, clock_.NowMs());
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t->first;
  }

  std::pair<int, Json> Call(const std::string& method, const std::string& path,
                            const std::string& token, const std::string& body = "") {
    std::vector<std::string> headers;
    if (!token.empty()) headers.push_back("Authorization: Bearer " + token);
    if (!body.empty()) headers.push_back("Content-Type: application/json");
    auto r = net::HttpCall(method, base_ + path, body, headers);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }

  static std::string Msg(const Json& body) {
    return body.is_object() && body.contains("error") ? body["error"].value("message", "") : "";
  }

  int64_t Rows(const char* table) {
    int64_t n = -1;
    EXPECT_TRUE(store_->Read([&](store::Db& db) -> Status {
      ASSIGN_OR_RETURN(n, db.QueryInt(std::string("SELECT count(*) FROM ") + table));
      return Status::Ok();
    }).ok());
    return n;
  }

  Json Body(std::vector<int> gpus, const std::string& start, const std::string& end) {
    return Json{{"node", "gpu-a"}, {"gpus", gpus}, {"start", start}, {"end", end}, {"title", "run"}};
  }

  store::testing::TempDir dir_;
  FakeClock clock_;
  ClusterState cluster_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Accounts> accounts_;
  std::unique_ptr<Reservations> reservations_;
  ServerConfig config_;
  ApiContext ctx_;
  net::HttpServer http_;
  std::string base_;
  std::string alice_, bob_, admin_;
};

TEST_F(ReservationsApiTest, CreateGetListAndHeld) {
  auto [status, r] = Call("POST", "/api/v1/reservations", alice_,
                          Body({0, 1}, "2026-11-22T10:00:00Z", "2026-11-22T12:00:00Z").dump());
  ASSERT_EQ(status, 201) << r.dump();
  EXPECT_EQ(r["owner"], "alice");
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["gpu_uuids"][1], "GPU-gpu-a-1");
  const std::string id = std::to_string(r["id"].get<int64_t>());
  EXPECT_EQ(Call("GET", "/api/v1/reservations/" + id, "").first, 200);  // anonymous_read
  auto [ls, list] = Call("GET", "/api/v1/reservations?mine=true&state=running", alice_);
  ASSERT_EQ(ls, 200) << list.dump();
  EXPECT_EQ(list["reservations"].size(), 1u);
  EXPECT_EQ(Call("GET", "/api/v1/reservations?mine=true", bob_).second["reservations"].size(), 0u);
  EXPECT_EQ(Call("GET", "/api/v1/reservations?user=alice", bob_).second["reservations"].size(), 1u);
  auto [hs, held] = Call("GET", "/api/v1/reservations/held?node=gpu-a", alice_);
  ASSERT_EQ(hs, 200) << held.dump();
  EXPECT_EQ(held["gpus"], Json({0, 1}));
  EXPECT_EQ(Call("GET", "/api/v1/reservations/held?node=gpu-a", bob_).second["gpus"].size(), 0u);
  EXPECT_EQ(Call("GET", "/api/v1/reservations/held?node=gpu-a", "").first, 401);
}

TEST_F(ReservationsApiTest, UnicodeAndQuotesInTitlesRoundTrip) {
  Json b = Body({2}, "2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z");
  b["title"] = "\"quoted\" — Grüße 训练 🚀 <b>&amp;";
  b["description"] = "multi\nline";
  auto [status, r] = Call("POST", "/api/v1/reservations", alice_, b.dump());
  ASSERT_EQ(status, 201) << r.dump();
  auto [gs, got] = Call("GET", "/api/v1/reservations/" + std::to_string(r["id"].get<int64_t>()), alice_);
  EXPECT_EQ(got["title"], b["title"]);
  EXPECT_EQ(got["description"], "multi\nline");
}

TEST_F(ReservationsApiTest, BadRequestsAreRefusedNamingTheFieldAndStoreNothing) {
  ASSERT_EQ(Call("POST", "/api/v1/reservations", alice_,
                 Body({0}, "2026-11-23T09:00:00Z", "2026-11-23T11:00:00Z").dump()).first, 201);
  const int64_t rows = Rows("reservations"), gpu_rows = Rows("reservation_gpus");
  auto body = [&](std::function<void(Json&)> f) {
    Json b = Body({1}, "2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z");
    f(b);
    return b.dump();
  };
  struct Case {
    const char* what;
    std::string body;
    int status;
    const char* message;
  } cases[] = {
      {"malformed json", "{\"node\":", 400, "request body"},
      {"a key twice", body([](Json& b) { b["title"] = "first"; }).insert(1, "\"title\":\"x\","), 400,
       "request body: key \"title\" appears twice in one object"},
      {"malformed start", body([](Json& b) { b["start"] = "23/11/2026 9am"; }), 400, "start: malformed time"},
      {"end before start", body([](Json& b) { b["end"] = "2026-11-23T08:00:00Z"; }), 400, "is before start"},
      {"zero length", body([](Json& b) { b["end"] = b["start"]; }), 400, "end equals start"},
      {"unknown node", body([](Json& b) { b["node"] = "gpu-zz"; }), 404, "node 'gpu-zz' not found"},
      {"unknown gpu", body([](Json& b) { b["gpus"] = {7}; }), 404, "has no GPU 7"},
      {"more gpus than exist", body([](Json& b) { b.erase("gpus"); b["count"] = 9; }), 400, "has only 4 GPUs"},
      {"start in the past", body([](Json& b) { b["start"] = "2026-11-21T09:00:00Z"; }), 400, "in the past"},
      {"year 9999", body([](Json& b) { b["start"] = "9999-01-01T00:00:00Z"; b["end"] = "9999-01-02T00:00:00Z"; }), 400, "ahead"},
      {"title 201 chars", body([](Json& b) { b["title"] = std::string(201, 'x'); }), 400, "title: 201 characters"},
      {"title not a string", body([](Json& b) { b["title"] = 5; }), 400, "title: must be a string"},
      {"unknown field", body([](Json& b) { b["gpu"] = 1; }), 400, "gpu: unknown field"},
      {"overlap", body([](Json& b) { b["gpus"] = {0}; }), 409, "gpu-a/0 is reserved by alice from 2026-11-23T09:00:00Z to 2026-11-23T11:00:00Z (reservation 1)"},
  };
  for (const auto& c : cases) {
    auto [status, r] = Call("POST", "/api/v1/reservations", bob_, c.body);
    EXPECT_EQ(status, c.status) << c.what << ": " << r.dump();
    EXPECT_NE(Msg(r).find(c.message), std::string::npos) << c.what << ": " << Msg(r);
  }
  EXPECT_EQ(Call("POST", "/api/v1/reservations", "", body([](Json&) {})).first, 401);
  EXPECT_EQ(Rows("reservations"), rows);
  EXPECT_EQ(Rows("reservation_gpus"), gpu_rows);

  for (const char* bad : {"/api/v1/reservations?state=done", "/api/v1/reservations?from=noon",
                          "/api/v1/reservations?limit=0", "/api/v1/reservations?limit=x",
                          "/api/v1/reservations?sort=id", "/api/v1/reservations?user=nobody",
                          "/api/v1/reservations/abc", "/api/v1/reservations/0",
                          "/api/v1/reservations/held"}) {
    EXPECT_EQ(Call("GET", bad, alice_).first, 400) << bad;
  }
  EXPECT_EQ(Call("GET", "/api/v1/reservations/999", alice_).first, 404);
}

TEST_F(ReservationsApiTest, EditAndCancelNeedOwnerOrAdmin) {
  auto [s, r] = Call("POST", "/api/v1/reservations", alice_,
                     Body({0}, "2026-11-23T09:00:00Z", "2026-11-23T11:00:00Z").dump());
  ASSERT_EQ(s, 201);
  const std::string path = "/api/v1/reservations/" + std::to_string(r["id"].get<int64_t>());
  const std::string move = Json{{"start", "2026-11-23T12:00:00Z"}, {"end", "2026-11-23T13:00:00Z"}}.dump();
  auto [bs, bb] = Call("PATCH", path, bob_, move);
  EXPECT_EQ(bs, 403);
  EXPECT_NE(Msg(bb).find("belongs to alice"), std::string::npos) << Msg(bb);
  EXPECT_EQ(Call("PATCH", path, alice_, move).first, 200);
  EXPECT_EQ(Call("PATCH", path, admin_, Json{{"title", "admin was here"}}.dump()).second["title"], "admin was here");
  EXPECT_EQ(Call("PATCH", path, alice_, Json{{"end", "soon"}}.dump()).first, 400);
  EXPECT_EQ(Call("PATCH", path, alice_, Json::object().dump()).first, 400);
  EXPECT_EQ(Call("DELETE", path, bob_).first, 403);
  auto [ds, db] = Call("DELETE", path, alice_);
  EXPECT_EQ(ds, 200);
  EXPECT_EQ(db["state"], "cancelled");
  EXPECT_EQ(Call("DELETE", path, alice_).first, 409);
}

TEST_F(ReservationsApiTest, PoliciesAdminCrudAndRefusals) {
  const std::string spec =
      Json{{"name", "ml-only"}, {"subjects", {{"users", {"alice"}}}}, {"max_duration", "4h"},
           {"enforcement", {{"mode", "strict"}, {"owner_limits", {{"min_grace_term_ms", 120000}}}}},
           {"idle", {{"threshold_pct", 5}, {"after", "1h"}}}}
          .dump();
  EXPECT_EQ(Call("POST", "/api/v1/policies", alice_, spec).first, 403);
  EXPECT_EQ(Call("POST", "/api/v1/policies", "", spec).first, 401);
  auto [cs, created] = Call("POST", "/api/v1/policies", admin_, spec);
  ASSERT_EQ(cs, 201) << created.dump();
  EXPECT_EQ(created["enforcement"]["mode"], "strict");
  // Bad enforcement sections: an unknown mode, an unknown key, grace out of order.
  for (const Json& bad_enf : {Json{{"mode", "warn"}}, Json{{"colour", "red"}},
                              Json{{"grace_email_ms", 600000}, {"grace_term_ms", 1000}},
                              Json{{"owner_limits", {{"min_grace_term_ms", -1}}}}}) {
    auto [st, body] = Call("POST", "/api/v1/policies", admin_,
                           Json{{"name", "bad"}, {"enforcement", bad_enf}}.dump());
    EXPECT_EQ(st, 400) << bad_enf.dump() << " " << body.dump();
    EXPECT_NE(Msg(body).find("enforcement"), std::string::npos) << Msg(body);
  }
  // Owner overrides must stay inside the policy's owner limits.
  Json fast = Body({2}, "2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z");
  fast["enforcement"] = {{"grace_term_ms", 60000}};
  auto [fs, fb] = Call("POST", "/api/v1/reservations", alice_, fast.dump());
  EXPECT_EQ(fs, 403) << fb.dump();
  EXPECT_NE(Msg(fb).find("policy 'ml-only'"), std::string::npos) << Msg(fb);
  EXPECT_NE(Msg(fb).find("grace_term_ms"), std::string::npos) << Msg(fb);
  fast["enforcement"] = {{"grace_term_ms", 180000}};
  auto [fs2, fb2] = Call("POST", "/api/v1/reservations", alice_, fast.dump());
  EXPECT_EQ(fs2, 201) << fb2.dump();
  EXPECT_EQ(fb2["enforcement"]["grace_term_ms"], 180000);
  // Editing the overrides is checked the same way.
  const std::string fast_path = "/api/v1/reservations/" + std::to_string(fb2.value("id", 0));
  EXPECT_EQ(Call("PATCH", fast_path, alice_, Json{{"enforcement", {{"mode", "off"}}}}.dump()).first, 403);
  EXPECT_EQ(Call("DELETE", fast_path, alice_).first, 200);
  EXPECT_EQ(Call("POST", "/api/v1/policies", admin_, spec).first, 409);
  auto [bad, bb] = Call("POST", "/api/v1/policies", admin_, Json{{"name", "x"}, {"max_gpus", "two"}}.dump());
  EXPECT_EQ(bad, 400);
  EXPECT_NE(Msg(bb).find("policy.max_gpus"), std::string::npos) << Msg(bb);

  auto [rs, refused] = Call("POST", "/api/v1/reservations", bob_,
                            Body({0}, "2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z").dump());
  EXPECT_EQ(rs, 403);
  EXPECT_NE(Msg(refused).find("policy 'ml-only' (subjects)"), std::string::npos) << Msg(refused);
  auto [ls, too_long] = Call("POST", "/api/v1/reservations", alice_,
                             Body({0}, "2026-11-23T09:00:00Z", "2026-11-23T15:00:00Z").dump());
  EXPECT_EQ(ls, 403);
  EXPECT_NE(Msg(too_long).find("policy 'ml-only' (max_duration)"), std::string::npos) << Msg(too_long);

  const std::string path = "/api/v1/policies/" + std::to_string(created["id"].get<int64_t>());
  EXPECT_EQ(Call("GET", "/api/v1/policies", bob_).second["policies"].size(), 1u);
  auto [us, updated] = Call("PUT", path, admin_, Json{{"name", "ml-only"}, {"max_duration", "8h"}}.dump());
  ASSERT_EQ(us, 200) << updated.dump();
  EXPECT_EQ(updated["max_duration"], "8h");
  EXPECT_EQ(Call("POST", "/api/v1/reservations", bob_,
                 Body({0}, "2026-11-23T09:00:00Z", "2026-11-23T15:00:00Z").dump()).first, 201);
  EXPECT_EQ(Call("DELETE", path, bob_).first, 403);
  EXPECT_EQ(Call("DELETE", path, admin_).first, 204);
  EXPECT_EQ(Call("GET", path, bob_).first, 404);
  EXPECT_EQ(Call("GET", "/api/v1/policies/x", bob_).first, 400);
}

TEST_F(ReservationsApiTest, FiftyRacersOverHttpExactlyOneWins) {
  constexpr int kRacers = 50;
  std::atomic<int> created{0}, conflict{0}, other{0};
  std::latch go(kRacers);
  const std::string body = Body({3}, "2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z").dump();
  std::vector<std::thread> threads;
  for (int i = 0; i < kRacers; ++i) {
    threads.emplace_back([&, i] {
      const std::string& token = i % 2 ? alice_ : bob_;
      go.arrive_and_wait();
      auto r = net::HttpCall("POST", base_ + "/api/v1/reservations", body,
                             {"Authorization: Bearer " + token, "Content-Type: application/json"});
      if (!r.ok()) ++other;
      else if (r->status == 201) ++created;
      else if (r->status == 409) ++conflict;
      else ++other;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(conflict.load(), kRacers - 1);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(Rows("reservations"), 1);
}


// The CLI commands against the real routes (times absolute: the server runs on a fake clock).
TEST_F(ReservationsApiTest, CliReserveListEditCancel) {
  cli::ClientOptions alice{base_, alice_};
  cli::OutputOptions json{"json"};
  cli::ReserveOptions o;
  o.node = "gpu-a";
  o.gpus = "0,1";
  o.start = "2026-11-23T09:00:00Z";
  o.duration = "2h";
  o.title = "cli run";
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(cli::RunReserve(alice, json, o), 0);
  Json created = Json::parse(::testing::internal::GetCapturedStdout());
  EXPECT_EQ(created["end"], "2026-11-23T11:00:00Z");
  EXPECT_EQ(created["gpus"], Json({0, 1}));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cli::RunReserve(alice, json, o), 1);  // conflict
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("is reserved by alice"), std::string::npos);
  o.end = "2026-11-23T12:00:00Z";
  EXPECT_EQ(cli::RunReserve(alice, json, o), 2);  // both --end and --duration

  cli::ReservationListOptions list;
  list.mine = true;
  list.from = "2026-11-23T00:00:00Z";
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(cli::RunReservations(alice, json, list), 0);
  EXPECT_EQ(Json::parse(::testing::internal::GetCapturedStdout()).size(), 1u);

  cli::ReservationEdit edit;
  edit.action = "edit";
  edit.id = std::to_string(created["id"].get<int64_t>());
  edit.end = "2026-11-23T12:00:00Z";
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(cli::RunReservationCommand(alice, json, edit), 0);
  EXPECT_EQ(Json::parse(::testing::internal::GetCapturedStdout())["end"], "2026-11-23T12:00:00Z");
  edit.action = "cancel";
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(cli::RunReservationCommand(alice, json, edit), 0);
  EXPECT_EQ(Json::parse(::testing::internal::GetCapturedStdout())["state"], "cancelled");
}

TEST_F(ReservationsApiTest, CliPolicyFromYaml) {
  const std::string file = dir_.path() + "/policy.yaml";
  ASSERT_TRUE(WriteFileAtomic(file,
                              "name: office\n"
                              "subjects: {groups: [ml]}\n"
                              "windows:\n"
                              "  zone: UTC\n"
                              "  allow:\n"
                              "    - {days: [mon-fri], from: \"08:00\", to: \"18:00\"}\n"
                              "max_gpus: 2\n"
                              "idle: {threshold_pct: 5, after: 1h, release: true}\n",
                              0644).ok());
  cli::OutputOptions json{"json"};
  cli::PolicyEdit create{"create", "", file};
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cli::RunPolicyCommand(cli::ClientOptions{base_, alice_}, json, create), 1);  // not admin
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("admin"), std::string::npos);
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(cli::RunPolicyCommand(cli::ClientOptions{base_, admin_}, json, create), 0);
  Json p = Json::parse(::testing::internal::GetCapturedStdout());
  EXPECT_EQ(p["windows"]["allow"][0]["from"], "08:00");
  EXPECT_EQ(p["max_gpus"], 2);
  EXPECT_EQ(p["idle"]["release"], true);
  cli::PolicyEdit del{"delete", "office", ""};
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(cli::RunPolicyCommand(cli::ClientOptions{base_, admin_}, json, del), 0);
  ::testing::internal::GetCapturedStdout();
}

// rota exec in a child process: CUDA_VISIBLE_DEVICES from the held GPUs, exit 1 without.
TEST_F(ReservationsApiTest, CliExecSetsVisibleDevices) {
  ASSERT_EQ(Call("POST", "/api/v1/reservations", alice_,
                 Body({1, 3}, "2026-11-22T10:00:00Z", "2026-11-22T12:00:00Z").dump()).first, 201);
  const std::string out = dir_.path() + "/env.txt";
  // The real CLI in a process of its own (`rota exec` replaces itself with the command).
  // Not a fork of this test: a child forked from a multi-threaded process may only call
  // async-signal-safe functions, and HTTP in it could hang on a lock held at fork time.
  auto run = [&](const std::string& token) {
    auto r = RunCommand({"env", "ROTA_TOKEN=" + token, ROTA_BINARY, "exec", "--server", base_,
                         "--node", "gpu-a", "--", "sh", "-c",
                         "echo \"$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER\" > " + out},
                        RunOptions{.timeout_ms = 60'000});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->exit_code : -1;
  };
  ASSERT_EQ(run(alice_), 0);
  EXPECT_EQ(*ReadFile(out), "1,3 PCI_BUS_ID\n");
  EXPECT_EQ(run(bob_), 1);
}

}  // namespace
}  // namespace rota::server
