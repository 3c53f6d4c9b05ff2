#include "api/codec.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <set>

#include "api/task_protocol.h"

namespace rota::api {
namespace {

// Field readers. Each returns InvalidArgument naming `path` on a wrong type or range.
class Reader {
 public:
  Reader(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}

  Status CheckObject() const {
    if (!j_.is_object()) return Bad("", "must be an object");
    return Status::Ok();
  }

  bool Has(const char* key) const { return j_.contains(key) && !j_[key].is_null(); }

  Status Str(const char* key, std::string* out, bool required, size_t max = kMaxTextLength) const {
    if (!Has(key)) return required ? Bad(key, "is required") : Status::Ok();
    const Json& v = j_[key];
    if (!v.is_string()) return Bad(key, "must be a string");
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() > max) return Bad(key, "is longer than " + std::to_string(max) + " bytes");
    *out = s;
    return Status::Ok();
  }

  template <typename T>
  Status Int(const char* key, T* out, bool required, int64_t min = 0,
             int64_t max = std::numeric_limits<int64_t>::max()) const {
    if (!Has(key)) return required ? Bad(key, "is required") : Status::Ok();
    const Json& v = j_[key];
    if (!v.is_number_integer()) return Bad(key, "must be an integer");
    int64_t x;
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Bad(key, "is too large");
      x = static_cast<int64_t>(u);
    } else {
      x = v.get<int64_t>();
    }
    constexpr uint64_t kTypeMax = static_cast<uint64_t>(std::numeric_limits<T>::max());
    constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
    int64_t type_max = kTypeMax > static_cast<uint64_t>(kInt64Max) ? kInt64Max
                                                                   : static_cast<int64_t>(kTypeMax);
    int64_t hi = std::min<int64_t>(max, type_max);
    if (x < min || x > hi) {
      return Bad(key, "must be in [" + std::to_string(min) + ", " + std::to_string(hi) + "]");
    }
    *out = static_cast<T>(x);
    return Status::Ok();
  }

  template <typename T>
  Status OptInt(const char* key, std::optional<T>* out, int64_t min = 0,
                int64_t max = std::numeric_limits<int64_t>::max()) const {
    if (!Has(key)) {
      out->reset();
      return Status::Ok();
    }
    T v{};
    RETURN_IF_ERROR(Int(key, &v, true, min, max));
    *out = v;
    return Status::Ok();
  }

  Status Num(const char* key, double* out, bool required, double min, double max) const {
    if (!Has(key)) return required ? Bad(key, "is required") : Status::Ok();
    const Json& v = j_[key];
    if (!v.is_number()) return Bad(key, "must be a number");
    double x = v.get<double>();
    if (!std::isfinite(x) || x < min || x > max) {
      return Bad(key, "must be a number in [" + Fmt(min) + ", " + Fmt(max) + "]");
    }
    *out = x;
    return Status::Ok();
  }

  Status OptNum(const char* key, std::optional<double>* out, double min, double max) const {
    if (!Has(key)) return Status::Ok();
    double v;
    RETURN_IF_ERROR(Num(key, &v, true, min, max));
    *out = v;
    return Status::Ok();
  }

  Status Bool(const char* key, bool* out) const {
    if (!Has(key)) return Status::Ok();
    if (!j_[key].is_boolean()) return Bad(key, "must be true or false");
    *out = j_[key].get<bool>();
    return Status::Ok();
  }

  // Calls fn(element, element_path) for each element of array `key`.
  template <typename Fn>
  Status Array(const char* key, size_t max, bool required, Fn fn) const {
    if (!Has(key)) return required ? Bad(key, "is required") : Status::Ok();
    const Json& v = j_[key];
    if (!v.is_array()) return Bad(key, "must be an array");
    if (v.size() > max) return Bad(key, "has more than " + std::to_string(max) + " elements");
    for (size_t i = 0; i < v.size(); ++i) {
      RETURN_IF_ERROR(fn(v[i], Path(key) + "[" + std::to_string(i) + "]"));
    }
    return Status::Ok();
  }

