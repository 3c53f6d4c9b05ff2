#include "host/host_monitor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/clock.h"

namespace rota::host {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

const uint64_t kTicks = static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
const uint64_t kPage = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
constexpr int64_t kBtime = 1'700'000'000;

// A fake /proc tree in a temp dir, removed at the end of the test.
class FakeProc {
 public:
  FakeProc() {
    std::string tmpl = (fs::temp_directory_path() / "rota-host-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    root_ = tmpl;
  }
  ~FakeProc() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  const std::string& root() const { return root_; }
  void Write(const std::string& rel, const std::string& content) {
    fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << content;
    ASSERT_TRUE(out.good()) << p;
  }
  void Remove(const std::string& rel) { fs::remove_all(fs::path(root_) / rel); }
  // A symbolic link `rel` to `target` (which need not exist), replacing what was there.
  void Link(const std::string& rel, const std::string& target) {
    fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::error_code ec;
    fs::remove(p, ec);
    fs::create_symlink(target, p);
  }
  // A process exits: descriptors the monitor holds on a real /proc/<pid>/stat then fail
  // with ESRCH; here they read the emptied files. Then the directory goes away.
  void Kill(uint32_t pid) {
    Write(std::to_string(pid) + "/stat", "");
    Remove(std::to_string(pid));
  }

 private:
  std::string root_;
};

std::string StatLine(uint32_t pid, const std::string& comm, uint64_t utime, uint64_t stime,
                     uint64_t start, uint64_t flags = 4194304, uint64_t rss_pages = 250) {
  return std::to_string(pid) + " (" + comm + ") S 1 4242 4242 0 -1 " + std::to_string(flags) +
         " 100 0 0 0 " + std::to_string(utime) + " " + std::to_string(stime) + " 0 0 20 0 1 0 " +
         std::to_string(start) + " 3133440 " + std::to_string(rss_pages) +
         " 18446744073709551615 1 2 3 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 4 5 6 7 8 "
         "9 10 0\n";
}

std::string ProcStatText(const std::string& cpu_lines) {
  return cpu_lines + "intr 12 0 0\nctxt 100\nbtime " + std::to_string(kBtime) +
         "\nprocesses 10\nprocs_running 1\n";
}

// A process directory with every file the monitor reads.
struct FakePid {
  uint32_t pid = 4242;
  std::string comm = "python3";
  uint64_t utime = 100, stime = 50, start = 12345;
  uint64_t flags = 4194304;  // PF_RANDOMIZE, as for most user processes
  std::string status = "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t0\t0\t0\t0\n";
  std::string cmdline =
      "python3\0train.py\0--lr\0"
      "0.1\0"s;
  uint64_t rss_pages = 250;
  std::string cgroup = "0::/user.slice/user-0.slice/session-1.scope\n";
  std::string exe = "/usr/bin/python3.11";  // "": no exe link (a kernel thread)

