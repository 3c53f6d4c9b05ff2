#pragma once
// PowerLimiter: applies the server's power limits (api::PowerLimitsMsg) to this
// node's GPUs through the GpuProvider, and gives every GPU it changed its default
// limit back when the server asks for no limit, when the agent stops, and at the
// next start after an agent that did not stop cleanly (the GPUs it changed are
// recorded in a state file).
//
// A limit the GPU or driver refuses (not root, not supported, outside the range)
// is reported as refused with the reason; nothing fails silently.
//
// Not thread-safe: call it from the thread that owns the GpuProvider (the
// agent's sampling loop), as the provider is single-caller.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/power_protocol.h"
#include "api/types.h"
#include "gpu/gpu_provider.h"

namespace rota::agent {

class PowerLimiter {
 public:
  // `gpu` is borrowed and may be null (no NVML: every request is answered with an
  // error). `gpus` are the node's GPUs as registered (for the UUID check).
  // `state_path` records the GPUs whose limit this agent changed ("" : none kept).
  PowerLimiter(gpu::GpuProvider* gpu, std::vector<api::GpuInfo> gpus, std::string state_path);

  // Restores the GPUs a previous run recorded as changed; returns what happened.
  api::PowerReportMsg RestoreLeftovers();
  // Brings the GPUs to the limits of `msg`: each listed limit set, every GPU this
  // agent changed that `msg` does not give a limit restored to its default. One
  // report entry per GPU listed or restored.
  api::PowerReportMsg Apply(const api::PowerLimitsMsg& msg);
  // Restores every GPU this agent changed (at stop).
  api::PowerReportMsg RestoreAll();

  // GPUs whose limit this agent changed (index -> uuid), for tests.
  const std::map<uint32_t, std::string>& changed() const { return changed_; }

 private:
  api::PowerGpuReport SetOne(uint32_t index, const std::string& uuid, std::optional<uint32_t> mw);
  void Save();

  gpu::GpuProvider* const gpu_;
  const std::vector<api::GpuInfo> gpus_;
  const std::string state_path_;
  std::map<uint32_t, std::string> changed_;
};

// One line for the agent's log: "GPU 0: set to 250 W (was 300 W)".
std::string DescribePowerReport(const api::PowerGpuReport& r);

}  // namespace rota::agent
