// Every domain store's SQL (accounts, reservations, violations, power, audit
// trails, SSH nodes, drains, credentials, queues) on both backends: each row
// function once, with the reads that show its writes. The services' own tests
// cover the rules on SQLite; these keep the SQL itself portable.
#include <gtest/gtest.h>

#include "server/store/accounts.h"
#include "server/store/auth_events.h"
#include "server/store/node_credentials.h"
#include "server/store/node_drains.h"
#include "server/store/power.h"
#include "server/store/reservations.h"
#include "server/store/sched_settings.h"
#include "server/store/schema.h"
#include "server/store/ssh_nodes.h"
#include "server/store/store_test_backend.h"
#include "server/store/violations.h"

namespace rota::store {
namespace {

using testing::Backend;

class DomainStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(loc_);
    auto db = loc_.Connect();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_.emplace(std::move(*db));
    ASSERT_TRUE(ApplySchema(*db_, 1).ok());
  }
  Db& db() { return *db_; }

  int64_t AddUser(const std::string& name, const std::string& role = "user") {
    UserRow u;
    u.username = name;
    u.role = role;
    u.created_ms = u.updated_ms = 10;
    auto id = InsertUser(db(), u);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  testing::TestStoreLocation loc_{GetParam()};
  std::optional<Db> db_;
};
INSTANTIATE_TEST_SUITE_P(, DomainStoreTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendParamName<::testing::TestParamInfo<Backend>>);

TEST_P(DomainStoreTest, AccountsGroupsAndTokens) {
  const int64_t alice = AddUser("alice", "admin");
  const int64_t bob = AddUser("Bob");
  EXPECT_EQ(bob, alice + 1);
  EXPECT_EQ(*CountUsers(db()), 2);
  EXPECT_EQ(*CountEnabledAdmins(db()), 1);
  // A duplicate username is a Conflict on both backends.
  UserRow dup;
  dup.username = "alice";
  EXPECT_EQ(InsertUser(db(), dup).status().code(), StatusCode::kConflict);

  auto a = FindUserByName(db(), "alice");
  ASSERT_TRUE(a.ok() && a->has_value()) << a.status().ToString();
  UserRow u = **a;
  EXPECT_FALSE(u.has_password);
  u.password_hash = "h1";
  u.email = "a@x";
  u.disabled = true;
  u.updated_ms = 20;
  ASSERT_TRUE(UpdateUser(db(), u).ok());
  u.password_hash.reset();  // kept as it is
  ASSERT_TRUE(UpdateUser(db(), u).ok());
  auto pw = PasswordOf(db(), "alice");
  ASSERT_TRUE(pw.ok() && pw->has_value());
  EXPECT_EQ((*pw)->hash, "h1");
  EXPECT_TRUE((*pw)->disabled);
  EXPECT_EQ(*UserEmail(db(), alice), "a@x");
  EXPECT_EQ(*DisabledUsernames(db()), std::set<std::string>{"alice"});
  EXPECT_EQ(*CountEnabledAdmins(db()), 0);

  ASSERT_TRUE(InsertGroup(db(), "ml", "", 5).ok());
  ASSERT_TRUE(InsertGroup(db(), "Vision", "d", 5).ok());
  EXPECT_TRUE(*GroupExists(db(), "ml"));
  ASSERT_TRUE(SetUserGroups(db(), bob, {"ml", "Vision", "ml"}).ok());
  EXPECT_EQ(*UserGroups(db(), bob), (std::vector<std::string>{"Vision", "ml"}));  // byte order
  EXPECT_EQ(PrimaryGroups(db())->at("Bob"), "Vision");
  EXPECT_EQ(SetUserGroups(db(), bob, {"nosuch"}).code(), StatusCode::kNotFound);
  auto groups = ListGroupRows(db());
  ASSERT_TRUE(groups.ok());
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0].name, "Vision");
  auto members = ReadQueueMembership(db());
  ASSERT_TRUE(members.ok());
  EXPECT_EQ(members->admins, std::set<std::string>{"alice"});
  auto users = ListUserRows(db());
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->size(), 2u);
  EXPECT_EQ((*users)[0].username, "Bob");  // 'B' < 'a'

  TokenRow t{"tok1", bob, "api", "ci", "mac", 100, 1'800'000'000'000, std::nullopt};
  ASSERT_TRUE(InsertToken(db(), t).ok());
  ASSERT_TRUE(InsertToken(db(), {"tok2", bob, "session", "", "mac2", 101, std::nullopt, std::nullopt}).ok());
  ASSERT_TRUE(TouchToken(db(), "tok1", 1'700'000'000'123).ok());
  auto got = GetToken(db(), "tok1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->expires_ms, 1'800'000'000'000);
  EXPECT_EQ((*got)->last_used_ms, 1'700'000'000'123);
  EXPECT_EQ(ListTokenRows(db(), bob)->size(), 2u);
  EXPECT_FALSE(*DeleteToken(db(), "tok1", alice));  // not alice's
  EXPECT_TRUE(*DeleteToken(db(), "tok1", 0));
  ASSERT_TRUE(DeleteSessions(db(), bob).ok());
  EXPECT_EQ(*DeleteTokensOf(db(), bob), 0);
  EXPECT_TRUE(*DeleteGroup(db(), "ml"));
  EXPECT_FALSE(*DeleteGroup(db(), "ml"));
  EXPECT_EQ(*CountJobsOf(db(), bob), 0);
  EXPECT_EQ(*CountReservationsOf(db(), bob), 0);
  ASSERT_TRUE(DeleteUser(db(), bob).ok());
  EXPECT_FALSE(FindUserById(db(), bob)->has_value());
}

