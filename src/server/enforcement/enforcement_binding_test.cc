#include "server/enforcement/enforcement_binding.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "notify/notifier.h"
#include "server/audit.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

using api::Json;
using enforce::EnforcementSettings;

reserve::Policy MakePolicy(int64_t id, const std::string& name, Json enforcement,
                           std::vector<std::string> users = {},
                           std::vector<std::string> nodes = {}) {
  reserve::Policy p;
  p.id = id;
  p.name = name;
  p.users = std::move(users);
  p.nodes = std::move(nodes);
  p.enforcement = std::move(enforcement);
  return p;
}

const std::vector<reserve::NodeGpu> kGpus = {{0, "GPU-0", "NVIDIA A100"}};
const EnforcementOwner kAlice{"alice", {}, false};

TEST(ParsePolicyEnforcementTest, ReadsSettingsAndOwnerLimits) {
  EnforcementSettings defaults;
  defaults.grace_email_ms = 1000;
  auto p = ParsePolicyEnforcement(
      Json{{"mode", "strict"}, {"grace_term_ms", 120000}, {"owner_limits", {{"allow_disable", true}}}},
      defaults);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->settings.mode, "strict");
  EXPECT_EQ(p->settings.grace_term_ms, 120000);
  EXPECT_EQ(p->settings.grace_email_ms, 1000);  // from the defaults
  EXPECT_TRUE(p->owner_limits.allow_disable);
}

TEST(ParsePolicyEnforcementTest, RejectsBadSectionsNamingTheField) {
  // Tried: not an object, unknown mode, unknown key, wrong type, negative grace,
  // email after SIGTERM, malformed owner limits.
  const std::vector<std::pair<Json, std::string>> bad = {
      {Json::array(), "enforcement"},
      {Json{{"mode", "warn"}}, "mode"},
      {Json{{"colour", "red"}}, "colour"},
      {Json{{"dry_run", "yes"}}, "dry_run"},
      {Json{{"grace_kill_ms", -5}}, "grace_kill_ms"},
      {Json{{"grace_email_ms", 600000}, {"grace_term_ms", 1000}}, "grace_email_ms"},
      {Json{{"owner_limits", {{"min_grace_term_ms", "soon"}}}}, "owner_limits"},
  };
  for (const auto& [j, field] : bad) {
    auto p = ParsePolicyEnforcement(j, {});
    ASSERT_FALSE(p.ok()) << j.dump();
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << j.dump();
    EXPECT_NE(p.status().message().find(field), std::string::npos) << p.status().message();
  }
}

TEST(EnforcementSettingsForTest, DefaultsWhenNoPolicyApplies) {
  EnforcementSettings defaults;
  defaults.grace_term_ms = 90'000;
  // A policy for bob only and one for another node do not apply to alice on gpu-a.
  std::vector<reserve::Policy> policies = {
      MakePolicy(1, "bobs", Json{{"mode", "strict"}}, {"bob"}),
      MakePolicy(2, "elsewhere", Json{{"mode", "off"}}, {}, {"gpu-z"}),
      MakePolicy(3, "no-section", Json::object()),
  };
  auto s = EnforcementSettingsFor(policies, kAlice, "gpu-a", kGpus, Json::object(), defaults);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(*s, defaults);
}

TEST(EnforcementSettingsForTest, LowestIdApplyingPolicyWins) {
  std::vector<reserve::Policy> policies = {
      MakePolicy(9, "late", Json{{"mode", "off"}}),
      MakePolicy(4, "early", Json{{"mode", "strict"}, {"dry_run", true}}),
  };
  auto s = EnforcementSettingsFor(policies, kAlice, "gpu-a", kGpus, Json(), {});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->mode, "strict");
  EXPECT_TRUE(s->dry_run);
}

