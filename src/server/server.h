#pragma once
// Server: `rota server` — the HTTP API, the agent gateway, the store and the
// background tasks (liveness, retention), wired together. main() and `rota dev`
// build one with Start() and Stop() it.
//
// Thread-safe: Stop() may be called from any thread except an io thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/status.h"
#include "server/config.h"
#include "server/store/options.h"

namespace rota::server {

class Accounts;
class AgentGateway;
namespace leadership {
class Role;
}

// How a server runs beside others (server/leadership/replicated_server.h). The default is
// the one server of a store (SQLite): always the leader.
struct ServerRuntime {
  // Leader or follower; null: this server alone, the leader. Outlives the server.
  leadership::Role* role = nullptr;
  // The lease every write transaction checks, and what happens when one finds it lost
  // (store::StoreOptions::fence, on_fenced).
  std::optional<store::LeaseFence> fence;
  std::function<void(const Status&)> on_fenced;
};

class Server {
 public:
  // Opens the store in config.data_dir, loads or generates the join token,
  // binds the listener and starts serving. `clock` must outlive the server.
  // A leader of several servers (runtime.role) is started this way when it takes the lease:
  // it loads the store's state as a restart does.
  static Result<std::unique_ptr<Server>> Start(const ServerConfig& config, Clock& clock,
                                               const ServerRuntime& runtime = {});
  ~Server();

  // Stops serving, drains the store, joins threads. Idempotent.
  void Stop();

  uint16_t port() const;
  // Whether the HTTP io threads answer within `timeout` (the systemd watchdog's check).
  bool Responsive(std::chrono::milliseconds timeout) const;
  // "http://127.0.0.1:PORT" (the listen address, or 127.0.0.1 for a wildcard); https://
  // when serving TLS.
  std::string url() const;
  // The pin of the served TLS key ("" without TLS): what agents and the CLI pass as
  // --server-pin.
  const std::string& tls_pin() const;
  // Rereads the TLS certificate and key files (SIGHUP). Errors as HttpServer::ReloadTls.
  Status ReloadTls();
  const std::string& join_token() const;
  const ServerConfig& config() const;
  // The account service (rota dev creates its demo users through it).
  Accounts& accounts();
  // The agent gateway (commands to agents: AgentGateway::SendCommand).
  AgentGateway* gateway();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Returns the join token of `config`: config.join_token if set, else the one in
// <data_dir>/join-token, else a new random one written there with mode 0600.
Result<std::string> LoadOrCreateJoinToken(const ServerConfig& config);

}  // namespace rota::server
