// Runs the real NvmlProvider against the simulated NVML library (ROTA_SIM_NVML_PATH).

#include "gpu/nvml_provider.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "common/file_util.h"
#include "gpu/gpu_test_util.h"
#include "gpu/sim/sim_config.h"
#include "gpu/sim/sim_procs.h"

namespace rota::gpu {
namespace {

using testing::Child;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::TempDir;

constexpr uint64_t kMiB = 1 << 20;

std::string ThreeGpuConfig(const std::string& node, const std::string& extra = "") {
  return R"({"node":")" + node + R"(",
    "gpus":[{"model":"NVIDIA A100-SXM4-80GB","memory_mib":81920,"power_limit_w":400,
             "idle_power_w":60},
            {"model":"NVIDIA A100-SXM4-40GB","memory_mib":40960,"power_limit_w":400,
             "idle_power_w":50},
            {"model":"NVIDIA H100 80GB HBM3","memory_mib":81559,"power_limit_w":700,
             "idle_power_w":70}])" +
         extra + "}";
}

class NvmlProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    static int counter = 0;
    node_ = "gtest-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
    config_ = dir_.path() + "/sim.json";
    setenv("ROTA_SIM_NVML_CONFIG", config_.c_str(), 1);
    setenv("ROTA_SIM_NVML_REFRESH_MS", "0", 1);  // see every change at once
  }
  void TearDown() override {
    unsetenv("ROTA_SIM_NVML_CONFIG");
    unsetenv("ROTA_SIM_NVML_REFRESH_MS");
  }

  void WriteConfig(const std::string& text) { ASSERT_TRUE(WriteFileAtomic(config_, text).ok()); }

  std::unique_ptr<GpuProvider> Open() {
    auto p = OpenNvml(ROTA_SIM_NVML_PATH);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? std::move(p).value() : nullptr;
  }

  std::vector<api::GpuSample> Sample(GpuProvider& p) {
    auto s = p.Sample();
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : std::vector<api::GpuSample>{};
  }

  std::vector<std::string> NodeEnv(const std::string& visible) {
    return {"CUDA_VISIBLE_DEVICES=" + visible, "ROTA_SIM_NODE=" + node_};
  }

  static std::vector<uint32_t> Pids(const api::GpuSample& s) {
    std::vector<uint32_t> out;
    for (const auto& p : s.processes) out.push_back(p.pid);
    return out;
  }

  TempDir dir_;
  std::string node_, config_;
};

TEST_F(NvmlProviderTest, DevicesMatchConfig) {
  WriteConfig(ThreeGpuConfig(node_));
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto devices = p->Devices();
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 3u);
  const std::regex uuid_form("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  const char* names[] = {"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3"};
  const uint64_t mib[] = {81920, 40960, 81559};
  const uint32_t limit_w[] = {400, 400, 700};
  for (unsigned i = 0; i < 3; ++i) {
    const api::GpuInfo& g = (*devices)[i];
    EXPECT_EQ(g.index, i);
    EXPECT_TRUE(std::regex_match(g.uuid, uuid_form)) << g.uuid;
    EXPECT_EQ(g.uuid, sim::MakeUuid(node_, i));
    EXPECT_EQ(g.name, names[i]);
    EXPECT_EQ(g.pci_bus_id, "00000000:0" + std::to_string(i + 1) + ":00.0");
    EXPECT_EQ(g.memory_total_bytes, mib[i] * kMiB);
    EXPECT_EQ(g.power_limit_mw, limit_w[i] * 1000);
  }
  EXPECT_NE((*devices)[0].uuid, (*devices)[1].uuid);

  // Stable across restarts, different on another node.
  p.reset();
  p = Open();
  ASSERT_NE(p, nullptr);
  auto again = p->Devices();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[2].uuid, (*devices)[2].uuid);
  p.reset();
  WriteConfig(ThreeGpuConfig(node_ + "-other"));
  p = Open();
  ASSERT_NE(p, nullptr);
  auto other = p->Devices();
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*other)[2].uuid, (*devices)[2].uuid);
}

