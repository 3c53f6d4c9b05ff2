#include "api/task_protocol.h"

#include <signal.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "common/strings.h"

namespace rota::api {
namespace {

bool PlainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

Status Bad(const std::string& field, const std::string& why) {
  return Status::InvalidArgument(field + ": " + why);
}

// Reads j[key] into *out. Integers must be JSON integers within T's range: a
// float (1e300) or a negative number for an unsigned field is refused, never
// converted (that conversion is undefined behaviour; the fuzzer found one).
template <typename T>
Status Get(const Json& j, const char* key, T* out, bool required = true) {
  if (!j.contains(key) || j[key].is_null()) {
    return required ? Bad(key, "is required") : Status::Ok();
  }
  const Json& v = j[key];
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const std::string range = "must be an integer in [" + std::to_string(std::numeric_limits<T>::min()) +
                              ", " + std::to_string(std::numeric_limits<T>::max()) + "]";
    if (!v.is_number_integer()) return Bad(key, range);
    if (v.is_number_unsigned()) {
      const uint64_t x = v.get<uint64_t>();
      if (x > static_cast<uint64_t>(std::numeric_limits<T>::max())) return Bad(key, range);
      *out = static_cast<T>(x);
    } else {
      const int64_t x = v.get<int64_t>();
      if (std::is_unsigned_v<T> ? x < 0
                                : (x < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
                                   x > static_cast<int64_t>(std::numeric_limits<T>::max()))) {
        return Bad(key, range);
      }
      *out = static_cast<T>(x);
    }
    return Status::Ok();
  } else {
    try {
      *out = v.get<T>();
    } catch (const std::exception&) {
      return Bad(key, "has the wrong type");
    }
    return Status::Ok();
  }
}

}  // namespace

Status ValidateTaskId(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 128 && id != "." && id != "..";
  for (char c : id) ok = ok && PlainChar(c);
  if (!ok) return Bad("id", "'" + id.substr(0, 140) + "' must match [A-Za-z0-9._-]{1,128}");
  return Status::Ok();
}

std::optional<int64_t> JobNumberOfTaskId(const std::string& id) {
  constexpr std::string_view kPrefix = "job-";
  if (id.rfind(kPrefix, 0) != 0) return std::nullopt;
  int64_t n = 0;
  const char* begin = id.data() + kPrefix.size();
  const char* end = id.data() + id.size();
  auto [p, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc() || p == begin || p == end || *p != '.' || n <= 0) return std::nullopt;
  return n;
}

