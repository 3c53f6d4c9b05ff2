#include "api/task_protocol.h"

#include <charconv>
#include <string_view>

namespace rota::api {
namespace {

bool PlainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

Status Bad(const std::string& field, const std::string& why) {
  return Status::InvalidArgument(field + ": " + why);
}

template <typename T>
Status Get(const Json& j, const char* key, T* out, bool required = true) {
  if (!j.contains(key) || j[key].is_null()) {
    return required ? Bad(key, "is required") : Status::Ok();
  }
  try {
    *out = j[key].get<T>();
  } catch (const std::exception&) {
    return Bad(key, "has the wrong type");
  }
  return Status::Ok();
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
  return Status::Ok();
}

Json ToJson(const TaskSpec& t) {
  return Json{{"id", t.id},     {"job_id", t.job_id},   {"name", t.name},
              {"argv", t.argv}, {"env", t.env},         {"workdir", t.workdir},
              {"user", t.user}, {"files", t.files},     {"file_env", t.file_env},
              {"cpus", t.cpus}, {"memory_bytes", t.memory_bytes}, {"ports", t.ports},
              {"stop_after_disconnect_ms", t.stop_after_disconnect_ms}};
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