TEST_F(NvmlProviderTest, IdleSampleHasEveryReading) {
  WriteConfig(ThreeGpuConfig(node_));
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  for (unsigned i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(s[i].index, i);
    EXPECT_EQ(s[i].uuid, sim::MakeUuid(node_, i));
    EXPECT_FALSE(s[i].failed);
    EXPECT_EQ(s[i].memory_used_bytes, 0u);
    EXPECT_EQ(s[i].util_gpu_pct, 0u);
    EXPECT_EQ(s[i].util_memory_pct, 0u);
    EXPECT_TRUE(s[i].temperature_c.has_value());
    EXPECT_TRUE(s[i].energy_mj.has_value());
    EXPECT_EQ(s[i].sm_clock_mhz, 210u);
    EXPECT_TRUE(s[i].mem_clock_mhz.has_value());
    EXPECT_TRUE(s[i].fan_pct.has_value());
    EXPECT_THAT(s[i].processes, IsEmpty());
  }
  EXPECT_EQ(s[0].memory_total_bytes, 81920 * kMiB);
  EXPECT_EQ(s[0].power_mw, 60000u);
  EXPECT_EQ(s[1].power_mw, 50000u);
  EXPECT_EQ(s[2].power_limit_mw, 700000u);
}

// Faults tried: not_supported on every field of GPU 1, "error" (NVML_ERROR_UNKNOWN) on
// GPU 2's fan, enforced power limit unsupported on GPU 0 (falls back to the management
// limit), both power limits unsupported on GPU 2.
TEST_F(NvmlProviderTest, UnsupportedFieldsAreAbsent) {
  std::string faults = R"(,"faults":{"0:enforced_power_limit":"not_supported",
      "2:fan":"error","2:power_limit":"not_supported")";
  for (const char* f : {"memory", "utilization", "temperature", "power", "power_limit", "energy",
                        "clocks", "fan", "processes"}) {
    faults += std::string(",\"1:") + f + "\":\"not_supported\"";
  }
  WriteConfig(ThreeGpuConfig(node_, faults + "}"));
  auto child = Child::Start(NodeEnv("0,1,2"));
  ASSERT_NE(child, nullptr);
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  const api::GpuSample& g1 = s[1];
  EXPECT_FALSE(g1.failed);
  EXPECT_EQ(g1.uuid, sim::MakeUuid(node_, 1));
  EXPECT_FALSE(g1.memory_total_bytes || g1.memory_used_bytes || g1.util_gpu_pct ||
               g1.util_memory_pct || g1.temperature_c || g1.power_mw || g1.power_limit_mw ||
               g1.energy_mj || g1.sm_clock_mhz || g1.mem_clock_mhz || g1.fan_pct);
  EXPECT_THAT(g1.processes, IsEmpty());
  EXPECT_EQ(s[0].power_limit_mw, 400000u);  // via nvmlDeviceGetPowerManagementLimit
  EXPECT_THAT(Pids(s[0]), ElementsAre(child->pid()));
  EXPECT_FALSE(s[2].failed);
  EXPECT_FALSE(s[2].fan_pct.has_value());
  EXPECT_FALSE(s[2].power_limit_mw.has_value());
  EXPECT_TRUE(s[2].power_mw.has_value());
  auto devices = p->Devices();
  ASSERT_TRUE(devices.ok());
  EXPECT_FALSE((*devices)[1].memory_total_bytes.has_value());
  EXPECT_FALSE((*devices)[1].power_limit_mw.has_value());
  EXPECT_EQ((*devices)[0].power_limit_mw, 400000u);
}

