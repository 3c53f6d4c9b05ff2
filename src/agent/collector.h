#pragma once
// Collector: takes one NodeSample from the GPU provider and the host monitor.
// Not thread-safe (one sampling loop).

#include <memory>
#include <string>

#include "api/types.h"
#include "common/clock.h"
#include "gpu/gpu_provider.h"
#include "host/host_monitor.h"

namespace rota::agent {

class Collector {
 public:
  // `gpu` may be null (no NVML on this machine): samples then have no GPUs.
  // `host` and `clock` are borrowed and must outlive the collector.
  Collector(gpu::GpuProvider* gpu, host::HostMonitor* host, const Clock* clock)
      : gpu_(gpu), host_(host), clock_(clock) {}

  // A sample of the host and every GPU, with host details of GPU processes.
  // GPU read errors leave the GPUs out and are logged (rate-limited); host read
  // errors fail the sample.
  Result<api::NodeSample> Sample();

 private:
  gpu::GpuProvider* gpu_;
  host::HostMonitor* host_;
  const Clock* clock_;
  std::string last_gpu_error_;
};

}  // namespace rota::agent