Status Validate(const TaskSpec& t) {
  RETURN_IF_ERROR(ValidateTaskId(t.id));
  if (t.argv.empty() || t.argv[0].empty()) return Bad("task.argv", "must not be empty");
  if (t.argv.size() > kMaxTaskArgs) return Bad("task.argv", "too many arguments");
  size_t bytes = 0;
  for (const auto& a : t.argv) bytes += a.size();
  for (const auto& [k, v] : t.env) {
    if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos ||
        v.find('\0') != std::string::npos) {
      return Bad("task.env", "bad variable '" + k + "'");
    }
    bytes += k.size() + v.size();
  }
  for (const auto& [name, content] : t.files) {
    bool ok = !name.empty() && name.size() <= 64 && name[0] != '.';
    for (char c : name) ok = ok && PlainChar(c);
    if (!ok) return Bad("task.files", "bad file name '" + name + "'");
    bytes += content.size();
  }
  for (const auto& [var, name] : t.file_env) {
    if (!t.files.count(name)) return Bad("task.file_env." + var, "names no file of the task");
  }
  if (bytes > kMaxTaskBytes) return Bad("task", "larger than " + std::to_string(kMaxTaskBytes) + " bytes");
  if (!t.workdir.empty() && t.workdir[0] != '/') return Bad("task.workdir", "must be absolute");
  if (!(t.cpus >= 0 && t.cpus <= 4096)) return Bad("task.cpus", "must be 0..4096");
  if (t.ports.size() > kMaxTaskPorts) return Bad("task.ports", "too many ports");
  for (uint16_t p : t.ports) {
    if (p == 0) return Bad("task.ports", "port 0 is not a port");
  }
  if (t.memory_bytes > (uint64_t{1} << 50)) return Bad("task.memory_bytes", "must be at most 1 PiB");
  if (t.stop_after_disconnect_ms < 0 || t.stop_after_disconnect_ms > 366LL * 24 * 3600 * 1000) {
    return Bad("task.stop_after_disconnect_ms", "must be 0..366 days");
  }
  for (char c : t.user) {
    if (!PlainChar(c) && c != '$') return Bad("task.user", "'" + t.user + "' is not a Unix user name");
  }
  RETURN_IF_ERROR(ValidateCpuset("task.cpuset", t.cpuset));
  if (t.gpus.size() > 1024) return Bad("task.gpus", "too many GPUs");
  if (t.secrets.size() > kMaxTaskSecrets) return Bad("task.secrets", "too many secrets");
  for (const auto& sec : t.secrets) {
    bool ok = !sec.name.empty() && sec.name.size() <= 64 && sec.name[0] != '.' && sec.name[0] != '-' &&
              sec.name[0] != '_';
    for (char c : sec.name) ok = ok && PlainChar(c);
    if (!ok) return Bad("task.secrets", "bad secret name '" + sec.name.substr(0, 80) + "'");
    if (sec.value.empty() || sec.value.size() > kMaxTaskSecretBytes) {
      return Bad("task.secrets", "secret '" + sec.name + "' must hold 1.." +
                                     std::to_string(kMaxTaskSecretBytes) + " bytes");
    }
    bool env_ok = sec.env.size() <= 128;
    for (size_t i = 0; env_ok && i < sec.env.size(); ++i) {
      const char c = sec.env[i];
      env_ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    }
    if (!env_ok) return Bad("task.secrets", "secret '" + sec.name + "': bad variable '" + sec.env.substr(0, 140) + "'");
    if (!sec.env.empty() && sec.value.find('\0') != std::string::npos) {
      return Bad("task.secrets", "secret '" + sec.name + "' holds a NUL byte: it cannot be a variable");
    }
  }
  if (!ResizeSignalNumber(t.resize_signal)) {
    return Bad("task.resize_signal", "'" + t.resize_signal.substr(0, 32) + "' is not USR1, USR2, HUP, WINCH, URG or NONE");
  }
  if (t.malleable && !(t.cpus > 0)) return Bad("task.cpus", "a malleable task needs a CPU allotment > 0");
  return Status::Ok();
}

Status ValidateCpuset(const std::string& field, const std::string& cpuset) {
  if (cpuset.size() > kMaxCpusetBytes) return Bad(field, "longer than " + std::to_string(kMaxCpusetBytes) + " bytes");
  if (cpuset.empty()) return Status::Ok();
  int64_t last = -1;
  for (const auto& part : Split(cpuset, ',')) {
    const std::string what = "'" + cpuset.substr(0, 64) + "' is not a CPU list like 0-3,6 (ascending, CPUs 0.." +
                             std::to_string(kMaxCpuIndex) + ")";
    const size_t dash = part.find('-');
    const std::string lo_text = part.substr(0, dash);
    const std::string hi_text = dash == std::string::npos ? lo_text : part.substr(dash + 1);
    uint32_t lo = 0, hi = 0;
    auto number = [](const std::string& t, uint32_t* out) {
      if (t.empty() || t.size() > 5) return false;
      for (char c : t) {
        if (c < '0' || c > '9') return false;
      }
      *out = static_cast<uint32_t>(std::stoul(t));
      return true;
    };
    if (!number(lo_text, &lo) || !number(hi_text, &hi) || lo > hi || hi > kMaxCpuIndex ||
        static_cast<int64_t>(lo) <= last) {
      return Bad(field, what);
    }
    last = hi;
  }
  return Status::Ok();
}

