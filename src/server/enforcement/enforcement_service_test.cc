#include "server/enforcement/enforcement_service.h"

#include <gtest/gtest.h>

#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

// Working fakes for the seams: a reservation table, a user directory, an agent
// that holds command callbacks until the test answers them, and a mail outbox.
struct Fakes {
  std::vector<enforce::ReservationView> reservations;
  enforce::EnforcementSettings node_default;
  struct Sent {
    std::string node;
    CommandRequest request;
    std::function<void(CommandOutcome)> done;
  };
  std::vector<Sent> commands;
  std::vector<EmailRequest> mails;
  std::vector<std::function<void(EmailDelivery)>> mail_done;  // answered by the test

  EnforcementHooks Hooks() {
    EnforcementHooks h;
    h.active_reservations = [this](const std::string& node, int64_t now) {
      std::vector<enforce::ReservationView> out;
      for (const auto& r : reservations) {
        if (r.node == node && r.start_ms <= now && now < r.end_ms) out.push_back(r);
      }
      return out;
    };
    h.node_default = [this](const std::string&) { return node_default; };
    h.find_user_by_unix = [](const std::string&,
                             const std::string& unix_user) -> std::optional<UserContact> {
      if (unix_user == "bob") return UserContact{2, "robert", "bob@example.org"};
      return std::nullopt;
    };
    h.get_user = [](int64_t id) -> std::optional<UserContact> {
      if (id == 1) return UserContact{1, "alice", "alice@example.org"};
      return std::nullopt;
    };
    h.admin_emails = [] {
      return std::vector<std::string>{"root@example.org", "alice@example.org"};
    };
    h.send_command = [this](const std::string& node, const CommandRequest& req,
                            std::function<void(CommandOutcome)> done) {
      commands.push_back({node, req, std::move(done)});
    };
    h.send_email = [this](EmailRequest m, std::function<void(EmailDelivery)> done) {
      mails.push_back(std::move(m));
      mail_done.push_back(std::move(done));
    };
    return h;
  }
};

api::GpuProcess Proc(uint32_t pid, uint32_t uid, const std::string& user) {
  api::GpuProcess p;
  p.pid = pid;
  p.uid = uid;
  p.user = user;
  p.command = "python steal.py";
  p.start_time_ms = 1000;
  return p;
}

api::NodeSample Sample(int64_t t, std::vector<api::GpuProcess> on_gpu1) {
  api::NodeSample s;
  s.time_ms = t;
  for (uint32_t i = 0; i < 2; ++i) {
    api::GpuSample g;
    g.index = i;
    g.uuid = "GPU-" + std::to_string(i);
    if (i == 1) g.processes = on_gpu1;
    s.gpus.push_back(g);
  }
  return s;
}

class EnforcementServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), {}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    audit_ = std::make_unique<AuditLog>(store_.get());
    enforce::ReservationView r;
    r.id = 7;
    r.owner_id = 1;
    r.owner_username = "alice";
    r.owner_unix_user = "alice";
    r.title = "thesis";
    r.node = "node-a";
    r.gpus = {1};
    r.start_ms = kT0 - 1000;
    r.end_ms = kT0 + 3'600'000;
    fakes_.reservations = {r};
    service_ = std::make_unique<EnforcementService>(audit_.get(), fakes_.Hooks(), clock_);
  }

  // Moves the clock to kT0 + offset and delivers a sample taken then.
  void SampleAt(int64_t offset, std::vector<api::GpuProcess> procs) {
    clock_.SetMs(kT0 + offset);
    service_->OnSample("node-a", Sample(kT0 + offset, std::move(procs)));
  }

  ViolationRecord Only() {
    auto list = audit_->List({});
    EXPECT_TRUE(list.ok());
    EXPECT_EQ(list->size(), 1u);
    auto v = audit_->Get(list->empty() ? 0 : list->front().id);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : ViolationRecord{};
  }

  std::vector<std::string> Events(const ViolationRecord& v) {
    std::vector<std::string> out;
    for (const auto& e : v.events)
      out.push_back(e.action + (e.outcome.empty() ? "" : ":" + e.outcome));
    return out;
  }

  store::testing::TempDir dir_;
  FakeClock clock_{kT0};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<AuditLog> audit_;
  Fakes fakes_;
  std::unique_ptr<EnforcementService> service_;
};

