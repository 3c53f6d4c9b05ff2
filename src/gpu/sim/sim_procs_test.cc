#include "gpu/sim/sim_procs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gpu/gpu_test_util.h"

namespace rota::gpu::sim {
namespace {

namespace fs = std::filesystem;
using testing::Child;
using testing::TempDir;

std::string Block(const std::vector<std::string>& vars) {
  std::string s;
  for (const auto& v : vars) s += v + '\0';
  return s;
}

TEST(ParseEnvironTest, ReadsSimVariables) {
  std::string b =
      Block({"HOME=/root", "CUDA_VISIBLE_DEVICES=1,2", "ROTA_SIM_NODE=n1",
             "ROTA_SIM_GPU_MEM_MIB=2048", "ROTA_SIM_GPU_UTIL=40", "ROTA_SIM_GPU_TYPE=both"});
  ProcEnv env;
  ASSERT_TRUE(ParseEnviron(b.data(), b.size(), &env));
  EXPECT_EQ(env.visible, "1,2");
  EXPECT_TRUE(env.has_node);
  EXPECT_EQ(env.node, "n1");
  EXPECT_EQ(env.mem_mib, 2048u);
  EXPECT_EQ(env.util, 40u);
  EXPECT_TRUE(env.compute);
  EXPECT_TRUE(env.graphics);
}

TEST(ParseEnvironTest, DefaultsAndNoTrailingNul) {
  std::string b = "CUDA_VISIBLE_DEVICES=0";  // last entry without its NUL
  ProcEnv env;
  ASSERT_TRUE(ParseEnviron(b.data(), b.size(), &env));
  EXPECT_EQ(env.visible, "0");
  EXPECT_FALSE(env.has_node);
  EXPECT_EQ(env.mem_mib, 1024u);
  EXPECT_EQ(env.util, 100u);
  EXPECT_TRUE(env.compute);
  EXPECT_FALSE(env.graphics);
}

// Bad inputs tried: no CUDA_VISIBLE_DEVICES, look-alike names, empty ROTA_SIM_NODE,
// non-numeric / negative / out-of-range numbers, unknown type, empty block.
TEST(ParseEnvironTest, BadValuesFallBackToDefaults) {
  ProcEnv env;
  std::string none = Block({"PATH=/bin", "CUDA_VISIBLE_DEVICES_X=1", "XCUDA_VISIBLE_DEVICES=1"});
  EXPECT_FALSE(ParseEnviron(none.data(), none.size(), &env));
  EXPECT_FALSE(ParseEnviron("", 0, &env));
  std::string b = Block({"CUDA_VISIBLE_DEVICES=0", "ROTA_SIM_NODE=", "ROTA_SIM_GPU_MEM_MIB=lots",
                         "ROTA_SIM_GPU_UTIL=101", "ROTA_SIM_GPU_TYPE=video"});
  ASSERT_TRUE(ParseEnviron(b.data(), b.size(), &env));
  EXPECT_FALSE(env.has_node);
  EXPECT_EQ(env.mem_mib, 1024u);
  EXPECT_EQ(env.util, 100u);
  EXPECT_TRUE(env.compute);
  EXPECT_FALSE(env.graphics);
  b = Block({"CUDA_VISIBLE_DEVICES=0", "ROTA_SIM_GPU_UTIL=-3", "ROTA_SIM_GPU_MEM_MIB=99999999999",
             "ROTA_SIM_GPU_TYPE=graphics"});
  ASSERT_TRUE(ParseEnviron(b.data(), b.size(), &env));
  EXPECT_EQ(env.util, 100u);
  EXPECT_EQ(env.mem_mib, 1024u);
  EXPECT_FALSE(env.compute);
  EXPECT_TRUE(env.graphics);
}

// A fake /proc lets the test control pids, inodes and time.
class FakeProcTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()); }
  void WriteEnv(const std::string& pid, const std::vector<std::string>& vars) {
    fs::create_directories(dir_.path() + "/" + pid);
    std::ofstream(dir_.path() + "/" + pid + "/environ", std::ios::binary) << Block(vars);
  }
  std::vector<pid_t> Pids(const ProcScanner& s) {
    std::vector<pid_t> out;
    for (const auto& [pid, env] : s.GpuProcesses()) out.push_back(pid);
    return out;
  }
  TempDir dir_;
};

