#include "api/protocol.h"

#include <cstdint>

#include "api/json_writer.h"
#include "api/sample_writer.h"

namespace rota::api {
namespace {

const char kVersionPrefix[] = "unsupported protocol version";

Json Envelope(const char* type) { return Json{{"v", kProtocolVersion}, {"type", type}}; }

// Checks the envelope; returns the type.
Result<std::string> OpenEnvelope(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("message must be a JSON object");
  if (!j.contains("v") || !j["v"].is_number_integer()) {
    return Status::InvalidArgument("message has no protocol version field \"v\"");
  }
  int64_t v = j["v"].get<int64_t>();
  if (v != kProtocolVersion) {
    return Status::InvalidArgument(std::string(kVersionPrefix) + " " + std::to_string(v) +
                                   " (this side speaks " + std::to_string(kProtocolVersion) + ")");
  }
  if (!j.contains("type") || !j["type"].is_string()) {
    return Status::InvalidArgument("message has no \"type\"");
  }
  return j["type"].get<std::string>();
}

Result<uint64_t> ReadSeq(const Json& j) {
  if (!j.contains("seq") || !j["seq"].is_number_unsigned()) {
    return Status::InvalidArgument("seq must be a non-negative integer");
  }
  return j["seq"].get<uint64_t>();
}

// ---- Field readers for the command messages; errors name `prefix` + key. ----

bool Has(const Json& obj, const char* key) { return obj.contains(key) && !obj[key].is_null(); }

// A required integer in [0, max].
Result<uint64_t> UintField(const Json& obj, const std::string& prefix, const char* key,
                           uint64_t min, uint64_t max) {
  std::string name = prefix + key;
  if (!Has(obj, key)) return Status::InvalidArgument(name + " is required");
  const Json& v = obj[key];
  std::string range = " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!v.is_number_unsigned()) return Status::InvalidArgument(name + range);
  uint64_t x = v.get<uint64_t>();
  if (x < min || x > max) return Status::InvalidArgument(name + range);
  return x;
}

// An optional string of at most max bytes ("" when absent).
Result<std::string> StrField(const Json& obj, const std::string& prefix, const char* key, size_t max) {
  if (!Has(obj, key)) return std::string();
  const Json& v = obj[key];
  if (!v.is_string()) return Status::InvalidArgument(prefix + key + " must be a string");
  if (v.get_ref<const std::string&>().size() > max) {
    return Status::InvalidArgument(prefix + key + " is longer than " + std::to_string(max) + " bytes");
  }
  return v.get<std::string>();
}

// An optional array of at most max elements (null when absent).
Result<const Json*> ArrayField(const Json& obj, const char* key, size_t max) {
  if (!Has(obj, key)) return static_cast<const Json*>(nullptr);
  const Json& v = obj[key];
  if (!v.is_array()) return Status::InvalidArgument(std::string(key) + " must be an array");
  if (v.size() > max) {
    return Status::InvalidArgument(std::string(key) + " has more than " + std::to_string(max) + " elements");
  }
  return &v;
}

constexpr uint64_t kMaxPid = 1u << 30;
constexpr uint64_t kMaxUid = 0xFFFFFFFEu;  // (uid_t)-1 means "no uid"

template <typename Enum, size_t N>
Result<Enum> EnumField(const Json& obj, const std::string& prefix, const char* key,
                       const Enum (&values)[N], const char* (*name_of)(Enum),
                       const std::string& expected) {
  if (!Has(obj, key)) return Status::InvalidArgument(prefix + key + " is required");
  ASSIGN_OR_RETURN(std::string text, StrField(obj, prefix, key, 32));
  for (Enum e : values) {
    if (text == name_of(e)) return e;
  }
  return Status::InvalidArgument(prefix + key + " must be " + expected + ", not '" + text + "'");
}

constexpr CommandAction kActions[] = {CommandAction::kWarn, CommandAction::kSignal};
constexpr CommandSignal kSignals[] = {CommandSignal::kTerm, CommandSignal::kKill};
constexpr TargetOutcome kOutcomes[] = {TargetOutcome::kSignalled, TargetOutcome::kGone,
                                       TargetOutcome::kMismatch, TargetOutcome::kDenied,
                                       TargetOutcome::kError};

Result<CommandMsg> CommandFromJson(const Json& j) {
  CommandMsg m;
  ASSIGN_OR_RETURN(m.id, UintField(j, "", "id", 0, UINT64_MAX));
  ASSIGN_OR_RETURN(m.action, EnumField(j, "", "action", kActions, CommandActionName,
                                       "\"warn\" or \"signal\""));
  ASSIGN_OR_RETURN(uint64_t uid, UintField(j, "", "uid", 0, kMaxUid));
  m.uid = static_cast<uint32_t>(uid);
  ASSIGN_OR_RETURN(m.user, StrField(j, "", "user", kMaxNameLength));
  ASSIGN_OR_RETURN(m.message, StrField(j, "", "message", kMaxCommandMessageBytes));
  if (m.action == CommandAction::kSignal || Has(j, "signal")) {
    ASSIGN_OR_RETURN(m.signal, EnumField(j, "", "signal", kSignals, CommandSignalName,
                                         "\"TERM\" or \"KILL\""));
  }
  if (!Has(j, "targets")) return Status::InvalidArgument("targets is required");
  ASSIGN_OR_RETURN(const Json* targets, ArrayField(j, "targets", kMaxCommandTargets));
  for (size_t i = 0; i < targets->size(); ++i) {
    const Json& t = (*targets)[i];
    std::string prefix = "targets[" + std::to_string(i) + "].";
    if (!t.is_object()) return Status::InvalidArgument("targets[" + std::to_string(i) + "] must be an object");
    CommandTarget target;
    ASSIGN_OR_RETURN(uint64_t pid, UintField(t, prefix, "pid", 1, kMaxPid));
    ASSIGN_OR_RETURN(uint64_t start, UintField(t, prefix, "start_time_ms", 0, INT64_MAX));
    ASSIGN_OR_RETURN(uint64_t gpu, UintField(t, prefix, "gpu", 0, kMaxGpusPerNode - 1));
    target.pid = static_cast<uint32_t>(pid);
    target.start_time_ms = static_cast<int64_t>(start);
    target.gpu = static_cast<uint32_t>(gpu);
    m.targets.push_back(target);
  }
  RETURN_IF_ERROR(ValidateCommand(m));
  return m;
}

Result<CommandResultMsg> CommandResultFromJson(const Json& j) {
  CommandResultMsg m;
  ASSIGN_OR_RETURN(m.id, UintField(j, "", "id", 0, UINT64_MAX));
  ASSIGN_OR_RETURN(const Json* outcomes, ArrayField(j, "outcomes", kMaxCommandTargets));
  for (size_t i = 0; outcomes && i < outcomes->size(); ++i) {
    const Json& o = (*outcomes)[i];
    std::string prefix = "outcomes[" + std::to_string(i) + "].";
    if (!o.is_object()) return Status::InvalidArgument("outcomes[" + std::to_string(i) + "] must be an object");
    TargetResult r;
    ASSIGN_OR_RETURN(uint64_t pid, UintField(o, prefix, "pid", 1, kMaxPid));
    r.pid = static_cast<uint32_t>(pid);
    ASSIGN_OR_RETURN(r.outcome, EnumField(o, prefix, "outcome", kOutcomes, TargetOutcomeName,
                                          "one of signalled, gone, mismatch, denied, error"));
    ASSIGN_OR_RETURN(r.detail, StrField(o, prefix, "detail", kMaxTextLength));
    m.outcomes.push_back(std::move(r));
  }
  ASSIGN_OR_RETURN(const Json* terminals, ArrayField(j, "terminals", kMaxCommandTerminals));
  for (size_t i = 0; terminals && i < terminals->size(); ++i) {
    const Json& t = (*terminals)[i];
    std::string name = "terminals[" + std::to_string(i) + "]";
    if (!t.is_string() || t.get_ref<const std::string&>().empty() ||
        t.get_ref<const std::string&>().size() > kMaxTerminalPathBytes) {
      return Status::InvalidArgument(name + " must be a path of 1.." + std::to_string(kMaxTerminalPathBytes) +
                                     " bytes");
    }
    m.terminals.push_back(t.get<std::string>());
  }
  ASSIGN_OR_RETURN(m.error, StrField(j, "", "error", kMaxTextLength));
  return m;
}

}  // namespace

const char* CommandActionName(CommandAction a) {
  switch (a) {
    case CommandAction::kWarn: return "warn";
    case CommandAction::kSignal: return "signal";
  }
  return "?";
}

const char* CommandSignalName(CommandSignal s) {
  switch (s) {
    case CommandSignal::kTerm: return "TERM";
    case CommandSignal::kKill: return "KILL";
  }
  return "?";
}

const char* TargetOutcomeName(TargetOutcome o) {
  switch (o) {
    case TargetOutcome::kSignalled: return "signalled";
    case TargetOutcome::kGone: return "gone";
    case TargetOutcome::kMismatch: return "mismatch";
    case TargetOutcome::kDenied: return "denied";
    case TargetOutcome::kError: return "error";
  }
  return "?";
}

Status ValidateCommand(const CommandMsg& m) {
  if (m.targets.empty()) return Status::InvalidArgument("targets must not be empty");
  if (m.targets.size() > kMaxCommandTargets) {
    return Status::InvalidArgument("targets has more than " + std::to_string(kMaxCommandTargets) + " elements");
  }
  if (m.uid > kMaxUid) return Status::InvalidArgument("uid must be in [0, " + std::to_string(kMaxUid) + "]");
  if (m.user.size() > kMaxNameLength) {
    return Status::InvalidArgument("user is longer than " + std::to_string(kMaxNameLength) + " bytes");
  }
  if (m.message.size() > kMaxCommandMessageBytes) {
    return Status::InvalidArgument("message is longer than " + std::to_string(kMaxCommandMessageBytes) + " bytes");
  }
  if (m.action == CommandAction::kWarn && m.message.empty()) {
    return Status::InvalidArgument("message is required for action \"warn\"");
  }
  for (size_t i = 0; i < m.targets.size(); ++i) {
    const CommandTarget& t = m.targets[i];
    std::string prefix = "targets[" + std::to_string(i) + "].";
    if (t.pid < 1 || t.pid > kMaxPid) {
      return Status::InvalidArgument(prefix + "pid must be an integer in [1, " + std::to_string(kMaxPid) + "]");
    }
    if (t.start_time_ms < 0) return Status::InvalidArgument(prefix + "start_time_ms must not be negative");
    if (t.gpu >= kMaxGpusPerNode) {
      return Status::InvalidArgument(prefix + "gpu must be an integer in [0, " +
                                     std::to_string(kMaxGpusPerNode - 1) + "]");
    }
  }
  return Status::Ok();
}

std::string Encode(const RegisterMsg& m) {
  Json j = Envelope("register");
  j["node"] = ToJson(m.node);
  if (m.enrol) j["enrol"] = true;
  return j.dump();
}

// Written without a DOM: the agent encodes every sample (see bench/agent_sample_bench.cc).
std::string Encode(const SamplesMsg& m) {
  std::string out;
  out.reserve(512 + m.samples.size() * 4096);
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("v");
  w.Int(kProtocolVersion);
  w.Key("type");
  w.String("samples");
  w.Key("seq");
  w.Int(m.seq);
  w.Key("samples");
  w.BeginArray();
  for (const auto& s : m.samples) WriteNodeSample(w, s);
  w.EndArray();
  w.EndObject();
  return out;
}

std::string Encode(const RegisteredMsg& m) {
  Json j = Envelope("registered");
  j["node"] = m.node;
  j["server_time_ms"] = m.server_time_ms;
  if (!m.credential.empty()) j["credential"] = m.credential;
  if (m.epoch > 0) j["epoch"] = m.epoch;
  return j.dump();
}

std::string Encode(const AckMsg& m) {
  // Formatted directly: the server acks every samples message from the store's
  // single writer thread (10,000 a second at 10,000 agents).
  return "{\"v\":" + std::to_string(kProtocolVersion) + ",\"type\":\"ack\",\"seq\":" +
         std::to_string(m.seq) + "}";
}

std::string Encode(const ErrorMsg& m) {
  Json j = Envelope("error");
  j["message"] = m.message;
  j["fatal"] = m.fatal;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const CommandMsg& m) {
  Json j = Envelope("command");
  j["id"] = m.id;
  j["action"] = CommandActionName(m.action);
  j["uid"] = m.uid;
  j["user"] = m.user;
  if (m.action == CommandAction::kWarn) j["message"] = m.message;
  if (m.action == CommandAction::kSignal) j["signal"] = CommandSignalName(m.signal);
  Json targets = Json::array();
  for (const auto& t : m.targets) {
    targets.push_back(Json{{"pid", t.pid}, {"start_time_ms", t.start_time_ms}, {"gpu", t.gpu}});
  }
  j["targets"] = std::move(targets);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const CommandResultMsg& m) {
  Json j = Envelope("command_result");
  j["id"] = m.id;
  Json outcomes = Json::array();
  for (const auto& o : m.outcomes) {
    outcomes.push_back(Json{{"pid", o.pid}, {"outcome", TargetOutcomeName(o.outcome)}, {"detail", o.detail}});
  }
  j["outcomes"] = std::move(outcomes);
  j["terminals"] = m.terminals;
  if (!m.error.empty()) j["error"] = m.error;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const TaskStartMsg& m) {
  Json j = Envelope("task_start");
  j["task"] = ToJson(m.task);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const TaskSignalMsg& m) {
  Json j = Envelope("task_signal");
  j["id"] = m.id;
  j["signal"] = m.signal;
  if (!m.notice.empty()) j["notice"] = m.notice;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const TaskLogsMsg& m) {
  Json j = Envelope("task_logs");
  j["req"] = m.req;
  j["id"] = m.id;
  j["stream"] = m.stream;
  j["offset"] = m.offset;
  j["max_bytes"] = m.max_bytes;
  return j.dump();
}

std::string Encode(const TaskStatusMsg& m) {
  Json j = Envelope("task_status");
  Json tasks = Json::array();
  for (const auto& t : m.tasks) tasks.push_back(ToJson(t));
  j["tasks"] = std::move(tasks);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const TaskLogMsg& m) {
  Json j = Envelope("task_log");
  j["req"] = m.req;
  j["data"] = m.data;
  j["offset"] = m.offset;
  j["size"] = m.size;
  if (m.next_offset != 0) j["next_offset"] = m.next_offset;
  if (!m.error.empty()) j["error"] = m.error;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const TaskResizeMsg& m) {
  Json j = Envelope("task_resize");
  j["id"] = m.id;
  j["cpus"] = m.cpus;
  if (!m.cpuset.empty()) j["cpuset"] = m.cpuset;
  j["generation"] = m.generation;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const TaskResizedMsg& m) {
  Json j = Envelope("task_resized");
  j["id"] = m.id;
  j["generation"] = m.generation;
  if (!m.error.empty()) j["error"] = m.error;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const TaskMetricsMsg& m) {
  Json j = Envelope("task_metrics");
  j.update(ToJson(m));
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const PowerLimitsMsg& m) {
  Json j = ToJson(m);
  j["v"] = kProtocolVersion;
  j["type"] = "power_limits";
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Encode(const PowerReportMsg& m) {
  Json j = ToJson(m);
  j["v"] = kProtocolVersion;
  j["type"] = "power_report";
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<uint64_t> CommandIdOf(const std::string& text) {
  auto j = ParseJson(text);
  if (!j.ok() || !j->is_object()) return std::nullopt;
  auto type = OpenEnvelope(*j);
  if (!type.ok() || *type != "command") return std::nullopt;
  auto id = UintField(*j, "", "id", 0, UINT64_MAX);
  if (!id.ok()) return std::nullopt;
  return *id;
}

Result<AgentMessage> DecodeAgentMessage(const std::string& text) {
  ASSIGN_OR_RETURN(Json j, ParseJson(text));
  ASSIGN_OR_RETURN(std::string type, OpenEnvelope(j));
  if (type == "register") {
    if (!j.contains("node")) return Status::InvalidArgument("register: node is required");
    auto node = NodeInfoFromJson(j["node"]);
    if (!node.ok()) return node.status().WithContext("register: node");
    RegisterMsg m{std::move(*node)};
    if (j.contains("enrol")) {
      if (!j["enrol"].is_boolean()) return Status::InvalidArgument("register: enrol must be a boolean");
      m.enrol = j["enrol"].get<bool>();
    }
    return AgentMessage{std::move(m)};
  }
  if (type == "samples") {
    SamplesMsg m;
    auto seq = ReadSeq(j);
    if (!seq.ok()) return seq.status().WithContext("samples");
    m.seq = *seq;
    if (!j.contains("samples") || !j["samples"].is_array()) {
      return Status::InvalidArgument("samples: samples must be an array");
    }
    const Json& arr = j["samples"];
    if (arr.size() > kMaxSamplesPerMessage) {
      return Status::InvalidArgument("samples: more than " + std::to_string(kMaxSamplesPerMessage) +
                                     " samples in one message");
    }
    for (size_t i = 0; i < arr.size(); ++i) {
      auto s = NodeSampleFromJson(arr[i]);
      if (!s.ok()) return s.status().WithContext("samples[" + std::to_string(i) + "]");
      m.samples.push_back(std::move(*s));
    }
    return AgentMessage{std::move(m)};
  }
  if (type == "command_result") {
    auto m = CommandResultFromJson(j);
    if (!m.ok()) return m.status().WithContext("command_result");
    return AgentMessage{std::move(*m)};
  }
  if (type == "task_status") {
    auto m = TaskStatusFromJson(j);
    if (!m.ok()) return m.status().WithContext("task_status");
    return AgentMessage{std::move(*m)};
  }
  if (type == "task_log") {
    auto m = TaskLogFromJson(j);
    if (!m.ok()) return m.status().WithContext("task_log");
    return AgentMessage{std::move(*m)};
  }
  if (type == "power_report") {
    auto m = PowerReportFromJson(j);
    if (!m.ok()) return m.status().WithContext("power_report");
    return AgentMessage{std::move(*m)};
  }
  if (type == "task_resized") {
    auto m = TaskResizedFromJson(j);
    if (!m.ok()) return m.status().WithContext("task_resized");
    return AgentMessage{std::move(*m)};
  }
  if (type == "task_metrics") {
    auto m = TaskMetricsFromJson(j);
    if (!m.ok()) return m.status().WithContext("task_metrics");
    return AgentMessage{std::move(*m)};
  }
  return Status::InvalidArgument("unknown message type '" + type + "'");
}

Result<ServerMessage> DecodeServerMessage(const std::string& text) {
  ASSIGN_OR_RETURN(Json j, ParseJson(text));
  ASSIGN_OR_RETURN(std::string type, OpenEnvelope(j));
  if (type == "registered") {
    RegisteredMsg m;
    if (j.contains("node") && j["node"].is_string()) m.node = j["node"].get<std::string>();
    if (j.contains("server_time_ms") && j["server_time_ms"].is_number_integer()) {
      m.server_time_ms = j["server_time_ms"].get<int64_t>();
    }
    if (j.contains("credential") && j["credential"].is_string()) {
      m.credential = j["credential"].get<std::string>();
    }
    if (j.contains("epoch")) {
      if (!j["epoch"].is_number_unsigned()) return Status::InvalidArgument("registered.epoch must be a whole number >= 0");
      m.epoch = j["epoch"].get<uint64_t>();
    }
    return ServerMessage{m};
  }
  if (type == "ack") {
    auto seq = ReadSeq(j);
    if (!seq.ok()) return seq.status().WithContext("ack");
    return ServerMessage{AckMsg{*seq}};
  }
  if (type == "error") {
    ErrorMsg m;
    if (j.contains("message") && j["message"].is_string()) m.message = j["message"].get<std::string>();
    if (j.contains("fatal") && j["fatal"].is_boolean()) m.fatal = j["fatal"].get<bool>();
    return ServerMessage{m};
  }
  if (type == "command") {
    auto m = CommandFromJson(j);
    if (!m.ok()) return m.status().WithContext("command");
    return ServerMessage{std::move(*m)};
  }
  if (type == "task_start") {
    auto m = TaskStartFromJson(j);
    if (!m.ok()) return m.status().WithContext("task_start");
    return ServerMessage{std::move(*m)};
  }
  if (type == "task_signal") {
    auto m = TaskSignalFromJson(j);
    if (!m.ok()) return m.status().WithContext("task_signal");
    return ServerMessage{std::move(*m)};
  }
  if (type == "task_logs") {
    auto m = TaskLogsFromJson(j);
    if (!m.ok()) return m.status().WithContext("task_logs");
    return ServerMessage{std::move(*m)};
  }
  if (type == "power_limits") {
    auto m = PowerLimitsFromJson(j);
    if (!m.ok()) return m.status().WithContext("power_limits");
    return ServerMessage{std::move(*m)};
  }
  if (type == "task_resize") {
    auto m = TaskResizeFromJson(j);
    if (!m.ok()) return m.status().WithContext("task_resize");
    return ServerMessage{std::move(*m)};
  }
  return Status::InvalidArgument("unknown message type '" + type + "'");
}

bool IsVersionMismatch(const Status& st) {
  return st.message().find(kVersionPrefix) != std::string::npos;
}

}  // namespace rota::api
