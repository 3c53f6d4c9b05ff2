#include "server/nodes/agent_gateway.h"

#include <variant>
#include <vector>

#include "api/fast_decode.h"
#include "api/protocol.h"
#include "common/log.h"
#include "common/mutex.h"

namespace rota::server {
namespace {

// Compares in time independent of where the strings differ.
bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

class AgentGateway::Session : public net::WsHandler,
                              public std::enable_shared_from_this<AgentGateway::Session> {
 public:
  // `bound_node`: the node whose credential opened the session; "" for the join token.
  Session(AgentGateway* gw, uint64_t id, std::string remote, std::string bound_node)
      : gw_(gw), id_(id), remote_(std::move(remote)), bound_node_(std::move(bound_node)) {}

  void OnOpen(std::shared_ptr<net::WsConnection> conn) override {
    MutexLock lock(&mu_);
    conn_ = conn;
  }

  void OnMessage(const std::string& text) override {
    auto msg = api::DecodeAgentMessageFast(text);
    if (!msg.ok()) {
      gw_->stats_->messages_rejected++;
      bool fatal = api::IsVersionMismatch(msg.status());
      ROTA_LOG(WARNING) << "agent " << Who() << ": rejected message: " << msg.status().message();
      Reply(api::Encode(api::ErrorMsg{msg.status().message(), fatal}), fatal);
      return;
    }
    if (auto* reg = std::get_if<api::RegisterMsg>(&*msg)) {
      HandleRegister(reg->node, reg->enrol);
    } else if (auto* result = std::get_if<api::CommandResultMsg>(&*msg)) {
      gw_->CommandAnswered(Who(), id_, std::move(*result));
    } else if (auto* samples = std::get_if<api::SamplesMsg>(&*msg)) {
      HandleSamples(std::move(*samples));
    } else {
      const std::string node = Registered();
      if (node.empty()) {
        gw_->stats_->messages_rejected++;
        Reply(api::Encode(api::ErrorMsg{"send register before task messages", true}), true);
        return;
      }
      if (auto* st = std::get_if<api::TaskStatusMsg>(&*msg)) {
        if (gw_->task_status_listener_) gw_->task_status_listener_(node, std::move(*st));
      } else if (auto* log = std::get_if<api::TaskLogMsg>(&*msg)) {
        if (gw_->task_log_listener_) gw_->task_log_listener_(node, std::move(*log));
      } else if (auto* power = std::get_if<api::PowerReportMsg>(&*msg)) {
        if (gw_->power_report_listener_) gw_->power_report_listener_(node, std::move(*power));
      } else if (auto* metrics = std::get_if<api::TaskMetricsMsg>(&*msg)) {
        if (gw_->task_metrics_listener_) gw_->task_metrics_listener_(node, std::move(*metrics));
      } else if (auto* resized = std::get_if<api::TaskResizedMsg>(&*msg)) {
        if (!resized->error.empty()) {
          ROTA_LOG(WARNING) << "agent " << node << ": resize " << resized->generation << " of task "
                            << resized->id << " not applied: " << resized->error;
        }
      }
    }
  }

  void OnClose() override {
    std::string name;
    {
      MutexLock lock(&mu_);
      name = node_;
      conn_.reset();
    }
    if (!name.empty()) {
      gw_->cluster_->Disconnect(name, id_, gw_->clock_->NowMs());
      gw_->SessionClosed(name, id_);
      ROTA_LOG(INFO) << "agent " << name << " disconnected";
    }
  }

  // Closes the connection (the agent reconnects, and must present valid credentials).
  void Close(const std::string& reason) {
    std::shared_ptr<net::WsConnection> conn;
    {
      MutexLock lock(&mu_);
      conn = conn_;
    }
    if (conn) conn->Close(reason);
  }

  // Queues `text` on the connection; false when it is closed or closing.
  bool Send(std::string text) {
    std::shared_ptr<net::WsConnection> conn;
    {
      MutexLock lock(&mu_);
      conn = conn_;
    }
    return conn && conn->Send(std::move(text));
  }

 private:
  std::string Who() {
    MutexLock lock(&mu_);
    return node_.empty() ? remote_ : node_ + " (" + remote_ + ")";
  }

  void Reply(std::string text, bool close_after) {
    std::shared_ptr<net::WsConnection> conn;
    {
      MutexLock lock(&mu_);
      conn = conn_;
    }
    if (!conn) return;
    conn->Send(std::move(text));
    if (close_after) conn->Close("protocol error");
  }

  void HandleRegister(const api::NodeInfo& info, bool enrol) {
    if (!Registered().empty()) {
      gw_->stats_->messages_rejected++;
      Reply(api::Encode(api::ErrorMsg{"already registered as " + Registered(), false}), false);
      return;
    }
    // Who may register which name (node_credentials.h).
    std::string credential;
    if (!bound_node_.empty() && info.name != bound_node_) {
      return RefuseRegistration(info.name, "this connection's credential belongs to node " + bound_node_);
    }
    if (bound_node_.empty() && gw_->credentials_->Enrolled(info.name)) {
      return RefuseRegistration(info.name, "node " + info.name +
                                               " is enrolled: its agent connects with its own credential"
                                               " (`rota nodes revoke " + info.name +
                                               "` lets it enrol again with the join token)");
    }
    int64_t now = gw_->clock_->NowMs();
    Status st = gw_->store_->UpsertNode(info, now);
    if (st.ok()) st = gw_->cluster_->Connect(info, id_, now);
    if (!st.ok()) {
      ROTA_LOG(WARNING) << "agent " << remote_ << ": registration of " << info.name
                        << " refused: " << st.message();
      Reply(api::Encode(api::ErrorMsg{"registration refused: " + st.message(), true}), true);
      return;
    }
    // Enrolled only once the node is connected, so a credential is never issued to a
    // registration that is then refused (its agent would not have it).
    if (bound_node_.empty() && enrol) {
      auto issued = gw_->credentials_->Enrol(info.name, remote_);
      if (!issued.ok()) {
        gw_->cluster_->Disconnect(info.name, id_, now);
        return RefuseRegistration(info.name, issued.status().message());
      }
      credential = std::move(*issued);
      ROTA_LOG(INFO) << "node " << info.name << " (" << remote_ << ") enrolled: it has its own credential now";
    } else if (bound_node_.empty()) {
      ROTA_LOG(WARNING) << "node " << info.name << " (" << remote_
                        << ") registered with the shared join token and cannot enrol (an older agent): "
                           "upgrade it so it gets its own credential";
    }
    {
      MutexLock lock(&mu_);
      node_ = info.name;
    }
    gw_->SessionRegistered(info.name, id_, weak_from_this());
    ROTA_LOG(INFO) << "agent " << info.name << " (" << remote_ << ") registered with "
                   << info.gpus.size() << " GPUs"
                   << (info.gpu_status == "ok" ? "" : " (" + info.gpu_status + ")");
    api::RegisteredMsg registered{info.name, now, std::move(credential)};
    if (gw_->epoch_source_) registered.epoch = gw_->epoch_source_();
    Reply(api::Encode(registered), false);
  }

  void RefuseRegistration(const std::string& name, const std::string& why) {
    gw_->stats_->auth_failures++;
    ROTA_LOG(WARNING) << "agent " << remote_ << ": registration of " << name << " refused: " << why;
    Reply(api::Encode(api::ErrorMsg{"registration refused: " + why, true}), true);
  }

  void HandleSamples(api::SamplesMsg msg) {
    std::string name = Registered();
    if (name.empty()) {
      gw_->stats_->messages_rejected++;
      Reply(api::Encode(api::ErrorMsg{"send register before samples", true}), true);
      return;
    }
    if (msg.samples.empty()) return;
    int64_t now = gw_->clock_->NowMs();
    gw_->stats_->samples_received += msg.samples.size();
    // Decoded once and shared with the store's queue. The cluster state keeps
    // a copy of the newest sample: a pointer into the batch measured slower at
    // 10,000 agents (docs/benchmarks.md) and would keep a replayed batch alive.
    auto batch = std::make_shared<const std::vector<api::NodeSample>>(std::move(msg.samples));
    for (const auto& s : *batch) gw_->cluster_->RecordSample(name, id_, s, now);
    if (gw_->sample_sink_) gw_->sample_sink_(name, *batch);
    uint64_t last_seq = msg.seq + batch->size() - 1;
    size_t count = batch->size();
    std::weak_ptr<Session> weak = weak_from_this();
    IngestStats* stats = gw_->stats_;
    gw_->store_->Append(name, std::move(batch), [weak, stats, last_seq, count](Status st) {
      if (st.ok()) {
        stats->samples_committed += count;
      } else {
        stats->samples_rejected += count;
      }
      auto self = weak.lock();
      if (!self) return;
      if (st.ok()) {
        self->Reply(api::Encode(api::AckMsg{last_seq}), false);
      } else {
        ROTA_LOG(WARNING) << "samples from " << self->Who() << " not stored: " << st.message();
        self->Reply(api::Encode(api::ErrorMsg{"samples not stored: " + st.message(), false}), false);
      }
    });
  }

  std::string Registered() {
    MutexLock lock(&mu_);
    return node_;
  }

  AgentGateway* const gw_;
  const uint64_t id_;
  const std::string remote_;
  const std::string bound_node_;
  Mutex mu_;
  std::shared_ptr<net::WsConnection> conn_ ROTA_GUARDED_BY(mu_);
  std::string node_ ROTA_GUARDED_BY(mu_);  // "" until registered
};

AgentGateway::AgentGateway(store::Store* store, ClusterState* cluster, IngestStats* stats,
                           const Clock* clock, NodeCredentials* credentials, std::string join_token)
    : store_(store),
      cluster_(cluster),
      stats_(stats),
      clock_(clock),
      credentials_(credentials),
      join_token_(std::move(join_token)) {}

AgentGateway::~AgentGateway() {
  std::map<uint64_t, PendingCommand> pending;
  {
    MutexLock lock(&mu_);
    pending.swap(pending_);
  }
  for (auto& [id, p] : pending) {
    p.done(Status::Unavailable("server stopping before node " + p.node + " answered command " +
                               std::to_string(id)));
  }
}

uint64_t AgentGateway::SendCommand(const std::string& node, api::CommandMsg cmd, CommandCallback done) {
  cmd.id = next_command_++;
  const uint64_t id = cmd.id;
  if (Status st = api::ValidateCommand(cmd); !st.ok()) {
    done(st.WithContext("command for node " + node));
    return id;
  }
  if (send_guard_) {
    if (Status st = send_guard_(); !st.ok()) {
      done(st);
      return id;
    }
  }
  std::shared_ptr<Session> session;
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(node);
    if (it != sessions_.end()) session = it->second.session.lock();
    if (session) {
      pending_[id] = PendingCommand{node, it->second.id, clock_->MonotonicMs() + command_timeout_ms_.load(),
                                    std::move(done)};
    }
  }
  if (!session) {
    done(Status::Unavailable("node " + node + " is not connected"));
    return id;
  }
  ROTA_LOG(INFO) << "command " << id << " to " << node << ": " << api::CommandActionName(cmd.action)
                 << " uid " << cmd.uid << ", " << cmd.targets.size() << " target(s)";
  if (!session->Send(api::Encode(cmd))) {
    CommandCallback cb;
    {
      MutexLock lock(&mu_);
      auto it = pending_.find(id);
      if (it != pending_.end()) {
        cb = std::move(it->second.done);
        pending_.erase(it);
      }
    }
    // Else SessionClosed already answered it.
    if (cb) cb(Status::Unavailable("node " + node + " is not connected (connection closing)"));
  }
  return id;
}

Status AgentGateway::SendText(const std::string& node, std::string text) {
  if (send_guard_) RETURN_IF_ERROR(send_guard_());
  std::shared_ptr<Session> session;
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(node);
    if (it != sessions_.end()) session = it->second.session.lock();
  }
  if (!session || !session->Send(std::move(text))) {
    return Status::Unavailable("node " + node + " is not connected");
  }
  return Status::Ok();
}