  void WriteTo(FakeProc& proc) const {
    std::string dir = std::to_string(pid) + "/";
    if (exe.empty()) {
      proc.Remove(dir + "exe");
    } else {
      proc.Link(dir + "exe", exe);
    }
    proc.Write(dir + "stat", StatLine(pid, comm, utime, stime, start, flags, rss_pages));
    proc.Write(dir + "status", status);
    proc.Write(dir + "cmdline", cmdline);
    proc.Write(dir + "cgroup", cgroup);
  }
};

void WriteHostFiles(FakeProc& proc, const std::string& cpu_lines) {
  proc.Write("stat", ProcStatText(cpu_lines));
  proc.Write("meminfo", "MemTotal:       16384 kB\nMemFree:  1024 kB\nMemAvailable:   8192 kB\n");
  proc.Write("loadavg", "0.50 1.25 2.00 1/100 1234\n");
}

bool HostFieldsUnset(const api::GpuProcess& p) {
  return !p.uid && p.user.empty() && p.command.empty() && p.exe.empty() && !p.start_time_ms &&
         !p.cpu_percent && !p.rss_bytes && p.cgroup.empty();
}

// ---------------------------------------------------------------------------------------
// Host samples from a fake /proc.

TEST(HostMonitorSampleTest, ExactPercentagesBetweenSnapshots) {
  FakeProc proc;
  // Since boot: cpu0 busy 100 of 500, cpu1 busy 100 of 500 -> 20 % each and in total.
  WriteHostFiles(proc,
                 "cpu  100 0 100 800 0 0 0 0 0 0\n"
                 "cpu0 50 0 50 400 0 0 0 0 0 0\n"
                 "cpu1 50 0 50 400 0 0 0 0 0 0\n");
  HostMonitor mon(proc.root());
  auto s1 = mon.Sample();
  ASSERT_TRUE(s1.ok()) << s1.status().ToString();
  EXPECT_DOUBLE_EQ(s1->cpu_percent, 20);
  ASSERT_EQ(s1->per_core_percent.size(), 2u);
  EXPECT_DOUBLE_EQ(s1->per_core_percent[0], 20);
  EXPECT_DOUBLE_EQ(s1->per_core_percent[1], 20);
  EXPECT_EQ(s1->mem_total_bytes, 16384u * 1024);
  EXPECT_EQ(s1->mem_available_bytes, 8192u * 1024);
  EXPECT_DOUBLE_EQ(s1->load1, 0.5);
  EXPECT_DOUBLE_EQ(s1->load5, 1.25);
  EXPECT_DOUBLE_EQ(s1->load15, 2.0);
  // Busy CPU time since boot (user + nice + system + irq + softirq): 200 ticks.
  EXPECT_EQ(s1->cpu_busy_usec, 200 * 1'000'000 / kTicks);

  // cpu0: user +60, system +20, idle +10, iowait +10 -> 80 of 100 busy.
  // cpu1: user +5, idle +90, steal +5 -> 10 of 100 busy.
  // total: 90 of 200 busy -> 45 %. guest (+7, already in user) must not count twice.
  WriteHostFiles(proc,
                 "cpu  165 0 120 900 10 0 0 5 7 0\n"
                 "cpu0 110 0 70 410 10 0 0 0 7 0\n"
                 "cpu1 55 0 50 490 0 0 0 5 0 0\n");
  auto s2 = mon.Sample();
  ASSERT_TRUE(s2.ok()) << s2.status().ToString();
  EXPECT_DOUBLE_EQ(s2->cpu_percent, 45);
  ASSERT_EQ(s2->per_core_percent.size(), 2u);
  EXPECT_DOUBLE_EQ(s2->per_core_percent[0], 80);
  EXPECT_DOUBLE_EQ(s2->per_core_percent[1], 10);
  // Steal (another guest's time) and iowait are not busy: 165 + 120 ticks.
  EXPECT_EQ(s2->cpu_busy_usec, 285 * 1'000'000 / kTicks);

  // Nothing moved: 0 %, not NaN.
  auto s3 = mon.Sample();
  ASSERT_TRUE(s3.ok());
  EXPECT_DOUBLE_EQ(s3->cpu_percent, 0);
  EXPECT_DOUBLE_EQ(s3->per_core_percent[0], 0);
}

// Bad input tried: every counter going backwards (e.g. a fake tree reset, or a broken
// kernel), a core disappearing and a new one appearing.
TEST(HostMonitorSampleTest, CountersGoingBackwardsGiveZeroNeverNegative) {
  FakeProc proc;
  WriteHostFiles(proc, "cpu  100 0 100 800 0 0 0 0\ncpu0 50 0 50 400\ncpu1 50 0 50 400\n");
  HostMonitor mon(proc.root());
  ASSERT_TRUE(mon.Sample().ok());
  WriteHostFiles(proc, "cpu  10 0 10 80 0 0 0 0\ncpu0 5 0 5 40\ncpu2 30 0 0 70\n");
  auto s = mon.Sample();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(s->cpu_percent, 0);
  ASSERT_EQ(s->per_core_percent.size(), 2u);
  EXPECT_DOUBLE_EQ(s->per_core_percent[0], 0);   // backwards
  EXPECT_DOUBLE_EQ(s->per_core_percent[1], 30);  // new core: since zero
  // The lower counters are the new baseline.
  WriteHostFiles(proc, "cpu  20 0 10 90 0 0 0 0\ncpu0 15 0 5 50\ncpu2 30 0 0 70\n");
  s = mon.Sample();
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->cpu_percent, 50);
  EXPECT_DOUBLE_EQ(s->per_core_percent[0], 50);
  EXPECT_DOUBLE_EQ(s->per_core_percent[1], 0);
}

// Bad inputs tried: missing stat, empty stat, garbage counters, truncated cpu line,
// missing meminfo, meminfo without MemTotal, meminfo without MemAvailable (and no
// fallback fields), garbage meminfo value, missing loadavg, empty and garbage loadavg.
// Each gives an error naming the file, and leaves the CPU baseline unchanged.
TEST(HostMonitorSampleTest, BadFilesGiveErrorsNamingTheFile) {
  const std::string good_stat = ProcStatText("cpu  100 0 100 800\ncpu0 100 0 100 800\n");
  const std::string good_mem = "MemTotal: 10 kB\nMemAvailable: 5 kB\n";
  const std::string good_load = "0 0 0 1/1 1\n";
  struct Case {
    const char* name;
    const char* file;
    std::optional<std::string> content;  // nullopt: file missing
    std::string error;
  };
  const std::vector<Case> cases = {
      {"missing stat", "stat", std::nullopt, "/stat: No such file"},
      {"empty stat", "stat", "", "/stat: no \"cpu\" line"},
      {"garbage stat", "stat", "cpu  1 2 three 4\n", "/stat: line cpu: bad counter \"three\""},
      {"truncated stat", "stat", "cpu  100 0 1", "/stat: line cpu: 3 counters"},
      {"missing meminfo", "meminfo", std::nullopt, "/meminfo: No such file"},
      {"no MemTotal", "meminfo", "MemAvailable: 5 kB\n", "/meminfo: MemTotal missing"},
      {"no MemAvailable", "meminfo", "MemTotal: 10 kB\n", "/meminfo: MemAvailable missing"},
      {"garbage meminfo", "meminfo", "MemTotal: 1e6 kB\n", "/meminfo: MemTotal: bad value"},
      {"missing loadavg", "loadavg", std::nullopt, "/loadavg: No such file"},
      {"empty loadavg", "loadavg", "", "/loadavg: bad load average"},
      {"garbage loadavg", "loadavg", "high 1 1 1/1 1\n", "/loadavg: bad load average \"high\""},
  };
  for (const Case& c : cases) {
    FakeProc proc;
    proc.Write("stat", good_stat);
    proc.Write("meminfo", good_mem);
    proc.Write("loadavg", good_load);
    HostMonitor mon(proc.root());
    ASSERT_TRUE(mon.Sample().ok()) << c.name;  // baseline: 100 busy of 1000
    if (c.content) {
      proc.Write(c.file, *c.content);
    } else {
      proc.Remove(c.file);
    }
    auto r = mon.Sample();
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(r.status().message().find(proc.root() + c.error), std::string::npos)
        << c.name << ": " << r.status().message();
    // Repair, move the counters by 50 busy + 50 idle: the delta is from the good baseline.
    proc.Write("stat", ProcStatText("cpu  150 0 100 850\ncpu0 150 0 100 850\n"));
    proc.Write("meminfo", good_mem);
    proc.Write("loadavg", good_load);
    auto after = mon.Sample();
    ASSERT_TRUE(after.ok()) << c.name << ": " << after.status().ToString();
    EXPECT_DOUBLE_EQ(after->cpu_percent, 50) << c.name;
  }
}

// ---------------------------------------------------------------------------------------
// Describe() on a fake /proc.

// Runs with stat descriptors kept open across calls (the default) and with them
// reopened on every call (more processes than the descriptor budget).
class DescribeModeTest : public ::testing::TestWithParam<bool> {
 protected:
  void Configure(HostMonitor& mon) {
    if (!GetParam()) mon.set_max_open_processes(0);
  }
};
INSTANTIATE_TEST_SUITE_P(KeepOpen, DescribeModeTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "KeepOpen" : "Reopen"; });

