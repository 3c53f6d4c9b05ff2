// The collector's sample with CPU energy: a fake /proc, a fake powercap tree (RAPL)
// and fake task cgroups (v2 cpu.stat, v1 cpuacct.usage).

#include "agent/collector.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace rota::agent {
namespace {

namespace fs = std::filesystem;

class CollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "rota-collector-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    WriteProcStat(100, 50);
    Write("proc/meminfo", "MemTotal: 16384 kB\nMemAvailable: 8192 kB\n");
    Write("proc/loadavg", "0.50 1.25 2.00 1/100 1234\n");
    Write("powercap/intel-rapl:0/name", "package-0\n");
    Write("powercap/intel-rapl:0/max_energy_range_uj", "262143328850\n");
    Energy(1'000'000'000);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void Write(const std::string& rel, const std::string& text) {
    fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::trunc) << text;
  }
  void WriteProcStat(uint64_t user, uint64_t system) {
    Write("proc/stat", "cpu  " + std::to_string(user) + " 0 " + std::to_string(system) +
                           " 1000 0 0 0 0 0 0\ncpu0 " + std::to_string(user) + " 0 " +
                           std::to_string(system) + " 1000 0 0 0 0 0 0\nbtime 1700000000\n");
  }
  void Energy(uint64_t uj) { Write("powercap/intel-rapl:0/energy_uj", std::to_string(uj) + "\n"); }
  std::string path(const std::string& rel) const { return dir_ + "/" + rel; }

  std::string dir_;
  FakeClock clock_;
};

TEST_F(CollectorTest, SamplesCarryCpuEnergyBusyTimeAndTheTasksCgroupCpuTime) {
  host::HostMonitor monitor(path("proc"), clock_);
  host::RaplMeter rapl(path("powercap"), clock_);
  Collector collector(nullptr, &monitor, &clock_, &rapl);
  // Task 1 on cgroup v2; task 2 on v1 (cpu without a usage counter, then cpuacct);
  // task 3's cgroup is gone (it just ended).
  Write("cg/v2/job-7.r0.w-0/cpu.stat", "usage_usec 1500000\nuser_usec 1000000\n");
  Write("cg/v1/cpu/job-8.r0.w-0/cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
  Write("cg/v1/cpuacct/job-8.r0.w-0/cpuacct.usage", "2500000000\n");
  const std::vector<TaskCgroups> tasks = {
      {"job-7.r0.w-0", 7, {path("cg/v2/job-7.r0.w-0")}},
      {"job-8.r0.w-0", 8, {path("cg/v1/cpu/job-8.r0.w-0"), path("cg/v1/cpuacct/job-8.r0.w-0")}},
      {"job-9.r0.w-0", 9, {path("cg/gone")}},
  };

  auto first = collector.Sample(tasks);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->host.cpu_energy_mj, 0u);  // the meter counts from its first read
  const uint64_t hz = static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
  EXPECT_EQ(first->host.cpu_busy_usec, 150 * 1'000'000 / hz);
  ASSERT_EQ(first->host.cpu_tasks.size(), 2u);
  EXPECT_EQ(first->host.cpu_tasks[0].id, "job-7.r0.w-0");
  EXPECT_EQ(first->host.cpu_tasks[0].job_id, 7);
  EXPECT_EQ(first->host.cpu_tasks[0].usage_usec, 1'500'000u);
  EXPECT_EQ(first->host.cpu_tasks[1].id, "job-8.r0.w-0");
  EXPECT_EQ(first->host.cpu_tasks[1].job_id, 8);
  EXPECT_EQ(first->host.cpu_tasks[1].usage_usec, 2'500'000u);

  // 2 s later: 250 J more, more busy time and task time.
  clock_.AdvanceMs(2000);
  Energy(1'250'000'500);
  WriteProcStat(300, 100);
  Write("cg/v2/job-7.r0.w-0/cpu.stat", "usage_usec 2000000\n");
  auto second = collector.Sample(tasks);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->time_ms, clock_.NowMs());
  EXPECT_EQ(second->host.cpu_energy_mj, 250'000u);
  EXPECT_EQ(second->host.cpu_busy_usec, 400 * 1'000'000 / hz);
  ASSERT_EQ(second->host.cpu_tasks.size(), 2u);
  EXPECT_EQ(second->host.cpu_tasks[0].usage_usec, 2'000'000u);

  // RAPL unreadable: no energy and no tasks (nothing to split), the rest as usual.
  fs::remove_all(path("powercap"));
  auto third = collector.Sample(tasks);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_FALSE(third->host.cpu_energy_mj.has_value());
  EXPECT_TRUE(third->host.cpu_tasks.empty());
  EXPECT_TRUE(third->host.cpu_busy_usec.has_value());
}

TEST_F(CollectorTest, WithoutAMeterSamplesCarryNoCpuEnergy) {
  host::HostMonitor monitor(path("proc"), clock_);
  Collector collector(nullptr, &monitor, &clock_);
  Write("cg/v2/job-7.r0.w-0/cpu.stat", "usage_usec 1500000\n");
  auto s = collector.Sample({{"job-7.r0.w-0", 7, {path("cg/v2/job-7.r0.w-0")}}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->host.cpu_energy_mj.has_value());
  EXPECT_TRUE(s->host.cpu_tasks.empty());
}

}  // namespace
}  // namespace rota::agent
