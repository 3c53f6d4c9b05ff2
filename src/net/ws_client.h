#pragma once
// WebSocket client (ws:// and wss://) for the agent and for load generators that hold thousands of
// connections from one process. Boost-free header; Beast lives in ws_client.cc.
//
//   WsClientLoop loop(1);
//   std::unique_ptr<WsClient> c = loop.NewClient();
//   c->SetOnMessage([](const std::string& text) { ... });
//   c->SetOnClosed([](const Status& why) { ... });
//   c->Connect("ws://127.0.0.1:8080/api/v1/agent", {{"Authorization", "Bearer t"}},
//              [](const Status& s) { ... });
//
// Reconnecting is the caller's business: a WsClient connects once; make a new one to retry.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "net/tls.h"

namespace rota::net {

class WsClient;

struct WsClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};    // TCP connect (after name resolution)
  std::chrono::milliseconds handshake_timeout{10'000};  // HTTP upgrade; also the close handshake
  // When > 0: ping after half of this without incoming data, give up after all of it.
  std::chrono::milliseconds idle_timeout{0};
  size_t max_message_bytes = 4 << 20;  // larger incoming messages -> close 1009
  size_t max_queued_bytes = 16 << 20;  // unsent bytes before Send fails and the client closes
  // How a wss:// server is trusted (pin, CA file or the system's CAs; see net/tls.h). The
  // TLS handshake is bounded by handshake_timeout.
  TlsClientConfig tls;
};

// An io_context with `threads` threads shared by many clients. Thread-safe.
class WsClientLoop {
 public:
  explicit WsClientLoop(int threads = 1);
  // Stops and joins the threads. REQUIRES: every WsClient made by this loop is destroyed.
  ~WsClientLoop();
  WsClientLoop(const WsClientLoop&) = delete;
  WsClientLoop& operator=(const WsClientLoop&) = delete;

  std::unique_ptr<WsClient> NewClient(WsClientOptions options = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One WebSocket connection. Methods are thread-safe. Callbacks run on a loop thread, one at a
// time per client, in order: on_connected once; then, only after a successful connect, any
// number of on_message and finally on_closed once. No lock of the client is held while a
// callback runs: a callback may take the caller's own locks, and any thread holding those may
// call this client meanwhile; a callback may itself call any method of its client.
class WsClient {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;

  // Closes the connection (if any) and guarantees that no callback runs after it returns
  // (unless called from inside this client's own callback, which then is the last one).
  // Do not block a callback of this client on another thread that destroys it.
  ~WsClient();
  WsClient(const WsClient&) = delete;
  WsClient& operator=(const WsClient&) = delete;

  // REQUIRES: before Connect().
  void SetOnMessage(std::function<void(const std::string& text)> on_message);
  // Why it closed: OK after Close() or a normal (1000) close by the server; Unavailable when
  // the connection broke or the server closed it (going away, ...); ResourceExhausted for
  // 1009 (message too big) or our own send-queue overflow; InvalidArgument for 1003.
  void SetOnClosed(std::function<void(const Status& reason)> on_closed);

  // Connects to `url` ("ws://host:port/path?query" or "wss://...") sending `headers` with the
  // upgrade. on_connected gets OK, or: InvalidArgument (bad URL, connect called twice, bad TLS
  // settings), Unavailable (resolve/connect/TLS/handshake failure or timeout, a server whose
  // certificate is not trusted or not the pinned one, naming the URL), Unauthenticated (server
  // answered 401; message includes its body), PermissionDenied (403), or the code mapped from
  // any other refusal status.
  void Connect(const std::string& url, Headers headers,
               std::function<void(const Status&)> on_connected);

  // Queues a text message (also before the connection is open). Returns false when closed or
  // closing, or when the queue would exceed max_queued_bytes (the client then closes).
  bool Send(std::string text);
  // Starts the close handshake (1000); on_closed(OK) follows. Safe to call at any time.
  void Close();

  struct Impl;

 private:
  friend class WsClientLoop;
  explicit WsClient(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// A blocking wrapper for tests and simple tools: its own loop thread, messages queued.
class BlockingWsClient {
 public:
  explicit BlockingWsClient(WsClientOptions options = {});
  ~BlockingWsClient();

  // Connects and waits (at most handshake + connect timeouts).
  Status Connect(const std::string& url, WsClient::Headers headers = {});
  bool Send(std::string text);
  // The next message, or Unavailable when closed (with the close reason) / on timeout.
  Result<std::string> Receive(std::chrono::milliseconds timeout);
  // Waits for on_closed; returns its reason, or nullopt on timeout.
  std::optional<Status> WaitClosed(std::chrono::milliseconds timeout);
  void Close();

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::unique_ptr<WsClientLoop> loop_;
  std::unique_ptr<WsClient> client_;
};

}  // namespace rota::net
