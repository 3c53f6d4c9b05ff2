#include "server/leadership/stream_relay.h"

#include "api/codec.h"
#include "common/log.h"
#include "server/leadership/proxy.h"

namespace rota::server::leadership {

StreamRelay::StreamRelay(const Role* role, std::string auth_key, size_t max_streams, int idle_timeout_ms)
    : role_(role), auth_key_(std::move(auth_key)), pool_(max_streams, 10'000, idle_timeout_ms) {}

std::optional<net::HttpResponse> StreamRelay::Accept(const net::HttpRequest& req,
                                                     std::shared_ptr<net::EventSink> sink) {
  // A stream another follower relays here (during a failover two followers may each think
  // the other leads): never relayed on, so no two servers relay to each other in a loop.
  if (const std::string& by = req.Header("x-rota-forwarded-by"); !by.empty()) {
    return NotForwarded(*role_, "the stream was relayed here by " + by);
  }
  const std::string leader = role_->leader_address();
  if (leader.empty() || role_->is_leader()) return NotForwarded(*role_, "no leader to relay the stream from");
  std::vector<std::string> headers;
  for (std::string& h : ForwardedHeaders(req, role_->id(), auth_key_)) {
    if (h.rfind("accept:", 0) != 0) headers.push_back(std::move(h));  // the pool asks for the stream
  }
  std::weak_ptr<net::EventSink> weak = sink;
  auto opened = pool_.Open(
      leader + req.target, headers,
      [weak](const std::string& event, const std::string& data) {
        auto s = weak.lock();
        return s != nullptr && s->Send(event, data);
      },
      [weak] {
        auto s = weak.lock();
        return s != nullptr && s->is_open();
      },
      [weak, leader](net::EventStreamPool::Ending how, const Status& error) {
        auto s = weak.lock();
        if (s == nullptr) return;
        if (how != net::EventStreamPool::Ending::kStopped) {
          const Status why = how == net::EventStreamPool::Ending::kFailed
                                 ? error
                                 : Status::Unavailable("the leader " + leader + " ended the stream");
          // The leader's message may be cut inside a UTF-8 sequence: replaced, never thrown.
          s->Send("relay-error", api::Json{{"status", net::HttpResponse::FromStatus(why).status},
                                           {"message", why.message()}}
                                     .dump(-1, ' ', false, api::Json::error_handler_t::replace));
        }
        s->End();
      });
  if (!opened.ok()) {
    ROTA_LOG(WARNING) << "cannot relay an event stream to " << req.remote_addr << ": " << opened.status().message();
    return NotForwarded(*role_, "cannot relay the stream now (" + opened.status().message() + ")");
  }
  return std::nullopt;
}

}  // namespace rota::server::leadership