// A driver's NOT_SUPPORTED does not change while it is loaded, so the provider stops asking
// (each refused call costs a trip into the driver). The simulator, unlike a driver, can
// start supporting the field: it then stays absent, which shows it is no longer read.
// Other errors are transient and are asked again.
TEST_F(NvmlProviderTest, AFieldOnceUnsupportedIsNotAskedAgain) {
  WriteConfig(ThreeGpuConfig(node_, R"(,"faults":{"1:fan":"not_supported","2:fan":"error",
      "0:enforced_power_limit":"not_supported"})"));
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto first = Sample(*p);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_FALSE(first[1].fan_pct.has_value());
  EXPECT_FALSE(first[2].fan_pct.has_value());
  EXPECT_EQ(first[0].power_limit_mw, 400000u);  // via nvmlDeviceGetPowerManagementLimit

  WriteConfig(ThreeGpuConfig(node_));
  auto later = Sample(*p);
  ASSERT_EQ(later.size(), 3u);
  EXPECT_TRUE(later[0].fan_pct.has_value());
  EXPECT_FALSE(later[1].fan_pct.has_value());  // not asked again
  EXPECT_TRUE(later[2].fan_pct.has_value());   // an error is asked again
  EXPECT_EQ(later[0].power_limit_mw, 400000u); // the fallback goes on serving
  EXPECT_TRUE(later[1].power_mw.has_value());
}

TEST_F(NvmlProviderTest, ChildAppearsOnItsGpuOnlyAndLoadsIt) {
  WriteConfig(ThreeGpuConfig(node_));
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto before = Sample(*p);
  ASSERT_EQ(before.size(), 3u);
  std::vector<std::string> env = NodeEnv("1");
  env.push_back("ROTA_SIM_GPU_MEM_MIB=2048");
  auto child = Child::Start(env);
  ASSERT_NE(child, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_THAT(s[0].processes, IsEmpty());
  EXPECT_THAT(s[2].processes, IsEmpty());
  ASSERT_EQ(s[1].processes.size(), 1u);
  const api::GpuProcess& proc = s[1].processes[0];
  EXPECT_EQ(proc.pid, static_cast<uint32_t>(child->pid()));
  EXPECT_EQ(proc.type, "compute");
  EXPECT_EQ(proc.gpu_memory_bytes, 2048 * kMiB);
  EXPECT_FALSE(proc.uid.has_value());  // host fields are the agent's job
  EXPECT_EQ(s[1].memory_used_bytes, 2048 * kMiB);
  EXPECT_EQ(s[1].util_gpu_pct, 100u);
  EXPECT_GT(*s[1].util_memory_pct, 0u);
  EXPECT_EQ(s[1].power_mw, 400000u);
  EXPECT_GT(*s[1].power_mw, *before[1].power_mw);
  EXPECT_GT(*s[1].temperature_c, *before[1].temperature_c);
  EXPECT_GT(*s[1].sm_clock_mhz, *before[1].sm_clock_mhz);
  EXPECT_EQ(s[0].util_gpu_pct, 0u);
  EXPECT_EQ(s[0].power_mw, before[0].power_mw);

  // The process goes away: so does its load.
  pid_t pid = child->pid();
  child.reset();
  s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_THAT(Pids(s[1]), ::testing::Not(::testing::Contains(static_cast<uint32_t>(pid))));
  EXPECT_EQ(s[1].util_gpu_pct, 0u);
}

TEST_F(NvmlProviderTest, UtilisationAndMemoryAddUpAndCap) {
  WriteConfig(ThreeGpuConfig(node_));
  auto p = Open();
  ASSERT_NE(p, nullptr);
  std::vector<std::unique_ptr<Child>> children;
  for (const char* util : {"30", "40"}) {
    std::vector<std::string> env = NodeEnv("0");
    env.push_back(std::string("ROTA_SIM_GPU_UTIL=") + util);
    env.push_back("ROTA_SIM_GPU_MEM_MIB=50000");
    children.push_back(Child::Start(env));
    ASSERT_NE(children.back(), nullptr);
  }
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].processes.size(), 2u);
  EXPECT_EQ(s[0].util_gpu_pct, 70u);
  EXPECT_EQ(s[0].power_mw, 60000u + 340000u * 70 / 100);
  EXPECT_EQ(s[0].memory_used_bytes, 81920 * kMiB);  // 100000 MiB asked, capped at total
  std::vector<std::string> env = NodeEnv("0");
  env.push_back("ROTA_SIM_GPU_UTIL=50");
  children.push_back(Child::Start(env));
  ASSERT_NE(children.back(), nullptr);
  s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].util_gpu_pct, 100u);
}

