#include "enforce/ladder.h"

#include <gtest/gtest.h>

#include "enforce/enforce_test_util.h"

namespace rota::enforce {
namespace {

using testing::Proc;
using testing::Reservation;
using testing::Sample;

constexpr int64_t kT0 = 1'000'000;

// bob (uid 1002) offending on alice's reservation 7, GPU 1 of node-a, with
// graces G1 = 60 s, G2 = 300 s, G3 = 30 s.
Offence BobOffence(std::vector<OffendingProcess> procs = {{10, 1000, "python train.py"}}) {
  Offence o;
  o.node = "node-a";
  o.gpu = 1;
  o.gpu_uuid = "GPU-1";
  o.uid = 1002;
  o.unix_user = "bob";
  o.processes = std::move(procs);
  o.reservation_id = 7;
  o.reservation_owner_id = 70;
  o.reservation_owner_username = "alice";
  return o;
}

const std::vector<ReservationView> kActive = {Reservation(7, "alice", {1})};

// The sample in which `o`'s processes run.
api::NodeSample SampleWith(const Offence& o) {
  api::NodeSample s = Sample(0);
  for (const auto& p : o.processes) {
    s.gpus[o.gpu].processes.push_back(Proc(p.pid, o.uid, o.unix_user, p.command, p.start_time_ms));
  }
  return s;
}

std::vector<Action> ObserveAt(Enforcer& e, int64_t t, const std::vector<Offence>& offences,
                              const std::vector<ReservationView>& active = kActive,
                              const api::NodeSample& sample = Sample(0)) {
  return e.Observe("node-a", t, offences, active, sample);
}

std::vector<std::string> Kinds(const std::vector<Action>& actions) {
  std::vector<std::string> out;
  for (const auto& a : actions) out.push_back(ActionKindName(a.kind));
  return out;
}

std::vector<uint32_t> Pids(const Action& a) {
  std::vector<uint32_t> out;
  for (const auto& p : a.pids) out.push_back(p.pid);
  return out;
}

struct StepCase {
  const char* name;
  std::vector<int64_t> times;     // offsets from kT0 at which the offence is observed
  std::vector<std::string> last;  // action kinds of the last observation
};

class LadderStepTest : public ::testing::TestWithParam<StepCase> {};

TEST_P(LadderStepTest, ActsAtGraceBoundaries) {
  const StepCase& c = GetParam();
  Enforcer e;
  std::vector<Action> actions;
  for (int64_t t : c.times) actions = ObserveAt(e, kT0 + t, {BobOffence()});
  EXPECT_EQ(Kinds(actions), c.last);
  EXPECT_EQ(e.open_count(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Boundaries, LadderStepTest,
                         ::testing::ValuesIn(std::vector<StepCase>{
                             {"OpenAndWarnAtOnce", {0}, {"open", "warn"}},
                             {"NothingBeforeG1", {0, 59'999}, {}},
                             {"EmailAtG1", {0, 60'000}, {"email"}},
                             {"EmailOnce", {0, 60'000, 60'001}, {}},
                             {"NoTermBeforeG2", {0, 60'000, 299'999}, {}},
                             {"TermAtG2", {0, 60'000, 300'000}, {"term"}},
                             {"LateSampleCatchesUp", {0, 300'000}, {"email", "term"}},
                             {"NoKillBeforeG3", {0, 300'000, 329'999}, {}},
                             {"KillAtG3AfterTerm", {0, 300'000, 330'000}, {"kill"}},
                             {"KillCountsFromTerm", {0, 310'000, 339'999}, {}},
                             {"KillAfterLateTerm", {0, 310'000, 340'000}, {"kill"}},
                             {"NothingAfterKill", {0, 300'000, 330'000, 900'000}, {}},
                             {"LongGapStillTermsBeforeKilling", {0, 1'000'000}, {"email", "term"}},
                         }),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(LadderTest, ActionsCarryOffenceAndTargets) {
  Enforcer e;
  Offence o = BobOffence({{10, 1000, "a"}, {11, 1000, "b"}});
  auto open = ObserveAt(e, kT0, {o});
  ASSERT_EQ(open.size(), 2u);
  EXPECT_EQ(open[0].key, (ViolationKey{"node-a", 1, 1002, 7}));
  EXPECT_EQ(open[0].offence.unix_user, "bob");
  EXPECT_EQ(Pids(open[1]), (std::vector<uint32_t>{10, 11}));
  EXPECT_FALSE(open[0].dry_run);
  auto term = ObserveAt(e, kT0 + 300'000, {o});
  ASSERT_EQ(Kinds(term), (std::vector<std::string>{"email", "term"}));
  EXPECT_EQ(Pids(term[1]), (std::vector<uint32_t>{10, 11}));
}

TEST(LadderTest, ZeroGracesActInOneObservation) {
  Offence o = BobOffence();
  o.settings.grace_email_ms = 0;
  o.settings.grace_term_ms = 0;
  o.settings.grace_kill_ms = 0;
  Enforcer e;
  EXPECT_EQ(Kinds(ObserveAt(e, kT0, {o})),
            (std::vector<std::string>{"open", "warn", "email", "term", "kill"}));
}

TEST(LadderTest, NewPidsJoinLaterSignals) {
  Enforcer e;
  ObserveAt(e, kT0, {BobOffence({{10, 1000, "a"}})});
  ObserveAt(e, kT0 + 300'000, {BobOffence({{10, 1000, "a"}})});  // TERM 10
  // pid 11 joins after the TERM step: it gets SIGTERM at once and SIGKILL G3 later.
  auto joined = ObserveAt(e, kT0 + 310'000, {BobOffence({{10, 1000, "a"}, {11, 1000, "b"}})});
  ASSERT_EQ(Kinds(joined), (std::vector<std::string>{"update", "term"}));
  EXPECT_EQ(Pids(joined[0]), (std::vector<uint32_t>{10, 11}));
  EXPECT_EQ(Pids(joined[1]), (std::vector<uint32_t>{11}));
  auto kill10 = ObserveAt(e, kT0 + 330'000, {BobOffence({{10, 1000, "a"}, {11, 1000, "b"}})});
  ASSERT_EQ(Kinds(kill10), (std::vector<std::string>{"kill"}));
  EXPECT_EQ(Pids(kill10[0]), (std::vector<uint32_t>{10}));
  auto kill11 = ObserveAt(e, kT0 + 340'000, {BobOffence({{10, 1000, "a"}, {11, 1000, "b"}})});
  ASSERT_EQ(Kinds(kill11), (std::vector<std::string>{"kill"}));
  EXPECT_EQ(Pids(kill11[0]), (std::vector<uint32_t>{11}));
}

TEST(LadderTest, PidWithNewStartTimeIsANewProcess) {
  Enforcer e;
  ObserveAt(e, kT0, {BobOffence({{10, 1000, "a"}})});
  ObserveAt(e, kT0 + 300'000, {BobOffence({{10, 1000, "a"}})});  // TERM 10@1000
  auto reused = ObserveAt(e, kT0 + 320'000, {BobOffence({{10, 2000, "a"}})});
  ASSERT_EQ(Kinds(reused), (std::vector<std::string>{"update", "term"}));
  EXPECT_EQ(reused[1].pids[0].start_time_ms, 2000);
  // The old process was due for SIGKILL at 330 s but is gone; the new one is due at 350 s.
  EXPECT_TRUE(ObserveAt(e, kT0 + 330'000, {BobOffence({{10, 2000, "a"}})}).empty());
  EXPECT_EQ(Kinds(ObserveAt(e, kT0 + 350'000, {BobOffence({{10, 2000, "a"}})})),
            (std::vector<std::string>{"kill"}));
}

struct ResolveCase {
  const char* name;
  int64_t last_offending;  // offset of the last observation with the offence
  std::vector<ReservationView> active;
  bool still_running;  // the processes are in the resolving sample
  std::string reason;
};

class LadderResolveTest : public ::testing::TestWithParam<ResolveCase> {};

TEST_P(LadderResolveTest, ResolvesWithReason) {
  const ResolveCase& c = GetParam();
  Enforcer e;
  ObserveAt(e, kT0, {BobOffence()});
  for (int64_t t : {int64_t{60'000}, int64_t{300'000}, int64_t{330'000}}) {
    if (t <= c.last_offending) ObserveAt(e, kT0 + t, {BobOffence()});
  }
  api::NodeSample sample = c.still_running ? SampleWith(BobOffence()) : Sample(0);
  auto actions = ObserveAt(e, kT0 + 400'000, {}, c.active, sample);
  ASSERT_EQ(Kinds(actions), (std::vector<std::string>{"resolve"}));
  EXPECT_EQ(actions[0].reason, c.reason);
  EXPECT_EQ(Pids(actions[0]), (std::vector<uint32_t>{10}));
  EXPECT_EQ(e.open_count(), 0u);
}

ReservationView NewOwner() {
  ReservationView r = Reservation(7, "bob", {1});
  r.owner_id = 71;
  return r;
}

INSTANTIATE_TEST_SUITE_P(
    Paths, LadderResolveTest,
    ::testing::ValuesIn(std::vector<ResolveCase>{
        {"Exited", 60'000, kActive, false, "processes exited"},
        {"Terminated", 300'000, kActive, false, "terminated"},
        {"Killed", 330'000, kActive, false, "killed"},
        {"ReservationEnded", 60'000, {}, true, "reservation ended"},
        {"OwnerChanged", 60'000, {NewOwner()}, true, "reservation owner changed"},
        {"NoLongerAViolation", 60'000, kActive, true, "no longer a violation"},
    }),
    [](const auto& info) { return std::string(info.param.name); });

TEST(LadderTest, OwnerChangeWhileOffendingReopens) {
  Enforcer e;
  ObserveAt(e, kT0, {BobOffence()});
  ASSERT_TRUE(e.SetViolationId({"node-a", 1, 1002, 7}, 5));
  Offence o = BobOffence();
  o.reservation_owner_id = 72;  // carol now holds reservation 7; bob still offends
  auto actions = ObserveAt(e, kT0 + 400'000, {o});
  ASSERT_EQ(Kinds(actions), (std::vector<std::string>{"resolve", "open", "warn"}));
  EXPECT_EQ(actions[0].reason, "reservation owner changed");
  EXPECT_EQ(actions[0].violation_id, 5);
  EXPECT_EQ(actions[1].violation_id, 0);
  EXPECT_EQ(actions[1].offence.reservation_owner_id, 72);
}

TEST(LadderTest, ViolationIdAppearsInLaterActions) {
  Enforcer e;
  ObserveAt(e, kT0, {BobOffence()});
  EXPECT_FALSE(e.SetViolationId({"node-a", 1, 1002, 8}, 5));
  EXPECT_TRUE(e.SetViolationId({"node-a", 1, 1002, 7}, 5));
  auto email = ObserveAt(e, kT0 + 60'000, {BobOffence()});
  ASSERT_EQ(email.size(), 1u);
  EXPECT_EQ(email[0].violation_id, 5);
}

TEST(LadderTest, DryRunFlagsEveryAction) {
  Offence o = BobOffence();
  o.settings.dry_run = true;
  Enforcer e;
  std::vector<Action> all;
  for (int64_t t : {0, 60'000, 300'000, 330'000}) {
    auto a = ObserveAt(e, kT0 + t, {o});
    all.insert(all.end(), a.begin(), a.end());
  }
  auto resolved = ObserveAt(e, kT0 + 340'000, {});
  all.insert(all.end(), resolved.begin(), resolved.end());
  EXPECT_EQ(Kinds(all),
            (std::vector<std::string>{"open", "warn", "email", "term", "kill", "resolve"}));
  for (const auto& a : all) EXPECT_TRUE(a.dry_run) << ActionKindName(a.kind);
}

TEST(LadderTest, OtherNodesAreLeftAlone) {
  Enforcer e;
  ObserveAt(e, kT0, {BobOffence()});
  Offence elsewhere = BobOffence();
  elsewhere.node = "node-b";
  EXPECT_TRUE(e.Observe("node-b", kT0 + 1, {}, {}, Sample(0)).empty());
  EXPECT_TRUE(e.Observe("node-a", kT0 + 2, {elsewhere, BobOffence()}, kActive, Sample(0)).empty());
  EXPECT_EQ(e.open_count(), 1u);
}

TEST(LadderTest, NodeLostResolvesItsViolations) {
  Enforcer e;
  ObserveAt(e, kT0, {BobOffence()});
  EXPECT_TRUE(e.NodeLost("node-b").empty());
  auto lost = e.NodeLost("node-a");
  ASSERT_EQ(Kinds(lost), (std::vector<std::string>{"resolve"}));
  EXPECT_EQ(lost[0].reason, "node unreachable");
  EXPECT_EQ(e.open_count(), 0u);
  // Still offending when the node returns: a new violation.
  EXPECT_EQ(Kinds(ObserveAt(e, kT0 + 10'000, {BobOffence()})),
            (std::vector<std::string>{"open", "warn"}));
}

TEST(LadderTest, RestoreContinuesTheLadder) {
  Enforcer before;
  ObserveAt(before, kT0, {BobOffence()});
  before.SetViolationId({"node-a", 1, 1002, 7}, 9);
  ObserveAt(before, kT0 + 300'000, {BobOffence()});  // email + TERM
  std::vector<OpenViolation> saved = before.Snapshot();
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_TRUE(saved[0].emailed);
  ASSERT_EQ(saved[0].ladder.size(), 1u);
  EXPECT_EQ(saved[0].ladder[0].term_ms, kT0 + 300'000);

  Enforcer after;  // the server restarted
  after.RestoreOpen(saved);
  EXPECT_TRUE(ObserveAt(after, kT0 + 310'000, {BobOffence()}).empty());  // no new open/warn/email
  auto kill = ObserveAt(after, kT0 + 330'000, {BobOffence()});
  ASSERT_EQ(Kinds(kill), (std::vector<std::string>{"kill"}));
  EXPECT_EQ(kill[0].violation_id, 9);
}

}  // namespace
}  // namespace rota::enforce
