#include "server/nodes/task_transport.h"

#include <utility>

#include "server/nodes/ssh_nodes.h"

namespace rota::server {

TaskRouter::TaskRouter(TaskTransport* agents, SshNodes* ssh) : agents_(agents), ssh_(ssh) {}

TaskTransport* TaskRouter::For(const std::string& node) const {
  return ssh_ != nullptr && ssh_->Has(node) ? static_cast<TaskTransport*>(ssh_) : agents_;
}

void TaskRouter::SetTaskListeners(TaskStatusListener status, TaskLogListener log) {
  agents_->SetTaskListeners(status, log);
  if (ssh_ != nullptr) ssh_->SetTaskListeners(std::move(status), std::move(log));
}

Status TaskRouter::SendTask(const std::string& node, const api::TaskStartMsg& m) {
  return For(node)->SendTask(node, m);
}
Status TaskRouter::SendTask(const std::string& node, const api::TaskSignalMsg& m) {
  return For(node)->SendTask(node, m);
}
Status TaskRouter::SendTask(const std::string& node, const api::TaskLogsMsg& m) {
  return For(node)->SendTask(node, m);
}
Status TaskRouter::SendResize(const std::string& node, const api::TaskResizeMsg& m) {
  return For(node)->SendResize(node, m);
}

}  // namespace rota::server
