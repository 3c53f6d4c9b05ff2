#include "api/codec.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "api/field_reader.h"
#include "api/sample_decode.h"
#include "api/task_protocol.h"

namespace rota::api {
namespace {

using Reader = detail::FieldReader<detail::JsonValue>;

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
  if (!p.exe.empty()) j["exe"] = p.exe;
  PutOpt(j, "start_time_ms", p.start_time_ms);
  PutOpt(j, "cpu_percent", p.cpu_percent);
  PutOpt(j, "rss_bytes", p.rss_bytes);
  if (!p.cgroup.empty()) j["cgroup"] = p.cgroup;
  return j;
}

Result<GpuProcess> GpuProcessFromJson(const Json& j) { return detail::DecodeGpuProcess(detail::JsonValue(j)); }

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

Result<GpuSample> GpuSampleFromJson(const Json& j) { return detail::DecodeGpuSample(detail::JsonValue(j)); }

Json ToJson(const CpuTaskSample& t) {
  return Json{{"id", t.id}, {"job_id", t.job_id}, {"usage_usec", t.usage_usec}};
}

Result<CpuTaskSample> CpuTaskSampleFromJson(const Json& j) {
  return detail::DecodeCpuTaskSample(detail::JsonValue(j));
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

Result<HostSample> HostSampleFromJson(const Json& j) { return detail::DecodeHostSample(detail::JsonValue(j)); }

Json ToJson(const NodeSample& s) {
  Json gpus = Json::array();
  for (const auto& g : s.gpus) gpus.push_back(ToJson(g));
  return Json{{"time_ms", s.time_ms}, {"host", ToJson(s.host)}, {"gpus", std::move(gpus)}};
}

Result<NodeSample> NodeSampleFromJson(const Json& j) { return detail::DecodeNodeSample(detail::JsonValue(j)); }

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
  RETURN_IF_ERROR(r.Array("addresses", 64, false, [&](const Json& e, const auto& at) -> Status {
    if (!e.is_string() || e.get_ref<const std::string&>().size() > 64) {
      return Status::InvalidArgument(at.str() + " must be an address string");
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
  RETURN_IF_ERROR(r.ArrayOf("gpus", kMaxGpusPerNode, false, &n.gpus, GpuInfoFromJson));
  RETURN_IF_ERROR(r.Str("gpu_status", &n.gpu_status, false));
  RETURN_IF_ERROR(r.Str("cpu_energy_status", &n.cpu_energy_status, false));
  RETURN_IF_ERROR(r.Str("agent_version", &n.agent_version, false, 64));
  RETURN_IF_ERROR(r.Int("sample_interval_ms", &n.sample_interval_ms, false, 100, 3'600'000));
  return n;
}

namespace {

// True when arrays and objects in `text` nest deeper than `limit` (brackets
// inside strings do not count). Copying and printing a parsed value recurse
// once per level: deep enough text would overflow the stack.
bool NestsDeeperThan(const std::string& text, size_t limit) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace

Result<Json> ParseJson(const std::string& text) {
  if (NestsDeeperThan(text, kMaxJsonDepth)) {
    return Status::InvalidArgument("malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) +
                                   " levels");
  }
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

Result<Json> ParseStrictJson(const std::string& text) {
  // One set of keys per open object; arrays between objects need no entry because
  // keys belong to the innermost open object.
  std::vector<std::set<std::string>> open_objects;
  std::optional<std::string> duplicate;
  auto watch = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        open_objects.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!open_objects.empty() && !duplicate.has_value() &&
            !open_objects.back().insert(parsed.get<std::string>()).second) {
          duplicate = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  if (NestsDeeperThan(text, kMaxJsonDepth)) return ParseJson(text);  // its message
  Json j = Json::parse(text, watch, /*allow_exceptions=*/false);
  if (j.is_discarded()) return ParseJson(text);  // the parser's message and position
  if (duplicate.has_value()) {
    if (duplicate->size() > 64) duplicate = duplicate->substr(0, 61) + "...";
    return Status::InvalidArgument(
        "key " + Json(*duplicate).dump(-1, ' ', false, Json::error_handler_t::replace) +
        " appears twice in one object");
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