TEST_P(DescribeModeTest, FillsEveryFieldFromFakeProc) {
  FakeProc proc;
  WriteHostFiles(proc, "cpu  1 0 1 8\n");
  FakePid fp;
  fp.comm = "my (weird) prog) (x";  // spaces, '(' and ')' in comm
  fp.WriteTo(proc);
  FakeClock clock;
  HostMonitor mon(proc.root(), clock);
  Configure(mon);

  api::GpuProcess p;
  p.pid = fp.pid;
  p.gpu_memory_bytes = 123;
  std::vector<api::GpuProcess*> ps = {&p};
  mon.Describe(ps);
  EXPECT_EQ(p.uid, 0u);
  EXPECT_EQ(p.user, "root");
  EXPECT_EQ(p.command, "python3 train.py --lr 0.1");
  EXPECT_EQ(p.exe, "/usr/bin/python3.11");
  EXPECT_EQ(p.start_time_ms, kBtime * 1000 + static_cast<int64_t>(12345 * 1000 / kTicks));
  EXPECT_FALSE(p.cpu_percent.has_value());  // first sight
  EXPECT_EQ(p.rss_bytes, 250 * kPage);
  EXPECT_EQ(p.cgroup, "/user.slice/user-0.slice/session-1.scope");
  EXPECT_EQ(p.gpu_memory_bytes, 123u);  // not a host field: untouched
  EXPECT_EQ(p.type, "compute");

  // One second of CPU over two seconds of wall time -> 50 % of a core.
  fp.utime += kTicks / 2;
  fp.stime += kTicks - kTicks / 2;
  fp.WriteTo(proc);
  clock.AdvanceMs(2000);
  mon.Describe(ps);
  ASSERT_TRUE(p.cpu_percent.has_value());
  EXPECT_DOUBLE_EQ(*p.cpu_percent, 50);

  // No wall time passed: no reading rather than a division by zero.
  mon.Describe(ps);
  EXPECT_FALSE(p.cpu_percent.has_value());
  EXPECT_EQ(p.command, "python3 train.py --lr 0.1");
}

