#pragma once
// Test helpers for the store tests: a temporary directory, sample builders and
// a blocking append.

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "api/types.h"
#include "server/store/store.h"

namespace rota::store::testing {

// A time on a whole minute, where the store tests' samples start.
inline constexpr int64_t kMinuteT0 = 1'699'999'980'000;

// Every stored host reading as one table (node, t_ms, cpu_percent, mem_used,
// mem_total, load1): node_samples holds those of samples without GPUs (and
// those written before schema version 12), node_gpu_samples the others. (An
// alias: PostgreSQL wants one for a subquery in FROM.)
inline const std::string kHostSamples =
    "(SELECT node, t_ms, cpu_percent, mem_used, mem_total, load1 FROM node_samples UNION ALL "
    "SELECT node, t_ms, cpu_percent, mem_used, mem_total, load1 FROM node_gpu_samples "
    "WHERE mem_total IS NOT NULL) AS host_samples";

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "rota_store_XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    path_ = p ? p : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline api::NodeInfo MakeNode(const std::string& name, int gpus = 2) {
  api::NodeInfo n;
  n.name = name;
  n.node_id = "id-" + name;
  n.hostname = name + ".example";
  n.cpus = 16;
  n.memory_bytes = 64ULL << 30;
  n.labels = {{"rack", "r1"}};
  for (int i = 0; i < gpus; ++i) {
    api::GpuInfo g;
    g.index = static_cast<uint32_t>(i);
    g.uuid = "GPU-" + name + "-" + std::to_string(i);
    g.name = "NVIDIA A100-SXM4-80GB";
    g.pci_bus_id = "00000000:3" + std::to_string(i) + ":00.0";
    g.memory_total_bytes = 80ULL << 30;
    n.gpus.push_back(g);
  }
  return n;
}

// A sample at `t_ms` with `gpus` GPUs whose readings derive from `v`.
inline api::NodeSample MakeSample(int64_t t_ms, int gpus = 2, uint32_t v = 50) {
  api::NodeSample s;
  s.time_ms = t_ms;
  s.host.cpu_percent = v;
  s.host.mem_total_bytes = 1000;
  s.host.mem_available_bytes = 1000 - v;
  s.host.load1 = v / 10.0;
  for (int i = 0; i < gpus; ++i) {
    api::GpuSample g;
    g.index = static_cast<uint32_t>(i);
    g.uuid = "GPU-" + std::to_string(i);
    g.util_gpu_pct = v;
    g.util_memory_pct = v / 2;
    g.memory_used_bytes = uint64_t{v} * 1000;
    g.memory_total_bytes = 80'000;
    g.temperature_c = 40 + v / 10;
    g.power_mw = v * 1000;
    g.energy_mj = static_cast<uint64_t>(t_ms);
    g.sm_clock_mhz = 1410;
    g.mem_clock_mhz = 1593;
    g.fan_pct = 30;
    s.gpus.push_back(g);
  }
  return s;
}

// Appends and waits for the done callback.
inline Status AppendSync(Store& s, const std::string& node, std::vector<api::NodeSample> v) {
  std::promise<Status> p;
  auto f = p.get_future();
  s.Append(node, std::move(v), [&p](Status st) { p.set_value(std::move(st)); });
  return f.get();
}

}  // namespace rota::store::testing
