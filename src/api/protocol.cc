#include "api/protocol.h"

#include "api/json_writer.h"

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

}  // namespace

std::string Encode(const RegisterMsg& m) {
  Json j = Envelope("register");
  j["node"] = ToJson(m.node);
  return j.dump();
}

namespace {

template <typename T>
void OptInt(JsonWriter& w, std::string_view key, const std::optional<T>& v) {
  if (!v.has_value()) return;
  w.Key(key);
  w.Int(*v);
}

void Write(JsonWriter& w, const GpuProcess& p) {
  w.BeginObject();
  w.Key("pid");
  w.Int(p.pid);
  w.Key("type");
  w.String(p.type);
  OptInt(w, "gpu_memory_bytes", p.gpu_memory_bytes);
  OptInt(w, "uid", p.uid);
  if (!p.user.empty()) w.Key("user"), w.String(p.user);
  if (!p.command.empty()) w.Key("command"), w.String(p.command);
  OptInt(w, "start_time_ms", p.start_time_ms);
  if (p.cpu_percent.has_value()) w.Key("cpu_percent"), w.Double(*p.cpu_percent);
  OptInt(w, "rss_bytes", p.rss_bytes);
  if (!p.cgroup.empty()) w.Key("cgroup"), w.String(p.cgroup);
  w.EndObject();
}

void Write(JsonWriter& w, const GpuSample& g) {
  w.BeginObject();
  w.Key("index");
  w.Int(g.index);
  w.Key("uuid");
  w.String(g.uuid);
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
  for (const auto& p : g.processes) Write(w, p);
  w.EndArray();
  w.EndObject();
}

void Write(JsonWriter& w, const NodeSample& s) {
  w.BeginObject();
  w.Key("time_ms");
  w.Int(s.time_ms);
  w.Key("host");
  w.BeginObject();
  w.Key("cpu_percent");
  w.Double(s.host.cpu_percent);
  w.Key("per_core_percent");
  w.BeginArray();
  for (double c : s.host.per_core_percent) w.Double(c);
  w.EndArray();
  w.Key("mem_total_bytes");
  w.Int(s.host.mem_total_bytes);
  w.Key("mem_available_bytes");
  w.Int(s.host.mem_available_bytes);
  w.Key("load1");
  w.Double(s.host.load1);
  w.Key("load5");
  w.Double(s.host.load5);
  w.Key("load15");
  w.Double(s.host.load15);
  w.EndObject();
  w.Key("gpus");
  w.BeginArray();
  for (const auto& g : s.gpus) Write(w, g);
  w.EndArray();
  w.EndObject();
}

}  // namespace

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
  for (const auto& s : m.samples) Write(w, s);
  w.EndArray();
  w.EndObject();
  return out;
}

std::string Encode(const RegisteredMsg& m) {
  Json j = Envelope("registered");
  j["node"] = m.node;
  j["server_time_ms"] = m.server_time_ms;
  return j.dump();
}

std::string Encode(const AckMsg& m) {
  Json j = Envelope("ack");
  j["seq"] = m.seq;
  return j.dump();
}

std::string Encode(const ErrorMsg& m) {
  Json j = Envelope("error");
  j["message"] = m.message;
  j["fatal"] = m.fatal;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<AgentMessage> DecodeAgentMessage(const std::string& text) {
  ASSIGN_OR_RETURN(Json j, ParseJson(text));
  ASSIGN_OR_RETURN(std::string type, OpenEnvelope(j));
  if (type == "register") {
    if (!j.contains("node")) return Status::InvalidArgument("register: node is required");
    auto node = NodeInfoFromJson(j["node"]);
    if (!node.ok()) return node.status().WithContext("register: node");
    return AgentMessage{RegisterMsg{std::move(*node)}};
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
  return Status::InvalidArgument("unknown message type '" + type + "'");
}

bool IsVersionMismatch(const Status& st) {
  return st.message().find(kVersionPrefix) != std::string::npos;
}

}  // namespace rota::api