TEST_P(DescribeModeTest, EmptyCommandLineOfAUserProcessIsReadAgain) {
  // A process caught mid-exec has its new comm but no argv yet.
  FakeProc proc;
  WriteHostFiles(proc, "cpu  1 0 1 8\n");
  FakePid fp;
  fp.comm = "sleep";
  fp.cmdline = "";
  fp.WriteTo(proc);
  FakeClock clock;
  HostMonitor mon(proc.root(), clock);
  Configure(mon);
  api::GpuProcess p;
  p.pid = fp.pid;
  std::vector<api::GpuProcess*> ps = {&p};
  mon.Describe(ps);
  EXPECT_EQ(p.command, "[sleep]");
  fp.cmdline =
      "sleep\0"
      "30\0"s;
  fp.WriteTo(proc);
  mon.Describe(ps);  // no time passed: read again anyway
  EXPECT_EQ(p.command, "sleep 30");
}

TEST(HostMonitorDescribeTest, KernelThreadAndUnknownUser) {
  FakeProc proc;
  WriteHostFiles(proc, "cpu  1 0 1 8\n");
  FakePid fp;
  fp.comm = "kworker/0:1";
  fp.cmdline = "";
  fp.flags = kPfKthread;
  fp.status = "Name:\tkworker/0:1\nUid:\t3999999999\t0\t0\t0\n";
  fp.exe = "";  // a kernel thread has no executable
  fp.WriteTo(proc);
  HostMonitor mon(proc.root());
  api::GpuProcess p;
  p.pid = fp.pid;
  std::vector<api::GpuProcess*> ps = {&p};
  mon.Describe(ps);
  EXPECT_EQ(p.command, "[kworker/0:1]");
  EXPECT_EQ(p.exe, "");
  EXPECT_EQ(p.uid, 3999999999u);
  EXPECT_EQ(p.user, "");
  // A kernel thread's empty command line is final: not read again before kRefreshMs.
  fp.cmdline = "not\0read\0"s;
  fp.WriteTo(proc);
  mon.Describe(ps);
  EXPECT_EQ(p.command, "[kworker/0:1]");
}