TEST_F(FakeProcTest, ReadsEnvironOncePerSettledProcess) {
  WriteEnv("100", {"CUDA_VISIBLE_DEVICES=0"});
  WriteEnv("101", {"HOME=/"});
  fs::create_directories(dir_.path() + "/self");  // non-numeric entries are ignored
  ProcScanner s(dir_.path());
  s.Scan(0);
  EXPECT_THAT(Pids(s), ::testing::ElementsAre(100));
  EXPECT_EQ(s.environ_reads(), 2u);
  s.Scan(10);  // processes present at the first scan are settled: no re-read
  EXPECT_EQ(s.environ_reads(), 2u);

  // A new process is re-read while young, so an exec right after fork is noticed.
  WriteEnv("200", {"HOME=/"});
  s.Scan(1000);
  EXPECT_EQ(s.environ_reads(), 3u);
  EXPECT_THAT(Pids(s), ::testing::ElementsAre(100));
  WriteEnv("200", {"CUDA_VISIBLE_DEVICES=1"});  // "exec" with a new environment
  s.Scan(1500);
  EXPECT_EQ(s.environ_reads(), 4u);
  EXPECT_THAT(Pids(s), ::testing::ElementsAre(100, 200));
  s.Scan(1000 + ProcScanner::kYoungMs);  // read once more, kYoungMs after: settled now
  EXPECT_EQ(s.environ_reads(), 5u);
  s.Scan(2000 + ProcScanner::kYoungMs);
  EXPECT_EQ(s.environ_reads(), 5u);
  EXPECT_THAT(Pids(s), ::testing::ElementsAre(100, 200));
}

// On a loaded machine the scans come late: a child seen before its exec and not scanned
// again until after the young window must still be read once more, not settled as it was.
TEST_F(FakeProcTest, LateScanStillReadsAYoungProcessOnceMore) {
  ProcScanner s(dir_.path());
  s.Scan(0);
  WriteEnv("500", {"HOME=/"});  // forked, not exec'd yet
  s.Scan(1000);
  EXPECT_THAT(Pids(s), ::testing::IsEmpty());
  WriteEnv("500", {"CUDA_VISIBLE_DEVICES=2"});  // exec'd while no scan ran
  s.Scan(1000 + 5 * ProcScanner::kYoungMs);  // the next scan comes late
  EXPECT_THAT(Pids(s), ::testing::ElementsAre(500));
  const uint64_t reads = s.environ_reads();
  s.Scan(1000 + 6 * ProcScanner::kYoungMs);
  EXPECT_EQ(s.environ_reads(), reads);  // settled by the late read
  EXPECT_THAT(Pids(s), ::testing::ElementsAre(500));
}

TEST_F(FakeProcTest, ReusedPidIsReadAgainAndExitedPidDropped) {
  WriteEnv("100", {"CUDA_VISIBLE_DEVICES=0"});
  WriteEnv("300", {"CUDA_VISIBLE_DEVICES=0"});
  ProcScanner s(dir_.path());
  s.Scan(0);
  EXPECT_THAT(Pids(s), ::testing::ElementsAre(100, 300));
  // pid 100 exits and the pid is reused by a non-GPU process: a new /proc inode.
  WriteEnv("tmp", {"HOME=/"});
  fs::remove_all(dir_.path() + "/100");
  fs::rename(dir_.path() + "/tmp", dir_.path() + "/100");
  fs::remove_all(dir_.path() + "/300");
  s.Scan(10000);
  EXPECT_THAT(Pids(s), ::testing::IsEmpty());
}

// Bad inputs tried: a pid directory without a readable environ, the scanner's own pid,
// a missing proc root.
TEST_F(FakeProcTest, SkipsUnreadableSelfAndMissingRoot) {
  fs::create_directories(dir_.path() + "/400");  // no environ file
  WriteEnv(std::to_string(getpid()), {"CUDA_VISIBLE_DEVICES=0"});
  ProcScanner s(dir_.path());
  s.Scan(0);
  EXPECT_THAT(Pids(s), ::testing::IsEmpty());
  ProcScanner missing(dir_.path() + "/nope");
  missing.Scan(0);
  EXPECT_THAT(Pids(missing), ::testing::IsEmpty());
}

TEST(ProcScannerTest, FindsRealChildInProc) {
  auto child = Child::Start(
      {"CUDA_VISIBLE_DEVICES=3", "ROTA_SIM_NODE=procs-test", "ROTA_SIM_GPU_MEM_MIB=512"});
  ASSERT_NE(child, nullptr);
  ProcScanner s;
  s.Scan(0);
  const ProcEnv* found = nullptr;
  for (const auto& [pid, env] : s.GpuProcesses()) {
    if (pid == child->pid()) found = env;
  }
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->visible, "3");
  EXPECT_EQ(found->node, "procs-test");
  EXPECT_EQ(found->mem_mib, 512u);
}

}  // namespace
}  // namespace rota::gpu::sim
