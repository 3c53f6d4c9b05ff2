#include "enforce/detector.h"

#include <gtest/gtest.h>

#include "enforce/enforce_test_util.h"

namespace rota::enforce {
namespace {

using testing::ExeProc;
using testing::Proc;
using testing::Reservation;
using testing::Sample;

EnforcementSettings Mode(const std::string& mode) {
  EnforcementSettings s;
  s.mode = mode;
  return s;
}

struct DetectCase {
  const char* name;
  std::string node_mode;                  // node default
  std::vector<ReservationView> reserved;  // on node-a
  std::vector<JobAllocationView> jobs;
  api::GpuProcess process;  // placed on GPU 1
  bool offends;
};

std::vector<DetectCase> Cases() {
  ReservationView alice = Reservation(7, "alice", {1});
  ReservationView alice_off = alice;
  alice_off.settings.mode = "off";
  ReservationView alice_exempt_bob = alice;
  alice_exempt_bob.settings.exempt_users = {"bob"};
  ReservationView alice_xorg = alice;
  alice_xorg.settings.exempt_commands = {"Xorg"};
  ReservationView alice_xorg_path = alice;
  alice_xorg_path.settings.exempt_commands = {"/usr/lib/xorg/Xorg"};
  ReservationView alice_carol_nvtop = alice;
  alice_carol_nvtop.settings.exempt_commands = {"carol:/usr/bin/nvtop"};
  ReservationView alice_uid_nvtop = alice;
  alice_uid_nvtop.settings.exempt_commands = {"1003:nvtop"};
  ReservationView alice_root_judged = alice;
  alice_root_judged.settings.min_uid = 0;
  ReservationView other_gpu = Reservation(8, "alice", {2});
  ReservationView other_node = Reservation(9, "alice", {1}, "node-b");
  ReservationView no_unix = alice;
  no_unix.owner_unix_user = "";
  JobAllocationView bob_job{"job-1", "node-a", {1}, "bob"};
  JobAllocationView bob_job_gpu2{"job-2", "node-a", {2}, "bob"};
  JobAllocationView bob_job_node_b{"job-3", "node-b", {1}, "bob"};
  api::GpuProcess no_uid = Proc(10, 1002, "bob");
  no_uid.uid.reset();
  return {
      {"OwnerOnReservedGpu", "reserved", {alice}, {}, Proc(10, 1001, "alice"), false},
      {"OtherUserOnReservedGpu", "reserved", {alice}, {}, Proc(10, 1002, "bob"), true},
      {"OtherUserOnReservedGpuStrict", "strict", {alice}, {}, Proc(10, 1002, "bob"), true},
      {"ReservationModeOff", "strict", {alice_off}, {}, Proc(10, 1002, "bob"), false},
      {"UnreservedGpuReservedMode", "reserved", {}, {}, Proc(10, 1002, "bob"), false},
      {"UnreservedGpuStrictMode", "strict", {}, {}, Proc(10, 1002, "bob"), true},
      {"UnreservedGpuOffMode", "off", {}, {}, Proc(10, 1002, "bob"), false},
      {"ReservationOfOtherGpuIgnored", "reserved", {other_gpu}, {}, Proc(10, 1002, "bob"), false},
      {"ReservationOfOtherNodeIgnored", "strict", {other_node}, {}, Proc(10, 1002, "bob"), true},
      {"ExemptUser", "reserved", {alice_exempt_bob}, {}, Proc(10, 1002, "bob"), false},
      {"ExemptCommandBasename",
       "reserved",
       {alice_xorg},
       {},
       ExeProc(10, 1003, "carol", "/usr/lib/xorg/Xorg", "/usr/lib/xorg/Xorg :0 -nolisten tcp"),
       false},
      {"ExemptCommandPath",
       "reserved",
       {alice_xorg_path},
       {},
       ExeProc(10, 1003, "carol", "/usr/lib/xorg/Xorg", "Xorg :0"),
       false},
      // A copy elsewhere is not the file an absolute entry names.
      {"ExemptCommandPathIsThatFile",
       "reserved",
       {alice_xorg_path},
       {},
       ExeProc(10, 1003, "carol", "/home/carol/Xorg", "/usr/lib/xorg/Xorg :0"),
       true},
      {"ExemptCommandIsNotPrefix",
       "reserved",
       {alice_xorg},
       {},
       ExeProc(10, 1003, "carol", "/usr/bin/Xorgish", "Xorgish"),
       true},
      {"ExemptCommandOnlyArgv0",
       "reserved",
       {alice_xorg},
       {},
       ExeProc(10, 1003, "carol", "/bin/sh", "sh Xorg"),
       true},
      // `exec -a Xorg python train.py`: argv[0] says Xorg, the executable is python.
      {"ExemptCommandArgv0IsNotTheExecutable",
       "reserved",
       {alice_xorg},
       {},
       ExeProc(10, 1003, "carol", "/usr/bin/python3.11", "Xorg train.py"),
       true},
      {"ExemptCommandOfItsUser",
       "reserved",
       {alice_carol_nvtop},
       {},
       ExeProc(10, 1003, "carol", "/usr/bin/nvtop", "nvtop"),
       false},
      {"ExemptCommandOfAnotherUser",
       "reserved",
       {alice_carol_nvtop},
       {},
       ExeProc(10, 1002, "bob", "/usr/bin/nvtop", "nvtop"),
       true},
      {"ExemptCommandOfItsUid",
       "reserved",
       {alice_uid_nvtop},
       {},
       ExeProc(10, 1003, "", "/usr/bin/nvtop", "nvtop"),
       false},
      // An older agent reports no executable: argv0 is all there is, and a process
      // that may be exempt is left alone; anything else is judged as before.
      {"ExeUnknownArgv0ExemptLeftAlone",
       "reserved",
       {alice_xorg},
       {},
       Proc(10, 1003, "carol", "/usr/lib/xorg/Xorg :0"),
       false},
      {"ExeUnknownJudged", "reserved", {alice_xorg}, {}, Proc(10, 1003, "carol"), true},
      {"RootNeverJudged",
       "strict",
       {alice},
       {},
       ExeProc(10, 0, "root", "/usr/bin/python3.11", "python train.py"),
       false},
      {"SystemAccountNeverJudged", "strict", {alice}, {}, Proc(10, 999, "gdm"), false},
      {"FirstUserUidJudged", "reserved", {alice}, {}, Proc(10, 1000, "dave"), true},
      {"RootJudgedWithMinUidZero", "reserved", {alice_root_judged}, {}, Proc(10, 0, "root"), true},
      {"JobOnItsGpu", "strict", {}, {bob_job}, Proc(10, 1002, "bob"), false},
      {"JobOnReservedGpu", "reserved", {alice}, {bob_job}, Proc(10, 1002, "bob"), false},
      {"JobOfOtherGpu", "strict", {}, {bob_job_gpu2}, Proc(10, 1002, "bob"), true},
      {"JobOfOtherNode", "strict", {}, {bob_job_node_b}, Proc(10, 1002, "bob"), true},
      {"JobOfOtherUser", "strict", {}, {bob_job}, Proc(10, 1003, "carol"), true},
      {"UnknownOwnerSkipped", "strict", {alice}, {}, no_uid, false},
      {"UidWithoutNameOffends", "reserved", {alice}, {}, Proc(10, 1002, ""), true},
      {"OwnerWithoutUnixAccountNotEnforced", "strict", {no_unix}, {}, Proc(10, 1002, "bob"), false},
  };
}

class DetectTest : public ::testing::TestWithParam<DetectCase> {};

TEST_P(DetectTest, JudgesProcess) {
  const DetectCase& c = GetParam();
  api::NodeSample sample = Sample(5000);
  sample.gpus[1].processes.push_back(c.process);
  auto offences = Detect("node-a", sample, c.reserved, c.jobs, Mode(c.node_mode));
  ASSERT_EQ(offences.size(), c.offends ? 1u : 0u);
  if (c.offends) {
    EXPECT_EQ(offences[0].node, "node-a");
    EXPECT_EQ(offences[0].gpu, 1u);
    EXPECT_EQ(offences[0].gpu_uuid, "GPU-1");
    EXPECT_EQ(offences[0].uid, *c.process.uid);
    ASSERT_EQ(offences[0].processes.size(), 1u);
    EXPECT_EQ(offences[0].processes[0].pid, 10u);
    EXPECT_EQ(offences[0].processes[0].command, c.process.command);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, DetectTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(DetectTest, GroupsProcessesOfOneUidPerGpu) {
  api::NodeSample sample = Sample(5000);
  sample.gpus[0].processes = {Proc(30, 1002, "bob"), Proc(20, 1002, "bob"), Proc(21, 1003, "carol"),
                              Proc(20, 1002, "bob")};  // a pid listed twice (compute + graphics)
  sample.gpus[2].processes = {Proc(40, 1002, "bob")};
  auto offences = Detect("node-a", sample, {}, {}, Mode("strict"));
  ASSERT_EQ(offences.size(), 3u);
  EXPECT_EQ(offences[0].gpu, 0u);
  EXPECT_EQ(offences[0].uid, 1002u);
  ASSERT_EQ(offences[0].processes.size(), 2u);
  EXPECT_EQ(offences[0].processes[0].pid, 20u);  // by pid
  EXPECT_EQ(offences[0].processes[1].pid, 30u);
  EXPECT_EQ(offences[1].gpu, 0u);
  EXPECT_EQ(offences[1].uid, 1003u);
  EXPECT_EQ(offences[2].gpu, 2u);
  EXPECT_EQ(offences[2].reservation_id, 0);
}

TEST(DetectTest, OffenceCarriesReservationAndItsSettings) {
  ReservationView r = Reservation(7, "alice", {0, 1});
  r.settings.grace_term_ms = 123'000;
  r.start_ms = 1000;
  api::NodeSample sample = Sample(5000);
  sample.gpus[1].processes = {Proc(10, 1002, "bob")};
  auto offences = Detect("node-a", sample, {r}, {}, Mode("off"));
  ASSERT_EQ(offences.size(), 1u);
  EXPECT_EQ(offences[0].reservation_id, 7);
  EXPECT_EQ(offences[0].reservation_owner_id, 70);
  EXPECT_EQ(offences[0].reservation_owner_username, "alice");
  EXPECT_EQ(offences[0].reservation_title, "run 7");
  // Both ends, for the mails' "start .. end" (regression: the start was 1970).
  EXPECT_EQ(offences[0].reservation_start_ms, r.start_ms);
  EXPECT_EQ(offences[0].reservation_end_ms, r.end_ms);
  EXPECT_EQ(offences[0].settings.grace_term_ms, 123'000);
  EXPECT_EQ(offences[0].unix_user, "bob");
}

TEST(DetectTest, OverlappingReservationsAllowEitherOwnerAndChargeLowestId) {
  ReservationView a = Reservation(9, "alice", {1});
  ReservationView c = Reservation(8, "carol", {1});
  api::NodeSample sample = Sample(5000);
  sample.gpus[1].processes = {Proc(10, 1001, "alice"), Proc(11, 1003, "carol"),
                              Proc(12, 1002, "bob")};
  auto offences = Detect("node-a", sample, {a, c}, {}, Mode("reserved"));
  ASSERT_EQ(offences.size(), 1u);
  EXPECT_EQ(offences[0].unix_user, "bob");
  EXPECT_EQ(offences[0].reservation_id, 8);
}

TEST(DetectTest, UnreservedGpuUsesNodeDefaultExemptions) {
  EnforcementSettings strict = Mode("strict");
  strict.exempt_commands = {"nvidia-persistenced"};
  api::NodeSample sample = Sample(5000);
  sample.gpus[3].processes = {ExeProc(10, 1005, "monitor", "/usr/bin/nvidia-smi", "nvidia-smi dmon")};
  EXPECT_FALSE(Detect("node-a", sample, {}, {}, strict).empty());
  strict.exempt_commands = {"nvidia-smi"};
  EXPECT_TRUE(Detect("node-a", sample, {}, {}, strict).empty());
}

// Security review, issue 41: enforcement signalled root's and system accounts'
// processes (only pid 1 and the agent were refused; exempt_users is empty by
// default; Xorg is collected as a GPU process and could be flagged).
TEST(DetectTest, EnforcementNeverFlagsRootOrSystemAccountsByDefault) {
  EnforcementSettings strict = Mode("strict");  // the defaults otherwise: no exemptions
  ASSERT_TRUE(strict.exempt_users.empty());
  ASSERT_TRUE(strict.exempt_commands.empty());
  EXPECT_EQ(strict.min_uid, 1000u);
  api::NodeSample sample = Sample(5000);
  sample.gpus[0].processes = {
      ExeProc(10, 0, "root", "/usr/lib/xorg/Xorg", "/usr/lib/xorg/Xorg :0 -nolisten tcp"),
      ExeProc(11, 120, "gdm", "/usr/bin/gnome-shell", "/usr/bin/gnome-shell"),
      ExeProc(12, 999, "svc", "/usr/bin/python3.11", "python serve.py")};
  sample.gpus[1].processes = sample.gpus[0].processes;  // and on a reserved GPU
  ReservationView alice = Reservation(7, "alice", {1});
  EXPECT_TRUE(Detect("node-a", sample, {alice}, {}, strict).empty());

  // Configurable: with min_uid 0 root's processes are judged like any other.
  strict.min_uid = 0;
  alice.settings.min_uid = 0;
  auto offences = Detect("node-a", sample, {alice}, {}, strict);
  ASSERT_EQ(offences.size(), 6u);
  EXPECT_EQ(offences[0].uid, 0u);
}

// Security review, issue 41: exemptions matched argv[0], which a process sets itself
// (`exec -a Xorg python train.py` was never flagged).
TEST(DetectTest, ExemptionsMatchTheExecutableNotArgv0) {
  ReservationView alice = Reservation(7, "alice", {1});
  alice.settings.exempt_commands = {"Xorg", "/usr/lib/xorg/Xorg"};
  api::NodeSample sample = Sample(5000);
  sample.gpus[1].processes = {ExeProc(10, 1002, "bob", "/usr/bin/python3.11", "Xorg train.py"),
                              ExeProc(11, 1002, "bob", "/usr/bin/python3.11",
                                      "/usr/lib/xorg/Xorg train.py")};
  auto offences = Detect("node-a", sample, {alice}, {}, Mode("reserved"));
  ASSERT_EQ(offences.size(), 1u);
  ASSERT_EQ(offences[0].processes.size(), 2u);
  EXPECT_EQ(offences[0].processes[0].command, "Xorg train.py");
  // The real Xorg is exempt by either entry.
  sample.gpus[1].processes = {ExeProc(12, 1002, "bob", "/usr/lib/xorg/Xorg", "Xorg :1")};
  EXPECT_TRUE(Detect("node-a", sample, {alice}, {}, Mode("reserved")).empty());
}

TEST(IsExemptProcessTest, MatchesTheExecutablePathOrBasename) {
  auto xorg = ExeProc(10, 1003, "carol", "/usr/lib/xorg/Xorg", "/usr/lib/xorg/Xorg :0");
  EXPECT_TRUE(IsExemptProcess(xorg, {"/usr/lib/xorg/Xorg"}));
  EXPECT_TRUE(IsExemptProcess(xorg, {"Xorg"}));
  EXPECT_TRUE(IsExemptProcess(xorg, {"carol:Xorg"}));
  EXPECT_TRUE(IsExemptProcess(xorg, {"1003:/usr/lib/xorg/Xorg"}));
  EXPECT_FALSE(IsExemptProcess(xorg, {"bob:Xorg"}));
  EXPECT_FALSE(IsExemptProcess(xorg, {"/usr/bin/Xorg"}));
  EXPECT_FALSE(IsExemptProcess(xorg, {"xorg"}));
  EXPECT_FALSE(IsExemptProcess(xorg, {}));
  EXPECT_FALSE(IsExemptProcess(Proc(10, 1003, "carol", ""), {"Xorg"}));
  EXPECT_FALSE(IsExemptProcess(ExeProc(10, 1003, "carol", "/usr/lib/xorg/", ""), {"Xorg"}));
  // No executable reported (an older agent): argv0 stands in.
  EXPECT_TRUE(IsExemptProcess(Proc(10, 1003, "carol", "Xorg :0"), {"Xorg"}));
}

}  // namespace
}  // namespace rota::enforce