TEST_P(DomainStoreTest, ReservationsAndTheirPolicies) {
  const int64_t alice = AddUser("alice");
  const int64_t t0 = 1'700'000'000'000, h = 3'600'000;
  reserve::Reservation r;
  r.owner_id = alice;
  r.node = "n1";
  r.gpus = {0, 1};
  r.gpu_uuids = {"GPU-0", "GPU-1"};
  r.title = "train";
  r.start_ms = t0;
  r.end_ms = t0 + 2 * h;
  r.created_ms = r.updated_ms = t0 - h;
  auto id = InsertReservation(db(), r);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto got = GetReservation(db(), *id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->owner, "alice");
  EXPECT_EQ(got->gpus, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(ActiveReservationsOn(db(), "n1", t0 + h)->size(), 1u);
  EXPECT_EQ(OverlappingReservations(db(), t0 + h, t0 + 3 * h)->size(), 1u);
  EXPECT_EQ(OwnerReservations(db(), alice, t0, t0 + h, 0)->size(), 1u);
  EXPECT_EQ(OwnerReservations(db(), alice, t0, t0 + h, *id)->size(), 0u);
  EXPECT_EQ(RecentReservations(db(), t0 + h)->size(), 1u);
  auto busy = BusyGpus(db(), "n1", {1, 2}, t0 + h, t0 + 3 * h, 0);
  ASSERT_TRUE(busy.ok()) << busy.status().ToString();
  ASSERT_EQ(busy->size(), 1u);
  EXPECT_EQ((*busy)[0].gpu, 1u);
  EXPECT_EQ((*busy)[0].owner, "alice");

  ReservationFilter f;
  f.node = "n1";
  f.state = reserve::State::kRunning;
  f.now_ms = t0 + h;
  EXPECT_EQ(ListReservations(db(), f)->size(), 1u);
  f = {};
  f.owner_id = alice;
  f.from_ms = t0 + 3 * h;
  EXPECT_EQ(ListReservations(db(), f)->size(), 0u);

  got->title = "train 2";
  got->end_ms = t0 + 3 * h;
  ASSERT_TRUE(UpdateReservation(db(), *got).ok());
  ASSERT_TRUE(MarkReservationIdle(db(), *id, t0 + h, t0 + h + 60'000, true).ok());
  ASSERT_TRUE(StoreReservationAverages(db(), *id, 12.5, std::nullopt).ok());
  got = GetReservation(db(), *id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->title, "train 2");
  EXPECT_EQ(got->end_ms, t0 + h + 60'000);
  EXPECT_EQ(got->avg_util_gpu, 12.5);
  EXPECT_EQ(got->avg_util_mem, std::nullopt);
  EXPECT_EQ(got->idle_notified_ms, t0 + h);
  auto util = GpuUtilFromMinutes(db(), "n1", {0, 1}, t0, t0 + h);
  ASSERT_TRUE(util.ok()) << util.status().ToString();
  EXPECT_EQ(util->first, std::nullopt);

  reserve::Policy p;
  p.name = "short";
  p.max_duration_ms = 4 * h;
  auto pol = InsertReservationPolicy(db(), p, t0);
  ASSERT_TRUE(pol.ok()) << pol.status().ToString();
  EXPECT_EQ(pol->max_duration_ms, 4 * h);
  EXPECT_EQ(InsertReservationPolicy(db(), p, t0).status().code(), StatusCode::kAlreadyExists);
  p.max_duration_ms = 2 * h;
  ASSERT_TRUE(UpdateReservationPolicy(db(), pol->id, p, t0 + 1).ok());
  EXPECT_EQ(LoadReservationPolicies(db())->at(0).max_duration_ms, 2 * h);
  ASSERT_TRUE(DeleteReservationPolicy(db(), pol->id).ok());
  EXPECT_EQ(DeleteReservationPolicy(db(), pol->id).code(), StatusCode::kNotFound);
  // A user who still owns reservations cannot be deleted (foreign key).
  EXPECT_EQ(DeleteUser(db(), alice).code(), StatusCode::kConflict);
}

TEST_P(DomainStoreTest, ViolationsAndPowerEvents) {
  const int64_t alice = AddUser("alice");
  ViolationRow v;
  v.node = "n1";
  v.gpu = 3;
  v.uid = 1000;
  v.unix_user = "alice";
  v.user_id = alice;
  v.mode = "kill";
  v.opened_ms = 1'700'000'000'000;
  auto id = InsertViolation(db(), v);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(InsertViolationEvent(db(), *id, {0, v.opened_ms + 1, "warned", "ok", "", "[1]"}).ok());
  ASSERT_TRUE(SetViolationProcesses(db(), *id, "[{\"pid\":1}]").ok());
  EXPECT_EQ(OpenViolations(db())->size(), 1u);
  ViolationFilter f;
  f.user = "alice";
  f.from_ms = v.opened_ms;
  auto list = ListViolations(db(), f);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].username, "alice");
  EXPECT_EQ((*list)[0].last_action, "warned");
  EXPECT_EQ((*list)[0].reservation_id, 0);
  ASSERT_TRUE(ResolveViolation(db(), *id, v.opened_ms + 5, "gone").ok());
  f.state = "resolved";
  f.from_ms = v.opened_ms + 10;  // closed before
  EXPECT_EQ(ListViolations(db(), f)->size(), 0u);
  EXPECT_EQ(GetViolation(db(), *id)->closed_ms, v.opened_ms + 5);
  EXPECT_EQ(ViolationEvents(db(), *id)->size(), 1u);

  power::PowerPolicy pp;
  pp.name = "cap";
  pp.watts = 250;
  auto pol = InsertPowerPolicy(db(), pp, 5);
  ASSERT_TRUE(pol.ok()) << pol.status().ToString();
  EXPECT_EQ(InsertPowerPolicy(db(), pp, 5).status().code(), StatusCode::kConflict);
  pp.watts = 300;
  EXPECT_EQ(UpdatePowerPolicy(db(), pol->id, pp, 6)->watts, 300u);
  EXPECT_EQ(LoadPowerPolicies(db())->size(), 1u);
  EXPECT_TRUE(DeletePowerPolicy(db(), pol->id).ok());
  PowerEvent e;
  e.t_ms = 100;
  e.action = "set";
  e.node = "n1";
  e.gpu = 0;
  e.limit_mw = 250'000;
  ASSERT_TRUE(AddPowerEvents(db(), {e, e}).ok());
  PowerEventQuery q;
  q.node = "n1";
  auto events = ListPowerEvents(db(), q);  // from INT64_MIN to INT64_MAX
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].limit_mw, 250'000u);
  EXPECT_EQ((*events)[0].previous_mw, std::nullopt);
}

TEST_P(DomainStoreTest, AuditTrailNodesAndSchedulerSettings) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(InsertAuthEvent(db(), {0, 10 + i, "password_changed", "", "alice", "alice", ""}).ok());
  }
  auto events = ListAuthEvents(db(), 0, 2);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].t_ms, 12);
  EXPECT_EQ(ListAuthEvents(db(), (*events)[1].id, 10)->size(), 1u);

  ASSERT_TRUE(PutNodeDrain(db(), {"n1", "disk", "alice", 5}).ok());
  ASSERT_TRUE(PutNodeDrain(db(), {"n1", "fans", "bob", 6}).ok());
  auto drains = LoadNodeDrains(db());
  ASSERT_TRUE(drains.ok());
  ASSERT_EQ(drains->size(), 1u);
  EXPECT_EQ((*drains)[0].reason, "fans");
  ASSERT_TRUE(DeleteNodeDrain(db(), "n1").ok());

  ASSERT_TRUE(InsertNodeCredential(db(), {"n1", "hash1", 5, "10.0.0.1"}).ok());
  EXPECT_EQ(InsertNodeCredential(db(), {"n1", "hash2", 5, ""}).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(InsertNodeCredential(db(), {"n2", "hash1", 5, ""}).code(), StatusCode::kConflict);
  EXPECT_EQ(LoadNodeCredentials(db())->size(), 1u);
  EXPECT_TRUE(*DeleteNodeCredential(db(), "n1"));
  EXPECT_FALSE(*DeleteNodeCredential(db(), "n1"));

  SshNodeRow n;
  n.name = "s1";
  n.url = "ssh://root@h";
  n.gpus = 2;
  n.created_ms = 7;
  ASSERT_TRUE(InsertSshNode(db(), n).ok());
  EXPECT_EQ(InsertSshNode(db(), n).code(), StatusCode::kConflict);
  EXPECT_EQ(LoadSshNodes(db())->at(0).gpus, 2);
  ASSERT_TRUE(PutSshTask(db(), {"t1", "s1", "alice", 8}).ok());
  ASSERT_TRUE(PutSshTask(db(), {"t1", "s1", "bob", 9}).ok());
  auto tasks = LoadSshTasks(db());
  ASSERT_TRUE(tasks.ok());
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ((*tasks)[0].unix_user, "bob");
  ASSERT_TRUE(DeleteSshTask(db(), "t1").ok());
  ASSERT_TRUE(DeleteSshNode(db(), "s1").ok());

  ASSERT_TRUE(InsertQueue(db(), {"gpu", "{}", 1, 1}).ok());
  EXPECT_EQ(InsertQueue(db(), {"gpu", "{}", 1, 1}).code(), StatusCode::kConflict);
  ASSERT_TRUE(PutQueue(db(), {"gpu", "{\"a\":1}", 1, 2}).ok());
  EXPECT_EQ(LoadQueues(db())->at(0).spec_json, "{\"a\":1}");
  ASSERT_TRUE(DeleteQueue(db(), "gpu").ok());
  ASSERT_TRUE(PutQuota(db(), {"user", "alice", "{}", 1}).ok());
  ASSERT_TRUE(PutQuota(db(), {"user", "alice", "{\"g\":2}", 2}).ok());
  EXPECT_EQ(LoadQuotas(db())->at(0).updated_ms, 2);
  ASSERT_TRUE(DeleteQuota(db(), "user", "alice").ok());
  EXPECT_TRUE(LoadQuotas(db())->empty());
}

}  // namespace
}  // namespace rota::store