TEST_F(EnforcementServiceTest, OwnerIsLeftAlone) {
  SampleAt(0, {Proc(10, 1001, "alice")});
  EXPECT_TRUE(fakes_.commands.empty());
  EXPECT_TRUE(audit_->List({})->empty());
}

TEST_F(EnforcementServiceTest, RunsTheWholeLadderAndAuditsEveryStep) {
  SampleAt(0, {Proc(10, 1002, "bob")});
  ASSERT_EQ(fakes_.commands.size(), 1u);
  EXPECT_EQ(fakes_.commands[0].node, "node-a");
  EXPECT_EQ(fakes_.commands[0].request.action, "warn");
  EXPECT_EQ(fakes_.commands[0].request.uid, 1002u);
  EXPECT_NE(fakes_.commands[0].request.message.find("reserved by alice"), std::string::npos)
      << fakes_.commands[0].request.message;
  // The agent answers later, from another thread in production.
  fakes_.commands[0].done({true, {}, {"pts/3", "pts/4"}, ""});

  SampleAt(59'999, {Proc(10, 1002, "bob")});
  EXPECT_TRUE(fakes_.mails.empty());
  SampleAt(60'000, {Proc(10, 1002, "bob")});
  ASSERT_EQ(fakes_.mails.size(), 2u);
  EXPECT_EQ(fakes_.mails[0].kind, "violation_offender");
  EXPECT_EQ(fakes_.mails[0].to, std::vector<std::string>{"bob@example.org"});
  EXPECT_EQ(fakes_.mails[0].offender_username, "robert");
  EXPECT_EQ(fakes_.mails[1].kind, "violation_owner");
  EXPECT_EQ(fakes_.mails[1].to,
            (std::vector<std::string>{"alice@example.org", "root@example.org"}));
  EXPECT_EQ(fakes_.mails[1].term_at_ms, kT0 + 300'000);
  EXPECT_EQ(fakes_.mails[1].reservation_title, "thesis");
  // The mailer reports later: one delivered, one refused.
  ASSERT_EQ(fakes_.mail_done.size(), 2u);
  fakes_.mail_done[0]({"sent", ""});
  fakes_.mail_done[1]({"failed", "smtp://mx: recipient refused: 550 no such user"});

  SampleAt(300'000, {Proc(10, 1002, "bob"), Proc(11, 1002, "bob")});
  ASSERT_EQ(fakes_.commands.size(), 2u);
  const CommandRequest& term = fakes_.commands[1].request;
  EXPECT_EQ(term.action, "signal");
  EXPECT_EQ(term.signal, "TERM");
  ASSERT_EQ(term.targets.size(), 2u);
  EXPECT_EQ(term.targets[0].pid, 10u);
  EXPECT_EQ(term.targets[0].start_time_ms, 1000);
  EXPECT_EQ(term.targets[0].gpu, 1u);
  fakes_.commands[1].done({true, {{10, "signalled", ""}, {11, "denied", "EPERM"}}, {}, ""});

  SampleAt(330'000, {Proc(11, 1002, "bob")});
  ASSERT_EQ(fakes_.commands.size(), 3u);
  EXPECT_EQ(fakes_.commands[2].request.signal, "KILL");
  ASSERT_EQ(fakes_.commands[2].request.targets.size(), 1u);
  EXPECT_EQ(fakes_.commands[2].request.targets[0].pid, 11u);
  fakes_.commands[2].done({false, {}, {}, "node node-a is unreachable"});

  SampleAt(332'000, {});
  ViolationRecord v = Only();
  EXPECT_EQ(v.state, "resolved");
  EXPECT_EQ(v.resolution, "killed");
  EXPECT_EQ(v.user_id, 2);
  EXPECT_EQ(v.processes.size(), 2u);
  EXPECT_EQ(Events(v),
            (std::vector<std::string>{"open", "warn:sent", "warn_result:ok", "email:queued",
                                      "email_result:sent", "email_result:failed", "update",
                                      "term:sent", "term_result:partial", "update", "kill:sent",
                                      "kill_result:failed", "resolve"}));
  EXPECT_EQ(v.events[2].detail, "written to 2 terminal(s): pts/3, pts/4");
  EXPECT_EQ(v.events[3].detail,
            "offender: bob@example.org; owner and admins: alice@example.org, root@example.org");
  EXPECT_EQ(v.events[4].detail, "to bob@example.org");
  EXPECT_EQ(
      v.events[5].detail,
      "to alice@example.org, root@example.org: smtp://mx: recipient refused: 550 no such user");
  EXPECT_EQ(v.events[8].pids,
            (std::vector<EventPid>{{10, 1000, "signalled", ""}, {11, 1000, "denied", "EPERM"}}));
  EXPECT_EQ(v.events[11].detail, "node node-a is unreachable");
}

TEST_F(EnforcementServiceTest, DryRunRecordsWhatWouldHappen) {
  fakes_.reservations[0].settings.dry_run = true;
  for (int64_t t : {0, 60'000, 300'000, 330'000}) SampleAt(t, {Proc(10, 1002, "bob")});
  SampleAt(331'000, {});
  EXPECT_TRUE(fakes_.commands.empty());
  EXPECT_TRUE(fakes_.mails.empty());
  ViolationRecord v = Only();
  EXPECT_TRUE(v.dry_run);
  EXPECT_EQ(Events(v), (std::vector<std::string>{"open:dry_run", "warn:dry_run", "email:dry_run",
                                                 "term:dry_run", "kill:dry_run", "resolve"}));
  EXPECT_EQ(v.events[3].detail, "dry-run: would SIGTERM pids 10");
  EXPECT_EQ(v.events[4].detail, "dry-run: would SIGKILL pids 10");
  EXPECT_EQ(v.resolution, "killed");
}

TEST_F(EnforcementServiceTest, MailDisabledIsRecordedAsSkippedAndTheLadderGoesOn) {
  EnforcementHooks hooks = fakes_.Hooks();
  hooks.send_email = nullptr;  // no smtp_url
  service_ = std::make_unique<EnforcementService>(audit_.get(), hooks, clock_);
  for (int64_t t : {0, 60'000, 300'000}) SampleAt(t, {Proc(10, 1002, "bob")});
  ViolationRecord v = Only();
  std::vector<std::string> events = Events(v);
  // open, warn (its answer is held by the fake agent), email, term.
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2], "email:skipped");
  EXPECT_NE(v.events[2].detail.find("mail is disabled"), std::string::npos) << v.events[2].detail;
  EXPECT_NE(v.events[2].detail.find("bob@example.org"), std::string::npos) << v.events[2].detail;
  EXPECT_EQ(events[3], "term:sent");
}

TEST_F(EnforcementServiceTest, ReplayedAndStaleSamplesAreNotJudged) {
  SampleAt(10'000, {});
  clock_.SetMs(kT0 + 20'000);
  service_->OnSample("node-a", Sample(kT0 + 5'000, {Proc(10, 1002, "bob")}));   // older than judged
  service_->OnSample("node-a", Sample(kT0 + 10'000, {Proc(10, 1002, "bob")}));  // same time
  clock_.SetMs(kT0 + 700'000);
  service_->OnSample("node-a", Sample(kT0 + 20'000, {Proc(10, 1002, "bob")}));  // > 5 min old
  EXPECT_TRUE(fakes_.commands.empty());
  EXPECT_TRUE(audit_->List({})->empty());
}

TEST_F(EnforcementServiceTest, StrictModeOnUnreservedGpu) {
  fakes_.reservations.clear();
  SampleAt(0, {Proc(10, 1002, "bob")});
  EXPECT_TRUE(fakes_.commands.empty());
  fakes_.node_default.mode = "strict";
  SampleAt(1000, {Proc(10, 1002, "bob")});
  ASSERT_EQ(fakes_.commands.size(), 1u);
  EXPECT_NE(fakes_.commands[0].request.message.find("without a reservation"), std::string::npos);
  SampleAt(61'000, {Proc(10, 1002, "bob")});  // G1 after the violation opened at 1 s
  ASSERT_EQ(fakes_.mails.size(), 2u);         // offender; admins (no owner)
  EXPECT_EQ(fakes_.mails[1].to,
            (std::vector<std::string>{"root@example.org", "alice@example.org"}));
  EXPECT_EQ(Only().reservation_id, 0);
}

TEST_F(EnforcementServiceTest, ReservationEndResolves) {
  SampleAt(0, {Proc(10, 1002, "bob")});
  fakes_.reservations.clear();
  SampleAt(2000, {Proc(10, 1002, "bob")});
  ViolationRecord v = Only();
  EXPECT_EQ(v.state, "resolved");
  EXPECT_EQ(v.resolution, "reservation ended");
}

TEST_F(EnforcementServiceTest, RecoverContinuesTheLadderAfterRestart) {
  SampleAt(0, {Proc(10, 1002, "bob")});
  SampleAt(300'000, {Proc(10, 1002, "bob")});  // email + TERM
  ASSERT_EQ(fakes_.commands.size(), 2u);
  service_.reset();  // server stops; the term callback is still pending
  fakes_.commands[1].done({true, {{10, "signalled", ""}}, {}, ""});  // dropped, no crash

  Fakes fresh;
  fresh.reservations = fakes_.reservations;
  service_ = std::make_unique<EnforcementService>(audit_.get(), fresh.Hooks(), clock_);
  ASSERT_TRUE(service_->Recover().ok());
  ASSERT_EQ(service_->OpenViolations().size(), 1u);
  SampleAt(310'000, {Proc(10, 1002, "bob")});
  EXPECT_TRUE(fresh.commands.empty());  // no second warning, no second TERM
  EXPECT_TRUE(fresh.mails.empty());     // no second email
  SampleAt(330'000, {Proc(10, 1002, "bob")});
  ASSERT_EQ(fresh.commands.size(), 1u);
  EXPECT_EQ(fresh.commands[0].request.signal, "KILL");
  EXPECT_EQ(Only().state, "open");
}

TEST_F(EnforcementServiceTest, NodeLostResolves) {
  SampleAt(0, {Proc(10, 1002, "bob")});
  service_->OnNodeLost("node-a");
  EXPECT_TRUE(service_->OpenViolations().empty());
  EXPECT_EQ(Only().resolution, "node unreachable");
  // bob still runs when the node returns: a new violation opens.
  SampleAt(1000, {Proc(10, 1002, "bob")});
  EXPECT_EQ(audit_->List({})->size(), 2u);
}

TEST(WarningMessageTest, NamesProcessesOwnerAndDeadlines) {
  enforce::Action a;
  a.opened_ms = kT0;
  a.offence.node = "node-a";
  a.offence.gpu = 3;
  a.offence.reservation_id = 7;
  a.offence.reservation_owner_username = "alice";
  a.offence.reservation_title = "thesis";
  a.offence.reservation_end_ms = kT0 + 3'600'000;
  a.pids = {{10, 0, ""}, {11, 0, ""}};
  EXPECT_EQ(WarningMessage(a),
            "rota: your processes 10, 11 use GPU 3 of node-a, reserved by alice until "
            "2023-11-14T23:13:20Z (reservation 7 'thesis'). Stop them now: they will be sent "
            "SIGTERM at 2023-11-14T22:18:20Z and SIGKILL 30 s later.");
}

}  // namespace
}  // namespace rota::server
