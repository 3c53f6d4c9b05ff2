#include "server/leadership/proxy.h"

#include <set>

#include "api/protocol.h"
#include "common/log.h"
#include "net/http_client.h"
#include "server/leadership/forwarded_client.h"

namespace rota::server::leadership {
namespace {

constexpr const char* kForwardedBy = "x-rota-forwarded-by";

// Not forwarded either way (RFC 9110 7.6.1, and what the client library sets itself).
const std::set<std::string>& HopByHop() {
  static const std::set<std::string> names = {
      "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
      "upgrade", "host", "content-length", "expect", "accept-encoding", kForwardedBy};
  return names;
}

}  // namespace

net::HttpResponse NotForwarded(const Role& role, const std::string& why) {
  const std::string leader = role.leader_address();
  net::HttpResponse r = net::HttpResponse::FromStatus(Status::Unavailable(
      std::string(api::kFollowerRefusal) + ": " + why +
      (leader.empty() ? "; no leader is known yet, try again" : "; the leader is " + leader)));
  r.headers.emplace_back("Retry-After", "1");
  if (!leader.empty()) r.headers.emplace_back("X-Rota-Leader", leader);
  return r;
}

std::vector<std::string> ForwardedHeaders(const net::HttpRequest& req, const std::string& by,
                                          const std::string& auth_key) {
  std::vector<std::string> out;
  for (const auto& [name, value] : req.headers) {
    if (HopByHop().count(name) != 0 || name == "x-forwarded-for" || name == "x-rota-client" ||
        name == "x-rota-client-sig") {
      continue;
    }
    out.push_back(name + ": " + value);
  }
  std::string client = req.remote_addr;
  const size_t colon = client.rfind(':');
  if (colon != std::string::npos) client.resize(colon);
  const std::string& earlier = req.Header("x-forwarded-for");
  out.push_back("X-Forwarded-For: " + (earlier.empty() ? client : earlier + ", " + client));
  out.push_back(std::string("X-Rota-Forwarded-By: ") + by);
  for (std::string& h : SignedClientHeaders(auth_key, req, client)) out.push_back(std::move(h));
  return out;
}

LeaderProxy::LeaderProxy(const Role* role, std::string auth_key, int threads, size_t max_queued, int timeout_ms)
    : role_(role), auth_key_(std::move(auth_key)), timeout_ms_(timeout_ms), pool_("leader proxy", threads, max_queued) {}

void LeaderProxy::Forward(const net::HttpRequest& req, net::Responder respond) {
  if (!req.Header("upgrade").empty()) {
    return respond(NotForwarded(*role_, "agents and WebSockets connect to the leader"));
  }
  if (req.Header("accept").find("text/event-stream") != std::string::npos) {
    return respond(NotForwarded(*role_, "event streams are served by the leader"));
  }
  if (!req.Header(kForwardedBy).empty()) {
    return respond(NotForwarded(*role_, "the request was forwarded here by " + req.Header(kForwardedBy)));
  }
  const std::string leader = role_->leader_address();
  if (leader.empty() || role_->is_leader()) return respond(NotForwarded(*role_, "not forwarded"));
  const std::string url = leader + req.target;
  std::vector<std::string> headers = ForwardedHeaders(req, role_->id(), auth_key_);
  const int timeout = timeout_ms_;
  Status queued = pool_.Submit([url, method = req.method, body = req.body, headers = std::move(headers),
                                timeout, respond] {
    auto got = net::HttpCall(method, url, body, headers, timeout);
    if (!got.ok()) {
      net::HttpResponse r = net::HttpResponse::FromStatus(
          Status::Unavailable("this server is a follower and cannot reach the leader: " + got.status().message()));
      r.headers.emplace_back("Retry-After", "1");
      return respond(std::move(r));
    }
    net::HttpResponse r;
    r.status = got->status;
    r.body = std::move(got->body);
    auto ct = got->headers.find("content-type");
    if (ct != got->headers.end()) r.content_type = ct->second;
    for (const auto& [name, value] : got->headers) {
      if (HopByHop().count(name) != 0 || name == "content-type" || name == "date" ||
          name == "server") {
        continue;
      }
      r.headers.emplace_back(name, value);
    }
    respond(std::move(r));
  });
  if (!queued.ok()) {
    net::HttpResponse r = net::HttpResponse::FromStatus(queued);
    r.headers.emplace_back("Retry-After", "1");
    respond(std::move(r));
  }
}

}  // namespace rota::server::leadership