  const Json& at(const char* key) const { return j_[key]; }
  std::string Path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  static std::string Fmt(double d) {
    std::string s = std::to_string(d);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  Status Bad(const char* key, const std::string& what) const {
    std::string where = key[0] != '\0' ? Path(key) : (path_.empty() ? "body" : path_);
    return Status::InvalidArgument(where + " " + what);
  }

  const Json& j_;
  std::string path_;
};

template <typename T>
void PutOpt(Json& j, const char* key, const std::optional<T>& v) {
  if (v.has_value()) j[key] = *v;
}

}  // namespace

Json ToJson(const GpuProcess& p) {
  Json j{{"pid", p.pid}, {"type", p.type}};
  PutOpt(j, "gpu_memory_bytes", p.gpu_memory_bytes);
  PutOpt(j, "uid", p.uid);
  if (!p.user.empty()) j["user"] = p.user;
  if (!p.command.empty()) j["command"] = p.command;
  PutOpt(j, "start_time_ms", p.start_time_ms);
  PutOpt(j, "cpu_percent", p.cpu_percent);
  PutOpt(j, "rss_bytes", p.rss_bytes);
  if (!p.cgroup.empty()) j["cgroup"] = p.cgroup;
  return j;
}

Result<GpuProcess> GpuProcessFromJson(const Json& j) {
  Reader r(j, "");
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
  RETURN_IF_ERROR(r.OptInt("start_time_ms", &p.start_time_ms));
  RETURN_IF_ERROR(r.OptNum("cpu_percent", &p.cpu_percent, 0, 1e6));
  RETURN_IF_ERROR(r.OptInt("rss_bytes", &p.rss_bytes));
  RETURN_IF_ERROR(r.Str("cgroup", &p.cgroup, false));
  return p;
}

Json ToJson(const GpuSample& s) {
  Json j{{"index", s.index}, {"uuid", s.uuid}};
  if (s.failed) {
    j["failed"] = true;
    j["error"] = s.error;
  }
  PutOpt(j, "memory_total_bytes", s.memory_total_bytes);
  PutOpt(j, "memory_used_bytes", s.memory_used_bytes);
  PutOpt(j, "util_gpu_pct", s.util_gpu_pct);
  PutOpt(j, "util_memory_pct", s.util_memory_pct);
  PutOpt(j, "temperature_c", s.temperature_c);
  PutOpt(j, "power_mw", s.power_mw);
  PutOpt(j, "power_limit_mw", s.power_limit_mw);
  PutOpt(j, "energy_mj", s.energy_mj);
  PutOpt(j, "sm_clock_mhz", s.sm_clock_mhz);
  PutOpt(j, "mem_clock_mhz", s.mem_clock_mhz);
  PutOpt(j, "fan_pct", s.fan_pct);
  Json procs = Json::array();
  for (const auto& p : s.processes) procs.push_back(ToJson(p));
  j["processes"] = std::move(procs);
  return j;
}

Result<GpuSample> GpuSampleFromJson(const Json& j) {
  Reader r(j, "");
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
  RETURN_IF_ERROR(r.Array("processes", kMaxProcessesPerGpu, false,
                          [&](const Json& e, const std::string& path) -> Status {
                            auto p = GpuProcessFromJson(e);
                            if (!p.ok()) return p.status().WithContext(path);
                            s.processes.push_back(std::move(*p));
                            return Status::Ok();
                          }));
  return s;
}

Json ToJson(const CpuTaskSample& t) {
  return Json{{"id", t.id}, {"job_id", t.job_id}, {"usage_usec", t.usage_usec}};
}