TEST(EnforcementSettingsForTest, OwnerOverridesStayWithinThePolicysLimits) {
  std::vector<reserve::Policy> policies = {MakePolicy(
      1, "lab", Json{{"owner_limits", {{"min_grace_term_ms", 120000}, {"allow_disable", false}}}})};
  auto ok = EnforcementSettingsFor(policies, kAlice, "gpu-a", kGpus,
                                   Json{{"grace_term_ms", 150000}, {"exempt_users", {"carol"}}}, {});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->grace_term_ms, 150000);
  EXPECT_EQ(ok->exempt_users, std::vector<std::string>{"carol"});

  auto fast = EnforcementSettingsFor(policies, kAlice, "gpu-a", kGpus, Json{{"grace_term_ms", 60000}}, {});
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(fast.status().message().find("policy 'lab'"), std::string::npos) << fast.status().message();

  auto off = EnforcementSettingsFor(policies, kAlice, "gpu-a", kGpus, Json{{"mode", "off"}}, {});
  EXPECT_EQ(off.status().code(), StatusCode::kPermissionDenied);
  auto junk = EnforcementSettingsFor(policies, kAlice, "gpu-a", kGpus, Json{{"mode", 3}}, {});
  EXPECT_EQ(junk.status().code(), StatusCode::kInvalidArgument);

  // Admins are not bound by owner limits.
  EnforcementOwner admin{"root", {}, true};
  auto by_admin = EnforcementSettingsFor(policies, admin, "gpu-a", kGpus, Json{{"mode", "off"}}, {});
  ASSERT_TRUE(by_admin.ok()) << by_admin.status().ToString();
  EXPECT_EQ(by_admin->mode, "off");
}

TEST(EnforcementSettingsForTest, ServerDefaultsComeFromTheConfig) {
  ServerConfig config;
  config.enforcement_mode = "strict";
  config.grace_email_ms = 5'000;
  config.exempt_commands = {"Xorg"};
  auto s = DefaultEnforcementSettings(config);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->mode, "strict");
  EXPECT_EQ(s->grace_email_ms, 5'000);
  EXPECT_EQ(s->exempt_commands, std::vector<std::string>{"Xorg"});
  config.grace_email_ms = config.grace_term_ms + 1;  // email after SIGTERM: inconsistent
  EXPECT_EQ(DefaultEnforcementSettings(config).status().code(), StatusCode::kInvalidArgument);
}

// enforcement_min_uid: 1000 by default (root and system accounts are never judged),
// validated, and carried into the defaults every policy and reservation starts from.
TEST(EnforcementSettingsForTest, MinUidComesFromTheConfigAndIsValidated) {
  ServerConfig config;
  EXPECT_EQ(DefaultEnforcementSettings(config)->min_uid, 1000u);
  ASSERT_TRUE(ApplySetting(&config, "enforcement_min_uid", "500", "env X").ok());
  auto s = DefaultEnforcementSettings(config);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->min_uid, 500u);
  EXPECT_NE(ConfigToYaml(config).find("enforcement_min_uid: 500"), std::string::npos);
  for (const char* bad : {"-1", "root", "4294967295", ""}) {
    Status st = ApplySetting(&config, "enforcement_min_uid", bad, "env X");
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
  }
  // A policy's settings and an owner's overrides keep it.
  auto policy = ParsePolicyEnforcement(Json{{"mode", "strict"}}, *s);
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EXPECT_EQ(policy->settings.min_uid, 500u);
  EXPECT_FALSE(ParsePolicyEnforcement(Json{{"min_uid", 0}}, *s).ok());
}

// The runner judges samples off the ingest thread and hands node losses on.
TEST(EnforcementRunnerTest, FeedsSamplesAndLossesToTheService) {
  store::testing::TempDir dir;
  FakeClock clock(1'700'000'000'000);
  auto store = store::Store::Open(dir.path(), {}, clock);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  AuditLog audit(store->get());
  std::atomic<int> asked{0};
  EnforcementHooks hooks;
  hooks.active_reservations = [&](const std::string& node, int64_t now) {
    ++asked;
    enforce::ReservationView r;
    r.id = 1;
    r.owner_id = 1;
    r.owner_username = "alice";
    r.owner_unix_user = "alice";
    r.node = node;
    r.gpus = {0};
    r.start_ms = now - 1000;
    r.end_ms = now + 3'600'000;
    return std::vector<enforce::ReservationView>{r};
  };
  std::atomic<int> commands{0};
  hooks.send_command = [&](const std::string&, const CommandRequest&,
                           std::function<void(CommandOutcome)> done) {
    ++commands;
    done(CommandOutcome{true, {}, {}, ""});
  };
  EnforcementService service(&audit, hooks, clock);
  ClusterState cluster(3);
  api::NodeInfo info;
  info.name = "n1";
  info.node_id = "id-1";
  info.sample_interval_ms = 1000;
  ASSERT_TRUE(cluster.Connect(info, 1, clock.NowMs()).ok());
  EnforcementRunner runner(&service, &cluster);

  api::NodeSample s;
  s.time_ms = clock.NowMs();
  api::GpuSample g;
  g.index = 0;
  api::GpuProcess p;
  p.pid = 42;
  p.uid = 1002;
  p.user = "bob";
  p.command = "python x.py";
  p.start_time_ms = 1000;
  g.processes = {p};
  s.gpus = {g};
  cluster.RecordSample("n1", 1, s, clock.NowMs());
  ASSERT_TRUE(runner.Drain(5000));
  EXPECT_GE(asked.load(), 1);
  EXPECT_EQ(commands.load(), 1);  // the warning
  auto open = audit.List({});
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 1u);
  EXPECT_EQ(open->front().state, "open");

  cluster.Disconnect("n1", 1, clock.NowMs());  // the node is lost: its violations resolve
  ASSERT_TRUE(runner.Drain(5000));
  auto v = audit.Get(open->front().id);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->state, "resolved");
  EXPECT_EQ(v->resolution, "node unreachable");
}

