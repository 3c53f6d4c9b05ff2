#pragma once
// AgentGateway: the server end of the agent protocol (api/protocol.h). One
// AgentSession per WebSocket connection: it checks the first message is a valid
// register, records the node in the store and ClusterState, hands samples to the
// store and acks them only once committed. It also sends commands (warn, signal)
// to a node's agent and matches the command_result answers to their callers.
//
// Thread-safe: sessions are driven by the network threads; store callbacks
// arrive on the store's writer thread; SendCommand and CheckCommandTimeouts may be
// called from any thread.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "api/protocol.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "net/http_server.h"
#include "server/nodes/cluster_state.h"
#include "server/nodes/node_credentials.h"
#include "server/ingest_stats.h"
#include "server/store/store.h"
#include "server/nodes/task_transport.h"

namespace rota::server {

class AgentGateway : public TaskTransport {
 public:
  // All pointers are borrowed and must outlive the gateway.
  AgentGateway(store::Store* store, ClusterState* cluster, IngestStats* stats, const Clock* clock,
               NodeCredentials* credentials, std::string join_token);
  // Commands still pending get done(Unavailable).
  ~AgentGateway();

  // The acceptor for the agent WebSocket route. A node credential opens a session
  // bound to its node: it may register only that name. The join token opens an
  // enrolling session: it may register only a name that has no credential, and an
  // agent that asks to enrol gets one with `registered`. Anything else: 401.
  net::WsAcceptor Acceptor();

  // Closes the live session of `node`, if any (after its credential was revoked).
  void Disconnect(const std::string& node, const std::string& reason);

  using CommandCallback = std::function<void(Result<api::CommandResultMsg>)>;
  static constexpr int64_t kDefaultCommandTimeoutMs = 10'000;

  // Sends `cmd` (its id is assigned here) to the live session of `node` and calls
  // `done` exactly once with:
  //  - the agent's command_result (per-target outcomes; see api::CommandResultMsg);
  //  - InvalidArgument when `cmd` is invalid (api::ValidateCommand), or when the agent
  //    refused it (the result's `error`);
  //  - Unavailable "node X is not connected" when it has no live session, or when the
  //    session closes before the answer;
  //  - DeadlineExceeded when no answer came within the command timeout (checked by
  //    CheckCommandTimeouts; a late answer is then logged and ignored).
  // `done` runs without gateway locks held, on the calling thread (immediate errors),
  // a network thread (answers, closes) or the CheckCommandTimeouts caller; it must
  // not block. Returns the id given to the command.
  uint64_t SendCommand(const std::string& node, api::CommandMsg cmd, CommandCallback done);

  // Fails commands whose timeout passed (clock->MonotonicMs()). The server's
  // background loop calls it every 250 ms.
  void CheckCommandTimeouts();

  // ---- Job tasks (api/task_protocol.h) ----
  // Called (on a network thread, without gateway locks; must not block) with every
  // task_status / task_log a registered agent sends. Set before agents connect.
  void SetTaskListeners(TaskStatusListener status, TaskLogListener log) override {
    task_status_listener_ = std::move(status);
    task_log_listener_ = std::move(log);
  }
  // Sends a task message to the live session of `node`. Unavailable when the
  // node is not connected; InvalidArgument when the message is invalid.
  Status SendTask(const std::string& node, const api::TaskStartMsg& m) override;
  Status SendTask(const std::string& node, const api::TaskSignalMsg& m) override;
  Status SendTask(const std::string& node, const api::TaskLogsMsg& m) override;
  Status SendResize(const std::string& node, const api::TaskResizeMsg& m) override;

  // Called (on a network thread, without gateway locks; must not block for
  // long) with every batch of samples a registered agent sends, before they are
  // stored. Set before agents connect.
  using SampleSink = std::function<void(const std::string& node, const std::vector<api::NodeSample>&)>;
  void SetSampleSink(SampleSink sink) { sample_sink_ = std::move(sink); }

  // Asked before anything is sent to an agent (commands, tasks, power limits); a failure
  // is returned (or given to the command's callback) and nothing is sent. Several servers
  // on one store: only the leader whose lease holds sends (server/leadership/role.h).
  // Set before agents connect; must be cheap and thread-safe.
  void SetSendGuard(std::function<Status()> guard) { send_guard_ = std::move(guard); }
  // The leader epoch each `registered` carries (api::RegisteredMsg::epoch), so that agents
  // refuse a leader older than one they have seen. Unset: 0 (one server). Set before agents
  // connect; must be cheap and thread-safe.
  void SetEpochSource(std::function<uint64_t()> epoch) { epoch_source_ = std::move(epoch); }

  // ---- Power limits (api/power_protocol.h) ----
  // Called (on a network thread, without gateway locks; must not block for long)
  // with every power_report a registered agent sends. Set before agents connect.
  using PowerReportListener = std::function<void(const std::string& node, api::PowerReportMsg)>;
  void SetPowerReportListener(PowerReportListener l) { power_report_listener_ = std::move(l); }
  // Called (as the task listeners) with every task_metrics a registered agent sends.
  using TaskMetricsListener = std::function<void(const std::string& node, api::TaskMetricsMsg)>;
  void SetTaskMetricsListener(TaskMetricsListener l) { task_metrics_listener_ = std::move(l); }
  // Sends the node's power limits to its live session. Unavailable when the node
  // is not connected.
  Status SendPowerLimits(const std::string& node, const api::PowerLimitsMsg& m);
  // The id of the node's live session; 0 when it has none. A new id means the
  // agent registered again (and holds none of what the server sent before).
  uint64_t SessionOf(const std::string& node) const;

  // Applies to commands sent afterwards. REQUIRES: ms > 0.
  void set_command_timeout_ms(int64_t ms) { command_timeout_ms_ = ms; }
  // Commands sent and not yet answered (for tests and metrics).
  size_t pending_commands() const;

 private:
  class Session;
  struct PendingCommand {
    std::string node;
    uint64_t session = 0;
    int64_t deadline_ms = 0;  // monotonic
    CommandCallback done;
  };
  // Session registry, called by sessions.
  void SessionRegistered(const std::string& node, uint64_t session, std::weak_ptr<Session> s);
  void SessionClosed(const std::string& node, uint64_t session);
  void CommandAnswered(const std::string& node, uint64_t session, api::CommandResultMsg result);
  Status SendText(const std::string& node, std::string text);

  store::Store* const store_;
  ClusterState* const cluster_;
  IngestStats* const stats_;
  const Clock* const clock_;
  NodeCredentials* const credentials_;
  const std::string join_token_;
  std::atomic<uint64_t> next_session_{1};
  std::atomic<uint64_t> next_command_{1};
  std::atomic<int64_t> command_timeout_ms_{kDefaultCommandTimeoutMs};
  TaskStatusListener task_status_listener_;  // set before serving
  TaskLogListener task_log_listener_;        // set before serving
  SampleSink sample_sink_;                   // set before serving
  std::function<Status()> send_guard_;       // set before serving
  std::function<uint64_t()> epoch_source_;   // set before serving
  PowerReportListener power_report_listener_;  // set before serving
  TaskMetricsListener task_metrics_listener_;  // set before serving

  struct LiveSession {
    uint64_t id = 0;
    std::weak_ptr<Session> session;
  };
  mutable Mutex mu_;
  std::map<std::string, LiveSession> sessions_ ROTA_GUARDED_BY(mu_);  // node -> its registered session
  std::map<uint64_t, PendingCommand> pending_ ROTA_GUARDED_BY(mu_);  // command id -> caller
};

}  // namespace rota::server
