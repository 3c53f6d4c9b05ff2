#include "enforce/detector.h"

#include <gtest/gtest.h>

#include "enforce/enforce_test_util.h"

namespace rota::enforce {
namespace {

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
       Proc(10, 0, "root", "/usr/lib/xorg/Xorg :0 -nolisten tcp"),
       false},
      {"ExemptCommandBare", "reserved", {alice_xorg}, {}, Proc(10, 0, "root", "Xorg"), false},
      {"ExemptCommandIsNotPrefix",
       "reserved",
       {alice_xorg},
       {},
       Proc(10, 0, "root", "Xorgish"),
       true},
      {"ExemptCommandOnlyArgv0",
       "reserved",
       {alice_xorg},
       {},
       Proc(10, 0, "root", "sh Xorg"),
       true},
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
  sample.gpus[3].processes = {Proc(10, 0, "root", "/usr/bin/nvidia-persistenced --verbose")};
  EXPECT_TRUE(Detect("node-a", sample, {}, {}, strict).empty());
}

TEST(IsExemptCommandTest, MatchesArgv0OrBasename) {
  EXPECT_TRUE(IsExemptCommand("/usr/lib/xorg/Xorg :0", {"/usr/lib/xorg/Xorg"}));
  EXPECT_TRUE(IsExemptCommand("/usr/lib/xorg/Xorg :0", {"Xorg"}));
  EXPECT_FALSE(IsExemptCommand("", {"Xorg"}));
  EXPECT_FALSE(IsExemptCommand("/usr/lib/xorg/", {""}));
  EXPECT_FALSE(IsExemptCommand("Xorg", {}));
}

}  // namespace
}  // namespace rota::enforce
