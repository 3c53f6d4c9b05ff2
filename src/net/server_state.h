#pragma once
// Server-side bookkeeping shared by the HttpServer translation units: the live-session
// registry, connection slots and the thread-safe link between user handles (WsConnection,
// EventSink) and sessions. Boost-free; internal to src/net.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "net/http_server.h"
#include "net/outbox.h"
#include "net/router.h"
#include "net/url.h"

namespace rota::net::internal {

using rota::SteadyTime;

// A live connection that Stop() can reach.
class Session {
 public:
  virtual ~Session() = default;
  // Any thread: start a graceful close because the server stops.
  virtual void Shutdown() = 0;
  // Any thread: close because of `code` (WebSocket close code; ignored by other kinds).
  virtual void CloseWith(int code, std::string reason) = 0;
  // Any thread: the outbox went from idle to non-empty; start writing on the strand.
  virtual void Kick() = 0;
  // Called by Stop() after the io threads were joined: disconnect user-held handles.
  virtual void Detach() = 0;
};

// State shared by the server, its listener and every session (sessions hold a shared_ptr, so
// it outlives the io_context's handlers).
struct ServerState {
  explicit ServerState(HttpServerOptions o) : options(std::move(o)) {}
  const HttpServerOptions options;
  Router router;
  std::vector<std::pair<PathPattern, WsAcceptor>> ws_routes;
  std::vector<std::pair<PathPattern, StreamAcceptor>> sse_routes;
  AccessObserver observer;
  std::atomic<bool> stopping{false};

  Mutex mu;
  CondVar cv;                                 // signalled when a slot frees
  std::unordered_map<uint64_t, std::weak_ptr<Session>> live ROTA_GUARDED_BY(mu);
  uint64_t next_id ROTA_GUARDED_BY(mu) = 0;
  int connections ROTA_GUARDED_BY(mu) = 0;     // all kinds
  int websockets ROTA_GUARDED_BY(mu) = 0;      // of them, accepted WebSocket sessions
  // Connections that are not (yet) WebSocket sessions, per peer address (no port), for
  // max_connections_per_address. Entries are erased at zero.
  std::unordered_map<std::string, int> per_address ROTA_GUARDED_BY(mu);

  // Calls the observer, swallowing (and logging) its exceptions.
  void Observe(const HttpRequest& request, int status, SteadyTime since) const;
};

// RAII: one counted connection. Moves from the HTTP session to a WebSocket or stream session.
//
// Budgets (HttpServerOptions): at most max_connections in all; connections that are not
// WebSocket sessions (HTTP requests, event streams, and every connection before its upgrade)
// at most max_connections - reserved_websocket_connections, and at most
// max_connections_per_address from one peer address (loopback exempt). An accepted
// WebSocket (an agent) leaves the second and third budgets (PromoteToWebSocket), so API
// clients cannot take the slots of connected agents.
class ConnectionSlot {
 public:
  ConnectionSlot() = default;
  // Returns an empty slot (valid() false) when a budget above is used up; `why` (optional)
  // then says which. `address` is the peer's IP address without port.
  static ConnectionSlot Acquire(const std::shared_ptr<ServerState>& state,
                                const std::string& address = "", std::string* why = nullptr);
  ConnectionSlot(ConnectionSlot&& other) noexcept { *this = std::move(other); }
  ConnectionSlot& operator=(ConnectionSlot&& other) noexcept;
  ~ConnectionSlot() { Release(); }

  bool valid() const { return state_ != nullptr; }
  // The connection became an accepted WebSocket session. Idempotent.
  void PromoteToWebSocket();
  // Registers `session` for Stop(). If the server is already stopping, shuts it down now.
  void Attach(const std::shared_ptr<Session>& session);
  void Release();

 private:
  // Leaves per_address. REQUIRES: state_->mu held.
  void ForgetAddress() ROTA_REQUIRES(state_->mu);

  std::shared_ptr<ServerState> state_;
  uint64_t id_ = 0;
  std::string address_;      // counted in per_address unless empty (exempt) or promoted
  bool websocket_ = false;
};

// The user-facing half of a session's outgoing path (WsConnection / EventSink implementations
// build on it). Thread-safe. Never posts to the io_context after Detach().
class SessionLink {
 public:
  SessionLink(size_t max_bytes, bool writer_busy, std::string remote)
      : outbox_(max_bytes, writer_busy), remote_(std::move(remote)) {}
  // Binds the session; if the queue overflowed before (a handler may send before the
  // session starts), asks it to close as Push would have.
  void Bind(std::weak_ptr<Session> session);
  // Queues `message`; kicks the session's writer when needed. On overflow asks the session to
  // close with `overflow_code` (once bound). Returns false when the message was dropped.
  bool Push(std::string message, int overflow_code);
  // Asks the session to close with `code`/`reason` (no-op once detached).
  void RequestClose(int code, std::string reason);
  // Refuses further pushes, keeps what is queued and kicks the writer, which ends the
  // session once the queue is written (an event stream's graceful end).
  void End();
  // Marks the link closed: pushes fail from now on; never touches the session again.
  void Detach();
  bool is_open() const { return !outbox_.closed(); }
  Outbox& outbox() { return outbox_; }
  const std::string& remote() const { return remote_; }

 private:
  mutable Mutex mu_;
  bool detached_ ROTA_GUARDED_BY(mu_) = false;
  std::weak_ptr<Session> session_ ROTA_GUARDED_BY(mu_);
  std::optional<int> unbound_overflow_code_ ROTA_GUARDED_BY(mu_);  // overflowed before Bind
  Outbox outbox_;
  const std::string remote_;
};

// Formats one text/event-stream event (see EventSink::Send).
std::string FormatEvent(const std::string& event, const std::string& data);

}  // namespace rota::net::internal