// A loopback port nothing listens on (bound, then closed).
uint16_t ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ADD_FAILURE() << "cannot bind a loopback port";
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

// Mail the SMTP server never takes: the violation says it was queued at the
// time, then that delivery failed and why (not "sent").
TEST(MailHookTest, UndeliverableMailIsAuditedAsFailed) {
  store::testing::TempDir dir;
  FakeClock clock(1'700'000'000'000);
  auto store = store::Store::Open(dir.path(), {}, clock);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  AuditLog audit(store->get());
  notify::SmtpConfig smtp;
  smtp.url = "smtp://127.0.0.1:" + std::to_string(ClosedPort());
  smtp.from = "rota@example.test";
  smtp.timeout_ms = 5000;
  notify::Notifier notifier(smtp, clock);
  ASSERT_TRUE(notifier.enabled());

  const int64_t t0 = clock.NowMs();
  EnforcementHooks hooks;
  hooks.active_reservations = [&](const std::string& node, int64_t) {
    enforce::ReservationView r;
    r.id = 1;
    r.owner_id = 1;
    r.owner_username = "alice";
    r.owner_unix_user = "alice";
    r.node = node;
    r.gpus = {0};
    r.start_ms = t0 - 1000;
    r.end_ms = t0 + 3'600'000;
    return std::vector<enforce::ReservationView>{r};
  };
  hooks.find_user_by_unix = [](const std::string&, const std::string&) {
    return std::optional<UserContact>(UserContact{2, "bob", "bob@example.test"});
  };
  hooks.get_user = [](int64_t) {
    return std::optional<UserContact>(UserContact{1, "alice", "alice@example.test"});
  };
  hooks.send_command = [](const std::string&, const CommandRequest&,
                          std::function<void(CommandOutcome)> done) {
    done(CommandOutcome{true, {}, {}, ""});
  };
  hooks.send_email = MakeMailHook(&notifier, "");
  EnforcementService service(&audit, hooks, clock);

  api::NodeSample s;
  api::GpuSample g;
  g.index = 0;
  api::GpuProcess p;
  p.pid = 42;
  p.uid = 1002;
  p.user = "bob";
  p.command = "python x.py";
  p.start_time_ms = 1000;
  g.processes = {p};
  s.gpus = {g};
  for (int64_t offset : {0, 60'000}) {  // the violation, then the email after G1
    clock.SetMs(t0 + offset);
    s.time_ms = clock.NowMs();
    service.OnSample("n1", s);
  }
  ASSERT_TRUE(notifier.Flush(15'000));  // delivery reports are in when it returns
  auto list = audit.List({});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  auto v = audit.Get(list->front().id);
  ASSERT_TRUE(v.ok());
  std::vector<std::string> email_outcomes;
  for (const auto& e : v->events) {
    if (e.action == "email") email_outcomes.push_back("email:" + e.outcome);
    if (e.action != "email_result") continue;
    email_outcomes.push_back("result:" + e.outcome);
    EXPECT_NE(e.detail.find(smtp.url), std::string::npos) << e.detail;  // the mailer's reason
  }
  EXPECT_EQ(email_outcomes,
            (std::vector<std::string>{"email:queued", "result:failed", "result:failed"}));
}

}  // namespace
}  // namespace rota::server
