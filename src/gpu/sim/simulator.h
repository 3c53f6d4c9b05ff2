#pragma once
// Simulator: the state behind the simulated NVML library: the config (re-read when the
// file changes), the GPU processes found in /proc, the derived readings and the energy
// counters. The C entry points (sim_nvml.cc) hold one Simulator under a mutex; the class
// itself is not thread-safe.
//
// Time is the real monotonic clock: the library simulates hardware that runs in real time.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpu/sim/sim_config.h"
#include "gpu/sim/sim_procs.h"

namespace rota::gpu::sim {

struct ProcUse {
  unsigned pid;
  uint64_t mem_bytes;
};

// What the processes on one GPU add up to.
struct GpuLoad {
  uint32_t util = 0;      // percent, capped at 100
  uint64_t mem_used = 0;  // bytes, capped at the GPU's memory
  std::vector<ProcUse> compute, graphics;
};

class Simulator {
 public:
  // Environment variables read by Init().
  static constexpr const char* kConfigEnv = "ROTA_SIM_NVML_CONFIG";
  static constexpr const char* kRefreshEnv = "ROTA_SIM_NVML_REFRESH_MS";  // default 200
  static constexpr int64_t kDefaultRefreshMs = 200;
  static constexpr int64_t kPersistMs = 2000;

  // Reads the config named by $ROTA_SIM_NVML_CONFIG. Returns 0 (NVML_SUCCESS) or an
  // nvmlReturn_t value with *message saying why.
  int Init(std::string* message);
  // Saves the energy counters. The config stays readable until the next Init().
  void Shutdown();

  // Re-reads the config if its file changed and rescans processes, at most once per
  // refresh interval. Called at the start of every device call.
  void MaybeRefresh();

  const Config& config() const { return config_; }
  // REQUIRES: i < config().gpus.size() (loads are rebuilt whenever the config changes).
  const GpuLoad& load(unsigned i) const { return loads_[i]; }

  uint32_t MemoryUtil(unsigned i) const;
  // Power follows the load and never exceeds the limit in force (nor falls
  // below idle power).
  uint32_t PowerMw(unsigned i) const;
  // The power limit in force: set by SetLimitMw (kept by GPU uuid across
  // config reloads), else the GPU's power_limit_w.
  uint32_t LimitMw(unsigned i) const;
  // REQUIRES: the caller checked the GPU's constraints.
  void SetLimitMw(unsigned i, uint32_t mw);
  uint32_t TemperatureC(unsigned i) const;
  uint32_t SmClockMhz(unsigned i) const;
  uint32_t MemClockMhz(unsigned i) const;
  uint32_t FanPct(unsigned i) const;
  // Total energy in mJ; never decreases within a process. Persists the counters to
  // <config>.energy at most every kPersistMs.
  uint64_t EnergyMj(unsigned i);

 private:
  struct FileId {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileId&) const = default;
  };
  // Reads and parses the config file; false with *error on failure.
  bool ReadConfig(Config* out, FileId* id, std::string* error) const;
  void ApplyConfig(Config config);
  void Rescan();
  double PowerW(unsigned i) const;
  // Adds the energy used since the last call at the current power.
  void Accumulate(int64_t now_ms);
  void LoadEnergy();
  void SaveEnergy();

  std::string path_, energy_path_;
  Config config_;
  FileId file_id_;
  FileId bad_file_id_;  // last config file rejected on reload (reported once)
  int64_t refresh_ms_ = kDefaultRefreshMs;
  bool refreshed_ = false;
  int64_t last_refresh_ms_ = 0;
  ProcScanner scanner_;
  std::vector<GpuLoad> loads_;
  std::vector<unsigned> visible_;            // scratch
  std::map<std::string, double> energy_mj_;  // by GPU uuid; survives Shutdown/Init
  std::map<std::string, uint32_t> limit_mw_;  // power limits set, by GPU uuid
  int64_t energy_updated_ms_ = 0;
  int64_t energy_saved_ms_ = 0;
  bool energy_save_failed_ = false;
};

}  // namespace rota::gpu::sim
