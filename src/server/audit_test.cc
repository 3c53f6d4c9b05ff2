#include "server/audit.h"

#include <gtest/gtest.h>

#include "common/clock.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

using enforce::Offence;
using enforce::OffendingProcess;

constexpr int64_t kT0 = 1'700'000'000'000;

Offence MakeOffence(const std::string& node, uint32_t gpu, const std::string& user, uint32_t uid,
                    std::vector<OffendingProcess> procs = {{10, 1000, "python train.py"}}) {
  Offence o;
  o.node = node;
  o.gpu = gpu;
  o.gpu_uuid = "GPU-" + std::to_string(gpu);
  o.uid = uid;
  o.unix_user = user;
  o.processes = std::move(procs);
  o.reservation_id = 7;
  o.reservation_owner_id = 1;
  o.reservation_owner_username = "alice";
  return o;
}

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), {}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    audit_ = std::make_unique<AuditLog>(store_.get());
    // Users 1 (alice) and 2 (bob), for the username joins and the user filter.
    ASSERT_TRUE(store_
                    ->Write([](store::Db& db) {
                      return db.Exec(
                          "INSERT INTO users (id, username, role, created_ms, updated_ms) VALUES "
                          "(1, 'alice', 'user', 0, 0), (2, 'robert', 'user', 0, 0)");
                    })
                    .ok());
  }

  int64_t Open(const Offence& o, int64_t t, std::optional<int64_t> user = std::nullopt) {
    auto id = audit_->OpenViolation(o, "reserved", false, t, user);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  std::vector<int64_t> Ids(const ViolationQuery& q) {
    auto list = audit_->List(q);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    std::vector<int64_t> out;
    if (list.ok()) {
      for (const auto& v : *list) out.push_back(v.id);
    }
    return out;
  }

  store::testing::TempDir dir_;
  FakeClock clock_{kT0};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<AuditLog> audit_;
};

TEST_F(AuditLogTest, RecordsViolationWithEvents) {
  int64_t id = Open(MakeOffence("node-a", 1, "bob", 1002), kT0, 2);
  ASSERT_GT(id, 0);
  ASSERT_TRUE(
      audit_->AddEvent(id, kT0 + 1, "warn", "sent", "rota: stop", {{10, 1000, "", ""}}).ok());
  ASSERT_TRUE(audit_
                  ->AddEvent(id, kT0 + 2, "term_result", "ok", "10: signalled",
                             {{10, 1000, "signalled", "SIGTERM delivered"}})
                  .ok());
  auto v = audit_->Get(id);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->node, "node-a");
  EXPECT_EQ(v->gpu, 1u);
  EXPECT_EQ(v->gpu_uuid, "GPU-1");
  EXPECT_EQ(v->uid, 1002u);
  EXPECT_EQ(v->unix_user, "bob");
  EXPECT_EQ(v->user_id, 2);
  EXPECT_EQ(v->username, "robert");
  EXPECT_EQ(v->reservation_id, 7);
  EXPECT_EQ(v->reservation_owner, "alice");
  EXPECT_EQ(v->mode, "reserved");
  EXPECT_EQ(v->state, "open");
  EXPECT_EQ(v->opened_ms, kT0);
  EXPECT_FALSE(v->closed_ms.has_value());
  ASSERT_EQ(v->processes.size(), 1u);
  EXPECT_EQ(v->processes[0].command, "python train.py");
  EXPECT_EQ(v->last_action, "term_result");
  ASSERT_EQ(v->events.size(), 3u);
  EXPECT_EQ(v->events[0].action, "open");
  EXPECT_NE(v->events[0].detail.find("bob (uid 1002) uses GPU 1 of node-a, reserved by alice"),
            std::string::npos)
      << v->events[0].detail;
  EXPECT_EQ(v->events[1].action, "warn");
  EXPECT_EQ(v->events[2].pids,
            (std::vector<EventPid>{{10, 1000, "signalled", "SIGTERM delivered"}}));
}