TEST_F(NvmlProviderTest, ProcessesOfOtherNodesAreInvisible) {
  WriteConfig(ThreeGpuConfig(node_));
  auto other = Child::Start({"CUDA_VISIBLE_DEVICES=0", "ROTA_SIM_NODE=" + node_ + "-elsewhere"});
  auto untagged = Child::Start({"CUDA_VISIBLE_DEVICES=0"});
  auto no_gpu = Child::Start({"ROTA_SIM_NODE=" + node_});
  ASSERT_TRUE(other && untagged && no_gpu);
  auto p = Open();
  ASSERT_NE(p, nullptr);
  for (const auto& g : Sample(*p)) {
    EXPECT_THAT(g.processes, IsEmpty()) << "gpu " << g.index;
  }
}

TEST_F(NvmlProviderTest, JobTasksOfAnotherAgentOfTheSameNodeNameAreInvisible) {
  // Two clusters on one host (two `rota dev`, tests side by side) both have a
  // node of this name; a job task is its own agent's by its task directory.
  const std::string mine = dir_.path() + "/agent";
  WriteConfig(ThreeGpuConfig(node_, R"(,"tasks_under":")" + mine + R"(/")"));
  auto own = Child::Start({"CUDA_VISIBLE_DEVICES=1", "ROTA_NODE=" + node_,
                           "ROTA_PREEMPT_NOTICE=" + mine + "/tasks/job-1.r0.worker-0/preempted"});
  auto foreign = Child::Start({"CUDA_VISIBLE_DEVICES=1", "ROTA_NODE=" + node_,
                               "ROTA_PREEMPT_NOTICE=" + mine + "2/tasks/job-1.r0.worker-0/preempted"});
  auto by_hand = Child::Start({"CUDA_VISIBLE_DEVICES=1", "ROTA_SIM_NODE=" + node_,
                               "ROTA_PREEMPT_NOTICE=/elsewhere/preempted"});
  ASSERT_TRUE(own && foreign && by_hand);
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_THAT(Pids(s[1]), ElementsAre(static_cast<uint32_t>(own->pid()), static_cast<uint32_t>(by_hand->pid())));
}

TEST_F(NvmlProviderTest, DefaultNodeOwnsUntaggedProcesses) {
  std::string text = ThreeGpuConfig(node_);
  text.insert(1, R"("default_node":true,)");
  WriteConfig(text);
  auto untagged = Child::Start({"CUDA_VISIBLE_DEVICES=2"});
  auto other = Child::Start({"CUDA_VISIBLE_DEVICES=2", "ROTA_SIM_NODE=" + node_ + "-x"});
  ASSERT_TRUE(untagged && other);
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  // Other tests or tools may run untagged GPU processes too; check ours only.
  EXPECT_THAT(Pids(s[2]), ::testing::Contains(static_cast<uint32_t>(untagged->pid())));
  EXPECT_THAT(Pids(s[2]), ::testing::Not(::testing::Contains(static_cast<uint32_t>(other->pid()))));
  EXPECT_THAT(Pids(s[0]),
              ::testing::Not(::testing::Contains(static_cast<uint32_t>(untagged->pid()))));
}

TEST_F(NvmlProviderTest, UuidFormOfVisibleDevices) {
  WriteConfig(ThreeGpuConfig(node_));
  const std::string uuid2 = sim::MakeUuid(node_, 2);
  auto by_uuid = Child::Start(NodeEnv(uuid2));
  auto mixed = Child::Start(NodeEnv("0," + uuid2.substr(0, 20)));
  auto stops = Child::Start(NodeEnv("1,bogus,2"));
  ASSERT_TRUE(by_uuid && mixed && stops);
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_THAT(Pids(s[0]), ElementsAre(mixed->pid()));
  EXPECT_THAT(Pids(s[1]), ElementsAre(stops->pid()));
  std::vector<uint32_t> on2 = {static_cast<uint32_t>(by_uuid->pid()),
                               static_cast<uint32_t>(mixed->pid())};
  std::sort(on2.begin(), on2.end());
  EXPECT_EQ(Pids(s[2]), on2);
}

