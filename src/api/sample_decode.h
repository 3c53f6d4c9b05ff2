#pragma once
// Decoders of node samples (NodeSample and what it holds) over any JSON model
// (api/field_reader.h): nlohmann's in codec.cc (NodeSampleFromJson & co),
// simdjson's in fast_decode.cc. One set of rules for both. Internal to src/api.

#include <set>
#include <string>

#include "api/field_reader.h"
#include "api/task_protocol.h"
#include "api/types.h"

namespace rota::api::detail {

template <typename V>
Result<GpuProcess> DecodeGpuProcess(const V& j) {
  FieldReader<V> r(j, "");
  RETURN_IF_ERROR(r.CheckObject());
  GpuProcess p;
  RETURN_IF_ERROR(r.Int("pid", &p.pid, true, 1, 1 << 30));
  RETURN_IF_ERROR(r.Str("type", &p.type, false, 16));
  if (p.type != "compute" && p.type != "graphics") {
    return Status::InvalidArgument("type must be \"compute\" or \"graphics\"");
  }
  RETURN_IF_ERROR(r.OptInt("gpu_memory_bytes", &p.gpu_memory_bytes));
  RETURN_IF_ERROR(r.OptInt("uid", &p.uid));
  RETURN_IF_ERROR(r.Str("user", &p.user, false, kMaxNameLength));
  RETURN_IF_ERROR(r.Str("command", &p.command, false));
  RETURN_IF_ERROR(r.Str("exe", &p.exe, false));  // absent from older agents
  RETURN_IF_ERROR(r.OptInt("start_time_ms", &p.start_time_ms));
  RETURN_IF_ERROR(r.OptNum("cpu_percent", &p.cpu_percent, 0, 1e6));
  RETURN_IF_ERROR(r.OptInt("rss_bytes", &p.rss_bytes));
  RETURN_IF_ERROR(r.Str("cgroup", &p.cgroup, false));
  return p;
}

template <typename V>
Result<GpuSample> DecodeGpuSample(const V& j) {
  FieldReader<V> r(j, "");
  RETURN_IF_ERROR(r.CheckObject());
  GpuSample s;
  RETURN_IF_ERROR(r.Int("index", &s.index, true, 0, kMaxGpusPerNode - 1));
  RETURN_IF_ERROR(r.Str("uuid", &s.uuid, false, 128));
  RETURN_IF_ERROR(r.Bool("failed", &s.failed));
  RETURN_IF_ERROR(r.Str("error", &s.error, false));
  RETURN_IF_ERROR(r.OptInt("memory_total_bytes", &s.memory_total_bytes));
  RETURN_IF_ERROR(r.OptInt("memory_used_bytes", &s.memory_used_bytes));
  RETURN_IF_ERROR(r.OptInt("util_gpu_pct", &s.util_gpu_pct, 0, 100));
  RETURN_IF_ERROR(r.OptInt("util_memory_pct", &s.util_memory_pct, 0, 100));
  RETURN_IF_ERROR(r.OptInt("temperature_c", &s.temperature_c, 0, 200));
  RETURN_IF_ERROR(r.OptInt("power_mw", &s.power_mw));
  RETURN_IF_ERROR(r.OptInt("power_limit_mw", &s.power_limit_mw));
  RETURN_IF_ERROR(r.OptInt("energy_mj", &s.energy_mj));
  RETURN_IF_ERROR(r.OptInt("sm_clock_mhz", &s.sm_clock_mhz, 0, 100000));
  RETURN_IF_ERROR(r.OptInt("mem_clock_mhz", &s.mem_clock_mhz, 0, 100000));
  RETURN_IF_ERROR(r.OptInt("fan_pct", &s.fan_pct, 0, 100));
  RETURN_IF_ERROR(r.ArrayOf("processes", kMaxProcessesPerGpu, false, &s.processes,
                            DecodeGpuProcess<V>));
  return s;
}

template <typename V>
Result<CpuTaskSample> DecodeCpuTaskSample(const V& j) {
  FieldReader<V> r(j, "");
  RETURN_IF_ERROR(r.CheckObject());
  CpuTaskSample t;
  RETURN_IF_ERROR(r.Str("id", &t.id, true, 128));
  RETURN_IF_ERROR(ValidateTaskId(t.id));
  RETURN_IF_ERROR(r.Int("job_id", &t.job_id, true, 1));
  // The job is the one the task id names: an agent cannot charge another job.
  if (JobNumberOfTaskId(t.id) != std::optional<int64_t>(t.job_id)) {
    return Status::InvalidArgument("job_id " + std::to_string(t.job_id) + " is not the job of task " + t.id);
  }
  RETURN_IF_ERROR(r.Int("usage_usec", &t.usage_usec, true));
  return t;
}

template <typename V>
Result<HostSample> DecodeHostSample(const V& j) {
  FieldReader<V> r(j, "");
  RETURN_IF_ERROR(r.CheckObject());
  HostSample h;
  RETURN_IF_ERROR(r.Num("cpu_percent", &h.cpu_percent, true, 0, 100));
  RETURN_IF_ERROR(r.Array("per_core_percent", kMaxCores, false,
                          [&](const V& e, const auto& at) -> Status {
                            if (!e.is_number() || e.f64() < 0 || e.f64() > 100) {
                              return Status::InvalidArgument(at.str() + " must be a number in [0, 100]");
                            }
                            h.per_core_percent.push_back(e.f64());
                            return Status::Ok();
                          }));
  RETURN_IF_ERROR(r.Int("mem_total_bytes", &h.mem_total_bytes, true));
  RETURN_IF_ERROR(r.Int("mem_available_bytes", &h.mem_available_bytes, true));
  RETURN_IF_ERROR(r.Num("load1", &h.load1, false, 0, 1e6));
  RETURN_IF_ERROR(r.Num("load5", &h.load5, false, 0, 1e6));
  RETURN_IF_ERROR(r.Num("load15", &h.load15, false, 0, 1e6));
  RETURN_IF_ERROR(r.OptInt("cpu_energy_mj", &h.cpu_energy_mj));
  RETURN_IF_ERROR(r.OptInt("cpu_busy_usec", &h.cpu_busy_usec));
  std::set<std::string> task_ids;
  RETURN_IF_ERROR(r.Array("cpu_tasks", kMaxCpuTasks, false,
                          [&](const V& e, const auto& at) -> Status {
                            auto t = DecodeCpuTaskSample(e);
                            if (!t.ok()) return t.status().WithContext(at.str());
                            if (!task_ids.insert(t->id).second) {
                              return Status::InvalidArgument(at.str() + ": task " + t->id +
                                                             " is listed twice");
                            }
                            h.cpu_tasks.push_back(std::move(*t));
                            return Status::Ok();
                          }));
  return h;
}

template <typename V>
Result<NodeSample> DecodeNodeSample(const V& j) {
  FieldReader<V> r(j, "");
  RETURN_IF_ERROR(r.CheckObject());
  NodeSample s;
  // Years 2000..9999 in Unix ms.
  RETURN_IF_ERROR(r.Int("time_ms", &s.time_ms, true, 946'684'800'000, 253'402'300'799'000));
  if (!r.Has("host")) return Status::InvalidArgument("host is required");
  auto host = DecodeHostSample(r.at("host"));
  if (!host.ok()) return host.status().WithContext("host");
  s.host = std::move(*host);
  RETURN_IF_ERROR(r.ArrayOf("gpus", kMaxGpusPerNode, false, &s.gpus, DecodeGpuSample<V>));
  return s;
}

}  // namespace rota::api::detail