TEST_F(AuditLogTest, UpdateKeepsEveryProcessThatTookPart) {
  int64_t id = Open(MakeOffence("node-a", 1, "bob", 1002), kT0);
  ASSERT_TRUE(audit_->UpdateProcesses(id, kT0 + 5, {{11, 1000, "b"}, {10, 2000, "a"}}).ok());
  auto v = audit_->Get(id);
  ASSERT_TRUE(v.ok());
  ASSERT_EQ(v->processes.size(), 3u);  // 10@1000, 11@1000, 10@2000 (pid reused)
  EXPECT_EQ(v->events.back().action, "update");
  EXPECT_EQ(v->events.back().pids.size(), 2u);
  EXPECT_EQ(audit_->UpdateProcesses(999, kT0, {}).code(), StatusCode::kNotFound);
}

TEST_F(AuditLogTest, ResolveClosesOnce) {
  int64_t id = Open(MakeOffence("node-a", 1, "bob", 1002), kT0);
  ASSERT_TRUE(audit_->Resolve(id, kT0 + 9, "killed").ok());
  auto v = audit_->Get(id);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->state, "resolved");
  EXPECT_EQ(v->closed_ms, kT0 + 9);
  EXPECT_EQ(v->resolution, "killed");
  EXPECT_EQ(v->last_action, "resolve");
  EXPECT_EQ(audit_->Resolve(id, kT0 + 10, "again").code(), StatusCode::kConflict);
  EXPECT_EQ(audit_->Resolve(999, kT0, "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(audit_->AddEvent(999, kT0, "warn", "", "").code(), StatusCode::kNotFound);
  EXPECT_EQ(audit_->Get(999).status().code(), StatusCode::kNotFound);
}

TEST_F(AuditLogTest, ListFilters) {
  // 1: node-a bob, resolved at +100; 2: node-b bob, open; 3: node-a carol, open.
  int64_t a = Open(MakeOffence("node-a", 1, "bob", 1002), kT0, 2);
  int64_t b = Open(MakeOffence("node-b", 0, "bob", 1002), kT0 + 200, 2);
  int64_t c = Open(MakeOffence("node-a", 2, "carol", 1003), kT0 + 300);
  ASSERT_TRUE(audit_->Resolve(a, kT0 + 100, "processes exited").ok());

  struct Case {
    const char* name;
    ViolationQuery q;
    std::vector<int64_t> want;
  };
  auto Q = [](auto f) {
    ViolationQuery q;
    f(q);
    return q;
  };
  std::vector<Case> cases = {
      {"All newest first", {}, {c, b, a}},
      {"Node", Q([](auto& q) { q.node = "node-a"; }), {c, a}},
      {"UnixUser", Q([](auto& q) { q.user = "bob"; }), {b, a}},
      {"RotaUsername", Q([](auto& q) { q.user = "robert"; }), {b, a}},
      {"Open", Q([](auto& q) { q.state = "open"; }), {c, b}},
      {"Resolved", Q([](auto& q) { q.state = "resolved"; }), {a}},
      {"OpenDuringRange",
       Q([](auto& q) {
         q.from_ms = kT0 + 150;
         q.to_ms = kT0 + 250;
       }),
       {b}},
      {"ClosedAtFromCounts",
       Q([](auto& q) {
         q.from_ms = kT0 + 100;
         q.to_ms = kT0 + 101;
       }),
       {a}},
      {"ToExcludesOpenedAt", Q([](auto& q) { q.to_ms = kT0 + 200; }), {a}},
      {"Limit", Q([](auto& q) { q.limit = 2; }), {c, b}},
      {"Offset",
       Q([](auto& q) {
         q.limit = 2;
         q.offset = 2;
       }),
       {a}},
  };
  for (const auto& tc : cases) EXPECT_EQ(Ids(tc.q), tc.want) << tc.name;

  auto open = audit_->ListOpen();
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 2u);
  EXPECT_EQ((*open)[0].id, b);  // oldest first
  EXPECT_EQ((*open)[0].events.size(), 1u);
}

