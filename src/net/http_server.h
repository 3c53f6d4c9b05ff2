#pragma once
// HttpServer: rota's HTTP/1.1 server with WebSocket and server-sent-event endpoints.
//
// Threading: one io_context run by `options.threads` threads. Every connection is bound to its
// own strand, so the callbacks of ONE connection (a Handler call, WsHandler::OnMessage, ...)
// never overlap, while different connections run concurrently on any io thread. Handlers,
// acceptors and the observer must therefore be thread-safe with respect to each other.
// Handlers run on an io thread: a handler that blocks stalls one of the (few) io threads, so
// keep them short; a request that must wait (on an agent, on a worker pool) is registered with
// RouteAsync and answered later through its Responder, from any thread.
//
// The header is Boost-free (pimpl); the Beast implementation lives in http_server.cc and
// ws_session.cc.
//
// Typical use:
//   HttpServer server(options);
//   RETURN_IF_ERROR(server.Route("GET", "/api/v1/nodes/{name}", handler));
//   ASSIGN_OR_RETURN(uint16_t port, server.Start());
//   ...
//   server.Stop();  // or let the destructor do it

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "common/status.h"
#include "net/http_types.h"
#include "net/tls.h"

namespace rota::net {

struct HttpServerOptions {
  std::string bind_address = "127.0.0.1";  // IPv4 or IPv6 literal; "0.0.0.0" for all
  uint16_t port = 0;                       // 0: the kernel picks; Start() returns it
  int threads = 2;                         // io threads
  int max_connections = 10000;             // beyond it new connections get 503 and are closed
  // Of max_connections, kept for accepted WebSocket sessions (agents): other connections
  // (requests, event streams, connections not yet upgraded) get at most the rest.
  int reserved_websocket_connections = 0;
  // Connections from one peer address that are not WebSocket sessions; 0: no limit.
  // Loopback peers are exempt (a local reverse proxy, rota dev, load generators).
  int max_connections_per_address = 0;
  size_t max_body_bytes = 1 << 20;         // larger request bodies -> 413
  size_t max_header_bytes = 16 << 10;      // larger request line + headers -> 431
  // Keep-alive: how long an idle connection may wait for its next request.
  std::chrono::milliseconds idle_timeout{60'000};
  // Time to receive one whole request once its first byte arrived (slowloris guard), and to
  // write one response.
  std::chrono::milliseconds request_timeout{15'000};

  // WebSocket endpoints.
  size_t ws_max_message_bytes = 4 << 20;  // larger incoming messages -> close 1009
  size_t ws_max_queued_bytes = 16 << 20;  // unsent outgoing bytes before the peer is dropped
  std::chrono::milliseconds ws_handshake_timeout{10'000};  // also bounds the close handshake
  // A ping is sent after half of this without incoming data; the connection is closed when a
  // whole period passes without any.
  std::chrono::milliseconds ws_idle_timeout{60'000};

  // Event-stream endpoints.
  size_t sse_max_queued_bytes = 1 << 20;  // unsent bytes before the slow client is dropped
  std::chrono::milliseconds sse_keepalive_interval{15'000};  // ": keep-alive" comment lines

  // HTTPS and WSS on the listener when set (every connection; the handshake must complete
  // within request_timeout). Files are read at Start() and ReloadTls().
  TlsServerConfig tls;
  // Stop(): how long to wait for connections to close gracefully before cutting them.
  std::chrono::milliseconds stop_timeout{3'000};
  // Called with each whole request before it is routed, on the network thread (must not
  // block): e.g. to take the client's address from a trusted proxy's signed header.
  std::function<void(HttpRequest*)> prepare_request;
};

// The server side of one WebSocket connection. Thread-safe; may outlive the connection (then
// Send returns false and Close does nothing).
class WsConnection {
 public:
  virtual ~WsConnection() = default;
  // Queues a text message. Returns false when the connection is closed or closing, or when the
  // queue would exceed ws_max_queued_bytes (the connection is then closed with 1008).
  virtual bool Send(std::string text) = 0;
  // Stops accepting Sends, sends what is already queued, then starts the close handshake with
  // code 1000 and `reason` (cut to 123 bytes).
  virtual void Close(const std::string& reason = "") = 0;
  virtual bool is_open() const = 0;
  virtual const std::string& remote_addr() const = 0;
};

// Receives the events of one WebSocket connection. Calls for one connection are serialized
// (never concurrent) and run on an io thread. OnOpen comes first, OnClose exactly once after
// OnOpen, nothing after OnClose. An exception thrown from a callback closes the connection with
// 1011 and is logged.
class WsHandler {
 public:
  virtual ~WsHandler() = default;
  virtual void OnOpen(std::shared_ptr<WsConnection> connection) { (void)connection; }
  virtual void OnMessage(const std::string& text) = 0;
  virtual void OnClose() {}
};

// Decides on an upgrade request: return an HttpResponse to refuse (e.g. 401), or a handler to
// accept. A null handler is answered with 500.
using WsAcceptor =
    std::function<std::variant<HttpResponse, std::shared_ptr<WsHandler>>(const HttpRequest&)>;

// The server side of one text/event-stream response. Thread-safe; may outlive the connection.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Queues one event ("event: <event>\ndata: <line>\n...\n"; an empty event omits the event
  // line; CR/LF in `event` become spaces; each line of `data` gets its own data: line).
  // Returns false once the client is gone or was dropped for being too slow (queue over
  // sse_max_queued_bytes). Events sent before the stream headers are written are kept.
  virtual bool Send(const std::string& event, const std::string& data) = 0;
  // Ends the stream once the events queued so far are written (the client sees it close);
  // Send returns false from now on. Idempotent.
  virtual void End() = 0;
  virtual bool is_open() const = 0;
  virtual const std::string& remote_addr() const = 0;
};

// Decides on an event-stream request. It receives the sink at once (it may keep it and send
// from any thread); return std::nullopt to accept, or a response to refuse (the sink is then
// closed). Only GET reaches the acceptor; other methods get 405.
using StreamAcceptor =
    std::function<std::optional<HttpResponse>(const HttpRequest&, std::shared_ptr<EventSink>)>;

// Called after every response is written (also 4xx from the server itself, 101 for WebSocket
// upgrades and 200 for accepted event streams), with the seconds from the end of reading the
// request to the end of writing the response. Runs on io threads, concurrently.
using AccessObserver = std::function<void(const HttpRequest&, int status, double seconds)>;

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options = {});
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Registration. REQUIRES: before Start() (later calls fail with Conflict).
  // Errors: bad pattern (see router.h), duplicate route.
  Status Route(const std::string& method, const std::string& pattern, Handler handler);
  // A route whose handler answers later through a Responder (http_types.h): for requests
  // that wait on something (an agent's answer, a worker pool), so no io thread blocks. The
  // connection waits for the answer; Stop() cuts it after stop_timeout.
  Status RouteAsync(const std::string& method, const std::string& pattern, AsyncHandler handler);
  // Answers what no route matches (Router::SetFallback). REQUIRES: before Start().
  Status SetFallback(AsyncHandler handler);
  // WebSocket endpoint at `pattern` (may hold {params}). A non-upgrade request there -> 426.
  Status AddWebSocket(const std::string& pattern, WsAcceptor acceptor);
  // Event-stream endpoint at `pattern` (GET).
  Status AddEventStream(const std::string& pattern, StreamAcceptor acceptor);
  void SetObserver(AccessObserver observer);  // REQUIRES: before Start() (ignored after)

  // Binds, listens and starts the io threads. Returns the bound port. Callable once.
  // Errors: bad bind address (InvalidArgument), bind/listen failure (Unavailable).
  Result<uint16_t> Start();
  // Closes the listener, closes every connection (WebSockets with 1001 "server stopping"),
  // waits up to options.stop_timeout for them, then stops and joins the io threads. After
  // Stop, WsConnection::Send and EventSink::Send return false. Idempotent; not callable from
  // an io thread (a handler).
  void Stop();

  // Rereads options.tls's certificate and key (after a renewal): new connections use them,
  // open ones keep theirs. On error (unreadable, not matching) the old ones stay.
  // REQUIRES: after Start(). Errors: Conflict without TLS, InvalidArgument naming the file.
  Status ReloadTls();
  uint16_t port() const;         // 0 before Start()
  // Whether an io thread runs a posted no-op within `timeout` (the service watchdog's
  // liveness check: the loop that serves requests is not stuck). False before Start()
  // and after Stop(). Thread-safe; blocks up to `timeout`.
  bool Responsive(std::chrono::milliseconds timeout) const;
  int connection_count() const;  // open connections of all kinds (for tests and metrics)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rota::net
