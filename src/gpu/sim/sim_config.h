#pragma once
// Configuration of the simulated NVML library (see docs/design-gpu.md for the format):
//   {"node": "sim-a", "default_node": true, "tasks_under": "/var/lib/rota-agent",
//    "gpus": [{"model": "NVIDIA A100-SXM4-80GB", "memory_mib": 81920,
//              "power_limit_w": 400, "idle_power_w": 60, "min_power_limit_w": 100}, ...],
//    "faults": {"2": "gpu_lost", "1:fan": "not_supported"}}
// Plain value types and pure functions; no global state.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rota::gpu::sim {

// Readings that a fault can make fail, one or more NVML functions each.
enum class Field {
  kMemory,              // nvmlDeviceGetMemoryInfo
  kUtilization,         // nvmlDeviceGetUtilizationRates
  kTemperature,         // nvmlDeviceGetTemperature
  kPower,               // nvmlDeviceGetPowerUsage
  kPowerLimit,          // both power limit getters
  kEnforcedPowerLimit,  // nvmlDeviceGetEnforcedPowerLimit only
  kEnergy,              // nvmlDeviceGetTotalEnergyConsumption
  kClocks,              // nvmlDeviceGetClockInfo
  kFan,                 // nvmlDeviceGetFanSpeed
  kProcesses,           // compute and graphics process lists
  kPci,                 // nvmlDeviceGetPciInfo_v2/_v3
  kSetPowerLimit,       // nvmlDeviceSetPowerManagementLimit (also "no_permission")
  kCount,
};
inline constexpr size_t kFieldCount = static_cast<size_t>(Field::kCount);

// Config name of a field ("fan", "power_limit", ...).
const char* FieldName(Field f);

enum class FieldFault {
  kNone,
  kNotSupported,  // NVML_ERROR_NOT_SUPPORTED
  kError,         // NVML_ERROR_UNKNOWN
  kNoPermission,  // NVML_ERROR_NO_PERMISSION
};

struct GpuConfig {
  std::string model = "NVIDIA A100-SXM4-80GB";
  uint64_t memory_mib = 81920;
  uint32_t power_limit_w = 400;
  uint32_t idle_power_w = 60;
  // Lowest power limit that may be set (default: a quarter of power_limit_w);
  // power_limit_w is the highest and the default.
  uint32_t min_power_limit_w = 100;
  uint32_t max_sm_clock_mhz = 1410;
  uint32_t max_mem_clock_mhz = 1593;
  bool lost = false;  // fault "gpu_lost": every call about this GPU returns GPU_IS_LOST
  std::array<FieldFault, kFieldCount> faults{};
  // Derived from node name and index.
  std::string uuid;    // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string bus_id;  // "00000000:01:00.0" for index 0
};

struct Config {
  std::string node;
  bool default_node = false;  // untagged processes belong to this node
  // When set, a job task (its environment has ROTA_PREEMPT_NOTICE) named for this
  // node but not by ROTA_SIM_NODE is this node's only when its notice lies under
  // this directory (the agent's state directory): simulated nodes of different
  // clusters on one host (two `rota dev`, tests side by side) may share names.
  std::string tasks_under;
  std::vector<GpuConfig> gpus;
};

inline constexpr size_t kMaxSimGpus = 64;

// Parses and validates config text. On error returns false and sets *error to a message
// naming the bad field (e.g. "gpus[1].memory_mib: must be an integer in 1..16777216").
bool ParseConfig(const std::string& text, Config* out, std::string* error);

// Deterministic UUID of GPU `index` of `node`: stable across runs, distinct per node.
std::string MakeUuid(const std::string& node, unsigned index);
// PCI bus id of GPU `index`: "00000000:<index+1 in hex>:00.0".
std::string MakeBusId(unsigned index);

// Resolves a CUDA_VISIBLE_DEVICES value against `config` like CUDA does: a comma list of
// indices or (prefixes of) UUIDs; parsing stops at the first invalid or ambiguous entry;
// duplicates are ignored. Appends GPU indices to *out (cleared first).
void ResolveVisibleDevices(const std::string& value, const Config& config,
                           std::vector<unsigned>* out);

}  // namespace rota::gpu::sim