TEST(HostMonitorDescribeTest, CgroupVersions) {
  struct Case {
    const char* name;
    std::string cgroup;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"v1 only", "11:cpu,cpuacct:/c\n4:memory:/slurm/uid_0/job_7/step_0\n1:name=systemd:/s\n",
       "/slurm/uid_0/job_7/step_0"},
      {"v2 only", "0::/system.slice/rota-job-7.scope\n", "/system.slice/rota-job-7.scope"},
      {"hybrid", "4:memory:/m\n1:name=systemd:/user.slice\n0::/user.slice\n", "/user.slice"},
      {"hybrid, empty unified", "4:memory:/docker/abc\n1:name=systemd:/\n0::/\n", "/docker/abc"},
      {"root only", "0::/\n", ""},
  };
  for (const Case& c : cases) {
    FakeProc proc;
    WriteHostFiles(proc, "cpu  1 0 1 8\n");
    FakePid fp;
    fp.cgroup = c.cgroup;
    fp.WriteTo(proc);
    HostMonitor mon(proc.root());
    api::GpuProcess p;
    p.pid = fp.pid;
    std::vector<api::GpuProcess*> ps = {&p};
    mon.Describe(ps);
    EXPECT_EQ(p.cgroup, c.want) << c.name;
    EXPECT_EQ(p.command, "python3 train.py --lr 0.1") << c.name;
  }
}

TEST_P(DescribeModeTest, CachesSlowFieldsConfirmsThemOnceAndRefreshesThem) {
  FakeProc proc;
  WriteHostFiles(proc, "cpu  1 0 1 8\n");
  FakePid fp;
  fp.WriteTo(proc);
  FakeClock clock;
  HostMonitor mon(proc.root(), clock);
  Configure(mon);
  api::GpuProcess p;
  p.pid = fp.pid;
  std::vector<api::GpuProcess*> ps = {&p};
  mon.Describe(ps);
  EXPECT_EQ(p.command, "python3 train.py --lr 0.1");
  EXPECT_EQ(p.uid, 0u);
  // First seen as root, just after its exec and before it dropped to its user (setpriv,
  // sudo): read once more kConfirmMs later, so its uid does not stay root for kRefreshMs.
  fp.status = "Name:\tpython3\nUid:\t65534\t65534\t65534\t65534\n";
  fp.WriteTo(proc);
  clock.AdvanceMs(HostMonitor::kConfirmMs - 1);
  mon.Describe(ps);
  EXPECT_EQ(p.uid, 0u);  // not yet
  clock.AdvanceMs(1);
  mon.Describe(ps);
  EXPECT_EQ(p.uid, 65534u);
  EXPECT_EQ(p.command, "python3 train.py --lr 0.1");

  // The process execs and moves cgroup: the cache holds until kRefreshMs.
  fp.cmdline = "python3\0eval.py\0"s;
  fp.cgroup = "0::/moved\n";
  fp.rss_pages = 300;
  fp.WriteTo(proc);
  clock.AdvanceMs(HostMonitor::kRefreshMs - 1);
  mon.Describe(ps);
  EXPECT_EQ(p.command, "python3 train.py --lr 0.1");
  EXPECT_EQ(p.cgroup, "/user.slice/user-0.slice/session-1.scope");
  EXPECT_EQ(p.rss_bytes, 300 * kPage);  // stat is read every time
  clock.AdvanceMs(1);
  mon.Describe(ps);
  EXPECT_EQ(p.command, "python3 eval.py");
  EXPECT_EQ(p.cgroup, "/moved");
}

TEST_P(DescribeModeTest, PidReuseIsANewProcess) {
  FakeProc proc;
  WriteHostFiles(proc, "cpu  1 0 1 8\n");
  FakePid fp;
  fp.WriteTo(proc);
  FakeClock clock;
  HostMonitor mon(proc.root(), clock);
  Configure(mon);
  api::GpuProcess p;
  p.pid = fp.pid;
  std::vector<api::GpuProcess*> ps = {&p};
  mon.Describe(ps);

  fp.start = 99999;  // same pid, later start: another process
  fp.cmdline = "bash\0"s;
  fp.utime = 1;  // lower than before: must not produce a negative delta
  fp.WriteTo(proc);
  clock.AdvanceMs(1000);
  mon.Describe(ps);
  EXPECT_EQ(p.command, "bash");
  EXPECT_FALSE(p.cpu_percent.has_value());  // first sight of the new process
  EXPECT_EQ(p.start_time_ms, kBtime * 1000 + static_cast<int64_t>(99999 * 1000 / kTicks));
}