TEST_F(NvmlProviderTest, GraphicsProcessesAndDeduplication) {
  WriteConfig(ThreeGpuConfig(node_));
  std::vector<std::string> g = NodeEnv("0"), both = NodeEnv("0");
  g.push_back("ROTA_SIM_GPU_TYPE=graphics");
  both.push_back("ROTA_SIM_GPU_TYPE=both");
  auto gfx = Child::Start(g);
  auto dual = Child::Start(both);
  ASSERT_TRUE(gfx && dual);
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  ASSERT_EQ(s[0].processes.size(), 2u);  // the "both" process appears once
  for (const auto& proc : s[0].processes) {
    EXPECT_EQ(proc.type, proc.pid == static_cast<uint32_t>(gfx->pid()) ? "graphics" : "compute");
  }
}

TEST_F(NvmlProviderTest, GpuLostMidRunFailsOnlyThatGpu) {
  WriteConfig(ThreeGpuConfig(node_));
  auto child = Child::Start(NodeEnv("1,2"));
  ASSERT_NE(child, nullptr);
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_FALSE(s[2].failed);

  WriteConfig(ThreeGpuConfig(node_, R"(,"faults":{"2":"gpu_lost"})"));
  s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(s[2].failed);
  EXPECT_EQ(s[2].error, "gpu is lost");
  EXPECT_EQ(s[2].index, 2u);
  EXPECT_EQ(s[2].uuid, sim::MakeUuid(node_, 2));  // known from before the loss
  EXPECT_FALSE(s[2].power_mw || s[2].memory_used_bytes || s[2].util_gpu_pct);
  EXPECT_THAT(s[2].processes, IsEmpty());
  for (unsigned i : {0u, 1u}) {
    EXPECT_FALSE(s[i].failed);
    EXPECT_TRUE(s[i].power_mw.has_value());
  }
  EXPECT_THAT(Pids(s[1]), ElementsAre(child->pid()));

  // Devices() still lists the lost GPU.
  auto devices = p->Devices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 3u);
  EXPECT_EQ((*devices)[2].index, 2u);
  EXPECT_FALSE((*devices)[2].memory_total_bytes.has_value());
}

TEST_F(NvmlProviderTest, GpuLostFromTheStart) {
  WriteConfig(ThreeGpuConfig(node_, R"(,"faults":{"0":"gpu_lost"})"));
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto devices = p->Devices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 3u);
  EXPECT_EQ((*devices)[0].uuid, "");  // nvmlDeviceGetHandleByIndex_v2 failed
  EXPECT_EQ((*devices)[1].uuid, sim::MakeUuid(node_, 1));
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(s[0].failed);
  EXPECT_EQ(s[0].error, "gpu is lost");
  EXPECT_FALSE(s[1].failed);
}

// Bad input tried: a config rewritten with junk while running. The previous config stays.
TEST_F(NvmlProviderTest, BadConfigRewriteKeepsPreviousConfig) {
  WriteConfig(ThreeGpuConfig(node_));
  auto p = Open();
  ASSERT_NE(p, nullptr);
  WriteConfig("{\"node\": ");
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_FALSE(s[0].failed);
  EXPECT_EQ(s[0].power_mw, 60000u);
}

TEST_F(NvmlProviderTest, ManyProcessesGrowTheBuffer) {
  WriteConfig(ThreeGpuConfig(node_));
  std::vector<std::unique_ptr<Child>> children;
  std::vector<uint32_t> pids;
  for (int i = 0; i < 45; ++i) {  // the provider starts with room for 32
    children.push_back(Child::Start(NodeEnv("2")));
    ASSERT_NE(children.back(), nullptr);
    pids.push_back(static_cast<uint32_t>(children.back()->pid()));
  }
  std::sort(pids.begin(), pids.end());
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(Pids(s[2]), pids);
}

