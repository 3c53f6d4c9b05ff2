#pragma once
// AgentGateway: the server end of the agent protocol (api/protocol.h). One
// AgentSession per WebSocket connection: it checks the first message is a valid
// register, records the node in the store and ClusterState, hands samples to the
// store and acks them only once committed.
//
// Thread-safe: sessions are driven by the network threads; store callbacks
// arrive on the store's writer thread.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/clock.h"
#include "net/http_server.h"
#include "server/cluster_state.h"
#include "server/ingest_stats.h"
#include "server/store/store.h"

namespace rota::server {

class AgentGateway {
 public:
  // All pointers are borrowed and must outlive the gateway.
  AgentGateway(store::Store* store, ClusterState* cluster, IngestStats* stats, const Clock* clock,
               std::string join_token);

  // The acceptor for the agent WebSocket route: refuses (401) a missing or wrong
  // join token, else returns a new session handler.
  net::WsAcceptor Acceptor();

 private:
  class Session;
  store::Store* const store_;
  ClusterState* const cluster_;
  IngestStats* const stats_;
  const Clock* const clock_;
  const std::string join_token_;
  std::atomic<uint64_t> next_session_{1};
};

}  // namespace rota::server