TEST_P(DescribeModeTest, SamePidOnSeveralGpusGetsTheSameValues) {
  FakeProc proc;
  WriteHostFiles(proc, "cpu  1 0 1 8\n");
  FakePid fp;
  fp.WriteTo(proc);
  FakeClock clock;
  HostMonitor mon(proc.root(), clock);
  Configure(mon);
  std::vector<api::GpuSample> gpus(2);
  gpus[0].processes.resize(1);
  gpus[1].processes.resize(1);
  gpus[0].processes[0].pid = fp.pid;
  gpus[1].processes[0].pid = fp.pid;
  mon.Describe(gpus);
  fp.utime += kTicks;
  fp.WriteTo(proc);
  clock.AdvanceMs(1000);
  mon.Describe(gpus);
  for (const api::GpuSample& g : gpus) {
    ASSERT_TRUE(g.processes[0].cpu_percent.has_value());
    EXPECT_DOUBLE_EQ(*g.processes[0].cpu_percent, 100);
    EXPECT_EQ(g.processes[0].command, "python3 train.py --lr 0.1");
  }
}

TEST_P(DescribeModeTest, GoneProcessesAreUnsetAndForgotten) {
  FakeProc proc;
  WriteHostFiles(proc, "cpu  1 0 1 8\n");
  FakePid a, b;
  b.pid = 5000;
  a.WriteTo(proc);
  b.WriteTo(proc);
  HostMonitor mon(proc.root());
  Configure(mon);
  api::GpuProcess pa, pb, never;
  pa.pid = a.pid;
  pb.pid = b.pid;
  never.pid = 777;  // no directory at all
  never.command = "stale";
  std::vector<api::GpuProcess*> ps = {&pa, &pb, &never};
  mon.Describe(ps);
  EXPECT_EQ(pa.command, "python3 train.py --lr 0.1");
  EXPECT_TRUE(HostFieldsUnset(never));
  EXPECT_EQ(mon.cached_processes(), 2u);

  proc.Kill(5000);
  pb.command = "stale";
  mon.Describe(ps);
  EXPECT_TRUE(HostFieldsUnset(pb));
  EXPECT_EQ(mon.cached_processes(), 1u);

  std::vector<api::GpuProcess*> none;
  mon.Describe(none);
  EXPECT_EQ(mon.cached_processes(), 0u);
}

// Bad inputs tried, per file of /proc/<pid>: empty stat, garbage stat, stat truncated
// before the start time or the rss field, garbage rss, status or cmdline missing (the
// process vanished between reads) -- all: process treated as gone; status without Uid
// (uid unset, rest filled); empty cmdline ("[comm]"); cgroup missing (kernel without
// cgroups) or garbage ("").
TEST_P(DescribeModeTest, BadPidFiles) {
  struct Case {
    const char* name;
    const char* file;
    std::optional<std::string> content;
    bool gone;
  };
  const std::vector<Case> cases = {
      {"empty stat", "stat", "", true},
      {"garbage stat", "stat", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 ten 12 13 14 15 16 17 18 19\n",
       true},
      {"truncated stat", "stat", "4242 (python3) S 1 4242 4242 0 -1 4194304", true},
      {"stat without the rss field", "stat",
       "4242 (python3) S 1 4242 4242 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 12345 3133440\n", true},
      {"garbage rss", "stat",
       "4242 (python3) S 1 4242 4242 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 12345 3133440 x\n", true},
      {"missing status", "status", std::nullopt, true},
      {"status without Uid", "status", "Name:\tpython3\n", false},
      {"missing cmdline", "cmdline", std::nullopt, true},
      {"empty cmdline", "cmdline", "", false},
      {"missing cgroup", "cgroup", std::nullopt, false},
      {"garbage cgroup", "cgroup", "\xff\xfe garbage", false},
  };
  for (const Case& c : cases) {
    FakeProc proc;
    WriteHostFiles(proc, "cpu  1 0 1 8\n");
    FakePid fp;
    fp.WriteTo(proc);
    std::string path = "4242/" + std::string(c.file);
    if (c.content) {
      proc.Write(path, *c.content);
    } else {
      proc.Remove(path);
    }
    HostMonitor mon(proc.root());
    Configure(mon);
    api::GpuProcess p;
    p.pid = fp.pid;
    std::vector<api::GpuProcess*> ps = {&p};
    mon.Describe(ps);
    if (c.gone) {
      EXPECT_TRUE(HostFieldsUnset(p)) << c.name;
      EXPECT_EQ(mon.cached_processes(), 0u) << c.name;
      continue;
    }
    EXPECT_TRUE(p.rss_bytes.has_value()) << c.name;
    EXPECT_TRUE(p.start_time_ms.has_value()) << c.name;
    if (std::string(c.file) == "status") {
      EXPECT_FALSE(p.uid.has_value()) << c.name;
      EXPECT_EQ(p.user, "") << c.name;
    } else {
      EXPECT_EQ(p.uid, 0u) << c.name;
    }
    EXPECT_EQ(p.command,
              std::string(c.file) == "cmdline" ? "[python3]" : "python3 train.py --lr 0.1")
        << c.name;
    if (std::string(c.file) == "cgroup") {
      EXPECT_EQ(p.cgroup, "") << c.name;
    }
  }
}