TEST_F(NvmlProviderTest, EnergyNeverDecreases) {
  WriteConfig(ThreeGpuConfig(node_));
  auto child = Child::Start(NodeEnv("0"));
  ASSERT_NE(child, nullptr);
  auto p = Open();
  ASSERT_NE(p, nullptr);
  uint64_t last = 0;
  auto start = std::chrono::steady_clock::now();
  uint64_t first = 0;
  auto first_at = start, last_at = start;
  int n = 0;
  // The simulated GPU runs in real time; sample for ~60 ms.
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(60)) {
    const auto before = std::chrono::steady_clock::now();
    auto s = Sample(*p);
    const auto after = std::chrono::steady_clock::now();
    ASSERT_EQ(s.size(), 3u);
    ASSERT_TRUE(s[0].energy_mj.has_value());
    EXPECT_GE(*s[0].energy_mj, last);
    last = *s[0].energy_mj;
    last_at = before;
    if (n++ == 0) {
      first = last;
      first_at = after;
    }
  }
  // About 400 W between the first and the last sample. The library reads its
  // clock somewhere inside each call, so the interval it integrated is at least
  // from the end of the first call to the start of the last (a loaded machine
  // stretches calls: the interval is measured, not assumed).
  const double ms = std::chrono::duration<double, std::milli>(last_at - first_at).count();
  ASSERT_GT(ms, 10.0) << n << " samples";
  EXPECT_GE(static_cast<double>(last - first), 0.7 * 400.0 * ms) << n << " samples over " << ms << " ms";

  // An agent restart does not reset the counter.
  p.reset();
  p = Open();
  ASSERT_NE(p, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_GE(*s[0].energy_mj, last);
  auto saved = ReadFile(config_ + ".energy");
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_THAT(*saved, HasSubstr(sim::MakeUuid(node_, 0)));
}

