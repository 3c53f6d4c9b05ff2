#pragma once
// The agent <-> server protocol: JSON text messages over one WebSocket that the
// agent dials (GET /api/v1/agent/connect, "Authorization: Bearer <its node credential>",
// or the cluster's join token to enrol; see server/nodes/node_credentials.h).
// Every message is an object {"v": kProtocolVersion, "type": ..., ...}. A peer
// refuses a message of another version or an unknown type with an "error"
// message; it never crashes on one.
//
// agent -> server
//   register  {"node": NodeInfo, "enrol": bool}        first message, once
//   samples   {"seq": S, "samples": [NodeSample...]}    seq of the first sample;
//                                                       sample i has seq S+i
//   command_result {"id": N, "outcomes": [...], "terminals": [...], "error": E}
//                                                       answer to command N
// server -> agent
//   registered {"node": name, "server_time_ms": T, "credential"?: C, "epoch"?: E}
//              C: the node's own credential, sent once when this registration
//              enrolled it (a session opened with the join token); E: the leader
//              epoch of the server (several servers on one store; absent or 0: one)
//   ack        {"seq": S}      every sample with seq <= S is committed to the store
//   error      {"message": M, "fatal": bool}   fatal: the server closes the connection
//   command    {"id": N, "action": "warn"|"signal", "uid", "user", "message",
//               "signal": "TERM"|"KILL", "targets": [{"pid", "start_time_ms", "gpu"}]}
//              the agent answers every command it can identify with command_result
// and the job task messages of task_protocol.h (task_start, task_signal, task_logs,
// task_resize; task_status, task_log, task_resized, task_metrics) and the power messages of power_protocol.h (power_limits;
// power_report).

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "api/codec.h"
#include "api/power_protocol.h"
#include "api/task_protocol.h"
#include "api/types.h"

