#pragma once
// Collector: takes one NodeSample from the GPU provider, the host monitor and the
// RAPL meter (CPU package energy, with the CPU time of the job tasks it is split
// by). Not thread-safe (one sampling loop).

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "agent/task_cgroup.h"
#include "api/types.h"
#include "common/clock.h"
#include "gpu/gpu_provider.h"
#include "host/host_monitor.h"
#include "host/rapl.h"

namespace rota::agent {

class Collector {
 public:
  // `gpu` may be null (no NVML on this machine): samples then have no GPUs.
  // `rapl` may be null (no CPU energy reported). `host`, `clock` and `rapl` are
  // borrowed and must outlive the collector.
  Collector(gpu::GpuProvider* gpu, host::HostMonitor* host, const Clock* clock,
            host::RaplMeter* rapl = nullptr)
      : gpu_(gpu), host_(host), clock_(clock), rapl_(rapl) {}

  // A sample of the host and every GPU, with host details of GPU processes.
  // GPU read errors leave the GPUs out and are logged (rate-limited); host read
  // errors fail the sample.
  //
  // CPU energy, read right after /proc/stat so that the readings are close in time:
  // host.cpu_energy_mj from the RAPL meter and, with it, host.cpu_tasks: the CPU
  // time of each of `tasks` (the running job tasks with cgroups; at most
  // api::kMaxCpuTasks). A meter that cannot be read leaves both out; a task whose
  // cgroup is gone (it ended) is left out; other failures leave the task out too.
  // Each failure is logged once while it lasts (WARNING), and when it ends (INFO).
  Result<api::NodeSample> Sample(const std::vector<TaskCgroups>& tasks = {});

 private:
  void AddCpuEnergy(api::HostSample& host, const std::vector<TaskCgroups>& tasks);

  gpu::GpuProvider* gpu_;
  host::HostMonitor* host_;
  const Clock* clock_;
  host::RaplMeter* rapl_;
  std::string last_gpu_error_;
  std::string last_rapl_error_;
  bool rapl_read_ = false;                     // the meter was read at least once
  std::set<std::string> rapl_notes_;           // of the last read, logged once each
  std::map<std::string, std::string> task_errors_;  // task id -> error logged
  bool warned_too_many_tasks_ = false;
};

}  // namespace rota::agent