Status AgentGateway::SendTask(const std::string& node, const api::TaskStartMsg& m) {
  RETURN_IF_ERROR(api::Validate(m.task).WithContext("task for node " + node));
  return SendText(node, api::Encode(m));
}

Status AgentGateway::SendTask(const std::string& node, const api::TaskSignalMsg& m) {
  RETURN_IF_ERROR(api::ValidateTaskId(m.id));
  if (m.signal != "TERM" && m.signal != "KILL") return Status::InvalidArgument("signal must be TERM or KILL");
  return SendText(node, api::Encode(m));
}

Status AgentGateway::SendResize(const std::string& node, const api::TaskResizeMsg& m) {
  RETURN_IF_ERROR(api::Validate(m).WithContext("task_resize for node " + node));
  return SendText(node, api::Encode(m));
}

Status AgentGateway::SendTask(const std::string& node, const api::TaskLogsMsg& m) {
  RETURN_IF_ERROR(api::ValidateTaskId(m.id));
  return SendText(node, api::Encode(m));
}

void AgentGateway::CheckCommandTimeouts() {
  const int64_t now = clock_->MonotonicMs();
  std::vector<std::pair<uint64_t, PendingCommand>> expired;
  {
    MutexLock lock(&mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.deadline_ms <= now) {
        expired.emplace_back(it->first, std::move(it->second));
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& [id, p] : expired) {
    ROTA_LOG(WARNING) << "node " << p.node << " did not answer command " << id << " in time";
    p.done(Status::DeadlineExceeded("node " + p.node + " did not answer command " + std::to_string(id) +
                                    " in time"));
  }
}

Status AgentGateway::SendPowerLimits(const std::string& node, const api::PowerLimitsMsg& m) {
  return SendText(node, api::Encode(m));
}

uint64_t AgentGateway::SessionOf(const std::string& node) const {
  MutexLock lock(&mu_);
  auto it = sessions_.find(node);
  return it == sessions_.end() ? 0 : it->second.id;
}

size_t AgentGateway::pending_commands() const {
  MutexLock lock(&mu_);
  return pending_.size();
}

void AgentGateway::SessionRegistered(const std::string& node, uint64_t session, std::weak_ptr<Session> s) {
  MutexLock lock(&mu_);
  sessions_[node] = LiveSession{session, std::move(s)};
}

void AgentGateway::SessionClosed(const std::string& node, uint64_t session) {
  std::vector<std::pair<uint64_t, PendingCommand>> orphaned;
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(node);
    if (it != sessions_.end() && it->second.id == session) sessions_.erase(it);
    for (auto p = pending_.begin(); p != pending_.end();) {
      if (p->second.session == session) {
        orphaned.emplace_back(p->first, std::move(p->second));
        p = pending_.erase(p);
      } else {
        ++p;
      }
    }
  }
  for (auto& [id, p] : orphaned) {
    p.done(Status::Unavailable("node " + node + " disconnected before answering command " + std::to_string(id)));
  }
}