// Older libraries: no _v3/_v2 process functions, no fan or energy symbols. The provider
// uses the v1 functions and reports the missing fields as absent.
TEST_F(NvmlProviderTest, FallsBackToOlderSymbols) {
  WriteConfig(ThreeGpuConfig(node_));
  std::vector<std::string> env = NodeEnv("1");
  env.push_back("ROTA_SIM_GPU_MEM_MIB=300");
  auto child = Child::Start(env);
  ASSERT_NE(child, nullptr);
  void* lib = dlopen(ROTA_SIM_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  NvmlApi api;
#define RESOLVE(ret, name, args) api.name = reinterpret_cast<name##_fn>(dlsym(lib, #name));
  ROTA_NVML_FUNCTIONS(RESOLVE)
#undef RESOLVE
  api.nvmlInit_v2 = nullptr;
  api.nvmlDeviceGetCount_v2 = api.nvmlDeviceGetCount;
  api.nvmlDeviceGetHandleByIndex_v2 = api.nvmlDeviceGetHandleByIndex;
  api.nvmlDeviceGetComputeRunningProcesses_v3 = api.nvmlDeviceGetComputeRunningProcesses_v2 =
      nullptr;
  api.nvmlDeviceGetGraphicsRunningProcesses_v3 = api.nvmlDeviceGetGraphicsRunningProcesses_v2 =
      nullptr;
  api.nvmlDeviceGetFanSpeed = nullptr;
  api.nvmlDeviceGetTotalEnergyConsumption = nullptr;
  api.nvmlDeviceGetPciInfo_v3 = nullptr;
  ASSERT_EQ(api.nvmlInit(), NVML_SUCCESS);
  NvmlProvider p(lib, api);  // owns lib and the init from here
  auto s = Sample(p);
  ASSERT_EQ(s.size(), 3u);
  ASSERT_EQ(s[1].processes.size(), 1u);
  EXPECT_EQ(s[1].processes[0].pid, static_cast<uint32_t>(child->pid()));
  EXPECT_EQ(s[1].processes[0].gpu_memory_bytes, 300 * kMiB);
  EXPECT_FALSE(s[1].fan_pct.has_value());
  EXPECT_FALSE(s[1].energy_mj.has_value());
  EXPECT_TRUE(s[1].power_mw.has_value());
  auto devices = p.Devices();
  ASSERT_TRUE(devices.ok());
  EXPECT_EQ((*devices)[1].pci_bus_id, "00000000:02:00.0");  // via _v2
}

// ---- OpenNvml failures. Bad inputs tried: nonexistent path, a file that is not a shared
// library, a shared library that is not NVML, no config env var, config file missing,
// malformed JSON, a config with an invalid field, a bad refresh interval.

TEST(OpenNvmlTest, NonexistentPathIsUnavailable) {
  auto p = OpenNvml("/nonexistent/dir/libnvidia-ml.so.1");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(p.status().message(), HasSubstr("/nonexistent/dir/libnvidia-ml.so.1 not found"));
  EXPECT_THAT(p.status().message(), HasSubstr("no NVIDIA driver"));
  auto q = OpenNvml("libnvidia-ml-does-not-exist.so.1");
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(q.status().message(), HasSubstr("not found: no NVIDIA driver on this machine"));
}

TEST(OpenNvmlTest, NotALibrary) {
  TempDir dir;
  std::string path = dir.path() + "/libnvidia-ml.so.1";
  ASSERT_TRUE(WriteFileAtomic(path, "this is not ELF").ok());
  auto p = OpenNvml(path);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(p.status().message(), HasSubstr("cannot load " + path));
}

TEST(OpenNvmlTest, LibraryWithoutNvml) {
  auto p = OpenNvml("libm.so.6");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(p.status().message(), HasSubstr("libm.so.6 is not an NVML library"));
}

TEST_F(NvmlProviderTest, MissingConfigEnvFailsInit) {
  unsetenv("ROTA_SIM_NVML_CONFIG");
  auto p = OpenNvml(ROTA_SIM_NVML_PATH);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(p.status().message(), HasSubstr("nvmlInit_v2 failed"));
  EXPECT_THAT(p.status().message(), HasSubstr("ROTA_SIM_NVML_CONFIG is not set"));
}

TEST_F(NvmlProviderTest, BadConfigFailsInitWithClearMessage) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "cannot read config " + config_ + ": No such file"},  // "" = do not create the file
      {"{\"node\":\"a\", \"gpus\": [", "not valid JSON"},
      {R"({"node":"a","gpus":[{"memory_mib":-1}]})", "gpus[0].memory_mib"},
  };
  for (const auto& [text, want] : cases) {
    std::remove(config_.c_str());
    if (!text.empty()) WriteConfig(text);
    auto p = OpenNvml(ROTA_SIM_NVML_PATH);
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.status().code(), StatusCode::kUnavailable);
    EXPECT_THAT(p.status().message(), HasSubstr(want)) << text;
  }
  WriteConfig(ThreeGpuConfig(node_));
  setenv("ROTA_SIM_NVML_REFRESH_MS", "soon", 1);
  auto p = OpenNvml(ROTA_SIM_NVML_PATH);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("ROTA_SIM_NVML_REFRESH_MS=soon"));
}