TEST_F(AuditLogTest, ListRejectsBadQueries) {
  ViolationQuery q;
  q.limit = 1001;
  EXPECT_EQ(audit_->List(q).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(AuditLogTest, JsonView) {
  int64_t id = Open(MakeOffence("node-a", 1, "bob", 1002), kT0, 2);
  ASSERT_TRUE(audit_->Resolve(id, kT0 + 1000, "terminated").ok());
  auto v = audit_->Get(id);
  ASSERT_TRUE(v.ok());
  api::Json j = ViolationJson(*v, true);
  EXPECT_EQ(j["id"], id);
  EXPECT_EQ(j["user"], "robert");
  EXPECT_EQ(j["unix_user"], "bob");
  EXPECT_EQ(j["reservation_id"], 7);
  EXPECT_EQ(j["opened"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(j["closed_ms"], kT0 + 1000);
  EXPECT_EQ(j["resolution"], "terminated");
  EXPECT_EQ(j["processes"][0]["pid"], 10);
  ASSERT_EQ(j["events"].size(), 2u);
  EXPECT_EQ(j["events"][1]["action"], "resolve");
  EXPECT_FALSE(ViolationJson(*v, false).contains("events"));
}

struct QueryCase {
  const char* name;
  std::map<std::string, std::string> params;
  const char* error;  // "" when valid
};

class ParseViolationQueryTest : public ::testing::TestWithParam<QueryCase> {};

TEST_P(ParseViolationQueryTest, ValidatesEveryParameter) {
  auto q = ParseViolationQuery(GetParam().params);
  if (std::string(GetParam().error).empty()) {
    EXPECT_TRUE(q.ok()) << q.status().ToString();
    return;
  }
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(q.status().message().find(GetParam().error), std::string::npos) << q.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseViolationQueryTest,
    ::testing::ValuesIn(std::vector<QueryCase>{
        {"Empty", {}, ""},
        {"All",
         {{"node", "node-a"},
          {"user", "bob"},
          {"state", "open"},
          {"from", "2026-01-01T00:00:00Z"},
          {"to", "2026-01-02T00:00:00Z"},
          {"limit", "1000"},
          {"offset", "5"}},
         ""},
        {"BadNode", {{"node", "no/de"}}, "node: 'no/de' is not a valid node name"},
        {"LongUser", {{"user", std::string(65, 'u')}}, "user: at most 64"},
        {"BadState", {{"state", "closed"}}, "state: must be open or resolved"},
        {"BadFrom", {{"from", "yesterday"}}, "from: "},
        {"BadTo", {{"to", "2026-13-01T00:00:00Z"}}, "to: "},
        {"FromAfterTo",
         {{"from", "2026-01-02T00:00:00Z"}, {"to", "2026-01-01T00:00:00Z"}},
         "must be before to"},
        {"LimitZero", {{"limit", "0"}}, "limit: must be in [1, 1000]"},
        {"LimitTooBig", {{"limit", "1001"}}, "limit: must be in [1, 1000]"},
        {"LimitNotNumber", {{"limit", "ten"}}, "limit: 'ten' must be a non-negative integer"},
        {"LimitNegative", {{"limit", "-1"}}, "limit: '-1'"},
        {"OffsetHuge", {{"offset", "99999999999"}}, "offset: "},
        {"Unknown", {{"page", "2"}}, "page: unknown parameter"},
    }),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ParseViolationIdTest, PositiveIntegersOnly) {
  EXPECT_EQ(*ParseViolationId("42"), 42);
  for (const char* bad : {"", "0", "-1", "4x", "99999999999999999", "9007199254740993"}) {
    EXPECT_FALSE(ParseViolationId(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace rota::server