std::optional<std::vector<uint32_t>> ParseCpuset(const std::string& cpuset) {
  if (!ValidateCpuset("cpuset", cpuset).ok()) return std::nullopt;
  std::vector<uint32_t> out;
  if (cpuset.empty()) return out;
  for (const auto& part : Split(cpuset, ',')) {
    const size_t dash = part.find('-');
    const uint32_t lo = static_cast<uint32_t>(std::stoul(part.substr(0, dash)));
    const uint32_t hi = dash == std::string::npos ? lo : static_cast<uint32_t>(std::stoul(part.substr(dash + 1)));
    for (uint32_t c = lo; c <= hi; ++c) out.push_back(c);
  }
  return out;
}

std::optional<int> ResizeSignalNumber(const std::string& name) {
  if (name == "USR1") return SIGUSR1;
  if (name == "USR2") return SIGUSR2;
  if (name == "HUP") return SIGHUP;
  if (name == "WINCH") return SIGWINCH;
  if (name == "URG") return SIGURG;
  if (name == "NONE") return 0;
  return std::nullopt;
}

Status Validate(const TaskResizeMsg& m) {
  RETURN_IF_ERROR(ValidateTaskId(m.id));
  if (!std::isfinite(m.cpus) || !(m.cpus > 0) || m.cpus > kMaxTaskCpus) {
    return Bad("cpus", "must be a number of cores in (0, " + std::to_string(static_cast<int>(kMaxTaskCpus)) + "]");
  }
  RETURN_IF_ERROR(ValidateCpuset("cpuset", m.cpuset));
  if (m.generation == 0) return Bad("generation", "must be at least 1");
  return Status::Ok();
}

Json ToJson(const TaskSpec& t) {
  Json j{{"id", t.id},     {"job_id", t.job_id},   {"name", t.name},
              {"argv", t.argv}, {"env", t.env},         {"workdir", t.workdir},
              {"user", t.user}, {"files", t.files},     {"file_env", t.file_env},
              {"cpus", t.cpus}, {"memory_bytes", t.memory_bytes}, {"ports", t.ports},
              {"stop_after_disconnect_ms", t.stop_after_disconnect_ms}};
  if (t.malleable) j["malleable"] = true;
  if (!t.cpuset.empty()) j["cpuset"] = t.cpuset;
  if (!t.gpus.empty()) j["gpus"] = t.gpus;
  if (t.resize_signal != "USR1") j["resize_signal"] = t.resize_signal;
  if (!t.secrets.empty()) {
    Json secrets = Json::array();
    for (const auto& sec : t.secrets) {
      Json js{{"name", sec.name}, {"value_hex", HexEncode(sec.value)}};
      if (!sec.env.empty()) js["env"] = sec.env;
      secrets.push_back(std::move(js));
    }
    j["secrets"] = std::move(secrets);
  }
  return j;
}

