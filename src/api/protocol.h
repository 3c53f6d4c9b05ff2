#pragma once
// The agent <-> server protocol: JSON text messages over one WebSocket that the
// agent dials (GET /api/v1/agent/connect, "Authorization: Bearer <join token>").
// Every message is an object {"v": kProtocolVersion, "type": ..., ...}. A peer
// refuses a message of another version or an unknown type with an "error"
// message; it never crashes on one.
//
// agent -> server
//   register  {"node": NodeInfo}                       first message, once
//   samples   {"seq": S, "samples": [NodeSample...]}    seq of the first sample;
//                                                       sample i has seq S+i
// server -> agent
//   registered {"node": name, "server_time_ms": T}
//   ack        {"seq": S}      every sample with seq <= S is committed to the store
//   error      {"message": M, "fatal": bool}   fatal: the server closes the connection

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "api/codec.h"
#include "api/types.h"

namespace rota::api {

struct RegisterMsg {
  NodeInfo node;
};
struct SamplesMsg {
  uint64_t seq = 0;
  std::vector<NodeSample> samples;
};
struct RegisteredMsg {
  std::string node;
  int64_t server_time_ms = 0;
};
struct AckMsg {
  uint64_t seq = 0;
};
struct ErrorMsg {
  std::string message;
  bool fatal = false;
};

using AgentMessage = std::variant<RegisterMsg, SamplesMsg>;
using ServerMessage = std::variant<RegisteredMsg, AckMsg, ErrorMsg>;

std::string Encode(const RegisterMsg& m);
std::string Encode(const SamplesMsg& m);
std::string Encode(const RegisteredMsg& m);
std::string Encode(const AckMsg& m);
std::string Encode(const ErrorMsg& m);

// Parse and validate a message. InvalidArgument with a reason a human can act on
// ("unsupported protocol version 7 (this server speaks 1)"); the fatal flag in
// the reason's code is the caller's choice.
Result<AgentMessage> DecodeAgentMessage(const std::string& text);
Result<ServerMessage> DecodeServerMessage(const std::string& text);

// True when `st` came from a version mismatch (the connection cannot continue).
bool IsVersionMismatch(const Status& st);

}  // namespace rota::api
