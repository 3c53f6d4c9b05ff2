#pragma once
// ReplicatedServer: `rota server` as one of several servers on one PostgreSQL store
// (docs/design-ha.md). Exactly one, the leader, holds the lease (lease_rule.h) and runs a
// whole Server (server.h): the scheduler, enforcement, accounting, power planning,
// retention, the agents' connections. The others are followers: they answer /healthz
// themselves and forward everything else to the leader (proxy.h), and take the lease when
// it expires; the new leader then starts its Server as a restart does (the store's state
// loaded, running tasks re-adopted as their agents reconnect).
//
// Fail-stop: a leader whose lease cannot be renewed before its own deadline (a paused
// process, a lost database) stops all leader work at once and exits with kLostLeaseExit;
// its supervisor (systemd Restart=always) starts it again, as a follower.
//
// Threads: the lease loop (every statement on the lease's own connection), and the
// promotion thread (starts the Server, then watches the deadline). Thread-safe.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "server/config.h"
#include "server/leadership/lease_rule.h"
#include "server/leadership/role.h"

namespace rota::net {
class HttpServer;
}
namespace rota::store {
class LeaseStore;
}

namespace rota::server {
class Server;
}

namespace rota::server::leadership {

// The exit status of a leader that lost its lease.
inline constexpr int kLostLeaseExit = 75;

struct ReplicatedOptions {
  LeaseTiming timing;
  // Called once when this server must stop leading at once (default: logs and _exit
  // with kLostLeaseExit). Any thread.
  std::function<void(const std::string& why)> on_lost;
};

class ReplicatedServer {
 public:
  // Opens the lease (and the schema) in config.store, serves as a follower on
  // config.listen_address:listen_port, and starts the lease loop. Errors: an unreachable
  // store (Unavailable), a schema from a newer rota (Conflict), a port in use.
  static Result<std::unique_ptr<ReplicatedServer>> Start(const ServerConfig& config, Clock& clock,
                                                         ReplicatedOptions options = {});
  ~ReplicatedServer();
  // Stops; a leader stops its Server, then ends its lease so a follower takes over at once.
  void Stop();

  std::string url() const { return url_; }
  const Role& role() const { return *role_; }
  // Rereads the TLS files of whichever listener serves.
  Status ReloadTls();
  // Whether whichever listener serves answers within `timeout` (the systemd watchdog's
  // check). Holds mu_ for at most `timeout` (promotion waits that long at worst).
  bool Responsive(std::chrono::milliseconds timeout);

 private:
  ReplicatedServer(const ServerConfig& config, Clock& clock, ReplicatedOptions options);
  Status StartFollower();
  void LeaseLoop();
  void PromoteLoop();
  void Lost(const std::string& why);

  ServerConfig config_;
  Clock& clock_;
  ReplicatedOptions options_;
  std::unique_ptr<Role> role_;
  std::unique_ptr<store::LeaseStore> lease_;  // lease loop only
  std::string url_;
  std::string display_store_;
  int64_t started_ms_ = 0;

  Mutex mu_;
  CondVar cv_;
  bool stopping_ ROTA_GUARDED_BY(mu_) = false;
  bool promote_ ROTA_GUARDED_BY(mu_) = false;
  bool release_ ROTA_GUARDED_BY(mu_) = false;  // the Server stopped: the lease loop ends
  std::unique_ptr<net::HttpServer> follower_http_ ROTA_GUARDED_BY(mu_);
  std::unique_ptr<Server> server_ ROTA_GUARDED_BY(mu_);
  std::atomic<bool> lost_{false};
  std::thread lease_thread_;
  std::thread promote_thread_;
  struct Follower;
  std::unique_ptr<Follower> follower_;  // what the follower's routes use
};

}  // namespace rota::server::leadership