Result<TaskSpec> TaskSpecFromJson(const Json& j) {
  if (!j.is_object()) return Bad("task", "must be an object");
  TaskSpec t;
  RETURN_IF_ERROR(Get(j, "id", &t.id));
  RETURN_IF_ERROR(Get(j, "job_id", &t.job_id, false));
  RETURN_IF_ERROR(Get(j, "name", &t.name, false));
  RETURN_IF_ERROR(Get(j, "argv", &t.argv));
  RETURN_IF_ERROR(Get(j, "env", &t.env, false));
  RETURN_IF_ERROR(Get(j, "workdir", &t.workdir, false));
  RETURN_IF_ERROR(Get(j, "user", &t.user, false));
  RETURN_IF_ERROR(Get(j, "files", &t.files, false));
  RETURN_IF_ERROR(Get(j, "file_env", &t.file_env, false));
  if (j.contains("ports")) {
    if (!j["ports"].is_array() || j["ports"].size() > kMaxTaskPorts) return Bad("task.ports", "must be a short array of ports");
    for (const auto& p : j["ports"]) {
      if (!p.is_number_unsigned() || p.get<uint64_t>() > 65535) return Bad("task.ports", "must hold ports 1..65535");
      t.ports.push_back(static_cast<uint16_t>(p.get<uint64_t>()));
    }
  }
  if (j.contains("cpus")) {
    if (!j["cpus"].is_number()) return Bad("task.cpus", "must be a number");
    t.cpus = j["cpus"].get<double>();
  }
  if (j.contains("memory_bytes")) {
    if (!j["memory_bytes"].is_number_unsigned()) return Bad("task.memory_bytes", "must be a non-negative integer");
    t.memory_bytes = j["memory_bytes"].get<uint64_t>();
  }
  if (j.contains("stop_after_disconnect_ms")) {
    if (!j["stop_after_disconnect_ms"].is_number_integer()) {
      return Bad("task.stop_after_disconnect_ms", "must be an integer");
    }
    t.stop_after_disconnect_ms = j["stop_after_disconnect_ms"].get<int64_t>();
  }
  RETURN_IF_ERROR(Get(j, "malleable", &t.malleable, false));
  RETURN_IF_ERROR(Get(j, "cpuset", &t.cpuset, false));
  if (j.contains("gpus")) {
    if (!j["gpus"].is_array() || j["gpus"].size() > 1024) return Bad("task.gpus", "must be a short array of GPU indices");
    for (const auto& g : j["gpus"]) {
      if (!g.is_number_unsigned() || g.get<uint64_t>() > 1023) return Bad("task.gpus", "must hold GPU indices 0..1023");
      t.gpus.push_back(static_cast<uint32_t>(g.get<uint64_t>()));
    }
  }
  RETURN_IF_ERROR(Get(j, "resize_signal", &t.resize_signal, false));
  if (j.contains("secrets")) {
    if (!j["secrets"].is_array() || j["secrets"].size() > kMaxTaskSecrets) {
      return Bad("task.secrets", "must be a short array");
    }
    for (const auto& js : j["secrets"]) {
      if (!js.is_object()) return Bad("task.secrets", "must hold objects");
      TaskSecret sec;
      RETURN_IF_ERROR(Get(js, "name", &sec.name));
      std::string hex;
      RETURN_IF_ERROR(Get(js, "value_hex", &hex));
      if (hex.size() > 2 * kMaxTaskSecretBytes || !HexDecode(hex, &sec.value)) {
        return Bad("task.secrets", "value_hex must be hex of at most " + std::to_string(kMaxTaskSecretBytes) + " bytes");
      }
      RETURN_IF_ERROR(Get(js, "env", &sec.env, false));
      t.secrets.push_back(std::move(sec));
    }
  }
  RETURN_IF_ERROR(Validate(t));
  return t;
}

