#include "api/protocol.h"

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

}  // namespace

std::string Encode(const RegisterMsg& m) {
  Json j = Envelope("register");
  j["node"] = ToJson(m.node);
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