Result<CpuTaskSample> CpuTaskSampleFromJson(const Json& j) {
  Reader r(j, "");
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

Json ToJson(const HostSample& h) {
  Json j{{"cpu_percent", h.cpu_percent},         {"per_core_percent", h.per_core_percent},
         {"mem_total_bytes", h.mem_total_bytes}, {"mem_available_bytes", h.mem_available_bytes},
         {"load1", h.load1},                     {"load5", h.load5},
         {"load15", h.load15}};
  PutOpt(j, "cpu_energy_mj", h.cpu_energy_mj);
  PutOpt(j, "cpu_busy_usec", h.cpu_busy_usec);
  if (!h.cpu_tasks.empty()) {
    Json tasks = Json::array();
    for (const auto& t : h.cpu_tasks) tasks.push_back(ToJson(t));
    j["cpu_tasks"] = std::move(tasks);
  }
  return j;
}

Result<HostSample> HostSampleFromJson(const Json& j) {
  Reader r(j, "");
  RETURN_IF_ERROR(r.CheckObject());
  HostSample h;
  RETURN_IF_ERROR(r.Num("cpu_percent", &h.cpu_percent, true, 0, 100));
  RETURN_IF_ERROR(r.Array("per_core_percent", kMaxCores, false,
                          [&](const Json& e, const std::string& path) -> Status {
                            if (!e.is_number() || e.get<double>() < 0 || e.get<double>() > 100) {
                              return Status::InvalidArgument(path + " must be a number in [0, 100]");
                            }
                            h.per_core_percent.push_back(e.get<double>());
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
                          [&](const Json& e, const std::string& path) -> Status {
                            auto t = CpuTaskSampleFromJson(e);
                            if (!t.ok()) return t.status().WithContext(path);
                            if (!task_ids.insert(t->id).second) {
                              return Status::InvalidArgument(path + ": task " + t->id +
                                                             " is listed twice");
                            }
                            h.cpu_tasks.push_back(std::move(*t));
                            return Status::Ok();
                          }));
  return h;
}

Json ToJson(const NodeSample& s) {
  Json gpus = Json::array();
  for (const auto& g : s.gpus) gpus.push_back(ToJson(g));
  return Json{{"time_ms", s.time_ms}, {"host", ToJson(s.host)}, {"gpus", std::move(gpus)}};
}

Result<NodeSample> NodeSampleFromJson(const Json& j) {
  Reader r(j, "");
  RETURN_IF_ERROR(r.CheckObject());
  NodeSample s;
  // Years 2000..9999 in Unix ms.
  RETURN_IF_ERROR(r.Int("time_ms", &s.time_ms, true, 946'684'800'000, 253'402'300'799'000));
  if (!r.Has("host")) return Status::InvalidArgument("host is required");
  auto host = HostSampleFromJson(r.at("host"));
  if (!host.ok()) return host.status().WithContext("host");
  s.host = std::move(*host);
  RETURN_IF_ERROR(r.Array("gpus", kMaxGpusPerNode, false,
                          [&](const Json& e, const std::string& path) -> Status {
                            auto g = GpuSampleFromJson(e);
                            if (!g.ok()) return g.status().WithContext(path);
                            s.gpus.push_back(std::move(*g));
                            return Status::Ok();
                          }));
  return s;
}

Json ToJson(const GpuInfo& g) {
  Json j{{"index", g.index}, {"uuid", g.uuid}, {"name", g.name}, {"pci_bus_id", g.pci_bus_id}};
  PutOpt(j, "memory_total_bytes", g.memory_total_bytes);
  PutOpt(j, "power_limit_mw", g.power_limit_mw);
  PutOpt(j, "power_min_mw", g.power_min_mw);
  PutOpt(j, "power_max_mw", g.power_max_mw);
  PutOpt(j, "power_default_mw", g.power_default_mw);
  return j;
}

Result<GpuInfo> GpuInfoFromJson(const Json& j) {
  Reader r(j, "");
  RETURN_IF_ERROR(r.CheckObject());
  GpuInfo g;
  RETURN_IF_ERROR(r.Int("index", &g.index, true, 0, kMaxGpusPerNode - 1));
  RETURN_IF_ERROR(r.Str("uuid", &g.uuid, true, 128));
  RETURN_IF_ERROR(r.Str("name", &g.name, false, 256));
  RETURN_IF_ERROR(r.Str("pci_bus_id", &g.pci_bus_id, false, 64));
  RETURN_IF_ERROR(r.OptInt("memory_total_bytes", &g.memory_total_bytes));
  RETURN_IF_ERROR(r.OptInt("power_limit_mw", &g.power_limit_mw));
  RETURN_IF_ERROR(r.OptInt("power_min_mw", &g.power_min_mw));
  RETURN_IF_ERROR(r.OptInt("power_max_mw", &g.power_max_mw));
  RETURN_IF_ERROR(r.OptInt("power_default_mw", &g.power_default_mw));
  if (g.power_min_mw && g.power_max_mw && *g.power_min_mw > *g.power_max_mw) {
    return Status::InvalidArgument("power_min_mw is above power_max_mw");
  }
  return g;
}

Json ToJson(const NodeInfo& n) {
  Json gpus = Json::array();
  for (const auto& g : n.gpus) gpus.push_back(ToJson(g));
  Json j{{"name", n.name},
              {"node_id", n.node_id},
              {"hostname", n.hostname},
              {"addresses", n.addresses},
              {"cpus", n.cpus},
              {"memory_bytes", n.memory_bytes},
              {"labels", n.labels},
              {"gpus", std::move(gpus)},
              {"gpu_status", n.gpu_status},
              {"agent_version", n.agent_version},
              {"sample_interval_ms", n.sample_interval_ms}};
  if (!n.cpu_energy_status.empty()) j["cpu_energy_status"] = n.cpu_energy_status;
  return j;
}

Result<NodeInfo> NodeInfoFromJson(const Json& j) {
  Reader r(j, "");
  RETURN_IF_ERROR(r.CheckObject());
  NodeInfo n;
  RETURN_IF_ERROR(r.Str("name", &n.name, true, kMaxNameLength));
  if (!IsValidNodeName(n.name)) {
    return Status::InvalidArgument("name '" + n.name +
                                   "' is not a valid node name (1-63 of [A-Za-z0-9._-], "
                                   "starting with a letter or digit)");
  }
  RETURN_IF_ERROR(r.Str("node_id", &n.node_id, true, 128));
  RETURN_IF_ERROR(r.Str("hostname", &n.hostname, false, kMaxNameLength));
  RETURN_IF_ERROR(r.Array("addresses", 64, false, [&](const Json& e, const std::string& path) -> Status {
    if (!e.is_string() || e.get_ref<const std::string&>().size() > 64) {
      return Status::InvalidArgument(path + " must be an address string");
    }
    n.addresses.push_back(e.get<std::string>());
    return Status::Ok();
  }));
  RETURN_IF_ERROR(r.Int("cpus", &n.cpus, false, 0, 1 << 20));
  RETURN_IF_ERROR(r.Int("memory_bytes", &n.memory_bytes, false));
  if (r.Has("labels")) {
    const Json& l = r.at("labels");
    if (!l.is_object()) return Status::InvalidArgument("labels must be an object of strings");
    if (l.size() > kMaxLabels) return Status::InvalidArgument("labels has too many entries");
    for (auto it = l.begin(); it != l.end(); ++it) {
      if (!it.value().is_string() || it.key().size() > kMaxNameLength ||
          it.value().get_ref<const std::string&>().size() > kMaxNameLength) {
        return Status::InvalidArgument("labels." + it.key() + " must be a short string");
      }
      n.labels[it.key()] = it.value().get<std::string>();
    }
  }
  RETURN_IF_ERROR(r.Array("gpus", kMaxGpusPerNode, false,
                          [&](const Json& e, const std::string& path) -> Status {
                            auto g = GpuInfoFromJson(e);
                            if (!g.ok()) return g.status().WithContext(path);
                            n.gpus.push_back(std::move(*g));
                            return Status::Ok();
                          }));
  RETURN_IF_ERROR(r.Str("gpu_status", &n.gpu_status, false));
  RETURN_IF_ERROR(r.Str("cpu_energy_status", &n.cpu_energy_status, false));
  RETURN_IF_ERROR(r.Str("agent_version", &n.agent_version, false, 64));
  RETURN_IF_ERROR(r.Int("sample_interval_ms", &n.sample_interval_ms, false, 100, 3'600'000));
  return n;
}

Result<Json> ParseJson(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Re-parse with exceptions to get the position for the message.
    try {
      Json ignored = Json::parse(text);
    } catch (const Json::exception& e) {
      return Status::InvalidArgument(std::string("malformed JSON: ") + e.what());
    }
    return Status::InvalidArgument("malformed JSON");
  }
  return j;
}

bool IsValidNodeName(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  if (!std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

}  // namespace rota::api