TEST(HostMonitorDescribeTest, NoBootTimeLeavesStartTimeUnset) {
  FakeProc proc;
  proc.Write("stat", "cpu  1 0 1 8\n");  // no btime line
  FakePid fp;
  fp.WriteTo(proc);
  HostMonitor mon(proc.root());
  api::GpuProcess p;
  p.pid = fp.pid;
  std::vector<api::GpuProcess*> ps = {&p};
  mon.Describe(ps);
  EXPECT_FALSE(p.start_time_ms.has_value());
  EXPECT_EQ(p.command, "python3 train.py --lr 0.1");
}

// ---------------------------------------------------------------------------------------
// Static info.

TEST(StaticInfoTest, FromFakeProc) {
  FakeProc proc;
  WriteHostFiles(proc, "cpu  1 0 1 8\ncpu0 1 0 1 8\ncpu1 0 0 0 0\ncpu3 0 0 0 0\n");
  auto info = ReadStaticInfo(proc.root());
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->cpus, 3u);
  EXPECT_EQ(info->memory_bytes, 16384u * 1024);
  EXPECT_FALSE(info->hostname.empty());
}

// Bad inputs tried: missing meminfo, garbage stat.
TEST(StaticInfoTest, BadFakeProc) {
  FakeProc proc;
  WriteHostFiles(proc, "cpu  1 0 1 8\n");
  proc.Remove("meminfo");
  auto info = ReadStaticInfo(proc.root());
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find(proc.root() + "/meminfo"), std::string::npos);
  WriteHostFiles(proc, "cpu  x\n");
  info = ReadStaticInfo(proc.root());
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find(proc.root() + "/stat"), std::string::npos);
}

TEST(SelectAddressesTest, Table) {
  struct Case {
    const char* name;
    std::vector<InterfaceAddress> in;
    std::vector<std::string> want;
  };
  // Fields: interface, ipv6, text, loopback, link_local, up.
  const std::vector<Case> cases = {
      {"loopback dropped",
       {{"lo", false, "127.0.0.1", true, false, true},
        {"lo", true, "::1", true, false, true},
        {"eth0", false, "10.0.0.5", false, false, true}},
       {"10.0.0.5"}},
      {"ipv4 before ipv6",
       {{"eth0", true, "2001:db8::5", false, false, true},
        {"eth0", false, "10.0.0.5", false, false, true},
        {"ib0", false, "192.168.1.5", false, false, true}},
       {"10.0.0.5", "192.168.1.5", "2001:db8::5"}},
      {"link-local and down dropped",
       {{"eth0", true, "fe80::1", false, true, true},
        {"eth1", false, "169.254.3.4", false, true, true},
        {"eth2", false, "10.1.1.1", false, false, false},
        {"eth3", false, "10.2.2.2", false, false, true}},
       {"10.2.2.2"}},
      {"only loopback",
       {{"lo", false, "127.0.0.1", true, false, true}, {"lo", true, "::1", true, false, true}},
       {"127.0.0.1", "::1"}},
      {"duplicates",
       {{"a", false, "10.0.0.1", false, false, true}, {"b", false, "10.0.0.1", false, false, true}},
       {"10.0.0.1"}},
      {"nothing", {}, {}},
  };
  for (const Case& c : cases) EXPECT_EQ(SelectAddresses(c.in), c.want) << c.name;
}

}  // namespace
}  // namespace rota::host