namespace rota::api {

struct RegisterMsg {
  NodeInfo node;
  // The agent keeps a node credential (node_credentials.h on the server): a session
  // opened with the join token is then enrolled, and `registered` carries the
  // credential. False from agents older than credentials ("enrol" absent).
  bool enrol = false;
};
struct SamplesMsg {
  uint64_t seq = 0;
  std::vector<NodeSample> samples;
};
struct RegisteredMsg {
  std::string node;
  int64_t server_time_ms = 0;
  // Set once, when this registration enrolled the node: the agent presents it
  // ("Authorization: Bearer <credential>") instead of the join token from now on.
  std::string credential;
  // The leader lease's epoch of the server that registered the node (docs/design-ha.md),
  // 0 for a server alone on its store. An agent refuses a leader older than one it has
  // registered with (agent/leader_epoch.h).
  uint64_t epoch = 0;
};
struct AckMsg {
  uint64_t seq = 0;
};
struct ErrorMsg {
  std::string message;
  bool fatal = false;
};

// ---- Commands (server -> agent), used by reservation enforcement ----

// How a follower of several servers (docs/design-ha.md) begins its 503 to an agent (and to
// anything it does not forward): an agent that sees it knows the cluster is up and a
// leader is, or is about to be, elsewhere (agent/reconnect.h).
inline constexpr const char* kFollowerRefusal = "this server is a follower";

inline constexpr size_t kMaxCommandTargets = 1024;
inline constexpr size_t kMaxCommandMessageBytes = 4096;
inline constexpr size_t kMaxCommandTerminals = 1024;
inline constexpr size_t kMaxTerminalPathBytes = 256;

enum class CommandAction {
  kWarn,    // write `message` to the terminals of the user and of the targets
  kSignal,  // send `signal` to each target pid (never to a process group)
};
enum class CommandSignal { kTerm, kKill };

// What happened to one target of a command.
enum class TargetOutcome {
  kSignalled,  // the signal was delivered
  kGone,       // no such process (or a zombie): nothing to do
  kMismatch,   // the pid now belongs to another process (start time) or another uid
  kDenied,     // the agent may not signal it (EPERM, pid 1, the agent itself)
  kError,      // anything else (see detail)
};

// Wire names: "warn"/"signal", "TERM"/"KILL", "signalled"/"gone"/...
const char* CommandActionName(CommandAction a);
const char* CommandSignalName(CommandSignal s);
const char* TargetOutcomeName(TargetOutcome o);

// One process a command is about, as the server saw it in a sample (api::GpuProcess).
struct CommandTarget {
  uint32_t pid = 0;           // 1..2^30; never 0 or negative (no process groups)
  int64_t start_time_ms = 0;  // GpuProcess::start_time_ms; guards against pid reuse
  uint32_t gpu = 0;           // GPU index it was seen on (for messages and logs)
};

struct CommandMsg {
  uint64_t id = 0;  // assigned by the sender; echoed in the result
  CommandAction action = CommandAction::kWarn;
  uint32_t uid = 0;      // every target must belong to this real uid
  std::string user;      // user name of uid (warn: its utmp sessions get the message)
  std::string message;   // warn: required, <= kMaxCommandMessageBytes; else ignored
  CommandSignal signal = CommandSignal::kTerm;  // signal only
  std::vector<CommandTarget> targets;           // 1..kMaxCommandTargets
};

struct TargetResult {
  uint32_t pid = 0;
  TargetOutcome outcome = TargetOutcome::kError;
  std::string detail;  // human-readable, e.g. "pid 42 belongs to uid 0, not 1001"
};

struct CommandResultMsg {
  uint64_t id = 0;
  // signal: one entry per target, in target order. warn: only the targets that could
  // not be looked at (gone, mismatch, error); the others need no answer.
  std::vector<TargetResult> outcomes;
  std::vector<std::string> terminals;  // warn: device paths the message was written to
  // Set when the agent could not run the command at all (malformed, unknown action);
  // outcomes and terminals are then empty.
  std::string error;
};

// Checks the fields of a command the way the decoder does (targets 1..1024, message
// size, warn needs a message, ...). InvalidArgument naming the field.
Status ValidateCommand(const CommandMsg& m);

using AgentMessage = std::variant<RegisterMsg, SamplesMsg, CommandResultMsg, TaskStatusMsg,
                                  TaskLogMsg, PowerReportMsg, TaskResizedMsg, TaskMetricsMsg>;
using ServerMessage = std::variant<RegisteredMsg, AckMsg, ErrorMsg, CommandMsg, TaskStartMsg,
                                   TaskSignalMsg, TaskLogsMsg, PowerLimitsMsg, TaskResizeMsg>;

std::string Encode(const RegisterMsg& m);
std::string Encode(const SamplesMsg& m);
std::string Encode(const RegisteredMsg& m);
std::string Encode(const AckMsg& m);
std::string Encode(const ErrorMsg& m);
std::string Encode(const CommandMsg& m);
std::string Encode(const CommandResultMsg& m);
std::string Encode(const TaskStartMsg& m);
std::string Encode(const TaskSignalMsg& m);
std::string Encode(const TaskLogsMsg& m);
std::string Encode(const TaskStatusMsg& m);
std::string Encode(const TaskLogMsg& m);
std::string Encode(const TaskResizeMsg& m);
std::string Encode(const TaskResizedMsg& m);
std::string Encode(const TaskMetricsMsg& m);
std::string Encode(const PowerLimitsMsg& m);
std::string Encode(const PowerReportMsg& m);

// Parse and validate a message. InvalidArgument with a reason a human can act on
// ("unsupported protocol version 7 (this server speaks 1)"); the fatal flag in
// the reason's code is the caller's choice.
Result<AgentMessage> DecodeAgentMessage(const std::string& text);
Result<ServerMessage> DecodeServerMessage(const std::string& text);

// True when `st` came from a version mismatch (the connection cannot continue).
bool IsVersionMismatch(const Status& st);

// The "id" of a version-1 "command" message, even when the rest of it is invalid (so
// the agent can answer a command it refuses); nullopt when there is none to answer.
std::optional<uint64_t> CommandIdOf(const std::string& text);

}  // namespace rota::api
