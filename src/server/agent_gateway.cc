#include "server/agent_gateway.h"

#include <mutex>
#include <variant>

#include "api/protocol.h"
#include "common/log.h"

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
  Session(AgentGateway* gw, uint64_t id, std::string remote)
      : gw_(gw), id_(id), remote_(std::move(remote)) {}

  void OnOpen(std::shared_ptr<net::WsConnection> conn) override {
    std::lock_guard<std::mutex> lock(mu_);
    conn_ = conn;
  }

  void OnMessage(const std::string& text) override {
    auto msg = api::DecodeAgentMessage(text);
    if (!msg.ok()) {
      gw_->stats_->messages_rejected++;
      bool fatal = api::IsVersionMismatch(msg.status());
      ROTA_LOG(WARNING) << "agent " << Who() << ": rejected message: " << msg.status().message();
      Reply(api::Encode(api::ErrorMsg{msg.status().message(), fatal}), fatal);
      return;
    }
    if (auto* reg = std::get_if<api::RegisterMsg>(&*msg)) {
      HandleRegister(reg->node);
    } else {
      HandleSamples(std::get<api::SamplesMsg>(std::move(*msg)));
    }
  }

  void OnClose() override {
    std::string name;
    {
      std::lock_guard<std::mutex> lock(mu_);
      name = node_;
      conn_.reset();
    }
    if (!name.empty()) {
      gw_->cluster_->Disconnect(name, id_, gw_->clock_->NowMs());
      ROTA_LOG(INFO) << "agent " << name << " disconnected";
    }
  }

 private:
  std::string Who() {
    std::lock_guard<std::mutex> lock(mu_);
    return node_.empty() ? remote_ : node_ + " (" + remote_ + ")";
  }

  void Reply(std::string text, bool close_after) {
    std::shared_ptr<net::WsConnection> conn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      conn = conn_;
    }
    if (!conn) return;
    conn->Send(std::move(text));
    if (close_after) conn->Close("protocol error");
  }

  void HandleRegister(const api::NodeInfo& info) {
    if (!Registered().empty()) {
      gw_->stats_->messages_rejected++;
      Reply(api::Encode(api::ErrorMsg{"already registered as " + Registered(), false}), false);
      return;
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
    {
      std::lock_guard<std::mutex> lock(mu_);
      node_ = info.name;
    }
    ROTA_LOG(INFO) << "agent " << info.name << " (" << remote_ << ") registered with "
                   << info.gpus.size() << " GPUs"
                   << (info.gpu_status == "ok" ? "" : " (" + info.gpu_status + ")");
    Reply(api::Encode(api::RegisteredMsg{info.name, now}), false);
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
    for (const auto& s : msg.samples) gw_->cluster_->RecordSample(name, id_, s, now);
    uint64_t last_seq = msg.seq + msg.samples.size() - 1;
    size_t count = msg.samples.size();
    std::weak_ptr<Session> weak = weak_from_this();
    IngestStats* stats = gw_->stats_;
    gw_->store_->Append(name, std::move(msg.samples), [weak, stats, last_seq, count](Status st) {
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
    std::lock_guard<std::mutex> lock(mu_);
    return node_;
  }

  AgentGateway* const gw_;
  const uint64_t id_;
  const std::string remote_;
  std::mutex mu_;
  std::shared_ptr<net::WsConnection> conn_;  // GUARDED_BY(mu_)
  std::string node_;                         // GUARDED_BY(mu_); "" until registered
};

AgentGateway::AgentGateway(store::Store* store, ClusterState* cluster, IngestStats* stats,
                           const Clock* clock, std::string join_token)
    : store_(store), cluster_(cluster), stats_(stats), clock_(clock), join_token_(std::move(join_token)) {}

net::WsAcceptor AgentGateway::Acceptor() {
  return [this](const net::HttpRequest& req) -> std::variant<net::HttpResponse, std::shared_ptr<net::WsHandler>> {
    auto it = req.headers.find("authorization");
    const std::string prefix = "Bearer ";
    if (it == req.headers.end() || it->second.rfind(prefix, 0) != 0 ||
        !ConstantTimeEquals(it->second.substr(prefix.size()), join_token_)) {
      stats_->auth_failures++;
      ROTA_LOG(WARNING) << "agent connection from " << req.remote_addr
                        << " refused: missing or wrong join token";
      return net::HttpResponse::Error(401, "missing or wrong join token");
    }
    stats_->agent_connections_total++;
    return std::shared_ptr<net::WsHandler>(
        std::make_shared<Session>(this, next_session_++, req.remote_addr));
  };
}

}  // namespace rota::server
