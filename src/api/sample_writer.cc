#include "api/sample_writer.h"

namespace rota::api {
namespace {

template <typename T>
void OptInt(JsonWriter& w, std::string_view key, const std::optional<T>& v) {
  if (!v.has_value()) return;
  w.Key(key);
  w.Int(*v);
}

}  // namespace

void WriteGpuProcess(JsonWriter& w, const GpuProcess& p) {
  w.BeginObject();
  w.Key("pid");
  w.Int(p.pid);
  w.Key("type");
  w.String(p.type);
  OptInt(w, "gpu_memory_bytes", p.gpu_memory_bytes);
  OptInt(w, "uid", p.uid);
  if (!p.user.empty()) w.Key("user"), w.String(p.user);
  if (!p.command.empty()) w.Key("command"), w.String(p.command);
  if (!p.exe.empty()) w.Key("exe"), w.String(p.exe);
  OptInt(w, "start_time_ms", p.start_time_ms);
  if (p.cpu_percent.has_value()) w.Key("cpu_percent"), w.Double(*p.cpu_percent);
  OptInt(w, "rss_bytes", p.rss_bytes);
  if (!p.cgroup.empty()) w.Key("cgroup"), w.String(p.cgroup);
  w.EndObject();
}

void WriteGpuSample(JsonWriter& w, const GpuSample& g) {
  w.BeginObject();
  w.Key("index");
  w.Int(g.index);
  w.Key("uuid");
  w.String(g.uuid);
  WriteGpuSampleReadings(w, g);
  w.EndObject();
}

void WriteGpuSampleReadings(JsonWriter& w, const GpuSample& g) {
  if (g.failed) {
    w.Key("failed");
    w.Bool(true);
    w.Key("error");
    w.String(g.error);
  }
  OptInt(w, "memory_total_bytes", g.memory_total_bytes);
  OptInt(w, "memory_used_bytes", g.memory_used_bytes);
  OptInt(w, "util_gpu_pct", g.util_gpu_pct);
  OptInt(w, "util_memory_pct", g.util_memory_pct);
  OptInt(w, "temperature_c", g.temperature_c);
  OptInt(w, "power_mw", g.power_mw);
  OptInt(w, "power_limit_mw", g.power_limit_mw);
  OptInt(w, "energy_mj", g.energy_mj);
  OptInt(w, "sm_clock_mhz", g.sm_clock_mhz);
  OptInt(w, "mem_clock_mhz", g.mem_clock_mhz);
  OptInt(w, "fan_pct", g.fan_pct);
  w.Key("processes");
  w.BeginArray();
  for (const auto& p : g.processes) WriteGpuProcess(w, p);
  w.EndArray();
}

void WriteHostSample(JsonWriter& w, const HostSample& h) {
  w.BeginObject();
  w.Key("cpu_percent");
  w.Double(h.cpu_percent);
  w.Key("per_core_percent");
  w.BeginArray();
  for (double c : h.per_core_percent) w.Double(c);
  w.EndArray();
  w.Key("mem_total_bytes");
  w.Int(h.mem_total_bytes);
  w.Key("mem_available_bytes");
  w.Int(h.mem_available_bytes);
  w.Key("load1");
  w.Double(h.load1);
  w.Key("load5");
  w.Double(h.load5);
  w.Key("load15");
  w.Double(h.load15);
  OptInt(w, "cpu_energy_mj", h.cpu_energy_mj);
  OptInt(w, "cpu_busy_usec", h.cpu_busy_usec);
  if (!h.cpu_tasks.empty()) {
    w.Key("cpu_tasks");
    w.BeginArray();
    for (const auto& t : h.cpu_tasks) {
      w.BeginObject();
      w.Key("id");
      w.String(t.id);
      w.Key("job_id");
      w.Int(t.job_id);
      w.Key("usage_usec");
      w.Int(t.usage_usec);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

void WriteNodeSample(JsonWriter& w, const NodeSample& s) {
  w.BeginObject();
  w.Key("time_ms");
  w.Int(s.time_ms);
  w.Key("host");
  WriteHostSample(w, s.host);
  w.Key("gpus");
  w.BeginArray();
  for (const auto& g : s.gpus) WriteGpuSample(w, g);
  w.EndArray();
  w.EndObject();
}

}  // namespace rota::api