void AgentGateway::CommandAnswered(const std::string& who, uint64_t session, api::CommandResultMsg result) {
  CommandCallback cb;
  std::string node;
  {
    MutexLock lock(&mu_);
    auto it = pending_.find(result.id);
    if (it != pending_.end() && it->second.session == session) {
      cb = std::move(it->second.done);
      node = it->second.node;
      pending_.erase(it);
    }
  }
  if (!cb) {
    ROTA_LOG(WARNING) << "agent " << who << ": ignored result of unknown or expired command " << result.id;
    return;
  }
  if (!result.error.empty()) {
    cb(Status::InvalidArgument("node " + node + " refused command " + std::to_string(result.id) + ": " +
                               result.error));
    return;
  }
  cb(std::move(result));
}

net::WsAcceptor AgentGateway::Acceptor() {
  return [this](const net::HttpRequest& req) -> std::variant<net::HttpResponse, std::shared_ptr<net::WsHandler>> {
    auto it = req.headers.find("authorization");
    const std::string prefix = "Bearer ";
    const std::string presented = it == req.headers.end() || it->second.rfind(prefix, 0) != 0
                                      ? std::string()
                                      : it->second.substr(prefix.size());
    std::string bound_node;
    if (NodeCredentials::LooksLikeCredential(presented)) {
      auto node = credentials_->NodeFor(presented);
      if (!node) {
        stats_->auth_failures++;
        ROTA_LOG(WARNING) << "agent connection from " << req.remote_addr
                          << " refused: unknown or revoked node credential";
        return net::HttpResponse::FromStatus(Status::Unauthenticated(
            "unknown or revoked node credential: enrol the node again with the join token"));
      }
      bound_node = std::move(*node);
    } else if (presented.empty() || !ConstantTimeEquals(presented, join_token_)) {
      stats_->auth_failures++;
      ROTA_LOG(WARNING) << "agent connection from " << req.remote_addr
                        << " refused: missing or wrong join token";
      return net::HttpResponse::FromStatus(Status::Unauthenticated("missing or wrong join token"));
    }
    stats_->agent_connections_total++;
    return std::shared_ptr<net::WsHandler>(
        std::make_shared<Session>(this, next_session_++, req.remote_addr, std::move(bound_node)));
  };
}

void AgentGateway::Disconnect(const std::string& node, const std::string& reason) {
  std::shared_ptr<Session> session;
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(node);
    if (it != sessions_.end()) session = it->second.session.lock();
  }
  if (session) session->Close(reason);
}

}  // namespace rota::server
