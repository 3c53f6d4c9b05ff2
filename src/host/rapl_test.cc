#include "host/rapl.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "common/clock.h"

namespace rota::host {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMax = 262'143'328'850;  // a real max_energy_range_uj (61 uJ unit)

// A fake powercap tree in a temp dir, removed at the end of the test.
class FakePowercap {
 public:
  FakePowercap() {
    std::string tmpl = (fs::temp_directory_path() / "rota-rapl-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    dir_ = tmpl;
    // Readable by an unprivileged child (see RunUnprivileged).
    fs::permissions(dir_, fs::perms(0755));
    root_ = dir_ + "/powercap";
    fs::create_directories(root_);
  }
  ~FakePowercap() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const std::string& root() const { return root_; }
  const std::string& dir() const { return dir_; }

  void Write(const std::string& rel, const std::string& content) {
    fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << content;
    ASSERT_TRUE(out.good()) << p;
  }
  void Zone(const std::string& zone, const std::string& name, uint64_t energy_uj,
            uint64_t max_uj = kMax) {
    Write(zone + "/name", name + "\n");
    Write(zone + "/max_energy_range_uj", std::to_string(max_uj) + "\n");
    Energy(zone, energy_uj);
  }
  void Energy(const std::string& zone, uint64_t energy_uj) {
    Write(zone + "/energy_uj", std::to_string(energy_uj) + "\n");
  }
  void Remove(const std::string& rel) { fs::remove_all(fs::path(root_) / rel); }

 private:
  std::string dir_;
  std::string root_;
};

// Runs fn as an unprivileged user and returns what it returned: directly when not root,
// else in a child that drops to uid/gid 65534 (root reads files whatever their mode).
// "SETUID FAILED" when the child could not drop privileges.
std::string RunUnprivileged(const std::function<std::string()>& fn) {
  if (::geteuid() != 0) return fn();
  int fds[2];
  if (::pipe(fds) != 0) return "PIPE FAILED";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string out = (::setgid(65534) == 0 && ::setuid(65534) == 0) ? fn() : "SETUID FAILED";
    ssize_t n = ::write(fds[1], out.data(), out.size());
    ::_exit(n == static_cast<ssize_t>(out.size()) ? 0 : 1);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

std::string Notes(const RaplReading& r) {
  std::string out;
  for (const std::string& n : r.notes) out += n + "\n";
  return out;
}

// --- FindRaplPackages ---

TEST(RaplFindTest, ListsTopLevelPackageZonesOnly) {
  FakePowercap pc;
  pc.Zone("intel-rapl:10", "package-10", 5);
  pc.Zone("intel-rapl:0", "package-0", 1);
  pc.Zone("intel-rapl:1", "package-1", 2, 65'532'610'987);
  pc.Zone("intel-rapl:0:0", "core", 3);          // subzone
  pc.Zone("intel-rapl:0:1", "dram", 3);          // subzone
  pc.Zone("intel-rapl:2", "psys", 4);            // platform: includes the packages
  pc.Zone("intel-rapl-mmio:0", "package-0", 6);  // same counter through MMIO
  pc.Write("intel-rapl/enabled", "1\n");         // control-type directory
  pc.Zone("dtpm:0", "package-0", 7);             // another control type

  auto found = FindRaplPackages(pc.root());
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_EQ(found->size(), 3u);
  EXPECT_EQ((*found)[0].zone, "intel-rapl:0");
  EXPECT_EQ((*found)[0].name, "package-0");
  EXPECT_EQ((*found)[0].path, pc.root() + "/intel-rapl:0");
  EXPECT_EQ((*found)[0].max_energy_range_uj, kMax);
  EXPECT_TRUE((*found)[0].readable()) << (*found)[0].unavailable;
  EXPECT_EQ((*found)[1].zone, "intel-rapl:1");
  EXPECT_EQ((*found)[1].max_energy_range_uj, 65'532'610'987u);
  EXPECT_EQ((*found)[2].zone, "intel-rapl:10");  // numeric order, not text order
  EXPECT_EQ((*found)[2].name, "package-10");
}

TEST(RaplFindTest, AmdRaplZonesAndMultiDieNamesCount) {
  FakePowercap pc;
  pc.Zone("amd-rapl:0", "package-0", 1);
  pc.Zone("intel-rapl:0", "package-0-die-1", 1);
  auto found = FindRaplPackages(pc.root());
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].zone, "amd-rapl:0");
  EXPECT_EQ((*found)[1].name, "package-0-die-1");
}

TEST(RaplFindTest, NoPowercapDirectoryIsNotAvailable) {
  FakePowercap pc;
  const std::string missing = pc.dir() + "/no-such-powercap";
  auto found = FindRaplPackages(missing);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(found.status().message().rfind("RAPL not available: " + missing + " does not exist", 0),
            0u)
      << found.status().message();

  RaplMeter meter(missing);
  auto r = meter.Read();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find(missing), std::string::npos);
}

TEST(RaplFindTest, NoPackageZoneIsNotAvailable) {
  FakePowercap pc;
  pc.Zone("intel-rapl:0:0", "core", 1);
  pc.Zone("intel-rapl:1", "psys", 1);
  auto found = FindRaplPackages(pc.root());
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(found.status().message(),
            "RAPL not available: no package zone (intel-rapl:N named package-N) in " + pc.root());
}

TEST(RaplFindTest, UnreadableEnergyIsReportedWithReason) {
  FakePowercap pc;
  pc.Zone("intel-rapl:0", "package-0", 1000);
  const std::string energy = pc.root() + "/intel-rapl:0/energy_uj";
  ASSERT_EQ(::chmod(energy.c_str(), 0), 0);

  std::string got = RunUnprivileged([&]() -> std::string {
    auto found = FindRaplPackages(pc.root());
    if (!found.ok()) return "ERROR " + found.status().ToString();
    if (found->size() != 1) return "SIZE " + std::to_string(found->size());
    return (*found)[0].unavailable;
  });
  if (got == "SETUID FAILED") GTEST_SKIP() << "cannot drop root privileges here";
  EXPECT_EQ(got.rfind(energy + ": Permission denied (energy_uj is readable by root only", 0), 0u)
      << got;

  std::string read = RunUnprivileged([&]() -> std::string {
    RaplMeter meter(pc.root());
    auto r = meter.Read();
    return r.ok() ? "OK" : r.status().ToString();
  });
  EXPECT_EQ(read.rfind("unavailable: RAPL not available: intel-rapl:0 (package-0): " + energy +
                           ": Permission denied",
                       0),
            0u)
      << read;
}

TEST(RaplFindTest, MalformedFilesAreReportedWithReason) {
  FakePowercap pc;
  pc.Zone("intel-rapl:0", "package-0", 1);
  pc.Write("intel-rapl:0/energy_uj", "12abc\n");
  pc.Zone("intel-rapl:1", "package-1", 1);
  pc.Write("intel-rapl:1/max_energy_range_uj", "0\n");
  pc.Zone("intel-rapl:2", "package-2", 1);
  pc.Remove("intel-rapl:2/name");

  auto found = FindRaplPackages(pc.root());
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_EQ(found->size(), 3u);
  EXPECT_EQ((*found)[0].unavailable,
            pc.root() + "/intel-rapl:0/energy_uj: not a number: \"12abc\"");
  EXPECT_EQ((*found)[1].unavailable, pc.root() + "/intel-rapl:1/max_energy_range_uj: is 0");
  EXPECT_EQ((*found)[2].unavailable, pc.root() + "/intel-rapl:2/name: No such file or directory");
}

// --- RaplMeter ---

TEST(RaplMeterTest, SumsTwoPackagesAndKeepsSubMillijoules) {
  FakePowercap pc;
  FakeClock clock;
  pc.Zone("intel-rapl:0", "package-0", 1'000'000);
  pc.Zone("intel-rapl:1", "package-1", 50'000'000);
  pc.Zone("intel-rapl:0:0", "core", 7);  // ignored even when it moves a lot
  RaplMeter meter(pc.root(), clock);

  auto r0 = meter.Read();
  ASSERT_TRUE(r0.ok()) << r0.status().ToString();
  EXPECT_EQ(r0->energy_mj, 0u);
  EXPECT_EQ(r0->packages, 2u);
  EXPECT_TRUE(r0->notes.empty()) << Notes(*r0);

  clock.AdvanceMs(10'000);
  pc.Energy("intel-rapl:0", 1'000'000 + 1'500'000);
  pc.Energy("intel-rapl:1", 50'000'000 + 2'250'400);
  pc.Energy("intel-rapl:0:0", 90'000'000'000);
  auto r1 = meter.Read();
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->energy_mj, 3750u);  // 3'750'400 uJ
  EXPECT_EQ(r1->packages, 2u);
  EXPECT_TRUE(r1->notes.empty()) << Notes(*r1);

  clock.AdvanceMs(10'000);
  pc.Energy("intel-rapl:0", 2'500'000 + 600);  // with the 400 uJ kept: 3'751'000 uJ
  auto r2 = meter.Read();
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->energy_mj, 3751u);
}

TEST(RaplMeterTest, WrapAroundAtMaxRangeGivesExactDelta) {
  FakePowercap pc;
  FakeClock clock;
  constexpr uint64_t kSmallMax = 65'532'610'987;  // a 15.3 uJ unit part
  pc.Zone("intel-rapl:0", "package-0", kMax - 3'999);
  pc.Zone("intel-rapl:1", "package-1", kSmallMax - 1, kSmallMax);
  RaplMeter meter(pc.root(), clock);
  ASSERT_TRUE(meter.Read().ok());

  // The figures sit next to millijoule boundaries so that a delta off by one microjoule
  // either way changes a result.
  clock.AdvanceMs(5'000);
  pc.Energy("intel-rapl:0", 6'000);  // (kMax - prev) + cur = 3'999 + 6'000
  auto r = meter.Read();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->notes.empty()) << Notes(*r);
  EXPECT_EQ(r->energy_mj, 9u);  // 9'999 uJ

  clock.AdvanceMs(5'000);
  pc.Energy("intel-rapl:1", 0);  // 1 uJ to the top of the range, then 0
  auto r2 = meter.Read();
  ASSERT_TRUE(r2.ok());
  EXPECT_TRUE(r2->notes.empty()) << Notes(*r2);
  EXPECT_EQ(r2->energy_mj, 10u);  // 10'000 uJ

  // Nearly a whole range in one step, over a long enough time to be plausible
  // (301 s at 1000 W allow 301 kJ): (kMax - 6'000) + 5'999 = kMax - 1.
  clock.AdvanceMs(300'000);
  pc.Energy("intel-rapl:0", 5'999);
  auto r3 = meter.Read();
  ASSERT_TRUE(r3.ok());
  EXPECT_TRUE(r3->notes.empty()) << Notes(*r3);
  EXPECT_EQ(r3->energy_mj, 262'143'338u);  // (10'000 + kMax - 1) uJ
}

TEST(RaplMeterTest, ResetRestartsTheBaseline) {
  FakePowercap pc;
  FakeClock clock;
  pc.Zone("intel-rapl:0", "package-0", 200'000'000'000);
  pc.Zone("intel-rapl:1", "package-1", 1'000);
  RaplMeter meter(pc.root(), clock);
  ASSERT_TRUE(meter.Read().ok());

  // Counter reset (driver reload): as a wrap it would be 62 kJ in 5 s (12 kW).
  clock.AdvanceMs(5'000);
  pc.Energy("intel-rapl:0", 1'000'000);
  pc.Energy("intel-rapl:1", 1'000 + 700'000);
  auto r = meter.Read();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->energy_mj, 700u);  // package-1 only
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0],
            "intel-rapl:0 (package-0): energy_uj went from 200000000000 to 1000000 in 5000 ms "
            "(a reset?); baseline restarted");

  clock.AdvanceMs(5'000);
  pc.Energy("intel-rapl:0", 1'000'000 + 2'000'000);
  auto r2 = meter.Read();
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->energy_mj, 2'700u);
  EXPECT_TRUE(r2->notes.empty()) << Notes(*r2);
}

TEST(RaplMeterTest, ImplausibleForwardJumpAndOutOfRangeValuesRestartTheBaseline) {
  FakePowercap pc;
  FakeClock clock;
  pc.Zone("intel-rapl:0", "package-0", 1'000);
  RaplMeter meter(pc.root(), clock, /*max_package_watts=*/500);
  ASSERT_TRUE(meter.Read().ok());

  // 10 s at most 500 W (+1 s slack): 5.5 kJ allowed; 6 kJ is not believed.
  clock.AdvanceMs(10'000);
  pc.Energy("intel-rapl:0", 1'000 + 6'000'000'000);
  auto r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 0u);
  ASSERT_EQ(r->notes.size(), 1u) << Notes(*r);
  EXPECT_EQ(r->notes[0],
            "intel-rapl:0 (package-0): energy_uj went from 1000 to 6000001000 in 10000 ms "
            "(a reset?); baseline restarted");

  // Exactly the allowance is believed.
  clock.AdvanceMs(10'000);
  pc.Energy("intel-rapl:0", 6'000'001'000 + 5'500'000'000);
  r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 5'500'000u);
  EXPECT_TRUE(r->notes.empty()) << Notes(*r);

  // A value above the range is garbage.
  clock.AdvanceMs(10'000);
  pc.Energy("intel-rapl:0", kMax + 1);
  r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 5'500'000u);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "intel-rapl:0 (package-0): energy_uj " + std::to_string(kMax + 1) +
                             " above max_energy_range_uj " + std::to_string(kMax) +
                             "; baseline restarted");

  // The range changed (another zone in its place): no delta across it.
  clock.AdvanceMs(10'000);
  pc.Zone("intel-rapl:0", "package-0", 2'000'000, 65'532'610'987);
  r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 5'500'000u);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0],
            "intel-rapl:0 (package-0): zone changed (was package-0 with max_energy_range_uj " +
                std::to_string(kMax) + "); baseline restarted");

  clock.AdvanceMs(10'000);
  pc.Energy("intel-rapl:0", 2'000'000 + 1'000'000);
  r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 5'501'000u);
}

TEST(RaplMeterTest, PackageThatDisappearsAndReappearsStartsAgain) {
  FakePowercap pc;
  FakeClock clock;
  pc.Zone("intel-rapl:0", "package-0", 0);
  pc.Zone("intel-rapl:1", "package-1", 0);
  RaplMeter meter(pc.root(), clock);
  ASSERT_TRUE(meter.Read().ok());

  clock.AdvanceMs(1'000);
  pc.Energy("intel-rapl:0", 100'000);
  pc.Remove("intel-rapl:1");
  auto r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 100u);
  EXPECT_EQ(r->packages, 1u);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "intel-rapl:1 (package-1): disappeared");

  // Back with a counter far from where it was: nothing counted until the next read.
  clock.AdvanceMs(1'000);
  pc.Energy("intel-rapl:0", 200'000);
  pc.Zone("intel-rapl:1", "package-1", 123'456'789);
  r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 200u);
  EXPECT_EQ(r->packages, 2u);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "intel-rapl:1 (package-1): new, counted from the next read");

  clock.AdvanceMs(1'000);
  pc.Energy("intel-rapl:1", 123'456'789 + 50'000);
  r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 250u);
}

TEST(RaplMeterTest, UnreadablePackageAddsNothingAndRestarts) {
  FakePowercap pc;
  FakeClock clock;
  pc.Zone("intel-rapl:0", "package-0", 0);
  pc.Zone("intel-rapl:1", "package-1", 0);
  RaplMeter meter(pc.root(), clock);
  ASSERT_TRUE(meter.Read().ok());

  clock.AdvanceMs(1'000);
  pc.Energy("intel-rapl:0", 10'000);
  pc.Write("intel-rapl:1/energy_uj", "garbage\n");
  auto r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 10u);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "intel-rapl:1 (package-1): " + pc.root() +
                             "/intel-rapl:1/energy_uj: not a number: \"garbage\"");

  clock.AdvanceMs(1'000);
  pc.Energy("intel-rapl:1", 500'000);  // new baseline, not 500 J
  r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 10u);

  // None readable: the whole reading is an error naming the files.
  pc.Write("intel-rapl:0/energy_uj", "x\n");
  pc.Write("intel-rapl:1/energy_uj", "");
  auto bad = meter.Read();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(bad.status().message(),
            "RAPL not available: intel-rapl:0 (package-0): " + pc.root() +
                "/intel-rapl:0/energy_uj: not a number: \"x\"; intel-rapl:1 (package-1): " +
                pc.root() + "/intel-rapl:1/energy_uj: not a number: \"\"");

  // Cumulative energy is kept across the outage; baselines restart.
  clock.AdvanceMs(1'000);
  pc.Energy("intel-rapl:0", 20'000);
  pc.Energy("intel-rapl:1", 600'000);
  r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 10u);
  clock.AdvanceMs(1'000);
  pc.Energy("intel-rapl:0", 25'000);
  r = meter.Read();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy_mj, 15u);
}

// --- cpu.stat ---

TEST(CpuStatTest, ParsesUsageUsec) {
  auto v = ParseCpuStatUsageUsec(
      "usage_usec 123456789\nuser_usec 100000000\nsystem_usec 23456789\n"
      "nr_periods 0\nnr_throttled 0\nthrottled_usec 0\n");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 123'456'789u);
  // Not the first line, no trailing newline.
  v = ParseCpuStatUsageUsec("user_usec 5\nusage_usec 42");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 42u);
}

TEST(CpuStatTest, RejectsMalformedInput) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "no usage_usec line"},
      {"user_usec 5\nsystem_usec 6\n", "no usage_usec line"},
      {"usage_usec_total 5\n", "no usage_usec line"},
      {"usage_usec\n", "usage_usec: not a number: \"\""},
      {"usage_usec abc\n", "usage_usec: not a number: \"abc\""},
      {"usage_usec -5\n", "usage_usec: not a number: \"-5\""},
      {"usage_usec 12 34\n", "usage_usec: not a number: \"12 34\""},
      {"usage_usec 99999999999999999999999\n",
       "usage_usec: not a number: \"99999999999999999999999\""},
  };
  for (const Case& c : cases) {
    auto v = ParseCpuStatUsageUsec(c.text);
    ASSERT_FALSE(v.ok()) << c.text;
    EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_EQ(v.status().message(), c.message) << c.text;
  }
}

TEST(CpuStatTest, ReadsFromCgroupDirectoryAndNamesTheFile) {
  FakePowercap tree;  // any temp dir
  const std::string cg = tree.dir() + "/cgroup/rota.slice/job-7";
  fs::create_directories(cg);
  { std::ofstream(cg + "/cpu.stat") << "usage_usec 777\nuser_usec 700\nsystem_usec 77\n"; }
  auto v = ReadCgroupCpuUsageUsec(cg);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 777u);

  { std::ofstream(cg + "/cpu.stat") << "usage_usec lots\n"; }
  v = ReadCgroupCpuUsageUsec(cg);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(v.status().message(), cg + "/cpu.stat: usage_usec: not a number: \"lots\"");

  // cgroup v1: the cpuacct controller's cpuacct.usage, in nanoseconds.
  const std::string v1 = tree.dir() + "/cgroup/cpuacct/rota/job-7";
  fs::create_directories(v1);
  { std::ofstream(v1 + "/cpuacct.usage") << "123456789\n"; }
  v = ReadCgroupCpuUsageUsec(v1);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 123'456u);
  { std::ofstream(v1 + "/cpuacct.usage") << "-1\n"; }
  v = ReadCgroupCpuUsageUsec(v1);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), v1 + "/cpuacct.usage: not a number: \"-1\"");

  auto gone = ReadCgroupCpuUsageUsec(tree.dir() + "/cgroup/gone");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(gone.status().message().rfind(tree.dir() + "/cgroup/gone/cpu.stat: ", 0), 0u);
}

// A v1 task has a cpu cgroup (cpu.stat without usage_usec), a cpuacct one and a
// memory one: its CPU time comes from the cpuacct one. A gone task is NotFound.
TEST(CpuStatTest, TaskCpuTimeFromTheFirstCgroupThatCountsIt) {
  FakePowercap tree;  // any temp dir
  const std::string cpu = tree.dir() + "/cpu/rota/t", acct = tree.dir() + "/cpuacct/rota/t",
                    mem = tree.dir() + "/memory/rota/t";
  for (const auto& d : {cpu, acct, mem}) fs::create_directories(d);
  { std::ofstream(cpu + "/cpu.stat") << "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"; }
  { std::ofstream(acct + "/cpuacct.usage") << "5000000\n"; }
  auto v = ReadTaskCpuUsageUsec({cpu, acct, mem});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 5000u);

  auto none = ReadTaskCpuUsageUsec({cpu, mem});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find(cpu + "/cpu.stat: no usage_usec line; " + mem + "/cpu.stat: "),
            std::string::npos)
      << none.status().message();

  for (const auto& d : {cpu, acct, mem}) fs::remove_all(d);  // the task ended
  EXPECT_EQ(ReadTaskCpuUsageUsec({cpu, acct, mem}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadTaskCpuUsageUsec({}).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace rota::host
