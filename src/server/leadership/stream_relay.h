#pragma once
// StreamRelay: how a follower serves GET /api/v1/stream (docs/design-ha.md). The client's
// stream is read from the leader (the request's target, and its headers as the proxy
// forwards them: the caller's token or cookie, the client's signed address) and each event
// is passed on as it arrives. Every relayed stream shares one thread (net::EventStreamPool),
// so a stream holds no worker and no network thread waits on the leader.
//
// When the leader refuses the stream (401, 403, 404), cannot be reached, sends nothing for
// 45 s (3 of its keep-alives) or ends it (it stopped; a failover), the client gets one
// `event: relay-error` with {"status": HTTP status, "message"} and its stream ends: a
// browser's EventSource reconnects by itself, to this follower, which relays from whichever
// server leads by then. A stream whose client left ends at the leader's next event, or
// within half a second when the leader is quiet. A stream relayed here by another follower
// (X-Rota-Forwarded-By) is refused with 503, never relayed on. Thread-safe.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "net/event_stream_pool.h"
#include "net/http_server.h"
#include "server/leadership/role.h"

namespace rota::server::leadership {

class StreamRelay {
 public:
  // `role` outlives the relay. `auth_key`: the cluster's shared key (forwarded_client.h).
  // At most `max_streams` relayed at once; more are answered 503.
  StreamRelay(const Role* role, std::string auth_key, size_t max_streams, int idle_timeout_ms = 45'000);
  // The follower's acceptor for /api/v1/stream (net::StreamAcceptor): accepts at once and
  // relays, or answers 503 (no leader known, this server is becoming the leader, full).
  std::optional<net::HttpResponse> Accept(const net::HttpRequest& req, std::shared_ptr<net::EventSink> sink);
  size_t relayed() const { return pool_.open_streams(); }

 private:
  const Role* role_;
  const std::string auth_key_;
  net::EventStreamPool pool_;  // last: destroyed (every stream ended) first
};

}  // namespace rota::server::leadership
