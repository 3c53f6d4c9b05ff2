#pragma once
// GpuProvider: the one seam for GPU access. The agent holds a GpuProvider; production code
// gets one from OpenNvml(), which loads the NVIDIA driver's NVML library at run time (so the
// rota binary runs on machines without GPUs). Tests and `rota dev` load the simulated NVML
// library (src/gpu/sim) through the same OpenNvml() call.

#include <memory>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/status.h"

namespace rota::gpu {

class GpuProvider {
 public:
  virtual ~GpuProvider() = default;

  // Identity of every GPU (index, uuid, name, pci bus id, memory total, power limit), in
  // index order. A GPU whose identity cannot be read (e.g. lost) is still listed with its
  // index and whatever could be read (uuid may be ""). Fails only when NVML itself does
  // (e.g. the device count cannot be read).
  virtual Result<std::vector<api::GpuInfo>> Devices() = 0;

  // Readings of every GPU, in index order. A GPU that is lost/unusable appears with
  // failed=true and error set (readings absent); the others are unaffected. Unsupported
  // fields stay std::nullopt. processes: pid, type ("compute"/"graphics"),
  // gpu_memory_bytes only, sorted by pid; a pid in both lists appears once as compute.
  // Host fields are filled later by the agent.
  virtual Result<std::vector<api::GpuSample>> Sample() = 0;

  // What may be set as GPU `index`'s power limit, and what is in force (mW).
  struct PowerLimits {
    uint32_t min_mw = 0;
    uint32_t max_mw = 0;
    uint32_t default_mw = 0;
    uint32_t current_mw = 0;
  };
  // Unimplemented when the GPU or driver cannot say; Unavailable when it failed.
  virtual Result<PowerLimits> GetPowerLimits(uint32_t index) = 0;
  // Sets GPU `index`'s power management limit. InvalidArgument outside
  // [min_mw, max_mw]; PermissionDenied when not allowed (NVML wants root);
  // Unimplemented when the GPU or driver does not support it; Unavailable for
  // other failures. Every error says why in words.
  virtual Status SetPowerLimit(uint32_t index, uint32_t mw) = 0;
};

// Loads NVML with dlopen(library_path) (default: "libnvidia-ml.so.1" from the normal
// search path), resolves symbols with dlsym (prefers _v2/_v3 variants, falls back to older
// ones; a missing optional symbol means "not supported", not failure), calls nvmlInit_v2.
// Returns Unavailable with a human reason ("libnvidia-ml.so.1 not found: no NVIDIA driver
// on this machine", or nvmlInit's error string) when it cannot.
// The returned provider is not thread-safe (one caller at a time); it calls nvmlShutdown
// and dlcloses the library when destroyed.
Result<std::unique_ptr<GpuProvider>> OpenNvml(
    const std::string& library_path = "libnvidia-ml.so.1");

}  // namespace rota::gpu