// Cost of one Sample() with 8 GPUs and 200 GPU processes, including one /proc rescan.
// The agent's budget is 2 ms CPU per sample; the bound here is loose for shared CI
// machines, and the measured value is printed.
TEST_F(NvmlProviderTest, SampleCostWithEightGpusAndTwoHundredProcesses) {
  std::string gpus;
  for (int i = 0; i < 8; ++i) gpus += std::string(i ? "," : "") + "{}";
  WriteConfig(R"({"node":")" + node_ + R"(","gpus":[)" + gpus + "]}");
  std::vector<std::unique_ptr<Child>> children;
  for (int i = 0; i < 200; ++i) {
    children.push_back(Child::Start(NodeEnv(std::to_string(i % 8))));
    ASSERT_NE(children.back(), nullptr);
  }
  setenv("ROTA_SIM_NVML_REFRESH_MS", "20", 1);
  // The steady state is measured: the children's environ read once and cached. A copy
  // of the library is a fresh instance (the one other tests loaded may live on), whose
  // first scan takes processes already running as settled, not young
  // (ProcScanner::kYoungMs), so no young period needs waiting out.
  const std::string fresh = dir_.path() + "/libnvidia-ml-fresh.so.1";
  std::error_code ec;
  ASSERT_TRUE(std::filesystem::copy_file(ROTA_SIM_NVML_PATH, fresh, ec)) << ec.message();
  auto opened = OpenNvml(fresh);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<GpuProvider> p = std::move(opened).value();
  Sample(*p);
  double total_us = 0;
  const int kRounds = 10;
  for (int r = 0; r < kRounds; ++r) {
    // One rescan per Sample(): the library rescans when REFRESH_MS (20) of its own
    // real time has passed; it takes no clock a test could advance.
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    timespec a{}, b{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    auto s = Sample(*p);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    total_us += (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
    ASSERT_EQ(s.size(), 8u);
    size_t procs = 0;
    for (const auto& g : s) procs += g.processes.size();
    ASSERT_EQ(procs, 200u);
  }
  const double per_sample_us = total_us / kRounds;
  std::printf("Sample() with 8 GPUs / 200 processes: %.0f us CPU\n", per_sample_us);
  EXPECT_LT(per_sample_us, 10000);
}

// Power limits: the constraints and default come from the config; a limit set
// within them is in force and a busy GPU draws no more; outside them, or where
// the driver refuses, the error says why and nothing changes.
TEST_F(NvmlProviderTest, PowerLimitsAreSetWithinTheirRangeAndCapTheDraw) {
  WriteConfig(ThreeGpuConfig(node_, R"(,"faults":{"2:set_power_limit":"not_supported"})"));
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto limits = p->GetPowerLimits(1);
  ASSERT_TRUE(limits.ok()) << limits.status().ToString();
  EXPECT_EQ(limits->min_mw, 100'000u);
  EXPECT_EQ(limits->max_mw, 400'000u);
  EXPECT_EQ(limits->default_mw, 400'000u);
  EXPECT_EQ(limits->current_mw, 400'000u);
  EXPECT_EQ(p->GetPowerLimits(7).status().code(), StatusCode::kInvalidArgument);

  Status low = p->SetPowerLimit(1, 50'000);
  EXPECT_EQ(low.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(low.message(), HasSubstr("100..400 W"));
  EXPECT_EQ(p->SetPowerLimit(2, 300'000).code(), StatusCode::kUnimplemented);
  if (geteuid() != 0) {
    EXPECT_EQ(p->SetPowerLimit(1, 250'000).code(), StatusCode::kPermissionDenied);
    GTEST_SKIP() << "setting a limit needs root, as with the real driver";
  }
  ASSERT_TRUE(p->SetPowerLimit(1, 250'000).ok());
  EXPECT_EQ(p->GetPowerLimits(1)->current_mw, 250'000u);
  auto child = Child::Start(NodeEnv("1"));
  ASSERT_NE(child, nullptr);
  auto s = Sample(*p);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[1].util_gpu_pct, 100u);
  EXPECT_EQ(s[1].power_mw, 250'000u) << "a capped busy GPU draws its cap";
  EXPECT_EQ(s[1].power_limit_mw, 250'000u);
  EXPECT_EQ(s[0].power_limit_mw, 400'000u);
  // Back to the default: the full draw again.
  ASSERT_TRUE(p->SetPowerLimit(1, limits->default_mw).ok());
  EXPECT_EQ(Sample(*p)[1].power_mw, 400'000u);

  // A driver that refuses (not root in real life).
  WriteConfig(ThreeGpuConfig(node_, R"(,"faults":{"1:set_power_limit":"no_permission"})"));
  Status refused = p->SetPowerLimit(1, 250'000);
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), HasSubstr("needs root"));
}

}  // namespace
}  // namespace rota::gpu
