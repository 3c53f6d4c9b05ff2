#pragma once
// LeaderProxy: how a follower answers the API (docs/design-ha.md). Each request is
// forwarded to the leader whose address the lease row names, with the caller's headers
// (Authorization, Cookie, ...) and body, and the leader's answer (status, body, its
// headers: Set-Cookie, Location, Retry-After, ...) goes back unchanged. The forwarding
// HTTP call is blocking (libcurl), so it runs on a worker pool and answers through the
// request's Responder: no network thread waits on the leader.
//
// Not forwarded, answered 503 with the leader's URL in X-Rota-Leader (clients and agents
// with several --server URLs try the next): WebSocket upgrades (agents connect to the
// leader itself), event streams (stream_relay.h relays /api/v1/stream), requests already
// forwarded once, and everything while no leader is known. Thread-safe.

#include <cstddef>
#include <string>

#include "common/worker_pool.h"
#include "net/http_types.h"
#include "server/leadership/role.h"

namespace rota::server::leadership {

class LeaderProxy {
 public:
  // `role` outlives the proxy. `auth_key`: the cluster's shared key, signing the client's
  // address (forwarded_client.h). `threads` forwarding calls at once, `max_queued` waiting.
  LeaderProxy(const Role* role, std::string auth_key, int threads, size_t max_queued, int timeout_ms);
  // The follower's HttpServer fallback (net::AsyncHandler).
  void Forward(const net::HttpRequest& req, net::Responder respond);

 private:
  const Role* role_;
  const std::string auth_key_;
  const int timeout_ms_;
  WorkerPool pool_;  // last: destroyed (joined) first
};

// A follower's refusal: 503 with Retry-After: 1 and, when a leader is known, its URL in
// X-Rota-Leader; the message says `why` and where the leader is.
net::HttpResponse NotForwarded(const Role& role, const std::string& why);

// The headers of `req` a forwarded request carries ("Name: value"): all but hop-by-hop
// ones, Host and Content-Length, plus X-Forwarded-For, X-Rota-Forwarded-By: `by` and the
// client's address signed with `auth_key` (forwarded_client.h; any such headers the client
// sent are dropped).
std::vector<std::string> ForwardedHeaders(const net::HttpRequest& req, const std::string& by,
                                          const std::string& auth_key);

}  // namespace rota::server::leadership
