#pragma once
// TaskTransport: how the job service reaches the nodes that run its tasks —
// the agents' WebSocket sessions (AgentGateway) or OpenSSH for agentless nodes
// (SshNodes). TaskRouter picks one per node. Messages and reports are those of
// api/task_protocol.h on both paths, so the job service cannot tell them apart.

#include <functional>
#include <string>

#include "api/task_protocol.h"
#include "common/status.h"

namespace rota::server {

class SshNodes;

class TaskTransport {
 public:
  using TaskStatusListener = std::function<void(const std::string& node, api::TaskStatusMsg)>;
  using TaskLogListener = std::function<void(const std::string& node, api::TaskLogMsg)>;

  virtual ~TaskTransport() = default;

  // Called with every task_status / task_log from a node, on a transport
  // thread without transport locks held; must not block. Set before use.
  virtual void SetTaskListeners(TaskStatusListener status, TaskLogListener log) = 0;

  // Sends a task message to `node`. Unavailable when the node cannot be reached
  // now; InvalidArgument when the message is invalid. The outcome comes back as
  // reports through the listeners.
  virtual Status SendTask(const std::string& node, const api::TaskStartMsg& m) = 0;
  virtual Status SendTask(const std::string& node, const api::TaskSignalMsg& m) = 0;
  virtual Status SendTask(const std::string& node, const api::TaskLogsMsg& m) = 0;
  // A new CPU allotment for a malleable task. Its answer (task_resized) is
  // logged by the transport. Unimplemented where the node's transport cannot
  // resize tasks (OpenSSH nodes).
  virtual Status SendResize(const std::string& node, const api::TaskResizeMsg& m) {
    (void)m;
    return Status::Unimplemented("node " + node + " cannot resize tasks (no rota agent)");
  }
};

// Sends to the SSH transport for the nodes it declares, to the agents otherwise.
class TaskRouter : public TaskTransport {
 public:
  // Both borrowed; must outlive the router.
  TaskRouter(TaskTransport* agents, SshNodes* ssh);

  void SetTaskListeners(TaskStatusListener status, TaskLogListener log) override;
  Status SendTask(const std::string& node, const api::TaskStartMsg& m) override;
  Status SendTask(const std::string& node, const api::TaskSignalMsg& m) override;
  Status SendTask(const std::string& node, const api::TaskLogsMsg& m) override;
  Status SendResize(const std::string& node, const api::TaskResizeMsg& m) override;

 private:
  TaskTransport* For(const std::string& node) const;

  TaskTransport* const agents_;
  SshNodes* const ssh_;
};

}  // namespace rota::server