Json ToJson(const TaskReport& r) {
  Json j{{"id", r.id}, {"state", r.state}, {"pid", r.pid}, {"ended_ms", r.ended_ms}};
  if (r.exit_code) j["exit_code"] = *r.exit_code;
  if (r.signal) j["signal"] = *r.signal;
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

Result<TaskReport> TaskReportFromJson(const Json& j) {
  if (!j.is_object()) return Bad("task", "must be an object");
  TaskReport r;
  RETURN_IF_ERROR(Get(j, "id", &r.id));
  RETURN_IF_ERROR(ValidateTaskId(r.id));
  RETURN_IF_ERROR(Get(j, "state", &r.state));
  if (r.state != "running" && r.state != "exited" && r.state != "lost") {
    return Bad("state", "'" + r.state + "' is not running, exited or lost");
  }
  RETURN_IF_ERROR(Get(j, "pid", &r.pid, false));
  RETURN_IF_ERROR(Get(j, "ended_ms", &r.ended_ms, false));
  int v = 0;
  if (j.contains("exit_code")) {
    RETURN_IF_ERROR(Get(j, "exit_code", &v));
    if (v < 0 || v > 255) return Bad("exit_code", "must be 0..255");
    r.exit_code = v;
  }
  if (j.contains("signal")) {
    RETURN_IF_ERROR(Get(j, "signal", &v));
    if (v < 1 || v > 64) return Bad("signal", "must be 1..64");
    r.signal = v;
  }
  RETURN_IF_ERROR(Get(j, "error", &r.error, false));
  if (r.error.size() > 4096) r.error.resize(4096);
  return r;
}

Result<TaskStartMsg> TaskStartFromJson(const Json& j) {
  if (!j.contains("task")) return Bad("task", "is required");
  ASSIGN_OR_RETURN(TaskSpec t, TaskSpecFromJson(j["task"]));
  return TaskStartMsg{std::move(t)};
}

Result<TaskSignalMsg> TaskSignalFromJson(const Json& j) {
  TaskSignalMsg m;
  RETURN_IF_ERROR(Get(j, "id", &m.id));
  RETURN_IF_ERROR(ValidateTaskId(m.id));
  RETURN_IF_ERROR(Get(j, "signal", &m.signal));
  if (m.signal != "TERM" && m.signal != "KILL") return Bad("signal", "must be TERM or KILL");
  RETURN_IF_ERROR(Get(j, "notice", &m.notice, false));
  if (m.notice.size() > kMaxTextLength) return Bad("notice", "longer than " + std::to_string(kMaxTextLength) + " bytes");
  return m;
}

Result<TaskResizeMsg> TaskResizeFromJson(const Json& j) {
  TaskResizeMsg m;
  RETURN_IF_ERROR(Get(j, "id", &m.id));
  RETURN_IF_ERROR(ValidateTaskId(m.id));
  if (!j.contains("cpus") || !j["cpus"].is_number()) return Bad("cpus", "must be a number of cores");
  m.cpus = j["cpus"].get<double>();
  RETURN_IF_ERROR(Get(j, "cpuset", &m.cpuset, false));
  RETURN_IF_ERROR(Get(j, "generation", &m.generation));
  RETURN_IF_ERROR(Validate(m));
  return m;
}

Result<TaskResizedMsg> TaskResizedFromJson(const Json& j) {
  TaskResizedMsg m;
  RETURN_IF_ERROR(Get(j, "id", &m.id));
  RETURN_IF_ERROR(ValidateTaskId(m.id));
  RETURN_IF_ERROR(Get(j, "generation", &m.generation));
  RETURN_IF_ERROR(Get(j, "error", &m.error, false));
  if (m.error.size() > 4096) m.error.resize(4096);
  return m;
}

Status ValidateMetricName(const std::string& name) {
  if (name.empty() || name.size() > kMaxMetricName) {
    return Bad("name", "must be 1.." + std::to_string(kMaxMetricName) + " bytes");
  }
  const auto first = static_cast<unsigned char>(name[0]);
  if (!std::isalpha(first) && first != '_') return Bad("name", "'" + name + "' must begin with a letter or _");
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '_' && c != '.' && c != ':' && c != '/' && c != '-') {
      return Bad("name", "'" + name + "' may hold letters, digits and _ . : / - only");
    }
  }
  if (name == "step") return Bad("name", "'step' names the step, not a metric");
  return Status::Ok();
}

const char* MetricSourceName(TaskMetricPoint::Source s) {
  return s == TaskMetricPoint::Source::kFile ? "file" : "stdout";
}

Json ToJson(const TaskMetricsMsg& m) {
  Json points = Json::array();
  for (const auto& p : m.points) {
    Json j{{"name", p.name}, {"value", p.value}, {"source", MetricSourceName(p.source)},
           {"seq", p.seq}, {"time_ms", p.time_ms}};
    if (p.step >= 0) j["step"] = p.step;
    points.push_back(std::move(j));
  }
  return Json{{"id", m.id}, {"points", std::move(points)}};
}

Result<TaskMetricsMsg> TaskMetricsFromJson(const Json& j) {
  TaskMetricsMsg m;
  RETURN_IF_ERROR(Get(j, "id", &m.id));
  RETURN_IF_ERROR(ValidateTaskId(m.id));
  auto points = j.find("points");
  if (points == j.end() || !points->is_array() || points->empty() ||
      points->size() > kMaxMetricPointsPerMessage) {
    return Bad("points", "must be an array of 1.." + std::to_string(kMaxMetricPointsPerMessage) + " points");
  }
  m.points.reserve(points->size());
  for (size_t i = 0; i < points->size(); ++i) {
    const Json& pj = (*points)[i];
    const std::string at = "points[" + std::to_string(i) + "]";
    if (!pj.is_object()) return Bad(at, "must be an object");
    TaskMetricPoint p;
    RETURN_IF_ERROR(Get(pj, "name", &p.name).WithContext(at));
    RETURN_IF_ERROR(ValidateMetricName(p.name).WithContext(at));
    auto value = pj.find("value");
    if (value == pj.end() || !value->is_number() || !std::isfinite(value->get<double>())) {
      return Bad(at + ".value", "must be a finite number");
    }
    p.value = value->get<double>();
    if (pj.contains("step")) {
      RETURN_IF_ERROR(Get(pj, "step", &p.step).WithContext(at));
      if (p.step < 0 || p.step > kMaxMetricStep) return Bad(at + ".step", "must be 0..2^53");
    }
    std::string source;
    RETURN_IF_ERROR(Get(pj, "source", &source).WithContext(at));
    if (source == "file") {
      p.source = TaskMetricPoint::Source::kFile;
    } else if (source != "stdout") {
      return Bad(at + ".source", "must be stdout or file");
    }
    RETURN_IF_ERROR(Get(pj, "seq", &p.seq).WithContext(at));
    RETURN_IF_ERROR(Get(pj, "time_ms", &p.time_ms).WithContext(at));
    m.points.push_back(std::move(p));
  }
  return m;
}

Result<TaskLogsMsg> TaskLogsFromJson(const Json& j) {
  TaskLogsMsg m;
  RETURN_IF_ERROR(Get(j, "req", &m.req));
  RETURN_IF_ERROR(Get(j, "id", &m.id));
  RETURN_IF_ERROR(ValidateTaskId(m.id));
  RETURN_IF_ERROR(Get(j, "stream", &m.stream, false));
  if (m.stream != "stdout" && m.stream != "stderr") return Bad("stream", "must be stdout or stderr");
  RETURN_IF_ERROR(Get(j, "offset", &m.offset, false));
  RETURN_IF_ERROR(Get(j, "max_bytes", &m.max_bytes, false));
  if (m.max_bytes == 0 || m.max_bytes > kMaxLogChunk) {
    return Bad("max_bytes", "must be 1.." + std::to_string(kMaxLogChunk));
  }
  return m;
}

Result<TaskStatusMsg> TaskStatusFromJson(const Json& j) {
  if (!j.contains("tasks") || !j["tasks"].is_array()) return Bad("tasks", "must be an array");
  if (j["tasks"].size() > kMaxTasksPerStatus) return Bad("tasks", "too many");
  TaskStatusMsg m;
  for (size_t i = 0; i < j["tasks"].size(); ++i) {
    auto r = TaskReportFromJson(j["tasks"][i]);
    if (!r.ok()) return r.status().WithContext("tasks[" + std::to_string(i) + "]");
    m.tasks.push_back(std::move(*r));
  }
  return m;
}

Result<TaskLogMsg> TaskLogFromJson(const Json& j) {
  TaskLogMsg m;
  RETURN_IF_ERROR(Get(j, "req", &m.req));
  RETURN_IF_ERROR(Get(j, "data", &m.data, false));
  RETURN_IF_ERROR(Get(j, "offset", &m.offset, false));
  RETURN_IF_ERROR(Get(j, "size", &m.size, false));
  RETURN_IF_ERROR(Get(j, "error", &m.error, false));
  RETURN_IF_ERROR(Get(j, "next_offset", &m.next_offset, false));
  if (m.data.size() > kMaxLogChunk * 2) return Bad("data", "too large");
  if (m.next_offset != 0 && (m.next_offset < m.offset || m.next_offset - m.offset > kMaxLogChunk)) {
    return Bad("next_offset", "not within one chunk after offset");
  }
  return m;
}

}  // namespace rota::api
